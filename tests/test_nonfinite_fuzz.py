"""Non-finite values never reach a release (issue 15, item 1).

A finite record may hold entries up to +-1.8e308, subnormals, or a huge
target. Every estimator, ``fit`` and ``partial_fit`` (one-row batches too),
with every option, must either release finite values (``coef_``,
``intercept_`` and every other released float) or raise a ``ValueError``
*before* it reads the data's values (validation: the call is refunded, see
``doc/privacy.md``, "Failures and refunds"). A NaN or inf release would be a
function of the data outside the mechanism: a neighbour with an ordinary row
gives a finite model, so a NaN model identifies the record.

The fuzz is deterministic (``derandomize=True``) and modest (a few examples
per configuration) so that the file runs in well under a minute; the two
leaks reported in the issue have their own regression tests below, which fail
on the code before the fix.
"""

import warnings
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol._base import PrivateEstimatorMixin

BIG = np.finfo(np.float64).max  # 1.7976931348623157e308

# Values a finite record may hold: the extremes of the float64 range (both
# signs), subnormals, the smallest normal, ordinary values and zero.
SPECIAL = [0.0, 1.0, -1.0, 0.5, BIG, -BIG, 1e308, -1e308, 1.5e308, -1.5e308, 1e154,
           -1e154, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300, 3.0, -7.5]
ENTRY = st.one_of(st.sampled_from(SPECIAL),
                  st.floats(allow_nan=False, allow_infinity=False, width=64))


def _data(n_features):
    return st.integers(1, 5).flatmap(lambda n: st.tuples(
        arrays(np.float64, (n, n_features), elements=ENTRY),
        arrays(np.float64, (n,), elements=ENTRY),
    ))


# Every estimator with every option that changes a code path: losses,
# constraint sets, solvers, update rules, feedback, priors, few steps.
CONFIGS = [
    PrivateIGDClassifier(classes=[0, 1]),
    PrivateIGDClassifier(classes=[0, 1], loss="hinge", fit_intercept=False),
    PrivateIGDClassifier(classes=[0, 1, 2], max_iter=2, shuffle=False),
    PrivateIGDClassifier(classes=[0, 1], update="gradient", alpha=0.5),
    PrivateIGDClassifier(classes=[0, 1], solver="objective_perturbation", alpha=1e-2),
    PrivateIGDClassifier(classes=[0, 1], epsilon=np.inf, data_norm=10.0),
    PrivateQFTLRegressor(),
    PrivateQFTLRegressor(fit_intercept=False, horizon=1000, prefix_sums="tree"),
    PrivateQFTLRegressor(epsilon=np.inf, y_bound=1e3),
    PrivateFrankWolfeLasso(max_iter=20),
    PrivateFrankWolfeLasso(selection="gaussian", positive=True, fit_intercept=False,
                           step_size="constant", max_iter=20),
    PrivateFrankWolfeLasso(epsilon=np.inf, max_iter=20, radius=5.0),
    PrivateFrankWolfeLasso(feature_bound="auto", y_bound="auto", max_iter=20),
    PrivateMirrorDescentRegressor(),
    PrivateMirrorDescentRegressor(loss="huber", radius=10.0),
    PrivateMirrorDescentRegressor(loss="squared", radius=10.0, max_iter=3),
    PrivateMirrorDescentRegressor(loss="absolute", constraint="l1", radius=4.0),
    PrivateMirrorDescentRegressor(loss="huber", constraint="l1", max_iter=5),
    PrivateMirrorDescentRegressor(constraint="simplex", fit_intercept=False, radius=3.0),
    PrivateMirrorDescentRegressor(constraint="group_l1", group_size=2, radius=5.0,
                                  max_iter=4),
    PrivateMirrorDescentRegressor(solver="objective_perturbation", alpha=1e-2),
    PrivateMirrorDescentRegressor(solver="objective_perturbation", loss="huber",
                                  constraint="l1", alpha=1e-2, radius=10.0),
    PrivateMirrorDescentRegressor(epsilon=np.inf, loss="squared", radius=10.0, max_iter=3),
    ParameterFreeLocalDPRegressor(),
    ParameterFreeLocalDPRegressor(loss="huber", gradient_bound=0.05),
    ParameterFreeLocalDPRegressor(loss="huber", gradient_bound=0.05, epsilon=np.inf, average=False),
    ParameterFreeLocalDPRegressor(method="reduction", prior="improper", loss="huber",
                                  fit_intercept=False, gradient_bound=0.05),
    MutualInformationPrivateOGDRegressor(),
    MutualInformationPrivateOGDRegressor(epsilon=None, loss="squared", radius=10.0, sigma=0.1),
    MutualInformationPrivateOGDRegressor(loss="absolute", average=False),
    MutualInformationPrivateOGDRegressor(feedback="bandit", loss="squared",
                                         fit_intercept=False, exploration_radius=0.25),
    MutualInformationPrivateOGDRegressor(feedback="bandit", loss="huber", radius=10.0),
]
IDS = [f"{i:02d}-{type(c).__name__}" for i, c in enumerate(CONFIGS)]


def _targets(estimator, y):
    y = np.asarray(y, dtype=np.float64)
    if isinstance(estimator, PrivateIGDClassifier):
        # Labels in and out of the public classes (out-of-class: no contribution).
        bucket = (y > 0).astype(int) + 2 * (np.abs(y) > 1e100)
        return np.array([0, 1, 2, 7])[bucket]
    return y


def released_values(estimator):
    """Every released float: public attributes ``*_`` holding floats or float arrays."""
    out = {}
    # coef_ and intercept_ may be properties solved from released statistics (QFTL).
    attributes = dict(vars(estimator))
    for name in ("coef_", "intercept_"):
        if name not in attributes and hasattr(estimator, name):
            attributes[name] = getattr(estimator, name)
    for name, value in attributes.items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(value, (float, np.floating)) or (
                isinstance(value, np.ndarray) and value.dtype.kind == "f"):
            out[name] = np.asarray(value, dtype=np.float64)
    assert "coef_" in out
    return out


@contextmanager
def data_read_watch():
    """Record whether the estimator declared that it reads the data's values."""
    state = {"read": False}
    original = PrivateEstimatorMixin._mark_data_read

    def mark(self):
        state["read"] = True
        original(self)

    with mock.patch.object(PrivateEstimatorMixin, "_mark_data_read", mark):
        yield state


def check_call(estimator, method, X, y):
    """Run ``method``; a ValueError must come before the data are read, else finite releases."""
    with data_read_watch() as state, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(estimator, method)(X, y)
        except ValueError:
            assert not state["read"], "a ValueError after reading the data's values"
            return False
    assert state["read"]
    placeholders = _placeholders(estimator, method)
    for name, value in released_values(estimator).items():
        if name in placeholders:  # NaN whatever the data, e.g. "not applicable"
            np.testing.assert_array_equal(value, placeholders[name])
            continue
        assert np.all(np.isfinite(value)), f"{name} = {value} is not finite"
    return True


_PLACEHOLDERS = {}


def _placeholders(estimator, method="fit"):
    """Released floats that are non-finite on ordinary data too (data-independent).

    Per method: a solver resolved by a public rule may differ between ``fit`` and
    ``partial_fit`` (``PrivateMirrorDescentRegressor(solver="auto")``: objective
    perturbation's fit has no step, ``step_size_ = nan``; its stream steps)."""
    from sklearn.base import clone

    key = (repr(estimator), method)
    if key not in _PLACEHOLDERS:
        rng = np.random.default_rng(1)
        X = rng.uniform(-1, 1, (30, estimator.n_features_in_))
        reference = getattr(clone(estimator), method)(
            X, _targets(estimator, rng.uniform(-1, 1, 30)))
        _PLACEHOLDERS[key] = {name: value for name, value in released_values(reference).items()
                              if not np.all(np.isfinite(value))}
    return _PLACEHOLDERS[key]


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@settings(max_examples=10, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.integers(1, 4).flatmap(_data))
def test_fit_and_one_row_partial_fit_release_finite_values(config, data):
    from sklearn.base import clone

    X, y = data
    y = _targets(config, y)
    check_call(clone(config), "fit", X, y)
    stream = clone(config)
    for i in range(X.shape[0]):  # one-row batches: n <= p for every call
        check_call(stream, "partial_fit", X[i:i + 1], y[i:i + 1])


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_every_estimator_survives_rows_at_the_float64_limit(config):
    """The deterministic worst case: an ordinary stream, then rows of +-1.8e308."""
    from sklearn.base import clone

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 4))
    y = _targets(config, rng.uniform(-1, 1, 40))
    stream = clone(config).set_params(random_state=0)
    assert check_call(stream, "partial_fit", X, y)
    huge = np.array([[BIG, -BIG, BIG, -BIG], [BIG, BIG, -BIG, 5e-324],
                     [-BIG, -1e-300, 1e308, BIG]])
    for row in huge:
        assert check_call(stream, "partial_fit", row[np.newaxis], _targets(config, [BIG]))
    assert check_call(stream, "partial_fit", huge, _targets(config, [BIG, -BIG, 1.0]))
    assert check_call(clone(config), "fit", np.vstack([X, huge]),
                      np.append(y, _targets(config, [BIG, -BIG, 1.0])))


# -- regression tests of the reported leaks (fail before the fix) -------------------


@pytest.mark.parametrize("loss", ["squared", "huber"])
def test_mirror_descent_one_row_batch_at_the_float64_limit_is_finite(loss):
    """Issue 15: <x, w> was formed on the unclipped row; NaN/inf coef_ in most runs."""
    rng = np.random.default_rng(0)
    bad = 0
    for seed in range(20):
        est = PrivateMirrorDescentRegressor(loss=loss, radius=10.0, random_state=seed)
        est.partial_fit(rng.normal(size=(1, 4)), rng.normal(size=1))
        est.partial_fit(np.array([[BIG, -BIG, BIG, -BIG]]), [0.5])
        bad += not (np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_))
    assert bad == 0


def test_mirror_descent_gradient_kernel_is_finite_on_huge_rows():
    from sklearn_dpol._core import _md_kernels as k
    from sklearn_dpol._core.mirror_descent import row_scales

    X = np.array([[BIG, -BIG, BIG, -BIG]])
    scales = row_scales(X, 1.0)
    csr = sp.csr_matrix(X)
    for loss in (k.SQUARED, k.ABSOLUTE, k.HUBER):
        for weights in (np.zeros(0), np.array([0.7])):   # unweighted, weighted
            out = np.empty(5)
            k.data_gradient(X, scales, np.array([0.3]), weights,
                            np.array([5.0, -5.0, 5.0, -5.0]), 0.1, loss, 1.0, out)
            out_csr = np.empty(5)
            k.data_gradient_csr(csr.data, csr.indices, csr.indptr, scales, np.array([0.3]),
                                weights, np.array([5.0, -5.0, 5.0, -5.0]), 0.1, loss, 1.0,
                                out_csr)
            for gradient in (out, out_csr):
                assert np.all(np.isfinite(gradient))
                # f'(r) z with ||z|| <= 1 and |r| <= ||w|| + |b| + |y| = 10.4.
                assert np.linalg.norm(gradient[:4]) <= 10.4


def test_parameter_free_huber_residual_never_gives_nan():
    """Issue 15: inf - inf in the user-side residual made a NaN model once |w_j| > 1."""
    X = np.ones((2000, 2))
    est = ParameterFreeLocalDPRegressor(loss="huber", gradient_bound=0.05, epsilon=np.inf,
                                        random_state=0).partial_fit(X, np.full(2000, 1e3))
    est.partial_fit(np.array([[BIG, -BIG], [1.0, 1.0]]), [0.0, 0.0])
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    bad = 0
    for seed in range(10):
        est = ParameterFreeLocalDPRegressor(loss="huber", gradient_bound=0.05, epsilon=5.0,
                                            random_state=seed).partial_fit(
            X[:1500], np.full(1500, 1e3))
        est.partial_fit(np.array([[BIG, -BIG], [1.0, 1.0]]), [0.0, 0.0])
        bad += not (np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_))
    assert bad == 0


def test_parameter_free_user_residual_has_the_right_sign():
    from sklearn_dpol._core import _pf_kernels as k

    w = np.array([1.0, 3.0, 0.5])
    residual = k.user_residual(w, np.array([BIG, -BIG]), 0.0, True)
    assert residual == -np.inf  # BIG - 3 BIG < 0: overflows with the right sign
    assert k.user_residual(w, np.array([1.0, 2.0]), 1.0, True) == 1.0 + 6.0 + 0.5 - 1.0


def test_mi_ogd_clips_rows_whose_squared_norm_overflows():
    from sklearn_dpol._core import _mi_kernels as k

    r, scale = k._residual(np.array([0.5, 0.5]), np.array([BIG, BIG]), 0.0, False, 1.0, 1.0)
    # Before: ||x||^2 = inf gave scale = 0 (the row was dropped, not clipped).
    assert scale > 0 and np.isfinite(r)
    assert np.hypot(scale * BIG, scale * BIG) <= 1.0
    assert r == pytest.approx(0.5 * np.sqrt(2.0), rel=1e-12)


@pytest.mark.parametrize("data_norm", [1e-3, 1e-5, 1e-10, 1e-15])
def test_huge_rows_are_clipped_inside_a_small_bound(data_norm):
    """A subnormal clipping factor (huge row, small bound) rounded the clipped norm
    past the bound: by 6e-11 relative at data_norm=1e-5 and 50% at 1e-15."""
    from sklearn_dpol._core import _mi_kernels as k
    from sklearn_dpol._core._clip import clip_row_scales

    rng = np.random.default_rng(0)
    for _ in range(300):
        d = int(rng.integers(1, 6))
        x = rng.uniform(-1, 1, d) * BIG / np.sqrt(d)
        scale, clipped_sq = clip_row_scales(x[np.newaxis], data_norm)
        z = scale[0] * x
        assert np.sqrt(np.sum((z / data_norm) ** 2)) <= 1.0
        assert clipped_sq[0] == pytest.approx(np.dot(z, z), rel=1e-12, abs=0)
        _, mi_scale = k._residual(np.zeros(d), x, 0.0, False, data_norm, 1.0)
        assert np.sqrt(np.sum((mi_scale * x / data_norm) ** 2)) <= 1.0


@pytest.mark.parametrize("method", ["coordinate", "reduction"])
@pytest.mark.parametrize("prior", ["conjugate", "improper"])
def test_parameter_free_tiny_budgets_release_finite_values(method, prior):
    """A budget near the bottom of the float range made the Laplace noise overflow
    (NaN coef_ at epsilon=1e-300) or divide by zero (a user's 5e-324)."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (300, 3)), rng.uniform(-1, 1, 300)
    for eps in (1e-200, 1e-300, 5e-324):
        est = ParameterFreeLocalDPRegressor(epsilon=eps, method=method, prior=prior,
                                            random_state=0).fit(X, y)
        assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    budgets = np.r_[np.full(299, 1.0), 5e-324]
    est = ParameterFreeLocalDPRegressor(method=method, prior=prior, random_state=0)
    est.fit(X, y, sample_epsilon=budgets)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
