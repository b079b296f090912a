"""PrivateMirrorDescentRegressor: sensitivity, calibration, non-private optimum, semantics."""

import math
import pickle

import numpy as np
import pytest
from scipy.optimize import minimize

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateMirrorDescentRegressor
from sklearn_dpol._core import mirror_descent as md
from sklearn_dpol.privacy import gaussian_mu

# -- sensitivity (noise off) ------------------------------------------------------------------


def gradient(X, y, w, b, loss, h=1.0, data_norm=1.0, y_bound=1.0, gram=False):
    data = md.clip_data(X, y, data_norm=data_norm, y_bound=y_bound, use_gram=gram)
    return md.averaged_gradient(data, w, b, loss, h)


def points_of(constraint, p, radius, rng, count=6):
    potential = md.make_potential(constraint, p, 2)
    points = [radius * potential.start()]
    for _ in range(count):
        points.append(radius * potential.step(rng.normal(size=p) * 5))
    return points


@pytest.mark.parametrize("loss", ["squared", "absolute", "huber"])
@pytest.mark.parametrize("constraint", ["l2", "l1", "simplex", "group_l1"])
def test_mean_gradient_moves_by_at_most_2L_over_n(loss, constraint):
    rng = np.random.default_rng(0)
    n, p, radius, data_norm, y_bound, h = 15, 4, 1.7, 1.3, 0.8, 0.4
    derivative = md.derivative_bound(loss, h, radius, data_norm, y_bound, True)
    bound = md.gradient_sensitivity(md.lipschitz_constant(derivative, data_norm, True), n)
    worst = 0.0
    for trial in range(40):
        X = rng.normal(size=(n, p)) * rng.choice([0.1, 1.0, 100.0])
        y = rng.normal(size=n) * rng.choice([0.1, 10.0])
        X1, y1 = X.copy(), y.copy()
        X1[0] = rng.choice([-1e6, 1e6], size=p) * rng.uniform(size=p)  # adversarial row
        y1[0] = rng.choice([-1e6, 1e6])
        for w in points_of(constraint, p, radius, rng, count=3):
            b = y_bound * rng.uniform(-1, 1)
            g0 = gradient(X, y, w, b, loss, h, data_norm, y_bound)
            g1 = gradient(X1, y1, w, b, loss, h, data_norm, y_bound)
            worst = max(worst, np.linalg.norm(g1 - g0))
    assert worst <= bound * (1 + 1e-12)


@pytest.mark.parametrize("loss,h", [("absolute", 1.0), ("huber", 0.3)])
@pytest.mark.parametrize("intercept", [True, False])
def test_the_bound_is_attained_by_a_constructed_worst_case(loss, h, intercept):
    """At w = 0, b = 0: x = e_0 with y = -Y has residual Y > h, the same x with y = +Y
    has residual -Y: the gradients are Lf (x, 1) and -Lf (x, 1)."""
    n, p = 9, 3
    X = np.zeros((n, p))
    y = np.zeros(n)
    X[0, 0], y[0] = 1.0, -1.0
    X1, y1 = X.copy(), y.copy()
    y1[0] = 1.0
    derivative = md.derivative_bound(loss, h, 1.0, 1.0, 1.0, intercept)
    bound = md.gradient_sensitivity(md.lipschitz_constant(derivative, 1.0, intercept), n)
    g0 = gradient(X, y, np.zeros(p), 0.0, loss, h)
    g1 = gradient(X1, y1, np.zeros(p), 0.0, loss, h)
    moved = g1 - g0 if intercept else (g1 - g0)[:p]
    assert np.linalg.norm(moved) == pytest.approx(bound, rel=1e-12)


def test_gram_and_data_gradients_agree():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 6)) * 2, rng.normal(size=50) * 2
    for w in points_of("l1", 6, 2.0, rng):
        np.testing.assert_allclose(gradient(X, y, w, 0.3, "squared", gram=True),
                                   gradient(X, y, w, 0.3, "squared"), rtol=1e-10, atol=1e-13)


def test_float32_rows_give_the_float64_gradient():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5)).astype(np.float32)
    y = rng.normal(size=40)
    w = np.full(5, 0.2)
    np.testing.assert_allclose(gradient(X, y, w, 0.1, "huber"),
                               gradient(X.astype(np.float64), y, w, 0.1, "huber"), rtol=1e-12)


# -- calibration ---------------------------------------------------------------------------------


def test_noise_is_the_exact_gdp_calibration():
    potential = md.make_potential("l2", 5)
    cal = md.calibrate(potential, n_samples=1000, loss="huber", huber_threshold=0.5,
                       radius=2.0, data_norm=1.5, y_bound=1.0, intercept=True, epsilon=1.0,
                       delta=1e-6, n_steps=300)
    lipschitz = 0.5 * norm_bound(1.5, 1.0)
    mu_star = gaussian_mu(1.0, 1e-6)
    assert cal.lipschitz == pytest.approx(lipschitz)
    assert cal.sensitivity == pytest.approx(2 * lipschitz / 1000)
    # The Huber loss takes the Gram path here, whose rounding the noise pays for
    # (doc/privacy.md 54.3): calibrated on (1 + a) 2L/n.
    assert cal.huber_gram and cal.rounding_allowance == md.HUBER_GRAM_ALLOWANCE
    assert cal.noise_scale == pytest.approx(
        (1 + md.HUBER_GRAM_ALLOWANCE) * 2 * lipschitz * math.sqrt(300) / (1000 * mu_star),
        rel=1e-9)
    assert cal.mu <= mu_star
    paper = md.paper_noise_scale(lipschitz, 300, 1000, 1.0, 1e-6)
    assert 10 < paper / cal.noise_scale < 23


def test_theorem_step_count_and_step_size():
    n, p = 400, 10
    potential = md.make_potential("l2", p)
    mu = gaussian_mu(1.0, 1e-6)
    cal = md.calibrate(potential, n_samples=n, loss="absolute", huber_threshold=1.0,
                       radius=1.0, data_norm=1.0, y_bound=1.0, intercept=False, epsilon=1.0,
                       delta=1e-6)
    width = potential.gaussian_width
    assert cal.n_steps == round(n * n * mu * mu / (4 * (width ** 2 + 1)))
    sigma = cal.noise_scale
    expected = math.sqrt(0.5 / (cal.n_steps * (1.0 + sigma ** 2 * (width ** 2 + 1))))
    assert cal.step_size == pytest.approx(expected)
    infinite = md.calibrate(potential, n_samples=n, loss="absolute", huber_threshold=1.0,
                            radius=1.0, data_norm=1.0, y_bound=1.0, intercept=False,
                            epsilon=np.inf, delta=1e-6)
    assert (infinite.n_steps, infinite.noise_scale) == (
        min(md.MAX_AUTO_ITER, round(md.iteration_cap("absolute", n, p))), 0.0)


def test_gram_is_used_when_cheaper():
    assert md.use_gram("squared", 10_000, 20, 2000)
    assert not md.use_gram("squared", 10, 20, 1)
    assert not md.use_gram("huber", 10_000, 20, 2000)


# -- epsilon = inf reaches the constrained optimum -------------------------------------------


def huber_objective(X, y, w, b, h):
    r = X @ w + b - y
    return np.mean(np.where(np.abs(r) <= h, 0.5 * r * r, h * np.abs(r) - 0.5 * h * h))


def scipy_optimum(constraint, X, y, radius, h, y_bound):
    """The constrained optimum (w, b) by SLSQP, with smooth reformulations of the sets."""
    p = X.shape[1]
    if constraint == "l1":
        def unpack(x):
            return x[:p] - x[p:2 * p], x[-1]
        cons = [{"type": "ineq", "fun": lambda x: radius - x[:2 * p].sum()}]
        bounds = [(0, None)] * (2 * p) + [(-y_bound, y_bound)]
        x0 = np.zeros(2 * p + 1)
    else:
        def unpack(x):
            return x[:p], x[-1]
        bounds = [(None, None)] * p + [(-y_bound, y_bound)]
        x0 = np.zeros(p + 1)
        if constraint == "l2":
            cons = [{"type": "ineq", "fun": lambda x: radius ** 2 - x[:p] @ x[:p]}]
        elif constraint == "simplex":
            cons = [{"type": "eq", "fun": lambda x: x[:p].sum() - radius}]
            bounds = [(0, None)] * p + [(-y_bound, y_bound)]
            x0[:p] = radius / p
        else:  # group_l1 with groups of 2
            cons = [{"type": "ineq", "fun": lambda x: radius - sum(
                np.sqrt(x[s] ** 2 + x[s + 1] ** 2 + 1e-20) for s in range(0, p, 2))}]
    res = minimize(lambda x: huber_objective(X, y, *unpack(x), h), x0, method="SLSQP",
                   bounds=bounds, constraints=cons, options={"ftol": 1e-15, "maxiter": 2000})
    return huber_objective(X, y, *unpack(res.x), h)


@pytest.mark.parametrize("constraint", ["l2", "l1", "simplex", "group_l1"])
def test_noiseless_run_reaches_the_constrained_optimum(constraint):
    rng = np.random.default_rng(5)
    n, p, radius, h = 200, 4, 0.8, 0.5
    X = rng.normal(size=(n, p)) / 2
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]  # already within data_norm
    y = np.clip(X @ np.array([1.0, -0.5, 0.8, 0.0]) + 0.3 + 0.1 * rng.normal(size=n), -1, 1)
    model = PrivateMirrorDescentRegressor(
        solver="mirror_descent",
        epsilon=np.inf, loss="huber", epsilon_huber=h, constraint=constraint, radius=radius,
        group_size=2, max_iter=20_000, step_size=0.5, random_state=0).fit(X, y)
    reached = huber_objective(X, y, model.coef_, model.intercept_, h)
    best = scipy_optimum(constraint, X, y, radius, h, 1.0)
    assert model.noise_scale_ == 0.0 and not model.privacy_.is_private
    assert reached - best < 2e-4
    potential = md.make_potential(constraint, p, 2)
    assert potential.set_norm(model.coef_ / radius) <= 1 + 1e-12


# -- the estimator ---------------------------------------------------------------------------


def data(n=300, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    return X, np.clip(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n), -1, 1)


def test_fit_attributes_and_guarantee():
    X, y = data()
    model = PrivateMirrorDescentRegressor(solver="mirror_descent",
                                          loss="huber", random_state=0).fit(X, y.astype(int))
    assert model.coef_.dtype == np.float64 and model.coef_.shape == (5,)
    assert isinstance(model.intercept_, float)
    assert model.n_iter_ == model.max_iter_ >= 1
    mu_star = gaussian_mu(1.0, 1e-6)
    assert model.privacy_.mu == pytest.approx(mu_star, rel=1e-9) and model.privacy_.mu <= mu_star
    assert model.privacy_.spent_mu == model.privacy_.mu
    assert f"T={model.max_iter_}" in model.privacy_.mechanism
    assert f"sigma={model.noise_scale_:.4g}" in model.privacy_.mechanism
    assert model.lipschitz_ == pytest.approx(model.epsilon_huber * math.sqrt(2))
    assert model.sensitivity_ == pytest.approx(2 * model.lipschitz_ / len(y))
    assert model.gaussian_width_ == pytest.approx(md.width_l2_ball(5))
    assert np.all(np.isfinite(model.predict(X)))


def test_seeded_fits_repeat_and_unseeded_fits_differ():
    X, y = data()
    a = PrivateMirrorDescentRegressor(random_state=3).fit(X, y).coef_
    b = PrivateMirrorDescentRegressor(random_state=3).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    model = PrivateMirrorDescentRegressor().fit(X, y)
    first_rng = pickle.dumps(model._rng)
    c = model.coef_.copy()
    model.fit(X, y)
    assert not np.array_equal(c, model.coef_)
    assert pickle.dumps(model._rng) != first_rng  # a fresh OS generator after each release


def test_partial_fit_warm_starts_from_the_released_model(monkeypatch):
    X, y = data()
    starts = []
    original = md.mirror_descent

    def spy(*args, **kwargs):
        starts.append((args[2], args[3]))
        return original(*args, **kwargs)

    monkeypatch.setattr(md, "mirror_descent", spy)
    model = PrivateMirrorDescentRegressor(random_state=0, constraint="simplex")
    model.partial_fit(X[:150], y[:150])
    released = model.coef_.copy(), model.intercept_
    model.partial_fit(X[150:], y[150:])
    assert starts[0] == (None, None)
    np.testing.assert_array_equal(starts[1][0], released[0])
    assert starts[1][1] == released[1]
    assert model.privacy_.n_releases == 2 and model.privacy_.n_records == 300
    assert "parallel composition" in model.privacy_.records


def test_a_warm_start_outside_the_set_is_refused_and_changes_nothing():
    X, y = data()
    model = PrivateMirrorDescentRegressor(random_state=0, constraint="l1").fit(X, y)
    model.coef_ = np.full(5, 1.0)
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="outside the l1 constraint set"):
        model.partial_fit(X, y)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("bad", ["nan", "features"])
def test_failed_calls_leave_the_estimator_byte_identical(bad):
    X, y = data()
    model = PrivateMirrorDescentRegressor(random_state=0).fit(X, y)
    model.partial_fit(X[:50], y[:50])
    before = pickle.dumps(model)
    Xb = X.copy() if bad == "nan" else X[:, :3]
    if bad == "nan":
        Xb[3, 2] = np.nan
    with pytest.raises(ValueError):
        model.partial_fit(Xb, y)
    assert pickle.dumps(model) == before
    with pytest.raises(ValueError):
        model.fit(Xb if bad == "nan" else Xb, y[:10])
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("params,match", [
    (dict(constraint="group_l1"), "group_size"),
    (dict(solver="objective_perturbation", loss="absolute"), "smooth loss"),
    (dict(radius=1e200, data_norm=1e200), "overflows or rounds to zero"),
    (dict(data_norm=1e-300, fit_intercept=False), "overflows or rounds to zero"),
])
def test_bad_parameters_are_refused(params, match):
    X, y = data()
    with pytest.raises(ValueError, match=match):
        PrivateMirrorDescentRegressor(**params).fit(X, y)


def test_group_l1_fit():
    X, y = data(p=7)
    model = PrivateMirrorDescentRegressor(constraint="group_l1", group_size=3, radius=2.0,
                                          random_state=0).fit(X, y)
    norms = [np.linalg.norm(model.coef_[s:s + 3]) for s in range(0, 7, 3)]
    assert sum(norms) <= 2.0 * (1 + 1e-12)


def test_export_public():
    X, y = data()
    model = PrivateMirrorDescentRegressor(random_state=0).fit(X, y)
    public = model.export_public()
    assert not hasattr(public, "_rng") and public.random_state is None
    np.testing.assert_array_equal(public.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="public export"):
        public.partial_fit(X, y)
    pickle.loads(pickle.dumps(public))


def test_predict_clips_rows_like_training():
    X, y = data()
    model = PrivateMirrorDescentRegressor(random_state=0, data_norm=0.5).fit(X, y)
    big = np.array([[100.0, 0, 0, 0, 0]])
    assert model.predict(big)[0] == pytest.approx(0.5 * model.coef_[0] + model.intercept_)


def test_the_docstring_example_is_collected():
    from tests.test_docstring_examples import PUBLIC  # noqa: PLC0415

    assert PrivateMirrorDescentRegressor in PUBLIC


# -- objective perturbation (the core module comes from a parallel branch) ------------------


def test_objective_perturbation_projects_on_the_set():
    pytest.importorskip("sklearn_dpol._core.objective_perturbation")
    X, y = data()
    model = PrivateMirrorDescentRegressor(solver="objective_perturbation", constraint="l1",
                                          radius=0.5, random_state=0).fit(X, y)
    assert np.sum(np.abs(model.coef_)) <= 0.5 * (1 + 1e-12)
    assert abs(model.intercept_) <= 1.0
    assert math.isnan(model.privacy_.mu)
    model.partial_fit(X[:100], y[:100])
    assert model.privacy_.n_releases == 2


# -- the step for smooth losses -----------------------------------------------------------

@pytest.mark.parametrize("constraint", ["l2", "l1", "simplex"])
def test_smooth_step_respects_its_cap_and_takes_the_better_bound(constraint):
    potential = md.make_potential(constraint, 20, None)
    for loss, epsilon in [("squared", 1.0), ("huber", 0.3), ("squared", 10.0)]:
        cal = md.calibrate(potential, n_samples=5000, loss=loss, huber_threshold=1.0,
                           radius=2.0, data_norm=1.0, y_bound=1.0, intercept=True,
                           epsilon=epsilon, delta=1e-6, n_features=20)
        derivative = md.derivative_bound(loss, 1.0, 2.0, 1.0, 1.0, True)
        geo = md.geometry(potential, derivative, 2.0, 1.0, 1.0, True)
        theorem = md.theorem_step_size(cal.n_steps, geo, cal.noise_scale)
        smooth = md.smooth_step_size(cal.n_steps, geo, cal.noise_scale, potential, loss=loss,
                                     radius=2.0, data_norm=1.0, y_bound=1.0, intercept=True)
        modulus = md.strong_convexity(potential)
        assert smooth <= modulus / (2 * (4.0 + 1.0)) * (1 + 1e-12)
        noise = cal.noise_scale ** 2 * geo.noise_sq
        bounds = {theorem: geo.psi_max / (theorem * cal.n_steps)
                  + theorem * (geo.grad_sq + noise),
                  smooth: geo.psi_max / (smooth * cal.n_steps) + smooth * noise / modulus}
        assert cal.step_size == min(bounds, key=bounds.get)


def test_absolute_loss_and_group_l1_keep_the_theorem_step():
    for constraint, loss, group in [("l2", "absolute", None), ("group_l1", "squared", 5)]:
        potential = md.make_potential(constraint, 20, group)
        cal = md.calibrate(potential, n_samples=5000, loss=loss, huber_threshold=1.0,
                           radius=2.0, data_norm=1.0, y_bound=1.0, intercept=True,
                           epsilon=1.0, delta=1e-6, n_features=20)
        derivative = md.derivative_bound(loss, 1.0, 2.0, 1.0, 1.0, True)
        geo = md.geometry(potential, derivative, 2.0, 1.0, 1.0, True)
        assert cal.step_size == md.theorem_step_size(cal.n_steps, geo, cal.noise_scale)


def test_noiseless_squared_loss_reaches_the_constrained_optimum_with_many_steps():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(3000, 8)) / np.sqrt(8)
    y = np.clip(X @ rng.normal(size=8) * 2, -1, 1)
    # The default count at epsilon=inf is the compute cap (a few thousand steps
    # here); a million Gram steps take about a second.
    model = PrivateMirrorDescentRegressor(solver="mirror_descent",
                                          epsilon=np.inf, loss="squared", constraint="l2",
                                          radius=10.0, max_iter=1_000_000).fit(X, y)
    reference = np.linalg.lstsq(np.c_[X, np.ones(len(y))], y, rcond=None)[0]
    assert np.linalg.norm(reference[:-1]) < 10.0   # the ball is not active
    # The average of the iterates converges like 1/T: close, not exact.
    np.testing.assert_allclose(np.r_[model.coef_, model.intercept_], reference, atol=1e-3)
