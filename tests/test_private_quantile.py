"""The private quantile (exponential mechanism on a public grid), doc/privacy.md."""

import math

import numpy as np
import pytest
from scipy import stats

from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.privacy._quantile import (
    _distances,
    geometric_grid,
    private_quantile,
    quantile_probabilities,
    quantile_scale,
)


def test_geometric_grid():
    grid = geometric_grid(-2, 2)
    assert grid.tolist() == [-4, -2, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2, 4]
    assert geometric_grid(0, 3, signed=False).tolist() == [1, 2, 4, 8]


def test_scale_is_exact_and_below_half_epsilon():
    for eps in [0.1, 1.0, 1 / 3, 2.5, 1e-5]:
        s = quantile_scale(eps)
        assert 2 * s + 2**-62 <= eps and s > eps / 2 * (1 - 2**-19)
        m, _ = math.frexp(s)
        assert m * 2**21 == int(m * 2**21)
        for d in [1, 12345, 2**31 - 1]:  # exponents are exact products
            assert float(d) * s == math.ldexp(int(m * 2**21) * d, math.frexp(s)[1] - 21)


def test_near_true_quantile_on_easy_data():
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 100, size=5000)
    grid = np.linspace(0, 100, 101)
    for q in [0.1, 0.5, 0.9]:
        released = [private_quantile(values, q, grid, 1.0, seed) for seed in range(20)]
        assert np.max(np.abs(np.array(released) - np.quantile(values, q))) <= 3.0


def test_noise_off_is_the_best_candidate():
    values = np.arange(1, 101, dtype=float)
    grid = np.arange(0, 201, dtype=float)
    assert private_quantile(values, 0.5, grid, np.inf, 0) == 50.0
    # q = 0: the largest candidate at or below the smallest value (rounded outward).
    assert private_quantile(values, 0.0, grid, np.inf, 0) == 1.0
    assert private_quantile(values, 1.0, grid, np.inf, 0) == 100.0


def test_law_is_the_exponential_mechanism():
    rng = np.random.default_rng(1)
    values = rng.normal(size=40)
    grid = np.linspace(-2, 2, 9)
    p = quantile_probabilities(values, 0.3, grid, 1.0)
    # the exact law: P(j) ~ exp(-s |count_j - k|)
    d = _distances(values, 0.3, grid)
    w = np.exp(-quantile_scale(1.0) * d)
    np.testing.assert_allclose(p, w / w.sum())
    state = sampler_state(np.random.default_rng(2))
    draws = np.array([private_quantile(values, 0.3, grid, 1.0, state) for _ in range(6000)])
    counts = np.array([(draws == c).sum() for c in grid])
    assert counts.sum() == 6000
    keep = p * 6000 >= 5
    expected = np.append(p[keep] * 6000, p[~keep].sum() * 6000)
    observed = np.append(counts[keep], counts[~keep].sum())
    if expected[-1] == 0:
        expected, observed = expected[:-1], observed[:-1]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_neighbours_move_the_law_by_at_most_epsilon():
    # Replace-one: every probability ratio within exp(epsilon) (noise-off check of
    # the sensitivity: distances move by at most one).
    rng = np.random.default_rng(3)
    grid = geometric_grid(-6, 6)
    for _ in range(50):
        values = rng.normal(scale=4, size=30)
        other = values.copy()
        other[rng.integers(30)] = rng.choice([-1e3, 1e3, rng.normal()])
        for q in [0.02, 0.5, 0.98]:
            assert np.max(np.abs(_distances(values, q, grid) - _distances(other, q, grid))) <= 1
            for eps in [0.1, 1.0, 5.0]:
                a = quantile_probabilities(values, q, grid, eps)
                b = quantile_probabilities(other, q, grid, eps)
                assert np.max(np.abs(np.log(a) - np.log(b))) <= eps * (1 + 1e-9)


def test_bad_input_raises_before_reading():
    with pytest.raises(ValueError, match="strictly increasing"):
        private_quantile([1.0], 0.5, [1.0, 1.0], 1.0, 0)
    with pytest.raises(ValueError, match="q must"):
        private_quantile([1.0], 1.5, [1.0, 2.0], 1.0, 0)
    with pytest.raises(ValueError, match="too large"):
        private_quantile(np.zeros(10), 0.5, [1.0, 2.0], 1e12, 0)
    with pytest.raises(ValueError, match="finite"):
        private_quantile([np.nan], 0.5, [1.0, 2.0], 1.0, 0)


def test_public_prior_breaks_ties_toward_the_data_and_keeps_the_bound():
    values = np.linspace(1.0, 2.0, 200)
    grid = geometric_grid(-10, 10, per_octave=8)
    # Noise off: every candidate above the max ties for q = 1; the prior takes the smallest.
    assert private_quantile(values, 1.0, grid, np.inf, 0, slope=1 / 8) == grid[grid >= 2.0][0]
    assert private_quantile(values, 0.0, grid, np.inf, 0, slope=1 / 8) == grid[grid <= 1.0][-1]
    # The law: P(j) ~ exp(-s (d_j + floor(slope p_j / s))).
    s = quantile_scale(0.5)
    p = quantile_probabilities(values, 0.98, grid, 0.5, slope=1 / 8)
    d = _distances(values, 0.98, grid)
    w = np.exp(-s * (d + np.floor((1 / 8) * np.arange(grid.size) / s)))
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-12)
    # Ties beyond the max no longer spread uniformly over the grid.
    assert p[grid > 8.0].sum() < 0.2  # 1 nat per octave: e^-2 beyond two octaves
    assert quantile_probabilities(values, 0.98, grid, 0.5)[grid > 8.0].sum() > 0.5
    # The prior is public: neighbouring data sets still move each probability by <= e^eps.
    other = values.copy()
    other[0] = 1e6
    q_other = quantile_probabilities(other, 0.98, grid, 0.5, slope=1 / 8)
    assert np.max(np.abs(np.log(p) - np.log(q_other))) <= 0.5 * (1 + 1e-9)
    state = sampler_state(np.random.default_rng(5))
    draws = np.array([private_quantile(values, 0.98, grid, 0.5, state, slope=1 / 8)
                      for _ in range(3000)])
    counts = np.array([(draws == c).sum() for c in grid])
    keep = p * 3000 >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(p[keep] * 3000, p[~keep].sum() * 3000)
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_candidates_beyond_the_data_do_not_tie_with_the_best():
    # Every value and the 98% quantile between two grid points (16 and 19.03 on
    # 4 points per octave): with |N_j - k| all candidates above the maximum tied with
    # the best, and the release spread over the tail (19, 27 and 54 on three
    # seeds of the covertype split). Intervals of ranks score the empty
    # candidates n + 1 - k records below the best.
    rng = np.random.default_rng(7)
    values = rng.uniform(16.5, 18.7, size=20_000)
    grid = geometric_grid(-20, 20, signed=False, per_octave=4)
    p = quantile_probabilities(values, 0.98, grid, 0.1, slope=0.25)
    best = np.flatnonzero(grid >= values.max())[0]
    assert grid[best] == pytest.approx(2 ** 4.25)
    assert p[best] > 1 - 1e-6
    d = _distances(values, 0.98, grid)
    assert d[best] == 0 and d[best + 1] == values.size + 1 - round(0.98 * values.size)
    # Low quantiles mirror it: the largest candidate at or below the value.
    low = private_quantile(values, 0.02, grid, np.inf, 0)
    assert low == grid[grid <= values.min()][-1]
