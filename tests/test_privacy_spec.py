"""Every estimator's privacy, pinned: planned cost, ``privacy_`` and selection's rho.

The estimators declare their privacy in one :class:`~sklearn_dpol.privacy._spec.PrivacySpec`
each (``_privacy_spec``), from which the base class derives the cost charged to
an accountant, the ``privacy_`` a call stores and the zCDP ``rho`` private
selection plans with. This file pins, for a broad set of configurations (every
solver, stream kind, alpha mode, ``data_norm="auto"``, the local estimators and
the scaler), what each of the three was BEFORE that refactor: the values in
``PINNED`` were recorded from the pre-refactor code (branch ``main`` at 23a8abd,
per-class ``_planned_privacy`` / ``_guarantee`` and the per-class rules of
``model_selection/_candidates.py``) by running this file as a script
(``python tests/test_privacy_spec.py`` prints the table). A change to any of
them is a change of the library's privacy accounting and must be deliberate.

Numbers and texts are checked separately: a deliberate change of a mechanism's
description (a new stream mechanism, say) fails the texts only.

Re-pinned deliberately (branch ``rounding``): planned costs, ``rho``, and the
guarantees' epsilon, delta, mu, n_releases and n_records are unchanged for every
case; what changed is ``spent_mu`` and the mechanism texts of the IGD DP-FTRL
streams (now on the BLT factorization, one step per call) and of the QFTL
factorization streams (calibrated on calls: ``ceil(horizon / first batch)``
steps), both from earlier merges into ``int``, and the noise per step in every
factorization's text, which now includes the stream layer's rounding allowance
(``1 + 1e-3``; e.g. the unbounded QFTL BLT: 28.88 -> 28.91).

Re-pinned deliberately (branch ``s30e``, unit-free defaults of IGD and QFTL): the mechanism
texts of four ``data_norm="auto"`` cases, whose noise is quoted in the units of the resolved
bound (see the comment above the last ``PINNED.update``); no number changed.
"""

import math

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.model_selection._candidates import candidate_rho, selection_spec
from sklearn_dpol.preprocessing import PrivateRangeScaler
from sklearn_dpol.privacy import PrivacyCost, gaussian_mu, zcdp_epsilon
from sklearn_dpol.privacy._spec import CONTINUAL, LOCAL, ONE_RELEASE, PARALLEL, PrivacySpec

N_ROWS, N_FEATURES, DELTA = 120, 3, 1e-6

IGD = dict(classes=[0, 1], delta=DELTA, random_state=0)
QFTL = dict(delta=DELTA, random_state=0)
FW = dict(delta=DELTA, max_iter=15, random_state=0)
MD = dict(delta=DELTA, max_iter=20, random_state=0)
MI = dict(delta=DELTA, random_state=0)
PF = dict(random_state=0, randomizer="laplace")

FIT, STREAM = "fit", "partial_fit"

# (id, estimator, task, calls); a call is (method, n_rows, keyword arguments).
CASES = [
    # -- PrivateIGDClassifier: solvers, alpha modes, classes, stream kinds, horizons
    ("igd-fit", PrivateIGDClassifier(epsilon=1.0, **IGD), "c2", [(FIT, 120, {})]),
    ("igd-fit-inf", PrivateIGDClassifier(epsilon=np.inf, **IGD), "c2", [(FIT, 120, {})]),
    ("igd-fit-multiclass", PrivateIGDClassifier(epsilon=0.7, **{**IGD, "classes": [0, 1, 2]}),
     "c3", [(FIT, 120, {})]),
    ("igd-fit-alpha-seed", PrivateIGDClassifier(epsilon=2.0, alpha="seed", **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-fit-alpha-float", PrivateIGDClassifier(epsilon=0.5, alpha=0.1, **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-fit-gradient-hinge", PrivateIGDClassifier(epsilon=1.0, loss="hinge", **IGD), "c2",
     [(FIT, 120, {})]),
    # solver="igd" explicitly (output perturbation): the values the default had before
    # solver="auto" (branch s32p; see the last PINNED.update)
    ("igd-fit-solver-igd", PrivateIGDClassifier(epsilon=1.0, solver="igd", **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-fit-multiclass-solver-igd",
     PrivateIGDClassifier(epsilon=0.7, solver="igd", **{**IGD, "classes": [0, 1, 2]}), "c3",
     [(FIT, 120, {})]),
    ("igd-fit-then-ftrl-solver-igd", PrivateIGDClassifier(epsilon=1.0, stream="ftrl",
                                                          horizon=200, solver="igd", **IGD),
     "c2", [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-fit-auto-norm-solver-igd", PrivateIGDClassifier(epsilon=1.0, data_norm="auto",
                                                          solver="igd", **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-op", PrivateIGDClassifier(epsilon=1.0, solver="objective_perturbation", **IGD),
     "c2", [(FIT, 120, {})]),
    ("igd-op-inf", PrivateIGDClassifier(epsilon=np.inf, solver="objective_perturbation",
                                        **IGD), "c2", [(FIT, 120, {})]),
    ("igd-op-then-stream", PrivateIGDClassifier(epsilon=1.0, solver="objective_perturbation",
                                                horizon=200, **IGD), "c2",
     [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-iterate-horizon", PrivateIGDClassifier(epsilon=1.0, stream="iterate_perturbation",
                                                 horizon=200, **IGD), "c2",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-iterate-unbounded", PrivateIGDClassifier(epsilon=1.0, stream="iterate_perturbation",
                                                   **IGD), "c2",
     [(STREAM, 40, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-iterate-inf", PrivateIGDClassifier(epsilon=np.inf, stream="iterate_perturbation",
                                             **IGD), "c2", [(STREAM, 40, {})]),
    ("igd-ftrl-horizon", PrivateIGDClassifier(epsilon=1.0, stream="ftrl", horizon=200, **IGD),
     "c2", [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-ftrl-unbounded", PrivateIGDClassifier(epsilon=2.0, stream="ftrl", **IGD), "c2",
     [(STREAM, 40, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-ftrl-multiclass", PrivateIGDClassifier(epsilon=1.0, stream="ftrl", horizon=200,
                                                 **{**IGD, "classes": [0, 1, 2]}), "c3",
     [(STREAM, 40, {})]),
    ("igd-fit-then-ftrl", PrivateIGDClassifier(epsilon=1.0, stream="ftrl", horizon=200, **IGD),
     "c2", [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-fit-then-iterate", PrivateIGDClassifier(epsilon=1.0, stream="iterate_perturbation",
                                                  horizon=200, **IGD), "c2",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # data_norm="auto" (pinned from the branch that added it, see PINNED.update below)
    ("igd-fit-auto-norm", PrivateIGDClassifier(epsilon=1.0, data_norm="auto", **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-op-auto-norm", PrivateIGDClassifier(epsilon=1.0, data_norm="auto",
                                              solver="objective_perturbation", **IGD), "c2",
     [(FIT, 120, {})]),
    ("igd-ftrl-auto-norm", PrivateIGDClassifier(epsilon=1.0, data_norm="auto", horizon=200,
                                                **IGD), "c2",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-iterate-auto-norm", PrivateIGDClassifier(epsilon=1.0, data_norm="auto",
                                                   stream="iterate_perturbation", horizon=200,
                                                   **IGD), "c2",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("igd-fit-auto-norm-then-ftrl", PrivateIGDClassifier(epsilon=1.0, data_norm="auto",
                                                         horizon=200, **IGD), "c2",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # -- PrivateQFTLRegressor: alpha modes, data_norm="auto", stream mechanisms
    ("qftl-fit-adassp", PrivateQFTLRegressor(epsilon=1.0, **QFTL), "r", [(FIT, 120, {})]),
    ("qftl-fit-alpha-float", PrivateQFTLRegressor(epsilon=0.7, alpha=0.1, **QFTL), "r",
     [(FIT, 120, {})]),
    ("qftl-fit-inf", PrivateQFTLRegressor(epsilon=np.inf, **QFTL), "r", [(FIT, 120, {})]),
    ("qftl-fit-auto-norm", PrivateQFTLRegressor(epsilon=2.0, data_norm="auto", **QFTL), "r",
     [(FIT, 120, {})]),
    ("qftl-fit-auto-norm-alpha", PrivateQFTLRegressor(epsilon=1.0, data_norm="auto",
                                                      alpha=0.1, **QFTL), "r",
     [(FIT, 120, {})]),
    ("qftl-fit-auto-norm-inf", PrivateQFTLRegressor(epsilon=np.inf, data_norm="auto", **QFTL),
     "r", [(FIT, 120, {})]),
    *[(f"qftl-stream-{kind}", PrivateQFTLRegressor(epsilon=1.0, prefix_sums=kind, horizon=200,
                                                   **QFTL), "r",
       [(STREAM, 40, {}), (STREAM, 40, {})])
      for kind in ("auto", "tree", "honaker", "sqrt", "blt")],
    *[(f"qftl-stream-unbounded-{kind}", PrivateQFTLRegressor(epsilon=1.0, prefix_sums=kind,
                                                             **QFTL), "r",
       [(STREAM, 40, {}), (STREAM, 40, {}), (STREAM, 40, {})])
      for kind in ("auto", "tree")],
    ("qftl-stream-auto-norm", PrivateQFTLRegressor(epsilon=1.0, data_norm="auto", horizon=200,
                                                   **QFTL), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("qftl-stream-inf", PrivateQFTLRegressor(epsilon=np.inf, horizon=200, **QFTL), "r",
     [(STREAM, 40, {})]),
    ("qftl-fit-then-stream", PrivateQFTLRegressor(epsilon=1.0, horizon=200, **QFTL), "r",
     [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    # y_bound="auto" (pinned from the branch that added it, see PINNED.update below)
    ("qftl-fit-auto-y", PrivateQFTLRegressor(epsilon=2.0, y_bound="auto", **QFTL), "r",
     [(FIT, 120, {})]),
    ("qftl-fit-auto-both-alpha", PrivateQFTLRegressor(epsilon=1.0, data_norm="auto",
                                                      y_bound="auto", alpha=0.1, **QFTL), "r",
     [(FIT, 120, {})]),
    # -- PrivateFrankWolfeLasso: both selections, fit and per-batch streams
    ("fw-exponential", PrivateFrankWolfeLasso(epsilon=0.9, **FW), "r", [(FIT, 120, {})]),
    ("fw-gaussian", PrivateFrankWolfeLasso(epsilon=0.9, selection="gaussian", **FW), "r",
     [(FIT, 120, {})]),
    ("fw-exponential-inf", PrivateFrankWolfeLasso(epsilon=np.inf, **FW), "r", [(FIT, 120, {})]),
    ("fw-gaussian-inf", PrivateFrankWolfeLasso(epsilon=np.inf, selection="gaussian", **FW),
     "r", [(FIT, 120, {})]),
    ("fw-exponential-stream", PrivateFrankWolfeLasso(epsilon=1.3, **FW), "r",
     [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("fw-gaussian-stream", PrivateFrankWolfeLasso(epsilon=1.3, selection="gaussian", **FW),
     "r", [(STREAM, 40, {}), (STREAM, 40, {})]),
    # feature_bound="auto", y_bound="auto" (pinned from the branch that added it, see PINNED.update below)
    ("fw-exponential-auto-both", PrivateFrankWolfeLasso(epsilon=1.2, feature_bound="auto",
                                                        y_bound="auto", **FW), "r",
     [(FIT, 120, {})]),
    ("fw-gaussian-auto-norm", PrivateFrankWolfeLasso(epsilon=1.2, feature_bound="auto",
                                                     selection="gaussian", **FW), "r",
     [(FIT, 120, {})]),
    ("fw-exponential-auto-inf", PrivateFrankWolfeLasso(epsilon=np.inf, feature_bound="auto",
                                                       y_bound="auto", **FW), "r",
     [(FIT, 120, {})]),
    ("fw-stream-auto-both", PrivateFrankWolfeLasso(epsilon=1.3, feature_bound="auto",
                                                   y_bound="auto", **FW), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("fw-fit-auto-then-stream", PrivateFrankWolfeLasso(epsilon=1.3, feature_bound="auto",
                                                       **FW), "r",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # -- PrivateMirrorDescentRegressor: both solvers, fit and per-batch streams
    ("md-fit", PrivateMirrorDescentRegressor(epsilon=1.2, **MD), "r", [(FIT, 120, {})]),
    ("md-fit-inf", PrivateMirrorDescentRegressor(epsilon=np.inf, **MD), "r", [(FIT, 120, {})]),
    ("md-stream", PrivateMirrorDescentRegressor(epsilon=1.2, **MD), "r",
     [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("md-op", PrivateMirrorDescentRegressor(epsilon=1.0, solver="objective_perturbation",
                                            **MD), "r", [(FIT, 120, {})]),
    ("md-op-stream", PrivateMirrorDescentRegressor(epsilon=1.0, solver="objective_perturbation",
                                                   alpha=0.05, **MD), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    # data_norm="auto", y_bound="auto" (pinned from the branch that added it, see PINNED.update below)
    ("md-fit-auto-both", PrivateMirrorDescentRegressor(epsilon=1.2, data_norm="auto",
                                                       y_bound="auto", **MD), "r", [(FIT, 120, {})]),
    ("md-fit-auto-norm", PrivateMirrorDescentRegressor(epsilon=1.2, data_norm="auto", **MD), "r",
     [(FIT, 120, {})]),
    ("md-fit-auto-inf", PrivateMirrorDescentRegressor(epsilon=np.inf, data_norm="auto",
                                                      y_bound="auto", **MD), "r", [(FIT, 120, {})]),
    ("md-op-auto-both", PrivateMirrorDescentRegressor(epsilon=1.0, solver="objective_perturbation",
                                                      data_norm="auto", y_bound="auto", **MD),
     "r", [(FIT, 120, {})]),
    ("md-stream-auto-both", PrivateMirrorDescentRegressor(epsilon=1.2, data_norm="auto",
                                                          y_bound="auto", **MD), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("md-fit-auto-then-stream", PrivateMirrorDescentRegressor(epsilon=1.2, data_norm="auto",
                                                              y_bound="auto", **MD), "r",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # solver="auto", the default (branch s34m; see the last PINNED.update): max_iter left
    # at None, so a fit on this dense X is objective perturbation's, and a stream after it
    # covers that fit's records without a GDP mu; a stream alone is mirror descent's
    ("md-auto-fit", PrivateMirrorDescentRegressor(epsilon=1.2, delta=DELTA, random_state=0),
     "r", [(FIT, 120, {})]),
    ("md-auto-fit-then-stream", PrivateMirrorDescentRegressor(epsilon=1.2, delta=DELTA,
                                                              random_state=0), "r",
     [(FIT, 120, {}), (STREAM, 40, {}), (STREAM, 40, {})]),
    ("md-auto-stream", PrivateMirrorDescentRegressor(epsilon=1.2, delta=DELTA, random_state=0),
     "r", [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("md-auto-fit-auto-both", PrivateMirrorDescentRegressor(
        epsilon=1.2, delta=DELTA, data_norm="auto", y_bound="auto", random_state=0), "r",
     [(FIT, 120, {})]),
    # max_calls (branch s34h; see the last PINNED.update): the calls declared up front
    ("igd-ftrl-max-calls", PrivateIGDClassifier(epsilon=1.0, stream="ftrl", horizon=200,
                                                max_calls=8, **IGD),
     "c2", [(STREAM, 40, {}), (STREAM, 40, {})]),
    ("qftl-stream-max-calls", PrivateQFTLRegressor(epsilon=1.0, prefix_sums="blt", horizon=200,
                                                   max_calls=8, **QFTL), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    # -- MutualInformationPrivateOGDRegressor: local Gaussian reports
    ("mi-full", MutualInformationPrivateOGDRegressor(epsilon=None, sigma=2.0, **MI), "r",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    ("mi-bandit", MutualInformationPrivateOGDRegressor(epsilon=None, sigma=5.0, feedback="bandit", **MI),
     "r", [(FIT, 120, {}), (STREAM, 40, {})]),
    ("mi-bandit-stream", MutualInformationPrivateOGDRegressor(
        epsilon=None, sigma=5.0, feedback="bandit", fit_intercept=False, **MI), "r",
     [(STREAM, 40, {}), (STREAM, 40, {})]),
    # -- ParameterFreeLocalDPRegressor: user-level local reports, per-user budgets
    ("pf-fit", ParameterFreeLocalDPRegressor(epsilon=2.0, **PF), "r", [(FIT, 120, {})]),
    ("pf-reduction", ParameterFreeLocalDPRegressor(epsilon=1.0, method="reduction", **PF), "r",
     [(FIT, 120, {})]),
    ("pf-inf", ParameterFreeLocalDPRegressor(epsilon=np.inf, **PF), "r", [(FIT, 120, {})]),
    ("pf-sample-epsilon", ParameterFreeLocalDPRegressor(epsilon=2.0, **PF), "r",
     [(FIT, 120, {"sample_epsilon": "mixed"}), (STREAM, 40, {"sample_epsilon": "small"}),
      (STREAM, 40, {})]),
    ("pf-all-inf-then-finite", ParameterFreeLocalDPRegressor(epsilon=np.inf, **PF), "r",
     [(STREAM, 40, {}), (STREAM, 40, {"sample_epsilon": "small"})]),
    ("pf-zero-weight", ParameterFreeLocalDPRegressor(
        epsilon=1.0, feature_weights=[1.0, 0.0, 1.0, 1.0], **PF), "r",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # the sampled-coordinate randomiser ("auto" at epsilon=1; section 54.2)
    ("pf-sampled", ParameterFreeLocalDPRegressor(epsilon=1.0, random_state=0), "r",
     [(FIT, 120, {}), (STREAM, 40, {})]),
    # -- PrivateRangeScaler: the quantiles' composition
    ("scaler-basic", PrivateRangeScaler(epsilon=1.0, random_state=0), "x", [(FIT, 120, {})]),
    ("scaler-zcdp", PrivateRangeScaler(epsilon=1.0, delta=1e-6, random_state=0), "x",
     [(FIT, 120, {})]),
    ("scaler-bounds-one-feature", PrivateRangeScaler(
        epsilon=1.0, delta=1e-1, bounds=(-2.0, 2.0), n_candidates=50, random_state=0), "x1",
     [(FIT, 120, {})]),
    ("scaler-inf", PrivateRangeScaler(epsilon=np.inf, random_state=0), "x", [(FIT, 120, {})]),
]

GUARANTEE_NUMBERS = ("epsilon", "delta", "mu", "n_releases", "n_records", "spent_mu")
GUARANTEE_TEXTS = ("neighbouring", "mechanism", "released", "records", "budget")


def _data(task, n_rows, call_index):
    rng = np.random.default_rng(100 + call_index)
    n_features = 1 if task == "x1" else (12 if task == "x" else N_FEATURES)
    X = rng.uniform(-0.5, 0.5, size=(n_rows, n_features))
    if task == "c2":
        y = (X[:, 0] + 0.2 * X[:, 1] > 0).astype(int)
    elif task == "c3":
        y = rng.integers(0, 3, n_rows)
    elif task == "r":
        y = np.clip(X[:, 0] - X[:, 1], -1, 1)
    else:
        y = None
    return X, y


def _engine_kwargs(estimator, method, kwargs, n_rows):
    """What ``fit`` / ``partial_fit`` hand ``_planned_privacy`` (and the call)."""
    kwargs = dict(kwargs)
    budgets = kwargs.pop("sample_epsilon", None)
    if budgets == "mixed":
        kwargs["sample_epsilon"] = np.where(np.arange(n_rows) % 3 == 0, np.inf,
                                            np.linspace(0.5, 1.5, n_rows))
    elif budgets == "small":
        kwargs["sample_epsilon"] = np.full(n_rows, 0.25)
    engine = dict(kwargs)
    if isinstance(estimator, PrivateIGDClassifier):
        engine.update(classes=None, n_passes=estimator.max_iter) if method == FIT \
            else engine.update(classes=None, n_passes=1)
    return kwargs, engine


def _number(value):
    value = float(value)
    return value


def observe(case):
    """The case's selection rho, and the planned cost and ``privacy_`` of each call."""
    _, prototype, task, calls = case
    try:
        rho = candidate_rho(clone(prototype))
    except ValueError as error:
        rho = f"ValueError: {error}"
    estimator = clone(prototype)
    steps = []
    for index, (method, n_rows, kwargs) in enumerate(calls):
        X, y = _data(task, n_rows, index)
        call_kwargs, engine = _engine_kwargs(estimator, method, kwargs, n_rows)
        planned = PrivacyCost.of(estimator._planned_privacy(X, fitting=method == FIT, **engine))
        args = (X,) if y is None else (X, y)
        getattr(estimator, method)(*args, **call_kwargs)
        guarantee = estimator.privacy_
        steps.append({
            "planned": (planned.epsilon, planned.delta, planned.mu),
            "numbers": tuple(_number(getattr(guarantee, f)) for f in GUARANTEE_NUMBERS),
            "texts": tuple(getattr(guarantee, f) for f in GUARANTEE_TEXTS),
        })
    return {"rho": rho, "steps": steps}


def _same_number(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return a == pytest.approx(b, rel=1e-12, abs=0.0)


def _same_numbers(a, b):
    return len(a) == len(b) and all(_same_number(x, y) for x, y in zip(a, b))


IDS = [case[0] for case in CASES]


@pytest.fixture(scope="module")
def observed():
    return {}


def _observed(observed, case):
    if case[0] not in observed:
        observed[case[0]] = observe(case)
    return observed[case[0]]


def test_every_case_is_pinned():
    assert sorted(PINNED) == sorted(IDS)
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_planned_cost_privacy_and_rho_numbers_are_unchanged(case, observed):
    got, pinned = _observed(observed, case), PINNED[case[0]]
    assert _same_number(got["rho"], pinned["rho"]), (got["rho"], pinned["rho"])
    assert len(got["steps"]) == len(pinned["steps"])
    for step, (g, p) in enumerate(zip(got["steps"], pinned["steps"])):
        assert _same_numbers(g["planned"], p["planned"]), (step, g["planned"], p["planned"])
        assert _same_numbers(g["numbers"], p["numbers"]), (
            step, dict(zip(GUARANTEE_NUMBERS, g["numbers"])),
            dict(zip(GUARANTEE_NUMBERS, p["numbers"])))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_privacy_texts_are_unchanged(case, observed):
    got, pinned = _observed(observed, case), PINNED[case[0]]
    for step, (g, p) in enumerate(zip(got["steps"], pinned["steps"])):
        for field, a, b in zip(GUARANTEE_TEXTS, g["texts"], p["texts"]):
            assert a == b, (step, field)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_planned_cost_covers_every_release(case, observed):
    """Not pinned but checked: the cost charged covers the ``privacy_`` it settles at."""
    got = _observed(observed, case)
    for g in got["steps"]:
        planned = PrivacyCost(*g["planned"])
        released = PrivacyCost(*g["numbers"][:3])
        assert planned.covers(released) or not released.epsilon < math.inf


# -- the spec itself ----------------------------------------------------------------------
REGIMES = {
    PrivateIGDClassifier: CONTINUAL, PrivateQFTLRegressor: CONTINUAL,
    PrivateFrankWolfeLasso: PARALLEL, PrivateMirrorDescentRegressor: PARALLEL,
    MutualInformationPrivateOGDRegressor: LOCAL, ParameterFreeLocalDPRegressor: LOCAL,
}


def _specs(case):
    """The spec of every call of the case, computed before the call (as charged)."""
    _, prototype, task, calls = case
    estimator = clone(prototype)
    for index, (method, n_rows, kwargs) in enumerate(calls):
        X, y = _data(task, n_rows, index)
        call_kwargs, engine = _engine_kwargs(estimator, method, kwargs, n_rows)
        yield method, estimator._privacy_spec(X, fitting=method == FIT, **engine), \
            estimator._planned_privacy(X, fitting=method == FIT, **engine)
        getattr(estimator, method)(*((X,) if y is None else (X, y)), **call_kwargs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_spec_answers_cost_regime_and_parts(case):
    for method, spec, planned in _specs(case):
        assert spec.cost() == planned
        if method == FIT:
            assert spec.regime in (ONE_RELEASE, LOCAL)
        kind = type(case[1])
        if kind in REGIMES:
            expected = REGIMES[kind]
            assert spec.regime == (expected if method == STREAM or expected == LOCAL
                                   else ONE_RELEASE)
        if not spec.parts:
            continue
        # The parts compose within the whole, as the spec's composition says.
        if spec.composition == "gdp":
            assert math.sqrt(math.fsum(p.mu ** 2 for p in spec.parts)) == \
                pytest.approx(spec.mu, rel=1e-12)
        if spec.composition == "basic":
            epsilons = [p.epsilon for p in spec.parts if not math.isnan(p.epsilon)]
            assert math.fsum(epsilons) <= spec.epsilon * (1 + 1e-12)
        if spec.composition == "zcdp" and math.isfinite(spec.epsilon):
            assert zcdp_epsilon(spec.parts_rho(), spec.delta) <= spec.epsilon * (1 + 1e-9)
        if spec.rho is not None:
            assert spec.parts_rho() <= spec.rho * (1 + 1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_selection_reads_the_spec(case):
    """``candidate_rho`` is the spec's ``rho``; a spec without one says why (or that the
    estimator is no candidate at all)."""
    spec = selection_spec(clone(case[1]))
    pinned = PINNED[case[0]]["rho"]
    if spec.rho is not None:
        assert _same_number(spec.rho, pinned)
        assert spec.selection_rho() == spec.rho
    else:
        assert isinstance(pinned, str)
        if spec.no_rho is not None:
            assert spec.no_rho in pinned
        with pytest.raises(ValueError):
            spec.selection_rho()


@pytest.mark.parametrize("epsilon", [1.0, 16.0, 64.0, 200.0])
def test_auto_norm_rho_covers_the_quantile_and_the_gaussian_parts(epsilon):
    """data_norm="auto" composes an epsilon_q-DP quantile (epsilon_q^2/8-zCDP) with the
    Gaussian statistics: selection's rho is at least the parts' zCDP sum, and equals the
    pre-refactor mu*(epsilon, delta)^2/2 wherever that already covered it (epsilon < ~40)."""
    auto = PrivateQFTLRegressor(epsilon=epsilon, delta=DELTA, data_norm="auto")
    spec = selection_spec(auto)
    eps_q = PrivateQFTLRegressor.AUTO_DATA_NORM_SHARE * epsilon
    parts = eps_q ** 2 / 8 + gaussian_mu(epsilon - eps_q, DELTA) ** 2 / 2
    whole = gaussian_mu(epsilon, DELTA) ** 2 / 2
    assert spec.parts_rho() == pytest.approx(parts, rel=1e-9)
    assert candidate_rho(auto) == spec.rho == max(whole, spec.parts_rho())
    assert (spec.rho == whole) == (epsilon < 40)
    fixed = selection_spec(PrivateQFTLRegressor(epsilon=epsilon, delta=DELTA))
    assert fixed.rho == whole and fixed.composition == "gdp"   # AdaSSP: GDP parts


def test_a_spec_refuses_what_it_cannot_state():
    with pytest.raises(ValueError, match="one of"):
        PrivacySpec("sometimes", 1.0, 0.0)
    local = selection_spec(MutualInformationPrivateOGDRegressor(feedback="bandit"))
    assert local.regime == LOCAL and local.no_rho_always and local.rho is None
    assert math.isnan(local.epsilon)   # the sensitivity needs the number of features
    assert selection_spec(PrivateRangeScaler()).no_rho is None   # not a candidate
    with pytest.raises(ValueError, match="knows it only for this library"):
        candidate_rho(PrivateRangeScaler())


# Recorded from the pre-refactor code (main at 23a8abd), see the module docstring.
PINNED = {'igd-fit': {'rho': 0.02801448191263024,
             'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                        'numbers': (1.0,
                                    1e-06,
                                    0.2367043806634353,
                                    1.0,
                                    120.0,
                                    0.2367043806634353),
                        'texts': ('replace-one',
                                  'analytic Gaussian on the uncorrupted iterate, GDP-composed '
                                  'over releases',
                                  'coef_ and intercept_ of the fitted model (one release)',
                                  'the records passed to fit',
                                  'this release')}]},
 'igd-fit-inf': {'rho': math.inf,
                 'steps': [{'planned': (math.inf, 1e-06, math.inf),
                            'numbers': (math.inf, 1e-06, math.inf, 1.0, 120.0, math.inf),
                            'texts': ('replace-one',
                                      'none: epsilon=inf adds no noise',
                                      'coef_ and intercept_ of the fitted model (one release)',
                                      'the records passed to fit',
                                      'this release')}]},
 'igd-fit-multiclass': {'rho': 0.014430402994837957,
                        'steps': [{'planned': (0.7, 1e-06, 0.1698846843881929),
                                   'numbers': (0.7,
                                               1e-06,
                                               0.1698846843881929,
                                               1.0,
                                               120.0,
                                               0.1698846843881929),
                                   'texts': ('replace-one',
                                             'analytic Gaussian on the uncorrupted iterate, '
                                             'GDP-composed over releases',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')}]},
 'igd-fit-alpha-seed': {'rho': 0.10050201972241131,
                        'steps': [{'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               1.0,
                                               120.0,
                                               0.44833474039474414),
                                   'texts': ('replace-one',
                                             'analytic Gaussian on the uncorrupted iterate, '
                                             'GDP-composed over releases',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')}]},
 'igd-fit-alpha-float': {'rho': 0.007701168113593885,
                         'steps': [{'planned': (0.5, 1e-06, 0.12410614903052858),
                                    'numbers': (0.5,
                                                1e-06,
                                                0.12410614903052858,
                                                1.0,
                                                120.0,
                                                0.12410614903052858),
                                    'texts': ('replace-one',
                                              'analytic Gaussian on the uncorrupted iterate, '
                                              'GDP-composed over releases',
                                              'coef_ and intercept_ of the fitted model (one '
                                              'release)',
                                              'the records passed to fit',
                                              'this release')}]},
 'igd-fit-gradient-hinge': {'rho': 0.02801448191263024,
                            'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                       'numbers': (1.0,
                                                   1e-06,
                                                   0.2367043806634353,
                                                   1.0,
                                                   120.0,
                                                   0.2367043806634353),
                                       'texts': ('replace-one',
                                                 'analytic Gaussian on the uncorrupted '
                                                 'iterate, GDP-composed over releases',
                                                 'coef_ and intercept_ of the fitted model '
                                                 '(one release)',
                                                 'the records passed to fit',
                                                 'this release')}]},
 'igd-op': {'rho': "ValueError: PrivateIGDClassifier(solver='objective_perturbation') has a "
                   'custom privacy profile that is not Gaussian DP and not accounted in Renyi '
                   "DP here; private selection cannot bound it. Search solver='igd' or "
                   "'mirror_descent' instead.",
            'steps': [{'planned': (1.0, 1e-06, math.nan),
                       'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                       'texts': ('replace-one',
                                 'objective perturbation: N(0, 14.36^2) linear term, '
                                 'regularisation 6.998 (sum form), Jacobian term 0.06901, '
                                 'gradient sensitivity 2.828 over 1 problem(s), plus Gaussian '
                                 'output noise at mu=0.0197 for the certified solver gap; '
                                 'exact profile of the privacy-loss bound plus the charge for '
                                 'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                 'coef_ and intercept_ of the fitted model (one release)',
                                 'the records passed to fit',
                                 'this release')}]},
 'igd-op-inf': {'rho': "ValueError: PrivateIGDClassifier(solver='objective_perturbation') has "
                       'a custom privacy profile that is not Gaussian DP and not accounted in '
                       "Renyi DP here; private selection cannot bound it. Search solver='igd' "
                       "or 'mirror_descent' instead.",
                'steps': [{'planned': (math.inf, 1e-06, math.nan),
                           'numbers': (math.inf, 1e-06, math.nan, 1.0, 120.0, math.nan),
                           'texts': ('replace-one',
                                     'none: epsilon=inf solves the regularised problem without '
                                     'noise',
                                     'coef_ and intercept_ of the fitted model (one release)',
                                     'the records passed to fit',
                                     'this release')}]},
 'igd-op-then-stream': {'rho': 'ValueError: '
                               "PrivateIGDClassifier(solver='objective_perturbation') has a "
                               'custom privacy profile that is not Gaussian DP and not '
                               'accounted in Renyi DP here; private selection cannot bound it. '
                               "Search solver='igd' or 'mirror_descent' instead.",
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'objective perturbation: N(0, 14.36^2) linear '
                                             'term, regularisation 6.998 (sum form), Jacobian '
                                             'term 0.06901, gradient sensitivity 2.828 over 1 '
                                             'problem(s), plus Gaussian output noise at '
                                             'mu=0.0197 for the certified solver gap; exact '
                                             'profile of the privacy-loss bound plus the '
                                             'charge for the noise-norm bound (doc/privacy.md, '
                                             'sections 7.3 and 7.6)',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               1.0,
                                               40.0,
                                               0.18933431410835758),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 14.95 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               2.0,
                                               80.0,
                                               0.2116798953588606),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 14.95 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-iterate-horizon': {'rho': 0.02801448191263024,
                         'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                1.0,
                                                40.0,
                                                0.10585741714708562),
                                    'texts': ('replace-one',
                                              'analytic Gaussian on the uncorrupted iterate, '
                                              'GDP-composed over releases',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')},
                                   {'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                2.0,
                                                80.0,
                                                0.14970499500719472),
                                    'texts': ('replace-one',
                                              'analytic Gaussian on the uncorrupted iterate, '
                                              'GDP-composed over releases',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')}]},
 'igd-iterate-unbounded': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                      'numbers': (1.0,
                                                  1e-06,
                                                  0.2367043806634353,
                                                  1.0,
                                                  40.0,
                                                  0.17384465542912791),
                                      'texts': ('replace-one',
                                                'analytic Gaussian on the uncorrupted iterate, '
                                                'GDP-composed over releases',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream, however long')},
                                     {'planned': (1.0, 1e-06, 0.2367043806634353),
                                      'numbers': (1.0,
                                                  1e-06,
                                                  0.2367043806634353,
                                                  2.0,
                                                  80.0,
                                                  0.17862120506304568),
                                      'texts': ('replace-one',
                                                'analytic Gaussian on the uncorrupted iterate, '
                                                'GDP-composed over releases',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream, however long')},
                                     {'planned': (1.0, 1e-06, 0.2367043806634353),
                                      'numbers': (1.0,
                                                  1e-06,
                                                  0.2367043806634353,
                                                  3.0,
                                                  120.0,
                                                  0.18098551291377024),
                                      'texts': ('replace-one',
                                                'analytic Gaussian on the uncorrupted iterate, '
                                                'GDP-composed over releases',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream, however long')}]},
 'igd-iterate-inf': {'rho': math.inf,
                     'steps': [{'planned': (math.inf, 1e-06, math.inf),
                                'numbers': (math.inf, 1e-06, math.inf, 1.0, 40.0, math.inf),
                                'texts': ('replace-one',
                                          'none: epsilon=inf adds no noise',
                                          'coef_ and intercept_ after every partial_fit call',
                                          'the records passed to partial_fit since the stream '
                                          'started (records of an earlier fit are covered by '
                                          'its own release)',
                                          'the stream, however long')}]},
 'igd-ftrl-horizon': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.18933431410835758),
                                 'texts': ('replace-one',
                                           "DP-FTRL on the stream's gradient sums, one step "
                                           'per partial_fit call (at most 5 calls): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '14.95 per step; the models are post-processing',
                                           'coef_ and intercept_ after every partial_fit call',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.2116798953588606),
                                 'texts': ('replace-one',
                                           "DP-FTRL on the stream's gradient sums, one step "
                                           'per partial_fit call (at most 5 calls): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '14.95 per step; the models are post-processing',
                                           'coef_ and intercept_ after every partial_fit call',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'igd-ftrl-unbounded': {'rho': 0.10050201972241131,
                        'steps': [{'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               1.0,
                                               40.0,
                                               0.23188012462590593),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '12.21 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')},
                                  {'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               2.0,
                                               80.0,
                                               0.25866932097370965),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '12.21 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')},
                                  {'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               3.0,
                                               120.0,
                                               0.2736950354494582),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '12.21 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')}]},
 'igd-ftrl-multiclass': {'rho': 0.02801448191263024,
                         'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                1.0,
                                                40.0,
                                                0.18933431410835758),
                                    'texts': ('replace-one',
                                              "DP-FTRL on the stream's gradient sums, one step "
                                              'per partial_fit call (at most 5 calls): BLT '
                                              'matrix factorization (4 buffers) over at most 5 '
                                              'steps (one batch per step), column norm 1.25, '
                                              'noise 25.9 per step; the models are '
                                              'post-processing',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')}]},
 'igd-fit-then-ftrl': {'rho': 0.02801448191263024,
                       'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              1.0,
                                              120.0,
                                              0.2367043806634353),
                                  'texts': ('replace-one',
                                            'analytic Gaussian on the uncorrupted iterate, '
                                            'GDP-composed over releases',
                                            'coef_ and intercept_ of the fitted model (one '
                                            'release)',
                                            'the records passed to fit',
                                            'this release')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              1.0,
                                              40.0,
                                              0.18933431410835758),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 14.95 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              2.0,
                                              80.0,
                                              0.2116798953588606),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 14.95 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')}]},
 'igd-fit-then-iterate': {'rho': 0.02801448191263024,
                          'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 120.0,
                                                 0.2367043806634353),
                                     'texts': ('replace-one',
                                               'analytic Gaussian on the uncorrupted iterate, '
                                               'GDP-composed over releases',
                                               'coef_ and intercept_ of the fitted model (one '
                                               'release)',
                                               'the records passed to fit',
                                               'this release')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 40.0,
                                                 0.10585741714708562),
                                     'texts': ('replace-one',
                                               'analytic Gaussian on the uncorrupted iterate, '
                                               'GDP-composed over releases',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 '
                                               'samples')}]},
 'qftl-fit-adassp': {'rho': 0.02801448191263024,
                     'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                'numbers': (1.0,
                                            1e-06,
                                            0.2367043806634353,
                                            1.0,
                                            120.0,
                                            0.2367043806634353),
                                'texts': ('replace-one',
                                          'AdaSSP: Gaussian release of the packed (V, u) '
                                          '(joint sensitivity, mu*sqrt(0.95)) and of '
                                          'lambda_min(V) (sensitivity R^2, mu*sqrt(0.05)), '
                                          'composing to mu*',
                                          'coef_ and intercept_, computed from one release of '
                                          'the noisy sufficient statistics (V, u)',
                                          'the records passed to fit',
                                          'this release')}]},
 'qftl-fit-alpha-float': {'rho': 0.014430402994837957,
                          'steps': [{'planned': (0.7, 1e-06, 0.1698846843881929),
                                     'numbers': (0.7,
                                                 1e-06,
                                                 0.1698846843881929,
                                                 1.0,
                                                 120.0,
                                                 0.1698846843881929),
                                     'texts': ('replace-one',
                                               'analytic Gaussian on the packed (V, u), joint '
                                               'sensitivity',
                                               'coef_ and intercept_, computed from one '
                                               'release of the noisy sufficient statistics (V, '
                                               'u)',
                                               'the records passed to fit',
                                               'this release')}]},
 'qftl-fit-inf': {'rho': math.inf,
                  'steps': [{'planned': (math.inf, 1e-06, math.inf),
                             'numbers': (math.inf, 1e-06, math.inf, 1.0, 120.0, math.inf),
                             'texts': ('replace-one',
                                       'none: epsilon=inf adds no noise',
                                       'coef_ and intercept_, computed from one release of the '
                                       'noisy sufficient statistics (V, u)',
                                       'the records passed to fit',
                                       'this release')}]},
 'qftl-fit-auto-norm': {'rho': 0.10050201972241131,
                        'steps': [{'planned': (2.0, 1e-06, math.nan),
                                   'numbers': (2.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'AdaSSP: Gaussian release of the packed (V, u) '
                                             '(joint sensitivity, mu*sqrt(0.95)) and of '
                                             'lambda_min(V) (sensitivity R^2, mu*sqrt(0.05)), '
                                             'composing to mu* at (1.8, 1e-06)-DP, after a '
                                             '0.2-DP private quantile of the row norms '
                                             "(data_norm='auto', exponential mechanism); basic "
                                             'composition',
                                             'coef_ and intercept_, computed from one release '
                                             'of the noisy sufficient statistics (V, u) and '
                                             'data_norm_ (the private quantile of the row '
                                             'norms)',
                                             'the records passed to fit',
                                             'this release')}]},
 'qftl-fit-auto-norm-alpha': {'rho': 0.02801448191263024,
                              'steps': [{'planned': (1.0, 1e-06, math.nan),
                                         'numbers': (1.0,
                                                     1e-06,
                                                     math.nan,
                                                     1.0,
                                                     120.0,
                                                     math.nan),
                                         'texts': ('replace-one',
                                                   'analytic Gaussian on the packed (V, u), '
                                                   'joint sensitivity at (0.9, 1e-06)-DP, '
                                                   'after a 0.1-DP private quantile of the row '
                                                   "norms (data_norm='auto', exponential "
                                                   'mechanism); basic composition',
                                                   'coef_ and intercept_, computed from one '
                                                   'release of the noisy sufficient statistics '
                                                   '(V, u) and data_norm_ (the private '
                                                   'quantile of the row norms)',
                                                   'the records passed to fit',
                                                   'this release')}]},
 'qftl-fit-auto-norm-inf': {'rho': math.inf,
                            'steps': [{'planned': (math.inf, 1e-06, math.nan),
                                       'numbers': (math.inf,
                                                   1e-06,
                                                   math.nan,
                                                   1.0,
                                                   120.0,
                                                   math.nan),
                                       'texts': ('replace-one',
                                                 'none: epsilon=inf adds no noise',
                                                 'coef_ and intercept_, computed from one '
                                                 'release of the noisy sufficient statistics '
                                                 '(V, u) and data_norm_ (the private quantile '
                                                 'of the row norms)',
                                                 'the records passed to fit',
                                                 'this release')}]},
 'qftl-stream-auto': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.18933431410835758),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '18.69 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.2116798953588606),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '18.69 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-tree': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.20499200684159702),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): binary tree '
                                           'over at most 200 rows (dyadic blocks), 8 levels, '
                                           'noise 42.29 per node',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.2214166735977734),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): binary tree '
                                           'over at most 200 rows (dyadic blocks), 8 levels, '
                                           'noise 42.29 per node',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-honaker': {'rho': 0.02801448191263024,
                         'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                1.0,
                                                40.0,
                                                0.20499200684159702),
                                    'texts': ('replace-one',
                                              'Gaussian continual release of (V, u): binary '
                                              "tree over at most 200 rows (Honaker's "
                                              'estimator), 8 levels, noise 42.29 per node',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call, computed from the noisy prefix sums of '
                                              '(V, u) released by the stream mechanism',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')},
                                   {'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                2.0,
                                                80.0,
                                                0.2214166735977734),
                                    'texts': ('replace-one',
                                              'Gaussian continual release of (V, u): binary '
                                              "tree over at most 200 rows (Honaker's "
                                              'estimator), 8 levels, noise 42.29 per node',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call, computed from the noisy prefix sums of '
                                              '(V, u) released by the stream mechanism',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-sqrt': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.1893302267513749),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): square-root '
                                           'Toeplitz factorization A^(1/2) over at most 5 '
                                           'steps (one batch per step), column norm 1.25, '
                                           'noise 18.69 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.21167762860576175),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): square-root '
                                           'Toeplitz factorization A^(1/2) over at most 5 '
                                           'steps (one batch per step), column norm 1.25, '
                                           'noise 18.69 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-blt': {'rho': 0.02801448191263024,
                     'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                'numbers': (1.0,
                                            1e-06,
                                            0.2367043806634353,
                                            1.0,
                                            40.0,
                                            0.18933431410835758),
                                'texts': ('replace-one',
                                          'Gaussian continual release of (V, u): BLT matrix '
                                          'factorization (4 buffers) over at most 5 steps (one '
                                          'batch per step), column norm 1.25, noise 18.69 per '
                                          'step',
                                          'coef_ and intercept_ after every partial_fit call, '
                                          'computed from the noisy prefix sums of (V, u) '
                                          'released by the stream mechanism',
                                          'the records passed to partial_fit since the stream '
                                          'started (records of an earlier fit are covered by '
                                          'its own release)',
                                          'the stream up to its horizon of 200 samples')},
                               {'planned': (1.0, 1e-06, 0.2367043806634353),
                                'numbers': (1.0,
                                            1e-06,
                                            0.2367043806634353,
                                            2.0,
                                            80.0,
                                            0.2116798953588606),
                                'texts': ('replace-one',
                                          'Gaussian continual release of (V, u): BLT matrix '
                                          'factorization (4 buffers) over at most 5 steps (one '
                                          'batch per step), column norm 1.25, noise 18.69 per '
                                          'step',
                                          'coef_ and intercept_ after every partial_fit call, '
                                          'computed from the noisy prefix sums of (V, u) '
                                          'released by the stream mechanism',
                                          'the records passed to partial_fit since the stream '
                                          'started (records of an earlier fit are covered by '
                                          'its own release)',
                                          'the stream up to its horizon of 200 samples')}]},
 # Session 32 (doc/privacy.md 56.9): re-recorded deliberately, text only: an unbounded stream's
 # intercept_scaling="auto" is the minimax c below 1, so the sensitivity and the noise fell
 # from 28.91 to 23.9 (rho and mu unchanged).
 'qftl-stream-unbounded-auto': {'rho': 0.02801448191263024,
                                'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       1.0,
                                                       40.0,
                                                       0.12242424318804518),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'BLT matrix factorization (4 buffers) '
                                                     'over an unbounded stream (fitted for '
                                                     '4096 steps, column norm of the infinite '
                                                     'stream) (one batch per step), column '
                                                     'norm 1.933, noise 23.9 per step',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')},
                                          {'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       2.0,
                                                       80.0,
                                                       0.1365679611707179),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'BLT matrix factorization (4 buffers) '
                                                     'over an unbounded stream (fitted for '
                                                     '4096 steps, column norm of the infinite '
                                                     'stream) (one batch per step), column '
                                                     'norm 1.933, noise 23.9 per step',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')},
                                          {'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       3.0,
                                                       120.0,
                                                       0.14450099004078973),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'BLT matrix factorization (4 buffers) '
                                                     'over an unbounded stream (fitted for '
                                                     '4096 steps, column norm of the infinite '
                                                     'stream) (one batch per step), column '
                                                     'norm 1.933, noise 23.9 per step',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')}]},
 'qftl-stream-unbounded-tree': {'rho': 0.02801448191263024,
                                'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       1.0,
                                                       40.0,
                                                       0.2367043806634353),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'epoch binary trees over rows (dyadic '
                                                     'blocks), epoch k of 2^k rows with noise '
                                                     'sqrt(k + 1) * (1 + 1e-3) * sensitivity / '
                                                     'mu per node',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')},
                                          {'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       2.0,
                                                       80.0,
                                                       0.2367043806634353),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'epoch binary trees over rows (dyadic '
                                                     'blocks), epoch k of 2^k rows with noise '
                                                     'sqrt(k + 1) * (1 + 1e-3) * sensitivity / '
                                                     'mu per node',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')},
                                          {'planned': (1.0, 1e-06, 0.2367043806634353),
                                           'numbers': (1.0,
                                                       1e-06,
                                                       0.2367043806634353,
                                                       3.0,
                                                       120.0,
                                                       0.2367043806634353),
                                           'texts': ('replace-one',
                                                     'Gaussian continual release of (V, u): '
                                                     'epoch binary trees over rows (dyadic '
                                                     'blocks), epoch k of 2^k rows with noise '
                                                     'sqrt(k + 1) * (1 + 1e-3) * sensitivity / '
                                                     'mu per node',
                                                     'coef_ and intercept_ after every '
                                                     'partial_fit call, computed from the '
                                                     'noisy prefix sums of (V, u) released by '
                                                     'the stream mechanism',
                                                     'the records passed to partial_fit since '
                                                     'the stream started (records of an '
                                                     'earlier fit are covered by its own '
                                                     'release)',
                                                     'the stream, however long')}]},
 'qftl-stream-auto-norm': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): BLT '
                                                'matrix factorization (4 buffers) over at most '
                                                '5 steps (one batch per step), column norm '
                                                '1.25, noise 12.37 per step at (0.9, '
                                                '1e-06)-DP, after a 0.1-DP private quantile of '
                                                "the first batch's row norms "
                                                "(data_norm='auto'); basic composition",
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 samples')},
                                     {'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): BLT '
                                                'matrix factorization (4 buffers) over at most '
                                                '5 steps (one batch per step), column norm '
                                                '1.25, noise 12.37 per step at (0.9, '
                                                '1e-06)-DP, after a 0.1-DP private quantile of '
                                                "the first batch's row norms "
                                                "(data_norm='auto'); basic composition",
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 '
                                                'samples')}]},
 'qftl-stream-inf': {'rho': math.inf,
                     'steps': [{'planned': (math.inf, 1e-06, math.inf),
                                'numbers': (math.inf, 1e-06, math.inf, 1.0, 40.0, math.inf),
                                'texts': ('replace-one',
                                          'none: epsilon=inf adds no noise',
                                          'coef_ and intercept_ after every partial_fit call, '
                                          'computed from the noisy prefix sums of (V, u) '
                                          'released by the stream mechanism',
                                          'the records passed to partial_fit since the stream '
                                          'started (records of an earlier fit are covered by '
                                          'its own release)',
                                          'the stream up to its horizon of 200 samples')}]},
 'qftl-fit-then-stream': {'rho': 0.02801448191263024,
                          'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 120.0,
                                                 0.2367043806634353),
                                     'texts': ('replace-one',
                                               'AdaSSP: Gaussian release of the packed (V, u) '
                                               '(joint sensitivity, mu*sqrt(0.95)) and of '
                                               'lambda_min(V) (sensitivity R^2, mu*sqrt(0.05)), '
                                               'composing to mu*',
                                               'coef_ and intercept_, computed from one '
                                               'release of the noisy sufficient statistics (V, '
                                               'u)',
                                               'the records passed to fit',
                                               'this release')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 40.0,
                                                 0.18933431410835758),
                                     'texts': ('replace-one',
                                               'Gaussian continual release of (V, u): BLT '
                                               'matrix factorization (4 buffers) over at most '
                                               '5 steps (one batch per step), column norm '
                                               '1.25, noise 18.69 per step',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call, computed from the noisy prefix sums of '
                                               '(V, u) released by the stream mechanism',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 samples')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 2.0,
                                                 80.0,
                                                 0.2116798953588606),
                                     'texts': ('replace-one',
                                               'Gaussian continual release of (V, u): BLT '
                                               'matrix factorization (4 buffers) over at most '
                                               '5 steps (one batch per step), column norm '
                                               '1.25, noise 18.69 per step',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call, computed from the noisy prefix sums of '
                                               '(V, u) released by the stream mechanism',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 '
                                               'samples')}]},
 'fw-exponential': {'rho': 0.02000269057386507,
                    'steps': [{'planned': (0.9, 1e-06, math.nan),
                               'numbers': (0.9, 1e-06, math.nan, 1.0, 120.0, math.nan),
                               'texts': ('replace-one',
                                         'exponential mechanism (Gumbel-max) at each of 15 '
                                         'Frank-Wolfe steps, each 0.1033-bounded range, hence '
                                         '0.001334-zCDP; 0.02-zCDP in total, converted exactly '
                                         'to (epsilon, delta)',
                                         'coef_ and intercept_ after every call (the last '
                                         'Frank-Wolfe iterate, a function of the selected '
                                         'vertices), and the step count max_iter_',
                                         'the records passed to fit',
                                         'this release')}]},
 'fw-gaussian': {'rho': 0.02303632544981091,
                 'steps': [{'planned': (0.9, 1e-06, 0.21464540735739449),
                            'numbers': (0.9,
                                        1e-06,
                                        0.21464540735739449,
                                        1.0,
                                        120.0,
                                        0.21464540735739449),
                            'texts': ('replace-one',
                                      'Gaussian noise on the gradient at each of 15 '
                                      'Frank-Wolfe steps (analytic Gaussian, sigma=1.203), '
                                      'GDP-composed to mu=0.2146',
                                      'coef_ and intercept_ after every call (the last '
                                      'Frank-Wolfe iterate, a function of the selected '
                                      'vertices), and the step count max_iter_',
                                      'the records passed to fit',
                                      'this release')}]},
 'fw-exponential-inf': {'rho': math.inf,
                        'steps': [{'planned': (math.inf, 1e-06, math.nan),
                                   'numbers': (math.inf, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'none: epsilon=inf selects the best vertex '
                                             'exactly (15 steps)',
                                             'coef_ and intercept_ after every call (the last '
                                             'Frank-Wolfe iterate, a function of the selected '
                                             'vertices), and the step count max_iter_',
                                             'the records passed to fit',
                                             'this release')}]},
 'fw-gaussian-inf': {'rho': math.inf,
                     'steps': [{'planned': (math.inf, 1e-06, math.inf),
                                'numbers': (math.inf, 1e-06, math.inf, 1.0, 120.0, math.inf),
                                'texts': ('replace-one',
                                          'none: epsilon=inf selects the best vertex exactly '
                                          '(15 steps)',
                                          'coef_ and intercept_ after every call (the last '
                                          'Frank-Wolfe iterate, a function of the selected '
                                          'vertices), and the step count max_iter_',
                                          'the records passed to fit',
                                          'this release')}]},
 'fw-exponential-stream': {'rho': 0.03971599684722172,
                           'steps': [{'planned': (1.3, 1e-06, math.nan),
                                      'numbers': (1.3, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                      'texts': ('replace-one',
                                                'exponential mechanism (Gumbel-max) at each of '
                                                '15 Frank-Wolfe steps, each 0.1455-bounded '
                                                'range, hence 0.002648-zCDP; 0.03972-zCDP in '
                                                'total, converted exactly to (epsilon, delta)',
                                                'coef_ and intercept_ after every call (the '
                                                'last Frank-Wolfe iterate, a function of the '
                                                'selected vertices), and the step count '
                                                'max_iter_',
                                                'the records passed to fit',
                                                'this release')},
                                     {'planned': (1.3, 1e-06, math.nan),
                                      'numbers': (1.3, 1e-06, math.nan, 2.0, 160.0, math.nan),
                                      'texts': ('replace-one',
                                                'exponential mechanism (Gumbel-max) at each of '
                                                '15 Frank-Wolfe steps, each 0.1455-bounded '
                                                'range, hence 0.002648-zCDP; 0.03972-zCDP in '
                                                'total, converted exactly to (epsilon, delta)',
                                                'coef_ and intercept_ after every call (the '
                                                'last Frank-Wolfe iterate, a function of the '
                                                'selected vertices), and the step count '
                                                'max_iter_',
                                                'the records of fit (if it came first) and of '
                                                'every partial_fit call since, each covered by '
                                                '(epsilon, delta) through the one call (batch) '
                                                'that contained it; batches are disjoint, so '
                                                'the stream is (epsilon, delta)-DP per record '
                                                'by parallel composition (a record passed to k '
                                                'calls composes k times)',
                                                'each batch, for a stream however long '
                                                '(parallel composition)')},
                                     {'planned': (1.3, 1e-06, math.nan),
                                      'numbers': (1.3, 1e-06, math.nan, 3.0, 200.0, math.nan),
                                      'texts': ('replace-one',
                                                'exponential mechanism (Gumbel-max) at each of '
                                                '15 Frank-Wolfe steps, each 0.1455-bounded '
                                                'range, hence 0.002648-zCDP; 0.03972-zCDP in '
                                                'total, converted exactly to (epsilon, delta)',
                                                'coef_ and intercept_ after every call (the '
                                                'last Frank-Wolfe iterate, a function of the '
                                                'selected vertices), and the step count '
                                                'max_iter_',
                                                'the records of fit (if it came first) and of '
                                                'every partial_fit call since, each covered by '
                                                '(epsilon, delta) through the one call (batch) '
                                                'that contained it; batches are disjoint, so '
                                                'the stream is (epsilon, delta)-DP per record '
                                                'by parallel composition (a record passed to k '
                                                'calls composes k times)',
                                                'each batch, for a stream however long '
                                                '(parallel composition)')}]},
 'fw-gaussian-stream': {'rho': 0.04553490995589513,
                        'steps': [{'planned': (1.3, 1e-06, 0.3017777657677753),
                                   'numbers': (1.3,
                                               1e-06,
                                               0.30177776576777526,
                                               1.0,
                                               40.0,
                                               0.30177776576777526),
                                   'texts': ('replace-one',
                                             'Gaussian noise on the gradient at each of 15 '
                                             'Frank-Wolfe steps (analytic Gaussian, '
                                             'sigma=2.567), GDP-composed to mu=0.3018',
                                             'coef_ and intercept_ after every call (the last '
                                             'Frank-Wolfe iterate, a function of the selected '
                                             'vertices), and the step count max_iter_',
                                             'the records of fit (if it came first) and of '
                                             'every partial_fit call since, each covered by '
                                             '(epsilon, delta) through the one call (batch) '
                                             'that contained it; batches are disjoint, so the '
                                             'stream is (epsilon, delta)-DP per record by '
                                             'parallel composition (a record passed to k calls '
                                             'composes k times)',
                                             'each batch, for a stream however long (parallel '
                                             'composition)')},
                                  {'planned': (1.3, 1e-06, 0.3017777657677753),
                                   'numbers': (1.3,
                                               1e-06,
                                               0.30177776576777526,
                                               2.0,
                                               80.0,
                                               0.30177776576777526),
                                   'texts': ('replace-one',
                                             'Gaussian noise on the gradient at each of 15 '
                                             'Frank-Wolfe steps (analytic Gaussian, '
                                             'sigma=2.567), GDP-composed to mu=0.3018',
                                             'coef_ and intercept_ after every call (the last '
                                             'Frank-Wolfe iterate, a function of the selected '
                                             'vertices), and the step count max_iter_',
                                             'the records of fit (if it came first) and of '
                                             'every partial_fit call since, each covered by '
                                             '(epsilon, delta) through the one call (batch) '
                                             'that contained it; batches are disjoint, so the '
                                             'stream is (epsilon, delta)-DP per record by '
                                             'parallel composition (a record passed to k calls '
                                             'composes k times)',
                                             'each batch, for a stream however long (parallel '
                                             'composition)')}]},
 'md-fit': {'rho': 0.039272483805919425,
            'steps': [{'planned': (1.2, 1e-06, 0.28025875117797633),
                       'numbers': (1.2,
                                   1e-06,
                                   0.28025875117797633,
                                   1.0,
                                   120.0,
                                   0.28025875117797633),
                       'texts': ('replace-one',
                                 'Gaussian noise (sigma=1.128) on the mean gradient (L2 '
                                 'sensitivity 0.07071) at each of T=20 mirror-descent steps, '
                                 'GDP-composed to mu=0.2803',
                                 'coef_ and intercept_ after every call (the average '
                                 'mirror-descent iterate, a function of the noisy gradients), '
                                 'and the step count max_iter_',
                                 'the records passed to fit',
                                 'this release')}]},
 'md-fit-inf': {'rho': math.inf,
                'steps': [{'planned': (math.inf, 1e-06, math.inf),
                           'numbers': (math.inf, 1e-06, math.inf, 1.0, 120.0, math.inf),
                           'texts': ('replace-one',
                                     'none: epsilon=inf runs 20 noiseless mirror-descent steps',
                                     'coef_ and intercept_ after every call (the average '
                                     'mirror-descent iterate, a function of the noisy '
                                     'gradients), and the step count max_iter_',
                                     'the records passed to fit',
                                     'this release')}]},
 'md-stream': {'rho': 0.039272483805919425,
               'steps': [{'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      1.0,
                                      120.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=1.128) on the mean gradient (L2 '
                                    'sensitivity 0.07071) at each of T=20 mirror-descent '
                                    'steps, GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records passed to fit',
                                    'this release')},
                         {'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      2.0,
                                      160.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=3.385) on the mean gradient (L2 '
                                    'sensitivity 0.2121) at each of T=20 mirror-descent steps, '
                                    'GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records of fit (if it came first) and of every '
                                    'partial_fit call since, each covered by (epsilon, delta) '
                                    'through the one call (batch) that contained it; batches '
                                    'are disjoint, so the stream is (epsilon, delta)-DP per '
                                    'record by parallel composition (a record passed to k '
                                    'calls composes k times)',
                                    'each batch, for a stream however long (parallel '
                                    'composition)')},
                         {'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      3.0,
                                      200.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=3.385) on the mean gradient (L2 '
                                    'sensitivity 0.2121) at each of T=20 mirror-descent steps, '
                                    'GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records of fit (if it came first) and of every '
                                    'partial_fit call since, each covered by (epsilon, delta) '
                                    'through the one call (batch) that contained it; batches '
                                    'are disjoint, so the stream is (epsilon, delta)-DP per '
                                    'record by parallel composition (a record passed to k '
                                    'calls composes k times)',
                                    'each batch, for a stream however long (parallel '
                                    'composition)')}]},
 'md-op': {'rho': "ValueError: PrivateMirrorDescentRegressor(solver='objective_perturbation') "
                  'has a custom privacy profile that is not Gaussian DP and not accounted in '
                  "Renyi DP here; private selection cannot bound it. Search solver='igd' or "
                  "'mirror_descent' instead.",
           'steps': [{'planned': (1.0, 1e-06, math.nan),
                      'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                      'texts': ('replace-one',
                                'objective perturbation: N(0, 40.97^2) linear term, '
                                'regularisation 109.5 (sum form), Jacobian term 0.01811, '
                                'gradient sensitivity 8.485 over 1 problem(s), plus Gaussian '
                                'output noise at mu=0.02071 for the certified solver gap; '
                                'exact profile of the privacy-loss bound plus the charge for '
                                'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                'coef_ and intercept_ after every call (the perturbed '
                                "objective's minimiser projected on the public set)",
                                'the records passed to fit',
                                'this release')}]},
 'md-op-stream': {'rho': 'ValueError: '
                         "PrivateMirrorDescentRegressor(solver='objective_perturbation') has a "
                         'custom privacy profile that is not Gaussian DP and not accounted in '
                         'Renyi DP here; private selection cannot bound it. Search '
                         "solver='igd' or 'mirror_descent' instead.",
                  'steps': [{'planned': (1.0, 1e-06, math.nan),
                             'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                             'texts': ('replace-one',
                                       'objective perturbation: N(0, 77.39^2) linear term, '
                                       'regularisation 3.083 (sum form), Jacobian term 0.5, '
                                       'gradient sensitivity 8.485 over 1 problem(s), plus '
                                       'Gaussian output noise at mu=0.01096 for the certified '
                                       'solver gap; exact profile of the privacy-loss bound '
                                       'plus the charge for the noise-norm bound '
                                       '(doc/privacy.md, sections 7.3 and 7.6)',
                                       'coef_ and intercept_ after every call (the perturbed '
                                       "objective's minimiser projected on the public set)",
                                       'the records of fit (if it came first) and of every '
                                       'partial_fit call since, each covered by (epsilon, '
                                       'delta) through the one call (batch) that contained it; '
                                       'batches are disjoint, so the stream is (epsilon, '
                                       'delta)-DP per record by parallel composition (a record '
                                       'passed to k calls composes k times)',
                                       'each batch, for a stream however long (parallel '
                                       'composition)')},
                            {'planned': (1.0, 1e-06, math.nan),
                             'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                             'texts': ('replace-one',
                                       'objective perturbation: N(0, 77.39^2) linear term, '
                                       'regularisation 3.083 (sum form), Jacobian term 0.5, '
                                       'gradient sensitivity 8.485 over 1 problem(s), plus '
                                       'Gaussian output noise at mu=0.01096 for the certified '
                                       'solver gap; exact profile of the privacy-loss bound '
                                       'plus the charge for the noise-norm bound '
                                       '(doc/privacy.md, sections 7.3 and 7.6)',
                                       'coef_ and intercept_ after every call (the perturbed '
                                       "objective's minimiser projected on the public set)",
                                       'the records of fit (if it came first) and of every '
                                       'partial_fit call since, each covered by (epsilon, '
                                       'delta) through the one call (batch) that contained it; '
                                       'batches are disjoint, so the stream is (epsilon, '
                                       'delta)-DP per record by parallel composition (a record '
                                       'passed to k calls composes k times)',
                                       'each batch, for a stream however long (parallel '
                                       'composition)')}]},
 'mi-full': {'rho': 'ValueError: Private selection does not support '
                    'MutualInformationPrivateOGDRegressor: its guarantee is per user report '
                    '(local DP, set by epsilon or by the noise scale sigma), and in bandit '
                    'mode its sensitivity depends on the number of features. Use '
                    'PrivateIGDClassifier, PrivateQFTLRegressor, PrivateFrankWolfeLasso, '
                    'PrivateMirrorDescentRegressor or ParameterFreeLocalDPRegressor.',
             'steps': [{'planned': (4.886554117462215, 1e-06, 1.0),
                        'numbers': (4.886554117462215, 1e-06, 1.0, 1.0, 120.0, 1.0),
                        'texts': ("replace-one (local: each user's report)",
                                  'local Gaussian randomiser (seed 003, Algorithm 1): gradient '
                                  'clipped to L2 norm L=1 plus N(0, sigma^2 I), sigma=2; '
                                  "replace-one sensitivity 2L, mu = 2L/sigma; the seed's "
                                  'mutual-information bound (Gaussian channel capacity, not '
                                  'DP): 0.1212 nats per report',
                                  'coef_ and intercept_ after every call, post-processing of '
                                  "the users' noisy reports (the learner sees nothing else)",
                                  'every row passed to fit and to the partial_fit calls since, '
                                  'each a user who reported once',
                                  "each user's own report, for a stream however long (a row "
                                  'passed to k calls reports k times and composes)')},
                       {'planned': (4.886554117462215, 1e-06, 1.0),
                        'numbers': (4.886554117462215, 1e-06, 1.0, 2.0, 160.0, 1.0),
                        'texts': ("replace-one (local: each user's report)",
                                  'local Gaussian randomiser (seed 003, Algorithm 1): gradient '
                                  'clipped to L2 norm L=1 plus N(0, sigma^2 I), sigma=2; '
                                  "replace-one sensitivity 2L, mu = 2L/sigma; the seed's "
                                  'mutual-information bound (Gaussian channel capacity, not '
                                  'DP): 0.1212 nats per report',
                                  'coef_ and intercept_ after every call, post-processing of '
                                  "the users' noisy reports (the learner sees nothing else)",
                                  'every row passed to fit and to the partial_fit calls since, '
                                  'each a user who reported once',
                                  "each user's own report, for a stream however long (a row "
                                  'passed to k calls reports k times and composes)')}]},
 'mi-bandit': {'rho': 'ValueError: Private selection does not support '
                      'MutualInformationPrivateOGDRegressor: its guarantee is per user report '
                      '(local DP, set by epsilon or by the noise scale sigma), and in bandit '
                      'mode its sensitivity depends on the number of features. Use '
                      'PrivateIGDClassifier, PrivateQFTLRegressor, PrivateFrankWolfeLasso, '
                      'PrivateMirrorDescentRegressor or ParameterFreeLocalDPRegressor.',
               'steps': [{'planned': (35.50916373589739, 1e-06, 4.994112549695428),
                          'numbers': (35.50916373589739,
                                      1e-06,
                                      4.994112549695428,
                                      1.0,
                                      120.0,
                                      4.994112549695428),
                          'texts': ("replace-one (local: each user's report)",
                                    'local Gaussian randomiser on a one-point gradient '
                                    'estimate (seed 003, Algorithm 2): (d/delta) phi e + N(0, '
                                    'sigma^2 I), loss value phi clipped to [0, F], F=3.121, '
                                    'delta=0.5, d=4, sigma=5; sensitivity d F/delta given the '
                                    "user's direction e, mu = d F/(delta sigma); the seed's "
                                    'mutual-information bound (Gaussian channel capacity, not '
                                    'DP): 3.958 nats per report',
                                    'coef_ and intercept_ after every call, post-processing of '
                                    "the users' noisy reports (the learner sees nothing else)",
                                    'every row passed to fit and to the partial_fit calls '
                                    'since, each a user who reported once',
                                    "each user's own report, for a stream however long (a row "
                                    'passed to k calls reports k times and composes)')},
                         {'planned': (35.50916373589739, 1e-06, 4.994112549695428),
                          'numbers': (35.50916373589739,
                                      1e-06,
                                      4.994112549695428,
                                      2.0,
                                      160.0,
                                      4.994112549695428),
                          'texts': ("replace-one (local: each user's report)",
                                    'local Gaussian randomiser on a one-point gradient '
                                    'estimate (seed 003, Algorithm 2): (d/delta) phi e + N(0, '
                                    'sigma^2 I), loss value phi clipped to [0, F], F=3.121, '
                                    'delta=0.5, d=4, sigma=5; sensitivity d F/delta given the '
                                    "user's direction e, mu = d F/(delta sigma); the seed's "
                                    'mutual-information bound (Gaussian channel capacity, not '
                                    'DP): 3.958 nats per report',
                                    'coef_ and intercept_ after every call, post-processing of '
                                    "the users' noisy reports (the learner sees nothing else)",
                                    'every row passed to fit and to the partial_fit calls '
                                    'since, each a user who reported once',
                                    "each user's own report, for a stream however long (a row "
                                    'passed to k calls reports k times and composes)')}]},
 'mi-bandit-stream': {'rho': 'ValueError: Private selection does not support '
                             'MutualInformationPrivateOGDRegressor: its guarantee is per user '
                             'report (local DP, set by epsilon or by the noise scale sigma), '
                             'and in bandit mode its sensitivity depends on the number of '
                             'features. Use PrivateIGDClassifier, PrivateQFTLRegressor, '
                             'PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor or '
                             'ParameterFreeLocalDPRegressor.',
                      'steps': [{'planned': (18.163445759078478, 1e-06, 3.0),
                                 'numbers': (18.163445759078478, 1e-06, 3.0, 1.0, 40.0, 3.0),
                                 'texts': ("replace-one (local: each user's report)",
                                           'local Gaussian randomiser on a one-point gradient '
                                           'estimate (seed 003, Algorithm 2): (d/delta) phi e '
                                           '+ N(0, sigma^2 I), loss value phi clipped to [0, '
                                           'F], F=2.5, delta=0.5, d=3, sigma=5; sensitivity d '
                                           "F/delta given the user's direction e, mu = d "
                                           "F/(delta sigma); the seed's mutual-information "
                                           'bound (Gaussian channel capacity, not DP): 2.079 '
                                           'nats per report',
                                           'coef_ and intercept_ after every call, '
                                           "post-processing of the users' noisy reports (the "
                                           'learner sees nothing else)',
                                           'every row passed to fit and to the partial_fit '
                                           'calls since, each a user who reported once',
                                           "each user's own report, for a stream however long "
                                           '(a row passed to k calls reports k times and '
                                           'composes)')},
                                {'planned': (18.163445759078478, 1e-06, 3.0),
                                 'numbers': (18.163445759078478, 1e-06, 3.0, 2.0, 80.0, 3.0),
                                 'texts': ("replace-one (local: each user's report)",
                                           'local Gaussian randomiser on a one-point gradient '
                                           'estimate (seed 003, Algorithm 2): (d/delta) phi e '
                                           '+ N(0, sigma^2 I), loss value phi clipped to [0, '
                                           'F], F=2.5, delta=0.5, d=3, sigma=5; sensitivity d '
                                           "F/delta given the user's direction e, mu = d "
                                           "F/(delta sigma); the seed's mutual-information "
                                           'bound (Gaussian channel capacity, not DP): 2.079 '
                                           'nats per report',
                                           'coef_ and intercept_ after every call, '
                                           "post-processing of the users' noisy reports (the "
                                           'learner sees nothing else)',
                                           'every row passed to fit and to the partial_fit '
                                           'calls since, each a user who reported once',
                                           "each user's own report, for a stream however long "
                                           '(a row passed to k calls reports k times and '
                                           'composes)')}]},
 'pf-fit': {'rho': 2.0,
            'steps': [{'planned': (2.0, 0.0, math.nan),
                       'numbers': (2.0, 0.0, math.nan, 1.0, 120.0, math.nan),
                       'texts': ("replace-one (local: each user's report)",
                                 'local Laplace randomiser, each user epsilon_t = sum_j tau_tj',
                                 'coef_ and intercept_ after every call, post-processing of '
                                 "the users' noisy reports (the learner sees nothing else)",
                                 'every row passed to fit and to the partial_fit calls since, '
                                 'each a user who reported once (120 with a finite epsilon_t, '
                                 'covered by their own epsilon_t <= epsilon; 0 chose '
                                 'epsilon_t=inf, no guarantee)',
                                 "each user's own report, for a stream however long (a row "
                                 'passed to k calls reports k times and composes)')}]},
 'pf-reduction': {'rho': 0.5,
                  'steps': [{'planned': (1.0, 0.0, math.nan),
                             'numbers': (1.0, 0.0, math.nan, 1.0, 120.0, math.nan),
                             'texts': ("replace-one (local: each user's report)",
                                       'local Laplace randomiser, each user epsilon_t = sum_j '
                                       'tau_tj',
                                       'coef_ and intercept_ after every call, post-processing '
                                       "of the users' noisy reports (the learner sees nothing "
                                       'else)',
                                       'every row passed to fit and to the partial_fit calls '
                                       'since, each a user who reported once (120 with a '
                                       'finite epsilon_t, covered by their own epsilon_t <= '
                                       'epsilon; 0 chose epsilon_t=inf, no guarantee)',
                                       "each user's own report, for a stream however long (a "
                                       'row passed to k calls reports k times and '
                                       'composes)')}]},
 'pf-inf': {'rho': math.inf,
            'steps': [{'planned': (math.inf, 0.0, math.nan),
                       'numbers': (math.inf, 0.0, math.nan, 1.0, 120.0, math.nan),
                       'texts': ("replace-one (local: each user's report)",
                                 'none: every user chose epsilon=inf (no noise)',
                                 'coef_ and intercept_ after every call, post-processing of '
                                 "the users' noisy reports (the learner sees nothing else)",
                                 'every row passed to fit and to the partial_fit calls since, '
                                 'each a user who reported once (0 with a finite epsilon_t, '
                                 'covered by their own epsilon_t <= epsilon; 120 chose '
                                 'epsilon_t=inf, no guarantee)',
                                 "each user's own report, for a stream however long (a row "
                                 'passed to k calls reports k times and composes)')}]},
 'pf-sample-epsilon': {'rho': 2.0,
                       'steps': [{'planned': (1.5, 0.0, math.nan),
                                  'numbers': (1.5, 0.0, math.nan, 1.0, 120.0, math.nan),
                                  'texts': ("replace-one (local: each user's report)",
                                            'local Laplace randomiser, each user epsilon_t = '
                                            'sum_j tau_tj',
                                            'coef_ and intercept_ after every call, '
                                            "post-processing of the users' noisy reports (the "
                                            'learner sees nothing else)',
                                            'every row passed to fit and to the partial_fit '
                                            'calls since, each a user who reported once (80 '
                                            'with a finite epsilon_t, covered by their own '
                                            'epsilon_t <= epsilon; 40 chose epsilon_t=inf, no '
                                            'guarantee)',
                                            "each user's own report, for a stream however long "
                                            '(a row passed to k calls reports k times and '
                                            'composes)')},
                                 {'planned': (1.5, 0.0, math.nan),
                                  'numbers': (1.5, 0.0, math.nan, 2.0, 160.0, math.nan),
                                  'texts': ("replace-one (local: each user's report)",
                                            'local Laplace randomiser, each user epsilon_t = '
                                            'sum_j tau_tj',
                                            'coef_ and intercept_ after every call, '
                                            "post-processing of the users' noisy reports (the "
                                            'learner sees nothing else)',
                                            'every row passed to fit and to the partial_fit '
                                            'calls since, each a user who reported once (120 '
                                            'with a finite epsilon_t, covered by their own '
                                            'epsilon_t <= epsilon; 40 chose epsilon_t=inf, no '
                                            'guarantee)',
                                            "each user's own report, for a stream however long "
                                            '(a row passed to k calls reports k times and '
                                            'composes)')},
                                 {'planned': (2.0, 0.0, math.nan),
                                  'numbers': (2.0, 0.0, math.nan, 3.0, 200.0, math.nan),
                                  'texts': ("replace-one (local: each user's report)",
                                            'local Laplace randomiser, each user epsilon_t = '
                                            'sum_j tau_tj',
                                            'coef_ and intercept_ after every call, '
                                            "post-processing of the users' noisy reports (the "
                                            'learner sees nothing else)',
                                            'every row passed to fit and to the partial_fit '
                                            'calls since, each a user who reported once (160 '
                                            'with a finite epsilon_t, covered by their own '
                                            'epsilon_t <= epsilon; 40 chose epsilon_t=inf, no '
                                            'guarantee)',
                                            "each user's own report, for a stream however long "
                                            '(a row passed to k calls reports k times and '
                                            'composes)')}]},
 'pf-all-inf-then-finite': {'rho': math.inf,
                            'steps': [{'planned': (math.inf, 0.0, math.nan),
                                       'numbers': (math.inf,
                                                   0.0,
                                                   math.nan,
                                                   1.0,
                                                   40.0,
                                                   math.nan),
                                       'texts': ("replace-one (local: each user's report)",
                                                 'none: every user chose epsilon=inf (no '
                                                 'noise)',
                                                 'coef_ and intercept_ after every call, '
                                                 "post-processing of the users' noisy reports "
                                                 '(the learner sees nothing else)',
                                                 'every row passed to fit and to the '
                                                 'partial_fit calls since, each a user who '
                                                 'reported once (0 with a finite epsilon_t, '
                                                 'covered by their own epsilon_t <= epsilon; '
                                                 '40 chose epsilon_t=inf, no guarantee)',
                                                 "each user's own report, for a stream however "
                                                 'long (a row passed to k calls reports k '
                                                 'times and composes)')},
                                      {'planned': (0.25, 0.0, math.nan),
                                       'numbers': (0.25, 0.0, math.nan, 2.0, 80.0, math.nan),
                                       'texts': ("replace-one (local: each user's report)",
                                                 'local Laplace randomiser, each user '
                                                 'epsilon_t = sum_j tau_tj',
                                                 'coef_ and intercept_ after every call, '
                                                 "post-processing of the users' noisy reports "
                                                 '(the learner sees nothing else)',
                                                 'every row passed to fit and to the '
                                                 'partial_fit calls since, each a user who '
                                                 'reported once (40 with a finite epsilon_t, '
                                                 'covered by their own epsilon_t <= epsilon; '
                                                 '40 chose epsilon_t=inf, no guarantee)',
                                                 "each user's own report, for a stream however "
                                                 'long (a row passed to k calls reports k '
                                                 'times and composes)')}]},
 'pf-zero-weight': {'rho': 'ValueError: ParameterFreeLocalDPRegressor with a zero feature '
                           'weight publishes that coordinate without noise and has no '
                           'replace-one guarantee; private selection needs one. Give every '
                           'feature a positive weight.',
                    'steps': [{'planned': (math.inf, 0.0, math.nan),
                               'numbers': (math.inf, 0.0, math.nan, 1.0, 120.0, math.nan),
                               'texts': ("replace-one (local: each user's report)",
                                         'local Laplace randomiser, each user epsilon_t = '
                                         'sum_j tau_tj; coordinates [1] are public (weight 0, '
                                         'no noise) and carry sign(residual) x_j, which '
                                         "depends on y: each user's private coordinates are "
                                         'epsilon_t-LDP given them, but there is no '
                                         'replace-one guarantee for the row',
                                         'coef_ and intercept_ after every call, '
                                         "post-processing of the users' noisy reports (the "
                                         'learner sees nothing else)',
                                         'every row passed to fit and to the partial_fit calls '
                                         'since, each a user who reported once (120 with a '
                                         'finite epsilon_t, covered by their own epsilon_t <= '
                                         'epsilon; 0 chose epsilon_t=inf, no guarantee)',
                                         "each user's own report, for a stream however long (a "
                                         'row passed to k calls reports k times and '
                                         'composes)')},
                              {'planned': (math.inf, 0.0, math.nan),
                               'numbers': (math.inf, 0.0, math.nan, 2.0, 160.0, math.nan),
                               'texts': ("replace-one (local: each user's report)",
                                         'local Laplace randomiser, each user epsilon_t = '
                                         'sum_j tau_tj; coordinates [1] are public (weight 0, '
                                         'no noise) and carry sign(residual) x_j, which '
                                         "depends on y: each user's private coordinates are "
                                         'epsilon_t-LDP given them, but there is no '
                                         'replace-one guarantee for the row',
                                         'coef_ and intercept_ after every call, '
                                         "post-processing of the users' noisy reports (the "
                                         'learner sees nothing else)',
                                         'every row passed to fit and to the partial_fit calls '
                                         'since, each a user who reported once (160 with a '
                                         'finite epsilon_t, covered by their own epsilon_t <= '
                                         'epsilon; 0 chose epsilon_t=inf, no guarantee)',
                                         "each user's own report, for a stream however long (a "
                                         'row passed to k calls reports k times and '
                                         'composes)')}]},
 'pf-sampled': {'rho': 0.5,
                 'steps': [{'planned': (1.0, 0.0, math.nan),
                            'numbers': (1.0, 0.0, math.nan, 1.0, 120.0, math.nan),
                            'texts': ("replace-one (local: each user's report)",
                                      'local sampled-coordinate randomiser: each user reports '
                                      'one coordinate drawn from the public budget split, with '
                                      'a sign randomised at its own epsilon_t',
                                      'coef_ and intercept_ after every call, post-processing '
                                      "of the users' noisy reports (the learner sees nothing "
                                      'else)',
                                      'every row passed to fit and to the partial_fit calls '
                                      'since, each a user who reported once (120 with a finite '
                                      'epsilon_t, covered by their own epsilon_t <= epsilon; 0 '
                                      'chose epsilon_t=inf, no guarantee)',
                                      "each user's own report, for a stream however long (a row "
                                      'passed to k calls reports k times and composes)')},
                           {'planned': (1.0, 0.0, math.nan),
                            'numbers': (1.0, 0.0, math.nan, 2.0, 160.0, math.nan),
                            'texts': ("replace-one (local: each user's report)",
                                      'local sampled-coordinate randomiser: each user reports '
                                      'one coordinate drawn from the public budget split, with '
                                      'a sign randomised at its own epsilon_t',
                                      'coef_ and intercept_ after every call, post-processing '
                                      "of the users' noisy reports (the learner sees nothing "
                                      'else)',
                                      'every row passed to fit and to the partial_fit calls '
                                      'since, each a user who reported once (160 with a finite '
                                      'epsilon_t, covered by their own epsilon_t <= epsilon; 0 '
                                      'chose epsilon_t=inf, no guarantee)',
                                      "each user's own report, for a stream however long (a row "
                                      'passed to k calls reports k times and composes)')}]},
 'scaler-basic': {'rho': 'ValueError: Private selection needs the guarantee of every candidate '
                         "before it sees the data, and knows it only for this library's "
                         'estimators (exact classes, not subclasses, or as the final step of a '
                         'Pipeline of public transformers); got PrivateRangeScaler. Scale X by '
                         'public constants (for example with '
                         'FunctionTransformer(functools.partial(np.multiply, 1 / bound)) in a '
                         'Pipeline).',
                  'steps': [{'planned': (1.0, 0.0, math.nan),
                             'numbers': (1.0, 0.0, math.nan, 1.0, 120.0, math.nan),
                             'texts': ('replace-one',
                                       'exponential mechanism on a public grid, 24 quantiles '
                                       'of 0.04167-DP each, basic composition',
                                       'low_ and high_ (the private per-feature quantiles) and '
                                       'what is computed from them',
                                       'the records passed to fit',
                                       'this release')}]},
 'scaler-zcdp': {'rho': 'ValueError: Private selection needs the guarantee of every candidate '
                        "before it sees the data, and knows it only for this library's "
                        'estimators (exact classes, not subclasses, or as the final step of a '
                        'Pipeline of public transformers); got PrivateRangeScaler. Scale X by '
                        'public constants (for example with '
                        'FunctionTransformer(functools.partial(np.multiply, 1 / bound)) in a '
                        'Pipeline).',
                 'steps': [{'planned': (1.0, 1e-06, math.nan),
                            'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                            'texts': ('replace-one',
                                      'exponential mechanism on a public grid, 24 quantiles of '
                                      '0.0901-DP each, zCDP composition (eps0^2/8 each)',
                                      'low_ and high_ (the private per-feature quantiles) and '
                                      'what is computed from them',
                                      'the records passed to fit',
                                      'this release')}]},
 'scaler-bounds-one-feature': {'rho': 'ValueError: Private selection needs the guarantee of '
                                      'every candidate before it sees the data, and knows it '
                                      "only for this library's estimators (exact classes, not "
                                      'subclasses, or as the final step of a Pipeline of '
                                      'public transformers); got PrivateRangeScaler. Scale X '
                                      'by public constants (for example with '
                                      'FunctionTransformer(functools.partial(np.multiply, 1 / '
                                      'bound)) in a Pipeline).',
                               'steps': [{'planned': (1.0, 0.1, math.nan),
                                          'numbers': (1.0, 0.1, math.nan, 1.0, 120.0, math.nan),
                                          'texts': ('replace-one',
                                                    'exponential mechanism on a public grid, 2 '
                                                    'quantiles of 1.036-DP each, zCDP '
                                                    'composition (eps0^2/8 each)',
                                                    'low_ and high_ (the private per-feature '
                                                    'quantiles) and what is computed from them',
                                                    'the records passed to fit',
                                                    'this release')}]},
 'scaler-inf': {'rho': 'ValueError: Private selection needs the guarantee of every candidate '
                       "before it sees the data, and knows it only for this library's "
                       'estimators (exact classes, not subclasses, or as the final step of a '
                       'Pipeline of public transformers); got PrivateRangeScaler. Scale X by '
                       'public constants (for example with '
                       'FunctionTransformer(functools.partial(np.multiply, 1 / bound)) in a '
                       'Pipeline).',
                'steps': [{'planned': (math.inf, 0.0, math.nan),
                           'numbers': (math.inf, 0.0, math.nan, 1.0, 120.0, math.nan),
                           'texts': ('replace-one',
                                     'none: epsilon=inf adds no noise (the best candidates)',
                                     'low_ and high_ (the private per-feature quantiles) and '
                                     'what is computed from them',
                                     'the records passed to fit',
                                     'this release')}]}}

# y_bound="auto": recorded from the code of the branch that added it (ybound), not from
# the pre-refactor code; the numbers follow doc/privacy.md, "y_bound='auto' for QFTL".
PINNED.update({'qftl-fit-auto-y': {'rho': 0.10050201972241131,
                                   'steps': [{'planned': (2.0, 1e-06, math.nan),
                                              'numbers': (2.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                              'texts': ('replace-one',
                                                        'AdaSSP: Gaussian release of the packed (V, u) '
                                                        '(joint sensitivity, mu*sqrt(0.95)) and of '
                                                        'lambda_min(V) (sensitivity R^2, mu*sqrt(0.05)), '
                                                        'composing to mu* at (1.8, 1e-06)-DP, after a 0.2-DP '
                                                        "private quantile of |y| (y_bound='auto', "
                                                        'exponential mechanism); basic composition',
                                                        'coef_ and intercept_, computed from one release of '
                                                        'the noisy sufficient statistics (V, u) and y_bound_ '
                                                        '(the private quantile of |y|)',
                                                        'the records passed to fit',
                                                        'this release')}]},
               'qftl-fit-auto-both-alpha': {'rho': 0.02801448191263024,
                                            'steps': [{'planned': (1.0, 1e-06, math.nan),
                                                       'numbers': (1.0,
                                                                   1e-06,
                                                                   math.nan,
                                                                   1.0,
                                                                   120.0,
                                                                   math.nan),
                                                       'texts': ('replace-one',
                                                                 'analytic Gaussian on the packed (V, u), '
                                                                 'joint sensitivity at (0.8, 1e-06)-DP, '
                                                                 'after a 0.1-DP private quantile of the row '
                                                                 "norms (data_norm='auto', exponential "
                                                                 'mechanism) and a 0.1-DP private quantile '
                                                                 "of |y| (y_bound='auto', exponential "
                                                                 'mechanism); basic composition',
                                                                 'coef_ and intercept_, computed from one '
                                                                 'release of the noisy sufficient statistics '
                                                                 '(V, u), data_norm_ (the private quantile '
                                                                 'of the row norms) and y_bound_ (the '
                                                                 'private quantile of |y|)',
                                                                 'the records passed to fit',
                                                                 'this release')}]}})


# data_norm="auto" on PrivateIGDClassifier: recorded from the code of the branch that added
# it (autonorm); the numbers follow doc/privacy.md, "data_norm='auto' for every estimator".
PINNED.update({'igd-fit-auto-norm': {'rho': 0.02801448191263024,
                       'steps': [{'planned': (1.0, 1e-06, math.nan),
                                  'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                  'texts': ('replace-one',
                                            'analytic Gaussian on the uncorrupted iterate, '
                                            'GDP-composed over releases at (0.9, 1e-06)-DP, '
                                            'after a 0.1-DP private quantile of the row norms '
                                            "(data_norm='auto', exponential mechanism); basic "
                                            'composition',
                                            'coef_ and intercept_ of the fitted model (one '
                                            'release) and data_norm_ (the private quantile of '
                                            'the row norms)',
                                            'the records passed to fit',
                                            'this release')}]},
 'igd-op-auto-norm': {'rho': 'ValueError: '
                             "PrivateIGDClassifier(solver='objective_perturbation') has a "
                             'custom privacy profile that is not Gaussian DP and not accounted '
                             'in Renyi DP here; private selection cannot bound it. Search '
                             "solver='igd' or 'mirror_descent' instead.",
                      'steps': [{'planned': (1.0, 1e-06, math.nan),
                                 'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'objective perturbation: N(0, 11.24^2) linear term, '
                                           'regularisation 3.735 (sum form), Jacobian term '
                                           '0.06479, gradient sensitivity 2 over 1 problem(s), '
                                           'plus Gaussian output noise at mu=0.01779 for the '
                                           'certified solver gap; exact profile of the '
                                           'privacy-loss bound plus the charge for the '
                                           'noise-norm bound (doc/privacy.md, sections 7.3 and '
                                           '7.6) at (0.9, 1e-06)-DP, after a 0.1-DP private '
                                           "quantile of the row norms (data_norm='auto', "
                                           'exponential mechanism); basic composition',
                                           'coef_ and intercept_ of the fitted model (one '
                                           'release) and data_norm_ (the private quantile of '
                                           'the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'igd-ftrl-auto-norm': {'rho': 0.02801448191263024,
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 11.66 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 11.66 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-iterate-auto-norm': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                      'texts': ('replace-one',
                                                'analytic Gaussian on the uncorrupted iterate, '
                                                'GDP-composed over releases at (0.9, '
                                                '1e-06)-DP, after a 0.1-DP private quantile of '
                                                "the first batch's row norms "
                                                "(data_norm='auto'); basic composition",
                                                'coef_ and intercept_ after every partial_fit '
                                                'call and data_norm_ (the private quantile of '
                                                'the row norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 samples')},
                                     {'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                      'texts': ('replace-one',
                                                'analytic Gaussian on the uncorrupted iterate, '
                                                'GDP-composed over releases at (0.9, '
                                                '1e-06)-DP, after a 0.1-DP private quantile of '
                                                "the first batch's row norms "
                                                "(data_norm='auto'); basic composition",
                                                'coef_ and intercept_ after every partial_fit '
                                                'call and data_norm_ (the private quantile of '
                                                'the row norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 '
                                                'samples')}]},
 'igd-fit-auto-norm-then-ftrl': {'rho': 0.02801448191263024,
                                 'steps': [{'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        120.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      'analytic Gaussian on the uncorrupted '
                                                      'iterate, GDP-composed over releases at '
                                                      '(0.9, 1e-06)-DP, after a 0.1-DP private '
                                                      'quantile of the row norms '
                                                      "(data_norm='auto', exponential "
                                                      'mechanism); basic composition',
                                                      'coef_ and intercept_ of the fitted '
                                                      'model (one release) and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to fit',
                                                      'this release')},
                                           {'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        40.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      "DP-FTRL on the stream's gradient sums, "
                                                      'one step per partial_fit call (at most '
                                                      '5 calls): BLT matrix factorization (4 '
                                                      'buffers) over at most 5 steps (one '
                                                      'batch per step), column norm 1.25, '
                                                      'noise 11.66 per step; the models are '
                                                      'post-processing at (0.9, 1e-06)-DP; '
                                                      'data_norm_ from the fit this stream '
                                                      'continues (released by it), so the '
                                                      "quantiles' share of epsilon is not "
                                                      'spent again',
                                                      'coef_ and intercept_ after every '
                                                      'partial_fit call and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to partial_fit since '
                                                      'the stream started (records of an '
                                                      'earlier fit are covered by its own '
                                                      'release)',
                                                      'the stream up to its horizon of 200 '
                                                      'samples')}]}})


class _Literal(float):
    """A float that prints as source (``math.inf``, ``math.nan``)."""

    def __repr__(self):
        if math.isnan(self):
            return "math.nan"
        if math.isinf(self):
            return "math.inf" if self > 0 else "-math.inf"
        return float.__repr__(self)


def _as_source(value):
    if isinstance(value, dict):
        return {k: _as_source(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_as_source(v) for v in value)
    if isinstance(value, float):
        return _Literal(value)
    return value


# Re-pinned deliberately (branch ``calstream``): a QFTL stream with a known horizon of at most
# 128 calls now resolves ``prefix_sums="auto"`` to the final-weighted dense factorization
# (doc/privacy.md, "Final-weighted dense factorization for short streams"). Planned costs,
# rho, epsilon, delta, mu, n_releases and n_records are unchanged; what changed is the
# mechanism text and ``spent_mu`` after a call short of the horizon (the first rows of the
# dense C have smaller column norms than BLT's).
PINNED.update({'qftl-stream-auto': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.1735905672195979),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): dense '
                                           'lower-triangular factorization over at most 5 '
                                           'steps (one batch per step), optimal for the prefix '
                                           'sums with the last weighted as all earlier ones '
                                           'together, column norm 1, noise 14.95 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.20074510408541132),
                                 'texts': ('replace-one',
                                           'Gaussian continual release of (V, u): dense '
                                           'lower-triangular factorization over at most 5 '
                                           'steps (one batch per step), optimal for the prefix '
                                           'sums with the last weighted as all earlier ones '
                                           'together, column norm 1, noise 14.95 per step',
                                           'coef_ and intercept_ after every partial_fit call, '
                                           'computed from the noisy prefix sums of (V, u) '
                                           'released by the stream mechanism',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-auto-norm': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): dense '
                                                'lower-triangular factorization over at most 5 '
                                                'steps (one batch per step), optimal for the '
                                                'prefix sums with the last weighted as all '
                                                'earlier ones together, column norm 1, noise '
                                                '9.893 per step at (0.9, 1e-06)-DP, after a '
                                                "0.1-DP private quantile of the first batch's "
                                                "row norms (data_norm='auto'); basic "
                                                'composition',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 samples')},
                                     {'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): dense '
                                                'lower-triangular factorization over at most 5 '
                                                'steps (one batch per step), optimal for the '
                                                'prefix sums with the last weighted as all '
                                                'earlier ones together, column norm 1, noise '
                                                '9.893 per step at (0.9, 1e-06)-DP, after a '
                                                "0.1-DP private quantile of the first batch's "
                                                "row norms (data_norm='auto'); basic "
                                                'composition',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 '
                                                'samples')}]},
 'qftl-fit-then-stream': {'rho': 0.02801448191263024,
                          'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 120.0,
                                                 0.2367043806634353),
                                     'texts': ('replace-one',
                                               'AdaSSP: Gaussian release of the packed (V, u) '
                                               '(joint sensitivity, mu*sqrt(0.95)) and of '
                                               'lambda_min(V) (sensitivity R^2, mu*sqrt(0.05)), '
                                               'composing to mu*',
                                               'coef_ and intercept_, computed from one '
                                               'release of the noisy sufficient statistics (V, '
                                               'u)',
                                               'the records passed to fit',
                                               'this release')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 40.0,
                                                 0.1735905672195979),
                                     'texts': ('replace-one',
                                               'Gaussian continual release of (V, u): dense '
                                               'lower-triangular factorization over at most 5 '
                                               'steps (one batch per step), optimal for the '
                                               'prefix sums with the last weighted as all '
                                               'earlier ones together, column norm 1, noise '
                                               '14.95 per step',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call, computed from the noisy prefix sums of '
                                               '(V, u) released by the stream mechanism',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 samples')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 2.0,
                                                 80.0,
                                                 0.20074510408541132),
                                     'texts': ('replace-one',
                                               'Gaussian continual release of (V, u): dense '
                                               'lower-triangular factorization over at most 5 '
                                               'steps (one batch per step), optimal for the '
                                               'prefix sums with the last weighted as all '
                                               'earlier ones together, column norm 1, noise '
                                               '14.95 per step',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call, computed from the noisy prefix sums of '
                                               '(V, u) released by the stream mechanism',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 '
                                               'samples')}]}})


# data_norm='auto' and y_bound='auto' for mirror descent: recorded from the branch that
# added them (`observe` on these cases only).
PINNED.update({'md-fit-auto-both': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=1.366e-06) on the mean '
                                           'gradient (L2 sensitivity 6.959e-08) at each of '
                                           'T=20 mirror-descent steps, GDP-composed to '
                                           'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                           'private quantile of the row norms '
                                           "(data_norm='auto', exponential mechanism) and a "
                                           "0.12-DP private quantile of |y| (y_bound='auto', "
                                           'exponential mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_, '
                                           'data_norm_ (the private quantile of the row norms) '
                                           'and y_bound_ (the private quantile of |y|)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-fit-auto-norm': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=0.5864) on the mean gradient '
                                           '(L2 sensitivity 0.03333) at each of T=20 '
                                           'mirror-descent steps, GDP-composed to mu=0.2542 at '
                                           '(1.08, 1e-06)-DP, after a 0.12-DP private quantile '
                                           "of the row norms (data_norm='auto', exponential "
                                           'mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_ and '
                                           'data_norm_ (the private quantile of the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-fit-auto-inf': {'rho': math.inf,
                     'steps': [{'planned': (math.inf, 1e-06, math.nan),
                                'numbers': (math.inf, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                'texts': ('replace-one',
                                          'none: epsilon=inf runs 20 noiseless mirror-descent '
                                          'steps',
                                          'coef_ and intercept_ after every call (the average '
                                          'mirror-descent iterate, a function of the noisy '
                                          'gradients), and the step count max_iter_, '
                                          'data_norm_ (the private quantile of the row norms) '
                                          'and y_bound_ (the private quantile of |y|)',
                                          'the records passed to fit',
                                          'this release')}]},
 'md-op-auto-both': {'rho': 'ValueError: '
                            "PrivateMirrorDescentRegressor(solver='objective_perturbation') "
                            'has a custom privacy profile that is not Gaussian DP and not '
                            'accounted in Renyi DP here; private selection cannot bound it. '
                            "Search solver='igd' or 'mirror_descent' instead.",
                     'steps': [{'planned': (1.0, 1e-06, math.nan),
                                'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                'texts': ('replace-one',
                                          'objective perturbation: N(0, 9.406e-05^2) linear '
                                          'term, regularisation 2.033 (sum form), Jacobian '
                                          'term 0.4, gradient sensitivity 8.351e-06 over 1 '
                                          'problem(s), plus Gaussian output noise at '
                                          'mu=0.008878 for the certified solver gap; exact '
                                          'profile of the privacy-loss bound plus the charge '
                                          'for the noise-norm bound (doc/privacy.md, sections '
                                          '7.3 and 7.6) at (0.8, 1e-06)-DP, after a 0.1-DP '
                                          'private quantile of the row norms '
                                          "(data_norm='auto', exponential mechanism) and a "
                                          "0.1-DP private quantile of |y| (y_bound='auto', "
                                          'exponential mechanism); basic composition',
                                          'coef_ and intercept_ after every call (the '
                                          "perturbed objective's minimiser projected on the "
                                          'public set), data_norm_ (the private quantile of '
                                          'the row norms) and y_bound_ (the private quantile '
                                          'of |y|)',
                                          'the records passed to fit',
                                          'this release')}]},
 'md-stream-auto-both': {'rho': 0.039272483805919425,
                         'steps': [{'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=8.166e-06) on the mean '
                                              'gradient (L2 sensitivity 4.161e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')},
                                   {'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=8.166e-06) on the mean '
                                              'gradient (L2 sensitivity 4.161e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')}]},
 'md-fit-auto-then-stream': {'rho': 0.039272483805919425,
                             'steps': [{'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=1.366e-06) on the '
                                                  'mean gradient (L2 sensitivity 6.959e-08) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP, after a 0.12-DP private quantile '
                                                  "of the row norms (data_norm='auto', "
                                                  'exponential mechanism) and a 0.12-DP '
                                                  "private quantile of |y| (y_bound='auto', "
                                                  'exponential mechanism); basic composition',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records passed to fit',
                                                  'this release')},
                                       {'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 2.0, 160.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=4.097e-06) on the '
                                                  'mean gradient (L2 sensitivity 2.088e-07) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP; data_norm_ and y_bound_ from the '
                                                  'fit this stream continues (released by it), '
                                                  "so the quantiles' share of epsilon is not "
                                                  'spent again',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records of fit (if it came first) and '
                                                  'of every partial_fit call since, each '
                                                  'covered by (epsilon, delta) through the one '
                                                  'call (batch) that contained it; batches are '
                                                  'disjoint, so the stream is (epsilon, '
                                                  'delta)-DP per record by parallel '
                                                  'composition (a record passed to k calls '
                                                  'composes k times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')}]}})


# PrivateFrankWolfeLasso(feature_bound="auto", y_bound="auto") (branch ``s25h4``): recorded with
# ``observe`` on these five new cases only; no earlier row changed.
PINNED.update({'fw-exponential-auto-both': {'rho': 0.039272483805919425,
                              'steps': [{'planned': (1.2, 1e-06, math.nan),
                                         'numbers': (1.2,
                                                     1e-06,
                                                     math.nan,
                                                     1.0,
                                                     120.0,
                                                     math.nan),
                                         'texts': ('replace-one',
                                                   'exponential mechanism (Gumbel-max) at each '
                                                   'of 15 Frank-Wolfe steps, each '
                                                   '0.1097-bounded range, hence 0.001505-zCDP; '
                                                   '0.02257-zCDP in total, converted exactly '
                                                   'to (epsilon, delta) at (0.96, 1e-06)-DP, '
                                                   'after a 0.12-DP private quantile of the '
                                                   "row L-inf norms (feature_bound='auto', "
                                                   'exponential mechanism) and a 0.12-DP '
                                                   "private quantile of |y| (y_bound='auto', "
                                                   'exponential mechanism); basic composition',
                                                   'coef_ and intercept_ after every call (the '
                                                   'last Frank-Wolfe iterate, a function of '
                                                   'the selected vertices), and the step count '
                                                   'max_iter_, feature_bound_ (the private '
                                                   'quantile of the row L-inf norms) and '
                                                   'y_bound_ (the private quantile of |y|)',
                                                   'the records passed to fit',
                                                   'this release')}]},
 'fw-gaussian-auto-norm': {'rho': 0.039272483805919425,
                           'steps': [{'planned': (1.2, 1e-06, math.nan),
                                      'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian noise on the gradient at each of 15 '
                                                'Frank-Wolfe steps (analytic Gaussian, '
                                                'sigma=1.152e-06), GDP-composed to mu=0.2542 '
                                                'at (1.08, 1e-06)-DP, after a 0.12-DP private '
                                                'quantile of the row L-inf norms '
                                                "(feature_bound='auto', exponential "
                                                'mechanism); basic composition',
                                                'coef_ and intercept_ after every call (the '
                                                'last Frank-Wolfe iterate, a function of the '
                                                'selected vertices), and the step count '
                                                'max_iter_ and feature_bound_ (the private '
                                                'quantile of the row L-inf norms)',
                                                'the records passed to fit',
                                                'this release')}]},
 'fw-exponential-auto-inf': {'rho': math.inf,
                             'steps': [{'planned': (math.inf, 1e-06, math.nan),
                                        'numbers': (math.inf,
                                                    1e-06,
                                                    math.nan,
                                                    1.0,
                                                    120.0,
                                                    math.nan),
                                        'texts': ('replace-one',
                                                  'none: epsilon=inf selects the best vertex '
                                                  'exactly (15 steps)',
                                                  'coef_ and intercept_ after every call (the '
                                                  'last Frank-Wolfe iterate, a function of the '
                                                  'selected vertices), and the step count '
                                                  'max_iter_, feature_bound_ (the private '
                                                  'quantile of the row L-inf norms) and '
                                                  'y_bound_ (the private quantile of |y|)',
                                                  'the records passed to fit',
                                                  'this release')}]},
 'fw-stream-auto-both': {'rho': 0.04553490995589513,
                         'steps': [{'planned': (1.3, 1e-06, math.nan),
                                    'numbers': (1.3, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                    'texts': ('replace-one',
                                              'exponential mechanism (Gumbel-max) at each of '
                                              '15 Frank-Wolfe steps, each 0.1182-bounded '
                                              'range, hence 0.001747-zCDP; 0.02621-zCDP in '
                                              'total, converted exactly to (epsilon, delta) at '
                                              '(1.04, 1e-06)-DP, after a 0.13-DP private '
                                              "quantile of the first batch's row L-inf norms "
                                              "(feature_bound='auto') and a 0.13-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the last '
                                              'Frank-Wolfe iterate, a function of the selected '
                                              'vertices), and the step count max_iter_, '
                                              'feature_bound_ (the private quantile of the row '
                                              'L-inf norms) and y_bound_ (the private quantile '
                                              'of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')},
                                   {'planned': (1.3, 1e-06, math.nan),
                                    'numbers': (1.3, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                    'texts': ('replace-one',
                                              'exponential mechanism (Gumbel-max) at each of '
                                              '15 Frank-Wolfe steps, each 0.1182-bounded '
                                              'range, hence 0.001747-zCDP; 0.02621-zCDP in '
                                              'total, converted exactly to (epsilon, delta) at '
                                              '(1.04, 1e-06)-DP, after a 0.13-DP private '
                                              "quantile of the first batch's row L-inf norms "
                                              "(feature_bound='auto') and a 0.13-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the last '
                                              'Frank-Wolfe iterate, a function of the selected '
                                              'vertices), and the step count max_iter_, '
                                              'feature_bound_ (the private quantile of the row '
                                              'L-inf norms) and y_bound_ (the private quantile '
                                              'of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')}]},
 'fw-fit-auto-then-stream': {'rho': 0.04553490995589513,
                             'steps': [{'planned': (1.3, 1e-06, math.nan),
                                        'numbers': (1.3, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                        'texts': ('replace-one',
                                                  'exponential mechanism (Gumbel-max) at each '
                                                  'of 15 Frank-Wolfe steps, each '
                                                  '0.1319-bounded range, hence 0.002176-zCDP; '
                                                  '0.03264-zCDP in total, converted exactly to '
                                                  '(epsilon, delta) at (1.17, 1e-06)-DP, after '
                                                  'a 0.13-DP private quantile of the row L-inf '
                                                  "norms (feature_bound='auto', exponential "
                                                  'mechanism); basic composition',
                                                  'coef_ and intercept_ after every call (the '
                                                  'last Frank-Wolfe iterate, a function of the '
                                                  'selected vertices), and the step count '
                                                  'max_iter_ and feature_bound_ (the private '
                                                  'quantile of the row L-inf norms)',
                                                  'the records passed to fit',
                                                  'this release')},
                                       {'planned': (1.3, 1e-06, math.nan),
                                        'numbers': (1.3, 1e-06, math.nan, 2.0, 160.0, math.nan),
                                        'texts': ('replace-one',
                                                  'exponential mechanism (Gumbel-max) at each '
                                                  'of 15 Frank-Wolfe steps, each '
                                                  '0.1319-bounded range, hence 0.002176-zCDP; '
                                                  '0.03264-zCDP in total, converted exactly to '
                                                  '(epsilon, delta) at (1.17, 1e-06)-DP; '
                                                  'feature_bound_ from the fit this stream '
                                                  'continues (released by it), so the '
                                                  "quantiles' share of epsilon is not spent "
                                                  'again',
                                                  'coef_ and intercept_ after every call (the '
                                                  'last Frank-Wolfe iterate, a function of the '
                                                  'selected vertices), and the step count '
                                                  'max_iter_ and feature_bound_ (the private '
                                                  'quantile of the row L-inf norms)',
                                                  'the records of fit (if it came first) and '
                                                  'of every partial_fit call since, each '
                                                  'covered by (epsilon, delta) through the one '
                                                  'call (batch) that contained it; batches are '
                                                  'disjoint, so the stream is (epsilon, '
                                                  'delta)-DP per record by parallel '
                                                  'composition (a record passed to k calls '
                                                  'composes k times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')}]}})

# radius="auto" became the default of Frank-Wolfe and mirror descent (doc/privacy.md section 41):
# these rows were re-recorded deliberately. Only their mechanism texts changed (the noise
# scale and sensitivity printed there grow with the radius, 1 before, now c * y_bound / B);
# their numbers (epsilon, delta, mu, rho, planned cost) are those of the rows above.
# Re-recorded again, texts only, when c became a function of the noise ratio (section
# "radius='auto' that tracks the noise": c = c_ref (nu / nu_ref)^(-1/3)).
PINNED.update({'fw-gaussian': {'rho': 0.02303632544981091,
                 'steps': [{'planned': (0.9, 1e-06, 0.21464540735739449),
                            'numbers': (0.9,
                                        1e-06,
                                        0.21464540735739449,
                                        1.0,
                                        120.0,
                                        0.21464540735739449),
                            'texts': ('replace-one',
                                      'Gaussian noise on the gradient at each of 15 '
                                      'Frank-Wolfe steps (analytic Gaussian, sigma=0.9022), '
                                      'GDP-composed to mu=0.2146',
                                      'coef_ and intercept_ after every call (the last '
                                      'Frank-Wolfe iterate, a function of the selected '
                                      'vertices), and the step count max_iter_',
                                      'the records passed to fit',
                                      'this release')}]},
 'fw-gaussian-stream': {'rho': 0.04553490995589513,
                        'steps': [{'planned': (1.3, 1e-06, 0.3017777657677753),
                                   'numbers': (1.3,
                                               1e-06,
                                               0.30177776576777526,
                                               1.0,
                                               40.0,
                                               0.30177776576777526),
                                   'texts': ('replace-one',
                                             'Gaussian noise on the gradient at each of 15 '
                                             'Frank-Wolfe steps (analytic Gaussian, '
                                             'sigma=1.925), GDP-composed to mu=0.3018',
                                             'coef_ and intercept_ after every call (the last '
                                             'Frank-Wolfe iterate, a function of the selected '
                                             'vertices), and the step count max_iter_',
                                             'the records of fit (if it came first) and of '
                                             'every partial_fit call since, each covered by '
                                             '(epsilon, delta) through the one call (batch) '
                                             'that contained it; batches are disjoint, so the '
                                             'stream is (epsilon, delta)-DP per record by '
                                             'parallel composition (a record passed to k calls '
                                             'composes k times)',
                                             'each batch, for a stream however long (parallel '
                                             'composition)')},
                                  {'planned': (1.3, 1e-06, 0.3017777657677753),
                                   'numbers': (1.3,
                                               1e-06,
                                               0.30177776576777526,
                                               2.0,
                                               80.0,
                                               0.30177776576777526),
                                   'texts': ('replace-one',
                                             'Gaussian noise on the gradient at each of 15 '
                                             'Frank-Wolfe steps (analytic Gaussian, '
                                             'sigma=1.925), GDP-composed to mu=0.3018',
                                             'coef_ and intercept_ after every call (the last '
                                             'Frank-Wolfe iterate, a function of the selected '
                                             'vertices), and the step count max_iter_',
                                             'the records of fit (if it came first) and of '
                                             'every partial_fit call since, each covered by '
                                             '(epsilon, delta) through the one call (batch) '
                                             'that contained it; batches are disjoint, so the '
                                             'stream is (epsilon, delta)-DP per record by '
                                             'parallel composition (a record passed to k calls '
                                             'composes k times)',
                                             'each batch, for a stream however long (parallel '
                                             'composition)')}]},
 'fw-gaussian-auto-norm': {'rho': 0.039272483805919425,
                           'steps': [{'planned': (1.2, 1e-06, math.nan),
                                      'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian noise on the gradient at each of 15 '
                                                'Frank-Wolfe steps (analytic Gaussian, '
                                                'sigma=1.728e-06), GDP-composed to mu=0.2542 '
                                                'at (1.08, 1e-06)-DP, after a 0.12-DP private '
                                                'quantile of the row L-inf norms '
                                                "(feature_bound='auto', exponential "
                                                'mechanism); basic composition',
                                                'coef_ and intercept_ after every call (the '
                                                'last Frank-Wolfe iterate, a function of the '
                                                'selected vertices), and the step count '
                                                'max_iter_ and feature_bound_ (the private '
                                                'quantile of the row L-inf norms)',
                                                'the records passed to fit',
                                                'this release')}]},
 'md-fit': {'rho': 0.039272483805919425,
            'steps': [{'planned': (1.2, 1e-06, 0.28025875117797633),
                       'numbers': (1.2,
                                   1e-06,
                                   0.28025875117797633,
                                   1.0,
                                   120.0,
                                   0.28025875117797633),
                       'texts': ('replace-one',
                                 'Gaussian noise (sigma=1.053) on the mean gradient (L2 '
                                 'sensitivity 0.06597) at each of T=20 mirror-descent steps, '
                                 'GDP-composed to mu=0.2803',
                                 'coef_ and intercept_ after every call (the average '
                                 'mirror-descent iterate, a function of the noisy gradients), '
                                 'and the step count max_iter_',
                                 'the records passed to fit',
                                 'this release')}]},
 'md-stream': {'rho': 0.039272483805919425,
               'steps': [{'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      1.0,
                                      120.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=1.053) on the mean gradient (L2 '
                                    'sensitivity 0.06597) at each of T=20 mirror-descent '
                                    'steps, GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records passed to fit',
                                    'this release')},
                         {'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      2.0,
                                      160.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=3.158) on the mean gradient (L2 '
                                    'sensitivity 0.1979) at each of T=20 mirror-descent steps, '
                                    'GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records of fit (if it came first) and of every '
                                    'partial_fit call since, each covered by (epsilon, delta) '
                                    'through the one call (batch) that contained it; batches '
                                    'are disjoint, so the stream is (epsilon, delta)-DP per '
                                    'record by parallel composition (a record passed to k '
                                    'calls composes k times)',
                                    'each batch, for a stream however long (parallel '
                                    'composition)')},
                         {'planned': (1.2, 1e-06, 0.28025875117797633),
                          'numbers': (1.2,
                                      1e-06,
                                      0.28025875117797633,
                                      3.0,
                                      200.0,
                                      0.28025875117797633),
                          'texts': ('replace-one',
                                    'Gaussian noise (sigma=3.158) on the mean gradient (L2 '
                                    'sensitivity 0.1979) at each of T=20 mirror-descent steps, '
                                    'GDP-composed to mu=0.2803',
                                    'coef_ and intercept_ after every call (the average '
                                    'mirror-descent iterate, a function of the noisy '
                                    'gradients), and the step count max_iter_',
                                    'the records of fit (if it came first) and of every '
                                    'partial_fit call since, each covered by (epsilon, delta) '
                                    'through the one call (batch) that contained it; batches '
                                    'are disjoint, so the stream is (epsilon, delta)-DP per '
                                    'record by parallel composition (a record passed to k '
                                    'calls composes k times)',
                                    'each batch, for a stream however long (parallel '
                                    'composition)')}]},
 'md-op': {'rho': "ValueError: PrivateMirrorDescentRegressor(solver='objective_perturbation') "
                  'has a custom privacy profile that is not Gaussian DP and not accounted in '
                  "Renyi DP here; private selection cannot bound it. Search solver='igd' or "
                  "'mirror_descent' instead.",
           'steps': [{'planned': (1.0, 1e-06, math.nan),
                      'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                      'texts': ('replace-one',
                                'objective perturbation: N(0, 37.31^2) linear term, '
                                'regularisation 210.3 (sum form), Jacobian term 0.009466, '
                                'gradient sensitivity 7.793 over 1 problem(s), plus Gaussian '
                                'output noise at mu=0.02088 for the certified solver gap; '
                                'exact profile of the privacy-loss bound plus the charge for '
                                'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                'coef_ and intercept_ after every call (the perturbed '
                                "objective's minimiser projected on the public set)",
                                'the records passed to fit',
                                'this release')}]},
 'md-op-stream': {'rho': 'ValueError: '
                         "PrivateMirrorDescentRegressor(solver='objective_perturbation') has a "
                         'custom privacy profile that is not Gaussian DP and not accounted in '
                         'Renyi DP here; private selection cannot bound it. Search '
                         "solver='igd' or 'mirror_descent' instead.",
                  'steps': [{'planned': (1.0, 1e-06, math.nan),
                             'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                             'texts': ('replace-one',
                                       'objective perturbation: N(0, 65.1^2) linear term, '
                                       'regularisation 3.083 (sum form), Jacobian term 0.5, '
                                       'gradient sensitivity 7.138 over 1 problem(s), plus '
                                       'Gaussian output noise at mu=0.01096 for the certified '
                                       'solver gap; exact profile of the privacy-loss bound '
                                       'plus the charge for the noise-norm bound '
                                       '(doc/privacy.md, sections 7.3 and 7.6)',
                                       'coef_ and intercept_ after every call (the perturbed '
                                       "objective's minimiser projected on the public set)",
                                       'the records of fit (if it came first) and of every '
                                       'partial_fit call since, each covered by (epsilon, '
                                       'delta) through the one call (batch) that contained it; '
                                       'batches are disjoint, so the stream is (epsilon, '
                                       'delta)-DP per record by parallel composition (a record '
                                       'passed to k calls composes k times)',
                                       'each batch, for a stream however long (parallel '
                                       'composition)')},
                            {'planned': (1.0, 1e-06, math.nan),
                             'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                             'texts': ('replace-one',
                                       'objective perturbation: N(0, 65.1^2) linear term, '
                                       'regularisation 3.083 (sum form), Jacobian term 0.5, '
                                       'gradient sensitivity 7.138 over 1 problem(s), plus '
                                       'Gaussian output noise at mu=0.01096 for the certified '
                                       'solver gap; exact profile of the privacy-loss bound '
                                       'plus the charge for the noise-norm bound '
                                       '(doc/privacy.md, sections 7.3 and 7.6)',
                                       'coef_ and intercept_ after every call (the perturbed '
                                       "objective's minimiser projected on the public set)",
                                       'the records of fit (if it came first) and of every '
                                       'partial_fit call since, each covered by (epsilon, '
                                       'delta) through the one call (batch) that contained it; '
                                       'batches are disjoint, so the stream is (epsilon, '
                                       'delta)-DP per record by parallel composition (a record '
                                       'passed to k calls composes k times)',
                                       'each batch, for a stream however long (parallel '
                                       'composition)')}]},
 'md-fit-auto-both': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=8.564e-07) on the mean '
                                           'gradient (L2 sensitivity 4.364e-08) at each of '
                                           'T=20 mirror-descent steps, GDP-composed to '
                                           'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                           'private quantile of the row norms '
                                           "(data_norm='auto', exponential mechanism) and a "
                                           "0.12-DP private quantile of |y| (y_bound='auto', "
                                           'exponential mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_, '
                                           'data_norm_ (the private quantile of the row norms) '
                                           'and y_bound_ (the private quantile of |y|)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-fit-auto-norm': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=0.8131) on the mean gradient '
                                           '(L2 sensitivity 0.04622) at each of T=20 '
                                           'mirror-descent steps, GDP-composed to mu=0.2542 at '
                                           '(1.08, 1e-06)-DP, after a 0.12-DP private quantile '
                                           "of the row norms (data_norm='auto', exponential "
                                           'mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_ and '
                                           'data_norm_ (the private quantile of the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-op-auto-both': {'rho': 'ValueError: '
                            "PrivateMirrorDescentRegressor(solver='objective_perturbation') "
                            'has a custom privacy profile that is not Gaussian DP and not '
                            'accounted in Renyi DP here; private selection cannot bound it. '
                            "Search solver='igd' or 'mirror_descent' instead.",
                     'steps': [{'planned': (1.0, 1e-06, math.nan),
                                'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                'texts': ('replace-one',
                                          'objective perturbation: N(0, 5.811e-05^2) linear '
                                          'term, regularisation 2.033 (sum form), Jacobian '
                                          'term 0.4, gradient sensitivity 5.159e-06 over 1 '
                                          'problem(s), plus Gaussian output noise at '
                                          'mu=0.008878 for the certified solver gap; exact '
                                          'profile of the privacy-loss bound plus the charge '
                                          'for the noise-norm bound (doc/privacy.md, sections '
                                          '7.3 and 7.6) at (0.8, 1e-06)-DP, after a 0.1-DP '
                                          'private quantile of the row norms '
                                          "(data_norm='auto', exponential mechanism) and a "
                                          "0.1-DP private quantile of |y| (y_bound='auto', "
                                          'exponential mechanism); basic composition',
                                          'coef_ and intercept_ after every call (the '
                                          "perturbed objective's minimiser projected on the "
                                          'public set), data_norm_ (the private quantile of '
                                          'the row norms) and y_bound_ (the private quantile '
                                          'of |y|)',
                                          'the records passed to fit',
                                          'this release')}]},
 'md-stream-auto-both': {'rho': 0.039272483805919425,
                         'steps': [{'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=7.922e-06) on the mean '
                                              'gradient (L2 sensitivity 4.037e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')},
                                   {'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=7.922e-06) on the mean '
                                              'gradient (L2 sensitivity 4.037e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')}]},
 'md-fit-auto-then-stream': {'rho': 0.039272483805919425,
                             'steps': [{'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=8.564e-07) on the '
                                                  'mean gradient (L2 sensitivity 4.364e-08) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP, after a 0.12-DP private quantile '
                                                  "of the row norms (data_norm='auto', "
                                                  'exponential mechanism) and a 0.12-DP '
                                                  "private quantile of |y| (y_bound='auto', "
                                                  'exponential mechanism); basic composition',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records passed to fit',
                                                  'this release')},
                                       {'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 2.0, 160.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=2.569e-06) on the '
                                                  'mean gradient (L2 sensitivity 1.309e-07) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP; data_norm_ and y_bound_ from the '
                                                  'fit this stream continues (released by it), '
                                                  "so the quantiles' share of epsilon is not "
                                                  'spent again',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records of fit (if it came first) and '
                                                  'of every partial_fit call since, each '
                                                  'covered by (epsilon, delta) through the one '
                                                  'call (batch) that contained it; batches are '
                                                  'disjoint, so the stream is (epsilon, '
                                                  'delta)-DP per record by parallel '
                                                  'composition (a record passed to k calls '
                                                  'composes k times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')}]}})



# IGD objective perturbation's alpha="auto" became half the worst-case balance at the noise of
# its own plan (doc/privacy.md section "IGD's objective perturbation: alpha at its own noise"):
# these three rows were re-recorded deliberately. Only their texts changed (the noise,
# regularisation and Jacobian term printed in the mechanism, and the stream's noise after the fit
# at the new alpha_); their numbers (epsilon, delta, mu, rho, planned cost) are those above.
PINNED.update({'igd-op': {'rho': "ValueError: PrivateIGDClassifier(solver='objective_perturbation') has a "
                   'custom privacy profile that is not Gaussian DP and not accounted in Renyi '
                   "DP here; private selection cannot bound it. Search solver='igd' or "
                   "'mirror_descent' instead.",
            'steps': [{'planned': (1.0, 1e-06, math.nan),
                       'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                       'texts': ('replace-one',
                                 'objective perturbation: N(0, 16.45^2) linear term, '
                                 'regularisation 2.327 (sum form), Jacobian term 0.1946, '
                                 'gradient sensitivity 2.828 over 1 problem(s), plus Gaussian '
                                 'output noise at mu=0.01719 for the certified solver gap; '
                                 'exact profile of the privacy-loss bound plus the charge for '
                                 'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                 'coef_ and intercept_ of the fitted model (one release)',
                                 'the records passed to fit',
                                 'this release')}]},
 'igd-op-then-stream': {'rho': 'ValueError: '
                               "PrivateIGDClassifier(solver='objective_perturbation') has a "
                               'custom privacy profile that is not Gaussian DP and not '
                               'accounted in Renyi DP here; private selection cannot bound it. '
                               "Search solver='igd' or 'mirror_descent' instead.",
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'objective perturbation: N(0, 16.45^2) linear '
                                             'term, regularisation 2.327 (sum form), Jacobian '
                                             'term 0.1946, gradient sensitivity 2.828 over 1 '
                                             'problem(s), plus Gaussian output noise at '
                                             'mu=0.01719 for the certified solver gap; exact '
                                             'profile of the privacy-loss bound plus the '
                                             'charge for the noise-norm bound (doc/privacy.md, '
                                             'sections 7.3 and 7.6)',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               1.0,
                                               40.0,
                                               0.18933431410835758),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 14.95 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               2.0,
                                               80.0,
                                               0.2116798953588606),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 14.95 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-op-auto-norm': {'rho': 'ValueError: '
                             "PrivateIGDClassifier(solver='objective_perturbation') has a "
                             'custom privacy profile that is not Gaussian DP and not accounted '
                             'in Renyi DP here; private selection cannot bound it. Search '
                             "solver='igd' or 'mirror_descent' instead.",
                      'steps': [{'planned': (1.0, 1e-06, math.nan),
                                 'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'objective perturbation: N(0, 12.88^2) linear term, '
                                           'regularisation 1.288 (sum form), Jacobian term '
                                           '0.1773, gradient sensitivity 2 over 1 problem(s), '
                                           'plus Gaussian output noise at mu=0.01552 for the '
                                           'certified solver gap; exact profile of the '
                                           'privacy-loss bound plus the charge for the '
                                           'noise-norm bound (doc/privacy.md, sections 7.3 and '
                                           '7.6) at (0.9, 1e-06)-DP, after a 0.1-DP private '
                                           "quantile of the row norms (data_norm='auto', "
                                           'exponential mechanism); basic composition',
                                           'coef_ and intercept_ of the fitted model (one '
                                           'release) and data_norm_ (the private quantile of '
                                           'the row norms)',
                                           'the records passed to fit',
                                           'this release')}]}})

# Re-pinned deliberately (branch s30e, unit-free defaults, doc/privacy.md 54.14): only the
# mechanism texts of four data_norm="auto" cases, whose resolved data_norm_ on these 120 rows is
# 2^-19 or 2^-18.75. intercept_scaling="auto" is that data_norm_ (was 1), so IGD's L is
# sqrt(2) data_norm_ (was about 1): objective perturbation's gradient sensitivity 2 ->
# 6.416e-06 (linear term 12.88 -> 4.133e-05, ridge from alpha="auto" 1.288 -> 1.326e-11), the
# DP-FTRL noise 11.66 -> 3.145e-05 and 3.74e-05 per step. QFTL's statistics are in the unit
# scale (rows / data_norm_: R = sqrt(2), B = 1; was R = hypot(data_norm_, 1) ~ 1, B = 1): noise
# 9.893 -> 16.49 per step (Delta 3.536 against 2.121, the same mu). Planned costs, rho and every
# number of privacy_ are unchanged.
PINNED.update({'igd-op-auto-norm': {'rho': 'ValueError: '
                             "PrivateIGDClassifier(solver='objective_perturbation') has a "
                             'custom privacy profile that is not Gaussian DP and not accounted '
                             'in Renyi DP here; private selection cannot bound it. Search '
                             "solver='igd' or 'mirror_descent' instead.",
                      'steps': [{'planned': (1.0, 1e-06, math.nan),
                                 'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'objective perturbation: N(0, 4.133e-05^2) linear '
                                           'term, regularisation 1.326e-11 (sum form), '
                                           'Jacobian term 0.1773, gradient sensitivity '
                                           '6.416e-06 over 1 problem(s), plus Gaussian output '
                                           'noise at mu=0.01552 for the certified solver gap; '
                                           'exact profile of the privacy-loss bound plus the '
                                           'charge for the noise-norm bound (doc/privacy.md, '
                                           'sections 7.3 and 7.6) at (0.9, 1e-06)-DP, after a '
                                           '0.1-DP private quantile of the row norms '
                                           "(data_norm='auto', exponential mechanism); basic "
                                           'composition',
                                           'coef_ and intercept_ of the fitted model (one '
                                           'release) and data_norm_ (the private quantile of '
                                           'the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'igd-ftrl-auto-norm': {'rho': 0.02801448191263024,
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 3.145e-05 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 3.145e-05 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-fit-auto-norm-then-ftrl': {'rho': 0.02801448191263024,
                                 'steps': [{'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        120.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      'analytic Gaussian on the uncorrupted '
                                                      'iterate, GDP-composed over releases at '
                                                      '(0.9, 1e-06)-DP, after a 0.1-DP private '
                                                      'quantile of the row norms '
                                                      "(data_norm='auto', exponential "
                                                      'mechanism); basic composition',
                                                      'coef_ and intercept_ of the fitted '
                                                      'model (one release) and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to fit',
                                                      'this release')},
                                           {'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        40.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      "DP-FTRL on the stream's gradient sums, "
                                                      'one step per partial_fit call (at most '
                                                      '5 calls): BLT matrix factorization (4 '
                                                      'buffers) over at most 5 steps (one '
                                                      'batch per step), column norm 1.25, '
                                                      'noise 3.74e-05 per step; the models are '
                                                      'post-processing at (0.9, 1e-06)-DP; '
                                                      'data_norm_ from the fit this stream '
                                                      'continues (released by it), so the '
                                                      "quantiles' share of epsilon is not "
                                                      'spent again',
                                                      'coef_ and intercept_ after every '
                                                      'partial_fit call and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to partial_fit since '
                                                      'the stream started (records of an '
                                                      'earlier fit are covered by its own '
                                                      'release)',
                                                      'the stream up to its horizon of 200 '
                                                      'samples')}]},
 'qftl-stream-auto-norm': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): dense '
                                                'lower-triangular factorization over at most 5 '
                                                'steps (one batch per step), optimal for the '
                                                'prefix sums with the last weighted as all '
                                                'earlier ones together, column norm 1, noise '
                                                '16.49 per step at (0.9, 1e-06)-DP, after a '
                                                "0.1-DP private quantile of the first batch's "
                                                "row norms (data_norm='auto'); basic "
                                                'composition',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 samples')},
                                     {'planned': (1.0, 1e-06, math.nan),
                                      'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): dense '
                                                'lower-triangular factorization over at most 5 '
                                                'steps (one batch per step), optimal for the '
                                                'prefix sums with the last weighted as all '
                                                'earlier ones together, column norm 1, noise '
                                                '16.49 per step at (0.9, 1e-06)-DP, after a '
                                                "0.1-DP private quantile of the first batch's "
                                                "row norms (data_norm='auto'); basic "
                                                'composition',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism and '
                                                'data_norm_ (the private quantile of the row '
                                                'norms)',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 '
                                                'samples')}]}})


# Mirror descent in the unit scale (branch ``s31h``, doc/privacy.md section 55): these five
# cases have data_norm_ = 2.27e-06 or 1.91e-06 (the released quantile of the test data), so
# the fit now computes on the rows divided by data_norm_. Re-recorded with ``observe`` on
# these cases only; only the mechanism texts changed (epsilon, delta, mu, rho unchanged).
# Mirror descent: sigma and the sensitivity 2 L / n are sqrt(2) / sqrt(1 + R^2) = 1.414
# times the old ones (L = Lf sqrt(1 + 1) on unit rows, was Lf sqrt(R^2 + 1); Lf unchanged),
# now on the unit-scale gradient: relative to the features' gradient bound the noise is
# sqrt(2) R / sqrt(1 + R^2) = 3.2e-6 (2.7e-6) times the old, relative to the intercept's
# sqrt(2) times. Objective perturbation: gradient sensitivity x1.414 (feature_norm sqrt(2),
# was sqrt(R^2 + 1)), and the ridge of alpha="auto" (283.3 instead of 2.033, sum form) and
# the linear term's noise (4.306e-05 instead of 5.811e-05) are those of the unit-scale
# coefficients w * data_norm_ (the old ridge penalised w and the intercept in the units of X).
PINNED.update({'md-fit-auto-both': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=1.211e-06) on the mean '
                                           'gradient (L2 sensitivity 6.172e-08) at each of '
                                           'T=20 mirror-descent steps, GDP-composed to '
                                           'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                           'private quantile of the row norms '
                                           "(data_norm='auto', exponential mechanism) and a "
                                           "0.12-DP private quantile of |y| (y_bound='auto', "
                                           'exponential mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_, '
                                           'data_norm_ (the private quantile of the row norms) '
                                           'and y_bound_ (the private quantile of |y|)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-fit-auto-norm': {'rho': 0.039272483805919425,
                      'steps': [{'planned': (1.2, 1e-06, math.nan),
                                 'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'Gaussian noise (sigma=1.15) on the mean gradient '
                                           '(L2 sensitivity 0.06537) at each of T=20 '
                                           'mirror-descent steps, GDP-composed to mu=0.2542 at '
                                           '(1.08, 1e-06)-DP, after a 0.12-DP private quantile '
                                           "of the row norms (data_norm='auto', exponential "
                                           'mechanism); basic composition',
                                           'coef_ and intercept_ after every call (the average '
                                           'mirror-descent iterate, a function of the noisy '
                                           'gradients), and the step count max_iter_ and '
                                           'data_norm_ (the private quantile of the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'md-op-auto-both': {'rho': 'ValueError: '
                            "PrivateMirrorDescentRegressor(solver='objective_perturbation') "
                            'has a custom privacy profile that is not Gaussian DP and not '
                            'accounted in Renyi DP here; private selection cannot bound it. '
                            "Search solver='igd' or 'mirror_descent' instead.",
                     'steps': [{'planned': (1.0, 1e-06, math.nan),
                                'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                'texts': ('replace-one',
                                          'objective perturbation: N(0, 4.306e-05^2) linear '
                                          'term, regularisation 283.3 (sum form), Jacobian '
                                          'term 0.007034, gradient sensitivity 7.296e-06 over '
                                          '1 problem(s), plus Gaussian output noise at '
                                          'mu=0.01694 for the certified solver gap; exact '
                                          'profile of the privacy-loss bound plus the charge '
                                          'for the noise-norm bound (doc/privacy.md, sections '
                                          '7.3 and 7.6) at (0.8, 1e-06)-DP, after a 0.1-DP '
                                          'private quantile of the row norms '
                                          "(data_norm='auto', exponential mechanism) and a "
                                          "0.1-DP private quantile of |y| (y_bound='auto', "
                                          'exponential mechanism); basic composition',
                                          'coef_ and intercept_ after every call (the '
                                          "perturbed objective's minimiser projected on the "
                                          'public set), data_norm_ (the private quantile of '
                                          'the row norms) and y_bound_ (the private quantile '
                                          'of |y|)',
                                          'the records passed to fit',
                                          'this release')}]},
 'md-stream-auto-both': {'rho': 0.039272483805919425,
                         'steps': [{'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=1.12e-05) on the mean '
                                              'gradient (L2 sensitivity 5.709e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')},
                                   {'planned': (1.2, 1e-06, math.nan),
                                    'numbers': (1.2, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                    'texts': ('replace-one',
                                              'Gaussian noise (sigma=1.12e-05) on the mean '
                                              'gradient (L2 sensitivity 5.709e-07) at each of '
                                              'T=20 mirror-descent steps, GDP-composed to '
                                              'mu=0.2279 at (0.96, 1e-06)-DP, after a 0.12-DP '
                                              "private quantile of the first batch's row norms "
                                              "(data_norm='auto') and a 0.12-DP private "
                                              "quantile of the first batch's |y| "
                                              "(y_bound='auto'); basic composition",
                                              'coef_ and intercept_ after every call (the '
                                              'average mirror-descent iterate, a function of '
                                              'the noisy gradients), and the step count '
                                              'max_iter_, data_norm_ (the private quantile of '
                                              'the row norms) and y_bound_ (the private '
                                              'quantile of |y|)',
                                              'the records of fit (if it came first) and of '
                                              'every partial_fit call since, each covered by '
                                              '(epsilon, delta) through the one call (batch) '
                                              'that contained it; batches are disjoint, so the '
                                              'stream is (epsilon, delta)-DP per record by '
                                              'parallel composition (a record passed to k '
                                              'calls composes k times)',
                                              'each batch, for a stream however long (parallel '
                                              'composition)')}]},
 'md-fit-auto-then-stream': {'rho': 0.039272483805919425,
                             'steps': [{'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=1.211e-06) on the '
                                                  'mean gradient (L2 sensitivity 6.172e-08) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP, after a 0.12-DP private quantile '
                                                  "of the row norms (data_norm='auto', "
                                                  'exponential mechanism) and a 0.12-DP '
                                                  "private quantile of |y| (y_bound='auto', "
                                                  'exponential mechanism); basic composition',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records passed to fit',
                                                  'this release')},
                                       {'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2, 1e-06, math.nan, 2.0, 160.0, math.nan),
                                        'texts': ('replace-one',
                                                  'Gaussian noise (sigma=3.633e-06) on the '
                                                  'mean gradient (L2 sensitivity 1.852e-07) at '
                                                  'each of T=20 mirror-descent steps, '
                                                  'GDP-composed to mu=0.2279 at (0.96, '
                                                  '1e-06)-DP; data_norm_ and y_bound_ from the '
                                                  'fit this stream continues (released by it), '
                                                  "so the quantiles' share of epsilon is not "
                                                  'spent again',
                                                  'coef_ and intercept_ after every call (the '
                                                  'average mirror-descent iterate, a function '
                                                  'of the noisy gradients), and the step count '
                                                  'max_iter_, data_norm_ (the private quantile '
                                                  'of the row norms) and y_bound_ (the private '
                                                  'quantile of |y|)',
                                                  'the records of fit (if it came first) and '
                                                  'of every partial_fit call since, each '
                                                  'covered by (epsilon, delta) through the one '
                                                  'call (batch) that contained it; batches are '
                                                  'disjoint, so the stream is (epsilon, '
                                                  'delta)-DP per record by parallel '
                                                  'composition (a record passed to k calls '
                                                  'composes k times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')}]}})


# Re-pinned deliberately (branch ``s31l``, doc/privacy.md 55.16): IGD's
# ``intercept_scaling="auto"`` is ``data_norm_ / sqrt(n_features)`` (was ``data_norm_``), so
# with the three features of these cases ``L = sqrt(1 + 1/3) data_norm_`` (was ``sqrt(2)
# data_norm_``) and every noise quoted in the mechanism texts of the IGD objective
# perturbation and DP-FTRL cases is ``sqrt(2/3)`` of before (e.g. 14.95 -> 12.21 per step;
# objective perturbation: gradient sensitivity 2.828 -> 2.309, its linear term 16.45 ->
# 13.43, the regularisation 2.327 -> 1.551). Planned costs, rho, epsilon, delta, mu, spent_mu,
# n_releases and n_records are unchanged for every case (the guarantee does not depend on
# L: the noise is calibrated to it).
PINNED.update({'igd-op': {'rho': "ValueError: PrivateIGDClassifier(solver='objective_perturbation') has a "
                   'custom privacy profile that is not Gaussian DP and not accounted in Renyi '
                   "DP here; private selection cannot bound it. Search solver='igd' or "
                   "'mirror_descent' instead.",
            'steps': [{'planned': (1.0, 1e-06, math.nan),
                       'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                       'texts': ('replace-one',
                                 'objective perturbation: N(0, 13.43^2) linear term, '
                                 'regularisation 1.551 (sum form), Jacobian term 0.1946, '
                                 'gradient sensitivity 2.309 over 1 problem(s), plus Gaussian '
                                 'output noise at mu=0.01719 for the certified solver gap; '
                                 'exact profile of the privacy-loss bound plus the charge for '
                                 'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                 'coef_ and intercept_ of the fitted model (one release)',
                                 'the records passed to fit',
                                 'this release')}]},
 'igd-op-then-stream': {'rho': 'ValueError: '
                               "PrivateIGDClassifier(solver='objective_perturbation') has a "
                               'custom privacy profile that is not Gaussian DP and not '
                               'accounted in Renyi DP here; private selection cannot bound it. '
                               "Search solver='igd' or 'mirror_descent' instead.",
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'objective perturbation: N(0, 13.43^2) linear '
                                             'term, regularisation 1.551 (sum form), Jacobian '
                                             'term 0.1946, gradient sensitivity 2.309 over 1 '
                                             'problem(s), plus Gaussian output noise at '
                                             'mu=0.01719 for the certified solver gap; exact '
                                             'profile of the privacy-loss bound plus the '
                                             'charge for the noise-norm bound (doc/privacy.md, '
                                             'sections 7.3 and 7.6)',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               1.0,
                                               40.0,
                                               0.18933431410835758),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 12.21 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               2.0,
                                               80.0,
                                               0.2116798953588606),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 12.21 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-ftrl-horizon': {'rho': 0.02801448191263024,
                      'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             1.0,
                                             40.0,
                                             0.18933431410835758),
                                 'texts': ('replace-one',
                                           "DP-FTRL on the stream's gradient sums, one step "
                                           'per partial_fit call (at most 5 calls): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '12.21 per step; the models are post-processing',
                                           'coef_ and intercept_ after every partial_fit call',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')},
                                {'planned': (1.0, 1e-06, 0.2367043806634353),
                                 'numbers': (1.0,
                                             1e-06,
                                             0.2367043806634353,
                                             2.0,
                                             80.0,
                                             0.2116798953588606),
                                 'texts': ('replace-one',
                                           "DP-FTRL on the stream's gradient sums, one step "
                                           'per partial_fit call (at most 5 calls): BLT matrix '
                                           'factorization (4 buffers) over at most 5 steps '
                                           '(one batch per step), column norm 1.25, noise '
                                           '12.21 per step; the models are post-processing',
                                           'coef_ and intercept_ after every partial_fit call',
                                           'the records passed to partial_fit since the stream '
                                           'started (records of an earlier fit are covered by '
                                           'its own release)',
                                           'the stream up to its horizon of 200 samples')}]},
 'igd-ftrl-unbounded': {'rho': 0.10050201972241131,
                        'steps': [{'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               1.0,
                                               40.0,
                                               0.23188012462590593),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '9.969 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')},
                                  {'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               2.0,
                                               80.0,
                                               0.25866932097370965),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '9.969 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')},
                                  {'planned': (2.0, 1e-06, 0.44833474039474414),
                                   'numbers': (2.0,
                                               1e-06,
                                               0.44833474039474414,
                                               3.0,
                                               120.0,
                                               0.2736950354494582),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call: BLT matrix factorization '
                                             '(4 buffers) over an unbounded stream (fitted for '
                                             '4096 steps, column norm of the infinite stream) '
                                             '(one batch per step), column norm 1.933, noise '
                                             '9.969 per step; the models are post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream, however long')}]},
 'igd-ftrl-multiclass': {'rho': 0.02801448191263024,
                         'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                    'numbers': (1.0,
                                                1e-06,
                                                0.2367043806634353,
                                                1.0,
                                                40.0,
                                                0.18933431410835758),
                                    'texts': ('replace-one',
                                              "DP-FTRL on the stream's gradient sums, one step "
                                              'per partial_fit call (at most 5 calls): BLT '
                                              'matrix factorization (4 buffers) over at most 5 '
                                              'steps (one batch per step), column norm 1.25, '
                                              'noise 21.15 per step; the models are '
                                              'post-processing',
                                              'coef_ and intercept_ after every partial_fit '
                                              'call',
                                              'the records passed to partial_fit since the '
                                              'stream started (records of an earlier fit are '
                                              'covered by its own release)',
                                              'the stream up to its horizon of 200 samples')}]},
 'igd-fit-then-ftrl': {'rho': 0.02801448191263024,
                       'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              1.0,
                                              120.0,
                                              0.2367043806634353),
                                  'texts': ('replace-one',
                                            'analytic Gaussian on the uncorrupted iterate, '
                                            'GDP-composed over releases',
                                            'coef_ and intercept_ of the fitted model (one '
                                            'release)',
                                            'the records passed to fit',
                                            'this release')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              1.0,
                                              40.0,
                                              0.18933431410835758),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 12.21 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              2.0,
                                              80.0,
                                              0.2116798953588606),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 12.21 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')}]},
 'igd-op-auto-norm': {'rho': 'ValueError: '
                             "PrivateIGDClassifier(solver='objective_perturbation') has a "
                             'custom privacy profile that is not Gaussian DP and not accounted '
                             'in Renyi DP here; private selection cannot bound it. Search '
                             "solver='igd' or 'mirror_descent' instead.",
                      'steps': [{'planned': (1.0, 1e-06, math.nan),
                                 'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                 'texts': ('replace-one',
                                           'objective perturbation: N(0, 3.375e-05^2) linear '
                                           'term, regularisation 8.839e-12 (sum form), '
                                           'Jacobian term 0.1773, gradient sensitivity '
                                           '5.238e-06 over 1 problem(s), plus Gaussian output '
                                           'noise at mu=0.01552 for the certified solver gap; '
                                           'exact profile of the privacy-loss bound plus the '
                                           'charge for the noise-norm bound (doc/privacy.md, '
                                           'sections 7.3 and 7.6) at (0.9, 1e-06)-DP, after a '
                                           '0.1-DP private quantile of the row norms '
                                           "(data_norm='auto', exponential mechanism); basic "
                                           'composition',
                                           'coef_ and intercept_ of the fitted model (one '
                                           'release) and data_norm_ (the private quantile of '
                                           'the row norms)',
                                           'the records passed to fit',
                                           'this release')}]},
 'igd-ftrl-auto-norm': {'rho': 0.02801448191263024,
                        'steps': [{'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 1.0, 40.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 2.568e-05 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, math.nan),
                                   'numbers': (1.0, 1e-06, math.nan, 2.0, 80.0, math.nan),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 5 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 5 '
                                             'steps (one batch per step), column norm 1.25, '
                                             'noise 2.568e-05 per step; the models are '
                                             'post-processing at (0.9, 1e-06)-DP, after a '
                                             "0.1-DP private quantile of the first batch's row "
                                             "norms (data_norm='auto'); basic composition",
                                             'coef_ and intercept_ after every partial_fit '
                                             'call and data_norm_ (the private quantile of the '
                                             'row norms)',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'igd-fit-auto-norm-then-ftrl': {'rho': 0.02801448191263024,
                                 'steps': [{'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        120.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      'analytic Gaussian on the uncorrupted '
                                                      'iterate, GDP-composed over releases at '
                                                      '(0.9, 1e-06)-DP, after a 0.1-DP private '
                                                      'quantile of the row norms '
                                                      "(data_norm='auto', exponential "
                                                      'mechanism); basic composition',
                                                      'coef_ and intercept_ of the fitted '
                                                      'model (one release) and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to fit',
                                                      'this release')},
                                           {'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        40.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      "DP-FTRL on the stream's gradient sums, "
                                                      'one step per partial_fit call (at most '
                                                      '5 calls): BLT matrix factorization (4 '
                                                      'buffers) over at most 5 steps (one '
                                                      'batch per step), column norm 1.25, '
                                                      'noise 3.054e-05 per step; the models '
                                                      'are post-processing at (0.9, 1e-06)-DP; '
                                                      'data_norm_ from the fit this stream '
                                                      'continues (released by it), so the '
                                                      "quantiles' share of epsilon is not "
                                                      'spent again',
                                                      'coef_ and intercept_ after every '
                                                      'partial_fit call and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to partial_fit since '
                                                      'the stream started (records of an '
                                                      'earlier fit are covered by its own '
                                                      'release)',
                                                      'the stream up to its horizon of 200 '
                                                      'samples')}]}})


# Re-pinned deliberately (branch s32p, issue 17 item 1): solver="auto" is the new default of
# PrivateIGDClassifier, objective perturbation for the log loss on dense X. The fits below
# left solver at its default, so their planned cost and privacy_ are now objective
# perturbation's: the same (epsilon, delta), no GDP mu (nan), and its mechanism text. Their
# selection rho is unchanged: private selection plans and fits solver="auto" candidates with
# solver="igd" (model_selection/_candidates.py). The streams after these fits are unchanged.
# The "-solver-igd" cases keep output perturbation pinned at the values the default had.
PINNED.update({twin: PINNED[twin[:-len("-solver-igd")]] for twin in (
    "igd-fit-solver-igd", "igd-fit-multiclass-solver-igd", "igd-fit-then-ftrl-solver-igd",
    "igd-fit-auto-norm-solver-igd")})
PINNED.update({'igd-fit': {'rho': 0.02801448191263024,
             'steps': [{'planned': (1.0, 1e-06, math.nan),
                        'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                        'texts': ('replace-one',
                                  'objective perturbation: N(0, 13.43^2) linear term, '
                                  'regularisation 1.551 (sum form), Jacobian term 0.1946, '
                                  'gradient sensitivity 2.309 over 1 problem(s), plus Gaussian '
                                  'output noise at mu=0.01719 for the certified solver gap; '
                                  'exact profile of the privacy-loss bound plus the charge for '
                                  'the noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)',
                                  'coef_ and intercept_ of the fitted model (one release)',
                                  'the records passed to fit',
                                  'this release')}]},
 'igd-fit-inf': {'rho': math.inf,
                 'steps': [{'planned': (math.inf, 1e-06, math.nan),
                            'numbers': (math.inf, 1e-06, math.nan, 1.0, 120.0, math.nan),
                            'texts': ('replace-one',
                                      'none: epsilon=inf solves the regularised problem '
                                      'without noise',
                                      'coef_ and intercept_ of the fitted model (one release)',
                                      'the records passed to fit',
                                      'this release')}]},
 'igd-fit-multiclass': {'rho': 0.014430402994837957,
                        'steps': [{'planned': (0.7, 1e-06, math.nan),
                                   'numbers': (0.7, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'objective perturbation: N(0, 43.3^2) linear '
                                             'term, regularisation 5 (sum form), Jacobian term '
                                             '0.1936, gradient sensitivity 2.309 over 3 '
                                             'problem(s), plus Gaussian output noise at '
                                             'mu=0.009238 for the certified solver gap; exact '
                                             'profile of the privacy-loss bound plus the '
                                             'charge for the noise-norm bound (doc/privacy.md, '
                                             'sections 7.3 and 7.6)',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')}]},
 'igd-fit-alpha-seed': {'rho': 0.10050201972241131,
                        'steps': [{'planned': (2.0, 1e-06, math.nan),
                                   'numbers': (2.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                   'texts': ('replace-one',
                                             'objective perturbation: N(0, 5.798^2) linear '
                                             'term, regularisation 14.61 (sum form), Jacobian '
                                             'term 0.02257, gradient sensitivity 2.309 over 1 '
                                             'problem(s), plus Gaussian output noise at '
                                             'mu=0.03983 for the certified solver gap; exact '
                                             'profile of the privacy-loss bound plus the '
                                             'charge for the noise-norm bound (doc/privacy.md, '
                                             'sections 7.3 and 7.6)',
                                             'coef_ and intercept_ of the fitted model (one '
                                             'release)',
                                             'the records passed to fit',
                                             'this release')}]},
 'igd-fit-alpha-float': {'rho': 0.007701168113593885,
                         'steps': [{'planned': (0.5, 1e-06, math.nan),
                                    'numbers': (0.5, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                    'texts': ('replace-one',
                                              'objective perturbation: N(0, 22.22^2) linear '
                                              'term, regularisation 12 (sum form), Jacobian '
                                              'term 0.0274, gradient sensitivity 2.309 over 1 '
                                              'problem(s), plus Gaussian output noise at '
                                              'mu=0.01039 for the certified solver gap; exact '
                                              'profile of the privacy-loss bound plus the '
                                              'charge for the noise-norm bound '
                                              '(doc/privacy.md, sections 7.3 and 7.6)',
                                              'coef_ and intercept_ of the fitted model (one '
                                              'release)',
                                              'the records passed to fit',
                                              'this release')}]},
 'igd-fit-then-ftrl': {'rho': 0.02801448191263024,
                       'steps': [{'planned': (1.0, 1e-06, math.nan),
                                  'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                  'texts': ('replace-one',
                                            'objective perturbation: N(0, 13.43^2) linear '
                                            'term, regularisation 1.551 (sum form), Jacobian '
                                            'term 0.1946, gradient sensitivity 2.309 over 1 '
                                            'problem(s), plus Gaussian output noise at '
                                            'mu=0.01719 for the certified solver gap; exact '
                                            'profile of the privacy-loss bound plus the charge '
                                            'for the noise-norm bound (doc/privacy.md, '
                                            'sections 7.3 and 7.6)',
                                            'coef_ and intercept_ of the fitted model (one '
                                            'release)',
                                            'the records passed to fit',
                                            'this release')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              1.0,
                                              40.0,
                                              0.18933431410835758),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 12.21 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')},
                                 {'planned': (1.0, 1e-06, 0.2367043806634353),
                                  'numbers': (1.0,
                                              1e-06,
                                              0.2367043806634353,
                                              2.0,
                                              80.0,
                                              0.2116798953588606),
                                  'texts': ('replace-one',
                                            "DP-FTRL on the stream's gradient sums, one step "
                                            'per partial_fit call (at most 5 calls): BLT '
                                            'matrix factorization (4 buffers) over at most 5 '
                                            'steps (one batch per step), column norm 1.25, '
                                            'noise 12.21 per step; the models are '
                                            'post-processing',
                                            'coef_ and intercept_ after every partial_fit call',
                                            'the records passed to partial_fit since the '
                                            'stream started (records of an earlier fit are '
                                            'covered by its own release)',
                                            'the stream up to its horizon of 200 samples')}]},
 'igd-fit-then-iterate': {'rho': 0.02801448191263024,
                          'steps': [{'planned': (1.0, 1e-06, math.nan),
                                     'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                     'texts': ('replace-one',
                                               'objective perturbation: N(0, 13.43^2) linear '
                                               'term, regularisation 1.551 (sum form), '
                                               'Jacobian term 0.1946, gradient sensitivity '
                                               '2.309 over 1 problem(s), plus Gaussian output '
                                               'noise at mu=0.01719 for the certified solver '
                                               'gap; exact profile of the privacy-loss bound '
                                               'plus the charge for the noise-norm bound '
                                               '(doc/privacy.md, sections 7.3 and 7.6)',
                                               'coef_ and intercept_ of the fitted model (one '
                                               'release)',
                                               'the records passed to fit',
                                               'this release')},
                                    {'planned': (1.0, 1e-06, 0.2367043806634353),
                                     'numbers': (1.0,
                                                 1e-06,
                                                 0.2367043806634353,
                                                 1.0,
                                                 40.0,
                                                 0.10585741714708562),
                                     'texts': ('replace-one',
                                               'analytic Gaussian on the uncorrupted iterate, '
                                               'GDP-composed over releases',
                                               'coef_ and intercept_ after every partial_fit '
                                               'call',
                                               'the records passed to partial_fit since the '
                                               'stream started (records of an earlier fit are '
                                               'covered by its own release)',
                                               'the stream up to its horizon of 200 '
                                               'samples')}]},
 'igd-fit-auto-norm': {'rho': 0.02801448191263024,
                       'steps': [{'planned': (1.0, 1e-06, math.nan),
                                  'numbers': (1.0, 1e-06, math.nan, 1.0, 120.0, math.nan),
                                  'texts': ('replace-one',
                                            'objective perturbation: N(0, 3.375e-05^2) linear '
                                            'term, regularisation 8.839e-12 (sum form), '
                                            'Jacobian term 0.1773, gradient sensitivity '
                                            '5.238e-06 over 1 problem(s), plus Gaussian output '
                                            'noise at mu=0.01552 for the certified solver gap; '
                                            'exact profile of the privacy-loss bound plus the '
                                            'charge for the noise-norm bound (doc/privacy.md, '
                                            'sections 7.3 and 7.6) at (0.9, 1e-06)-DP, after a '
                                            '0.1-DP private quantile of the row norms '
                                            "(data_norm='auto', exponential mechanism); basic "
                                            'composition',
                                            'coef_ and intercept_ of the fitted model (one '
                                            'release) and data_norm_ (the private quantile of '
                                            'the row norms)',
                                            'the records passed to fit',
                                            'this release')}]},
 'igd-fit-auto-norm-then-ftrl': {'rho': 0.02801448191263024,
                                 'steps': [{'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        120.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      'objective perturbation: N(0, '
                                                      '3.375e-05^2) linear term, '
                                                      'regularisation 8.839e-12 (sum form), '
                                                      'Jacobian term 0.1773, gradient '
                                                      'sensitivity 5.238e-06 over 1 '
                                                      'problem(s), plus Gaussian output noise '
                                                      'at mu=0.01552 for the certified solver '
                                                      'gap; exact profile of the privacy-loss '
                                                      'bound plus the charge for the '
                                                      'noise-norm bound (doc/privacy.md, '
                                                      'sections 7.3 and 7.6) at (0.9, '
                                                      '1e-06)-DP, after a 0.1-DP private '
                                                      'quantile of the row norms '
                                                      "(data_norm='auto', exponential "
                                                      'mechanism); basic composition',
                                                      'coef_ and intercept_ of the fitted '
                                                      'model (one release) and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to fit',
                                                      'this release')},
                                           {'planned': (1.0, 1e-06, math.nan),
                                            'numbers': (1.0,
                                                        1e-06,
                                                        math.nan,
                                                        1.0,
                                                        40.0,
                                                        math.nan),
                                            'texts': ('replace-one',
                                                      "DP-FTRL on the stream's gradient sums, "
                                                      'one step per partial_fit call (at most '
                                                      '5 calls): BLT matrix factorization (4 '
                                                      'buffers) over at most 5 steps (one '
                                                      'batch per step), column norm 1.25, '
                                                      'noise 3.054e-05 per step; the models '
                                                      'are post-processing at (0.9, 1e-06)-DP; '
                                                      'data_norm_ from the fit this stream '
                                                      'continues (released by it), so the '
                                                      "quantiles' share of epsilon is not "
                                                      'spent again',
                                                      'coef_ and intercept_ after every '
                                                      'partial_fit call and data_norm_ (the '
                                                      'private quantile of the row norms)',
                                                      'the records passed to partial_fit since '
                                                      'the stream started (records of an '
                                                      'earlier fit are covered by its own '
                                                      'release)',
                                                      'the stream up to its horizon of 200 '
                                                      'samples')}]}})

# Pinned deliberately (branch s34m, issue 17 item 1): solver="auto" is the new default of
# PrivateMirrorDescentRegressor, objective perturbation for a fit with the squared or Huber
# loss on the L2 ball, dense X and max_iter=None. The four "md-auto-" cases are new; every
# earlier "md-" case passes max_iter=20 (mirror descent's own knob, which "auto" keeps on
# mirror descent) or an explicit solver, so none of their values changed. "md-auto-fit"
# plans and releases objective perturbation's (epsilon, delta) without mu; its selection
# rho is mirror descent's (private selection plans and fits "auto" as "mirror_descent").
# A stream after that fit covers the fit's records too, so it has no GDP mu either
# ("md-auto-fit-then-stream"); a stream alone is mirror descent's ("md-auto-stream").
PINNED.update({'md-auto-fit': {'rho': 0.039272483805919425,
                 'steps': [{'planned': (1.2, 1e-06, math.nan),
                            'numbers': (1.2, 1e-06, math.nan, 1.0, 120.0, math.nan),
                            'texts': ('replace-one',
                                      'objective perturbation: N(0, 31.96^2) linear term, '
                                      'regularisation 165 (sum form), Jacobian term '
                                      '0.01205, gradient sensitivity 7.916 over 1 '
                                      'problem(s), plus Gaussian output noise at '
                                      'mu=0.02477 for the certified solver gap; exact '
                                      'profile of the privacy-loss bound plus the charge '
                                      'for the noise-norm bound (doc/privacy.md, sections '
                                      '7.3 and 7.6)',
                                      'coef_ and intercept_ after every call (the '
                                      "perturbed objective's minimiser projected on the "
                                      'public set)',
                                      'the records passed to fit',
                                      'this release')}]},
 'md-auto-fit-then-stream': {'rho': 0.039272483805919425,
                             'steps': [{'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2,
                                                    1e-06,
                                                    math.nan,
                                                    1.0,
                                                    120.0,
                                                    math.nan),
                                        'texts': ('replace-one',
                                                  'objective perturbation: N(0, 31.96^2) '
                                                  'linear term, regularisation 165 (sum '
                                                  'form), Jacobian term 0.01205, gradient '
                                                  'sensitivity 7.916 over 1 problem(s), '
                                                  'plus Gaussian output noise at '
                                                  'mu=0.02477 for the certified solver '
                                                  'gap; exact profile of the privacy-loss '
                                                  'bound plus the charge for the '
                                                  'noise-norm bound (doc/privacy.md, '
                                                  'sections 7.3 and 7.6)',
                                                  'coef_ and intercept_ after every call '
                                                  "(the perturbed objective's minimiser "
                                                  'projected on the public set)',
                                                  'the records passed to fit',
                                                  'this release')},
                                       {'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2,
                                                    1e-06,
                                                    math.nan,
                                                    2.0,
                                                    160.0,
                                                    math.nan),
                                        'texts': ('replace-one',
                                                  "the fit's objective perturbation, then "
                                                  'per batch: Gaussian noise (sigma=1.223) '
                                                  'on the mean gradient (L2 sensitivity '
                                                  '0.1979) at each of T=3 mirror-descent '
                                                  'steps, GDP-composed to mu=0.2803',
                                                  'coef_ and intercept_ after every call '
                                                  '(the average mirror-descent iterate, a '
                                                  'function of the noisy gradients), and '
                                                  'the step count max_iter_',
                                                  'the records of fit (if it came first) '
                                                  'and of every partial_fit call since, '
                                                  'each covered by (epsilon, delta) '
                                                  'through the one call (batch) that '
                                                  'contained it; batches are disjoint, so '
                                                  'the stream is (epsilon, delta)-DP per '
                                                  'record by parallel composition (a '
                                                  'record passed to k calls composes k '
                                                  'times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')},
                                       {'planned': (1.2, 1e-06, math.nan),
                                        'numbers': (1.2,
                                                    1e-06,
                                                    math.nan,
                                                    3.0,
                                                    200.0,
                                                    math.nan),
                                        'texts': ('replace-one',
                                                  "the fit's objective perturbation, then "
                                                  'per batch: Gaussian noise (sigma=1.223) '
                                                  'on the mean gradient (L2 sensitivity '
                                                  '0.1979) at each of T=3 mirror-descent '
                                                  'steps, GDP-composed to mu=0.2803',
                                                  'coef_ and intercept_ after every call '
                                                  '(the average mirror-descent iterate, a '
                                                  'function of the noisy gradients), and '
                                                  'the step count max_iter_',
                                                  'the records of fit (if it came first) '
                                                  'and of every partial_fit call since, '
                                                  'each covered by (epsilon, delta) '
                                                  'through the one call (batch) that '
                                                  'contained it; batches are disjoint, so '
                                                  'the stream is (epsilon, delta)-DP per '
                                                  'record by parallel composition (a '
                                                  'record passed to k calls composes k '
                                                  'times)',
                                                  'each batch, for a stream however long '
                                                  '(parallel composition)')}]},
 'md-auto-stream': {'rho': 0.039272483805919425,
                    'steps': [{'planned': (1.2, 1e-06, 0.28025875117797633),
                               'numbers': (1.2,
                                           1e-06,
                                           0.28025875117797605,
                                           1.0,
                                           40.0,
                                           0.28025875117797605),
                               'texts': ('replace-one',
                                         'Gaussian noise (sigma=1.116) on the mean '
                                         'gradient (L2 sensitivity 0.1806) at each of T=3 '
                                         'mirror-descent steps, GDP-composed to mu=0.2803',
                                         'coef_ and intercept_ after every call (the '
                                         'average mirror-descent iterate, a function of '
                                         'the noisy gradients), and the step count '
                                         'max_iter_',
                                         'the records of fit (if it came first) and of '
                                         'every partial_fit call since, each covered by '
                                         '(epsilon, delta) through the one call (batch) '
                                         'that contained it; batches are disjoint, so the '
                                         'stream is (epsilon, delta)-DP per record by '
                                         'parallel composition (a record passed to k calls '
                                         'composes k times)',
                                         'each batch, for a stream however long (parallel '
                                         'composition)')},
                              {'planned': (1.2, 1e-06, 0.28025875117797633),
                               'numbers': (1.2,
                                           1e-06,
                                           0.28025875117797605,
                                           2.0,
                                           80.0,
                                           0.28025875117797605),
                               'texts': ('replace-one',
                                         'Gaussian noise (sigma=1.116) on the mean '
                                         'gradient (L2 sensitivity 0.1806) at each of T=3 '
                                         'mirror-descent steps, GDP-composed to mu=0.2803',
                                         'coef_ and intercept_ after every call (the '
                                         'average mirror-descent iterate, a function of '
                                         'the noisy gradients), and the step count '
                                         'max_iter_',
                                         'the records of fit (if it came first) and of '
                                         'every partial_fit call since, each covered by '
                                         '(epsilon, delta) through the one call (batch) '
                                         'that contained it; batches are disjoint, so the '
                                         'stream is (epsilon, delta)-DP per record by '
                                         'parallel composition (a record passed to k calls '
                                         'composes k times)',
                                         'each batch, for a stream however long (parallel '
                                         'composition)')}]},
 'md-auto-fit-auto-both': {'rho': 0.039272483805919425,
                           'steps': [{'planned': (1.2, 1e-06, math.nan),
                                      'numbers': (1.2,
                                                  1e-06,
                                                  math.nan,
                                                  1.0,
                                                  120.0,
                                                  math.nan),
                                      'texts': ('replace-one',
                                                'objective perturbation: N(0, 3.684e-05^2) '
                                                'linear term, regularisation 222.1 (sum '
                                                'form), Jacobian term 0.008966, gradient '
                                                'sensitivity 7.406e-06 over 1 problem(s), '
                                                'plus Gaussian output noise at mu=0.0201 '
                                                'for the certified solver gap; exact '
                                                'profile of the privacy-loss bound plus '
                                                'the charge for the noise-norm bound '
                                                '(doc/privacy.md, sections 7.3 and 7.6) at '
                                                '(0.96, 1e-06)-DP, after a 0.12-DP private '
                                                'quantile of the row norms '
                                                "(data_norm='auto', exponential mechanism) "
                                                'and a 0.12-DP private quantile of |y| '
                                                "(y_bound='auto', exponential mechanism); "
                                                'basic composition',
                                                'coef_ and intercept_ after every call '
                                                "(the perturbed objective's minimiser "
                                                'projected on the public set), data_norm_ '
                                                '(the private quantile of the row norms) '
                                                'and y_bound_ (the private quantile of '
                                                '|y|)',
                                                'the records passed to fit',
                                                'this release')}]}})

# Pinned deliberately (branch s34h, review 128 item 7): two streams that declare
# max_calls=8 with horizon=200 and batches of 40 (ceil(200 / 40) = 5 calls without it).
# The planned cost, epsilon, delta, mu, rho, n_releases and n_records are those of
# 'igd-ftrl-horizon' and 'qftl-stream-blt'; only the calibration moves to 8 steps: the
# texts ("at most 8 steps", column norm 1.311) and spent_mu after 2 of the 8 steps.
PINNED.update({'igd-ftrl-max-calls': {'rho': 0.02801448191263024,
                        'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               1.0,
                                               40.0,
                                               0.18056981733770258),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 8 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 8 '
                                             'steps (one batch per step), column norm 1.311, '
                                             'noise 12.8 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')},
                                  {'planned': (1.0, 1e-06, 0.2367043806634353),
                                   'numbers': (1.0,
                                               1e-06,
                                               0.2367043806634353,
                                               2.0,
                                               80.0,
                                               0.20188099668577836),
                                   'texts': ('replace-one',
                                             "DP-FTRL on the stream's gradient sums, one step "
                                             'per partial_fit call (at most 8 calls): BLT '
                                             'matrix factorization (4 buffers) over at most 8 '
                                             'steps (one batch per step), column norm 1.311, '
                                             'noise 12.8 per step; the models are '
                                             'post-processing',
                                             'coef_ and intercept_ after every partial_fit '
                                             'call',
                                             'the records passed to partial_fit since the '
                                             'stream started (records of an earlier fit are '
                                             'covered by its own release)',
                                             'the stream up to its horizon of 200 samples')}]},
 'qftl-stream-max-calls': {'rho': 0.02801448191263024,
                           'steps': [{'planned': (1.0, 1e-06, 0.2367043806634353),
                                      'numbers': (1.0,
                                                  1e-06,
                                                  0.2367043806634353,
                                                  1.0,
                                                  40.0,
                                                  0.18056981733770258),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): BLT '
                                                'matrix factorization (4 buffers) over at most '
                                                '8 steps (one batch per step), column norm '
                                                '1.311, noise 19.6 per step',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 samples')},
                                     {'planned': (1.0, 1e-06, 0.2367043806634353),
                                      'numbers': (1.0,
                                                  1e-06,
                                                  0.2367043806634353,
                                                  2.0,
                                                  80.0,
                                                  0.20188099668577836),
                                      'texts': ('replace-one',
                                                'Gaussian continual release of (V, u): BLT '
                                                'matrix factorization (4 buffers) over at most '
                                                '8 steps (one batch per step), column norm '
                                                '1.311, noise 19.6 per step',
                                                'coef_ and intercept_ after every partial_fit '
                                                'call, computed from the noisy prefix sums of '
                                                '(V, u) released by the stream mechanism',
                                                'the records passed to partial_fit since the '
                                                'stream started (records of an earlier fit are '
                                                'covered by its own release)',
                                                'the stream up to its horizon of 200 '
                                                'samples')}]}})


if __name__ == "__main__":  # print the table (run on the code to pin)
    import pprint
    import warnings

    warnings.simplefilter("ignore")
    table = {case[0]: observe(case) for case in CASES}
    print("PINNED = " + pprint.pformat(_as_source(table), width=96, sort_dicts=False))
