"""The parity attack on the local randomisers (doc/privacy.md section 14.1).

A user whose clipped input is exactly ``+1`` or ``-1`` used to report
``z = fl(+-1 + fl(b n))``. For ``z`` in ``[2^k - 1, 2^k)`` (``k >= 1``) the input
``-1`` needs ``fl(b n) = z + 1`` in the coarser binade ``[2^k, 2^(k+1))``, whose
doubles are even multiples of ``ulp(z)``, so ``z`` has an even last mantissa bit;
the input ``+1`` needs ``fl(b n) = z - 1``, which lies in the same or a finer
binade, so ``z`` can be odd. "``z`` in ``[2^k - 1, 2^k)`` with an odd last
mantissa bit" therefore happens under ``+1`` and never under ``-1``: a
``(0, delta)`` distinguisher, ``delta`` its rate under ``+1``, whatever epsilon
the real-valued mechanism claims. (The event is signed: its mirror image
``-z`` in the same interval is the same evidence for ``-1``, so the unsigned
``|z|`` version occurs at equal rates under both inputs by symmetry.)

The grid release (``gamma K``) must show the attack at equal rates under both
inputs, for the issue's event and for the grid's own last bit (the parity of
``K``), through the public functions (``local_laplace_report``,
``local_gaussian_report``) and through the estimators' protocols (reports
recorded by the Python reference fed the same sampler state as the numba
kernel, checked equal to the kernel by replaying them). The old float release,
written here, is the positive control.
"""

import math

import numpy as np
import pytest

from sklearn_dpol._core import _exact_kernels
from sklearn_dpol._core import _mi_kernels as mi_kernels
from sklearn_dpol._core import _pf_kernels as pf_kernels
from sklearn_dpol._core import mi_ogd
from sklearn_dpol._core import parameter_free as pf
from sklearn_dpol._core.local_randomizers import (
    LocalGaussianRandomizer,
    LocalLaplaceRandomizer,
    normalise_feature_weights,
)
from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.privacy import local_gaussian_report, local_laplace_report

# windows [2^k - 1, 2^k): [1, 2), [3, 4), [7, 8) (and [15, 16) for the Gaussian at sigma 8)
KS_LAPLACE = (1, 2, 3)
KS_GAUSSIAN = (1, 2, 3, 4)
N = 200_000                # reports per input for the public functions
N_PROTOCOL = 20_000        # users per input through the protocols


def _last_bit(z):
    """The last mantissa bit of each double."""
    return np.asarray(z, dtype=np.float64).view(np.uint64) & np.uint64(1)


def parity_event(z, k):
    """The issue's attack event: ``z`` in ``[2^k - 1, 2^k)`` with an odd last mantissa bit."""
    z = np.asarray(z, dtype=np.float64)
    window = (z >= 2.0**k - 1) & (z < 2.0**k)
    return window & (_last_bit(z) == 1)


def grid_parity_event(z, k, gamma):
    """The same attack on the grid's last bit: ``z`` in the window with ``z / gamma`` odd."""
    z = np.asarray(z, dtype=np.float64)
    window = (z >= 2.0**k - 1) & (z < 2.0**k)
    index = np.rint(z / gamma)
    assert np.array_equal(index * gamma, z)          # every report is on the grid
    return window & (np.mod(index, 2) == 1)


def attack_rates(plus, minus, event, ks):
    """Rates of ``event`` (over the windows ``ks``) under the inputs +1 and -1."""
    hit_plus = np.zeros(plus.shape, bool)
    hit_minus = np.zeros(minus.shape, bool)
    for k in ks:
        hit_plus |= event(plus, k)
        hit_minus |= event(minus, k)
    return hit_plus.mean(), hit_minus.mean()


def assert_statistically_equal(p, q, n, m):
    """Two-proportion z-test at |z| < 4.5 (a false alarm every 10^5 runs)."""
    pooled = (p * n + q * m) / (n + m)
    se = math.sqrt(max(pooled * (1 - pooled), 1e-300) * (1 / n + 1 / m))
    assert abs(p - q) <= 4.5 * se, (p, q)


def check_grid(plus, minus, gamma, ks):
    """The grid release: the issue's event at equal rates under +1 and -1, and the
    grid's last bit carries nothing either: given the window (whose probability
    is the mechanism's business, within e^epsilon), ``K`` is odd at the same rate,
    about 1/2, under both inputs."""
    p, q = attack_rates(plus, minus, parity_event, ks)
    assert_statistically_equal(p, q, plus.size, minus.size)
    for k in ks:
        in_plus = (plus >= 2.0**k - 1) & (plus < 2.0**k)
        in_minus = (minus >= 2.0**k - 1) & (minus < 2.0**k)
        assert in_plus.sum() >= 50 and in_minus.sum() >= 50   # populated windows
        odd_plus = grid_parity_event(plus, k, gamma)[in_plus].mean()
        odd_minus = grid_parity_event(minus, k, gamma)[in_minus].mean()
        assert_statistically_equal(odd_plus, odd_minus, in_plus.sum(), in_minus.sum())
        for odd, m in ((odd_plus, in_plus.sum()), (odd_minus, in_minus.sum())):
            assert abs(odd - 0.5) <= 4.5 * 0.5 / math.sqrt(m)
    return p, q


def check_float_control(plus, minus, ks):
    """The old float release: the event under +1, never under -1. Returns delta."""
    p, q = attack_rates(plus, minus, parity_event, ks)
    assert q == 0.0
    assert p > 0.02
    return p


# ---------------------------------------------------------------------------
# The local Laplace randomiser (ParameterFreeLocalDPRegressor), epsilon_t = 1
# ---------------------------------------------------------------------------

def test_laplace_public_function_resists_the_parity_attack():
    # N users (coordinates) at epsilon_t = 1 each: the total budget N split uniformly.
    rng = np.random.default_rng(0)
    plus = local_laplace_report(np.full(N, 5.0), float(N), random_state=rng)   # clipped: +1
    minus = local_laplace_report(np.full(N, -5.0), float(N), random_state=rng)  # clipped: -1
    scale = LocalLaplaceRandomizer(normalise_feature_weights(None, N)).scales(float(N))[0]
    assert scale == pytest.approx(2.0, rel=1e-12)
    gamma = _exact_kernels.LAPLACE_REPORT_LATTICE     # one lattice for every budget
    check_grid(plus, minus, gamma, KS_LAPLACE)
    # the reports follow the Laplace mechanism: medians at +-1
    assert abs(np.median(plus) - 1.0) < 0.05 and abs(np.median(minus) + 1.0) < 0.05
    # positive control: the float release fl(+-1 + fl(b n)) of the same mechanism
    noise = rng.laplace(size=(2, N))
    delta = check_float_control(1.0 + 2.0 * noise[0], -1.0 + 2.0 * noise[1], KS_LAPLACE)
    assert delta > 0.05   # measured 0.108 over the three windows (the issue: 0.085)


def test_laplace_protocol_resists_the_parity_attack():
    """Users of the parameter-free protocol whose clipped gradient is exactly +1 or
    -1 (a public random sign per user): the reports the learner receives, recorded
    by the Python reference and identical to the numba kernel's (replaying them
    gives the kernel's learner)."""
    n = 3 * N_PROTOCOL                         # the window [7, 8) is rare under -1
    signs = np.random.default_rng(12).choice([-1.0, 1.0], size=n)
    X, y = np.ones((n, 1)), -1e3 * signs      # sign(w - y) = sign while |w| < 1e3
    weights, epsilons = np.ones(1), np.ones(n)
    kw = dict(loss="absolute", huber_threshold=1.0, intercept=False)

    class Checked(LocalLaplaceRandomizer):
        """The library's randomiser, noting each user's clipped gradient."""
        seen = []

        def report(self, gradient, epsilon, rng):
            self.seen.append(self.clip(gradient)[0])
            return super().report(gradient, epsilon, rng)

    start = sampler_state(np.random.default_rng(1))
    reference = pf.make_learner(pf.COORDINATE, 1, G=1.0, prior=pf.CONJUGATE, b=1.0)
    recorded = pf.run_protocol_python(reference, X, y, epsilons, Checked(weights), start.copy(),
                                      **kw)[:, 0]
    np.testing.assert_array_equal(Checked.seen, signs)   # the premise of the attack
    kernel = pf.make_learner(pf.COORDINATE, 1, G=1.0, prior=pf.CONJUGATE, b=1.0)
    pf.run_protocol(kernel, X, y, epsilons, weights, start.copy(), **kw)
    replayed = pf.make_learner(pf.COORDINATE, 1, G=1.0, prior=pf.CONJUGATE, b=1.0)
    replayed.replay(recorded[:, None])
    for key, value in kernel.state().items():
        np.testing.assert_array_equal(replayed.state()[key], value)
    check_grid(recorded[signs > 0], recorded[signs < 0], _exact_kernels.LAPLACE_REPORT_LATTICE,
               KS_LAPLACE)

    # positive control: the same protocol with the old float randomiser
    class FloatLaplace(LocalLaplaceRandomizer):
        noise = np.random.default_rng(3)

        def report(self, gradient, epsilon, rng):
            return self.clip(gradient) + self.scales(epsilon) * self.noise.laplace(
                size=np.shape(gradient))

    learner = pf.make_learner(pf.COORDINATE, 1, G=1.0, prior=pf.CONJUGATE, b=1.0)
    floats = pf.run_protocol_python(learner, X, y, epsilons, FloatLaplace(weights),
                                    np.random.default_rng(4), **kw)[:, 0]
    check_float_control(floats[signs > 0], floats[signs < 0], KS_LAPLACE)


# ---------------------------------------------------------------------------
# The local Gaussian randomiser (MutualInformationPrivateOGDRegressor), sigma = 8
# ---------------------------------------------------------------------------

def test_gaussian_public_function_resists_the_parity_attack():
    sigma = 8.0
    rng = np.random.default_rng(5)
    # N users (coordinates) with mean exactly +-1; the L2 clip 2 sqrt(N) never binds.
    clip = 2.0 * math.sqrt(N)
    plus = local_gaussian_report(np.ones(N), sigma, clip_norm=clip, random_state=rng)
    minus = local_gaussian_report(-np.ones(N), sigma, clip_norm=clip, random_state=rng)
    gamma = _exact_kernels.grid(sigma)[0]
    check_grid(plus, minus, gamma, KS_GAUSSIAN)
    assert abs(plus.mean() - 1.0) < 5 * sigma / math.sqrt(N)
    assert abs(minus.mean() + 1.0) < 5 * sigma / math.sqrt(N)
    noise = rng.standard_normal(size=(2, N))
    delta = check_float_control(1.0 + sigma * noise[0], -1.0 + sigma * noise[1], KS_GAUSSIAN)
    assert delta > 0.04   # measured 0.063 over the four windows (the issue: >= 0.046)


def test_gaussian_protocol_resists_the_parity_attack():
    """Users of MI-OGD (full feedback, absolute loss, L = 1) whose clipped gradient
    is exactly +-1, through the Python reference fed the kernel's sampler state."""
    n, sigma, radius = N_PROTOCOL, 8.0, 0.5
    signs = np.random.default_rng(13).choice([-1.0, 1.0], size=n)
    X, y = np.ones((n, 1)), -signs           # |w| <= 0.5: sign(w - y) = sign
    kw = dict(loss="absolute", huber_threshold=1.0, data_norm=1.0, y_bound=1.0, intercept=False)

    class Checked(LocalGaussianRandomizer):
        seen = []

        def report(self, gradient, rng):
            self.seen.append(self.clip(gradient)[0])
            return super().report(gradient, rng)

    def learner():
        return mi_ogd.LazyOGDLearner(1, radius=radius, eta=0.01, anytime=True)

    start = sampler_state(np.random.default_rng(6))
    recorded = mi_ogd.run_protocol_python(learner(), X, y, Checked(sigma, 1.0), start.copy(),
                                          **kw)[:, 0]
    np.testing.assert_array_equal(Checked.seen, signs)
    kernel = learner()
    mi_ogd.run_protocol(kernel, X, y, start.copy(), np.zeros((0, 1)), feedback="full",
                        clip_norm=1.0, exploration=1.0, loss_bound=0.0, sigma=sigma, **kw)
    replayed = learner()
    replayed.replay(recorded[:, None])
    for key, value in kernel.state().items():
        np.testing.assert_array_equal(replayed.state()[key], value)
    check_grid(recorded[signs > 0], recorded[signs < 0], _exact_kernels.grid(sigma)[0],
               KS_GAUSSIAN)

    class FloatGaussian(LocalGaussianRandomizer):
        noise = np.random.default_rng(8)

        def report(self, gradient, rng):
            return self.clip(gradient) + self.sigma * self.noise.standard_normal(
                np.shape(gradient))

    floats = mi_ogd.run_protocol_python(learner(), X, y, FloatGaussian(sigma, 1.0),
                                        np.random.default_rng(9), **kw)[:, 0]
    check_float_control(floats[signs > 0], floats[signs < 0], KS_GAUSSIAN)


# ---------------------------------------------------------------------------
# The kernels' user reports are the public functions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["absolute", "huber"])
def test_pf_user_report_equals_local_laplace_report(loss):
    rng = np.random.default_rng(10)
    code = pf._LOSS_CODES[loss]
    raw = np.array([0.5, 0.0, 2.0, 1.5])           # coordinate 1 public (weight 0)
    weights = normalise_feature_weights(raw, 4)
    ws, scales, out = _exact_kernels.workspace(), np.empty(4), np.empty(4)
    for epsilon in (0.3, 1.0, 7.0, np.inf):
        for _ in range(20):
            x, y, w = rng.normal(scale=2, size=3), rng.normal(scale=3), rng.normal(scale=3, size=4)
            start = sampler_state(rng)
            state = start.copy()
            pf_kernels.user_report(w, x, y, True, code, 0.7, epsilon, weights, scales, ws,
                                   state, out)
            gradient = pf.user_gradient(w, x, y, loss=loss, huber_threshold=0.7, intercept=True)
            public = start.copy()
            expected = local_laplace_report(gradient, epsilon, feature_weights=raw,
                                            random_state=public)
            noisy = weights > 0
            if epsilon < np.inf:
                np.testing.assert_array_equal(out[noisy], expected[noisy])
            # no noise: the clipped gradient rounded to the reports' lattice, as computed by
            # numba or numpy (the two may differ in the last bit of the product psi x_j)
            lattice = _exact_kernels.LAPLACE_REPORT_LATTICE
            np.testing.assert_allclose(out[~noisy], expected[~noisy], rtol=0, atol=lattice)
            np.testing.assert_array_equal(state, public)    # the same bits consumed
            assert np.all(out / lattice == np.round(out / lattice))
            if epsilon == np.inf:
                np.testing.assert_allclose(out, np.clip(gradient, -1, 1), rtol=0,
                                           atol=lattice / 2 * (1 + 1e-12))
                np.testing.assert_array_equal(state, start)  # no noise, no bits
            else:
                assert not np.array_equal(state, start)


@pytest.mark.parametrize("loss", ["absolute", "squared", "huber"])
def test_mi_user_full_report_equals_local_gaussian_report(loss):
    rng = np.random.default_rng(11)
    code = mi_ogd._LOSS_CODES[loss]
    kw = dict(loss=loss, huber_threshold=0.5, data_norm=2.0, y_bound=1.0, intercept=True)
    ws, out = _exact_kernels.workspace(), np.empty(4)
    for sigma in (0.1, 1.0, 8.0):
        for _ in range(20):
            x, y, w = rng.normal(scale=3, size=3), rng.normal(scale=3), rng.normal(scale=5, size=4)
            start = sampler_state(rng)
            state = start.copy()
            mi_kernels.user_full_report(w, x, y, True, code, 0.5, 2.0, 1.0, 0.7, sigma, ws,
                                        state, out)
            public = start.copy()
            expected = local_gaussian_report(mi_ogd.user_gradient(w, x, y, **kw), sigma,
                                             clip_norm=0.7, random_state=public)
            np.testing.assert_array_equal(out, expected)
            np.testing.assert_array_equal(state, public)
            gamma = _exact_kernels.grid(sigma)[0]
            np.testing.assert_array_equal(np.mod(out, gamma), 0.0)


def test_public_functions_with_a_seed_are_reproducible_and_fresh_otherwise():
    a = local_laplace_report([0.3, -2.0], 1.0, random_state=0)
    np.testing.assert_array_equal(a, local_laplace_report([0.3, -2.0], 1.0, random_state=0))
    assert not np.array_equal(a, local_laplace_report([0.3, -2.0], 1.0, random_state=1))
    b = local_gaussian_report([0.3, -2.0], 8.0, clip_norm=1.0, random_state=0)
    np.testing.assert_array_equal(
        b, local_gaussian_report([0.3, -2.0], 8.0, clip_norm=1.0, random_state=0))
    assert not np.array_equal(
        b, local_gaussian_report([0.3, -2.0], 8.0, clip_norm=1.0, random_state=1))
