"""Exact samplers for floating-point-safe releases (numba kernels).

Imported lazily by :mod:`sklearn_dpol._core.noise`, so ``import sklearn_dpol``
does not load numba. See ``doc/privacy.md``, section "Floating-point-safe
releases", for the derivation; in short, a released coordinate is

    gamma * floor(c + 1/2 + S * Z),     c = v / gamma  (exact: gamma is 2^j),

with ``Z`` an *exact* standard normal or standard Laplace variate (the
table-driven sampler below; Karney 2016's algorithm N is kept as the
reference) and ``S`` a public integer. The integer is computed exactly
from the random bits: no floating-point operation touches ``Z``. The released
double is therefore a function of ``floor(c + 1/2 + S Z)`` alone, i.e.
post-processing of the Gaussian (Laplace) mechanism with noise ``gamma * S``,
whatever the bits of ``v``.

Uniform deviates are *lazy*: an array whose slot 0 counts the base-2^32 digits
drawn so far (slots 1, 2, ... hold them); a digit is drawn from the generator
only when a comparison or the final floor needs it, so every comparison is
exact. ``_CAP`` digits (2,048 bits) per deviate are kept; a comparison that
would need more (64 equal digits in a row, probability below 2^-2000) is
decided by the 64th digit: a data-independent event whose probability is
counted in delta (``doc/privacy.md``).

The variates themselves come from a table-driven rejection sampler
(``doc/privacy.md``, section "A faster exact sampler"): ``|Z|`` is proposed
from a staircase of boxes of width ``2^-BOX_BITS`` whose heights are the
density at the box's left end, one box chosen by an alias table whose
thresholds are stored to 2,048 bits and compared lazily with a uniform (one
64-bit word decides all but a ``2^-64`` fraction of the draws), a point
uniform in the box, kept with probability ``density / height`` by a von
Neumann run that almost always stops at its first, cheap step. Beyond the
table (``|Z| >= 7``) the normal takes Karney's unit boxes (a geometric integer
part, accepted by runs of his algorithm B) and the Laplace its
memorylessness.
"""

import functools
import math

import numpy as np
from numba import njit

from ._kernel_cache import refresh as _refresh_kernel_cache

_refresh_kernel_cache()  # before any kernel is compiled or loaded: see _kernel_cache

_BITS = 32
_BASE = 1 << 32
_MASK = _BASE - 1
_HALF = 1 << 31
_CAP = 64
WORKSPACE_DIGITS = _CAP + 1
# Quantisation of c = v / gamma: |c| is clamped to 2^62 and truncated to 2^-64.
CLAMP = float(2 ** 62)


# The sampling kernels take arrays but never allocate: they are compiled without
# numba's reference counting, which otherwise wraps array uses in their loops
# with atomic increments and decrements (measured: most of the sampler's time).
# Kernels that allocate a workspace (release_values, exponential_choice, the
# test hooks) keep it and call these.
_NO_REFCOUNT = dict(cache=True, _nrt=False)


# The random digits come from xoshiro256** (Blackman and Vigna), whose 256-bit
# state is seeded from the caller's numpy Generator on every call, so results
# are reproducible from ``random_state`` and copies of a generator that are
# re-seeded draw fresh digits. The state lives in a uint64 array of length 4.
@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, inline="always")
def _next(s):
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(cache=True)
def _digit(s):
    """A uniform base-2^32 digit (the high half of a xoshiro256** output)."""
    return np.int64(_next(s) >> np.uint64(32))


@njit(cache=True)
def _below(s, m):
    """A uniform integer in [0, m), exactly (rejection of the top remainder)."""
    limit = (_BASE // m) * m
    while True:
        d = _digit(s)
        if d < limit:
            return d % m


def generator_state(rng):
    """A fresh xoshiro256** state drawn from a numpy Generator (never all zero)."""
    state = rng.bit_generator.random_raw(4).astype(np.uint64)
    if not state.any():
        state[0] = 1
    return state


# A workspace is an int64 array of shape (4, _CAP + 1): one lazy uniform per
# row. Row X holds the normal's (exponential's) fraction; rows A and B are the
# decreasing runs' scratch; row W the thinning comparisons of algorithm B.
# Rows are passed by index, so a run swaps integers, not arrays.
X, A, B, W = 0, 1, 2, 3


@njit(cache=True)
def _ensure(ws, r, i, state):
    """Draw digits of the lazy uniform in row ``r`` up to digit ``i`` (1-based)."""
    while ws[r, 0] < i:
        if ws[r, 0] < _CAP:
            ws[r, 0] += 1
        # else: 64 equal digits in a row (probability below 2^-2000 per
        # comparison): the last digit is redrawn; see the module docstring.
        ws[r, ws[r, 0]] = _digit(state)


@njit(cache=True)
def _fresh(ws, r, state):
    """Row ``r`` becomes a new lazy uniform with its first digit drawn."""
    ws[r, 0] = 1
    ws[r, 1] = _digit(state)


@njit(cache=True)
def _fresh2(ws, r, state):
    """Row ``r`` becomes a new lazy uniform with its first two digits drawn (one 64-bit word)."""
    w = _next(state)
    ws[r, 0] = 2
    ws[r, 1] = np.int64(w >> np.uint64(32))
    ws[r, 2] = np.int64(w & np.uint64(_MASK))


@njit(cache=True)
def _less(ws, a, b, state):
    """Row ``a`` < row ``b`` as lazy uniforms (ties broken by drawing more digits)."""
    if ws[a, 0] == 0:
        _fresh(ws, a, state)
    if ws[b, 0] == 0:
        _fresh(ws, b, state)
    if ws[a, 1] != ws[b, 1]:
        return ws[a, 1] < ws[b, 1]
    i = 2
    while True:
        _ensure(ws, a, i, state)
        _ensure(ws, b, i, state)
        if ws[a, i] != ws[b, i] or i >= _CAP:
            return ws[a, i] < ws[b, i]
        i += 1


@njit(cache=True)
def _continue_run(ws, y, z, n, state):
    """Continue von Neumann's decreasing run from the uniform in row ``y``.

    ``n`` uniforms are in the run so far; fresh uniforms (row ``z``) extend it
    while each is below the last. Returns the run's final length.
    """
    while True:
        _fresh(ws, z, state)
        if not _less(ws, z, y, state):
            return n
        y, z = z, y
        n += 1


@njit(**_NO_REFCOUNT)
def _bernoulli_exp_half(ws, state):
    """True with probability exp(-1/2): von Neumann's decreasing run from 1/2."""
    _fresh(ws, A, state)
    if ws[A, 1] >= _HALF:      # z >= 1/2 (z == 1/2 has probability 0)
        return True            # run of length 0: even
    return _continue_run(ws, A, B, 1, state) % 2 == 0


@njit(**_NO_REFCOUNT)
def _bernoulli_exp_one(ws, state):
    """True with probability exp(-1): von Neumann's decreasing run from 1."""
    _fresh(ws, A, state)       # the first uniform is below 1 always
    return _continue_run(ws, A, B, 1, state) % 2 == 0


@njit(**_NO_REFCOUNT)
def _bernoulli_b(k, ws, state):
    """True with probability exp(-x (2k + x) / (2k + 2)), x in row X (Karney's B).

    A decreasing run x > z1 > z2 > ... where each step is kept with probability
    (2k + x) / (2k + 2); the result is the parity of the run's length.
    """
    m = 2 * k + 2
    n = 0
    y, z = X, A                # the run starts at x itself (x's digits are shared)
    while True:
        _fresh(ws, z, state)
        if not _less(ws, z, y, state):
            break
        r = _below(state, m)
        if r >= 2 * k:
            if r == 2 * k + 1:
                break
            _fresh(ws, W, state)
            if not _less(ws, W, X, state):
                break
        if n == 0:
            y, z = z, B
        else:
            y, z = z, y
        n += 1
    return n % 2 == 0


@njit(**_NO_REFCOUNT)
def _normal(ws, state):
    """An exact standard normal: returns (sign bit, k); |Z| = k + x, x the lazy row X (Karney's N).

    The reference sampler: releases use the table-driven :func:`_sample`,
    whose law is the same (tests compare the two).
    """
    while True:
        k = 0
        while _bernoulli_exp_half(ws, state):         # P(k) propto exp(-k/2)
            k += 1
        accepted = True
        for _ in range(k * (k - 1)):                   # times exp(-k(k-1)/2)
            if not _bernoulli_exp_half(ws, state):
                accepted = False
                break
        if not accepted:
            continue
        ws[X, 0] = 0
        for _ in range(k + 1):                         # times exp(-x(2k+x)/2)
            if not _bernoulli_b(k, ws, state):
                accepted = False
                break
        if not accepted:
            continue
        return _digit(state) & 1, k


@njit(**_NO_REFCOUNT)
def _exponential(ws, state):
    """An exact standard exponential k + x, x the lazy row X (the reference sampler)."""
    k = 0
    while _bernoulli_exp_one(ws, state):              # P(k) propto exp(-k)
        k += 1
    while True:
        # x accepted with probability exp(-x): run x > z1 > z2 > ..., even length
        ws[X, 0] = 0
        _fresh(ws, X, state)
        _fresh(ws, A, state)
        n = _continue_run(ws, A, B, 1, state) if _less(ws, A, X, state) else 0
        if n % 2 == 0:
            return k


# ---------------------------------------------------------------------------
# The table-driven sampler (doc/privacy.md, "A faster exact sampler").
#
# |Z| is drawn by rejection from a staircase g >= f, f(z) = exp(-z^2/2) (normal)
# or exp(-z) (Laplace) on z >= 0: box J in [0, T 2^m) is [t_J, t_J + w), t_J = J w,
# w = 2^-m, of height f(t_J); beyond T the normal's proposal is Karney's unit
# boxes [k, k + 1) of height f(k) and the Laplace's is f itself. A piece is
# chosen with probability proportional to its area (the alias table below),
# a point uniform in it, kept with probability f / g; a rejection starts again.
# ---------------------------------------------------------------------------
BOX_BITS = 5               # m: boxes of width 2^-5
TAIL_START = 7             # T: boxes cover [0, 7)
_TABLE_DIGITS = _CAP       # thresholds stored to 64 base-2^32 digits (2,048 bits)
_WORKING_BITS = 32 * _TABLE_DIGITS + 160


def _exp_fixed(numerator, shift, bits):
    """``exp(-numerator 2^-shift) 2^bits`` for an argument in [0, 1], to within 2^9 units.

    The alternating Taylor series in fixed point; each of its (fewer than 400)
    terms is truncated once.
    """
    x = (numerator << bits) >> shift           # exact: shift <= bits
    assert 0 <= x <= 1 << bits
    term = total = 1 << bits
    i = 1
    while term:
        term = (term * x >> bits) // i
        total = total - term if i & 1 else total + term
        i += 1
    return total


def table_weights(gaussian, m=BOX_BITS, tail_start=TAIL_START):
    """Integer weights (units of ``2^-_WORKING_BITS``) of the pieces: boxes, then the tail.

    Box ``J`` has area ``w f(J w)``; the weights are the areas divided by ``w``:
    ``f(J w)`` for the boxes, ``2^m`` times the tail's area for the tail. Each is
    within ``2^40`` units of the exact value (``tests/test_exact_sampling.py``
    checks them against 700-digit decimal arithmetic).
    """
    bits = _WORKING_BITS
    n_boxes = tail_start << m
    weights = []
    if gaussian:
        # f(J w) = q^(J^2), q = exp(-2^-(2m+1)): e_{J+1} = e_J q^(2J+1)
        q = _exp_fixed(1, 2 * m + 1, bits)
        q2 = q * q >> bits
        e, p = 1 << bits, q
        for _ in range(n_boxes):
            weights.append(e)
            e = e * p >> bits
            p = p * q2 >> bits
        # the tail: sum_{k >= T} exp(-k^2/2), with exp(-k^2/2) = h^(k^2), h = exp(-1/2)
        h = _exp_fixed(1, 1, bits)
        h2 = h * h >> bits
        e, p, k, tail = 1 << bits, h, 0, 0
        while e:
            if k >= tail_start:
                tail += e
            e = e * p >> bits
            p = p * h2 >> bits
            k += 1
        weights.append(tail << m)
    else:
        r = _exp_fixed(1, m, bits)              # exp(-w)
        e = 1 << bits
        for _ in range(n_boxes):
            weights.append(e)
            e = e * r >> bits
        weights.append(e << m)                  # exp(-T) / w
    return weights


def build_table(gaussian, m=BOX_BITS, tail_start=TAIL_START):
    """The alias table of the pieces: ``(tau64, tau_digits, alias, column_bits, m, T)``.

    Column ``i`` (of ``2^column_bits``, padded with pieces of weight 0) keeps
    ``i`` when a uniform ``V`` is below its threshold ``tau_i`` and gives
    ``alias[i]`` otherwise; the thresholds are exact rationals (integer
    arithmetic on the integer weights), stored truncated to 2,048 bits.
    ``tau64`` holds their first 64 bits, ``tau_digits`` all 64 base-2^32 digits.
    """
    if not (1 <= m <= 15 and 1 <= tail_start <= (1 << m)):
        raise ValueError("need 1 <= m <= 15 and 1 <= T <= 2^m (the coin's probability is <= 1)")
    weights = table_weights(gaussian, m, tail_start)
    column_bits = max(1, (len(weights) - 1).bit_length())
    n = 1 << column_bits
    assert 1 + column_bits + 2 * m + 1 <= 64
    mass = [w * n for w in weights] + [0] * (n - len(weights))
    total = sum(weights)
    small = [i for i in range(n) if mass[i] < total]
    large = [i for i in range(n) if mass[i] >= total]
    alias = list(range(n))
    while small and large:
        s, g = small.pop(), large.pop()
        alias[s] = g                            # column s: s w.p. mass[s]/total, else g
        mass[g] -= total - mass[s]
        (small if mass[g] < total else large).append(g)
    for i in small + large:                     # exact arithmetic: these are full
        assert mass[i] == total
    bits = 32 * _TABLE_DIGITS
    tau64 = np.zeros(n, np.uint64)
    tau_digits = np.zeros((n, _TABLE_DIGITS), np.uint32)
    for i in range(n):
        if mass[i] == total:
            alias[i] = i                        # threshold 1: both branches give i
            threshold = (1 << bits) - 1
        else:
            threshold = (mass[i] << bits) // total
        tau64[i] = threshold >> (bits - 64)
        for d in range(_TABLE_DIGITS):
            tau_digits[i, d] = (threshold >> (bits - 32 * (d + 1))) & _MASK
    return tau64, tau_digits, np.array(alias, np.int64), column_bits, m, tail_start


_NORMAL_TAU64, _NORMAL_TAU, _NORMAL_ALIAS, _NORMAL_COLS, _, _ = build_table(True)
_LAPLACE_TAU64, _LAPLACE_TAU, _LAPLACE_ALIAS, _LAPLACE_COLS, _, _ = build_table(False)


@njit(cache=True, inline="always")
def _pick(column, word, tau64, tau_digits, alias, ws, state):
    """Column ``column``'s piece: itself if V < tau, else its alias. ``word`` is V's first 64 bits.

    V's further digits (row A) are drawn only when ``word`` equals the
    threshold's first 64 bits; the comparison is then digit by digit, and 64
    equal digits mean V >= tau (V is at least its own truncation), exactly.
    """
    t = tau64[column]
    if word != t:
        # a select, not a branch: which side of the threshold is a coin flip
        return np.int64(column) if word < t else alias[column]
    ws[A, 0] = 2
    ws[A, 1] = np.int64(word >> np.uint64(32))
    ws[A, 2] = np.int64(word & np.uint64(_MASK))
    for i in range(3, _TABLE_DIGITS + 1):
        _ensure(ws, A, i, state)
        d = np.int64(tau_digits[column, i - 1])
        if ws[A, i] != d:
            return np.int64(column) if ws[A, i] < d else alias[column]
    return alias[column]


@njit(cache=True, inline="always")
def _box_accepts(limit, thin_by_u, coin, coin_mask, ws, state):
    """Bernoulli(exp(-u p)) by a von Neumann run from u (row X), each step thinned by a coin.

    The coin is an integer R uniform in [0, 2^(2m+1)): a step goes on when
    R < limit, or R == limit and (``thin_by_u``) a fresh uniform is below u;
    so it goes on with probability p = (limit + u) / 2^(2m+1) (normal) or
    limit / 2^(2m+1) (Laplace), and the run's length is even with probability
    exp(-u p). ``coin`` is the first step's R.
    """
    n = 0
    y, z = X, A
    while True:
        if coin > limit:
            break
        if coin == limit:
            if not thin_by_u:
                break
            _fresh2(ws, W, state)
            if not _less(ws, W, X, state):
                break
        _fresh2(ws, z, state)
        if not _less(ws, z, y, state):
            break
        if n == 0:
            y, z = z, B
        else:
            y, z = z, y
        n += 1
        coin = np.int64(_next(state) & coin_mask)
    return n % 2 == 0


@njit(**_NO_REFCOUNT)
def _normal_tail_k(tail_start, ws, state):
    """k >= T with probability proportional to exp(-k^2/2): T + i, i geometric
    (ratio exp(-T), as T runs of Bernoulli(exp(-1))), kept with probability exp(-i^2/2)."""
    while True:
        i = 0
        while True:
            more = True
            for _ in range(tail_start):
                if not _bernoulli_exp_one(ws, state):
                    more = False
                    break
            if not more:
                break
            i += 1
        kept = True
        for _ in range(i * i):
            if not _bernoulli_exp_half(ws, state):
                kept = False
                break
        if kept:
            return tail_start + i


@njit(**_NO_REFCOUNT)
def _sample(gaussian, tau64, tau_digits, alias, column_bits, m, tail_start, ws, state):
    """An exact standard normal (Laplace) variate: ``(sign bit, offset, J, shift)``
    with ``|Z| = offset + (J + u) 2^-shift``, u the lazy uniform in row X."""
    n_boxes = tail_start << m
    column_mask = np.uint64((1 << column_bits) - 1)
    coin_mask = np.uint64((1 << (2 * m + 1)) - 1)
    offset = 0
    while True:
        word = _next(state)                     # V's first 64 bits
        bits = _next(state)                     # column, sign, first coin
        column = np.int64(bits & column_mask)
        piece = _pick(column, word, tau64, tau_digits, alias, ws, state)
        sign = np.int64((bits >> np.uint64(column_bits)) & np.uint64(1))
        coin = np.int64((bits >> np.uint64(column_bits + 1)) & coin_mask)
        _fresh2(ws, X, state)                   # u
        if piece < n_boxes:
            # f(t_J + w u) / f(t_J) = exp(-u (2J + u) / 2^(2m+1)) (normal), exp(-u / 2^m) (Laplace)
            limit = 2 * piece if gaussian else np.int64(2) << m
            if _box_accepts(limit, gaussian, coin, coin_mask, ws, state):
                return sign, offset, piece, m
        elif gaussian:
            # Karney's unit boxes beyond T: k, then u kept with probability exp(-u(2k+u)/2)
            k = _normal_tail_k(tail_start, ws, state)
            kept = True
            for _ in range(k + 1):
                if not _bernoulli_b(k, ws, state):
                    kept = False
                    break
            if kept:
                return sign, k, 0, 0
        else:
            offset += tail_start                # memoryless: |Z| - T given |Z| > T is Exp(1)


@njit(**_NO_REFCOUNT)
def _shift(v, s):
    if s >= 64 or s <= -64:
        return 0
    if s >= 0:
        return v << s
    return v >> (-s)


@njit(**_NO_REFCOUNT)
def fixed_point(c):
    """``(a, f1, f2)`` with ``a + f1 2^-32 + f2 2^-64`` = c + 1/2 (|c| <= 2^62),
    exact up to truncating |c| below 2^-64 (an error below 2^-64).

    Straight-line floating point, every operation exact: ``a = trunc(|c|)``
    (|c| <= 2^62 < 2^63), ``|c| - a`` (the low bits of a double, a double),
    its product by 2^64 (a power of two: exact, and below 2^64 since the
    fraction is below 1) and that product's truncation to an unsigned 64-bit
    integer, ``floor(frac 2^64)``, whose halves are the two digits. The digits
    are those of :func:`_fixed_point_bits` (the frexp/shift reference, kept for
    the tests) bit for bit; no libm call.
    """
    x = abs(c)
    if not x <= CLAMP:            # not reached by the releases (they clamp); NaN too
        return _fixed_point_bits(c)
    a = np.int64(x)                           # trunc = floor: x >= 0
    frac = x - np.float64(a)                  # exact, in [0, 1)
    low = np.uint64(frac * 18446744073709551616.0)  # floor(frac 2^64): the product is exact, < 2^64
    f1 = np.int64(low >> np.uint64(32))
    f2 = np.int64(low & np.uint64(_MASK))
    return _signed_half(c, a, f1, f2)


@njit(cache=True, inline="always")
def _signed_half(c, a, f1, f2):
    """``(a, f1, f2)`` of ``|c|`` to those of ``c + 1/2``, in 64.64 fixed point.

    For ``c < 0``: ``-(a + F)`` with ``F = f1 2^-32 + f2 2^-64`` is
    ``(-a - [F > 0]) + (1 - F)``, the fraction's two's complement; then 1/2
    is added with its carry. Written with selects rather than branches (the
    sign of a coordinate is a coin flip for the branch predictor).
    """
    low = (np.uint64(f1) << np.uint64(32)) | np.uint64(f2)
    negative = c < 0.0
    borrow = np.int64(1) if low != np.uint64(0) else np.int64(0)
    low = (np.uint64(0) - low) if negative else low
    a = (-a - borrow) if negative else a
    shifted = low + np.uint64(1 << 63)
    a += np.int64(1) if shifted < low else np.int64(0)
    return a, np.int64(shifted >> np.uint64(32)), np.int64(shifted & np.uint64(_MASK))


@njit(**_NO_REFCOUNT)
def _fixed_point_bits(c):
    """:func:`fixed_point` by frexp and integer shifts (the reference; tests compare)."""
    x = abs(c)
    a = 0
    f1 = 0
    f2 = 0
    if x > 0.0:
        m, e = math.frexp(x)                   # x = m 2^e, m in [1/2, 1)
        mant = np.int64(m * 9007199254740992.0)  # m 2^53, exact
        sh = 53 - e                            # x = mant 2^-sh
        if sh <= 0:
            a = mant << (-sh)
        else:
            if sh < 63:
                a = mant >> sh
                frac = mant & ((np.int64(1) << sh) - 1)
            else:
                frac = mant
            f1 = _shift(frac, 32 - sh) & _MASK
            f2 = _shift(frac, 64 - sh) & _MASK
    return _signed_half(c, a, f1, f2)


@njit(**_NO_REFCOUNT)
def _integer_part(f1, f2, sign, scale, ws, n_digits, adjust):
    """floor((F + sign scale D + adjust 2^-32L) ...) in units: see floor_offset."""
    carry = adjust
    for i in range(n_digits, 0, -1):
        t = sign * scale * ws[X, i] + carry
        if i == 1:
            t += f1
        elif i == 2:
            t += f2
        carry = t >> _BITS
    return carry


@njit(cache=True, inline="always")
def _two_digit_ends(f1, f2, sign, scale, u1, u2):
    """The floors of the two ends of ``f1 2^-32 + f2 2^-64 + sign * scale * u`` for u in
    [D, D + 1) 2^-64, D = u1 2^32 + u2 (u's first two digits): equal, they are the floor."""
    d1 = sign * scale * u1 + f1
    d2 = sign * scale * u2 + f2
    # sign > 0: the ends add 0 and scale - 1 to d2; sign < 0: -scale and 0
    # (selects: the sign is a coin flip for the branch predictor)
    low_end = np.int64(0) if sign > 0 else -scale
    high_end = scale - 1 if sign > 0 else np.int64(0)
    lo = (d1 + ((d2 + low_end) >> _BITS)) >> _BITS
    hi = (d1 + ((d2 + high_end) >> _BITS)) >> _BITS
    return lo, hi


@njit(**_NO_REFCOUNT)
def floor_offset(f1, f2, sign, scale, ws, state):
    """``floor(f1 2^-32 + f2 2^-64 + sign * scale * u)`` exactly, u the lazy uniform in row X.

    With D the integer of u's first L digits, scale * u lies in
    [scale D, scale (D + 1)) 2^-32L; digits are drawn until both ends give the
    same floor.
    """
    n_digits = max(2, ws[X, 0])
    _ensure(ws, X, n_digits, state)
    if n_digits == 2:
        # the usual case, straight-line: the two ends of S x in [S D, S (D + 1)) 2^-64
        lo, hi = _two_digit_ends(f1, f2, sign, scale, ws[X, 1], ws[X, 2])
        if lo == hi:
            return lo
        n_digits = 3
        _ensure(ws, X, n_digits, state)
    while True:
        if sign > 0:
            lo = _integer_part(f1, f2, 1, scale, ws, n_digits, 0)
            hi = _integer_part(f1, f2, 1, scale, ws, n_digits, scale - 1)
        else:
            lo = _integer_part(f1, f2, -1, scale, ws, n_digits, -scale)
            hi = _integer_part(f1, f2, -1, scale, ws, n_digits, 0)
        if lo == hi:
            return lo
        if n_digits >= _CAP:   # probability below 2^-1900: see the module docstring
            return lo
        n_digits += 1
        _ensure(ws, X, n_digits, state)


@njit(cache=True, inline="always")
def _floor_u(f1, f2, sign, scale, two_digits, word, ws, state):
    """:func:`floor_offset`; when ``two_digits``, u has exactly its first two digits,
    given as ``word`` (u1 2^32 + u2, a chunk's row), and the workspace is written
    only in the rare case (probability about ``scale 2^-64``) that they do not decide
    the floor: the same arithmetic and the same draws, without the workspace traffic."""
    if two_digits:
        u1 = (word >> _BITS) & _MASK
        u2 = word & _MASK
        lo, hi = _two_digit_ends(f1, f2, sign, scale, u1, u2)
        if lo == hi:
            return lo
        ws[X, 0] = 2
        ws[X, 1] = u1
        ws[X, 2] = u2
    return floor_offset(f1, f2, sign, scale, ws, state)


@njit(cache=True, inline="always")
def _assemble(a, f1, f2, scale, sign_bit, offset, box, shift, two_digits, word, ws, state):
    """``a + floor(F + s scale |Z|)``, F = f1 2^-32 + f2 2^-64, |Z| = offset + (box + u) 2^-shift.

    floor(y / 2^m) = floor(floor(y) / 2^m) with y = 2^m F + s scale (box + u):
    the integer part of 2^m F and s scale box are integers, the fractional part
    of 2^m F has 64 bits, and floor_offset gives the floor of the rest. u is the
    lazy uniform of row X, or (``two_digits``) its two digits in ``word``
    (:func:`_floor_u`).
    """
    sign = 1 if sign_bit == 1 else -1
    if shift == 0:
        return (a + sign * scale * (offset + box)
                + _floor_u(f1, f2, sign, scale, two_digits, word, ws, state))
    g1 = ((f1 << shift) & _MASK) | (f2 >> (_BITS - shift))
    g2 = (f2 << shift) & _MASK
    inner = ((f1 >> (_BITS - shift)) + sign * scale * box
             + _floor_u(g1, g2, sign, scale, two_digits, word, ws, state))
    return a + sign * scale * offset + (inner >> shift)


@njit(**_NO_REFCOUNT)
def exact_point(c, scale, gaussian, ws, state):
    """``floor(c + 1/2 + scale * Z)`` as an int64, Z exact N(0, 1) or Laplace(1).

    ``c`` must be finite with |c| <= 2^62 (callers clamp); ``ws`` a workspace.
    """
    a, f1, f2 = fixed_point(c)
    # The law goes through the (scratch) workspace so that numba compiles one
    # copy of the sampler for both laws, not one per literal value of ``gaussian``.
    ws[W, 0] = 1 if gaussian else 0
    normal = ws[W, 0] == 1
    if normal:
        tau64, tau_digits, alias, cols = _NORMAL_TAU64, _NORMAL_TAU, _NORMAL_ALIAS, _NORMAL_COLS
    else:
        tau64, tau_digits, alias, cols = (_LAPLACE_TAU64, _LAPLACE_TAU, _LAPLACE_ALIAS,
                                          _LAPLACE_COLS)
    sign_bit, offset, box, shift = _sample(normal, tau64, tau_digits, alias, cols, BOX_BITS,
                                           TAIL_START, ws, state)
    return _assemble(a, f1, f2, scale, sign_bit, offset, box, shift, False, np.int64(0), ws,
                     state)


def workspace():
    return np.zeros((4, _CAP + 1), np.int64)


@njit(cache=True)
def release_grid(c, scale, gaussian, state, out):
    """``out[i] = floor(c[i] + 1/2 + scale * Z_i)`` for every i (int64)."""
    ws = np.zeros((4, _CAP + 1), np.int64)
    for i in range(c.shape[0]):
        out[i] = exact_point(c[i], scale, gaussian, ws, state)


@njit(cache=True)
def _parts(n, gaussian, tau64, tau_digits, alias, column_bits, m, tail_start, state,
           signs, ks, digits):
    ws = np.zeros((4, _CAP + 1), np.int64)
    for i in range(n):
        sign_bit, offset, box, shift = _sample(gaussian, tau64, tau_digits, alias, column_bits,
                                               m, tail_start, ws, state)
        signs[i] = 1 if sign_bit == 1 else -1
        u1, u2 = ws[X, 1], ws[X, 2]
        if shift == 0:
            ks[i] = offset + box
            digits[i, 0], digits[i, 1] = u1, u2
        else:
            low = box & ((1 << shift) - 1)
            ks[i] = offset + (box >> shift)
            digits[i, 0] = (low << (_BITS - shift)) | (u1 >> shift)
            digits[i, 1] = ((u1 & ((1 << shift) - 1)) << (_BITS - shift)) | (u2 >> shift)


def sample_parts(n, gaussian, state, signs, ks, digits, table=None):
    """Test hook: n exact variates as (sign, integer part, first 2 digits of the fraction).

    ``table`` (from :func:`build_table`) replaces the release's table, so that
    tests can make the tail and the rare branches frequent.
    """
    if table is None:
        table = ((_NORMAL_TAU64, _NORMAL_TAU, _NORMAL_ALIAS, _NORMAL_COLS, BOX_BITS, TAIL_START)
                 if gaussian else
                 (_LAPLACE_TAU64, _LAPLACE_TAU, _LAPLACE_ALIAS, _LAPLACE_COLS, BOX_BITS,
                  TAIL_START))
    _parts(n, gaussian, *table, state, signs, ks, digits)


@njit(cache=True)
def reference_parts(n, gaussian, state, signs, ks, digits):
    """Test hook: the same from the reference samplers (Karney's N, the exponential by runs)."""
    ws = np.zeros((4, _CAP + 1), np.int64)
    for i in range(n):
        if gaussian:
            bit, k = _normal(ws, state)
        else:
            k = _exponential(ws, state)
            bit = _digit(state) & 1
        signs[i] = 1 if bit == 1 else -1
        ks[i] = k
        _ensure(ws, X, 2, state)
        digits[i, 0] = ws[X, 1]
        digits[i, 1] = ws[X, 2]


_LARGEST = np.finfo(np.float64).max
_LARGEST_SCALE = 1e290


@njit(**_NO_REFCOUNT)
def grid(scale):
    """``(gamma, S)`` of :func:`sklearn_dpol._core.noise.noise_grid` (scale finite, > 0)."""
    _, exponent = math.frexp(scale)
    gamma = math.ldexp(1.0, exponent - 29)
    return gamma, np.int64(math.floor(scale / gamma)) + 2


@njit(**_NO_REFCOUNT)
def release_value(v, scale, gaussian, ws, state):
    """One coordinate released on the grid of ``scale``, inside a kernel.

    ``gamma * floor(v / gamma + 1/2 + S Z)``, with the clamping and NaN rule of
    :func:`sklearn_dpol._core.noise.gaussian_release`; ``scale <= 0`` returns
    ``v``. Kernels that release per step (user-side reports, noisy gradients)
    call this, so that no floating-point sum of a value and its noise is ever
    released. A scale above 1e290 (infinite noise) releases 0.
    """
    gamma, multiplier = grid_entry(scale)
    return release_on(v, gamma, multiplier, gaussian, ws, state)


# Sentinels of grid_entry's multiplier (a real one is at least 2).
NO_NOISE = 0
CONSTANT = -1
ROUND_ONLY = -2        # lattice_entry: no noise, the value rounded to the lattice
# The largest multiplier of lattice_entry: grid() gives at most 2^29 + 1, and the exact
# floor's integer products (multiplier times a 32-bit digit) must stay below 2^62.
MAX_MULTIPLIER = 1 << 29


@njit(**_NO_REFCOUNT)
def grid_entry(scale):
    """``(gamma, S)`` of :func:`release_value`'s grid for ``scale``, computed once per scale.

    ``S = NO_NOISE`` when ``scale`` is not positive (the value is released as
    is) and ``S = CONSTANT`` above 1e290 (infinite noise: the release is 0).
    Kernels that release many coordinates at one scale compute this once and
    call :func:`release_on` per coordinate.
    """
    if not scale > 0.0:
        return 0.0, np.int64(NO_NOISE)
    if not scale <= _LARGEST_SCALE:
        # Infinite (or astronomically large) noise: the release is a constant,
        # independent of v (a zero budget that underflowed, for example).
        return 0.0, np.int64(CONSTANT)
    return grid(scale)


@njit(**_NO_REFCOUNT)
def lattice_entry(scale, gamma):
    """``(gamma, S)`` for noise ``scale`` on a fixed public lattice of step ``gamma``.

    :func:`grid_entry` picks the grid from the scale, so the step of a release
    tells its scale to within a factor of two; a lattice fixed in advance (a
    power of two) does not. ``S = floor(scale / gamma) + 2``, so that ``gamma S
    >= scale + gamma`` as on a grid (``doc/privacy.md`` sections 14 and 53.7); a
    scale of 0 rounds the value to the lattice without noise (``ROUND_ONLY``: no
    variate is drawn), and a scale whose multiplier would pass ``MAX_MULTIPLIER``
    (or a NaN or astronomically large one) releases the constant 0.
    """
    if scale != scale or not scale <= _LARGEST_SCALE:
        return gamma, np.int64(CONSTANT)
    if not scale > 0.0:
        return gamma, np.int64(ROUND_ONLY)
    ratio = scale / gamma
    if not ratio < MAX_MULTIPLIER - 2:
        return gamma, np.int64(CONSTANT)
    return gamma, np.int64(math.floor(ratio)) + 2


@njit(cache=True, inline="always")
def _rounded(v, gamma):
    """``gamma * floor(v / gamma + 1/2)``, exactly (the lattice point of ``v``; no variate)."""
    a, _, _ = fixed_point(_to_grid(v, gamma))
    return _from_grid(a, gamma)


@njit(cache=True, inline="always")
def release_on(v, gamma, multiplier, gaussian, ws, state):
    """:func:`release_value` with the grid ``(gamma, multiplier)`` of :func:`grid_entry`
    (or :func:`lattice_entry`)."""
    if multiplier == NO_NOISE:
        return v
    if multiplier == CONSTANT:
        return 0.0
    if multiplier == ROUND_ONLY:
        return _rounded(v, gamma)
    return _on_grid(v, gamma, multiplier, gaussian, ws, state)


@njit(**_NO_REFCOUNT)
def _on_grid(v, gamma, multiplier, gaussian, ws, state):
    """``gamma * floor(v / gamma + 1/2 + S Z)``: NaN to 0, clamped to +-2^62 grid steps,
    the product clipped to the finite doubles (post-processing)."""
    return _from_grid(exact_point(_to_grid(v, gamma), multiplier, gaussian, ws, state), gamma)


@njit(cache=True, inline="always")
def _to_grid(v, gamma):
    """``c = v / gamma`` (exact), NaN to 0, clamped to +-2^62 grid steps."""
    c = v / gamma
    if c != c:
        c = 0.0
    elif c > CLAMP:
        c = CLAMP
    elif c < -CLAMP:
        c = -CLAMP
    return c


@njit(cache=True, inline="always")
def _from_grid(point, gamma):
    """The released double ``gamma * point``, clipped to the finite doubles (post-processing)."""
    released = point * gamma
    if released > _LARGEST:
        return _LARGEST
    if released < -_LARGEST:
        return -_LARGEST
    return released


@njit(cache=True)
def release_values(values, gamma, multiplier, gaussian, state, out):
    """``out[i] = gamma * floor(values[i] / gamma + 1/2 + S Z_i)``, one sample per value.

    The reference of :func:`release_values_chunked` (the releases' path), kept
    for the tests and the benchmarks that compare the two.
    """
    ws = np.zeros((4, _CAP + 1), np.int64)
    for i in range(values.shape[0]):
        out[i] = _on_grid(values[i], gamma, multiplier, gaussian, ws, state)


# ---------------------------------------------------------------------------
# Noise drawn ahead, in chunks (doc/privacy.md, "Exact noise drawn ahead in chunks").
#
# A release is floor(c + 1/2 + S Z) with Z = s (offset + (J + u) 2^-shift): the
# variate (s, offset, J, shift, u's digits) is drawn by _sample without looking
# at c or S; only the final floor (floor_offset) reads c's bits, and it draws
# more of u's digits in the rare case (probability below 2^-34) that two
# digits do not decide it. A stream kernel therefore draws the variates of a
# chunk of coordinates in one tight loop (the sampler inlined there once) and
# the releases read them in order: the generator's words are consumed in the
# same order as one sample per release, except for those rare extra digits,
# which are then drawn after the chunk's variates (fresh digits either way:
# the released values have the same law). At the end of a kernel call,
# settle_noise rewinds the generator to just after the variates used, so that
# a stream cut into calls draws the same bits as one call (unless extra digits
# were drawn since the last fill: the state then stays where it is, past every
# word already used, and the unused variates are discarded, never reused).
# ---------------------------------------------------------------------------
NOISE_CHUNK = 512          # variates per chunk (6 int64 each: 24 kB; 27 kB with the spill)
NOISE_COLUMNS = 6          # sign bit, offset, J, shift, u's two digits, spill slot
SPILL_SLOTS = 4            # variates whose u has more than two digits drawn (rare)

_sample_inline = njit(inline="always", **_NO_REFCOUNT)(_sample.py_func)


@njit(cache=True)
def noise_source():
    """``(noise, spill, cursor)`` scratch of a chunked noise source (empty: the first read fills it).

    One source per generator stream and kernel call, closed by :func:`settle_noise`.
    ``cursor`` holds the next row, the rows drawn, the generator's state before
    and after the last fill (as int64 bit patterns) and the variates' law
    (1: normal, 0: Laplace).
    """
    return (np.zeros((NOISE_CHUNK, NOISE_COLUMNS), np.int64),
            np.zeros((SPILL_SLOTS, _CAP + 1), np.int64), np.zeros(11, np.int64))


# The law and the count are read from arrays, never passed as constants: numba
# would compile a copy of the (inlined) sampler for each literal value.
@njit(**_NO_REFCOUNT)
def fill_noise(noise, spill, cursor, ws, state):
    """Draw the next chunk of (at most ``cursor[1]``) exact variates of the law
    ``cursor[10]`` (1: normal, 0: Laplace) into ``noise`` (the sampler, inlined once).

    Row ``i``: sign bit, offset, J, shift (as :func:`_sample` returns them),
    u's first two digits as one word, and ``-1``; when u already has more
    digits (a tie in the acceptance runs), they go to a ``spill`` slot whose
    index replaces the ``-1``, and the chunk ends when the slots are used up
    (a data-independent event). ``cursor`` becomes ``(0, rows drawn)``, then
    the generator's state before and after the chunk.
    """
    limit = cursor[1]
    gaussian = cursor[10] == 1
    for t in range(4):
        cursor[2 + t] = np.int64(state[t])
    if gaussian:
        tau64, tau_digits, alias, cols = _NORMAL_TAU64, _NORMAL_TAU, _NORMAL_ALIAS, _NORMAL_COLS
    else:
        tau64, tau_digits, alias, cols = (_LAPLACE_TAU64, _LAPLACE_TAU, _LAPLACE_ALIAS,
                                          _LAPLACE_COLS)
    used = 0
    count = 0
    for i in range(min(limit, noise.shape[0])):
        sign_bit, offset, box, shift = _sample_inline(gaussian, tau64, tau_digits, alias, cols,
                                                      BOX_BITS, TAIL_START, ws, state)
        noise[i, 0] = sign_bit
        noise[i, 1] = offset
        noise[i, 2] = box
        noise[i, 3] = shift
        count = i + 1
        if ws[X, 0] == 2:
            noise[i, 4] = (ws[X, 1] << _BITS) | ws[X, 2]
            noise[i, 5] = -1
        else:
            for t in range(ws[X, 0] + 1):
                spill[used, t] = ws[X, t]
            noise[i, 5] = used
            used += 1
            if used == spill.shape[0]:
                break
    cursor[0] = 0
    cursor[1] = count
    for t in range(4):
        cursor[6 + t] = np.int64(state[t])


@njit(**_NO_REFCOUNT)
def settle_noise(noise, spill, cursor, ws, state):
    """Close a chunked source: the generator ends where one sample per release leaves it.

    When no word was drawn since the last fill (no extra digits), the state
    goes back to before the fill and the variates used are drawn again (the
    same words, discarded); otherwise it stays (see above). The source is
    then empty.
    """
    used = cursor[0]
    if used < cursor[1]:
        untouched = True
        for t in range(4):
            if np.int64(state[t]) != cursor[6 + t]:
                untouched = False
        if untouched:
            for t in range(4):
                state[t] = np.uint64(cursor[2 + t])
            cursor[1] = used
            fill_noise(noise, spill, cursor, ws, state)
    cursor[0] = 0
    cursor[1] = 0


@njit(cache=True, inline="always")
def _buffered_on_grid(v, gamma, multiplier, gaussian, noise, spill, cursor, ws, state):
    """:func:`_on_grid` with the variate read from the chunk (refilled when used up).

    A source holding variates of the other law (never the case in the
    kernels: one source per law) is closed and refilled, never misread.
    """
    a, f1, f2 = fixed_point(_to_grid(v, gamma))
    k = cursor[0]
    law = 1 if gaussian else 0
    if k >= cursor[1] or cursor[10] != law:
        settle_noise(noise, spill, cursor, ws, state)
        cursor[1] = noise.shape[0]
        cursor[10] = law
        fill_noise(noise, spill, cursor, ws, state)
        k = 0
    cursor[0] = k + 1
    slot = noise[k, 5]
    two_digits = slot < 0
    if not two_digits:
        for t in range(spill[slot, 0] + 1):
            ws[X, t] = spill[slot, t]
    point = _assemble(a, f1, f2, multiplier, noise[k, 0], noise[k, 1], noise[k, 2], noise[k, 3],
                      two_digits, noise[k, 4], ws, state)
    return _from_grid(point, gamma)


@njit(cache=True, inline="always")
def buffered_release_on(v, gamma, multiplier, gaussian, noise, spill, cursor, ws, state):
    """:func:`release_on` reading its variate from a chunked noise source (see above)."""
    if multiplier == NO_NOISE:
        return v
    if multiplier == CONSTANT:
        return 0.0
    if multiplier == ROUND_ONLY:
        return _rounded(v, gamma)
    return _buffered_on_grid(v, gamma, multiplier, gaussian, noise, spill, cursor, ws, state)


@njit(cache=True)
def release_values_chunked(values, gamma, multiplier, gaussian, state, out):
    """:func:`release_values` with the variates drawn ahead in chunks: the same bits.

    Every central release (:func:`sklearn_dpol._core.noise.gaussian_release`,
    ``laplace_release``) goes through this. Each chunk draws exactly the
    variates its values need (at most ``NOISE_CHUNK``), so nothing is drawn
    that no value reads and the generator ends where one sample per value
    leaves it (unless extra digits of some ``u`` were drawn: see above).
    """
    ws = np.zeros((4, _CAP + 1), np.int64)
    noise, spill, cursor = noise_source()
    _release_chunked(values, gamma, multiplier, gaussian, noise, spill, cursor, ws, state, out)


@njit(**_NO_REFCOUNT)
def _release_chunked(values, gamma, multiplier, gaussian, noise, spill, cursor, ws, state, out):
    n = values.shape[0]
    if multiplier == NO_NOISE or multiplier == CONSTANT:
        for i in range(n):      # no variate is read
            out[i] = buffered_release_on(values[i], gamma, multiplier, gaussian, noise, spill,
                                         cursor, ws, state)
        return
    start = 0
    while start < n:
        # A chunk of the variates still needed; fill_noise may stop early (spill
        # slots used up, a data-independent event), and always draws at least one.
        cursor[0] = 0
        cursor[1] = min(noise.shape[0], n - start)
        cursor[10] = 1 if gaussian else 0
        fill_noise(noise, spill, cursor, ws, state)
        stop = start + cursor[1]
        for i in range(start, stop):
            out[i] = _buffered_on_grid(values[i], gamma, multiplier, gaussian, noise, spill,
                                       cursor, ws, state)
        start = stop
    # every variate drawn was read: nothing to rewind
    cursor[0] = 0
    cursor[1] = 0


# The local Laplace reports' lattice (their values lie in [-1, 1] before noise): one
# step for every user and budget, so a report's bits do not tell its user's budget
# (doc/privacy.md, section 53.7). A coordinate budget tau gives the multiplier
# 2^13 / tau + 2: budgets from 2^-16 up fit below MAX_MULTIPLIER; a smaller one
# reports the constant 0.
LAPLACE_REPORT_LATTICE = 2.0 ** -12


@njit(**_NO_REFCOUNT)
def laplace_report_chunked(gradient, gammas, multipliers, out, noise, spill, cursor, ws, state):
    """:func:`laplace_report` with each coordinate's lattice entry precomputed by
    :func:`lattice_entry` (a stream of users with the same budget computes them once) and
    its noise read from a chunked source."""
    for j in range(gradient.shape[0]):
        out[j] = buffered_release_on(_unit_clip(gradient[j]), gammas[j], multipliers[j], False,
                                     noise, spill, cursor, ws, state)


@njit(**_NO_REFCOUNT)
def gaussian_report_chunked(mean, sigma, out, noise, spill, cursor, ws, state):
    """:func:`gaussian_report` reading its noise from a chunked source."""
    gamma, multiplier = grid_entry(sigma)
    for j in range(mean.shape[0]):
        out[j] = buffered_release_on(mean[j], gamma, multiplier, True, noise, spill, cursor, ws,
                                     state)


@njit(**_NO_REFCOUNT)
def laplace_report(gradient, scales, out, ws, state):
    """The local Laplace randomiser's report, in place: ``out_j = clip(g_j, -1, 1)``
    released with Laplace noise of scale ``scales_j`` (0: no noise, the coordinate is public).

    A non-finite gradient coordinate is mapped to 0 before clipping (a
    data-independent value), so the report is finite whatever the row. Every
    coordinate lies on :data:`LAPLACE_REPORT_LATTICE`, whatever its scale
    (:func:`lattice_entry`): a coordinate without noise is rounded to it.
    """
    for j in range(gradient.shape[0]):
        gamma, multiplier = lattice_entry(scales[j], LAPLACE_REPORT_LATTICE)
        out[j] = laplace_coordinate(gradient[j], gamma, multiplier, ws, state)


@njit(cache=True, inline="always")
def laplace_coordinate(g, gamma, multiplier, ws, state):
    """One coordinate of :func:`laplace_report`: NaN to 0, clipped to [-1, 1], released."""
    return release_on(_unit_clip(g), gamma, multiplier, False, ws, state)


@njit(cache=True, inline="always")
def _unit_clip(g):
    """A report coordinate: NaN to 0, clipped to [-1, 1]."""
    if g != g:
        g = 0.0
    return min(max(g, -1.0), 1.0)


@njit(**_NO_REFCOUNT)
def gaussian_report(mean, sigma, out, ws, state):
    """A user-side Gaussian report, in place: ``out_j = mean_j`` released with noise ``sigma``.

    The caller clips ``mean`` (its L2 norm bounds the sensitivity). The grid
    of ``sigma`` is computed once for the report.
    """
    gamma, multiplier = grid_entry(sigma)
    for j in range(mean.shape[0]):
        out[j] = release_on(mean[j], gamma, multiplier, True, ws, state)


@njit(**_NO_REFCOUNT)
def _bernoulli_exp_fraction(f1, f2, ws, state):
    """True with probability exp(-f), f = f1 2^-32 + f2 2^-64 in [0, 1) (von Neumann's run)."""
    _fresh(ws, A, state)
    if ws[A, 1] != f1:
        below = ws[A, 1] < f1
    else:
        _ensure(ws, A, 2, state)
        # equal first two digits: z >= f, since f has no further digits
        below = ws[A, 2] < f2
    if not below:
        return True            # run of length 0
    return _continue_run(ws, A, B, 1, state) % 2 == 0


@njit(cache=True)
def exponential_choice(x, state):
    """An index ``s`` with probability ``exp(-x_s) / sum_r exp(-x_r)``, exactly.

    ``x`` is finite, nonnegative, below 2^52, with at least one entry below 1
    (callers subtract the minimum). Rejection from the uniform proposal: ``s``
    is kept with probability ``exp(-x_s)``, as ``k = floor(x_s)`` runs of
    Bernoulli(exp(-1)) and one of Bernoulli(exp(-frac)), ``frac`` truncated to
    2^-64. The expected number of proposals is at most ``len(x)``.
    """
    ws = np.zeros((4, _CAP + 1), np.int64)
    m = x.shape[0]
    while True:
        s = _below(state, m)
        k = np.int64(math.floor(x[s]))
        scaled = (x[s] - k) * 4294967296.0      # exact: a power-of-two scaling
        f1 = np.int64(math.floor(scaled))
        f2 = np.int64(math.floor((scaled - f1) * 4294967296.0))
        accepted = True
        for _ in range(k):
            if not _bernoulli_exp_one(ws, state):
                accepted = False
                break
        if accepted and _bernoulli_exp_fraction(f1, f2, ws, state):
            return s


# -- the sampled-coordinate randomiser (doc/privacy.md section 54.2) ---------------------
#
# A user reports one coordinate ``j`` (drawn from the public budget split, independently
# of its data) as ``s K / p_j`` with a sign ``s`` that is +1 with probability
# ``(2^61 + r) / 2^62``, ``r = round(g_j a)`` clamped to ``[-a, a]``: the ratio of the two
# signs' probabilities between any two gradients is at most ``(2^61 + a) / (2^61 - a)``.
# ``K`` is a rung of a public ladder (``1 + 2^(-j/16)`` up to 2, then ``2^(k/16)``), the
# smallest at or above ``coth(epsilon / 2)``, and ``a = floor(2^61 / K)`` exactly, so that
# ``a / 2^61 <= 1/K <= tanh(epsilon / 2)`` and the ratio is at most ``e^epsilon``. The
# released value is a function of ``(j, s, k)``: its magnitude tells the user's budget to a
# rung (doc/privacy.md 54.2).
SIGN_HALF = 1 << 61
SIGN_LADDER_STEPS = 16
SIGN_LADDER_TOP = 16 * 61          # K up to 2^61: above it a = 0, a report carries nothing
SIGN_LADDER_FINE = 16 * 40         # K down to 1 + 2^-40: budgets up to about 28.4 are used
SIGN_MARGIN = 2.0 ** -40           # coth(epsilon/2) is computed with ~1e-15 relative error


@functools.lru_cache(maxsize=1)
def sign_ladder():
    """``(K, a)``, ``K`` increasing: ``K[0] = 1`` (never used: a deterministic sign), then
    ``1 + 2^(-j/16)`` for ``j = 640 .. 1`` (geometric in ``K - 1`` near 1, where the budget
    is large), then ``2^(k/16)`` for ``k = 16 .. 976``; ``a[k] = floor(2^61 / K[k])`` exactly
    (rational arithmetic on the float ``K[k]``)."""
    from fractions import Fraction

    fine = 1.0 + 2.0 ** (-np.arange(SIGN_LADDER_FINE, 0, -1) / float(SIGN_LADDER_STEPS))
    coarse = 2.0 ** (np.arange(SIGN_LADDER_STEPS, SIGN_LADDER_TOP + 1)
                     / float(SIGN_LADDER_STEPS))
    magnitudes = np.concatenate([[1.0], fine, coarse])
    a = np.array([math.floor(Fraction(SIGN_HALF) / Fraction(float(m))) for m in magnitudes],
                 dtype=np.int64)
    magnitudes.flags.writeable = False
    a.flags.writeable = False
    return magnitudes, a


@njit(cache=True)
def sign_rung(epsilon, magnitudes):
    """The rung ``k >= 1`` of the smallest ``K[k] >= coth(epsilon / 2) (1 + 2^-40)``.

    ``-1`` when there is none (a budget below about ``2^-60``, a NaN or a
    nonpositive one: the report is then the constant 0, failing closed).
    """
    if not epsilon > 0.0:
        return -1
    c_up = (1.0 + 2.0 / math.expm1(epsilon)) * (1.0 + SIGN_MARGIN)
    top = magnitudes.shape[0] - 1
    if not c_up <= magnitudes[top]:
        return -1
    return max(1, np.searchsorted(magnitudes, c_up))


@njit(cache=True, inline="always")
def randomized_sign(g, a, state):
    """+1 with probability ``(2^61 + r) / 2^62``, ``r = round(g a)`` clamped to ``[-a, a]``;
    else -1. ``g`` is clipped to [-1, 1] (a NaN counts as 0). Exact: the comparison of
    a uniform 62-bit integer with an integer threshold."""
    g = _unit_clip(g)
    r = np.int64(math.floor(g * float(a) + 0.5))
    r = min(max(r, -a), a)
    threshold = np.uint64(SIGN_HALF + r)
    return 1.0 if (_next(state) >> np.uint64(2)) < threshold else -1.0


@njit(cache=True, inline="always")
def pick_coordinate(cumulative, state):
    """Position ``i`` with probability ``cumulative[i] - cumulative[i - 1]`` (public values;
    ``cumulative[-1] == 1``). The draw never reads the data."""
    u = float(_next(state) >> np.uint64(11)) * 2.0 ** -53
    lo, hi = 0, cumulative.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < cumulative[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def sampled_report(gradient, epsilon, private, cumulative, inverse_p, magnitudes, a,
                   out, state):
    """The sampled-coordinate randomiser's report, in place (``gradient`` may be ``out``).

    Coordinates outside ``private`` (weight 0, public) are clipped to [-1, 1] and rounded
    to :data:`LAPLACE_REPORT_LATTICE` without noise, as the Laplace reports' are; the
    private ones are 0 except one, ``private[i]`` with probability ``p_i`` (``cumulative``,
    ``inverse_p = 1 / p_i``), reported as ``s K / p_i``. ``epsilon = inf``: every
    coordinate rounded to the lattice without noise; no rung: the private coordinates
    are all 0.
    """
    d = gradient.shape[0]
    if epsilon == np.inf:
        for j in range(d):
            out[j] = _rounded(_unit_clip(gradient[j]), LAPLACE_REPORT_LATTICE)
        return
    k = sign_rung(epsilon, magnitudes)
    picked = -1
    value = 0.0
    if k >= 0 and private.shape[0] > 0:
        i = pick_coordinate(cumulative, state)
        picked = private[i]
        value = randomized_sign(gradient[picked], a[k], state) * magnitudes[k] * inverse_p[i]
    n_private = 0
    for j in range(d):
        if n_private < private.shape[0] and private[n_private] == j:
            out[j] = 0.0
            n_private += 1
        else:
            out[j] = _rounded(_unit_clip(gradient[j]), LAPLACE_REPORT_LATTICE)
    if picked >= 0:
        out[picked] = value


# -- the Gaussian report, faster, the same bits (doc/privacy.md 55.14) ------

@njit(cache=True, inline="always")
def _step(s0, s1, s2, s3):
    """:func:`_next` on a state held in four locals: ``(output, s0, s1, s2, s3)``.

    A state in an array is stored and reloaded around every draw when the kernel also
    writes other int64 arrays (LLVM cannot rule out that they alias), which put the
    store-to-load latency on the generator's dependency chain (measured: a quarter of
    a variate's time). ``tests/test_s31i_direct_report.py`` checks it equals
    :func:`_next` word for word.
    """
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


# Column i's own piece (low 32 bits) and its alias (high 32 bits), for _normal_direct.
_NORMAL_PAIR = np.arange(_NORMAL_ALIAS.shape[0], dtype=np.int64) | (_NORMAL_ALIAS << 32)


@njit(cache=True, inline="always")
def _normal_direct(s0, s1, s2, s3, ws, state):
    """:func:`_sample` for the normal on a generator state held in locals (see :func:`_step`):
    ``(sign bit, offset, J, shift, usual, u, s0, s1, s2, s3)``.

    In the usual iteration (the first 64 bits of V decide the alias column, the first
    coin ends the acceptance run at once, the piece is a box) u has exactly the two
    digits of the word ``u`` and ``usual`` is true; otherwise the state goes back to
    ``state`` and the very functions :func:`_sample` calls run (:func:`_pick`,
    :func:`_box_accepts`, the tail's :func:`_normal_tail_k` and :func:`_bernoulli_b`),
    u is in row X of ``ws``, and the locals are reloaded. The words drawn, their order
    and the result are :func:`_sample`'s.
    """
    column_bits = _NORMAL_COLS
    m = BOX_BITS
    n_boxes = TAIL_START << m
    column_mask = np.uint64((1 << column_bits) - 1)
    coin_mask = np.uint64((1 << (2 * m + 1)) - 1)
    while True:
        word, s0, s1, s2, s3 = _step(s0, s1, s2, s3)            # V's first 64 bits
        bits, s0, s1, s2, s3 = _step(s0, s1, s2, s3)            # column, sign, first coin
        column = np.int64(bits & column_mask)
        t = _NORMAL_TAU64[column]
        if word != t:
            # column if word < t, else its alias: both from one load, chosen by a shift (a
            # branch here is a coin flip for the predictor, and LLVM makes a conditional
            # load of the alias into one)
            piece = (_NORMAL_PAIR[column] >> (np.int64(word >= t) << 5)) & _MASK
        else:
            state[0], state[1], state[2], state[3] = s0, s1, s2, s3
            piece = _pick(column, word, _NORMAL_TAU64, _NORMAL_TAU, _NORMAL_ALIAS, ws, state)
            s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        sign = np.int64((bits >> np.uint64(column_bits)) & np.uint64(1))
        coin = np.int64((bits >> np.uint64(column_bits + 1)) & coin_mask)
        u, s0, s1, s2, s3 = _step(s0, s1, s2, s3)               # u's two digits (_fresh2)
        if piece < n_boxes and coin > 2 * piece:
            # _box_accepts' run ends at its first coin: accepted
            return sign, np.int64(0), piece, np.int64(m), True, u, s0, s1, s2, s3
        if piece < n_boxes:
            # the acceptance run goes on: on 64-bit words in registers, unless a tie
            accepted, tie, r0, r1, r2, r3 = _box_run_words(2 * piece, coin, u, s0, s1, s2, s3)
            if not tie:
                s0, s1, s2, s3 = r0, r1, r2, r3
                if accepted:
                    return sign, np.int64(0), piece, np.int64(m), True, u, s0, s1, s2, s3
                continue
            # a tie (probability below 2^-63): the run again from its start, lazily
        state[0], state[1], state[2], state[3] = s0, s1, s2, s3
        accepted, offset, box, shift = _normal_unusual(piece, coin, u, ws, state)
        s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        if accepted:
            return sign, offset, box, shift, False, u, s0, s1, s2, s3


@njit(**_NO_REFCOUNT)
def _box_run_words(limit, coin, u, s0, s1, s2, s3):
    """:func:`_box_accepts` for the normal (``thin_by_u``) with u's two digits in ``u``, each
    lazy uniform's first 64 bits drawn as :func:`_fresh2` draws them and compared as
    integers: ``(accepted, tie, s0, s1, s2, s3)``. Two equal words (``tie``) are where
    :func:`_less` would draw further digits: the caller then runs :func:`_box_accepts`
    from the run's start (the same words again, then those digits). Otherwise the words
    drawn and the result are :func:`_box_accepts`'."""
    coin_mask = np.uint64((1 << (2 * BOX_BITS + 1)) - 1)
    n = 0
    y = u
    while True:
        if coin > limit:
            break
        if coin == limit:
            thin, s0, s1, s2, s3 = _step(s0, s1, s2, s3)       # row W
            if thin == u:
                return False, True, s0, s1, s2, s3
            if not thin < u:
                break
        z, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        if z == y:
            return False, True, s0, s1, s2, s3
        if not z < y:
            break
        y = z
        n += 1
        word, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        coin = np.int64(word & coin_mask)
    return n % 2 == 0, False, s0, s1, s2, s3


@njit(**_NO_REFCOUNT)
def _normal_unusual(piece, coin, u, ws, state):
    """The rest of :func:`_sample`'s iteration for the normal when the first coin does not end
    the run or the piece is the tail, u's two digits in ``u``: ``(accepted, offset, J,
    shift)``, the state in ``state``. Not inlined: :func:`_normal_direct`'s loop stays small
    (its generator state in registers), and this runs for about 1.3% of the variates."""
    m = BOX_BITS
    n_boxes = TAIL_START << m
    coin_mask = np.uint64((1 << (2 * m + 1)) - 1)
    ws[X, 0] = 2
    ws[X, 1] = np.int64(u >> np.uint64(32))
    ws[X, 2] = np.int64(u & np.uint64(_MASK))
    if piece < n_boxes:
        return (_box_accepts(2 * piece, True, coin, coin_mask, ws, state), np.int64(0), piece,
                np.int64(m))
    k = _normal_tail_k(TAIL_START, ws, state)
    for _ in range(k + 1):
        if not _bernoulli_b(k, ws, state):
            return False, k, np.int64(0), np.int64(0)
    return True, k, np.int64(0), np.int64(0)


@njit(cache=True, inline="always")
def _fixed_point_clamped(c):
    """:func:`fixed_point` of a ``c`` from :func:`_to_grid` (``|c| <= 2^62``, not NaN): its
    branch for those, alone, so that a loop over a vector of them vectorises."""
    x = abs(c)
    a = np.int64(x)
    low = np.uint64((x - np.float64(a)) * 18446744073709551616.0)
    return _signed_half(c, a, np.int64(low >> np.uint64(32)), np.int64(low & np.uint64(_MASK)))


REPORT_SCRATCH_ROWS = 5   # c's integer part and fraction, the variate (2), the point


def report_scratch(n_dims):
    """The scratch of :func:`gaussian_report_direct` for reports of ``n_dims`` coordinates."""
    return np.zeros((REPORT_SCRATCH_ROWS, n_dims), np.int64)


@njit(cache=True, inline="always")
def _usual_floor(a, frac, sign_bit, box, u, scale):
    """``(point, decided)``: :func:`_assemble`'s integer for a box variate (offset 0, shift
    ``BOX_BITS``) whose u has exactly the two digits of the word ``u``, when the two ends
    of :func:`_two_digit_ends` agree (``decided``); ``a + frac 2^-64`` is c + 1/2."""
    f1 = (frac >> _BITS) & _MASK
    f2 = frac & _MASK
    shift = BOX_BITS
    sign = np.int64(1) if sign_bit == 1 else np.int64(-1)
    g1 = ((f1 << shift) & _MASK) | (f2 >> (_BITS - shift))
    g2 = (f2 << shift) & _MASK
    lo, hi = _two_digit_ends(g1, g2, sign, scale, np.int64(u >> np.uint64(32)),
                             np.int64(u & np.uint64(_MASK)))
    return a + (((f1 >> (_BITS - shift)) + sign * scale * box + lo) >> shift), lo == hi


@njit(**_NO_REFCOUNT)
def gaussian_report_direct(mean, sigma, out, ws, state, scratch):
    """:func:`gaussian_report`, bit for bit and word for word (the same released values and
    the same final generator state, whatever happens), faster.

    Passes: every ``c_j + 1/2`` in 64.64 fixed point (:func:`_fixed_point_clamped`, a
    loop that vectorises); the report's variates, the generator state held in locals
    (:func:`_step`), each usual one drawn without the workspace (:func:`_normal_direct`);
    their floors from u's two digits (:func:`_usual_floor`); the released doubles. When
    some variate is not usual or some floor is not decided by two digits (so that
    ``exact_point`` would draw further words between two variates), the report is
    computed again from the generator state it started from, one coordinate at a time
    in ``exact_point``'s order (the variate, then its floor, :func:`_assemble` for the
    rare cases): the same words either way, none drawn ahead of the report. ``scratch``
    is :func:`report_scratch` of at least ``mean.shape[0]`` columns (``REPORT_SCRATCH_ROWS``
    rows; the kernels compile without bounds checks); ``out`` may be ``mean``.
    """
    gamma, multiplier = grid_entry(sigma)
    n = mean.shape[0]
    if multiplier < 2 or scratch.shape[0] < REPORT_SCRATCH_ROWS or scratch.shape[1] < n:
        # no variate is drawn; or too small a scratch: the public report itself
        gaussian_report(mean, sigma, out, ws, state)
        return
    scale = np.int64(multiplier)
    for j in range(n):
        a, f1, f2 = _fixed_point_clamped(_to_grid(mean[j], gamma))
        scratch[0, j] = a
        scratch[1, j] = (f1 << _BITS) | f2
    t0, t1, t2, t3 = state[0], state[1], state[2], state[3]
    s0, s1, s2, s3 = t0, t1, t2, t3
    # The variates first, then the floors: the same words in the same order as one
    # coordinate at a time when every variate is usual and every floor is decided by u's
    # two digits (no floor draws a word). Otherwise (probability below 2^-34 per
    # coordinate) the report is computed again one coordinate at a time from the state
    # it started from: exact_point's order, the same words.
    decided = True
    for j in range(n):
        sign_bit, offset, box, shift, usual, u, s0, s1, s2, s3 = _normal_direct(
            s0, s1, s2, s3, ws, state)
        if not usual:
            decided = False
            break
        scratch[2, j] = sign_bit | (box << 1)
        scratch[3, j] = np.int64(u)
    if decided:
        for j in range(n):
            point, ok = _usual_floor(scratch[0, j], np.uint64(scratch[1, j]),
                                     scratch[2, j] & 1, scratch[2, j] >> 1,
                                     np.uint64(scratch[3, j]), scale)
            scratch[4, j] = point
            decided &= ok
    if not decided:
        s0, s1, s2, s3 = t0, t1, t2, t3
        for j in range(n):
            # exact_point's order: the variate, then the floor
            sign_bit, offset, box, shift, usual, u, s0, s1, s2, s3 = _normal_direct(
                s0, s1, s2, s3, ws, state)
            a = scratch[0, j]
            frac = np.uint64(scratch[1, j])
            point = np.int64(0)
            ok = False
            if usual:
                point, ok = _usual_floor(a, frac, sign_bit, box, u, scale)
            if not ok:
                state[0], state[1], state[2], state[3] = s0, s1, s2, s3
                point = _assemble(a, np.int64(frac >> np.uint64(_BITS)),
                                  np.int64(frac & np.uint64(_MASK)), scale, sign_bit, offset,
                                  box, shift, usual, np.int64(u), ws, state)
                s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
            scratch[4, j] = point
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    for j in range(n):
        out[j] = _from_grid(scratch[4, j], gamma)


# -- the usual report coordinate's floor in double precision, certified (doc/privacy.md 56.8) --

BOX_UNIT = 2.0 ** -BOX_BITS            # a box's width
_WORD_UNIT = 2.0 ** -64                # u's two digits as a fraction
# The bound on the fraction of 2^5 v in usual_floor_estimate (56.8): v is within three
# units of roundoff (2^-53) of M = |c| + 1 + S (box + 2) 2^-5 of the exact value at u's two
# digits; 2^5 times that, plus 2^5 2^-64 (c's truncation in fixed_point), 2^-53 (the
# fraction's rounding) and S 2^-64 < 2^-34 (u beyond its two digits), is below
# M 2^-45 + 2^-33.
FLOOR_ESTIMATE_RELATIVE = 2.0 ** -45
FLOOR_ESTIMATE_ABSOLUTE = 2.0 ** -33


@njit(cache=True, inline="always")
def floor_estimate_bound(c_limit, scale):
    """The bound of :func:`usual_floor_estimate` for every ``|c| <= c_limit`` and every box
    variate (``box < TAIL_START 2^BOX_BITS``) of the multiplier ``scale`` (a double)."""
    largest = np.float64((TAIL_START << BOX_BITS) + 1)
    return ((c_limit + 1.0 + scale * (largest + 2.0) * BOX_UNIT) * FLOOR_ESTIMATE_RELATIVE
            + FLOOR_ESTIMATE_ABSOLUTE)


@njit(cache=True, inline="always")
def usual_floor_estimate(c, sign_bit, box, u, scale, c_limit, bound):
    """``(point, certain)``: :func:`_usual_floor`'s point for the grid value ``c`` (its fixed
    point is ``_fixed_point_clamped(c)``) and a box variate, computed in double precision.

    :func:`_usual_floor` decides (``ok``) when ``2^5 (c + 1/2 + s S (box + u) 2^-5)`` has
    one floor for every u with the two digits given, and then its point is that floor
    shifted right by 5. Here ``v``, that value at u's two digits, is computed in double
    precision; ``certain`` when ``|c| <= c_limit`` and ``2^5 v`` is farther from an integer
    than ``bound`` (:func:`floor_estimate_bound` of ``c_limit``: its error bound plus the
    width of u's interval): then the floor is decided and ``point`` (an integer, as a
    double) is :func:`_usual_floor`'s. Otherwise ``point`` is NaN (a mark that survives
    :func:`_from_grid`, whose releases are never NaN) and the caller runs
    :func:`_usual_floor` (it may still decide). No branch: a loop over a report's
    coordinates vectorises. ``scale`` is the multiplier S as a double; ``u`` the word of
    u's two digits.
    """
    b = np.float64(box)
    q = (scale * (b + np.float64(u) * _WORD_UNIT)) * BOX_UNIT
    h = c + 0.5
    v = (h + q if sign_bit == 1 else h - q) * (1 << BOX_BITS)
    whole = np.floor(v)
    fraction = v - whole
    certain = (fraction > bound) & (fraction < 1.0 - bound) & (abs(c) <= c_limit)
    return (np.floor(whole * BOX_UNIT) if certain else np.nan), certain
