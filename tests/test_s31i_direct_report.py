"""The faster Gaussian report (``gaussian_report_direct``, MI-OGD's protocol kernel) is the
public report ``gaussian_report`` bit for bit and word for word (doc/privacy.md 55.14).

Random draws reach the usual path and the acceptance runs that go on; the rare branches
(a tie between V's first 64 bits and a threshold, the tail beyond 7, a floor that two
digits of u do not decide) are reached by *forging* the generator: xoshiro256** is
invertible, so a state whose next three outputs are chosen words is solved for below.
Every alias column is driven both ways (V just below and at or above its threshold), so
a changed entry of the column/alias table (``_NORMAL_PAIR``) fails here.
"""

import numpy as np
import pytest
from numba import njit

from sklearn_dpol._core import _exact_kernels as kernels
from sklearn_dpol._core.noise import sampler_state

M64 = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def _output_state(word):
    """``s1`` such that xoshiro256**'s output ``rotl(s1 * 5, 7) * 9`` is ``word``."""
    v = (word * pow(9, -1, 1 << 64)) & M64
    v = _rotl(v, 64 - 7)
    return (v * pow(5, -1, 1 << 64)) & M64


def _transition(s):
    """xoshiro256**'s state update on four Python ints (linear over GF(2))."""
    s0, s1, s2, s3 = s
    t = (s1 << 17) & M64
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return [s0, s1, s2, s3]


def forged_state(*words):
    """A state whose next ``len(words)`` (at most 4) ``_next`` outputs are ``words``.

    Each output is an invertible function of that step's ``s1``, and ``s1`` after ``k``
    steps is a GF(2)-linear function of the state: the state is solved for by Gaussian
    elimination on 64 equations per word.
    """
    n = len(words)
    assert 1 <= n <= 4
    rows = [0] * (64 * n)            # equation 64 k + b: the state bits that s1_k's bit b sums
    for i in range(256):
        s = [0, 0, 0, 0]
        s[i // 64] = 1 << (i % 64)
        for k in range(n):
            for b in range(64):
                if (s[1] >> b) & 1:
                    rows[64 * k + b] |= 1 << i
            s = _transition(s)
    rhs = [(_output_state(w) >> b) & 1 for w in words for b in range(64)]
    eq = list(zip(rows, rhs))
    pivots = []
    for col in range(256):
        pr = next((r for r in range(len(pivots), len(eq)) if (eq[r][0] >> col) & 1), None)
        if pr is None:
            continue
        k = len(pivots)
        eq[k], eq[pr] = eq[pr], eq[k]
        for r in range(len(eq)):
            if r != k and (eq[r][0] >> col) & 1:
                eq[r] = (eq[r][0] ^ eq[k][0], eq[r][1] ^ eq[k][1])
        pivots.append(col)
    assert all(v == 0 for _, v in eq[len(pivots):]), "no state gives these words"
    x = 0
    for k, col in enumerate(pivots):
        x |= eq[k][1] << col
    state = np.array([(x >> (64 * j)) & M64 for j in range(4)], dtype=np.uint64)
    if not state.any():
        state[0] = 1                  # never reached: the words are not all determined by 0
    return state


@njit(cache=False)
def _words(state, n, out):
    for i in range(n):
        out[i] = kernels._next(state)


@njit(cache=False)
def _local_words(state, n, out):
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    for i in range(n):
        out[i], s0, s1, s2, s3 = kernels._step(s0, s1, s2, s3)
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


def test_forged_state_gives_the_chosen_words():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 4, 4):
        words = [int(w) for w in rng.integers(0, 2 ** 63, size=n, dtype=np.int64)]
        words[0] |= int(rng.integers(0, 2)) << 63
        out = np.empty(n, np.uint64)
        _words(forged_state(*words), n, out)
        assert [int(w) for w in out] == words


def test_step_in_locals_is_next_word_for_word():
    state_a = sampler_state(np.random.default_rng(1))
    state_b = state_a.copy()
    a = np.empty(10_000, np.uint64)
    b = np.empty(10_000, np.uint64)
    _words(state_a, a.size, a)
    _local_words(state_b, b.size, b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(state_a, state_b)


def _values(seed, n):
    rng = np.random.default_rng(seed)
    wide = rng.standard_normal(n) * np.exp2(rng.integers(-1074, 1023, n).astype(float))
    special = np.array([0.0, -0.0, 1e308, -1e308, np.finfo(float).max, -np.finfo(float).max,
                        5e-324, -5e-324, 2.2e-308, -1e-310, np.nan, -np.nan, np.inf, -np.inf,
                        0.5, -0.5, 1.0, 2.0 ** 62, -(2.0 ** 62), 2.0 ** 200])
    return np.concatenate([rng.uniform(-1, 1, n), wide, special])


SCALES = [0.0, -1.0, 2.0 ** -1045, 1e-310, 1e-300, 1e-12, 0.7, 1.0, 3.0, 1e10, 1e200, 1e289,
          1e290, 1.0000001e290, 1e300, np.inf, np.nan]


def _both(values, scale, state, in_place=False):
    """``(gaussian_report's output and final state, gaussian_report_direct's)``."""
    state_a, state_b = state.copy(), state.copy()
    old = np.empty_like(values)
    kernels.gaussian_report(values, scale, old, kernels.workspace(), state_a)
    new = values.copy() if in_place else np.empty_like(values)
    src = new if in_place else values
    kernels.gaussian_report_direct(src, scale, new, kernels.workspace(), state_b,
                                   kernels.report_scratch(values.size))
    return (old, state_a), (new, state_b)


def _assert_same(pair, msg=""):
    (old, state_a), (new, state_b) = pair
    np.testing.assert_array_equal(old.view(np.int64), new.view(np.int64), err_msg=msg)
    np.testing.assert_array_equal(state_a, state_b, err_msg=msg)


@pytest.mark.parametrize("seed", [0, 1])
def test_direct_report_is_the_public_report_bit_for_bit(seed):
    values = _values(seed, 2000)
    for scale in SCALES:
        state = sampler_state(np.random.default_rng(100 + seed))
        _assert_same(_both(values, scale, state), f"scale {scale}")
    # in place (the protocol kernel's use), short and odd lengths, many reports in a row
    state = sampler_state(np.random.default_rng(7))
    for n in (1, 2, 7, 41, 1001):
        _assert_same(_both(np.random.default_rng(n).normal(size=n) * 0.3, 0.8, state, True))
        state = _both(np.ones(3), 0.8, state)[0][1]     # move on


def test_scratch_may_be_longer_than_the_report():
    state = sampler_state(np.random.default_rng(3))
    values = np.random.default_rng(4).normal(size=17)
    old = np.empty(17)
    new = np.empty(17)
    a, b = state.copy(), state.copy()
    kernels.gaussian_report(values, 0.5, old, kernels.workspace(), a)
    kernels.gaussian_report_direct(values, 0.5, new, kernels.workspace(), b,
                                   kernels.report_scratch(100))
    np.testing.assert_array_equal(old, new)
    np.testing.assert_array_equal(a, b)
    # too small a scratch (fewer columns or rows): the public report itself, never a write
    # past the scratch (the kernels compile without bounds checks)
    for small in (kernels.report_scratch(16), np.zeros((2, 17), np.int64)):
        guard = np.zeros((small.shape[0] + 1, small.shape[1] + 1), np.int64)
        guard[:small.shape[0], :small.shape[1]] = 0
        small = guard[:small.shape[0], :small.shape[1]]
        c = state.copy()
        again = np.empty(17)
        kernels.gaussian_report_direct(values, 0.5, again, kernels.workspace(), c, small)
        np.testing.assert_array_equal(old, again)
        np.testing.assert_array_equal(a, c)
        assert not guard[-1].any() and not guard[:, -1].any()


COLUMN_BITS = kernels._NORMAL_COLS
N_BOXES = kernels.TAIL_START << kernels.BOX_BITS


def _bits_word(column, sign, coin, high=0):
    return column | (sign << COLUMN_BITS) | (coin << (COLUMN_BITS + 1)) | (high << 40)


@pytest.mark.parametrize("side", ["below", "at", "above"])
def test_every_alias_column_both_ways(side):
    """For each column, V just below its threshold's first 64 bits (the column's own
    piece), equal to them (a tie: V's further digits decide, lazily) and just above (its
    alias): the released values and final states equal ``gaussian_report``'s. A changed
    entry of ``_NORMAL_PAIR`` (or of its use) changes one of these."""
    rng = np.random.default_rng({"below": 1, "at": 2, "above": 3}[side])
    values = np.array([0.123, -2.5, 0.0, 1e-3])
    n_columns = 1 << COLUMN_BITS
    different_pieces = 0
    for column in range(n_columns):
        tau = int(kernels._NORMAL_TAU64[column])
        if side == "below":
            if tau == 0:
                continue
            w1 = tau - 1
        elif side == "at":
            w1 = tau
        else:
            if tau == M64:
                continue
            w1 = tau + 1
        coin = int(rng.integers(0, 1 << (2 * kernels.BOX_BITS + 1)))
        sign = int(rng.integers(0, 2))
        w2 = _bits_word(column, sign, coin, int(rng.integers(0, 1 << 20)))
        w3 = int(rng.integers(0, 2 ** 63)) * 2 + int(rng.integers(0, 2))
        state = forged_state(w1, w2, w3)
        _assert_same(_both(values, 0.6, state), f"column {column} {side}")
        different_pieces += int(kernels._NORMAL_ALIAS[column]) != column
    assert different_pieces > 50


def test_tail_pieces():
    """The tail beyond 7 (Karney's unit boxes): column N_BOXES kept (V = 0 < its threshold)."""
    column = N_BOXES
    assert kernels._NORMAL_TAU64[column] > 0
    rng = np.random.default_rng(5)
    for trial in range(40):
        w2 = _bits_word(column, trial % 2, int(rng.integers(0, 2048)), trial)
        state = forged_state(0, w2, int(rng.integers(0, 2 ** 62)))
        _assert_same(_both(np.array([0.3, -0.7, 5.0]), 0.9, state), f"trial {trial}")


def _undecided_value(scale, sign_bit, box, u, gamma):
    """A value ``v`` whose release, with the variate (sign, box, u's two digits), is not
    decided by two digits of u: ``c + 1/2``'s fraction ``F`` (a multiple of 2^-49, so that
    ``c`` is a double) puts ``2^5 F + s S u`` within ``S 2^-64`` below an integer."""
    s = 1 if sign_bit == 1 else -1
    r = (s * scale * u) % (1 << 64)
    # G = 2^5 F mod 1 (in units of 2^-64) with G + r + [0, S - 1] crossing 2^64
    # (for s = -1 the ends are offset by -S: the window moves by S)
    target = ((1 << 64) - r - 1 + (scale if s < 0 else 0)) % (1 << 64)
    g = (target >> 20) << 20                     # a multiple of 2^20 inside the window
    f = g >> kernels.BOX_BITS                    # F in units of 2^-64 (G = F << 5 mod 2^64)
    c = f / 2.0 ** 64 - 0.5
    return c * gamma


def test_floors_that_two_digits_do_not_decide():
    """The fallback to ``_assemble`` (more digits of u drawn) in the usual path."""
    rng = np.random.default_rng(6)
    sigma = 0.7
    gamma, scale = kernels.grid(sigma)
    undecided = 0
    for trial in range(200):
        column = int(rng.integers(1, 100))
        if kernels._NORMAL_TAU64[column] < 2 ** 40:
            continue
        sign = trial % 2
        # V = 0 keeps the column (a box), a coin above 2 J ends the run at once: usual
        w2 = _bits_word(column, sign, 2047, trial)
        u = int(rng.integers(0, 2 ** 63)) * 2 + int(rng.integers(0, 2))
        state = forged_state(0, w2, u)
        v = _undecided_value(int(scale), sign, column, u, gamma)
        values = np.array([v, 0.25])
        # is two digits' floor undecided for this value? (the reference's own arithmetic)
        a, f1, f2 = kernels.fixed_point(v / gamma)
        g1 = ((f1 << 5) & 0xFFFFFFFF) | (f2 >> 27)
        g2 = (f2 << 5) & 0xFFFFFFFF
        lo, hi = kernels._two_digit_ends(g1, g2, 1 if sign else -1, int(scale), u >> 32,
                                         u & 0xFFFFFFFF)
        undecided += lo != hi
        _assert_same(_both(values, sigma, state), f"trial {trial}")
    assert undecided > 50


def test_row_scales_are_the_per_user_clipping_factors_bit_for_bit():
    """``row_scales`` (four rows' squared norms in one loop, MI-OGD's protocol kernel) against
    ``_row_scale`` (one user's row, the per-user kernels), rows of every magnitude (the
    overflowing branch near 1.8e308 included) and block lengths not a multiple of 4."""
    from sklearn_dpol._core import _mi_kernels as mk

    rng = np.random.default_rng(8)
    for d in (1, 3, 50):
        X = rng.normal(size=(23, d)) * rng.choice([1e-300, 1e-3, 1.0, 1e150, 1e300, 1e307],
                                                  size=(23, 1))
        X[5] = 0.0
        X[6, 0] = np.finfo(float).max
        for data_norm in (1.0, 1e-3, 1e300):
            expected = np.array([mk._row_scale(x, data_norm) for x in X])
            for start, stop in ((0, 23), (1, 8), (3, 4), (20, 23), (4, 4)):
                out = np.empty(stop - start)
                mk.row_scales(X, start, data_norm, out)
                np.testing.assert_array_equal(out, expected[start:stop])


@njit(cache=False)
def _run_both(limit, coin, u, state_a, state_b):
    ws = np.zeros((4, kernels.WORKSPACE_DIGITS), np.int64)
    ws[0, 0] = 2
    ws[0, 1] = np.int64(u >> np.uint64(32))
    ws[0, 2] = np.int64(u & np.uint64(0xFFFFFFFF))
    general = kernels._box_accepts(limit, True, coin, np.uint64(2047), ws, state_a)
    accepted, tie, s0, s1, s2, s3 = kernels._box_run_words(limit, coin, u, state_b[0],
                                                           state_b[1], state_b[2], state_b[3])
    state_b[0], state_b[1], state_b[2], state_b[3] = s0, s1, s2, s3
    return general, accepted, tie


def test_box_run_on_words_is_the_lazy_run():
    """``_box_run_words`` against ``_box_accepts`` (lazy uniforms): the same result and words
    drawn whenever no two 64-bit words tie; each kind of tie is reported."""
    rng = np.random.default_rng(9)
    for trial in range(3000):
        limit = 2 * int(rng.integers(0, N_BOXES))
        coin = int(rng.integers(0, limit + 1))          # the run goes on (the unusual case)
        u = np.uint64(int(rng.integers(0, 2 ** 63)) * 2 + trial % 2)
        state = sampler_state(np.random.default_rng(trial))
        a, b = state.copy(), state.copy()
        general, accepted, tie = _run_both(limit, coin, u, a, b)
        assert not tie
        assert general == accepted
        np.testing.assert_array_equal(a, b)
    # ties: z == u at the first step; the thinning word == u (coin == limit); z2 == z1
    u = 0x9E3779B97F4A7C15
    for limit, coin, words in ((40, 3, [u]), (40, 40, [u]),
                               (40, 3, [u - 5, 7, u - 5])):
        state = forged_state(*words)
        _, _, tie = _run_both(limit, coin, np.uint64(u), state.copy(), state.copy())
        assert tie


@pytest.mark.parametrize("thin", [False, True])
def test_a_tie_in_the_acceptance_run_redraws_lazily(thin):
    """A variate whose acceptance run meets two equal 64-bit words: the whole report is still
    ``gaussian_report``'s (the run is redone from its start on lazy uniforms)."""
    rng = np.random.default_rng(10 + thin)
    reached = 0
    for trial in range(12):
        column = int(rng.integers(5, 150))
        if kernels._NORMAL_TAU64[column] < 2 ** 40:
            continue
        coin = 2 * column if thin else int(rng.integers(0, 2 * column))
        w2 = _bits_word(column, trial % 2, coin, trial)
        u = int(rng.integers(0, 2 ** 63)) * 2 + 1
        state = forged_state(0, w2, u, u)       # V = 0 keeps the column; the 4th word is u
        _assert_same(_both(np.array([0.4, -0.1, 2.0]), 0.9, state), f"trial {trial}")
        reached += 1
    assert reached >= 8
