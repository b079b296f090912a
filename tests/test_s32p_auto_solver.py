"""PrivateIGDClassifier(solver="auto"), the default (issue 17 item 1; helper s32p).

A public rule on the call's public properties: objective perturbation for the log
loss on dense X, else IGD (hinge loss, sparse X, what objective perturbation refuses
from public values; objective perturbation takes sparse X when asked for by name since
session 33, but "auto" keeps IGD for it). Resolved into ``solver_``; ``solver`` stays "auto". The plan
(accountant), ``privacy_`` and private selection's rho follow it.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import get_tags

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.model_selection import PrivateHyperparameterSearch
from sklearn_dpol.privacy import PrivacyAccountant


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(n=600, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X @ np.arange(1, d + 1) + 0.1 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _clf(**params):
    return PrivateIGDClassifier(classes=[0, 1], random_state=0, **params)


def _key(cost):
    return tuple(float(f"{v:.10g}") if math.isfinite(v) else str(v)
                 for v in (cost.epsilon, cost.delta, cost.mu))


def test_default_is_auto_and_stays_auto():
    X, y = _data()
    clf = _clf()
    assert clf.get_params()["solver"] == "auto"
    clf.fit(X, y)
    assert clf.get_params()["solver"] == "auto" and clf.solver == "auto"
    assert clf.solver_ == "objective_perturbation"
    assert "solver_" not in clone(clf).__dict__


@pytest.mark.parametrize(("params", "sparse", "expected"), [
    ({}, False, "objective_perturbation"),
    ({}, True, "igd"),
    ({"loss": "hinge"}, False, "igd"),
    ({"loss": "hinge"}, True, "igd"),
    ({"update": "gradient", "alpha": 0.5}, False, "igd"),
    ({"solver": "igd"}, False, "igd"),
    ({"solver": "objective_perturbation"}, False, "objective_perturbation"),
    ({"epsilon": np.inf}, False, "objective_perturbation"),
])
def test_the_rule(params, sparse, expected):
    X, y = _data()
    clf = _clf(**params).fit(sp.csr_matrix(X) if sparse else X, y)
    assert clf.solver_ == expected
    # privacy_ states the mechanism of the solver used.
    mechanism = clf.privacy_.mechanism
    if np.isfinite(clf.epsilon):
        assert ("objective perturbation" in mechanism) == (expected == "objective_perturbation")
    else:
        assert ("regularised problem" in mechanism) == (expected == "objective_perturbation")


def test_auto_fit_equals_the_explicit_fit_of_its_solver():
    X, y = _data()
    for data, solver in ((X, "objective_perturbation"), (sp.csr_matrix(X), "igd")):
        auto, explicit = _clf().fit(data, y), _clf(solver=solver).fit(data, y)
        np.testing.assert_array_equal(auto.coef_, explicit.coef_)
        np.testing.assert_array_equal(auto.intercept_, explicit.intercept_)
        assert auto.alpha_ == explicit.alpha_ and auto.privacy_ == explicit.privacy_


def test_pandas_sparse_frame_is_sparse_format():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X).astype(pd.SparseDtype(float, 0.0))
    assert _clf().fit(frame, y).solver_ == "igd"
    dense_frame = pd.DataFrame(X)
    assert _clf().fit(dense_frame, y).solver_ == "objective_perturbation"


def test_public_refusals_of_objective_perturbation_under_auto():
    # delta below objective perturbation's floor: the rule takes IGD (a parameter).
    X, y = _data()
    assert _clf(delta=1e-320)._fit_solver(X) == "igd"
    assert _clf(delta=1e-320, epsilon=np.inf)._fit_solver(X) == "objective_perturbation"
    # Too many columns: the rule does not read X's shape (an accountant plans before X
    # is touched), so the fit refuses, before reading, and says how to get IGD.
    wide, y_wide = _data(n=50, d=op.MAX_COLUMNS)
    clf = _clf()
    with pytest.raises(ValueError, match="solver='igd'"):
        clf.fit(wide, y_wide)
    assert not hasattr(clf, "coef_") and "solver_" not in clf.__dict__
    assert _clf(solver="igd", max_iter=1).fit(wide, y_wide).solver_ == "igd"


@pytest.mark.parametrize(("params", "match"), [
    (dict(data_norm=1e200), "infinite sensitivity"),
    (dict(data_norm=1e-200, fit_intercept=False), "alpha"),
])
def test_overflowing_bounds_are_refused_as_for_igd(params, match):
    X, y = _data()
    for solver in ("auto", "objective_perturbation", "igd"):
        with PrivacyAccountant(10.0, 1e-5) as acc:
            clf = _clf(solver=solver, accountant=acc, **params)
            with pytest.raises(ValueError, match=match):
                clf.fit(X, y)
            assert not hasattr(clf, "alpha_")
            assert acc.spent().epsilon == 0.0      # refused before the read: refunded


def test_sparse_tag_follows_the_solver():
    # Every solver takes sparse X (objective perturbation since session 33, helper S).
    assert get_tags(_clf()).input_tags.sparse
    assert get_tags(_clf(solver="igd")).input_tags.sparse
    assert get_tags(_clf(solver="objective_perturbation")).input_tags.sparse


@pytest.mark.parametrize("sparse", [False, True])
def test_the_accountant_charges_what_the_fit_releases(sparse):
    X, y = _data()
    data = sp.csr_matrix(X) if sparse else X
    with PrivacyAccountant(10.0, 1e-5) as acc:
        clf = _clf(accountant=acc).fit(data, y)
        planned = _clf()._planned_privacy(data, fitting=True)
        (charge,) = acc.charges
        assert _key(charge.cost) == _key(clf.privacy_) == _key(planned)
        assert math.isnan(charge.cost.mu) == (not sparse)   # objective perturbation: no mu
        # A stream after the fit: one more charge, as after an explicit fit.
        clf.partial_fit(data[:50], y[:50])
        assert _key(acc.charges[-1].cost) == _key(clf.privacy_)


def test_stream_after_auto_fit_continues_as_after_the_explicit_fit():
    X, y = _data()
    auto = _clf(horizon=200).fit(X, y)
    explicit = _clf(horizon=200, solver="objective_perturbation").fit(X, y)
    for start in (0, 50):
        auto.partial_fit(X[start:start + 50], y[start:start + 50])
        explicit.partial_fit(X[start:start + 50], y[start:start + 50])
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    assert auto.privacy_ == explicit.privacy_ and auto.solver_ == "objective_perturbation"
    assert auto.prefix_sums_ == explicit.prefix_sums_


def test_a_stream_alone_is_unchanged_by_the_default():
    X, y = _data()
    auto, explicit = _clf(horizon=200), _clf(horizon=200, solver="igd")
    for est in (auto, explicit):
        est.partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    assert auto.privacy_ == explicit.privacy_


def test_private_selection_plans_and_fits_auto_with_igd():
    X, y = _data(n=800)
    search = PrivateHyperparameterSearch(_clf(), {"alpha": [1e-2, 1e-1]}, random_state=0)
    igd = PrivateHyperparameterSearch(_clf(solver="igd"), {"alpha": [1e-2, 1e-1]},
                                      random_state=0)
    assert search.privacy_plan() == igd.privacy_plan()
    search.fit(X, y)
    assert search.best_estimator_.solver_ == "igd"
    assert search.best_estimator_.solver == "igd"      # the search's own candidate copy
    assert search.estimator.solver == "auto"           # the user's estimator is untouched
    assert search.privacy_ == igd.fit(X, y).privacy_


def test_explicit_objective_perturbation_is_still_refused_by_selection():
    search = PrivateHyperparameterSearch(_clf(solver="objective_perturbation"),
                                         {"alpha": [1e-2]})
    with pytest.raises(ValueError, match="custom privacy profile"):
        search.privacy_plan()


def test_failed_auto_fit_leaves_no_solver_():
    X, y = _data()
    clf = _clf()
    with pytest.raises(ValueError):
        clf.fit(X, y, sample_weight=np.full(len(y), 2.0))
    assert "solver_" not in clf.__dict__
