"""The exact samplers and the grid release (doc/privacy.md, section 14)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sklearn_dpol._core import _exact_kernels as kernels
from sklearn_dpol._core import noise
from sklearn_dpol._core.noise import gaussian_release, laplace_release, noise_grid


def _state(seed):
    return kernels.generator_state(np.random.default_rng(seed))


EDGE_VALUES = [0.0, -0.0, 1e-300, -1e-300, 5e-324, -5e-324, 2.0 ** 62, -2.0 ** 62,
               -2.0 ** -70, 2.0 ** -70, 0.5, -0.5, 3.25, -3.25, 2.0 ** -64, -2.0 ** -64,
               2.0 ** -63 * 3, -(2.0 ** 52) - 0.5, 2.0 ** 53 + 2, 1 - 2.0 ** -53, -1 + 2.0 ** -53]


def test_fixed_point_is_c_plus_half_to_2_pow_minus_64():
    rng = np.random.default_rng(1)
    values = list(rng.normal(size=300) * 10.0 ** rng.integers(-40, 18, size=300)) + EDGE_VALUES
    for c in values:
        a, f1, f2 = kernels.fixed_point(c)
        assert 0 <= f1 < 2 ** 32 and 0 <= f2 < 2 ** 32
        exact = Fraction(c) + Fraction(1, 2)
        got = Fraction(a) + Fraction(f1, 2 ** 32) + Fraction(f2, 2 ** 64)
        assert abs(got - exact) < Fraction(1, 2 ** 64), c


def test_floor_offset_is_the_exact_floor():
    """floor(F + s S x) decided from the digits drawn equals the rational floor of both ends."""
    rng = np.random.default_rng(2)
    state = _state(3)
    undecided_with_three_digits = 0
    for _ in range(3000):
        scale = int(rng.integers(2 ** 28, 2 ** 29 + 2))
        sign = int(rng.choice([-1, 1]))
        f1, f2 = int(rng.integers(0, 2 ** 32)), int(rng.integers(0, 2 ** 32))
        ws = kernels.workspace()
        ws[0, 0] = 3
        ws[0, 1:4] = rng.integers(0, 2 ** 32, size=3)
        got = kernels.floor_offset(f1, f2, sign, scale, ws, state)
        n_digits = int(ws[0, 0])
        undecided_with_three_digits += n_digits > 3
        D = sum(int(ws[0, i]) << (32 * (n_digits - i)) for i in range(1, n_digits + 1))
        F = Fraction(f1, 2 ** 32) + Fraction(f2, 2 ** 64)
        lo = F + sign * scale * Fraction(D, 2 ** (32 * n_digits))
        hi = F + sign * scale * Fraction(D + 1, 2 ** (32 * n_digits))
        # every x in [D, D+1) 2^-32L has the same floor: both ends agree with the result
        assert math.floor(min(lo, hi)) == got
        assert math.ceil(max(lo, hi)) - 1 == got
    assert undecided_with_three_digits < 5


def test_floor_offset_draws_digits_until_decided():
    """x's first two digits put S x just below an integer: more digits are drawn."""
    scale = 2 ** 28 + 3
    D = -(-(2 ** 64) * 12345 // scale) - 1     # S D 2^-64 in (12345 - S 2^-64, 12345)
    for seed in range(20):
        ws = kernels.workspace()
        ws[0, 0] = 2
        ws[0, 1], ws[0, 2] = D >> 32, D & (2 ** 32 - 1)
        got = kernels.floor_offset(0, 0, 1, scale, ws, _state(seed))
        n_digits = int(ws[0, 0])
        assert n_digits > 2
        full = sum(int(ws[0, i]) << (32 * (n_digits - i)) for i in range(1, n_digits + 1))
        assert got == math.floor(scale * Fraction(full, 2 ** (32 * n_digits)))
        assert got in (12344, 12345)


@pytest.mark.parametrize("gaussian, law", [(True, stats.norm), (False, stats.laplace)])
def test_exact_variates_follow_their_law(gaussian, law):
    n = 200_000
    signs, ks = np.empty(n, np.int64), np.empty(n, np.int64)
    digits = np.empty((n, 2), np.int64)
    kernels.sample_parts(n, gaussian, _state(5), signs, ks, digits)
    z = signs * (ks + digits[:, 0] / 2.0 ** 32 + digits[:, 1] / 2.0 ** 64)
    assert stats.kstest(z, law.cdf).pvalue > 1e-3
    # the integer part's law exactly: P(|Z| in [k, k+1))
    for k in range(4):
        p = 2 * (law.cdf(k + 1) - law.cdf(k))
        assert abs(np.mean(ks == k) - p) < 5 * math.sqrt(p * (1 - p) / n)
    # a wrong law is rejected by the same test (the test can fail)
    assert stats.kstest(1.05 * z, law.cdf).pvalue < 1e-6


def test_grid_rule():
    for sigma in [1e-9, 0.3, 1.0, 1.5, 2.0 ** 40 * 1.7, 1e200]:
        gamma, multiplier = noise_grid(sigma)
        assert math.frexp(gamma)[0] == 0.5  # a power of two
        assert sigma * 2.0 ** -29 < gamma <= sigma * 2.0 ** -28
        assert gamma * multiplier >= sigma + gamma
        assert gamma * multiplier <= sigma * (1 + 2.0 ** -26)
    for bad in [0.0, -1.0, np.inf, np.nan, 1e-300]:
        with pytest.raises(ValueError, match="noise scale"):
            noise_grid(bad)


def test_release_is_on_the_grid_with_the_requested_scale():
    rng = np.random.default_rng(6)
    v = rng.normal(size=100_000) * 3
    for release, sd in [(gaussian_release, 1.0), (laplace_release, math.sqrt(2))]:
        z = release(v, 0.7, np.random.default_rng(7))
        gamma, multiplier = noise_grid(0.7)
        k = z / gamma
        assert np.array_equal(k, np.round(k))           # every released double is gamma * integer
        assert abs((z - v).std() / (0.7 * sd) - 1) < 0.01
        assert abs((z - v).mean()) < 0.02


def test_release_is_exactly_shift_invariant():
    """Same bits, query moved by m grid steps: the release moves by exactly m steps.

    The noise does not depend on the query's value: only the floor sees it.
    """
    gamma, _ = noise_grid(1.3)
    v = np.random.default_rng(8).normal(size=5000)
    shift = gamma * np.random.default_rng(9).integers(-10 ** 9, 10 ** 9, size=5000)
    a = gaussian_release(v, 1.3, np.random.default_rng(10))
    b = gaussian_release(v + shift, 1.3, np.random.default_rng(10))
    assert np.array_equal(b - a, shift)


def test_release_reproducible_and_fresh():
    v = np.zeros(10)
    a = gaussian_release(v, 1.0, np.random.default_rng(11))
    assert np.array_equal(a, gaussian_release(v, 1.0, np.random.default_rng(11)))
    assert not np.array_equal(a, gaussian_release(v, 1.0, np.random.default_rng(12)))
    rng = np.random.default_rng(13)
    assert not np.array_equal(gaussian_release(v, 1.0, rng), gaussian_release(v, 1.0, rng))


def test_extreme_values_give_finite_releases():
    v = np.array([1.79e308, -1.79e308, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 0.0])
    for sigma in [1e-10, 1.0, 1e300]:
        z = gaussian_release(v, sigma, np.random.default_rng(14))
        assert np.all(np.isfinite(z))
        z = laplace_release(v, sigma, np.random.default_rng(14))
        assert np.all(np.isfinite(z))


def test_zero_sigma_adds_nothing_and_postprocess_applies():
    v = np.array([1.0, -2.0])
    assert np.array_equal(gaussian_release(v, 0.0, None), v)
    out = gaussian_release(v, 1.0, np.random.default_rng(0), postprocess=lambda z: z * 0)
    assert np.array_equal(out, np.zeros(2))


def test_released_scale():
    assert noise.released_scale(0) == 0.0
    assert 1.0 < noise.released_scale(1.0) <= 1.0 + 2.0 ** -26


def test_in_kernel_release_equals_the_vectorised_release():
    """release_value (mirror descent's steps, the user-side reports) is the same
    mechanism as gaussian_release / laplace_release: same grid, same bits, same
    output, so a scale error in either (a factor 2 in its grid, say) fails here."""
    from numba import njit

    @njit
    def one_by_one(values, scale, gaussian, state):
        ws = np.zeros((4, kernels.WORKSPACE_DIGITS), np.int64)
        out = np.empty(values.size)
        for i in range(values.size):
            out[i] = kernels.release_value(values[i], scale, gaussian, ws, state)
        return out

    v = np.random.default_rng(15).normal(size=2000) * 5
    for scale in (1e-3, 0.7, 3.0e5):
        gamma, multiplier = noise_grid(scale)
        assert kernels.grid(scale) == (gamma, multiplier)
        for gaussian, release in ((True, gaussian_release), (False, laplace_release)):
            expected = release(v, scale, np.random.default_rng(16))
            got = one_by_one(v, scale, gaussian,
                             kernels.generator_state(np.random.default_rng(16)))
            np.testing.assert_array_equal(got, expected)
    # no noise: the value itself; infinite noise: a constant
    assert kernels.release_value(1.25, 0.0, True, kernels.workspace(), _state(1)) == 1.25
    assert kernels.release_value(1.25, np.inf, True, kernels.workspace(), _state(1)) == 0.0


# --- the table-driven sampler (doc/privacy.md, "A faster exact sampler") -----------------

def _decimal_exp(x_fraction, digits=700):
    import decimal

    context = decimal.Context(prec=digits)
    x = context.divide(decimal.Decimal(x_fraction.numerator),
                       decimal.Decimal(x_fraction.denominator))
    return context.exp(-x)


@pytest.mark.parametrize("gaussian", [True, False])
def test_table_weights_are_the_densities_to_2048_bits(gaussian):
    """Each piece's integer weight is f at the box's left end (tail: its area / w),
    to within 2^40 units of 2^-(2048+160): checked against 700-digit decimals."""
    import decimal

    m, T = kernels.BOX_BITS, kernels.TAIL_START
    bits = kernels._WORKING_BITS
    weights = kernels.table_weights(gaussian, m, T)
    assert len(weights) == (T << m) + 1
    context = decimal.Context(prec=700)
    scale = context.power(decimal.Decimal(2), bits)
    for J in list(range(0, T << m, 7)) + [(T << m) - 1]:
        t = Fraction(J, 2 ** m)
        exact = _decimal_exp(t * t / 2 if gaussian else t)
        assert abs(context.multiply(exact, scale) - weights[J]) < 2 ** 40, J
    if gaussian:
        tail = decimal.Decimal(0)
        for k in range(T, 60):                     # exp(-60^2/2) < 2^-2500
            tail = context.add(tail, _decimal_exp(Fraction(k * k, 2)))
    else:
        tail = _decimal_exp(Fraction(T))
    tail = context.multiply(context.multiply(tail, scale), decimal.Decimal(2 ** m))
    assert abs(tail - weights[-1]) < 2 ** 48


@pytest.mark.parametrize("gaussian, m, T",
                         [(True, 5, 7), (False, 5, 7), (True, 1, 2), (False, 2, 1)])
def test_alias_table_gives_each_piece_its_weight(gaussian, m, T):
    """The law of the chosen piece, computed exactly from the stored thresholds, is
    weight / total to within 2^-2040 (the thresholds are truncated to 2,048 bits)."""
    tau64, tau_digits, alias, column_bits, _, _ = kernels.build_table(gaussian, m, T)
    weights = kernels.table_weights(gaussian, m, T)
    n = 1 << column_bits
    bits = 32 * tau_digits.shape[1]
    probability = [Fraction(0)] * n
    for i in range(n):
        threshold = 0
        for d in tau_digits[i]:
            threshold = (threshold << 32) | int(d)
        assert threshold >> (bits - 64) == int(tau64[i])
        keep = Fraction(threshold, 2 ** bits)          # P(V < tau-hat), exactly
        probability[i] += keep / n
        probability[int(alias[i])] += (1 - keep) / n
    total = sum(weights)
    for j in range(n):
        target = Fraction(weights[j], total) if j < len(weights) else Fraction(0)
        assert abs(probability[j] - target) <= Fraction(1, 2 ** 2040), j


def _parts(n, gaussian, seed, table=None, reference=False):
    signs, ks = np.empty(n, np.int64), np.empty(n, np.int64)
    digits = np.empty((n, 2), np.int64)
    if reference:
        kernels.reference_parts(n, gaussian, _state(seed), signs, ks, digits)
    else:
        kernels.sample_parts(n, gaussian, _state(seed), signs, ks, digits, table=table)
    return signs, ks, digits


@pytest.mark.parametrize("gaussian, law", [(True, stats.norm), (False, stats.laplace)])
@pytest.mark.parametrize("m, T", [(1, 1), (1, 2), (2, 1), (3, 2)])
def test_fast_sampler_law_with_small_tables(gaussian, law, m, T):
    """Tiny tables make the rare branches common: the tail (Karney's N beyond T, or
    memorylessness), long thinned runs (coin probability up to 1), rejections.
    The law stays exact: KS, and the exact probabilities of the integer part and
    of the half-unit cells."""
    n = 100_000
    table = kernels.build_table(gaussian, m, T)
    signs, ks, digits = _parts(n, gaussian, 20 + m + 3 * T, table=table)
    z = signs * (ks + digits[:, 0] / 2.0 ** 32 + digits[:, 1] / 2.0 ** 64)
    assert stats.kstest(z, law.cdf).pvalue > 1e-4
    assert set(np.unique(signs)) == {-1, 1}
    a = np.abs(z)
    assert np.mean(a >= T) > 0.001                     # the tail is exercised
    edges = np.arange(0, 6.5, 0.5)
    observed = np.histogram(a, bins=np.append(edges, np.inf))[0]
    cells = np.append(edges, np.inf)
    expected = n * 2 * (law.cdf(cells[1:]) - law.cdf(cells[:-1]))
    keep = expected > 5
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4
    # and the test can fail: a 10% wider law is rejected
    assert stats.kstest(1.1 * z, law.cdf).pvalue < 1e-6


@pytest.mark.parametrize("gaussian", [True, False])
def test_fast_sampler_matches_the_reference_sampler(gaussian):
    """Same law as Karney's algorithm N (the exponential by von Neumann runs):
    two-sample KS on |Z| and a chi-square on the release table's 2^-5 cells."""
    n = 200_000
    s1, k1, d1 = _parts(n, gaussian, 31)
    s2, k2, d2 = _parts(n, gaussian, 32, reference=True)
    z1 = s1 * (k1 + d1[:, 0] / 2.0 ** 32)
    z2 = s2 * (k2 + d2[:, 0] / 2.0 ** 32)
    assert stats.ks_2samp(z1, z2).pvalue > 1e-4
    # exact cell probabilities on the fine boxes (|Z| in [j/32, (j+1)/32), j < 96)
    law = stats.norm if gaussian else stats.laplace
    cells = np.floor(np.abs(z1) * 32).astype(int)
    observed = np.bincount(np.minimum(cells, 96), minlength=97)
    edges = np.append(np.arange(97) / 32, np.inf)
    expected = n * 2 * (law.cdf(edges[1:]) - law.cdf(edges[:-1]))
    chi2 = np.sum((observed - expected) ** 2 / expected)
    assert stats.chi2.sf(chi2, 96) > 1e-4
    assert abs(np.mean(s1 == 1) - 0.5) < 5 * math.sqrt(0.25 / n)


def test_assemble_is_the_exact_floor():
    """a + floor(F + s S (offset + (J + u) 2^-m)) from the box representation, against
    rational arithmetic on both ends of u's interval (every u in it has that floor)."""
    rng = np.random.default_rng(40)
    state = _state(41)
    for _ in range(3000):
        c = float(rng.normal() * 10.0 ** rng.integers(-3, 12))
        a, f1, f2 = kernels.fixed_point(c)
        scale = int(rng.integers(2 ** 28, 2 ** 29 + 3))
        bit = int(rng.integers(0, 2))
        shift = int(rng.choice([0, kernels.BOX_BITS, 1, 3]))
        box = int(rng.integers(0, 7 << kernels.BOX_BITS)) if shift else 0
        offset = int(rng.choice([0, 0, 7, 14, int(rng.integers(0, 40))]))
        u1, u2 = (int(x) for x in rng.integers(0, 2 ** 32, size=2))
        # u's two digits in the workspace (exact_point), or as a chunk's word (the
        # chunked releases: the workspace is written only when two digits do not decide)
        for two_digits in (False, True):
            ws = kernels.workspace()
            if not two_digits:
                ws[0, 0], ws[0, 1], ws[0, 2] = 2, u1, u2
            word = np.int64(np.uint64((u1 << 32) | u2).view(np.int64))
            got = kernels._assemble(a, f1, f2, scale, bit, offset, box, shift, two_digits,
                                    word, ws, state)
            L = int(ws[0, 0]) if ws[0, 0] else 2
            D = (sum(int(ws[0, i]) << (32 * (L - i)) for i in range(1, L + 1)) if ws[0, 0]
                 else (u1 << 32) | u2)
            assert D >> (32 * (L - 2)) == (u1 << 32) | u2
            s = 1 if bit == 1 else -1
            F = Fraction(a) + Fraction(f1, 2 ** 32) + Fraction(f2, 2 ** 64)
            ends = [F + s * scale * (offset + (box + Fraction(D + e, 2 ** (32 * L))) / 2 ** shift)
                    for e in (0, 1)]
            assert math.floor(min(ends)) == got
            assert math.ceil(max(ends)) - 1 == got
