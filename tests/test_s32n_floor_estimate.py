"""``usual_floor_estimate`` (the MI-OGD protocol kernel's double-precision point of a usual
Gaussian report coordinate, doc/privacy.md 56.8) is certain only when the
exact ``_usual_floor`` decides the same point: on random inputs of every magnitude, and on
inputs built (in exact rational arithmetic) to put ``c + 1/2 + s S (box + u 2^-64) 2^-5``
within a few units of roundoff of an integer, where it must say uncertain rather than err.
"""

from fractions import Fraction

import numpy as np
import pytest
from numba import njit

from sklearn_dpol._core import _exact_kernels as kernels


@njit(cache=False)
def _both(c, sign_bit, box, u, scale, c_limit, out):
    """Columns: exact point, exact ok, estimated point, certain."""
    for i in range(c.shape[0]):
        s = np.float64(scale[i])
        a, f1, f2 = kernels._fixed_point_clamped(c[i])
        point, ok = kernels._usual_floor(a, np.uint64((f1 << kernels._BITS) | f2),
                                         sign_bit[i], box[i], u[i], scale[i])
        guess, certain = kernels.usual_floor_estimate(
            c[i], sign_bit[i], box[i], u[i], s, c_limit[i],
            kernels.floor_estimate_bound(c_limit[i], s))
        out[i, 0] = point
        out[i, 1] = ok
        out[i, 2] = guess if certain else 0
        out[i, 3] = certain
        if not certain and guess == guess:
            out[i, 3] = -1                       # an uncertain point must be NaN


def _check(c, sign_bit, box, u, scale, c_limit=None):
    """``c_limit`` (default ``|c|``): the bound on ``|c|`` the estimate is given."""
    c = np.asarray(c, np.float64)
    c_limit = np.abs(c) if c_limit is None else np.asarray(c_limit, np.float64)
    out = np.zeros((c.shape[0], 4), np.int64)
    _both(c, np.asarray(sign_bit, np.int64), np.asarray(box, np.int64),
          np.asarray(u, np.uint64), np.asarray(scale, np.int64), c_limit, out)
    assert not np.any(out[:, 3] == -1)
    certain = out[:, 3] == 1
    assert not np.any(certain & (np.abs(c) > c_limit))
    # certain implies decided by two digits, and the same point
    assert np.all(out[certain, 1] == 1)
    np.testing.assert_array_equal(out[certain, 2], out[certain, 0])
    return out


def _multipliers(rng, n):
    """``grid(sigma)``'s multipliers for noise scales of every magnitude."""
    sigmas = 10.0 ** rng.uniform(-300, 290, n)
    return np.array([kernels.grid(s)[1] for s in sigmas], np.int64)


@pytest.mark.parametrize("seed", range(4))
def test_certain_points_are_the_exact_points(seed):
    rng = np.random.default_rng(seed)
    n = 400_000
    magnitude = 10.0 ** rng.uniform(-25, 19.5, n)
    c = np.clip(rng.choice([-1.0, 1.0], n) * magnitude, -2.0 ** 62, 2.0 ** 62)
    c[:1000] = np.round(c[:1000])                      # integers and half-integers
    c[1000:2000] = np.round(c[1000:2000]) + 0.5
    c[2000:2010] = [0.0, -0.0, 2.0 ** 62, -2.0 ** 62, 5e-324, -5e-324, 0.5, -0.5, 1.0, -1.0]
    sign_bit = rng.integers(0, 2, n)
    box = rng.integers(0, kernels.TAIL_START << kernels.BOX_BITS, n)
    u = rng.integers(0, 2 ** 64, n, dtype=np.uint64)
    u[:500] = 0
    u[500:1000] = np.uint64(2 ** 64 - 1)
    # limits at, above and (never certain) below |c|
    c_limit = np.abs(c) * rng.choice([1.0, 1.0, 4.0, 0.5], n)
    out = _check(c, sign_bit, box, u, _multipliers(rng, n), c_limit)
    # useful: at the report's usual magnitudes (|c| + S |Z| up to about 2^35) nearly every
    # point is certain (the bound is about 2^-12 of 2^5 v's unit there)
    usual = (np.abs(c) < 2.0 ** 33) & (np.abs(c) <= c_limit)
    usual[:2010] = False
    assert np.mean(out[usual, 3]) > 1 - 2e-3


def _exact_target(c, sign_bit, box, u, scale):
    """``c' + 1/2 + s S (box + u 2^-64) 2^-5`` as a Fraction, ``c'`` is ``c`` truncated
    toward 0 to a multiple of 2^-64 (as ``fixed_point`` reads it)."""
    cf = Fraction(c)
    t = Fraction(int(abs(cf) * 2 ** 64), 2 ** 64)
    cf = t if c >= 0 else -t
    s = 1 if sign_bit == 1 else -1
    return cf + Fraction(1, 2) + s * scale * (box + Fraction(int(u), 2 ** 64)) / 32


@pytest.mark.parametrize("seed", range(3))
def test_values_next_to_an_integer_are_uncertain_or_exact(seed):
    """``c`` chosen so that the exact value is an integer plus ``delta``, for ``delta`` from
    0 to many units of roundoff on both sides (and across u's last digit): the estimate is
    never certain of a wrong point, is uncertain at ``delta = 0``, and is certain far away."""
    rng = np.random.default_rng(100 + seed)
    rows = []
    for _ in range(300):
        scale = int(_multipliers(rng, 1)[0])
        sign_bit = int(rng.integers(0, 2))
        box = int(rng.integers(0, 224))
        u = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        wide = rng.random() < 0.5
        k = int(rng.integers(-2 ** 40, 2 ** 40)) if wide else int(rng.integers(-50, 50))
        base = _exact_target(0.0, sign_bit, box, u, scale) - Fraction(1, 2)  # s S Z
        for delta in (0, 2.0 ** -70, -(2.0 ** -70), -scale * 2.0 ** -70, 2.0 ** -60,
                      -(2.0 ** -45), 2.0 ** -40, -(2.0 ** -36), 2.0 ** -30, 2.0 ** -20,
                      0.3 / 32, -0.45 / 32):
            c = float(k - Fraction(1, 2) - base + Fraction(delta))
            rows.append((c, sign_bit, box, u, scale, delta))
    c, sign_bit, box, u, scale, delta = (np.array(col) for col in zip(*rows))
    out = _check(c, sign_bit, box, u.astype(np.uint64), scale)
    # near an integer of the 2^-5 grid the estimate may not be certain (a double-precision
    # sum of ~2^35); it must not claim a point the exact floor does not give (checked
    # above); far from the grid (a quarter of its step, |c| < 2^40) it is certain
    grid_distance = []
    for r in rows:
        t = 32 * _exact_target(*r[:5])
        grid_distance.append(abs(float(t - round(t))))
    far = (np.array(grid_distance) > 0.25) & (np.abs(c) < 2.0 ** 40)
    assert far.sum() > 100
    assert np.all(out[far, 3] == 1)


def test_floors_two_digits_do_not_decide_are_never_certain():
    """u chosen (exactly) so that ``2^5 (c' + 1/2) + s S (box + u)`` crosses an integer
    within u's interval: the exact floor is undecided by two digits (``ok`` false, the
    report's slow path) and the estimate is not certain."""
    rng = np.random.default_rng(7)
    rows = []
    for _ in range(2000):
        scale = int(_multipliers(rng, 1)[0])
        sign_bit = int(rng.integers(0, 2))
        box = int(rng.integers(0, 224))
        c = float(rng.normal() * 10.0 ** rng.uniform(-20, 12))
        cf = _exact_target(c, 1, 0, 0, 0) - Fraction(1, 2)         # c', exactly
        start = 32 * (cf + Fraction(1, 2)) + (scale * box if sign_bit == 1 else -scale * box)
        below = start - (start.numerator // start.denominator)       # fraction in [0, 1)
        if sign_bit == 1:
            # just below the next integer at u, across it before u + 1
            gap = 1 - below
            u = -(-(gap * 2 ** 64) // scale) - 1
        else:
            u = (below * 2 ** 64) // scale
        u = int(u)
        if not 0 <= u < 2 ** 64:
            continue
        rows.append((c, sign_bit, box, u, scale))
    c, sign_bit, box, u, scale = (np.array(col) for col in zip(*rows))
    out = _check(c, sign_bit, box, u.astype(np.uint64), scale)
    assert np.mean(out[:, 1] == 0) > 0.9
    assert np.all(out[out[:, 1] == 0, 3] == 0)
