"""Mirror descent's fits do not depend on the units of X (nor of y).

Fitting ``(c X, data_norm=c)`` must give the model of ``(X, data_norm=1)`` in the other
units: the same predictions, noise of the same law (here the same draws: the fit computes
in the unit scale, rows divided by ``data_norm_``, so the calibration is the same) and
the same ``privacy_`` (``doc/privacy.md`` section 55). Before, the intercept's gradient
coordinate (the constant feature 1) was calibrated with the rows' ``L = Lf sqrt(R^2 + 1)``,
so at ``R = 100`` the intercept's noise was about 70 times that of ``R = 1`` relative to
its scale, and objective perturbation's ``feature_norm = sqrt(R^2 + 1)``, ridge and noise
acted on an intercept of the wrong scale (the review's R^2 0.25-0.87 for mirror descent,
-0.8 to -2.3 for objective perturbation at c=100, against 0.90-0.93 at c=1). Every test
of the units of X here fails on that code.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpol import PrivateMirrorDescentRegressor
from sklearn_dpol._core import mirror_descent as md
from sklearn_dpol.exceptions import DefaultBoundWarning

SCALES = (1e-3, 1.0, 100.0, 1e4)
#: data_norm="auto": powers of 2 map the quantile's geometric grid (4 points an
#: octave) onto itself, so the released quantile is c times the unit one.
AUTO_SCALES = (2.0 ** -10, 1.0, 2.0 ** 7, 2.0 ** 13)

SOLVERS = {
    # solver="mirror_descent" by name (session 34): "auto" takes objective perturbation
    # for the dense L2 cases.
    "md-squared-gram": dict(solver="mirror_descent"),
    "md-squared-rows": dict(solver="mirror_descent", max_iter=40),
    "md-huber-gram": dict(solver="mirror_descent", loss="huber", epsilon_huber=0.3,
                          max_iter=3000),
    "md-huber-rows": dict(solver="mirror_descent", loss="huber", epsilon_huber=0.3,
                          max_iter=60),
    "md-absolute": dict(solver="mirror_descent", loss="absolute", max_iter=150),
    "md-l1": dict(solver="mirror_descent", constraint="l1"),
    "md-simplex": dict(solver="mirror_descent", constraint="simplex", radius=1.0),
    "md-group": dict(solver="mirror_descent", constraint="group_l1", group_size=2,
                     max_iter=200),
    "md-no-intercept": dict(solver="mirror_descent", fit_intercept=False),
    "op-squared": dict(solver="objective_perturbation"),
    "op-huber": dict(solver="objective_perturbation", loss="huber", epsilon_huber=0.3),
    "op-no-intercept": dict(solver="objective_perturbation", fit_intercept=False),
}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DefaultBoundWarning)
        yield


def _regression(n=3000, seed=0, d=5):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, d)) / np.sqrt(d) * 1.2   # some rows clipped
    y = np.clip(Z @ np.linspace(0.5, -0.5, d) + 0.5 + 0.05 * rng.standard_normal(n), -1, 1)
    return Z, y


def _same_guarantee(a, b, text=True):
    for name in ("epsilon", "delta", "mu", "spent_mu", "n_releases", "n_records"):
        x, y = getattr(a, name), getattr(b, name)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-12), name
    assert a.released == b.released and a.neighbouring == b.neighbouring
    if text:   # the mechanism's text quotes the unit-scale noise
        assert str(a) == str(b)


def _scaled_params(params, c):
    """An explicit radius is in the units of the coefficients: 1/c when X is scaled by c
    (the simplex's too: its coefficients sum to the radius)."""
    params = dict(params)
    if isinstance(params.get("radius"), float):
        params["radius"] = params["radius"] / c
    return params


def _check_same_model(model, ref, c, Z, epsilon, atol=None):
    # Same seed, same calibration in the unit scale: the same noise draws; what differs
    # is the rounding of the rows c x / c (and, at epsilon=1, a noisy gradient's grid
    # point where rounding moved it across one: far below the noise).
    if atol is None:
        atol = 1e-9 if np.isinf(epsilon) else 1e-6
    np.testing.assert_allclose(model.coef_ * c, ref.coef_, rtol=0, atol=atol)
    assert model.intercept_ == pytest.approx(ref.intercept_, abs=atol)
    np.testing.assert_allclose(model.predict(Z * c), ref.predict(Z), rtol=0, atol=atol * 5)
    assert model.radius_ * c == pytest.approx(ref.radius_, rel=1e-12)
    for name in ("noise_scale_", "sensitivity_", "lipschitz_", "step_size_", "alpha_"):
        x, y = getattr(model, name), getattr(ref, name)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9), name
    assert model.max_iter_ == ref.max_iter_
    _same_guarantee(model.privacy_, ref.privacy_)


@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("c", SCALES)
def test_fit_in_any_units_of_x_is_the_unit_fit(solver, epsilon, c):
    Z, y = _regression()
    params = SOLVERS[solver]
    if np.isinf(epsilon) and params.get("solver") != "objective_perturbation":
        params = {**params, "max_iter": min(params.get("max_iter", 400), 400)}
    ref = PrivateMirrorDescentRegressor(epsilon=epsilon, random_state=3, **params).fit(Z, y)
    model = PrivateMirrorDescentRegressor(epsilon=epsilon, data_norm=c, random_state=3,
                                          **_scaled_params(params, c)).fit(Z * c, y)
    assert model.data_norm_ == c
    _check_same_model(model, ref, c, Z, epsilon)


@pytest.mark.parametrize("c", SCALES)
def test_sparse_and_weighted_fits_in_any_units(c):
    Z, y = _regression(seed=1)
    Z[np.abs(Z) < 0.15] = 0.0
    weights = np.random.default_rng(2).uniform(0, 1, Z.shape[0])
    for loss in ("squared", "huber"):
        kw = dict(epsilon=1.0, loss=loss, solver="mirror_descent", random_state=5)
        ref = PrivateMirrorDescentRegressor(**kw).fit(sp.csr_matrix(Z), y, sample_weight=weights)
        model = PrivateMirrorDescentRegressor(data_norm=c, **kw).fit(
            sp.csr_matrix(Z * c), y, sample_weight=weights)
        _check_same_model(model, ref, c, Z, 1.0)
    kw = dict(epsilon=1.0, solver="objective_perturbation", random_state=5)
    ref = PrivateMirrorDescentRegressor(**kw).fit(Z, y, sample_weight=weights)
    model = PrivateMirrorDescentRegressor(data_norm=c, **kw).fit(Z * c, y,
                                                                 sample_weight=weights)
    _check_same_model(model, ref, c, Z, 1.0)


@pytest.mark.parametrize("solver", ["mirror_descent", "objective_perturbation"])
@pytest.mark.parametrize("c", SCALES)
def test_partial_fit_stream_in_any_units(solver, c):
    """The warm start (coef_ in the units of X) is the same point of the set in both."""
    Z, y = _regression(n=3000, seed=4)
    kw = dict(epsilon=1.0, solver=solver, random_state=7)
    ref, model = PrivateMirrorDescentRegressor(**kw), PrivateMirrorDescentRegressor(
        data_norm=c, **kw)
    for rows in np.array_split(np.arange(Z.shape[0]), 3):
        ref.partial_fit(Z[rows], y[rows])
        model.partial_fit(Z[rows] * c, y[rows])
        _check_same_model(model, ref, c, Z, 1.0)


@pytest.mark.parametrize("solver", ["mirror_descent", "objective_perturbation"])
@pytest.mark.parametrize("c", AUTO_SCALES)
def test_auto_data_norm_in_any_units(solver, c):
    """data_norm='auto': when the released quantile is c times the unit one, the fit
    divides by it and gives the model of the unit data (the quantile itself, drawn by the
    exponential mechanism over a public geometric grid, is equivariant in law for powers
    of 2, not draw for draw: the seeds whose draws agree are compared)."""
    Z, y = _regression(n=4000, seed=6)
    compared = 0
    for seed in range(12):
        kw = dict(epsilon=1.0, data_norm="auto", solver=solver, random_state=seed)
        ref = PrivateMirrorDescentRegressor(**kw).fit(Z, y)
        model = PrivateMirrorDescentRegressor(**kw).fit(Z * c, y)
        if model.data_norm_ != ref.data_norm_ * c:
            continue
        _check_same_model(model, ref, c, Z, 1.0)
        compared += 1
    assert compared >= 3


@pytest.mark.parametrize("c", SCALES)
def test_dask_fit_in_any_units(c):
    dask = pytest.importorskip("dask", reason="dask is not installed")
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    Z, y = _regression(n=6000, seed=8)
    # The in-memory fit compared is mirror descent's by name ("auto": objective perturbation).
    kw = dict(epsilon=1.0, solver="mirror_descent", random_state=13)
    with dask.config.set(scheduler="threads"):
        ref = PrivateMirrorDescentRegressor(**kw).fit(
            da.from_array(Z, chunks=(2000, 5)), da.from_array(y, chunks=2000))
        model = PrivateMirrorDescentRegressor(data_norm=c, **kw).fit(
            da.from_array(Z * c, chunks=(2000, 5)), da.from_array(y, chunks=2000))
    _check_same_model(model, ref, c, Z, 1.0)
    # and the dask fit is the in-memory fit (sums in another order: rounding only)
    memory = PrivateMirrorDescentRegressor(data_norm=c, **kw).fit(Z * c, y)
    np.testing.assert_allclose(model.coef_ * c, memory.coef_ * c, rtol=0, atol=1e-6)


@pytest.mark.parametrize("solver", ["mirror_descent", "objective_perturbation"])
@pytest.mark.parametrize("b", [1e-3, 100.0])
def test_units_of_y_stay_equivariant(solver, b):
    """(X, b y, y_bound=b) predicts b times (X, y, y_bound=1) (squared loss). Held before
    too (a non-regression test: the unit scale divides the rows only)."""
    Z, y = _regression(seed=9)
    kw = dict(epsilon=1.0, solver=solver, random_state=17, data_norm=100.0)
    ref = PrivateMirrorDescentRegressor(**kw).fit(Z * 100, y)
    model = PrivateMirrorDescentRegressor(y_bound=b, **kw).fit(Z * 100, y * b)
    np.testing.assert_allclose(model.predict(Z * 100) / b, ref.predict(Z * 100), rtol=0,
                               atol=1e-6)
    # The noise quoted in the texts is in the units of y (b times larger).
    _same_guarantee(model.privacy_, ref.privacy_, text=False)


@pytest.mark.parametrize("loss, use_gram", [("squared", False), ("squared", True),
                                            ("huber", False), ("huber", True),
                                            ("absolute", False)])
@pytest.mark.parametrize("data_norm", [1e-3, 100.0])
def test_unit_scale_gradient_moves_by_at_most_the_sensitivity(loss, use_gram, data_norm):
    """Noise off: in the unit scale, replacing one record (a row far outside the ball
    included) moves the mean gradient by at most the calibrated ``2 L / n`` with
    ``L = Lf sqrt(1 + 1)``, at points of the unit-scale set."""
    rng = np.random.default_rng(21)
    n, d, y_bound, h = 400, 4, 1.0, 0.5
    X0 = rng.standard_normal((n, d)) * data_norm
    y0 = rng.uniform(-1, 1, n)
    X1, y1 = X0.copy(), y0.copy()
    X1[0] = -X0[0] * 1e3     # a row far outside the ball, and an extreme target
    y1[0] = -50.0
    radius = 3.0 / data_norm
    step_radius, step_norm = md.unit_bounds(radius, data_norm)
    assert step_norm == 1.0
    potential = md.make_potential("l2", d)
    cal = md.calibrate(potential, n_samples=n, loss=loss, huber_threshold=h,
                       radius=step_radius, data_norm=step_norm, y_bound=y_bound,
                       intercept=True, epsilon=1.0, delta=1e-6, n_steps=10)
    assert cal.lipschitz == pytest.approx(cal.derivative * math.sqrt(2.0), rel=1e-15)
    data = [md.clip_data(X, y, data_norm=data_norm, y_bound=y_bound, use_gram=use_gram,
                         unit_scale=True) for X, y in ((X0, y0), (X1, y1))]
    for X, clipped in zip((X0, X1), data):   # unit-scale rows: norm at most 1
        assert np.all(np.linalg.norm(X * clipped.scales[:, None], axis=1) <= 1.0)
    worst = 0.0
    for _ in range(30):
        u = rng.standard_normal(d)
        w = step_radius * u / max(1.0, np.linalg.norm(u))   # a point of the unit-scale set
        b = rng.uniform(-y_bound, y_bound)
        g0, g1 = (md.averaged_gradient(clipped, w, b, loss, h) for clipped in data)
        worst = max(worst, float(np.linalg.norm(g0 - g1)))
    assert 0.0 < worst <= cal.sensitivity


@pytest.mark.parametrize("loss", ["squared", "huber", "absolute"])
def test_the_unit_scale_at_data_norm_1_is_the_old_computation_bit_for_bit(loss):
    """At data_norm=1 the unit scale divides by 1 and multiplies by 1: every number of the
    old computation, bit for bit (the README's and privacy.md's default numbers hold)."""
    Z, y = _regression(seed=12)
    kw = dict(loss=loss, huber_threshold=0.3, constraint="l2", radius=2.0, group_size=None,
              data_norm=1.0, y_bound=1.0, intercept=True, epsilon=1.0, delta=1e-6,
              n_steps=300 if loss != "squared" else 3000)
    old = md.mirror_descent(Z, y, None, None, rng=np.random.default_rng(0), **kw)
    new = md.mirror_descent(Z, y, None, None, rng=np.random.default_rng(0), unit_scale=True,
                            **kw)
    assert old.coef.tobytes() == new.coef.tobytes() and old.intercept == new.intercept
    assert old.calibration == new.calibration


@pytest.mark.parametrize("data_norm", [1e-3, 1.0, 100.0, 2.0 ** 600])
def test_objective_perturbation_unit_design_rows_have_norm_at_most_1(data_norm):
    """The design objective perturbation solves on: rows clipped to data_norm, divided by
    it (the copy path of rows far above the bound, whose factor would underflow, too), and
    the intercept column 1: row norms at most sqrt(2), the plan's feature_norm."""
    from sklearn_dpol._core import objective_perturbation as op
    from sklearn_dpol.linear_model._mirror_descent import _unit_design

    rng = np.random.default_rng(13)
    X = rng.standard_normal((500, 4)) * data_norm
    X[:10] *= 1e3
    X[10:20] *= 1e-3
    if data_norm < 1e100:
        X[20:25] *= 1e290 / data_norm   # factors below 2^-64: clipped into a copy
    design = _unit_design(op.clipped_design(X, data_norm), data_norm, 1.0)
    rows = design.X * (1.0 if design.scale is None else design.scale[:, None])
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows) + 1.0)
    assert np.all(norms <= math.sqrt(2.0))
    assert np.max(norms) > math.sqrt(2.0) * (1 - 1e-12)   # the clipped rows reach the bound
    if data_norm == 1.0:   # the old design
        old = op.clipped_design(X, 1.0, 1.0)
        assert design.X.tobytes() == old.X.tobytes() and design.intercept == old.intercept
        assert (design.scale is None and old.scale is None) or \
            design.scale.tobytes() == old.scale.tobytes()
