"""The public local randomisers fail closed (session 29 review of the local-DP protocols)."""

import numpy as np
import pytest

from sklearn_dpol._core.local_randomizers import (
    LocalGaussianRandomizer,
    LocalLaplaceRandomizer,
)
from sklearn_dpol.privacy import local_gaussian_report


@pytest.mark.parametrize("gradient", [[np.nan, 1e6], [np.inf, -1e6], [-np.inf, 0.5],
                                      [1e200, 1e200]])
def test_a_non_finite_gradient_is_reported_as_the_zero_vector(gradient):
    """A NaN made the norm NaN, ``NaN > L`` is false, so the gradient passed unclipped
    and the report carried 1e6 at noise 1 (mu 2e6 against the stated 2). The kernel's
    rule: a gradient whose squared norm is not finite is replaced by 0."""
    randomizer = LocalGaussianRandomizer(sigma=1.0, clip_norm=1.0)
    np.testing.assert_array_equal(randomizer.clip(gradient), [0.0, 0.0])
    reports = np.array([local_gaussian_report(gradient, 1.0, clip_norm=1.0)
                        for _ in range(200)])
    assert np.all(np.abs(reports.mean(axis=0)) < 0.5)


def test_finite_gradients_are_clipped_as_before():
    randomizer = LocalGaussianRandomizer(sigma=1.0, clip_norm=1.0)
    np.testing.assert_allclose(randomizer.clip([3.0, 4.0]), [0.6, 0.8], rtol=1e-15)
    np.testing.assert_array_equal(randomizer.clip([0.3, -0.4]), [0.3, -0.4])


@pytest.mark.parametrize("epsilon", [np.nan, 0.0, -1.0, -np.inf])
def test_an_invalid_budget_adds_infinite_noise_not_none(epsilon):
    """tau(NaN) was inf and tau(-1) negative: scale 0 or negative, the gradient released
    without noise. Only epsilon = inf (or a weight 0) adds none; the kernel's laplace_scale
    fails closed the same way."""
    randomizer = LocalLaplaceRandomizer(np.array([0.5, 0.5]))
    assert np.all(randomizer.scales(epsilon) == np.inf)
    report = randomizer.report(np.array([0.3, -0.7]), epsilon, np.random.default_rng(0))
    np.testing.assert_array_equal(report, [0.0, 0.0])
    assert np.all(randomizer.scales(np.inf) == 0.0)


# -- one lattice for every budget (doc/privacy.md 53.7) -------------------------------

from sklearn_dpol._core import _exact_kernels as K  # noqa: E402
from sklearn_dpol.privacy import local_laplace_report  # noqa: E402

BUDGETS = (0.3, 1.0, 2.5, 8.0)


def _lowest_bit_guess(report, gammas):
    """The review's attack: the budget whose grid step is the reports' largest common
    power-of-two step (a coordinate's lowest set bit is its grid step half the time)."""
    votes = []
    for gamma in gammas:
        votes.append(np.all(report / gamma == np.round(report / gamma)))
    # the coarsest grid that holds every coordinate
    fitting = [g for g, ok in zip(gammas, votes) if ok]
    return max(fitting) if fitting else None


def _grid_reports(gradient, epsilon, rng):
    """Positive control: the release on the scale's own grid (the code before)."""
    weights = np.full(gradient.size, 1.0 / gradient.size)
    scales = 2.0 / (epsilon * weights)
    out = np.empty_like(gradient)
    ws = K.workspace()
    state = K.generator_state(rng)
    for j in range(gradient.size):
        out[j] = K.release_value(float(np.clip(gradient[j], -1, 1)), scales[j], False, ws, state)
    return out


def test_a_report_does_not_tell_its_users_budget():
    """Every coordinate of every report lies on LAPLACE_REPORT_LATTICE, whatever the budget:
    the lowest-bit attack that identified 587 of 600 users' budgets (one report of 5
    coordinates) finds the same step for all. Positive control: on each scale's own grid
    the attack identifies the budget almost always."""
    rng = np.random.default_rng(0)
    d = 5
    gradient = rng.uniform(-1, 1, d)
    grid_steps = [K.grid(2.0 * d / eps)[0] for eps in BUDGETS]
    hits_grid = hits_lattice = 0
    trials = 60
    for _ in range(trials):
        for eps, step in zip(BUDGETS, grid_steps):
            old = _grid_reports(gradient, eps, rng)
            hits_grid += _lowest_bit_guess(old, grid_steps) == step
            new = local_laplace_report(gradient, eps, random_state=rng)
            lattice = K.LAPLACE_REPORT_LATTICE
            assert np.all(new / lattice == np.round(new / lattice))
            hits_lattice += _lowest_bit_guess(new, grid_steps) == step
    total = trials * len(BUDGETS)
    assert hits_grid > 0.9 * total
    assert hits_lattice < 0.5 * total      # no better than the coarsest-step guess


@pytest.mark.parametrize("epsilon", [1e12, 1e15, np.inf])
def test_a_large_budget_reports_the_gradient_not_a_shrunk_one(epsilon):
    """On the scale's grid, 2^62 grid steps of a tiny scale are below the gradient: a
    budget of 1e12 reported +-0.125 for +-1 (the review). On the lattice the report is the
    gradient up to noise of at most a few lattice steps (scale at most 4 steps, so
    below 40 steps, 0.01, with probability above 1 - e^-10 per coordinate)."""
    g = np.array([1.0, -1.0, 0.9, 0.123456])
    reports = np.array([local_laplace_report(g, epsilon) for _ in range(50)])
    assert np.all(np.abs(reports - g) <= 40 * K.LAPLACE_REPORT_LATTICE)


def test_the_lattice_multiplier_covers_the_scale():
    """gamma S >= scale + gamma (the grid's inequality, doc/privacy.md sections 14 and
    53.7) for coordinate budgets from 2^-16 up; a smaller budget reports the constant 0;
    no noise rounds to the lattice without drawing."""
    gamma = K.LAPLACE_REPORT_LATTICE
    for tau in np.geomspace(2.0**-16 * 1.0001, 1e9, 400):
        scale = 2.0 / tau
        step, multiplier = K.lattice_entry(scale, gamma)
        assert step == gamma and 2 <= multiplier < K.MAX_MULTIPLIER
        assert step * multiplier >= scale + step
    assert K.lattice_entry(2.0 / 2.0**-17, gamma)[1] == K.CONSTANT
    for scale in (np.inf, np.nan, 1e300):
        assert K.lattice_entry(scale, gamma)[1] == K.CONSTANT
    assert K.lattice_entry(0.0, gamma)[1] == K.ROUND_ONLY
    assert local_laplace_report([0.7, -0.2], 1e-9).tolist() == [0.0, 0.0]


# -- review 127 (doc/privacy.md 58.1) ---------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(sigma=1.0, clip_norm=5e-324),
                                    dict(sigma=1.0, clip_norm=1e-310),
                                    dict(sigma=1e-316, clip_norm=1.0),
                                    dict(sigma=1e101, clip_norm=1.0),
                                    dict(sigma=float("nan"), clip_norm=1.0)])
def test_a_gaussian_report_refuses_scales_outside_the_normal_range(kwargs):
    """A subnormal clip_norm rounded the clipped gradient up to twice its norm (2 mu-GDP);
    a subnormal sigma crashed the grid. Both refused with a ValueError before the report."""
    with pytest.raises(ValueError, match="must lie in"):
        local_gaussian_report([0.3, -2.0, 1.0], random_state=0, **kwargs)


def test_a_subnormal_clip_norm_would_have_doubled_the_sensitivity():
    # The premise of the refusal above: clipping to one subnormal step in d = 3 gives a
    # vector longer than the step (each coordinate rounds up to a whole step).
    step = 5e-324
    g = np.array([1.0, 1.0, 1.0])
    clipped = g * (step / np.linalg.norm(g))
    assert np.sqrt(np.sum((clipped / step) ** 2)) > 1.7


@pytest.mark.parametrize("report", ["laplace", "sampled", "gaussian"])
def test_an_empty_gradient_is_a_value_error(report):
    from sklearn_dpol.privacy import local_sampled_coordinate_report

    if report == "gaussian":
        with pytest.raises(ValueError, match="no coordinates"):
            local_gaussian_report([], sigma=1.0, clip_norm=1.0, random_state=0)
        return
    fn = local_laplace_report if report == "laplace" else local_sampled_coordinate_report
    with pytest.raises(ValueError, match="no coordinates"):
        fn([], epsilon=1.0, random_state=0)


@pytest.mark.parametrize("weights", [np.array(["0.5"] * 4), np.array([b"1"] * 4),
                                     np.array(["0.5", 0.5, 0.5, 0.5], dtype=object)])
def test_string_sample_weights_are_refused(weights):
    from sklearn_dpol import MutualInformationPrivateOGDRegressor, ParameterFreeLocalDPRegressor

    X, y = np.zeros((4, 2)), np.zeros(4)
    for est in (ParameterFreeLocalDPRegressor(random_state=0),
                MutualInformationPrivateOGDRegressor(random_state=0)):
        with pytest.raises(ValueError, match="numeric"):
            est.fit(X, y, sample_weight=weights)
        assert not hasattr(est, "coef_")
