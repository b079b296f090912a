"""The fast sampled round of ParameterFree's protocol kernels (doc/privacy.md 57.8) against
the general path it replaces, piece by piece and bit for bit, on states the protocol rarely
or never reaches (signed zeros, reports beyond the learner's cap, budgets without a rung,
NaN budgets, weight-0 users): the report as ``(picked, value)`` equals ``sampled_report``'s
dense report with the same generator words, and the learner's update without the zeros
equals ``learner_reduction_update`` on the dense report. The protocol-level digests are in
tests/test_s33d_pf_protocol_digests.py.
"""

import numpy as np
import pytest

from sklearn_dpol._core import _exact_kernels as ek
from sklearn_dpol._core import _pf_kernels as kernels
from sklearn_dpol._core.local_randomizers import LocalSampledCoordinateRandomizer
from sklearn_dpol._core.noise import sampler_state


def _bits(a):
    return np.ascontiguousarray(np.atleast_1d(np.asarray(a, dtype=np.float64))).view(np.int64)


def _states(rng, d):
    """Learner states: random, with signed zeros in z and in L_v, and on the unit sphere."""
    z = rng.normal(size=d) * rng.choice([1e-3, 0.3, 1.0], size=d)
    z[rng.random(d) < 0.3] = -0.0
    z[rng.random(d) < 0.2] = 0.0
    if rng.random() < 0.3:
        z /= max(np.linalg.norm(z), 1e-300)
    scalars = np.array([rng.choice([-0.0, 0.0, rng.normal() * 5]),
                        rng.choice([0.0, rng.uniform(0, 50)]),
                        rng.choice([0.0, rng.uniform(0, 500)])])
    return scalars, z


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 8, 9, 51])
def test_the_update_without_zeros_is_the_dense_update(d):
    rng = np.random.default_rng(d)
    for _ in range(400):
        scalars, z = _states(rng, d)
        picked = int(rng.integers(-1, d))
        value = rng.choice([1.0, -1.0]) * rng.choice([1.0, 51.0, 3e7, 1e120, np.inf])
        dense = np.zeros(d)
        if picked >= 0:
            dense[picked] = value
        s1, z1 = scalars.copy(), z.copy()
        kernels.learner_reduction_update(s1, z1, dense)
        s2, z2 = scalars.copy(), z.copy()
        kernels._learner_reduction_update_one(s2, z2, picked, value)
        np.testing.assert_array_equal(_bits(s1), _bits(s2))
        np.testing.assert_array_equal(_bits(z1), _bits(z2))


def test_a_signed_zero_in_the_inner_product_is_the_lanes_plus_zero():
    """``inner`` is ``0.0 + z_p g`` as in the lanes: with ``L_v = -0.0`` and ``z_p = -0.0``
    a bare ``z_p g`` (-0.0) would give ``L_v = +0.0`` where the dense update keeps -0.0."""
    scalars, z = np.array([-0.0, 0.0, 0.0]), np.array([0.5, -0.0, 0.25])
    dense = np.array([0.0, 3.0, 0.0])
    s1, z1 = scalars.copy(), z.copy()
    kernels.learner_reduction_update(s1, z1, dense)
    s2, z2 = scalars.copy(), z.copy()
    kernels._learner_reduction_update_one(s2, z2, 1, 3.0)
    assert np.signbit(s1[0]) and np.signbit(s2[0])
    np.testing.assert_array_equal(_bits(s1), _bits(s2))
    np.testing.assert_array_equal(_bits(z1), _bits(z2))


@pytest.mark.parametrize("n_features,intercept", [(1, True), (1, False), (4, True), (7, False),
                                                   (50, True)])
def test_the_report_as_picked_and_value_is_the_dense_report(n_features, intercept):
    d = n_features + int(intercept)
    rng = np.random.default_rng(10 * n_features + intercept)
    for split in ("uniform", "skewed"):
        weights = (np.full(d, 1.0 / d) if split == "uniform"
                   else rng.uniform(0.01, 1.0, d) ** 3)
        weights /= weights.sum()
        r = LocalSampledCoordinateRandomizer(weights)
        sampled = (True, r.private, r.cumulative, r.inverse_p, r.magnitudes, r.a)
        assert kernels.every_coordinate_private(sampled, d)
        state = sampler_state(np.random.default_rng(d))
        rung = np.array([np.nan, -1.0])
        for t in range(300):
            w = rng.normal(size=d) * rng.choice([0.01, 1.0, 1e100])
            x = rng.normal(size=n_features) * rng.choice([0.1, 1.0, 1e300])
            y = float(rng.normal() * rng.choice([0.1, 3.0]))
            epsilon = float(rng.choice([1.0, 1.0, 0.3, 7.0, 1e-30, np.nan, 0.0, -1.0]))
            weight = float(rng.choice([1.0, 0.0, 0.37]))
            loss = int(rng.integers(0, 2))
            dense = np.empty(d)
            before = state.copy()
            kernels.weighted_clipped_gradient(w, x, y, intercept, loss, 0.4, weight, dense)
            ek.sampled_report(dense, epsilon, r.private, r.cumulative, r.inverse_p,
                              r.magnitudes, r.a, dense, state)
            fast_state = before.copy()
            picked, value = kernels._sampled_private_report(
                w, x, y, intercept, loss, 0.4, epsilon, sampled, rung, fast_state, weight)
            np.testing.assert_array_equal(fast_state, state)
            expected = np.zeros(d)
            if picked >= 0:
                expected[picked] = value
            np.testing.assert_array_equal(_bits(expected), _bits(dense))


def test_only_an_all_private_sampled_randomiser_takes_the_fast_round():
    on = LocalSampledCoordinateRandomizer(np.full(3, 1 / 3))
    public = LocalSampledCoordinateRandomizer(np.array([0.5, 0.0, 0.5]))
    tables = lambda r, flag=True: (flag, r.private, r.cumulative, r.inverse_p,  # noqa: E731
                                   r.magnitudes, r.a)
    assert kernels.every_coordinate_private(tables(on), 3)
    assert not kernels.every_coordinate_private(tables(on, False), 3)
    assert not kernels.every_coordinate_private(tables(public), 3)
    assert not kernels.every_coordinate_private(tables(on), 4)
    shuffled = (True, np.array([1, 0, 2]), on.cumulative, on.inverse_p, on.magnitudes, on.a)
    assert not kernels.every_coordinate_private(shuffled, 3)


class _Adapter:
    """``report(gradient, epsilon, state)`` as ``run_protocol_python`` calls it."""

    def __init__(self, randomizer):
        self.randomizer = randomizer

    def report(self, gradient, epsilon, state):
        return self.randomizer.report(gradient, epsilon, state)


@pytest.mark.parametrize("method", ["reduction", "coordinate"])
@pytest.mark.parametrize("d,intercept", [(1, True), (3, False), (6, True), (50, True)])
def test_the_kernel_is_the_per_user_path(method, d, intercept):
    """Both protocol kernels (the fast round for finite budgets, the general path for
    ``epsilon = inf``, alternating within a call) against the per-user reference that
    calls the public randomiser class: the same learner state, iterates and generator."""
    from sklearn_dpol._core import parameter_free as pf

    rng = np.random.default_rng(d)
    n = 120
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    X[1] *= 40.0
    y = X @ rng.normal(size=d) + 0.2 * rng.normal(size=n)
    n_dims = d + int(intercept)
    weights = rng.uniform(0.1, 1.0, n_dims)
    weights /= weights.sum()
    r = LocalSampledCoordinateRandomizer(weights)
    eps = rng.choice([1.0, 1.0, 0.3, np.inf, 1e-30], size=n)
    kw = dict(loss="absolute", huber_threshold=1.0, intercept=intercept)
    fast = pf.make_learner(method, n_dims, G=1.5, prior="improper", b=1.0)
    fast_state = sampler_state(np.random.default_rng(9))
    for a, b in ((0, 50), (50, n)):
        pf.run_protocol(fast, X[a:b], y[a:b], eps[a:b], weights, fast_state, sampled=r, **kw)
    slow = pf.make_learner(method, n_dims, G=1.5, prior="improper", b=1.0)
    slow_state = sampler_state(np.random.default_rng(9))
    pf.run_protocol_python(slow, X, y, eps, _Adapter(r), slow_state, **kw)
    for key, value in fast.state().items():
        np.testing.assert_array_equal(_bits(value), _bits(slow.state()[key]), err_msg=key)
    np.testing.assert_array_equal(fast_state, slow_state)
