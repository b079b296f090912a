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


def test_a_nan_budget_adds_infinite_noise_not_none():
    """tau(NaN) was inf: scale 0, the gradient released exactly."""
    randomizer = LocalLaplaceRandomizer(np.array([0.5, 0.5]))
    assert np.all(randomizer.scales(np.nan) == np.inf)
    report = randomizer.report(np.array([0.3, -0.7]), np.nan, np.random.default_rng(0))
    assert not np.array_equal(report, [0.3, -0.7])
    assert np.all(np.isfinite(report))
