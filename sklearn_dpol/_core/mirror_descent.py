"""Noisy mirror descent for convex ERM over a public set (seed 004, Algorithm 1, recalibrated).

Model: ``L(w, b) = (1/n) sum_i f(<z_i, w> + b - y_i)`` with ``z_i`` the row
``x_i`` clipped to L2 norm ``R = data_norm`` and ``y_i`` clipped to
``[-Y, Y]``; ``w`` in ``C`` (an L2, L1, group-L1 ball or a simplex of
``radius``), ``b`` in ``[-Y, Y]`` when fitted. ``f`` is the squared, absolute
or Huber loss on the residual, with ``|f'| <= Lf`` on ``C`` (:func:`derivative_bound`).

Privacy (derived in ``doc/privacy.md``): each record's gradient
``f'(r) (z, 1)`` has L2 norm at most ``L = Lf sqrt(R^2 + 1)`` (``Lf R``
without intercept), so replacing one record moves the mean gradient by at
most ``2L/n``. Every step adds ``N(0, sigma^2 I)`` to it; ``T`` steps are an
adaptive composition of ``T`` Gaussian mechanisms, ``sqrt(T) 2L/(n sigma)``-GDP
exactly, and ``sigma = 2 L sqrt(T) / (n mu*)`` makes them ``mu*``-GDP with
``mu* = gaussian_mu(epsilon, delta)``. The iterates and their average are
post-processing of the noisy gradients.

Iterates are kept in normalised coordinates ``u = w / radius`` on the unit
set and ``v = b / Y`` in ``[-1, 1]``; the gradient with respect to ``u`` is
``radius g_w`` (and ``Y g_b`` for ``v``). The potential of the product set is
``Psi(u) + v^2 / 2``.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, sparse, special, stats
from scipy.sparse import issparse

from ..privacy import gaussian_delta, gaussian_mu
from ..privacy._rounding import sum_rounding_factor
from . import _floors
from . import losses
from ._clip import clip_row_scales
from . import sets
from ._weights import canonical_csr, sparse_gram
from .losses import ABSOLUTE, HUBER, SQUARED  # noqa: F401  (the loss names)
from .sets import GROUP_L1, L1, L2, SIMPLEX
from .noise import sampler_state

LOSSES = losses.RESIDUAL_LOSSES
CONSTRAINTS = (L2, L1, SIMPLEX, GROUP_L1)

_LOSS_CODES = {name: losses.code(name) for name in LOSSES}
# Kernel codes (``_md_kernels``), repeated here so that importing this module
# does not load numba.
_BALL_L2, _BALL_L1, _SIMPLEX, _GROUP_L1 = 0, 1, 2, 3

# max_iter=None: a public, continuous rule in (n, p, epsilon, delta, the bounds)
# (``default_iterations``, ``doc/privacy.md`` section 8.11): the fewest steps at
# which the proven bound reaches its floor, softly capped by a compute budget:
# the squared loss on the Gram matrix gets soft_max(PASS_BUDGET + n p^2 / s,
# COMPUTE_BUDGET / s) steps, s = p^2 + p + GRAM_STEP_OVERHEAD the multiply-adds
# of one step (one Gram matrix's worth of steps, or COMPUTE_BUDGET); losses that
# step on the rows get soft_max(PASS_BUDGET, COMPUTE_BUDGET / (n p)) steps, so
# their work is soft_max(PASS_BUDGET n p, COMPUTE_BUDGET), never smaller for a
# larger n. The cap is exactly the step count for epsilon=inf.
PASS_BUDGET = 2000
COMPUTE_BUDGET = 2e9
GRAM_STEP_OVERHEAD = 400.0
# Soft minimum ``(a^-k + b^-k)^(-1/k)`` (and maximum ``(a^k + b^k)^(1/k)``):
# smooth, within 2^(1/k) of ``min(a, b)`` (``max(a, b)``).
SOFT_POWER = 4.0
MIN_AUTO_ITER = 1
MAX_AUTO_ITER = 1_000_000
# Rows per chunk when forming the Gram matrix, so X is never copied whole.
CHUNK_ROWS = 8192
# The Gram matrix is used up to this dimension (128 MB of float64).
GRAM_MAX_DIM = 4096
# Huber on the Gram matrix (``use_huber_gram``): candidate rows are those with
# ``|r| > h (1 - HUBER_GRAM_MARGIN)`` at a reference point, found again when the
# iterate has moved the residuals by ``0.99 HUBER_GRAM_MARGIN h``. Used only
# while the residual bound is below ``HUBER_GRAM_MAX_RATIO h``, so that the
# rounding of a residual (below 5e-13 of the bound for p <= 4096) stays far
# below the margin's 1% slack (doc/privacy.md section 31).
HUBER_GRAM_MARGIN = 0.5
HUBER_GRAM_MAX_RATIO = 1e6
# The Gram path computes the Huber gradient as the squared loss's minus a correction,
# both of the size of the residual bound: its rounding, relative to the sensitivity,
# is at most ``huber_gram_rounding`` (doc/privacy.md section 54.3). The path is taken
# only while that is at most half of HUBER_GRAM_ALLOWANCE, and the noise is then
# calibrated on (1 + HUBER_GRAM_ALLOWANCE) times the sensitivity.
HUBER_GRAM_ALLOWANCE = 1e-3
UNIT_ROUNDOFF = 2.0 ** -53
# Sensitivities and noise scales below this lose their precision in double
# precision; bounds above HUGE overflow once squared or summed over rows.
TINY = _floors.TINY
HUGE = 1e300
# A warm start (or an average) outside the unit set by more than rounding.
SET_RTOL = sets.START_RTOL


# -- bounds ----------------------------------------------------------------------------

def derivative_bound(loss, huber_threshold, radius, data_norm, y_bound, intercept):
    """``Lf = sup |f'(r)|`` over clipped data and the constraint set.

    Absolute loss: 1. Huber: the threshold ``h``. Squared: ``sup |r|`` with
    ``|<z, w>| <= R max_{w in C} ||w||_2 = R radius`` (every set here lies in
    the L2 ball of ``radius``), ``|b| <= Y`` and ``|y| <= Y``.
    """
    residual = data_norm * radius + (y_bound if intercept else 0.0) + y_bound
    return losses.derivative_bound(loss, huber_threshold=huber_threshold,
                                   residual_bound=residual)


def lipschitz_constant(derivative, data_norm, intercept):
    """``L = Lf ||(z, 1)||_2 <= Lf sqrt(R^2 + 1)`` (``Lf R`` without intercept)."""
    return losses.lipschitz(derivative, data_norm, 1.0 if intercept else 0.0)


def gradient_sensitivity(lipschitz, n_samples, n_dims=0):
    """Replace-one L2 sensitivity of the computed mean gradient: ``2L/n`` times the
    rounding allowance of a sum of ``n`` records (and of the Gram route's products over
    ``n_dims`` columns; ``doc/privacy.md`` section 54.8)."""
    return 2.0 * lipschitz / n_samples * sum_rounding_factor(n_samples + n_dims)


def check_bounds(loss, huber_threshold, radius, data_norm, y_bound, intercept, n_samples=1,
                 unit_scale=False):
    """Raise ``ValueError`` when the bounds overflow or vanish in floating point.

    ``unit_scale``: the bounds of the units of ``X`` and those of the unit scale
    (:func:`unit_bounds`) in which the fit computes are both checked.
    """
    if unit_scale:
        check_bounds(loss, huber_threshold, *unit_bounds(radius, data_norm), y_bound,
                     intercept, n_samples)
    derivative = derivative_bound(loss, huber_threshold, radius, data_norm, y_bound, intercept)
    lipschitz = lipschitz_constant(derivative, data_norm, intercept)
    # The gradient w.r.t. (u, v) (v, the intercept's coordinate, only with intercept), the
    # set's and the loss's scales: their squares enter the step sizes (smoothness, the
    # theorem's step), which must neither overflow nor underflow to 0.
    extent = max(radius * data_norm, y_bound if intercept else 0.0)
    scaled = derivative * extent
    reach = max(radius, y_bound if intercept else 0.0)
    large = (lipschitz, scaled * scaled, radius * radius, y_bound * y_bound,
             n_samples * data_norm * max(data_norm, y_bound, derivative))
    small = (gradient_sensitivity(lipschitz, n_samples), scaled * scaled, extent * extent,
             reach * reach)
    if not (all(value < HUGE for value in large) and all(value >= TINY for value in small)):
        raise ValueError(
            f"radius={radius:.3g}, data_norm={data_norm:.3g}, y_bound={y_bound:.3g} "
            f"(loss={loss!r}, n={n_samples}) give a sensitivity or a step that overflows "
            "or rounds to zero in floating point. Rescale X and y by public constants "
            "so that these bounds are near 1."
        )
    check_gram_statistics(n_samples, data_norm, y_bound)


def unit_bounds(radius, data_norm):
    """``(radius R, 1)``: the radius and row bound of the *unit scale*, where every clipped
    row is divided by the public ``R = data_norm`` (``doc/privacy.md`` section 55).

    A model ``w`` on the rows ``z`` is the model ``w R`` on the rows ``z / R``: same
    predictions, and the sets here scale with their radius. ``R / R`` is exactly 1, so at
    ``R = 1`` nothing changes. Public values only.
    """
    return radius * data_norm, data_norm / data_norm


def gram_statistic_sensitivities(n_samples, data_norm, y_bound):
    """``(2 R^2 / n, 2 R Y / n)``: what one record can move an entry of the Gram matrix
    and of ``mean(z y)`` (``_floors.py``). Public values only."""
    return _floors.gram_statistic_sensitivities(n_samples, data_norm, y_bound)


def check_gram_statistics(n_samples, data_norm, y_bound):
    """Refuse bounds whose Gram statistics would be rounded to whole subnormal steps
    (``_floors.py``, ``doc/privacy.md`` section 54.3), for every loss and route (public
    values only, before the data is read)."""
    _floors.check_gram_statistics(n_samples, data_norm, y_bound, "data_norm")


# -- Gaussian widths (deterministic) ---------------------------------------------------------

@functools.lru_cache(maxsize=256)
def width_l2_ball(n_dims):
    """``G = E ||b||_2 = sqrt(2) Gamma((p+1)/2) / Gamma(p/2)`` for the unit L2 ball."""
    return float(math.sqrt(2.0) * math.exp(special.gammaln((n_dims + 1) / 2.0)
                                           - special.gammaln(n_dims / 2.0)))


@functools.lru_cache(maxsize=256)
def width_l1_ball(n_dims):
    """``G = E max_i |b_i|`` for the unit L1 ball: ``int_0^inf 1 - (2 Phi(t) - 1)^p dt``."""
    return _expected_max(lambda t: n_dims * np.log(special.erf(t / math.sqrt(2.0))),
                         math.sqrt(2.0 * math.log(2.0 * n_dims)) + 12.0)


@functools.lru_cache(maxsize=256)
def width_group_ball(n_dims, group_size):
    """``G = E max_j ||b_j||_2`` for the unit group-L1 ball: a maximum of chi variables."""
    n_full, last = divmod(n_dims, group_size)

    def log_cdf(t):
        value = n_full * stats.chi.logcdf(t, group_size)
        return value + (stats.chi.logcdf(t, last) if last else 0.0)

    upper = math.sqrt(group_size) + math.sqrt(2.0 * math.log(n_full + 2.0)) + 12.0
    return _expected_max(log_cdf, upper)


def _expected_max(log_cdf, upper):
    """``E M = int_0^inf P(M > t) dt`` for ``M >= 0`` with ``log P(M <= t) = log_cdf(t)``."""
    def tail(t):
        return -math.expm1(float(log_cdf(t))) if t > 0 else 1.0

    value, _ = integrate.quad(tail, 0.0, upper, limit=200, epsabs=1e-12, epsrel=1e-10)
    return float(value)


# -- potentials ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Potential:
    """A potential ``Psi`` on a unit set (``||Q||_2 = 1``) and its mirror steps.

    ``kind`` is the kernel code; ``q, c`` parametrise ``(c/2) ||u||_q^2`` on the
    L1 ball; ``power, xi`` and ``starts`` (block boundaries) the group potential.
    """

    name: str
    kind: int
    n_dims: int
    psi_max: float
    gaussian_width: float
    q: float = 2.0
    c: float = 1.0
    power: float = 2.0
    xi: float = 1.0
    starts: tuple = (0,)

    @property
    def set_l2_diameter(self):
        """``||Q||_2 = max_{u in Q} ||u||_2``: 1 for every unit set here."""
        return 1.0

    def block_starts(self):
        return np.asarray(self.starts, dtype=np.int64)

    def start(self):
        """The minimiser of ``Psi`` on the set: the origin, or the uniform point."""
        if self.kind == _SIMPLEX:
            return np.full(self.n_dims, 1.0 / self.n_dims)
        return np.zeros(self.n_dims)

    def value(self, u):
        u = np.asarray(u, dtype=np.float64)
        if self.kind == _BALL_L2:
            return 0.5 * float(u @ u)
        if self.kind == _BALL_L1:
            return 0.5 * self.c * float(np.linalg.norm(u, self.q)) ** 2
        if self.kind == _SIMPLEX:
            return float(np.sum(special.xlogy(u, u)) + math.log(self.n_dims))
        norms = np.sqrt(np.add.reduceat(u * u, self.block_starts()[:-1]))
        return float(np.sum(norms ** self.power) / (self.power * self.xi))

    def mirror(self, u):
        """``grad Psi(u)`` (for the simplex ``log u + 1``, on the positive orthant)."""
        from . import _md_kernels as kernels

        u = np.ascontiguousarray(u, dtype=np.float64)
        if self.kind == _BALL_L2:
            return u.copy()
        out = np.empty_like(u)
        if self.kind == _BALL_L1:
            kernels.half_sq_norm_grad(u, self.q, self.c, out)
        elif self.kind == _SIMPLEX:
            out = np.log(u) + 1.0
        else:
            kernels.group_mirror(u, self.block_starts(), self.power, self.xi, out,
                                 np.empty(len(self.starts) - 1))
        return out

    def inverse(self, z):
        """``grad Psi*(z)``, the inverse of :meth:`mirror` (unconstrained)."""
        from . import _md_kernels as kernels

        z = np.ascontiguousarray(z, dtype=np.float64)
        if self.kind == _BALL_L2:
            return z.copy()
        if self.kind == _SIMPLEX:
            return np.exp(z - 1.0)
        out = np.empty_like(z)
        if self.kind == _BALL_L1:
            kernels.half_sq_norm_grad(z, self.q / (self.q - 1.0), 1.0 / self.c, out)
            return out
        norms = np.sqrt(np.add.reduceat(z * z, self.block_starts()[:-1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(norms > 0, (self.xi * norms) ** (1.0 / (self.power - 1.0))
                              / norms, 0.0)
        return z * np.repeat(factor, np.diff(self.block_starts()))

    def step(self, z):
        """``argmin_{u in set} -<z, u> + Psi(u)``: the constrained mirror step."""
        from . import _md_kernels as kernels

        z = np.ascontiguousarray(z, dtype=np.float64)
        out = np.empty_like(z)
        if self.kind == _BALL_L2:
            norm = np.linalg.norm(z)
            return z / norm if norm > 1.0 else z.copy()
        if self.kind == _BALL_L1:
            kernels.l1_step(z, self.q / (self.q - 1.0), 1.0 / self.c, out, np.empty_like(z))
        elif self.kind == _SIMPLEX:
            shifted = np.exp(z - np.max(z))
            out = shifted / shifted.sum()
        else:
            m = len(self.starts) - 1
            kernels.group_step(z, self.block_starts(), self.power, self.xi, out,
                               np.empty(m), np.empty(m))
        return out

    def set_norm(self, u):
        """The gauge of the unit set (``inf`` off the simplex's affine hull or sign)."""
        return sets.gauge(self.name, u, starts=self.block_starts())


def make_potential(constraint, n_dims, group_size=None):
    """The potential of seed 004, section 3.2, for ``constraint`` on the unit set."""
    if constraint == L2:
        return Potential(L2, _BALL_L2, n_dims, 0.5, width_l2_ball(n_dims))
    if constraint == L1:
        return _l1_potential(n_dims)
    if constraint == SIMPLEX:
        return Potential(SIMPLEX, _SIMPLEX, n_dims, math.log(n_dims), width_l1_ball(n_dims))
    if constraint == GROUP_L1:
        return _group_potential(n_dims, int(group_size))
    raise ValueError(f"unknown constraint {constraint!r}")


def _l1_potential(n_dims):
    """``Psi = ||u||_q^2 / (4(q-1))``, ``q = ln k / (ln k - 1)``, ``k = 2p`` vertices.

    That ``q`` lies in ``(1, 2]`` only for ``ln k >= 2`` (``p >= 4``); below it
    ``q > 2`` and ``||u||_q^2`` is not strongly convex, so ``p <= 3`` uses the
    Euclidean potential ``||u||^2 / 2`` (the step is then the Euclidean
    projection onto the L1 ball).
    """
    log_k = math.log(2 * n_dims)
    width = width_l1_ball(n_dims)
    if log_k <= 2.0:
        return Potential(L1, _BALL_L1, n_dims, 0.5, width, q=2.0, c=1.0)
    q = log_k / (log_k - 1.0)
    c = 1.0 / (2.0 * (q - 1.0))
    return Potential(L1, _BALL_L1, n_dims, 0.5 * c, width, q=q, c=c)


def _group_potential(n_dims, group_size):
    """``Psi = (1/(M xi)) sum_j ||u_j||^M`` (Juditsky-Nemirovski, seed 004 section 3.2)."""
    starts = tuple(range(0, n_dims, group_size)) + (n_dims,)
    n_groups = len(starts) - 1
    if n_groups <= 2:
        power, xi = 2.0, (1.0 if n_groups == 1 else 0.5)
    else:
        power, xi = 1.0 + 1.0 / math.log(n_groups), 1.0 / (math.e * math.log(n_groups))
    # Psi is convex in the block norms, so its maximum is at a vertex (one block of norm 1).
    return Potential(GROUP_L1, _GROUP_L1, n_dims, 1.0 / (power * xi),
                     width_group_ball(n_dims, min(group_size, n_dims)), power=power, xi=xi,
                     starts=starts)


# -- calibration --------------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    """The step count, noise and step size of one call, and their guarantee.

    ``noise_scale`` is the Gaussian standard deviation per coordinate of the
    gradient in the original coordinates (0 for ``epsilon=inf``); ``mu`` is the
    GDP parameter of all ``n_steps`` noisy gradients together. ``huber_gram``:
    the Huber loss takes the Gram path (:func:`use_huber_gram`), whose rounding
    the noise pays for: it is calibrated on ``(1 + rounding_allowance)``
    times ``sensitivity`` (``mu`` included).
    """

    n_steps: int
    derivative: float
    lipschitz: float
    sensitivity: float
    noise_scale: float
    step_size: float
    mu: float
    epsilon: float
    delta: float
    gaussian_width: float
    huber_gram: bool = False
    rounding_allowance: float = 0.0


@dataclass(frozen=True)
class Geometry:
    """The terms of the Theorem 3.2 bound ``Psi_max/(eta T) + eta (A + sigma^2 B)``.

    ``grad_sq`` (``A``): the squared dual norm of one record's gradient in the
    normalised coordinates, ``Lf^2 (radius^2 R^2 + Y^2)``. ``noise_sq`` (``B``):
    ``E ||noise||_*^2 / sigma^2 <= radius^2 (G_Q^2 + ||Q||^2) + Y^2`` (the
    ``Y^2`` terms only with intercept). ``psi_max`` includes ``1/2`` for the
    intercept's potential.
    """

    grad_sq: float
    noise_sq: float
    psi_max: float


def geometry(potential, derivative, radius, data_norm, y_bound, intercept):
    extra = y_bound * y_bound if intercept else 0.0
    scale = radius * data_norm
    q_norm = potential.set_l2_diameter
    grad_sq = derivative * derivative * (scale * scale * q_norm * q_norm + extra)
    if derivative * derivative < TINY:
        # Lf^2 underflows (a Huber threshold below 1e-145) while Lf times the set's scale
        # does not (check_bounds): the same value, each product formed before squaring.
        grad_sq = (derivative * scale * q_norm) ** 2 + (
            (derivative * y_bound) ** 2 if intercept else 0.0)
    return Geometry(
        grad_sq=grad_sq,
        noise_sq=radius * radius * (potential.gaussian_width ** 2 + q_norm ** 2) + extra,
        psi_max=potential.psi_max + (0.5 if intercept else 0.0),
    )


def iteration_cap(loss, n_samples, n_features):
    """The compute cap of ``max_iter=None`` (a real number): public sizes only.

    The squared loss steps on the Gram matrix (``n p^2`` once, then
    ``s = p^2 + p + c0`` multiply-adds a step, ``c0 = GRAM_STEP_OVERHEAD``) and
    gets ``soft_max(PASS_BUDGET + n p^2 / s, COMPUTE_BUDGET / s)`` steps: about
    one Gram matrix's worth of steps beyond ``PASS_BUDGET``, or the fixed
    budget when that is larger (this matters only where the bound's count is
    large: the L1 and group-L1 balls, ``epsilon=inf``). Losses that step on the
    rows (``n p`` a step) get ``soft_max(PASS_BUDGET, COMPUTE_BUDGET / (n p))``
    steps. Both make the total work continuous and nondecreasing in ``n``.
    ``epsilon=inf`` takes exactly this many steps (rounded). The Huber loss
    keeps the rows' cap on its Gram path (:func:`use_huber_gram`), whose
    worst case is still one pass a step.
    """
    p = float(max(int(n_features), 1))
    n = float(n_samples)
    if loss == SQUARED and p <= GRAM_MAX_DIM:
        step = p * p + p + GRAM_STEP_OVERHEAD
        return soft_max(PASS_BUDGET + n * p * p / step, COMPUTE_BUDGET / step)
    return soft_max(float(PASS_BUDGET), COMPUTE_BUDGET / (n * p))


def soft_min(a, b, power=SOFT_POWER):
    """``(a^-k + b^-k)^(-1/k)`` for positive ``a, b`` (``inf`` allowed)."""
    if math.isinf(a):
        return b
    if math.isinf(b):
        return a
    return (a ** -power + b ** -power) ** (-1.0 / power)


def soft_max(a, b, power=SOFT_POWER):
    """``(a^k + b^k)^(1/k)``, computed without overflow."""
    top = max(a, b)
    return top * ((a / top) ** power + (b / top) ** power) ** (1.0 / power)


def theorem_iterations(n_samples, mu, geo, lipschitz):
    """``T* = A (n mu)^2 / (4 L^2 B)``: Theorem 3.2's bound is within ``sqrt(2)`` of its floor.

    With ``sigma^2 = 4 L^2 T / (n mu)^2`` the bound is
    ``2 sqrt(Psi_max (A / T + 4 L^2 B / (n mu)^2))`` at the best ``eta``: it
    decreases in ``T`` towards a noise floor and is within ``sqrt(2)`` of it at
    ``T*`` (``||Q||^2 n^2 mu^2 / (4 (G^2 + ||Q||^2))`` without intercept). A
    real number (``inf`` for ``mu = inf``); :func:`default_iterations` rounds.
    """
    if math.isinf(mu):
        return math.inf
    ratio = n_samples * mu / (2.0 * lipschitz)
    return geo.grad_sq / geo.noise_sq * ratio * ratio


def smoothness(radius, data_norm, y_bound, intercept):
    """``beta = radius^2 R^2 + Y^2`` (``Y^2`` with intercept): the mean loss's smoothness.

    For ``f'' <= 1`` (squared, Huber), in the normalised coordinates, w.r.t.
    the norm of ``Q`` (every unit set here lies in the unit L2 ball).
    """
    return (radius * data_norm) ** 2 + (y_bound ** 2 if intercept else 0.0)


def smooth_iterations(n_samples, mu, geo, lipschitz, potential, *, loss, radius, data_norm,
                      y_bound, intercept):
    """``T_s``: the fewest steps at which the smooth-loss bound reaches its floor, or ``None``.

    The bound ``Psi_max/(eta T) + eta sigma^2 B / c`` with ``eta <= c/(2 beta)``
    and ``sigma^2 = s^2 T / mu^2`` (``s = 2L/n``) has the floor
    ``2 s sqrt(Psi_max B / c) / mu`` for every ``T >= T_s`` and is larger below:
    ``T_s = (2 beta mu / s) sqrt(Psi_max / (c B))``, linear in ``n mu``. Beyond
    ``T_s`` the step shrinks like ``1/T`` and ``eta T`` stays constant: more
    steps run the same noisy gradient flow on a finer grid. ``None`` when the
    smooth analysis does not apply (absolute loss, group-L1 set).
    """
    modulus = strong_convexity(potential)
    if loss not in (SQUARED, HUBER) or modulus is None:
        return None
    if math.isinf(mu):
        return math.inf
    beta = smoothness(radius, data_norm, y_bound, intercept)
    sensitivity = gradient_sensitivity(lipschitz, n_samples)
    return 2.0 * beta * mu / sensitivity * math.sqrt(geo.psi_max / (modulus * geo.noise_sq))


def default_iterations(potential, geo, lipschitz, *, n_samples, n_features, mu, loss,
                       radius, data_norm, y_bound, intercept):
    """The step count of ``max_iter=None`` (``doc/privacy.md`` section 8.11).

    ``T = max(1, round(soft_min(T_b, T_c)))`` with ``soft_min(a, b) =
    (a^-4 + b^-4)^(-1/4)`` (smooth, within ``2^(1/4)`` of the minimum):

    * ``T_b``, the bound's count: :func:`smooth_iterations` when the smooth
      analysis applies and its floor is within ``sqrt(2)`` of Theorem 3.2's
      (modulus ``c >= 1/2``: the L2 ball and the simplex), else
      :func:`theorem_iterations`; ``inf`` for ``epsilon=inf``;
    * ``T_c``, the compute cap of :func:`iteration_cap` (the ``soft_max`` there
      is ``(a^4 + b^4)^(1/4)``).

    A continuous function of public values only (``n``, ``p``, ``mu*(epsilon,
    delta)``, the bounds and the loss constants), nondecreasing in ``n``, so
    the fit time never drops as ``n`` grows.
    """
    count = None
    modulus = strong_convexity(potential)
    if modulus is not None and modulus >= 0.5:
        count = smooth_iterations(n_samples, mu, geo, lipschitz, potential, loss=loss,
                                  radius=radius, data_norm=data_norm, y_bound=y_bound,
                                  intercept=intercept)
    if count is None:
        count = theorem_iterations(n_samples, mu, geo, lipschitz)
    cap = iteration_cap(loss, n_samples, n_features)
    steps = soft_min(count, cap) if count > 0 else 0.0
    return int(min(MAX_AUTO_ITER, max(MIN_AUTO_ITER, round(steps))))


def theorem_step_size(n_steps, geo, sigma):
    """``eta = sqrt(Psi_max / (T (A + sigma^2 B)))``, which minimises the bound."""
    if geo.psi_max == 0.0:
        return 0.0  # a one-point set: nothing to move
    noise = sigma * sigma * geo.noise_sq
    if sigma * sigma < TINY:
        noise = (sigma * math.sqrt(geo.noise_sq)) ** 2   # sigma^2 would underflow to 0
    return math.sqrt(geo.psi_max / (n_steps * (geo.grad_sq + noise)))


def strong_convexity(potential):
    """Modulus ``c`` of ``Psi`` w.r.t. the norm of ``Q`` (the L2 or the L1 norm).

    L2 ball: ``||u||^2/2`` is 1-strongly convex in L2. Simplex: the entropy is
    1-strongly convex in L1 (Pinsker). L1 ball: ``||u||_q^2/(4(q-1))`` is
    ``1/2``-strongly convex in ``||.||_q`` and ``||h||_q >= ||h||_1 / e`` for
    ``q = ln 2p/(ln 2p - 1)`` (seed 004, Claim 3.5), so ``1/(2e^2)`` in L1; the
    Euclidean fallback (``p <= 3``) is ``1/p`` in L1. Group L1: ``None`` (the
    seed quotes an O(1) modulus without its constant).
    """
    if potential.kind in (_BALL_L2, _SIMPLEX):
        return 1.0
    if potential.kind == _BALL_L1:
        if potential.q == 2.0:
            return 1.0 / potential.n_dims
        return 1.0 / (2.0 * math.e ** 2)
    return None


def smooth_step_size(n_steps, geo, sigma, potential, *, loss, radius, data_norm, y_bound,
                     intercept):
    """The step for a smooth loss, or ``None`` when the analysis does not apply.

    For the squared and Huber losses (``f'' <= 1``) the mean loss is
    ``beta``-smooth in the normalised coordinates, ``beta = radius^2 R^2 + Y^2``
    (``Y^2`` with intercept), w.r.t. the norm of ``Q``: every set here lies in
    the unit L2 ball, so the dual norm of a row is at most its L2 norm. With
    ``Psi`` ``c``-strongly convex and ``eta <= c / (2 beta)``, noisy mirror
    descent's average of ``theta_2..theta_{T+1}`` has
    ``E excess <= Psi_max/(eta T) + eta sigma^2 B / c`` (``doc/privacy.md``
    section 8.6), with no worst-case gradient term: the step is the minimiser
    ``min(c/(2 beta), sqrt(c Psi_max/(T sigma^2 B)))``. Public constants only.
    """
    modulus = strong_convexity(potential)
    if loss not in (SQUARED, HUBER) or modulus is None:
        return None
    beta = smoothness(radius, data_norm, y_bound, intercept)
    cap = modulus / (2.0 * beta)
    if sigma == 0.0:
        return cap
    if sigma * sigma < TINY:
        # sigma^2 would underflow (to 0 below about 1e-162, a ZeroDivisionError):
        # the same value with sigma taken out of the square root.
        return min(cap, math.sqrt(modulus * geo.psi_max / (n_steps * geo.noise_sq)) / sigma)
    return min(cap, math.sqrt(modulus * geo.psi_max / (n_steps * sigma * sigma * geo.noise_sq)))


def best_step_size(n_steps, geo, sigma, potential, *, loss, radius, data_norm, y_bound,
                   intercept):
    """The step whose proven bound is smaller: Theorem 3.2's, or the smooth one.

    Both bounds hold for the chosen step (the smooth one only up to
    ``c / (2 beta)``); each candidate is the minimiser of its own bound, and
    the one with the smaller guarantee is taken. Public constants only.
    """
    theorem = theorem_step_size(n_steps, geo, sigma)
    smooth = smooth_step_size(n_steps, geo, sigma, potential, loss=loss, radius=radius,
                              data_norm=data_norm, y_bound=y_bound, intercept=intercept)
    if smooth is None or theorem == 0.0:
        return theorem
    modulus = strong_convexity(potential)
    noise = sigma * sigma * geo.noise_sq

    def theorem_bound(eta):
        return geo.psi_max / (eta * n_steps) + eta * (geo.grad_sq + noise)

    def smooth_bound(eta):
        return geo.psi_max / (eta * n_steps) + eta * noise / modulus

    return smooth if smooth_bound(smooth) < theorem_bound(theorem) else theorem


@functools.lru_cache(maxsize=1024)
def noise_scale(sensitivity, n_steps, epsilon, delta):
    """``(sigma, mu)``: ``sigma = sensitivity sqrt(T) / mu*(epsilon, delta)``, in closed form.

    Each noisy gradient is ``(sensitivity / sigma)``-GDP and ``T`` identical
    ones compose adaptively to exactly ``mu = sqrt(T) sensitivity / sigma``
    (Dong, Roth and Su 2019, Corollary 2), computed here without a loop over
    the steps. ``sigma`` is nudged up by a few ulps until the composed ``mu``
    is at most ``mu*`` in floating point (and converts within ``delta``).
    Cached: ``mu*`` costs a root search, which would dominate a small batch.
    """
    mu_total = _target_mu(epsilon, delta)
    if math.isinf(mu_total):
        return 0.0, math.inf
    if sensitivity == 0.0:
        return 0.0, 0.0  # the data cannot move the gradient (callers refuse this)
    root = math.sqrt(n_steps)
    sigma = sensitivity * root / mu_total
    for _ in range(1000):
        if not sigma > 0:
            break
        mu = composed_mu(sensitivity, sigma, n_steps)
        # mu_total is itself certified: delta(epsilon; mu_total) <= delta.
        if mu <= mu_total and gaussian_delta(epsilon, mu) <= delta:
            return sigma, mu
        sigma = max(sigma * (1.0 + 1e-15), math.nextafter(sigma, math.inf))
    return sigma, math.inf


def composed_mu(sensitivity, sigma, n_steps):
    """``sqrt(T) (sensitivity / sigma)``: ``T`` identical ``(s/sigma)``-GDP steps, composed.

    Equal to ``compose_gdp([sensitivity / sigma] * T)`` up to rounding, in O(1).
    """
    return math.sqrt(n_steps) * (sensitivity / sigma)


@functools.lru_cache(maxsize=256)
def _target_mu(epsilon, delta):
    """``mu* = gaussian_mu(epsilon, delta)``, cached (a root search)."""
    return gaussian_mu(epsilon, delta)


def paper_noise_scale(lipschitz, n_steps, n_samples, epsilon, delta):
    """Seed 004, Algorithm 1: ``sigma^2 = 32 L^2 T log^2(T/delta) / (epsilon n)^2``.

    Benchmark only, not used by the estimator: for the same ``(epsilon, delta)``
    it is 11-22x the exact calibration of :func:`noise_scale`.
    """
    return (math.sqrt(32.0) * lipschitz * math.sqrt(n_steps) * math.log(n_steps / delta)
            / (epsilon * n_samples))


def calibrate(potential, *, n_samples, loss, huber_threshold, radius, data_norm, y_bound,
              intercept, epsilon, delta, n_steps=None, step_size=None, n_features=None):
    """Step count, noise and step size for one call on ``n_samples`` records.

    ``n_features`` (public, default ``potential.n_dims``) enters the compute cap
    of the default step count (:func:`default_iterations`).
    """
    check_bounds(loss, huber_threshold, radius, data_norm, y_bound, intercept, n_samples)
    derivative = derivative_bound(loss, huber_threshold, radius, data_norm, y_bound, intercept)
    lipschitz = lipschitz_constant(derivative, data_norm, intercept)
    sensitivity = gradient_sensitivity(lipschitz, n_samples, potential.n_dims)
    geo = geometry(potential, derivative, radius, data_norm, y_bound, intercept)
    mu_total = _target_mu(float(epsilon), float(delta))
    if n_steps is None:
        n_steps = default_iterations(
            potential, geo, lipschitz, n_samples=n_samples,
            n_features=potential.n_dims if n_features is None else n_features,
            mu=mu_total, loss=loss, radius=radius, data_norm=data_norm, y_bound=y_bound,
            intercept=intercept)
    # The Huber loss's Gram path (a public choice) rounds at the scale of the residual
    # bound: the noise pays for it, calibrated on (1 + HUBER_GRAM_ALLOWANCE) 2L/n.
    huber_gram = bool(use_huber_gram(
        loss, n_samples, potential.n_dims if n_features is None else n_features, int(n_steps),
        huber_threshold=huber_threshold, radius=radius, data_norm=data_norm, y_bound=y_bound,
        intercept=intercept))
    allowance = HUBER_GRAM_ALLOWANCE if huber_gram else 0.0
    sigma, mu = noise_scale(sensitivity * (1.0 + allowance), int(n_steps), float(epsilon),
                            float(delta))
    if not math.isinf(epsilon) and not (TINY <= sigma < math.inf and mu <= mu_total):
        raise ValueError(
            f"radius={radius:.3g}, data_norm={data_norm:.3g} and y_bound={y_bound:.3g} "
            f"with n={n_samples} give a noise scale too small for floating point (it "
            "would round to zero and the noise with it). Rescale X and y by public "
            "constants so that the bounds are near 1."
        )
    if step_size is not None:
        eta = float(step_size)
    else:
        eta = best_step_size(n_steps, geo, sigma, potential, loss=loss, radius=radius,
                             data_norm=data_norm, y_bound=y_bound, intercept=intercept)
    if not 0.0 <= eta < math.inf:
        raise ValueError(f"the step size {eta!r} is not a finite nonnegative number.")
    return Calibration(int(n_steps), derivative, lipschitz, sensitivity, sigma, eta,
                       mu, float(epsilon), float(delta), potential.gaussian_width,
                       huber_gram, allowance)


# -- the data --------------------------------------------------------------------------------

@dataclass
class ClippedData:
    """Rows clipped by scale factors (``X`` itself untouched), clipped targets, Gram stats.

    ``X`` is a dense array or a canonical CSR matrix (read through its stored
    entries only); ``weights`` holds the sample weights in [0, 1], or nothing
    when every weight is 1. The Gram statistics are weighted means over the
    ``n`` records (``n`` is public; ``w_mean`` is 1.0 without weights).
    """

    X: object
    scales: np.ndarray
    y: np.ndarray
    gram: np.ndarray
    z_mean: np.ndarray
    zy_mean: np.ndarray
    y_mean: float
    use_gram: bool
    weights: np.ndarray = None
    w_mean: float = 1.0

    @property
    def sparse(self):
        return issparse(self.X)


def clip_data(X, y, *, data_norm, y_bound, use_gram, sample_weight=None, unit_scale=False):
    """Clip once per call: row scales from :func:`clip_row_scales`, targets by ``y_bound``.

    ``unit_scale``: each row's factor is divided by ``data_norm`` too, so the rows
    ``z / data_norm`` (norm at most 1) are those of the unit scale (:func:`unit_bounds`);
    the Gram statistics are theirs.

    A CSR ``X`` stays sparse: its row norms, and the Gram statistics when they
    are used, come from its stored entries (``doc/privacy.md``, "Sparse input
    and sample weights for mirror descent"). ``sample_weight`` (in [0, 1],
    validated by the caller) multiplies each record's loss.
    """
    X = canonical_csr(X)
    scales = row_scales(X, data_norm)
    if unit_scale:
        # The clipping factor aims 4 (p + 2) ulps below the bound; the one rounding of
        # this division keeps every row's norm below 1 (doc/privacy.md section 55).
        scales = scales / data_norm
    y_c = np.clip(np.asarray(y, dtype=np.float64), -y_bound, y_bound)
    weights = np.zeros(0) if sample_weight is None else np.asarray(sample_weight,
                                                                   dtype=np.float64)
    weighted = weights.size > 0
    w_mean = float(np.mean(weights)) if weighted else 1.0
    n, p = X.shape
    if not use_gram:
        empty = np.zeros(0)
        return ClippedData(X, scales, y_c, np.zeros((0, 0)), empty, empty, 0.0, False,
                           weights, w_mean)
    gram, z_sum, zy_sum = np.zeros((p, p)), np.zeros(p), np.zeros(p)
    for start in range(0, n, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, n)
        rows = slice(start, stop)
        if issparse(X):
            chunk = X[rows]
            Z = sparse.csr_matrix(
                (np.repeat(scales[rows], np.diff(chunk.indptr))
                 * np.asarray(chunk.data, dtype=np.float64), chunk.indices, chunk.indptr),
                shape=chunk.shape)
        else:
            Z = scales[rows, np.newaxis] * X[rows].astype(np.float64, copy=False)
        if weighted:
            # sqrt(c_i) z_i on both sides gives sum c_i z_i z_i^T.
            root = np.sqrt(weights[rows])
            Zr = Z.multiply(root[:, np.newaxis]).tocsr() if issparse(Z) \
                else root[:, np.newaxis] * Z
            Zw = Z.multiply(weights[rows][:, np.newaxis]).tocsr() if issparse(Z) \
                else weights[rows][:, np.newaxis] * Z
            yw = weights[rows] * y_c[rows]
        else:
            Zr, Zw, yw = Z, Z, y_c[rows]
        if issparse(Zr):
            sparse_gram(Zr, out=gram)   # blocks of a public size (doc/privacy.md 57.9)
        else:
            gram += Zr.T @ Zr
        z_sum += np.asarray(Zw.sum(axis=0)).ravel()
        zy_sum += Z.T @ yw
    y_mean = float(np.mean(weights * y_c)) if weighted else float(y_c.mean())
    return ClippedData(X, scales, y_c, gram / n, z_sum / n, zy_sum / n, y_mean, True,
                       weights, w_mean)


def gram_data_from_sums(gram_sum, z_sum, zy_sum, y_sum, w_sum, n_samples, weighted):
    """The Gram statistics of :func:`clip_data` from sums reduced elsewhere (``fit`` on dask).

    Each sum is ``n_block`` times a block's :func:`clip_data` mean (the same
    clipping and weighting), added over the blocks; here they become the means
    over all ``n_samples`` records. No rows are kept: the squared loss's Gram
    path only (:func:`mirror_descent_on`).
    """
    n = int(n_samples)
    gram = np.asarray(gram_sum, dtype=np.float64)
    empty = np.zeros(0)
    return ClippedData(np.zeros((0, gram.shape[0])), empty, empty, gram / n,
                       np.asarray(z_sum, dtype=np.float64) / n,
                       np.asarray(zy_sum, dtype=np.float64) / n, float(y_sum) / n, True,
                       None, float(w_sum) / n if weighted else 1.0)


def row_scales(X, data_norm):
    """Per-row clipping factors, computed in float64 whatever the dtype of ``X``.

    Norms of float32 rows computed in float32 can be low by a relative 1e-7,
    and the clipped rows would exceed ``data_norm`` (the sensitivity) by as much;
    chunks are converted instead, so ``X`` is never copied whole. A CSR ``X``
    (canonical) is read through its stored entries only.
    """
    if X.dtype == np.float64:
        return clip_row_scales(X, data_norm)[0]

    def as_float64(chunk):
        if issparse(chunk):
            return sparse.csr_matrix((np.asarray(chunk.data, dtype=np.float64),
                                      chunk.indices, chunk.indptr), shape=chunk.shape)
        return np.asarray(chunk, dtype=np.float64)

    return np.concatenate([
        clip_row_scales(as_float64(X[start:start + CHUNK_ROWS]), data_norm)[0]
        for start in range(0, X.shape[0], CHUNK_ROWS)
    ] or [np.zeros(0)])


def use_gram(loss, n_samples, n_features, n_steps):
    """Squared loss: the Gram matrix when ``T n p > n p^2 + T p^2`` (fewer flops)."""
    if loss != SQUARED or n_features > GRAM_MAX_DIM:
        return False
    p = float(n_features)
    return n_steps * n_samples * p > n_samples * p * p + n_steps * p * p


def use_huber_gram(loss, n_samples, n_features, n_steps, *, huber_threshold, radius,
                   data_norm, y_bound, intercept):
    """Huber: the Gram matrix and candidate rows when :func:`use_gram` would take it for the
    squared loss, the residual bound ``R radius + 2Y`` is below ``HUBER_GRAM_MAX_RATIO h``
    and :func:`huber_gram_rounding` is at most ``HUBER_GRAM_ALLOWANCE / 2``.

    Public values only. The gradient is the same function of the data as on
    the rows (the kernels' :func:`huber_gram_gradient`); its cost differs, and
    its rounding, which the calibration pays for (:func:`calibrate`).
    """
    if loss != HUBER or not use_gram(SQUARED, n_samples, n_features, n_steps):
        return False
    residual = data_norm * radius + (y_bound if intercept else 0.0) + y_bound
    return (residual < HUBER_GRAM_MAX_RATIO * huber_threshold
            and huber_gram_rounding(n_samples, n_features, huber_threshold=huber_threshold,
                                    radius=radius, data_norm=data_norm, y_bound=y_bound,
                                    intercept=intercept) <= 0.5 * HUBER_GRAM_ALLOWANCE)


def huber_gram_rounding(n_samples, n_features, *, huber_threshold, radius, data_norm,
                        y_bound, intercept):
    """``n u kappa rho / h``: a bound on the Gram path's rounding, relative to ``2L/n``.

    ``rho = R radius + 2Y`` (``+ Y`` without intercept) bounds every residual,
    ``u = 2^-53``, and ``kappa = m_G + 2 sqrt(n) + 2 p + 16`` counts the
    roundings of size ``u rho R`` each computed gradient can carry: ``m_G =
    CHUNK_ROWS + ceil(n / CHUNK_ROWS)`` for the Gram sums (a chunk's product,
    then the sum over chunks), ``2 sqrt(n) + 4`` for the correction summed in
    blocks of ``sqrt(n)`` rows, ``2 p`` for the products with the iterate and a
    candidate's residual, and a few for the weights and the divisions. Two
    neighbours' computed gradients then differ by at most ``(1 + n u kappa rho /
    h) 2L/n`` (first order; ``doc/privacy.md`` section 54.3). Public values only.
    """
    n = float(n_samples)
    residual = data_norm * radius + (y_bound if intercept else 0.0) + y_bound
    growth = (CHUNK_ROWS + math.ceil(n / CHUNK_ROWS) + 2.0 * math.sqrt(n)
              + 2.0 * float(n_features) + 16.0)
    return n * UNIT_ROUNDOFF * growth * residual / huber_threshold


def _row_arrays(data):
    """``(X, csr_data, csr_indices, csr_indptr)`` as the kernels take them."""
    if data.sparse:
        return np.zeros((0, 0)), data.X.data, data.X.indices, data.X.indptr
    return data.X, np.zeros(0), np.zeros(0, np.int32), np.zeros(1, np.int32)


def averaged_gradient(data, w, b, loss, huber_threshold):
    """The mean gradient ``(1/n) sum_i f'(r_i) (z_i, 1)`` at ``(w, b)`` (no noise).

    With the Gram statistics the Huber loss takes :func:`use_huber_gram`'s
    path: the squared loss's gradient corrected on the rows with ``|r| > h``.
    """
    from . import _md_kernels as kernels

    w = np.ascontiguousarray(w, dtype=np.float64)
    out = np.empty(w.size + 1)
    weights = np.zeros(0) if data.weights is None else data.weights
    if data.use_gram and loss == HUBER:
        rows = _row_arrays(data)
        cand = np.empty(data.scales.size, dtype=np.int64)
        count = kernels.huber_candidates(*rows, data.sparse, data.scales, data.y, w, float(b),
                                         float(huber_threshold), cand)
        kernels.huber_gram_gradient(data.gram, data.z_mean, data.zy_mean, data.y_mean,
                                    float(data.w_mean), *rows, data.sparse, data.scales,
                                    data.y, weights, cand, count, w, float(b),
                                    _LOSS_CODES[loss], float(huber_threshold), out)
    elif data.use_gram:
        kernels.gram_gradient(data.gram, data.z_mean, data.zy_mean, data.y_mean,
                              float(data.w_mean), w, float(b), out)
    elif data.sparse:
        X = data.X
        kernels.data_gradient_csr(X.data, X.indices, X.indptr, data.scales, data.y, weights,
                                  w, float(b), _LOSS_CODES[loss], float(huber_threshold), out)
    else:
        kernels.data_gradient(data.X, data.scales, data.y, weights, w, float(b),
                              _LOSS_CODES[loss], float(huber_threshold), out)
    return out


# -- the algorithm -------------------------------------------------------------------------

@dataclass(frozen=True)
class Result:
    """``coef`` and ``intercept`` (the average iterate), the calibration, the trace."""

    coef: np.ndarray
    intercept: float
    calibration: Calibration
    iterates: np.ndarray


def mirror_descent(X, y, coef_start, intercept_start, *, loss, huber_threshold, constraint,
                   radius, group_size, data_norm, y_bound, intercept, epsilon, delta, rng,
                   n_steps=None, step_size=None, record_iterates=False, on_steps=None,
                   sample_weight=None, unit_scale=False):
    """Noisy mirror descent on ``(X, y)`` from a public start in the set.

    ``X`` is dense or CSR (sparse kernels, never densified); ``sample_weight``
    (in [0, 1], validated by the caller; ``None``: all 1) multiplies each
    record's loss, which leaves the sensitivity ``2L/n`` unchanged
    (``doc/privacy.md``, "Sparse input and sample weights for mirror descent").

    Returns the average of the ``T`` iterates the ``T`` noisy steps produce
    (post-processing of the noisy gradients). ``n_steps=None`` takes the
    theorem's count; ``step_size=None`` the theorem's step. ``on_steps(done,
    total)``, if given, is called after every block of steps the kernel runs
    at once, with step counts only (progress output must not see the iterate).

    ``unit_scale``: compute in the unit scale (:func:`unit_bounds`): the clipped rows
    divided by ``data_norm``, the radius multiplied by it, so that the calibration,
    the steps and the noise are those of the rows ``x / data_norm`` with bound 1 (the
    intercept's constant feature, 1, is then of the rows' size whatever the units of
    ``X``: ``doc/privacy.md`` section 55). The start and the returned ``coef`` are in
    the units of ``X``; the normalised iterate ``u = w / radius`` is the same in both.
    """
    n_samples, n_features = X.shape
    potential, calibration, u, v = _plan(
        n_samples, n_features, coef_start, intercept_start, loss=loss,
        huber_threshold=huber_threshold, constraint=constraint, radius=radius,
        group_size=group_size, data_norm=data_norm, y_bound=y_bound, intercept=intercept,
        epsilon=epsilon, delta=delta, n_steps=n_steps, step_size=step_size,
        unit_scale=unit_scale)
    gram = use_gram(loss, n_samples, n_features, calibration.n_steps) or calibration.huber_gram
    data = clip_data(X, y, data_norm=data_norm, y_bound=y_bound, use_gram=gram,
                     sample_weight=sample_weight, unit_scale=unit_scale)
    return _descend(data, potential, calibration, u, v, loss=loss,
                    huber_threshold=huber_threshold, radius=radius, y_bound=y_bound,
                    intercept=intercept, rng=rng, record_iterates=record_iterates,
                    on_steps=on_steps, data_norm=data_norm, unit_scale=unit_scale)


def mirror_descent_on(data, n_samples, n_features, coef_start, intercept_start, *, loss,
                      huber_threshold, constraint, radius, group_size, data_norm, y_bound,
                      intercept, epsilon, delta, rng, n_steps=None, step_size=None,
                      record_iterates=False, on_steps=None, unit_scale=False):
    """:func:`mirror_descent` on Gram statistics already clipped and reduced
    (:func:`gram_data_from_sums`); the same calibration, start, steps and average
    (``unit_scale``: statistics of :func:`clip_data` with ``unit_scale=True``)."""
    if loss != SQUARED or not data.use_gram:
        raise ValueError("Reduced Gram statistics serve the squared loss only.")
    potential, calibration, u, v = _plan(
        n_samples, n_features, coef_start, intercept_start, loss=loss,
        huber_threshold=huber_threshold, constraint=constraint, radius=radius,
        group_size=group_size, data_norm=data_norm, y_bound=y_bound, intercept=intercept,
        epsilon=epsilon, delta=delta, n_steps=n_steps, step_size=step_size,
        unit_scale=unit_scale)
    return _descend(data, potential, calibration, u, v, loss=loss,
                    huber_threshold=huber_threshold, radius=radius, y_bound=y_bound,
                    intercept=intercept, rng=rng, record_iterates=record_iterates,
                    on_steps=on_steps, data_norm=data_norm, unit_scale=unit_scale)


def _plan(n_samples, n_features, coef_start, intercept_start, *, loss, huber_threshold,
          constraint, radius, group_size, data_norm, y_bound, intercept, epsilon, delta,
          n_steps, step_size, unit_scale=False):
    """The set, the calibration (public: shapes and parameters) and the start point.

    The calibration reads the bounds of the unit scale with ``unit_scale``; the start
    ``u = coef_start / radius`` is the same in both scales."""
    potential = make_potential(constraint, n_features, group_size)
    step_radius, step_norm = unit_bounds(radius, data_norm) if unit_scale \
        else (radius, data_norm)
    calibration = calibrate(potential, n_samples=n_samples, loss=loss,
                            huber_threshold=huber_threshold, radius=step_radius,
                            data_norm=step_norm, y_bound=y_bound, intercept=intercept,
                            epsilon=epsilon, delta=delta, n_steps=n_steps,
                            step_size=step_size, n_features=n_features)
    u, v = start_point(potential, coef_start, intercept_start, radius, y_bound, intercept)
    return potential, calibration, u, v


def _descend(data, potential, calibration, u, v, *, loss, huber_threshold, radius, y_bound,
             intercept, rng, record_iterates, on_steps, data_norm, unit_scale=False):
    """The noisy steps on the clipped ``data`` and the average of the iterates in the set
    (``coef`` in the units of ``X``: ``radius`` times the average of ``u``)."""
    step_radius, step_norm = unit_bounds(radius, data_norm) if unit_scale \
        else (radius, data_norm)
    u_sum, v_sum, iterates = _run(data, potential, calibration, u, v, loss, huber_threshold,
                                  step_radius, y_bound, rng, record_iterates, on_steps,
                                  data_norm=step_norm)
    coef, b = average_in_set(potential, u_sum, v_sum, calibration.n_steps)
    return Result(radius * coef, float(y_bound * b[0]) if intercept else 0.0, calibration,
                  iterates)


def start_point(potential, coef_start, intercept_start, radius, y_bound, intercept):
    """Normalised start ``(u, v)``; refuses a point outside the set beyond rounding."""
    if coef_start is None:
        u = potential.start()
    else:
        u = np.array(coef_start, dtype=np.float64) / radius
        gauge = potential.set_norm(u)
        if not gauge <= 1.0 + SET_RTOL:
            raise ValueError(
                f"the start (coef_) is outside the {potential.name} constraint set of "
                f"radius {radius:.6g} (gauge {gauge:.6g}), so it was not released "
                "by this estimator; the analysis needs a start inside the set. Call fit to "
                "start afresh."
            )
        u = _into_set(potential, u)
    v = np.zeros(1 if intercept else 0)
    if intercept and intercept_start is not None:
        b = float(intercept_start) / y_bound
        if not abs(b) <= 1.0 + SET_RTOL:
            raise ValueError(
                f"the start intercept {intercept_start!r} is outside [-y_bound, y_bound] = "
                f"[-{y_bound:.6g}, {y_bound:.6g}], so it was not released by this estimator. "
                "Call fit to start afresh."
            )
        v[0] = min(1.0, max(-1.0, b))
    return u, v


def _into_set(potential, u):
    """Undo rounding that left ``u`` a few ulps outside the unit set."""
    if potential.kind == _SIMPLEX:
        u = np.maximum(u, 0.0)
        # Entropic steps never leave a zero coordinate: mix in a trace of the
        # uniform point so the warm start keeps every direction open.
        u = (1.0 - 1e-9) * u / u.sum() + 1e-9 / u.size
        return u / u.sum()
    return sets.into_set(potential.name, u, 1.0, starts=potential.block_starts())


def average_in_set(potential, u_sum, v_sum, n_steps):
    """The average iterate, a convex combination of points of the set (rounding undone)."""
    u = _into_set(potential, u_sum / n_steps) if n_steps else u_sum
    v = np.clip(v_sum / n_steps, -1.0, 1.0)
    return u, v


def _run(data, potential, calibration, u, v, loss, huber_threshold, radius, y_bound, rng,
         record_iterates, on_steps=None, data_norm=None):
    from . import _md_kernels as kernels

    n_steps = calibration.n_steps
    n_dims = u.size + v.size
    u_sum, v_sum = np.zeros(u.size), np.zeros(v.size)
    log_u = np.log(u) if potential.kind == _SIMPLEX else np.zeros(0)
    trace = np.zeros((n_steps if record_iterates else 0, n_dims))
    # The only randomness: Gaussian noise on each step's gradient, released on
    # the noise grid inside the kernel (doc/privacy.md section 14), its bits
    # drawn from ``rng`` once per run.
    state = sampler_state(rng)
    # The kernel runs at most a tenth of the steps per call, verbose or not:
    # progress is reported between calls, and the arithmetic is the same
    # whichever way the steps are split.
    chunk = max(1, -(-n_steps // 10))
    X, *csr = _row_arrays(data)
    weights = np.zeros(0) if data.weights is None else data.weights
    # Huber on the Gram matrix: the candidate rows and their reference point,
    # kept across the kernel calls (found again at the first step).
    huber_gram = bool(data.use_gram and loss == HUBER)
    if huber_gram and data_norm is None:
        raise ValueError("the Huber loss on the Gram matrix needs the row bound data_norm")
    cand = np.empty(data.scales.size if huber_gram else 0, dtype=np.int64)
    ref = np.zeros(u.size + 1)
    count = np.full(1, -1, dtype=np.int64)
    margin = HUBER_GRAM_MARGIN * float(huber_threshold)
    for lo in range(0, n_steps, chunk):
        hi = min(n_steps, lo + chunk)
        kernels.run_steps(
            X, *csr, data.sparse, data.scales, data.y, weights, data.gram, data.z_mean,
            data.zy_mean, data.y_mean, float(data.w_mean), data.use_gram, _LOSS_CODES[loss], float(huber_threshold),
            potential.kind, potential.q, potential.c, potential.power, potential.xi,
            potential.block_starts(), float(radius), float(y_bound),
            calibration.step_size, hi - lo, float(calibration.noise_scale), state,
            u, v, log_u, u_sum, v_sum, trace[lo:hi] if record_iterates else trace,
            huber_gram, float(data_norm or 0.0), margin, cand, ref, count,
        )
        if on_steps is not None:
            on_steps(hi, n_steps)
    return u_sum, v_sum, trace


# -- Euclidean projections (post-processing of objective perturbation) ---------------------

def project(constraint, w, radius, group_size=None):
    """The Euclidean projection of ``w`` onto the set of ``radius`` (:func:`.sets.project`)."""
    return sets.project(constraint, w, radius, group_size)
