"""Section 55.9: a private quantile of values beyond its public grid lands at the near end.

Review 112 (U1): values above the grid's top fell in no candidate's interval, every
candidate tied, and the public prior released the far end: y in cents gave
``y_bound_ = 2.27e-6`` and R^2 -9.66, X times 1e7 with ``data_norm="auto"`` R^2 -5.9e24,
without a warning. The last candidate's interval is now open (values clipped to the top,
record by record: the sensitivity stays 1), and a release at an end of the grid warns
(post-processing of the release).
"""

import warnings

import numpy as np
import pytest

from sklearn_dpol import PrivateMirrorDescentRegressor, PrivateQFTLRegressor
from sklearn_dpol._auto_bounds import AUTO_GRID
from sklearn_dpol.exceptions import GridEdgeWarning
from sklearn_dpol.privacy._quantile import _distances, private_quantile, quantile_probabilities


def test_values_above_the_grid_release_its_top_and_below_it_its_bottom():
    rng = np.random.default_rng(0)
    high = rng.uniform(2e6, 3e6, size=1000)
    assert private_quantile(high, 0.98, AUTO_GRID, np.inf, 0) == AUTO_GRID[-1]
    assert quantile_probabilities(high, 0.98, AUTO_GRID, 1.0, slope=0.25)[-1] > 1 - 1e-9
    low = rng.uniform(1e-9, 2e-9, size=1000)
    assert private_quantile(low, 0.02, AUTO_GRID, np.inf, 0) == AUTO_GRID[0]
    signed = np.concatenate([-AUTO_GRID[::-1], AUTO_GRID])
    assert private_quantile(-high, 0.02, signed, np.inf, 0) == signed[0]


def test_the_open_interval_keeps_the_sensitivity():
    rng = np.random.default_rng(1)
    grid = AUTO_GRID[60:100]
    for _ in range(200):
        values = np.exp(rng.normal(scale=6, size=25))
        other = values.copy()
        other[rng.integers(25)] = rng.choice([1e-12, 1e12, float(rng.lognormal())])
        for q in (0.02, 0.5, 0.98):
            move = np.abs(_distances(values, q, grid) - _distances(other, q, grid))
            assert move.max() <= 1


def _fit(make, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make().fit(X, y)
    return model, [w for w in caught if issubclass(w.category, GridEdgeWarning)]


@pytest.mark.parametrize("scale", [1.0, 1e7])
def test_targets_in_other_units_and_the_warning(scale):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    y = X @ np.array([1.0, 2.0, -1.0]) + 0.1 * rng.normal(size=20_000)
    model, warned = _fit(lambda: PrivateQFTLRegressor(data_norm=np.sqrt(3), y_bound="auto",
                                                      random_state=0), X, scale * y)
    if scale == 1.0:
        assert 1 < model.y_bound_ < 8 and not warned
        assert model.score(X, y) > 0.99
    else:
        assert model.y_bound_ == AUTO_GRID[-1]       # was 2.27e-6 (R^2 -9.66)
        assert len(warned) == 1 and "top of its public grid" in str(warned[0].message)
        assert model.score(X, scale * y) > 0.05


def test_a_bound_at_the_bottom_warns_and_one_inside_does_not():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(5000, 2))
    y = X[:, 0]
    model, warned = _fit(lambda: PrivateMirrorDescentRegressor(
        data_norm="auto", y_bound=1.0, random_state=0), X * 1e-8, y)
    assert model.data_norm_ == AUTO_GRID[0]
    assert len(warned) == 1 and "bottom of its public grid" in str(warned[0].message)
    model, warned = _fit(lambda: PrivateMirrorDescentRegressor(
        data_norm="auto", y_bound=1.0, random_state=0), X, y)
    assert AUTO_GRID[0] < model.data_norm_ < AUTO_GRID[-1] and not warned
