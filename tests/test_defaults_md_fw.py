"""The public default rules of mirror descent and Frank-Wolfe (issues 17 and 19).

Pinned here: the closed-form GDP calibration of mirror descent, its step-count
rule (formula, continuity, work nondecreasing in n, epsilon=inf), the
``alpha="auto"`` rule of its objective perturbation, Frank-Wolfe's
bound-minimising step count, and that every rule reads no private data
(changing or permuting X and y at the same n leaves the resolved values
unchanged) and is resolved into a fitted attribute, never into the parameter.
"""

import math
import time

import numpy as np
import pytest

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor
from sklearn_dpol._core import frank_wolfe as fw
from sklearn_dpol._core import mirror_descent as md
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.linear_model._mirror_descent import OP_SIGNAL_FRACTION
from sklearn_dpol.privacy import compose_gdp, gaussian_delta, gaussian_mu

# -- mirror descent: the calibration in closed form ---------------------------------------------


@pytest.mark.parametrize("n_steps", [1, 2, 7, 300, 12_345, 1_000_000])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_closed_form_calibration_is_the_composition(n_steps, epsilon):
    sensitivity = 2 * 1.7 / 5000
    sigma, mu = md.noise_scale(sensitivity, n_steps, epsilon, 1e-6)
    mu_star = gaussian_mu(epsilon, 1e-6)
    assert mu <= mu_star and gaussian_delta(epsilon, mu) <= 1e-6
    assert sigma == pytest.approx(sensitivity * math.sqrt(n_steps) / mu_star, rel=1e-12)
    if n_steps <= 12_345:  # the loop the closed form replaces
        assert mu == pytest.approx(compose_gdp([sensitivity / sigma] * n_steps), rel=1e-12)


def test_calibration_cost_does_not_grow_with_the_step_count():
    md.noise_scale.cache_clear()
    start = time.perf_counter()
    for k in range(20):
        md.noise_scale(1e-3 * (1 + k), 1_000_000, 1.0, 1e-6)
    # A loop over the steps took seconds per call here; the closed form is O(1).
    assert time.perf_counter() - start < 1.0


# -- mirror descent: the step-count rule ------------------------------------------------------


def steps(n, p=10, loss="squared", epsilon=1.0, constraint="l2", radius=1.0, data_norm=1.0,
          y_bound=1.0, intercept=True):
    potential = md.make_potential(constraint, p, 2 if constraint == "group_l1" else None)
    return md.calibrate(potential, n_samples=n, loss=loss, huber_threshold=1.0, radius=radius,
                        data_norm=data_norm, y_bound=y_bound, intercept=intercept,
                        epsilon=epsilon, delta=1e-6, n_features=p).n_steps


@pytest.mark.parametrize("loss", ["squared", "huber"])
@pytest.mark.parametrize("n,epsilon", [(1000, 0.5), (20_000, 1.0), (300_000, 2.0)])
def test_smooth_step_count_is_the_bound_floor_softly_capped(loss, n, epsilon):
    p, r, R, Y = 10, 2.0, 1.0, 1.5
    derivative = R * r + 2 * Y if loss == "squared" else 1.0
    lipschitz = derivative * norm_bound(R, 1.0)
    width = md.width_l2_ball(p)
    beta, psi, c = r**2 * R**2 + Y**2, 0.5 + 0.5, 1.0
    noise_sq = r**2 * (width**2 + 1) + Y**2
    mu = gaussian_mu(epsilon, 1e-6)
    floor = 2 * beta * mu / (2 * lipschitz / n) * math.sqrt(psi / (c * noise_sq))
    if loss == "squared":
        step = p * p + p + md.GRAM_STEP_OVERHEAD
        low, high = md.PASS_BUDGET + n * p * p / step, md.COMPUTE_BUDGET / step
    else:
        low, high = md.PASS_BUDGET, md.COMPUTE_BUDGET / (n * p)
    cap = (low ** 4 + high ** 4) ** 0.25
    expected = round((floor ** -4 + cap ** -4) ** -0.25)
    assert steps(n, p, loss, epsilon, radius=r, data_norm=R, y_bound=Y) == expected


def test_nonsmooth_and_l1_keep_the_theorem_count():
    # Absolute loss (no smoothness) and the L1 ball (modulus 1/(2e^2) < 1/2).
    for loss, constraint in [("absolute", "l2"), ("squared", "l1")]:
        n, p = 4000, 10
        potential = md.make_potential(constraint, p)
        derivative = md.derivative_bound(loss, 1.0, 1.0, 1.0, 1.0, True)
        lipschitz = md.lipschitz_constant(derivative, 1.0, True)
        geo = md.geometry(potential, derivative, 1.0, 1.0, 1.0, True)
        theorem = md.theorem_iterations(n, gaussian_mu(1.0, 1e-6), geo, lipschitz)
        expected = round(md.soft_min(theorem, md.iteration_cap(loss, n, p)))
        assert steps(n, p, loss, constraint=constraint) == expected


@pytest.mark.parametrize("loss,constraint", [("squared", "l2"), ("huber", "l2"),
                                             ("absolute", "l2"), ("squared", "l1"),
                                             ("huber", "simplex"), ("squared", "group_l1")])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, np.inf])
def test_step_count_is_continuous_and_work_never_drops_as_n_grows(loss, constraint, epsilon):
    p = 10
    sizes = np.unique(np.round(np.geomspace(200, 2_000_000, 400)).astype(int))
    counts = np.array([steps(int(n), p, loss, epsilon, constraint) for n in sizes])
    gram = loss == "squared"  # the squared loss may step on the Gram matrix (p <= 4096)
    # Work in multiply-adds: the Gram matrix then p^2 a step, or n p a step.
    # Counts are rounded: where the cap ~ 1/n binds, work may dip by under one step.
    work = sizes * p * p + counts * p * p if gram else counts * sizes * p
    step = p * p if gram else sizes[1:] * p
    assert np.all(np.diff(work) >= -step)
    # Flat at most (the fixed compute budget of small n), and growing in the end.
    assert np.all(work[40::40] >= work[:-40:40] - step.max() if not gram else
                  work[40::40] >= work[:-40:40])
    assert work[-1] > work[0]
    # No jumps: neighbouring sizes (1.2% apart; T* grows like n^2) change the count by
    # under 10% (beyond the rounding of counts below 50).
    ratio = counts[1:] / counts[:-1]
    large = counts[:-1] >= 50
    assert np.all((ratio[large] < 1.1) & (ratio[large] > 1 / 1.1))


def test_infinite_epsilon_takes_the_compute_cap():
    for loss in ("squared", "huber", "absolute"):
        assert steps(50_000, 10, loss, np.inf) == min(
            md.MAX_AUTO_ITER, round(md.iteration_cap(loss, 50_000, 10)))


def test_default_times_stay_within_the_counterparts_budget():
    # The issue-19 shapes: a few thousand Gram steps, at most ~2,400 passes for Huber.
    squared = [steps(n, 10, "squared") for n in (10_000, 100_000, 1_000_000)]
    huber = [steps(n, 10, "huber") for n in (10_000, 100_000, 1_000_000)]
    assert squared == sorted(squared) and max(squared) < 0.05 * 1_000_000
    # Fewer steps than the fixed budget: the bound's floor, not the cap, decides.
    assert max(squared) < 0.1 * md.iteration_cap("squared", 1_000_000, 10)
    assert max(huber) <= 1.1 * md.PASS_BUDGET * 1.2


# -- the rules read no private data ---------------------------------------------------------------


def variants(X, y, rng):
    """Same n, other values: permuted, negated, zeroed, or fresh noise at another scale."""
    yield X[::-1].copy(), y[::-1].copy()
    yield -X, -y
    yield np.zeros_like(X), np.zeros_like(y)
    yield 100 * rng.normal(size=X.shape), 100 * rng.normal(size=y.shape)


@pytest.mark.parametrize("params", [
    # mirror descent by name (session 34: "auto" fits the dense L2 case by objective
    # perturbation), and the default "auto" itself
    dict(loss="squared", solver="mirror_descent"), dict(),
    dict(loss="huber", constraint="l1", radius=3.0),
    dict(loss="absolute", epsilon=0.5), dict(solver="objective_perturbation"),
    dict(solver="objective_perturbation", loss="huber", fit_intercept=False, epsilon=2.0),
])
def test_mirror_descent_rules_read_no_data(params):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (700, 6)), rng.uniform(-1, 1, 700)
    attributes = ("max_iter_", "step_size_", "noise_scale_", "alpha_", "sensitivity_")
    reference = PrivateMirrorDescentRegressor(random_state=0, **params).fit(X, y)
    for X2, y2 in variants(X, y, rng):
        other = PrivateMirrorDescentRegressor(random_state=1, **params).fit(X2, y2)
        for name in attributes:
            np.testing.assert_equal(getattr(other, name), getattr(reference, name))
    assert reference.max_iter is None and reference.alpha == "auto"


def test_frank_wolfe_rule_reads_no_data():
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, (900, 30)), rng.uniform(-1, 1, 900)
    for selection in ("exponential", "gaussian"):
        reference = PrivateFrankWolfeLasso(selection=selection, random_state=0).fit(X, y)
        for X2, y2 in variants(X, y, rng):
            other = PrivateFrankWolfeLasso(selection=selection, random_state=2).fit(X2, y2)
            assert other.max_iter_ == reference.max_iter_
            assert other.noise_scale_ == reference.noise_scale_
        assert reference.max_iter is None


# -- objective perturbation: alpha="auto" -------------------------------------------------------


@pytest.mark.parametrize("epsilon,intercept", [(0.5, True), (1.0, False), (4.0, True)])
def test_auto_alpha_balances_ridge_and_noise(epsilon, intercept):
    n, p, r, R, Y = 3000, 7, 2.0, 1.0, 1.5
    rng = np.random.default_rng(2)
    X, y = rng.uniform(-1, 1, (n, p)) / math.sqrt(p), rng.uniform(-1, 1, n)
    model = PrivateMirrorDescentRegressor(
        solver="objective_perturbation", epsilon=epsilon, radius=r, data_norm=R, y_bound=Y,
        fit_intercept=intercept, random_state=0).fit(X, y)
    feature_norm = norm_bound(R, 1.0) if intercept else R
    derivative = md.derivative_bound("squared", 1.0, r, R, Y, intercept)

    def plan_at(alpha):
        return op.plan(epsilon, 1e-6, n_samples=n, feature_norm=feature_norm,
                       derivative_bound=derivative, curvature_bound=1.0, alpha=alpha)

    floor, chosen = plan_at(0.0), plan_at(model.alpha_)
    k = p + int(intercept)
    extent = math.hypot(r, Y) if intercept else r
    # Lambda = max(Lambda_w, sqrt(Lambda_w Lambda_f)) at the noise of the plan at Lambda
    # itself (the fixed point), not at the floor's (larger) noise.
    sigma = chosen.noise_std
    worst = math.sqrt(k) * sigma / extent
    flat = k * sigma ** 2 / (n * (OP_SIGNAL_FRACTION * Y) ** 2)
    assert chosen.regularization > floor.regularization
    assert n * model.alpha_ == pytest.approx(max(worst, math.sqrt(worst * flat)), rel=1e-9)
    # Both branches are exercised: the prior raises the ridge at epsilon 0.5 (n = 3000).
    assert (flat > worst) == (epsilon == 0.5)
    assert model.noise_scale_ == chosen.noise_std < floor.noise_std
    fixed = PrivateMirrorDescentRegressor(solver="objective_perturbation", alpha=0.5,
                                          epsilon=epsilon, random_state=0).fit(X, y)
    assert fixed.alpha_ == pytest.approx(0.5) and fixed.alpha == 0.5


def test_self_consistent_plan_root_and_floor():
    kwargs = dict(n_samples=5000, feature_norm=math.sqrt(2.0), derivative_bound=3.0,
                  curvature_bound=1.0)
    floor = op.plan(1.0, 1e-6, alpha=0.0, **kwargs)
    # A rule below the floor at the floor's noise keeps the floor.
    low = op.self_consistent_plan(1.0, 1e-6, rule=lambda s: 1e-3 * s, **kwargs)
    assert low == floor
    # Otherwise the root: Lambda = rule(sigma(Lambda)), sigma strictly below the floor's.
    for weight in (0.5, 3.0, 40.0):
        chosen = op.self_consistent_plan(1.0, 1e-6, rule=lambda s: weight * s, **kwargs)
        assert chosen.regularization == pytest.approx(weight * chosen.noise_std, rel=1e-9)
        assert chosen.noise_std < floor.noise_std
        again = op.plan(1.0, 1e-6, alpha=chosen.regularization / 5000, **kwargs)
        assert again.noise_std == pytest.approx(chosen.noise_std, rel=1e-12)
    # A rule a rounding error above the floor: no bracketing failure, a plan at the floor.
    weight = floor.regularization * (1.0 + 1e-13) / floor.noise_std
    edge = op.self_consistent_plan(1.0, 1e-6, rule=lambda s: weight * s, **kwargs)
    assert edge.regularization == pytest.approx(floor.regularization, rel=1e-9)
    assert edge.regularization >= floor.regularization
    unlimited = op.self_consistent_plan(np.inf, 1e-6, rule=lambda s: 3.0 * s, **kwargs)
    assert unlimited.noise_std == 0.0


def test_auto_alpha_without_noise_and_under_mirror_descent():
    rng = np.random.default_rng(3)
    X, y = rng.uniform(-1, 1, (400, 4)) / 2, rng.uniform(-1, 1, 400)
    model = PrivateMirrorDescentRegressor(solver="objective_perturbation", epsilon=np.inf,
                                          random_state=0).fit(X, y)
    # alpha="auto" resolves to 1e-10 here; alpha_ reports the ridge the solve used,
    # raised from public values to certify its tolerance (doc/privacy.md 54.16.4).
    plan = model._objective_plan(400, 4)[0]
    assert plan.regularization / 400 == pytest.approx(1e-10)
    assert model.alpha_ == op.solve_regularization(plan, (400, 5)) / 400 >= 1e-10
    assert math.isnan(PrivateMirrorDescentRegressor(solver="mirror_descent",
                                                    random_state=0).fit(X, y).alpha_)


# -- Frank-Wolfe: the rule against the seed's count on the issue-17 problem -------------------


def test_frank_wolfe_rule_beats_the_seeds_count_at_n_32000():
    n, p = 32_000, 500
    rng = np.random.default_rng(0)
    support = rng.choice(p, 10, replace=False)
    theta = np.zeros(p)
    theta[support] = 0.1 * rng.choice([-1.0, 1.0], 10)
    X = rng.uniform(-1, 1, (n, p)).astype(np.float32)
    y = np.clip(X @ theta + 0.1 * rng.normal(size=n), -1, 1)
    problem = fw.ClippedLeastSquares(X, y, feature_bound=1.0, y_bound=1.0, intercept=False,
                                     precompute=True)
    G, b = problem.gram, problem.linear

    def risk(n_steps, seed):
        w, _, _ = fw.frank_wolfe_on(problem, np.zeros(p), selection="exponential",
                                    epsilon=1.0, delta=1e-6, radius=1.0, feature_bound=1.0,
                                    y_bound=1.0, intercept=False, positive=False,
                                    n_steps=n_steps, step_size="decreasing", t_start=0,
                                    rng=np.random.default_rng(seed))
        return 0.5 * w @ G @ w - b @ w

    rule = fw.default_iterations("exponential", n_samples=n, n_dims=p, epsilon=1.0,
                                 delta=1e-6, radius=1.0, feature_bound=1.0, y_bound=1.0,
                                 positive=False, intercept=False)
    assert rule == 48   # the seed's (Gamma n eps / (L W))^(2/3) is 1,600 here, the bound's 253
    ours = np.mean([risk(rule, seed) for seed in range(2)])
    seeds = np.mean([risk(1600, seed) for seed in range(2)])
    former = np.mean([risk(253, seed) for seed in range(2)])
    assert ours < 0.75 * former < 0.75 * seeds


# -- the defaults of benchmarks/bench_defaults.py (parts fw and md), resolved without the data ---


# (n, d, feature_bound, y_bound) of the benchmark's training splits and public scaling
# (bench_qftl.py's loaders: rows of L2 norm <= 1; cal_housing entries in +-0.5/sqrt(2),
# protein's in +-1/3), and the resolved defaults its tables and the README report at
# epsilon = 0.5 / 1 / 2: Frank-Wolfe's max_iter_, mirror descent's max_iter_, objective
# perturbation's alpha_; all at the default radius="auto" (doc/privacy.md sections 41 and
# "radius='auto' that tracks the noise": radius_ = c y_bound / feature_bound for Frank-Wolfe,
# c y_bound / data_norm for mirror descent, c from (n, d, epsilon, delta); the last entry,
# (Frank-Wolfe's, mirror descent's) at each epsilon).
BENCHMARK_DEFAULTS = {
    "cal_housing": ((16_512, 8, 0.5 / math.sqrt(2.0), 0.5),
                    (38, 62, 101), (321, 641, 1273), (0.0080097, 0.0038571, 0.0019004),
                    ((1.646636, 2.042061, 2.526586), (1.334708, 1.655225, 2.047965))),
    "protein": ((36_584, 9, 1.0 / 3.0, 2.0),
                (67, 110, 178), (709, 1419, 2815), (0.0034968, 0.0017134, 0.0008491),
                ((8.98204, 11.138995, 13.781972), (6.824716, 8.463608, 10.471790))),
}


@pytest.mark.parametrize("name", sorted(BENCHMARK_DEFAULTS))
def test_benchmark_defaults_resolve_from_the_shape_and_bounds_only(name):
    (n, d, B, Y), fw_steps, md_steps, op_alphas, radii = BENCHMARK_DEFAULTS[name]
    rng = np.random.default_rng(4)
    # Data of the benchmark's shape within its bounds, but not its data: two draws
    # (and zeros) resolve to the counts the benchmark reported on the real split.
    draws = [(rng.uniform(-B, B, (n, d)), rng.uniform(-Y, Y, n)),
             (np.zeros((n, d)), np.zeros(n))]
    for k, epsilon in enumerate((0.5, 1.0, 2.0)):
        for X, y in draws:
            frank_wolfe = PrivateFrankWolfeLasso(
                epsilon=epsilon, feature_bound=B, y_bound=Y, random_state=0).fit(X, y)
            assert frank_wolfe.max_iter_ == fw_steps[k]
            mirror = PrivateMirrorDescentRegressor(   # bench_defaults.py's md part
                epsilon=epsilon, data_norm=1.0, y_bound=Y, solver="mirror_descent",
                random_state=0).fit(X, y)
            assert mirror.max_iter_ == md_steps[k]
            perturbed = PrivateMirrorDescentRegressor(
                epsilon=epsilon, data_norm=1.0, y_bound=Y, solver="objective_perturbation",
                random_state=0).fit(X, y)
            assert perturbed.alpha_ == pytest.approx(op_alphas[k], rel=1e-3)
            assert frank_wolfe.radius_ == pytest.approx(radii[0][k], rel=1e-6)
            assert mirror.radius_ == perturbed.radius_ == pytest.approx(radii[1][k], rel=1e-6)
            assert frank_wolfe.radius == mirror.radius == "auto"
            assert frank_wolfe.max_iter is None and mirror.max_iter is None
            assert perturbed.alpha == "auto"
