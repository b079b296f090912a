"""Parameter-free learners under user-specified local DP (seed 001, Algorithms 1-3).

The learner side of the protocol. A learner plays ``w_t`` and then receives a
noisy report ``g~_t``; that is all it ever sees. It never reads a user's
epsilon, budget split or noise (those live in
:mod:`sklearn_dpol._core.local_randomizers` and in the user-side kernel).

* :class:`CoordinateLearner` (Algorithm 3): one 1-D potential learner per
  coordinate.
* :class:`ReductionLearner` (Algorithm 2): a 1-D potential learns the norm,
  scale-free projected gradient descent on the unit L2 ball learns the
  direction (``eta_t = 1 / sqrt(sum_{s<=t} ||g~_s||^2)``).

The 1-D prediction (5) is evaluated in the numba kernels
(:mod:`._pf_kernels`); :func:`log_prediction_scipy` is an independent
evaluation of the same closed forms with ``scipy.special`` and
:func:`log_prediction_quadrature` integrates (5) directly, both for tests.
"""

import math
import warnings

import numpy as np

from . import losses
from .losses import ABSOLUTE, HUBER  # noqa: F401  (the loss names)

CONJUGATE = "conjugate"
IMPROPER = "improper"
COORDINATE = "coordinate"
REDUCTION = "reduction"
_PRIOR_CODES = {CONJUGATE: 0, IMPROPER: 1}
_LOSS_CODES = {name: losses.code(name) for name in (ABSOLUTE, HUBER)}


def prior_radius(G):
    """``C = 1 / (5 G)``: the prior lives on ``[-C, C]`` (Algorithm 1)."""
    return 1.0 / (5.0 * float(G))


def conjugate_log_normaliser(b, C):
    """``log Z``, ``Z = int_{-C}^{C} exp(-b v^2) dv = sqrt(pi / b) erf(C sqrt(b))``."""
    return 0.5 * math.log(math.pi / b) + math.log(math.erf(C * math.sqrt(b)))


# ---------------------------------------------------------------------------
# Reference evaluations (scipy; quadrature), used by the tests.
# ---------------------------------------------------------------------------

def _one_minus_x_erfcx(x):
    from scipy.special import erfcx

    if x < 3.0:
        return 1.0 - math.sqrt(math.pi) * x * erfcx(x)
    t = x
    for k in range(80, 1, -1):
        t = x + 0.5 * k / t
    r = 0.5 / t
    return r / (x + r)


def _log_gl(p, rate, gauss, upper, n=32):
    nodes, weights = np.polynomial.legendre.leggauss(n)
    s = upper * (nodes + 1.0) / 2.0
    values = np.sinh(rate * s) * np.exp(-gauss * s * s) * (s if p == 1 else 1.0)
    return math.log(np.dot(weights / 2.0, values)) + math.log(upper)


def _log_k_scipy(p, L, B, C):
    from scipy.special import erf, erfc, erfcx

    sqrt_pi = math.sqrt(math.pi)
    CL = C * L
    c = C * math.sqrt(B)
    if c < 1e-100:
        if CL <= 20.0:
            return _log_gl(p, CL, 0.0, 1.0) + (p + 1) * math.log(C)
        if p == 0:
            return CL - math.log(2) + 2 * math.log1p(-math.exp(-CL)) - math.log(L)
        em = math.exp(-2 * CL)
        return CL - math.log(2 * L) + math.log(C - 1 / L + em * (C + 1 / L))
    if c <= 1.0 and CL <= 20.0:
        return _log_gl(p, CL, c * c, 1.0) + (p + 1) * math.log(C)
    a = L / (2.0 * math.sqrt(B))
    log_jacobian = -(p + 1) * 0.5 * math.log(B)
    if a <= c:
        if c < 6.0 and a <= 2.0:
            return _log_gl(p, 2 * a, 1.0, c) + log_jacobian
        if p == 1:
            bracket = (sqrt_pi * a * (erf(c - a) + erf(c + a))
                       + math.exp(-(c - a) ** 2) * math.expm1(-4 * a * c))
            return a * a + math.log(bracket) - math.log(4) + log_jacobian
        bracket = 2 * erf(a) - (erfc(c - a) - erfc(c + a))
        return a * a + math.log(bracket) + math.log(sqrt_pi / 4) + log_jacobian
    x, y = a - c, a + c
    e4 = math.exp(-4 * a * c)
    log_e = CL - c * c
    if p == 1:
        bracket = (sqrt_pi * c * erfcx(x) - _one_minus_x_erfcx(x)
                   + e4 * (_one_minus_x_erfcx(y) + sqrt_pi * c * erfcx(y)))
        return log_e + math.log(bracket) - math.log(4) + log_jacobian
    bracket = erfcx(x) + e4 * erfcx(y) - 2 * math.exp(-log_e) * erfcx(a)
    return log_e + math.log(bracket) + math.log(sqrt_pi / 4) + log_jacobian


def log_prediction_scipy(L, B, *, G=1.0, prior=CONJUGATE, b=1.0):
    """``(sign, log|w|)`` of prediction (5) with ``scipy.special``; ``B`` includes ``b``."""
    C = prior_radius(G)
    if L == 0:
        return 0.0, -math.inf
    sign = math.copysign(1.0, L)
    if prior == CONJUGATE:
        return sign, math.log(2) + _log_k_scipy(1, abs(L), B, C) - conjugate_log_normaliser(b, C)
    return sign, math.log(2) + _log_k_scipy(0, abs(L), B, C)


def log_prediction_quadrature(L, B, *, G=1.0, prior=CONJUGATE, b=1.0):
    """``(sign, log|w|)`` of (5) by adaptive quadrature of ``int v dP(v) exp(L v - B v^2)``.

    Integrates ``2 v^p sinh(|L| v) exp(-B v^2)`` over ``[0, C]`` (positive, so
    no cancellation) after dividing by its maximum, on pieces around the peak.
    """
    from scipy import integrate

    C = prior_radius(G)
    if L == 0:
        return 0.0, -math.inf
    p = 1 if prior == CONJUGATE else 0
    Labs = abs(L)

    def log_integrand(v):
        # log(v^p sinh(Lv) e^{-Bv^2}), with log sinh(z) = z + log1p(-e^{-2z}) - log 2
        z = Labs * v
        log_sinh = (math.log(math.sinh(z)) if z < 1.0
                    else z + math.log1p(-math.exp(-2 * z)) - math.log(2))
        return p * math.log(v) + log_sinh - B * v * v

    # Peak of the integrand's exponential part, and its width.
    mode = min(Labs / (2 * B), C) if B > 0 else C
    width = 1 / math.sqrt(2 * B) if B > 0 else C
    if Labs - 2 * B * C > 0:
        width = min(width, 1 / (Labs - 2 * B * C))
    width = min(width, C)
    grid = np.linspace(0.0, 1.0, 4)[1:-1] * C
    points = {0.0, C, *grid}
    for k in (1, 2, 4, 8, 16, 32, 64, 128):
        points.update((min(max(mode - k * width, 0.0), C), min(max(mode + k * width, 0.0), C)))
    points = sorted(points)
    # Reference level: the log-integrand's maximum over a fine grid near the peak.
    probe = np.unique(np.clip(np.concatenate([
        mode + width * np.linspace(-8, 8, 401), np.linspace(0, C, 401)[1:]]), 1e-300, C))
    level = max(log_integrand(v) for v in probe)
    total = 0.0
    with warnings.catch_warnings():
        # quad warns when it cannot certify epsrel=1e-13; its result is still
        # far below the 1e-8 the tests ask for.
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for lo, hi in zip(points[:-1], points[1:]):
            if hi <= lo:
                continue
            value, _ = integrate.quad(
                lambda v: math.exp(log_integrand(v) - level) if v > 0 else 0.0,
                lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)
            total += value
    log_w = math.log(2.0) + level + math.log(total)
    if prior == CONJUGATE:
        log_w -= conjugate_log_normaliser(b, C)
    return math.copysign(1.0, L), log_w


def log_prediction_numba(L, B, *, G=1.0, prior=CONJUGATE, b=1.0):
    """``(sign, log|w|)`` of (5) from the numba kernel the learners use."""
    from . import _pf_kernels as kernels

    C = prior_radius(G)
    log_z = conjugate_log_normaliser(b, C) if prior == CONJUGATE else 0.0
    return kernels.log_prediction(float(L), float(B), C, _PRIOR_CODES[prior], log_z)


# ---------------------------------------------------------------------------
# The learners: state and updates from noisy reports only.
# ---------------------------------------------------------------------------

class _PotentialLearner:
    """Shared configuration: ``G`` (so ``C = 1/(5G)``), the prior and its ``b``."""

    def __init__(self, n_dims, *, G, prior=CONJUGATE, b=1.0):
        self.n_dims = int(n_dims)
        self.G = float(G)
        self.prior = prior
        self.b = float(b)
        self.C = prior_radius(G)
        self.log_z = conjugate_log_normaliser(self.b, self.C) if prior == CONJUGATE else 0.0
        self.prior_code = _PRIOR_CODES[prior]
        self.t = 0
        self.w_sum = np.zeros(self.n_dims)

    def _config(self):
        return self.C, self.b, self.prior_code, self.log_z

    def average(self):
        """Average of the iterates played so far (zeros before the first round)."""
        return self.w_sum / self.t if self.t else np.zeros(self.n_dims)

    def copy(self):
        new = type(self).__new__(type(self))
        new.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v)
                             for k, v in self.__dict__.items()})
        return new

    def state(self):
        """The learner's numeric state, as arrays (for comparisons in tests)."""
        return {k: np.copy(v) for k, v in sorted(self.__dict__.items())
                if not isinstance(v, str)}


class CoordinateLearner(_PotentialLearner):
    """Algorithm 3: an independent 1-D potential learner per coordinate.

    State: ``L_j = -sum g~_tj`` and ``S_j = sum g~_tj^2`` (``B_j = b + S_j``
    for the conjugate prior, ``S_j`` for the improper one).
    """

    def __init__(self, n_dims, *, G, prior=CONJUGATE, b=1.0):
        super().__init__(n_dims, G=G, prior=prior, b=b)
        self.L = np.zeros(self.n_dims)
        self.S = np.zeros(self.n_dims)

    def predict(self):
        """The iterate ``w_t`` the learner plays next."""
        from . import _pf_kernels as kernels

        out = np.empty(self.n_dims)
        kernels.learner_coordinate_predict(self.L, self.S, *self._config(), out)
        return out

    def update(self, report):
        """Receive one noisy report ``g~_t``."""
        from . import _pf_kernels as kernels

        self.w_sum += self.predict()
        kernels.learner_coordinate_update(self.L, self.S, np.asarray(report, dtype=np.float64))
        self.t += 1

    def replay(self, reports):
        """Receive a sequence of reports (rows), as :meth:`update` one at a time."""
        from . import _pf_kernels as kernels

        reports = np.ascontiguousarray(reports, dtype=np.float64)
        kernels.learner_coordinate_replay(reports, self.L, self.S, self.w_sum, *self._config())
        self.t += reports.shape[0]

    def _run_kernel(self, kernels, args):
        kernels.run_coordinate_protocol(*args, self.L, self.S, self.w_sum, *self._config())


class ReductionLearner(_PotentialLearner):
    """Algorithm 2: ``w_t = v_t z_t``; the 1-D potential learns ``v``, scale-free
    projected gradient descent on the unit L2 ball learns ``z``.

    State: ``scalars = [L_v, S_v, sum_s ||g~_s||^2]`` and ``z``.
    """

    def __init__(self, n_dims, *, G, prior=CONJUGATE, b=1.0):
        super().__init__(n_dims, G=G, prior=prior, b=b)
        self.scalars = np.zeros(3)
        self.z = np.zeros(self.n_dims)

    def predict(self):
        from . import _pf_kernels as kernels

        out = np.empty(self.n_dims)
        kernels.learner_reduction_predict(self.scalars, self.z, *self._config(), out)
        return out

    def update(self, report):
        from . import _pf_kernels as kernels

        self.w_sum += self.predict()
        kernels.learner_reduction_update(self.scalars, self.z,
                                         np.asarray(report, dtype=np.float64))
        self.t += 1

    def replay(self, reports):
        from . import _pf_kernels as kernels

        reports = np.ascontiguousarray(reports, dtype=np.float64)
        kernels.learner_reduction_replay(reports, self.scalars, self.z, self.w_sum,
                                         *self._config())
        self.t += reports.shape[0]

    def _run_kernel(self, kernels, args):
        kernels.run_reduction_protocol(*args, self.scalars, self.z, self.w_sum, *self._config())


def make_learner(method, n_dims, *, G, prior, b):
    cls = CoordinateLearner if method == COORDINATE else ReductionLearner
    return cls(n_dims, G=G, prior=prior, b=b)


# ---------------------------------------------------------------------------
# The protocol: users and learner, round by round.
# ---------------------------------------------------------------------------

def user_gradient(w, x, y, *, loss, huber_threshold=1.0, intercept=True):
    """A user's subgradient of its loss at ``w`` (before clipping), in numpy."""
    x_aug = np.append(x, 1.0) if intercept else np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        residual = float(np.dot(w, x_aug)) - float(y)
        if not np.isfinite(residual):
            # As the kernel's ``user_residual``: an overflowed product gave
            # inf (or inf - inf = NaN); redo the sum on the row scaled by its
            # largest magnitude, which is finite, and scale back.
            m = max(1.0, float(np.max(np.abs(x_aug))), abs(float(y)))
            scaled = float(np.dot(w, x_aug / m)) - float(y) / m
            residual = scaled * m if np.isfinite(scaled) else 0.0
        return losses.loss_derivative(residual, losses.code(loss), huber_threshold) * x_aug


LAPLACE = "laplace"
SAMPLED_COORDINATE = "sampled_coordinate"
_LAPLACE_ONLY = (False, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.ones(2),
                 np.zeros(2, np.int64))


def run_protocol(learner, X, y, epsilons, weights, rng, *, loss, huber_threshold,
                 intercept, sampled=None, sample_weight=None):
    """Rows of ``(X, y)`` as users, in order, against ``learner`` (updated in place).

    User ``i`` has budget ``epsilons[i]`` split by ``weights`` and reports
    through the public randomiser's kernel, its random bits from ``rng`` (a
    numpy Generator or an exact sampler state): exact Laplace noise, or, when
    ``sampled`` is a
    :class:`~sklearn_dpol._core.local_randomizers.LocalSampledCoordinateRandomizer`
    (the users' side, built by the caller for the same ``weights``), one
    sampled coordinate with a randomised sign. The numba kernel hands the
    learner only the reports. ``sample_weight`` (one weight in [0, 1] per row,
    validated by the caller, or ``None``) multiplies each user's clipped
    gradient before its randomiser (``doc/privacy.md`` 57.5).
    """
    from . import _pf_kernels as kernels
    from .noise import sampler_state

    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if sample_weight is not None and np.shape(sample_weight) != (X.shape[0],):
        raise ValueError("sample_weight must hold one weight per row of X.")
    tables = _LAPLACE_ONLY if sampled is None else (
        True, sampled.private, sampled.cumulative, sampled.inverse_p, sampled.magnitudes,
        sampled.a)
    args = (
        np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64),
        bool(intercept), _LOSS_CODES[loss], float(huber_threshold),
        sampler_state(rng),
        np.ascontiguousarray(epsilons, dtype=np.float64),
        (np.zeros(0) if sample_weight is None
         else np.ascontiguousarray(sample_weight, dtype=np.float64)),
        weights, tables,
    )
    learner._run_kernel(kernels, args)
    learner.t += X.shape[0]
    return learner


def run_protocol_python(learner, X, y, epsilons, randomizer, rng, *, loss,
                        huber_threshold, intercept):
    """The same protocol in plain Python with separate objects (reference for tests).

    Returns the reports the learner received.
    """
    from .noise import sampler_state

    state = sampler_state(rng)      # one stream of random bits, as in the kernel
    reports = []
    for i in range(X.shape[0]):
        w = learner.predict()
        report = randomizer.report(
            user_gradient(w, X[i], y[i], loss=loss, huber_threshold=huber_threshold,
                          intercept=intercept),
            epsilons[i], state,
        )
        learner.update(report)
        reports.append(report)
    return np.array(reports).reshape(X.shape[0], learner.n_dims)
