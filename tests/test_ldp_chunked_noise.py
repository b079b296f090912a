"""Exact noise drawn ahead in chunks (issue 19, item 5): the same released bits.

The local-DP protocol kernels read their exact variates from a chunk drawn by
``fill_noise`` (the sampler inlined once) instead of sampling per coordinate.
These tests compare, bit for bit, against the per-value path (``release_on``:
one ``exact_point`` per coordinate) and against the public per-user kernels,
including the generator's state at the end (``settle_noise`` rewinds it), and
check that a stream cut into calls draws the same bits as one call.
"""

import numpy as np
import pytest
from numba import njit

from sklearn_dpol._core import _exact_kernels as kernels
from sklearn_dpol._core import mi_ogd
from sklearn_dpol._core.noise import sampler_state


@njit
def _per_value(values, gamma, multiplier, gaussian, state, out):
    ws = np.zeros((4, kernels.WORKSPACE_DIGITS), np.int64)
    for i in range(values.shape[0]):
        out[i] = kernels.release_on(values[i], gamma, multiplier, gaussian, ws, state)


def _values(seed, n=3000):
    rng = np.random.default_rng(seed)
    wide = rng.standard_normal(n) * np.exp2(rng.integers(-1074, 1023, n).astype(float))
    special = np.array([0.0, -0.0, 1e308, -1e308, np.finfo(float).max, -np.finfo(float).max,
                        5e-324, -5e-324, 2.2e-308, -1e-310, np.nan, -np.nan, np.inf, -np.inf,
                        0.5, -0.5, 1.0, 2.0 ** 62, -(2.0 ** 62), 2.0 ** 200])
    return np.concatenate([rng.uniform(-1, 1, n), wide, special, rng.permutation(special)])


SCALES = [0.0, -1.0, 2.0 ** -1045, 1e-310, 1e-300, 1e-12, 0.7, 1.0, 3.0, 1e10, 1e200, 1e289, 1e290,
          1.0000001e290, 1e300, np.inf, np.nan]


@pytest.mark.parametrize("gaussian", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chunked_release_equals_the_per_value_release_bit_for_bit(gaussian, seed):
    values = _values(seed)
    for scale in SCALES:
        gamma, multiplier = kernels.grid_entry(scale)
        state_a = sampler_state(np.random.default_rng(100 + seed))
        state_b = state_a.copy()
        old = np.empty_like(values)
        new = np.empty_like(values)
        _per_value(values, gamma, multiplier, gaussian, state_a, old)
        kernels.release_values_chunked(values, gamma, multiplier, gaussian, state_b, new)
        np.testing.assert_array_equal(old.view(np.int64), new.view(np.int64),
                                      err_msg=f"scale {scale}")
        # the generator ends where one sample per release leaves it
        np.testing.assert_array_equal(state_a, state_b, err_msg=f"scale {scale}")


def test_chunked_release_across_many_chunks_and_partial_ones():
    # more values than several chunks, then a call that stops mid-chunk, then another
    values = np.random.default_rng(7).standard_normal(5 * kernels.NOISE_CHUNK + 17)
    gamma, multiplier = kernels.grid(0.3)
    state_a = sampler_state(np.random.default_rng(8))
    state_b = state_a.copy()
    old = np.empty_like(values)
    new = np.empty_like(values)
    _per_value(values, gamma, multiplier, True, state_a, old)
    cut = [0, 3, 700, 701, 2000, values.size]
    for start, stop in zip(cut[:-1], cut[1:]):
        kernels.release_values_chunked(values[start:stop], gamma, multiplier, True, state_b,
                                       new[start:stop])
    np.testing.assert_array_equal(old.view(np.int64), new.view(np.int64))
    np.testing.assert_array_equal(state_a, state_b)


def test_settle_rewinds_only_when_no_word_was_drawn_after_the_fill():
    noise, spill, cursor = kernels.noise_source()
    cursor[10] = 1                                  # normal variates
    ws = kernels.workspace()
    state = sampler_state(np.random.default_rng(9))
    start = state.copy()
    cursor[1] = kernels.NOISE_CHUNK
    kernels.fill_noise(noise, spill, cursor, ws, state)
    cursor[0] = 5                                   # five variates used
    kernels.settle_noise(noise, spill, cursor, ws, state)
    assert cursor[0] == cursor[1] == 0
    expected = start.copy()
    cursor[1] = 5
    kernels.fill_noise(noise, spill, cursor, ws, expected)
    np.testing.assert_array_equal(state, expected)
    assert not np.array_equal(state, start)
    # a word drawn after the fill (extra digits of a released value): no rewind, so no
    # word is ever used twice
    cursor[1] = kernels.NOISE_CHUNK
    kernels.fill_noise(noise, spill, cursor, ws, state)
    state[0] ^= np.uint64(1)
    moved = state.copy()
    cursor[0] = 5
    kernels.settle_noise(noise, spill, cursor, ws, state)
    np.testing.assert_array_equal(state, moved)


@pytest.mark.parametrize("d", [6, 41])
@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_mi_protocol_kernel_equals_the_per_user_reports(feedback, d):
    """The chunked protocol kernel against the public per-user kernels ``user_full_report``
    / ``user_bandit_report`` (one exact sample per coordinate), driven one row at a time
    from the same generator state: learner state and final generator state, bit for bit
    (d = 41: the learner's vectorised norm runs its SIMD loop)."""
    from sklearn_dpol._core import _mi_kernels as mk

    rng = np.random.default_rng(4)
    n = 1300
    X = rng.normal(size=(n, d - 1)) * rng.choice([1e-3, 1.0, 1e300], size=(n, 1))
    y = rng.normal(size=n)
    directions = rng.normal(size=(n, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    kw = dict(loss="huber", huber_threshold=1.0, data_norm=1.0, y_bound=1.0, intercept=True)
    for sigma in (0.0, 1e-300, 0.8, 1e295):
        state_fast = sampler_state(np.random.default_rng(12))
        state_slow = state_fast.copy()
        fast = mi_ogd.LazyOGDLearner(d, radius=1.0, eta=0.5, anytime=True)
        mi_ogd.run_protocol(fast, X, y, state_fast, directions if feedback == "bandit" else
                            np.zeros((0, d)), feedback=feedback, clip_norm=1.0, exploration=0.3,
                            loss_bound=2.0, sigma=sigma, **kw)
        slow = mi_ogd.LazyOGDLearner(d, radius=1.0, eta=0.5, anytime=True)
        ws = kernels.workspace()
        out = np.empty(d)
        query = np.empty(d)
        for i in range(n):
            w = slow.predict()
            if feedback == "full":
                mk.user_full_report(w, X[i], y[i], True, mk.HUBER, 1.0, 1.0, 1.0, 1.0, sigma,
                                    ws, state_slow, out)
            else:
                mk.user_bandit_report(w, X[i], y[i], True, mk.HUBER, 1.0, 1.0, 1.0, 0.3, 2.0,
                                      sigma, directions[i], ws, state_slow, query, out)
            slow.update(out)
        for name, value in fast.state().items():
            np.testing.assert_array_equal(value, slow.state()[name], err_msg=f"{name} {sigma}")
        np.testing.assert_array_equal(state_fast, state_slow)


@pytest.mark.parametrize("estimator", ["pf", "mi"])
def test_a_stream_cut_into_calls_draws_the_same_bits_as_one_call(estimator):
    from sklearn_dpol.linear_model import (MutualInformationPrivateOGDRegressor,
                                           ParameterFreeLocalDPRegressor)

    make = (ParameterFreeLocalDPRegressor if estimator == "pf"
            else MutualInformationPrivateOGDRegressor)
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.3, 0.3, size=(900, 7))
    y = rng.uniform(-1, 1, size=900)
    whole = make(random_state=5).partial_fit(X, y)
    cut = make(random_state=5)
    for start, stop in ((0, 1), (1, 80), (80, 81), (81, 600), (600, 900)):
        cut.partial_fit(X[start:stop], y[start:stop])
    np.testing.assert_array_equal(whole.coef_, cut.coef_)
    np.testing.assert_array_equal(whole.intercept_, cut.intercept_)


@pytest.mark.parametrize("size", [0, 1, 2, 511, 512, 513, 1030])
@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_central_releases_are_the_per_value_release_bit_for_bit(size, law):
    """``gaussian_release`` / ``laplace_release`` read chunked variates: the same bits as one
    ``exact_point`` per value, and chunks of exactly the variates needed (the generator ends
    where the per-value path leaves it, whatever the size)."""
    from sklearn_dpol._core.noise import gaussian_release, laplace_release, noise_grid

    values = np.random.default_rng(size).standard_normal(size) * 3.0
    for seed in range(3):
        scale = 0.37 * (seed + 1)
        release = gaussian_release if law == "gaussian" else laplace_release
        new = release(values, scale, np.random.default_rng(seed))
        gamma, multiplier = noise_grid(scale)
        state_a = sampler_state(np.random.default_rng(seed))
        state_b = state_a.copy()
        old = np.empty(size)
        kernels.release_values(values, gamma, multiplier, law == "gaussian", state_a, old)
        np.testing.assert_array_equal(old.view(np.int64), new.view(np.int64))
        again = np.empty(size)
        kernels.release_values_chunked(values, gamma, multiplier, law == "gaussian", state_b,
                                       again)
        np.testing.assert_array_equal(state_a, state_b)


def _value_needing_a_third_digit(scale=1.0):
    """``(seed, v)``: the first normal variate of ``seed`` releases ``v`` only after drawing a
    third digit of its ``u`` (``floor_offset``'s rare branch), built from the variate's digits."""
    from sklearn_dpol._core.noise import noise_grid

    base = 1 << 32
    gamma, multiplier = noise_grid(scale)
    for seed in range(20_000):
        state = sampler_state(np.random.default_rng(seed))
        noise, spill, cursor = kernels.noise_source()
        ws = np.zeros((4, kernels.WORKSPACE_DIGITS), np.int64)
        cursor[1], cursor[10] = 1, 1
        kernels.fill_noise(noise, spill, cursor, ws, state)
        sign_bit, _, _, shift, word, slot = (int(x) for x in noise[0])
        if sign_bit != 1 or shift != 5 or slot != -1:
            continue
        u1, u2 = word >> 32, word & (base - 1)
        # the fraction's digits (g1, g2), after the shift by 5, put the two ends of
        # multiplier * u on either side of an integer: two digits cannot decide
        g2 = ((base - 1 - (multiplier * u2) % base) // 32) * 32
        g1 = (base - 1 - multiplier * u1 - ((multiplier * u2 + g2) >> 32)) % base
        if g1 >= 1 << 25:
            continue
        c = ((g1 >> 5) * base + (((g1 & 31) << 27) | (g2 >> 5))) * 2.0 ** -64
        return seed, c * gamma, gamma, multiplier
    raise AssertionError("no seed found")


def test_central_release_when_a_value_needs_a_third_digit():
    """The rare branch: the extra digit is a fresh word drawn after the chunk, so the chunked
    release differs in bits from the per-value one (same law), and the later values' noise
    does not depend on the first value's low bits (per value, it does)."""
    seed, v, gamma, multiplier = _value_needing_a_third_digit()
    near = v - gamma * 2.0 ** -40            # the same variate, decided by two digits

    def run(first, chunked):
        state = sampler_state(np.random.default_rng(seed))
        out = np.empty(3)
        release = kernels.release_values_chunked if chunked else kernels.release_values
        release(np.array([first, 0.3, 0.7]), gamma, multiplier, True, state, out)
        return out, state

    per_value, _ = run(v, False)
    chunked, chunked_state = run(v, True)
    per_value_near, _ = run(near, False)
    chunked_near, chunked_near_state = run(near, True)
    assert per_value[0] == chunked[0]                       # the first value: the same floor
    assert not np.array_equal(per_value[1:], chunked[1:])   # the branch ran
    # no extra digit: the two paths agree bit for bit
    np.testing.assert_array_equal(per_value_near.view(np.int64), chunked_near.view(np.int64))
    # chunked, the later values' noise is the same whatever the first value's low bits ...
    np.testing.assert_array_equal(chunked[1:].view(np.int64), chunked_near[1:].view(np.int64))
    # ... while the generator moved on by the extra digit's word
    assert not np.array_equal(chunked_state, chunked_near_state)
    # per value, the extra digit shifts the later values' words
    assert not np.array_equal(per_value[1:], per_value_near[1:])
