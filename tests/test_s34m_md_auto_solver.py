"""PrivateMirrorDescentRegressor(solver="auto"), the default (issue 17 item 1; helper s34M).

A public rule on the call's parameters and the format and width of X: objective
perturbation for ``fit`` with the squared or Huber loss on the L2 ball, dense in-memory X
within objective perturbation's column limit, finite epsilon and delta >= MIN_DELTA (and
max_iter, step_size left to their rules); mirror descent otherwise, for dask fits and for
every partial_fit. Resolved into ``solver_``; ``solver`` stays "auto". The plan
(accountant), ``privacy_`` and private selection's rho follow it (doc/privacy.md 58.4).
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from sklearn_dpol import PrivateMirrorDescentRegressor
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.exceptions import BudgetExceededError
from sklearn_dpol.model_selection import PrivateHyperparameterSearch
from sklearn_dpol.model_selection._candidates import candidate_rho, selection_spec
from sklearn_dpol.privacy import PrivacyAccountant, PrivacyCost

OP, MD = "objective_perturbation", "mirror_descent"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(n=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    y = np.clip(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


def _reg(**params):
    # Public bounds passed (the data's rows have norm <= 1, |y| <= 1), not left to defaults.
    params = {"data_norm": 1.0, "y_bound": 1.0, **params}
    return PrivateMirrorDescentRegressor(random_state=0, **params)


def _key(cost):
    cost = PrivacyCost.of(cost)
    return tuple(float(f"{v:.10g}") if math.isfinite(v) else str(v)
                 for v in (cost.epsilon, cost.delta, cost.mu))


def test_default_is_auto_and_stays_auto():
    X, y = _data()
    reg = _reg()
    assert reg.get_params()["solver"] == "auto"
    reg.fit(X, y)
    assert reg.solver == "auto" and reg.get_params()["solver"] == "auto"
    assert reg.solver_ == OP
    assert "solver_" not in clone(reg).__dict__


@pytest.mark.parametrize(("params", "fmt", "expected"), [
    ({}, "dense", OP),
    ({"loss": "huber"}, "dense", OP),
    ({"fit_intercept": False}, "dense", OP),
    ({}, "csr", MD),
    ({}, "csc", MD),
    ({"loss": "huber"}, "csr", MD),
    ({"loss": "absolute"}, "dense", MD),       # fitted, not refused
    ({"constraint": "l1"}, "dense", MD),
    ({"constraint": "simplex", "radius": 1.0}, "dense", MD),
    ({"constraint": "group_l1", "group_size": 2}, "dense", MD),
    ({"epsilon": np.inf, "max_iter": None}, "dense", MD),
    ({"delta": 1e-320}, "dense", MD),
    ({"max_iter": 30}, "dense", MD),           # mirror descent's own knobs
    ({"step_size": 0.1}, "dense", MD),
    ({"solver": MD}, "dense", MD),
    ({"solver": OP}, "dense", OP),
    ({"solver": OP}, "csr", OP),
])
def test_the_rule(params, fmt, expected):
    X, y = _data()
    data = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}[fmt]
    reg = _reg(**params)
    if params.get("epsilon") == np.inf:
        reg.set_params(max_iter=None)
    reg.fit(data, y)
    assert reg.solver_ == expected
    assert math.isnan(reg.privacy_.mu) == (expected == OP and np.isfinite(reg.epsilon))
    assert (reg.n_iter_ == 1) == (expected == OP)


def test_auto_fit_equals_the_explicit_fit_of_its_solver():
    X, y = _data()
    for data, solver in ((X, OP), (sp.csr_matrix(X), MD)):
        auto, explicit = _reg().fit(data, y), _reg(solver=solver).fit(data, y)
        np.testing.assert_array_equal(auto.coef_, explicit.coef_)
        assert auto.intercept_ == explicit.intercept_
        assert auto.privacy_ == explicit.privacy_ and auto.solver_ == solver


def test_absolute_loss_is_refused_only_by_an_explicit_objective_perturbation():
    X, y = _data()
    assert _reg(loss="absolute").fit(X, y).solver_ == MD
    with pytest.raises(ValueError, match="smooth loss"):
        _reg(loss="absolute", solver=OP).fit(X, y)


def test_pandas_frames_by_their_format():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    sparse_frame = pd.DataFrame(X).astype(pd.SparseDtype(float, 0.0))
    assert _reg().fit(sparse_frame, y).solver_ == MD
    assert _reg().fit(pd.DataFrame(X), y).solver_ == OP


def test_the_width_against_objective_perturbations_column_limit():
    # Decided from the shape (public) only: the rule is not a fit here (a fit of 4096
    # columns is slow), but the same function the fit and the plan call.
    limit = op.MAX_COLUMNS
    assert _reg()._fit_solver(np.zeros((3, limit - 1))) == OP
    assert _reg()._fit_solver(np.zeros((3, limit))) == MD              # with the intercept
    assert _reg(fit_intercept=False)._fit_solver(np.zeros((3, limit))) == OP
    assert _reg(fit_intercept=False)._fit_solver(np.zeros((3, limit + 1))) == MD
    assert _reg()._fit_solver([[0.0] * limit] * 2) == MD               # a list: its first row
    # The plan follows: a Gaussian (mirror-descent) spec for the wide X.
    assert not math.isnan(_reg()._privacy_spec(np.zeros((3, limit)), fitting=True).mu)
    assert math.isnan(_reg()._privacy_spec(np.zeros((3, 4)), fitting=True).mu)


class ShapeOnly:
    """Training data whose shape is public and whose values fail the test if read."""

    def __init__(self, shape):
        self.shape = shape
        self.ndim = len(shape)

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read (__array__)")

    def __getitem__(self, item):
        raise AssertionError("the data was read (__getitem__)")

    def __len__(self):
        return self.shape[0]


def test_the_rule_reads_no_value():
    # Two data sets of one shape and format: the same decision, from the shape alone.
    for shape, expected in (((50, 5), OP), ((50, op.MAX_COLUMNS), MD)):
        assert _reg()._fit_solver(ShapeOnly(shape)) == expected
        a, b = np.zeros(shape), np.random.default_rng(1).normal(size=shape)
        assert _reg()._fit_solver(a) == _reg()._fit_solver(b) == expected
    # No data yet: the plan of dense X within the limit.
    assert _reg()._fit_solver(None) == OP
    assert math.isnan(_reg()._privacy_spec(None, fitting=True).mu)


def test_an_exceeded_budget_is_refused_from_the_shape_alone():
    with PrivacyAccountant(1e-3, 1e-12) as acc:
        reg = _reg(accountant=acc)
        with pytest.raises(BudgetExceededError):
            reg.fit(ShapeOnly((50, 5)), np.zeros(50))
        assert acc.charges == [] and not hasattr(reg, "solver_")
    # The refused plan was objective perturbation's, decided from the shape alone.
    assert math.isnan(_reg()._privacy_spec(ShapeOnly((50, 5)), fitting=True).mu)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_the_accountant_charges_what_the_fit_releases(fmt):
    X, y = _data()
    data = sp.csr_matrix(X) if fmt == "csr" else X
    with PrivacyAccountant(10.0, 1e-5) as acc:
        planned = _reg()._planned_privacy(data, fitting=True)
        reg = _reg(accountant=acc).fit(data, y)
        (charge,) = acc.charges
        assert _key(charge.cost) == _key(reg.privacy_) == _key(planned)
        assert math.isnan(charge.cost.mu) == (fmt == "dense")   # objective perturbation
        # The stream after the fit: mirror descent, one more charge, the plan made
        # before the call. Its privacy_ covers the fit's records too: after an objective-
        # perturbation fit it has no GDP mu (the fit's records have none).
        planned = reg._planned_privacy(data[:100], fitting=False)
        reg.partial_fit(data[:100], y[:100])
        assert reg.solver_ == MD and reg.solver == "auto"
        assert _key(acc.charges[-1].cost) == _key(reg.privacy_) == _key(planned)
        assert math.isnan(acc.charges[-1].cost.mu) == (fmt == "dense")
        reg.partial_fit(data[100:200], y[100:200])
        assert _key(acc.charges[-1].cost) == _key(reg.privacy_) == _key(planned)


@pytest.mark.parametrize("params", [{}, {"data_norm": "auto", "y_bound": "auto"}])
def test_the_plan_equals_the_guarantee(params):
    # The "auto" bounds' budget split composes the quantiles with the resolved solver.
    X, y = _data(n=2000)
    plan = _reg(**params)._privacy_spec(X, fitting=True)
    reg = _reg(**params).fit(X, y)
    assert reg.solver_ == OP
    assert _key(plan.cost()) == _key(reg.privacy_)
    assert plan.rho is None                           # objective perturbation: no rho
    assert _key(_reg(solver=OP, **params)._privacy_spec(X, fitting=True).cost()) \
        == _key(plan.cost())


def test_partial_fit_streams_by_mirror_descent():
    X, y = _data()
    auto, explicit = _reg(), _reg(solver=MD)
    for start in (0, 200):
        auto.partial_fit(X[start:start + 200], y[start:start + 200])
        explicit.partial_fit(X[start:start + 200], y[start:start + 200])
        assert auto.solver_ == MD
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    assert auto.privacy_ == explicit.privacy_
    assert _key(_reg()._privacy_spec(X, fitting=False).cost()) == _key(auto.privacy_)
    # An explicit objective perturbation keeps solving each batch afresh.
    op_stream = _reg(solver=OP).partial_fit(X[:200], y[:200])
    assert op_stream.solver_ == OP and op_stream.n_iter_ == 1


def test_a_stream_after_an_auto_fit_warm_starts_from_the_released_model():
    X, y = _data()
    reg = _reg().fit(X, y)
    assert reg.solver_ == OP
    released = reg.coef_.copy()
    reg.partial_fit(X[:200], y[:200])
    assert reg.solver_ == MD and reg.n_iter_ > 1
    assert not np.array_equal(released, reg.coef_)
    # The stream's guarantee covers the fit's records (objective perturbation's: no mu).
    assert reg.privacy_.n_releases == 2 and math.isnan(reg.privacy_.mu)
    assert (reg.privacy_.epsilon, reg.privacy_.delta) == (1.0, 1e-6)
    assert "objective perturbation" in reg.privacy_.mechanism
    # A new fit starts afresh: a stream after a mirror-descent fit is Gaussian again.
    reg.fit(sp.csr_matrix(X), y).partial_fit(X[:200], y[:200])
    assert reg.privacy_.n_releases == 2 and not math.isnan(reg.privacy_.mu)


def test_dask_fit_takes_mirror_descent():
    da = pytest.importorskip("dask.array")
    X, y = _data()
    dX, dy = da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100)
    assert _reg()._fit_solver(dX) == MD
    reg = _reg().fit(dX, dy)
    assert reg.solver_ == MD and reg.solver == "auto"
    in_memory = _reg(solver=MD).fit(X, y)
    np.testing.assert_allclose(reg.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="needs solver='mirror_descent' or 'auto'"):
        _reg(solver=OP).fit(dX, dy)


def test_private_selection_plans_and_fits_auto_with_mirror_descent():
    auto, md = _reg(max_iter=None), _reg(solver=MD)
    assert selection_spec(auto).rho == selection_spec(md).rho is not None
    candidate = clone(auto)
    assert candidate_rho(candidate) == candidate_rho(clone(md))
    assert candidate.solver == MD                      # pinned on the search's copy
    X, y = _data(n=800)
    grid = {"radius": [0.5, 2.0]}
    search = PrivateHyperparameterSearch(_reg(), grid, random_state=0)
    explicit = PrivateHyperparameterSearch(_reg(solver=MD), grid, random_state=0)
    assert search.privacy_plan() == explicit.privacy_plan()
    search.fit(X, y)
    assert search.best_estimator_.solver == MD and search.best_estimator_.solver_ == MD
    assert search.estimator.solver == "auto"          # the user's estimator is untouched


def test_failed_auto_fit_leaves_no_solver_():
    X, y = _data()
    reg = _reg()
    with pytest.raises(ValueError):
        reg.fit(X, y, sample_weight=np.full(len(y), 2.0))
    assert "solver_" not in reg.__dict__
    assert reg.fit(X, y).solver_ == OP and reg.solver == "auto"
