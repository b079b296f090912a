"""The local-DP speed work (issue 19, item 5): every fast path gives the same bits.

- ``fixed_point`` (straight-line floating point) against ``_fixed_point_bits``
  (frexp and integer shifts) on values of every magnitude and sign;
- the protocol kernels, which compute each report's grid once per budget
  (not per coordinate), against the public per-user kernels ``user_report`` /
  ``user_full_report`` driven one row at a time from the same generator state.
"""

import numpy as np
import pytest

from sklearn_dpol._core import _exact_kernels as kernels


def _values(seed, n=200_000):
    rng = np.random.default_rng(seed)
    scaled = rng.normal(size=n) * 2.0 ** rng.integers(-1080, 63, n)
    random_bits = rng.integers(0, 2 ** 63, n, dtype=np.int64).view(np.float64)
    integers = (rng.integers(-2 ** 62, 2 ** 62, n).astype(np.float64)
                + rng.choice([0.0, 0.5, 2.0 ** -40, -0.25], n))
    edges = np.array([0.0, -0.0, 5e-324, -5e-324, 2.0 ** 62, -2.0 ** 62, 2.0 ** -64,
                      -2.0 ** -64, 2.0 ** -32, -2.0 ** -32, np.nextafter(1.0, 0.0),
                      -np.nextafter(1.0, 0.0), 2.0 ** 52 + 0.5, 2.0 ** 53, -2.0 ** 53 - 2,
                      2.0 ** -1022, -2.0 ** -1022, 0.5, -0.5, 1.5, -1.5])
    values = np.concatenate([scaled, -np.abs(scaled), random_bits, integers, edges])
    return values[np.isfinite(values) & (np.abs(values) <= 2.0 ** 62)]


def test_fixed_point_matches_the_shift_reference_bit_for_bit():
    from numba import njit

    @njit
    def mismatches(values):
        bad = 0
        for i in range(values.shape[0]):
            a = kernels.fixed_point(values[i])
            b = kernels._fixed_point_bits(values[i])
            if a[0] != b[0] or a[1] != b[1] or a[2] != b[2]:
                bad += 1
        return bad

    values = _values(0)
    assert values.size > 500_000
    assert mismatches(values) == 0


@pytest.mark.parametrize("n_features", [3, 44])
@pytest.mark.parametrize("method", ["reduction", "coordinate"])
def test_protocol_kernel_equals_the_per_user_reports(method, n_features):
    """The driver's per-budget grids give the reports of the public randomiser, bit for
    bit, across budget changes (repeats, inf, an underflowing budget, a public coordinate).
    44 features: the learner's vectorised (reassociated) sums run their SIMD loops, and
    the protocol kernel and the learner object must still agree bit for bit."""
    from sklearn_dpol._core import parameter_free as pf
    from sklearn_dpol._core.local_randomizers import LocalLaplaceRandomizer
    from sklearn_dpol._core.noise import sampler_state

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, n_features))
    y = X @ np.resize([1.0, -2.0, 0.5], n_features) + rng.normal(size=400)
    epsilons = rng.choice([0.5, 0.5, 0.5, 2.0, np.inf, 1e-320], size=400)
    weights = np.resize([0.5, 0.25, 0.0, 0.25], n_features + 1)
    kw = dict(loss="absolute", huber_threshold=1.0, intercept=True)
    fast = pf.make_learner(method, n_features + 1, G=1.0, prior="improper", b=1.0)
    pf.run_protocol(fast, X, y, epsilons, weights, sampler_state(np.random.default_rng(6)), **kw)
    slow = pf.make_learner(method, n_features + 1, G=1.0, prior="improper", b=1.0)
    pf.run_protocol_python(slow, X, y, epsilons, LocalLaplaceRandomizer(weights),
                           sampler_state(np.random.default_rng(6)), **kw)
    for name, value in fast.state().items():
        np.testing.assert_array_equal(value, slow.state()[name], err_msg=name)


def test_a_nan_budget_or_weight_fails_closed():
    # Independent review: epsilon < inf is False for NaN, which meant "no noise".
    from sklearn_dpol._core._pf_kernels import laplace_scale

    assert laplace_scale(np.nan, 1.0) == np.inf
    assert laplace_scale(1.0, np.nan) == np.inf
    assert laplace_scale(np.inf, 1.0) == 0.0          # no privacy asked: no noise
    assert laplace_scale(1.0, 0.0) == 0.0             # a public coordinate
    assert laplace_scale(2.0, 0.5) == 2.0 / (2.0 * 0.5)


def test_fixed_point_equals_exact_integer_arithmetic():
    # The reference of the test above shares _signed_half with fixed_point; this one
    # is independent: a + f1 2^-32 + f2 2^-64 = sign(c) trunc(|c| 2^64) 2^-64 + 1/2,
    # computed in Python integers (independent review of the speed change).
    from fractions import Fraction

    from sklearn_dpol._core._exact_kernels import fixed_point

    rng = np.random.default_rng(11)
    values = [0.0, -0.0, 5e-324, -5e-324, 2.0**-64, -(2.0**-64), 2.0**-65, 0.5, -0.5,
              1.0, -1.0, 2.0**62, -(2.0**62), np.nextafter(2.0**62, 0), -3.25, 2.0**52 + 0.5,
              np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0), np.nextafter(2.0**40, 0.0),
              2.0**-1022, np.nextafter(2.0**-1022, 0.0)]
    values += list(rng.standard_normal(2000) * np.exp2(rng.integers(-80, 62, 2000)))
    values += list(np.ldexp(rng.random(500) - 0.5, rng.integers(-1074, 62, 500)))
    for c in values:
        t = (abs(Fraction(c)) * 2**64).__floor__()
        v = (-t if c < 0 else t) + 2**63
        a, low = v >> 64, v & (2**64 - 1)
        assert fixed_point(float(c)) == (a, low >> 32, low & 0xFFFFFFFF), c
