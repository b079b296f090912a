"""Objective perturbation for smooth GLM losses (seed 004, Algorithm 2, recalibrated).

Each of ``K`` problems releases an approximate minimiser of

    J_k(theta) = sum_i f(<z_i, theta>; y_ki) + (Lambda / 2) ||theta||^2 + <b_k, theta>,

with ``b_k ~ N(0, sigma^2 I)``, plus Gaussian output noise that covers the gap
between the minimiser the solver certifies and the exact one (approximate
minima perturbation, Iyengar et al. 2019). Rows ``z_i`` are clipped to
``||z_i|| <= R`` by the caller; the losses are

* ``"log_loss"``: ``f(t; y) = ln(1 + exp(-y t))`` with ``y = +-1``,
  ``|f'| <= 1``, ``0 <= f'' <= 1/4``;
* ``"huber"``: ``f(t; y) = huber_h(t - y)``, ``|f'| <= h``, ``0 <= f'' <= 1``
  (with ``h`` the largest residual on a bounded set, it equals the squared loss
  there and extends it with a bounded derivative).

The derivation of the bound these calibrations rest on is in ``doc/privacy.md``,
section 7; the accounting is :mod:`sklearn_dpol.privacy._objective_perturbation`.
"""

import contextlib
import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.sparse import csr_matrix, issparse
from scipy.optimize import brentq
from scipy.special import expit

from ..privacy import gaussian_mu
from ..privacy._objective_perturbation import objective_perturbation_mu
from . import losses
from .losses import HUBER, LOG_LOSS
from ._weights import float64_csr as _float64_csr
from ._weights import sparse_gram
from .noise import gaussian_release, noise_grid, released_scale

# The smooth losses of this solver and their curvature bounds sup f'' (.losses).
CURVATURE = {LOG_LOSS: losses.smoothness(LOG_LOSS), HUBER: losses.smoothness(HUBER)}

# Newton's method stores the Hessian: above this many columns, refuse.
MAX_COLUMNS = 4096
# The solver must certify ||grad J|| <= tol; tol defaults to this fraction of
# max(n L R + B, 1): n L R bounds the data term of the gradient, B the
# objective noise (tolerance_scale, doc/privacy.md 54.16.2).
DEFAULT_RELATIVE_TOL = 1e-10
# Smallest delta objective perturbation calibrates for: below it (subnormal
# territory) the exact profile's arithmetic understates the cost.
MIN_DELTA = 1e-300
# Newton steps without a privacy guarantee to keep (epsilon=inf with Lambda=0);
# otherwise the public bound of newton_step_budget (doc/privacy.md, 54.16).
MAX_NEWTON_STEPS = 200
# Armijo constant of the backtracking line search (sufficient decrease).
ARMIJO = 1e-4
# At most this many conjugate-gradient products per Newton step (wide problems,
# see _newton).
MAX_CG_STEPS = 25
# From this many columns the log loss solves its Newton systems by conjugate
# gradients, preconditioned by the Hessian of about this many rows per column.
WIDE_COLUMNS = 256
# The preconditioner is recomputed only after a solve that took more than
# this many products (it costs about as much as a few).
CG_REFRESH = 3
PRECONDITIONER_ROWS_PER_COLUMN = 16
HALF_PRECONDITIONER_ROWS_PER_COLUMN = 4
# Narrow log-loss problems on many rows take their first Newton steps with the
# Hessian of every stride-th row, about this many rows per column (a relative
# error of a few percent, a fraction of the cost), and exact Newton steps once
# the gradient norm is below EARLY_NEWTON_SWITCH times its first value, or
# after EARLY_MAX_STEPS such steps, or as soon as one of them fails to cut the
# gradient norm to EARLY_MIN_CUT of its value (the sampled rows may carry no
# curvature: then the steps are gradient steps). The subsampled phase never
# resumes, and the exact phase has its own public step budget
# (newton_step_budget), so whether the solve converges cannot hinge on the
# sampled rows (doc/privacy.md, 54.16).
EARLY_ROWS_PER_COLUMN = 1024
EARLY_NEWTON_SWITCH = 1e-2
EARLY_MAX_STEPS = 8
EARLY_MIN_CUT = 0.5
# At most this share of epsilon goes to the Jacobian term; a larger share
# raises the regularisation instead.
JACOBIAN_SHARE = 0.5
# The output noise is calibrated to this fraction of mu: it covers a gap of
# size tol / Lambda, which is tiny, so it costs about OUTPUT_RATIO**2 / 2 of mu^2.
OUTPUT_RATIO = 0.1
# Share of delta charged to the event that the objective noise is longer than
# its public bound (doc/privacy.md, section 7.6): the profile is calibrated to
# (1 - NORM_FAILURE_SHARE) delta and the bound fails with probability
# NORM_FAILURE_SHARE delta / (1 + e^epsilon).
NORM_FAILURE_SHARE = 0.01
# Rows per BLAS product when the gradient is certified; the rounding bound
# below grows with it.
CERTIFY_CHUNK = 4096
UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2
# Margins are certified in extended precision where the platform has it (x86:
# 64-bit mantissa); elsewhere long double is double and this equals UNIT_ROUNDOFF.
LONG_ROUNDOFF = float(np.finfo(np.longdouble).eps) / 2


class SolverDidNotConverge(ValueError):
    """The minimiser could not be certified to the tolerance: nothing is released."""


@dataclass(frozen=True)
class Plan:
    """The calibration of one objective perturbation call (all public)."""

    epsilon: float
    delta: float
    mu: float
    noise_std: float
    regularization: float
    jacobian_epsilon: float
    gradient_sensitivity: float
    derivative_bound: float
    feature_norm: float
    curvature_bound: float
    n_samples: int
    n_problems: int
    # ln of the probability beta that some ||b_k|| exceeds its public bound
    # (-inf without noise); beta (1 + e^epsilon) is charged to delta.
    log_norm_failure: float = -math.inf

    @property
    def norm_failure(self):
        """``beta``: probability that the noise exceeds :func:`noise_norm_bound`."""
        return math.exp(self.log_norm_failure)

    @property
    def output_mu(self):
        return OUTPUT_RATIO * self.mu

    @property
    def description(self):
        if math.isinf(self.epsilon):
            return "none: epsilon=inf solves the regularised problem without noise"
        return (
            f"objective perturbation: N(0, {self.noise_std:.4g}^2) linear term, "
            f"regularisation {self.regularization:.4g} (sum form), Jacobian term "
            f"{self.jacobian_epsilon:.4g}, gradient sensitivity "
            f"{self.gradient_sensitivity:.4g} over {self.n_problems} problem(s), plus "
            f"Gaussian output noise at mu={self.output_mu:.4g} for the certified solver "
            "gap; exact profile of the privacy-loss bound plus the charge for the "
            "noise-norm bound (doc/privacy.md, sections 7.3 and 7.6)"
        )


def plan(epsilon, delta, *, n_samples, feature_norm, derivative_bound, curvature_bound, alpha,
         n_problems=1):
    """Calibrate the noise and the regularisation for ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon, delta : float
        Target guarantee under replace-one neighbours; ``epsilon=inf`` adds no noise.
    n_samples : int
        Number of rows (public).
    feature_norm : float
        ``R``: every row (intercept column included) has L2 norm at most ``R``.
    derivative_bound : float
        ``L``: ``|f'| <= L`` everywhere.
    curvature_bound : float
        ``beta``: ``0 <= f'' <= beta`` everywhere.
    alpha : float
        Requested L2 regularisation in mean form: ``Lambda >= n alpha``.
    n_problems : int, default=1
        ``K`` problems on the same rows (one-vs-rest): one record moves all.

    Returns
    -------
    plan : Plan
    """
    n, K = int(n_samples), int(n_problems)
    check_public(epsilon, delta)
    radius_sq = float(feature_norm) ** 2
    regularization = n * float(alpha)
    sensitivity = 2.0 * float(derivative_bound) * float(feature_norm)
    if math.isinf(epsilon):
        return Plan(math.inf, float(delta), math.inf, 0.0, regularization, 0.0,
                    sensitivity, float(derivative_bound), float(feature_norm),
                    float(curvature_bound), n, K)
    curvature = float(curvature_bound) * radius_sq
    jacobian = K * math.log1p(curvature / regularization) if regularization > 0 else math.inf
    if jacobian > JACOBIAN_SHARE * epsilon:
        # Raise Lambda until K ln(1 + beta R^2 / Lambda) = share * epsilon.
        regularization = curvature / math.expm1(JACOBIAN_SHARE * epsilon / K)
        jacobian = K * math.log1p(curvature / regularization)
    # delta = (profile's delta) + (1 + e^eps) beta, beta the probability that the
    # noise exceeds its public norm bound (section 7.6).
    mu = objective_perturbation_mu(epsilon, (1.0 - NORM_FAILURE_SHARE) * delta, dof=2 * K,
                                   jacobian_epsilon=jacobian, output_ratio=OUTPUT_RATIO)
    noise_std = math.sqrt(K) * sensitivity / mu
    log_norm_failure = math.log(NORM_FAILURE_SHARE * delta) - float(np.logaddexp(0.0, epsilon))
    return Plan(float(epsilon), float(delta), mu, noise_std, regularization, jacobian,
                sensitivity, float(derivative_bound), float(feature_norm),
                float(curvature_bound), n, K, log_norm_failure)


def self_consistent_plan(epsilon, delta, *, n_samples, feature_norm, derivative_bound,
                         curvature_bound, rule, n_problems=1):
    """The plan whose regularisation is ``rule`` of its own noise scale (public values only).

    Solves ``Lambda = max(Lambda_0, rule(sigma(Lambda)))``, with ``sigma(Lambda)`` the
    noise :func:`plan` calibrates at regularisation ``Lambda`` (sum form) and
    ``Lambda_0`` the smallest regularisation the curvature condition admits.
    ``sigma`` does not increase with ``Lambda`` (a larger ``Lambda`` lowers the
    Jacobian term and leaves more of epsilon to the noise) and ``rule`` must not
    decrease with ``sigma``, so ``Lambda - rule(sigma(Lambda))`` increases and the
    root is unique; it lies between ``Lambda_0`` and ``rule(sigma(Lambda_0))``. A
    rule that sets the ridge from the noise must take the noise at the ridge it
    picks: at the floor it is about twice as large (``doc/privacy.md``, "objective
    perturbation's alpha at its own noise"). ``epsilon=inf``: the plan at
    ``Lambda = 0`` (no noise).
    """
    def at(regularization):
        return plan(epsilon, delta, n_samples=n_samples, feature_norm=feature_norm,
                    derivative_bound=derivative_bound, curvature_bound=curvature_bound,
                    alpha=regularization / n_samples, n_problems=n_problems)

    floor = at(0.0)
    if math.isinf(epsilon) or rule(floor.noise_std) <= floor.regularization:
        return floor
    def excess(log_lam):
        return math.exp(log_lam) - rule(at(math.exp(log_lam)).noise_std)

    low, high = math.log(floor.regularization), math.log(rule(floor.noise_std))
    if excess(high) <= 0.0:
        # Only within the calibration's rounding of the floor (sigma(high) <= sigma_0).
        return at(math.exp(high))
    # Brent's method on log Lambda (deterministic; a relative 1e-12).
    return at(math.exp(brentq(excess, low, high, xtol=1e-12, rtol=1e-12)))


def worst_case_ridge(noise_std, n_columns, extent):
    """``Lambda_w = sqrt(k) sigma / T``: the ridge balancing noise against bias on the worst spectrum.

    For one eigendirection of the mean-form Hessian (eigenvalue ``lambda``,
    coefficient ``theta_j``), the minimiser of the perturbed objective at
    ``alpha = Lambda / n`` is off by ``alpha theta_j + s`` over ``lambda + alpha``
    (``s = sigma / n``), costing ``lambda (alpha^2 theta_j^2 + s^2) / (2 (lambda +
    alpha)^2)`` of excess risk to second order. ``lambda / (lambda + alpha)^2 <=
    1 / (4 alpha)`` whatever ``lambda`` (equality at ``lambda = alpha``), so the
    sum over the ``k`` columns is at most ``alpha T^2 / 8 + k s^2 / (8 alpha)``
    when ``||theta*|| <= T``; it is smallest at ``n alpha = sqrt(k) sigma / T``.
    The bound holds for any curvature, so it serves the squared loss (mirror
    descent) and the log loss (IGD) alike (``doc/privacy.md``, sections 45 and
    "IGD's objective perturbation: alpha at its own noise"). Public values only.
    """
    return math.sqrt(n_columns) * noise_std / extent


def noise_norm_bound(plan, n_columns):
    """Public bound ``B`` with ``P(max_k ||b_k|| > B) <= plan.norm_failure``.

    ``||b_k|| / sigma`` is a 1-Lipschitz function of a standard Gaussian vector
    with mean at most ``sqrt(p)``, so ``P(||b_k|| > sigma (sqrt(p) + t)) <=
    exp(-t^2 / 2)`` (Gaussian concentration); ``t = sqrt(2 ln(K / beta))`` and a
    union bound over the ``K`` problems give the claim. Depends on public values
    only (doc/privacy.md, section 7.6).
    """
    if plan.noise_std == 0.0:
        return 0.0
    t = math.sqrt(2.0 * (math.log(plan.n_problems) - plan.log_norm_failure))
    # The noise is drawn on the grid (section 14): a continuous Gaussian of
    # scale sigma' = gamma S >= sigma, rounded by at most gamma / 2 per entry.
    gamma, _ = noise_grid(plan.noise_std)
    # A relative 1e-12 above the formula covers its own rounding.
    return (released_scale(plan.noise_std) * (math.sqrt(n_columns) + t)
            + math.sqrt(n_columns) * gamma / 2.0) * (1.0 + 1e-12)


def _draw_objective_noise(plan, n_problems, n_columns, rng):
    """``b_k ~ N(0, sigma^2 I)``, shortened to the public bound on the rare event it is exceeded.

    The event has probability at most ``beta`` and depends on the noise only, and
    the shortening is data-independent; the mechanism differs from the analysed
    one only on that event, which is charged ``(1 + e^eps) beta`` of delta.
    """
    if plan.noise_std == 0.0:
        return np.zeros((n_problems, n_columns))
    # Exact noise on the grid: b = Q(b_c), b_c ~ N(0, sigma'^2 I) with sigma' >= sigma,
    # |b - b_c| <= gamma / 2 per entry (doc/privacy.md sections 7.8 and 14).
    noise = gaussian_release(np.zeros((n_problems, n_columns)), plan.noise_std, rng)
    # Aim a little below the bound, so the rounded norms stay within it.
    limit = noise_norm_bound(plan, n_columns) * (1.0 - 1e-12)
    norms = np.linalg.norm(noise, axis=1)
    long = norms > limit
    if np.any(long):
        noise[long] *= (limit / norms[long])[:, np.newaxis]
    return noise


def solve(Z, targets, *, loss, plan, rng, threshold=1.0, tol=None, sample_weight=None):
    """Release the perturbed minimisers of the ``K`` problems.

    Parameters
    ----------
    Z : ClippedDesign or ndarray or sparse matrix of shape (n_samples, n_columns)
        Rows clipped to ``plan.feature_norm`` (intercept column included):
        preferably :func:`clipped_design`, which does not copy ``X``; a
        C-contiguous float64 array (or a canonical float64 CSR matrix) is read
        in place.
    targets : ndarray of shape (n_problems, n_samples)
        ``+-1`` labels for ``"log_loss"``, real targets for ``"huber"``.
    loss : {"log_loss", "huber"}
    plan : Plan
    rng : numpy.random.Generator
    threshold : float, default=1.0
        Huber threshold ``h`` (``plan.derivative_bound`` must be ``>= h``).
    tol : float or None, default=None
        Relative tolerance: the solver certifies ``||grad J_k|| <= tol max(n L R
        + B, 1) / sqrt(K)`` (:func:`tolerance_scale`). ``None`` takes ``1e-10``. Only utility depends on it: the
        output noise is scaled with it.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Each record's weight in ``[0, 1]`` (checked by the caller, before the
        data is read): record ``i``'s loss is ``w_i f(z_i . theta; y_i)``,
        whose derivative and curvature bounds are the unweighted ones, so the
        plan is unchanged (``doc/privacy.md``, "Sample weights in objective
        perturbation"). ``None``: every record weighs 1.

    Returns
    -------
    theta : ndarray of shape (n_problems, n_columns)

    Raises
    ------
    SolverDidNotConverge
        When a minimiser cannot be certified; nothing is released.
    """
    if issparse(Z):
        Z = SparseClippedDesign(_float64_csr(Z), None, None)
    elif not isinstance(Z, ClippedDesign):
        Z = ClippedDesign(np.ascontiguousarray(Z, dtype=np.float64), None, None)
    targets = np.atleast_2d(np.asarray(targets, dtype=np.float64))
    n_problems, n_columns = targets.shape[0], Z.shape[1]
    check_public(plan.epsilon, plan.delta, n_columns)
    weighted = sample_weight is not None
    if weighted:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (Z.shape[0],) or not np.all(
                (sample_weight >= 0.0) & (sample_weight <= 1.0)):
            # The callers check the weights before reading the data; this is their contract.
            raise ValueError(f"sample_weight must be {Z.shape[0]} weights in [0, 1].")
    loss_fns = _LossFunctions(loss, float(threshold), weighted)
    problem_tol = solve_tolerance(plan, n_problems, tol, n_columns=n_columns)
    # Lambda from public values only, then the objective noise, both before
    # touching the data (section 7.6).
    regularization = certifiable_regularization(plan, Z.shape, problem_tol, weighted)
    budget = newton_step_budget(plan, Z.shape, regularization, problem_tol, loss)
    linear_terms = _draw_objective_noise(plan, n_problems, n_columns, rng)
    solutions = np.empty((n_problems, n_columns))
    # The rows' norm bound (the contract of Z), a hair above for the rounding of R.
    row_norm = plan.feature_norm * (1.0 + 1e-12)
    with _single_threaded_blas():
        for k in range(n_problems):
            y = _weighted_targets(targets[k], sample_weight) if weighted else targets[k]
            solutions[k] = _newton(Z, y, linear_terms[k], regularization, loss_fns,
                                   problem_tol, row_norm, budget)
    return gaussian_release(solutions, output_noise_std(plan, n_columns, tol, regularization),
                            rng)


def check_public(epsilon, delta, n_columns=0):
    """Refuse, from public values, a ``delta`` below ``MIN_DELTA`` (finite ``epsilon``)
    or more than ``MAX_COLUMNS`` columns.

    Callers run it before the data is read (the refusal is free); :func:`plan`
    and :func:`solve` run it again.
    """
    if not math.isinf(epsilon) and not float(delta) >= MIN_DELTA:
        raise ValueError(
            f"Objective perturbation needs delta >= {MIN_DELTA:g} (below, floating-point "
            f"arithmetic cannot calibrate it exactly); got delta={float(delta):.3g}."
        )
    if n_columns > MAX_COLUMNS:
        raise ValueError(
            f"Objective perturbation solves by Newton's method and supports at most "
            f"{MAX_COLUMNS} columns; got {n_columns}. Use the iterative solver."
        )


def tolerance_scale(plan, n_columns):
    """``max(n L R + B, 1)``: the size the relative tolerance is taken of (public values only).

    ``n L R`` bounds the data term of the gradient and ``B`` (:func:`noise_norm_bound`)
    the objective noise; the rounding allowance of the certificate grows with
    their sum, so a tolerance relative to it stays certifiable at any epsilon
    (doc/privacy.md, 54.16.2).
    """
    return max(plan.n_samples * plan.derivative_bound * plan.feature_norm
               + noise_norm_bound(plan, n_columns), 1.0)


def solve_tolerance(plan, n_problems=1, tol=None, *, n_columns):
    """The gradient-norm tolerance of each of :func:`solve`'s problems (public values only)."""
    relative_tol = DEFAULT_RELATIVE_TOL if tol is None else float(tol)
    return relative_tol * tolerance_scale(plan, n_columns) / math.sqrt(n_problems)


def solve_regularization(plan, shape, *, tol=None, n_problems=1, weighted=False):
    """The ``Lambda`` :func:`solve` uses (raises its ``ValueError`` for a ``tol`` it cannot certify).

    From public values only: callers that know the plan before reading the data
    call it then, so that the refusal (of public parameters) comes before the
    data is marked read, and report ``Lambda / n`` as the ridge used.
    """
    check_public(plan.epsilon, plan.delta, shape[1])
    problem_tol = solve_tolerance(plan, n_problems, tol, n_columns=shape[1])
    return certifiable_regularization(plan, shape, problem_tol, weighted)



def certifiable_regularization(plan, shape, problem_tol, weighted=False):
    """The smallest ``Lambda >= plan.regularization`` whose solve can always be certified.

    Decided from public values only (the plan and the shape), before the noise
    is drawn and the data is read, so that neither whether the solve succeeds
    nor ``Lambda`` depends on the data or on the noise. At the minimiser
    ``||theta*|| <= s / Lambda`` with ``s = n L R + B``, where ``B`` is the public
    bound :func:`noise_norm_bound` on ``||b_k||`` (the noise is shortened to it
    on the event, of probability at most ``beta``, that it is longer; that event
    is charged to delta, section 7.6); the data term of the gradient has norm at
    most ``n L R``. Allowing twice that norm, the rounding allowance of
    :func:`_certified_gradient_norm` with long-double margins is at most
    ``factor (s + 2 s) + 2 beta n R^2 (u + (p + 2) u_ld) 2 s / Lambda``, which
    must stay below half the tolerance. A larger ``Lambda`` only lowers the
    Jacobian term of the plan, so the guarantee is unchanged. ``weighted``
    (public: whether weights were passed) counts the weights' rounding.
    """
    n, p = shape
    s = plan.n_samples * plan.derivative_bound * plan.feature_norm \
        + noise_norm_bound(plan, p)
    factor = _summation_factor(n, p, weighted)
    if 3.0 * factor * s > problem_tol / 4.0:
        raise ValueError(
            f"The tolerance {problem_tol:.3g} is below what float64 rounding lets the "
            "solver certify for this size of problem; increase tol."
        )
    margin_unit = UNIT_ROUNDOFF + (p + 2) * LONG_ROUNDOFF
    curvature = plan.curvature_bound * plan.feature_norm**2
    drift = 4.0 * curvature * plan.n_samples * margin_unit * s
    return max(plan.regularization, drift / (problem_tol / 4.0),
               factorisable_regularization(plan, shape, weighted))


def factorisable_regularization(plan, shape, weighted=False):
    """A ``Lambda`` at which every Newton system :func:`_newton` factorises (public values).

    Every matrix factorised is ``G + Lambda I`` with ``G = stride sum w_i f''_i z_i
    z_i^T`` over every ``stride``-th row, ``0 <= G <= T I``, ``T = 2 beta R^2 n``;
    it is formed with an error ``||E||_2 <= F T`` (``F`` :func:`_summation_factor`,
    which bounds the chunked sums' relative error per term with a factor 2 to
    spare). Cholesky succeeds when the diagonally scaled matrix has smallest
    eigenvalue above ``g / (1 - g)``, ``g = p gamma_{p+1}``, ``gamma_k = k u / (1 -
    k u)`` (Demmel's condition; Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., Theorem 10.7); it is at least ``(Lambda (1 - u) - F T) /
    (T (1 + F) + Lambda (1 + u))``, which is at least ``2 g`` (above ``g / (1 - g)``
    for ``g < 1/2``) once ``Lambda >= (F + 2 g (1 + F)) T / (1 - u - 2 g (1 + u))``;
    twice that is returned. Far below the Jacobian floor unless epsilon is very
    large (doc/privacy.md 54.16.1).
    """
    n, p = shape
    u = UNIT_ROUNDOFF
    gamma = (p + 1) * u / (1.0 - (p + 1) * u)
    g = p * gamma
    top = 2.0 * plan.curvature_bound * plan.feature_norm**2 * n
    factor = _summation_factor(n, p, weighted)
    return 2.0 * (factor + 2.0 * g * (1.0 + factor)) * top / (1.0 - u - 2.0 * g * (1.0 + u))


def newton_step_budget(plan, shape, regularization, problem_tol, loss):
    """Public bound on the exact-phase Newton steps of :func:`_newton` (doc/privacy.md, 54.16).

    ``J`` is ``Lambda``-strongly convex with ``Lambda I <= H <= M I``, ``M =
    beta R^2 n + Lambda``, ``kappa = M / Lambda``. Along a direction ``s``
    with ``-g.s = s^T H s`` (the exact Newton step; any conjugate-gradient
    iterate from zero) the Armijo backtracking of :func:`_line_search` accepts
    a step ``>= min(1, (1 - c) / kappa)``, which lowers ``J`` by at least
    ``c (1 - c) / kappa * s^T H s``; ``s^T H s >= ||g||^2 / (M kappa_P)`` with
    ``kappa_P`` the condition number of the matrix the direction is solved with
    (1 for the exact Hessian; the preconditioner's ``(beta R^2 (n + stride) +
    Lambda) / Lambda`` for conjugate gradients), and ``||g||^2 >= 2 Lambda (J -
    J*)``: ``J - J*`` shrinks by ``1 - q`` per step, ``q = 2 c (1 - c) /
    (kappa^2 kappa_P)``. The phase starts with ``J <= J(0)``, ``J(0) - J* <=
    s^2 / (2 Lambda)`` (``s = n L R + B``), and ends once ``||g|| <= tol / 16``
    (then the certificate, whose allowance is below half the tolerance,
    succeeds), at the latest when ``2 M (J - J*) <= tol^2 / 256``. A factor of
    2 covers the rounding of ``J``. Worst-case, hence large; the solve stops at
    its certificate, in a few steps in practice. Public values only: whether the
    solve converges cannot depend on a record. ``epsilon=inf`` at ``Lambda=0``:
    ``MAX_NEWTON_STEPS``.
    """
    n, p = shape
    if not regularization > 0.0:
        return MAX_NEWTON_STEPS
    radius = plan.feature_norm * (1.0 + 1e-12)
    top = plan.curvature_bound * radius**2
    kappa = (top * n + regularization) / regularization
    kappa_p = 1.0
    if loss == LOG_LOSS and p >= WIDE_COLUMNS:
        stride = max(1, n // (PRECONDITIONER_ROWS_PER_COLUMN * p))
        kappa_p = (top * (n + stride) + regularization) / regularization
    s = n * plan.derivative_bound * plan.feature_norm + noise_norm_bound(plan, p)
    rate = 2.0 * ARMIJO * (1.0 - ARMIJO) / (kappa * kappa * kappa_p)
    ratio = 2.0 * 512.0 * kappa * s * s / (problem_tol * problem_tol)
    steps = math.log(max(ratio, math.e)) / rate
    return math.ceil(steps * (1.0 + 1e-9)) + 1 if math.isfinite(steps) else math.inf


def output_noise_std(plan, n_columns, tol=None, regularization=None):
    """Standard deviation of the output noise that covers the certified gap.

    ``||theta_hat - theta*|| <= ||grad J|| / Lambda`` per problem, so the
    stacked gap is at most ``tol max(n L R + B, 1) / Lambda``
    (:func:`tolerance_scale`); replace-one moves it by at most twice that, a
    Gaussian mechanism calibrated to ``plan.output_mu``. ``regularization`` is
    the ``Lambda`` the solve used (``plan``'s by default).
    """
    if math.isinf(plan.mu):
        return 0.0
    relative_tol = DEFAULT_RELATIVE_TOL if tol is None else float(tol)
    scale = tolerance_scale(plan, n_columns)
    lam = plan.regularization if regularization is None else regularization
    # The objective noise is the grid value Q(b_c) of a continuous b_c, within
    # gamma / 2 per entry: the minimiser moves by at most that over Lambda
    # (strong convexity), stacked over the K problems (section 7.8).
    rounding = 0.0
    if plan.noise_std > 0.0:
        gamma, _ = noise_grid(plan.noise_std)
        rounding = math.sqrt(plan.n_problems * n_columns) * gamma / 2.0
    return 2.0 * (relative_tol * scale + rounding) / lam / plan.output_mu


def gaussian_equivalent_mu(epsilon, delta):
    """``mu*`` of a Gaussian mechanism at the same target, for comparisons."""
    return gaussian_mu(epsilon, delta)


def clipped_design(X, max_norm, intercept_value=None):
    """The clipped design the solver reads: row ``i`` is ``(s_i X[i], c)``.

    ``s_i`` clips row ``i`` to L2 norm ``max_norm`` (a few ulps below, so the
    rows provably respect it) and ``c = intercept_value`` is a constant last
    column (none when ``None``). When ``X`` is C-contiguous float64 and no row
    is far above the bound (the usual case), ``X`` is **not copied**: the
    solver applies ``s_i`` and the intercept on the fly in every product.
    Otherwise (float32 or non-contiguous input, exactly converted; or a row
    whose clipping factor is below ``2^-64``, up to norms of 1.8e308) one copy
    is made in which only the rows far above the bound are replaced by their
    clipped values (:func:`_clipped_copy`: divided by their largest entry, then
    scaled to ``max_norm``, so no factor underflows, no product overflows and
    nothing is subtracted), with factor 1; every other row keeps its values and
    factor, so it enters every product exactly as on the no-copy path: each
    ``z_i`` is a function of record ``i`` alone, whichever path the other
    records select (doc/privacy.md, 54.16.5). A public bound above
    ``_FAST_MAX_NORM`` clips every row into the copy.

    A SciPy sparse ``X`` (CSR; CSC and COO are converted, duplicates summed)
    gives a :class:`SparseClippedDesign` built the same way from the stored
    entries only: never densified; where a copy is needed, it is of the
    stored values, and only the far rows' values change
    (:func:`_sparse_clipped_design`).

    Returns
    -------
    design : ClippedDesign or SparseClippedDesign
    """
    if issparse(X):
        return _sparse_clipped_design(X, max_norm, intercept_value)
    n, d = X.shape
    max_norm = float(max_norm)
    intercept = None if intercept_value is None else float(intercept_value)
    if max_norm > _FAST_MAX_NORM or n == 0:
        return ClippedDesign(_clipped_copy(X, max_norm, intercept), None, None)
    copied = not (X.dtype == np.float64 and X.flags.c_contiguous)
    if copied:
        # float32 (or strided) input: float64 holds every value exactly.
        X = np.ascontiguousarray(X, dtype=np.float64)
    scale = _row_scales(X, max_norm)
    far = scale < FAST_SCALE
    if np.any(far):
        if not copied:
            X = X.copy()
        rows = np.flatnonzero(far)
        X[rows] = _clipped_copy(X[rows], max_norm, None)
        scale[rows] = 1.0
    return ClippedDesign(X, None if bool(np.all(scale == 1.0)) else scale, intercept)


def _row_scales(X, max_norm):
    """Clipping factors: ``s_i ||X[i]|| <= max_norm`` in exact arithmetic.

    Norms of ordinary rows (squared norm in ``(1e-280, 1e280)``) are computed
    by numpy on chunks (relative error at most ``(d + 2) u`` in any order) and
    aimed ``4 (d + 2)`` ulps below the bound, which covers it; the other rows
    (zero, tiny or huge) go through the overflow-safe kernel of ``_clip``. A
    canonical CSR ``X``: the squared norms from the stored entries (at most ``d``
    terms, so the same error bound and the same target as a dense row), the
    unusual rows through ``_clip``'s CSR kernel.
    """
    n, d = X.shape
    sparse = issparse(X)
    target = max_norm * (1.0 - 4.0 * (d + 2) * np.finfo(np.float64).eps)
    scale = np.ones(n)
    ones = np.ones(d)
    unusual = []
    for start in range(0, n, DESIGN_CHUNK):
        if sparse:
            with np.errstate(over="ignore", under="ignore"):
                squares = _csr_rows(X, start, start + DESIGN_CHUNK, np.square) @ ones
        else:
            block = X[start:start + DESIGN_CHUNK]
            squares = np.einsum("ij,ij->i", block, block)
        ordinary = (squares > 1e-280) & (squares < 1e280)
        norms = np.sqrt(np.where(ordinary, squares, 1.0))
        scale[start:start + squares.shape[0]] = np.where(norms <= target, 1.0, target / norms)
        if not ordinary.all():
            unusual.append(start + np.flatnonzero(~ordinary))
    if unusual:
        from ._clip import clip_row_scales

        rows = np.concatenate(unusual)
        scale[rows] = clip_row_scales(X[rows] if sparse else np.ascontiguousarray(X[rows]),
                                      max_norm)[0]
    return scale


def _clipped_copy(X, max_norm, intercept):
    from ._clip import clip_row_scales

    n, d = X.shape
    Z = np.empty((n, d + (intercept is not None)))
    shrink = 1.0 - 4.0 * (d + 2) * np.finfo(np.float64).eps
    for start in range(0, n, DESIGN_CHUNK):
        block = np.ascontiguousarray(X[start:start + DESIGN_CHUNK], dtype=np.float64)
        scale, _ = clip_row_scales(block, max_norm)
        out = Z[start:start + block.shape[0], :d]
        np.multiply(block, scale[:, np.newaxis], out=out)
        tiny = scale < TINY_SCALE
        if np.any(tiny):
            rows = block[tiny]
            largest = np.max(np.abs(rows), axis=1)
            unit = rows / largest[:, np.newaxis]  # entries in [-1, 1], one at +-1
            root = np.sqrt(np.einsum("ij,ij->i", unit, unit))  # in [1, sqrt(d)]
            out[tiny] = unit * ((max_norm * shrink) / root)[:, np.newaxis]
    if intercept is not None:
        Z[:, d] = intercept
    return Z


class ClippedDesign:
    """Rows ``z_i = (s_i x_i, c)``: the user's ``X``, per-row factors and an intercept value.

    ``scale=None`` means every factor is 1, ``intercept=None`` no intercept
    column. Products are BLAS calls on ``X`` (or on row chunks of it) with the
    factors and the intercept applied to the vectors, never to ``X``.
    """

    def __init__(self, X, scale, intercept):
        self.X, self.scale, self.intercept = X, scale, intercept
        self.n_rows, self.n_features = X.shape
        self.shape = (self.n_rows, self.n_features + (intercept is not None))

    def _scaled(self, vector, start=0, stop=None):
        if self.scale is None:
            return vector
        return vector * self.scale[start:stop]

    def _rows(self, start=0, stop=None, values=None, X=None):
        """Rows ``[start, stop)`` of ``X`` (a view); ``values`` maps them (a new array)."""
        block = (self.X if X is None else X)[start:stop]
        return block if values is None else values(block)

    def matvec(self, theta):
        """``Z theta`` in float64: error at most ``2 u |t_i| + (p + 2) u |z_i|.|theta|``."""
        d = self.n_features
        margins = self.X @ theta[:d]
        if self.scale is not None:
            margins *= self.scale
        if self.intercept is not None:
            margins += self.intercept * theta[d]
        return margins

    def rmatvec(self, vector, start=0, stop=None):
        """``Z[start:stop]^T vector`` (one BLAS product on the chunk)."""
        out = np.empty(self.shape[1])
        out[:self.n_features] = self._rows(start, stop).T @ self._scaled(vector, start, stop)
        if self.intercept is not None:
            out[self.n_features] = self.intercept * float(np.sum(vector))
        return out

    def curvature_product(self, vector, curvature):
        """``(Z^T (curvature * Z v), Z v)`` in one pass over ``X``.

        Row chunks small enough to stay in cache are multiplied twice in a row,
        so ``X`` is read from memory once instead of twice.
        """
        d = self.n_features
        rows = max(64, CACHE_CHUNK_BYTES // (8 * max(d, 1)))
        along = np.empty(self.n_rows)
        product = np.zeros(self.shape[1])
        head = vector[:d]
        offset = 0.0 if self.intercept is None else self.intercept * vector[d]
        for start in range(0, self.n_rows, rows):
            stop = start + rows
            block = self.X[start:stop]
            part = block @ head
            if self.scale is not None:
                part *= self.scale[start:stop]
            part += offset
            along[start:stop] = part
            weighted = part * curvature[start:stop]
            if self.scale is not None:
                weighted *= self.scale[start:stop]
            product[:d] += block.T @ weighted
        if self.intercept is not None:
            product[d] = self.intercept * float(curvature @ along)
        return product, along

    def abs_products(self, start, stop, abs_theta, columns_from):
        """``r = |Z_c| |theta|`` and ``|Z_c|^T columns_from(r)`` on one chunk (``|X_c|`` once)."""
        d = self.n_features
        abs_block = self._rows(start, stop, np.abs)
        rows = abs_block @ abs_theta[:d]
        if self.scale is not None:
            rows *= self.scale[start:stop]
        if self.intercept is not None:
            rows += abs(self.intercept) * abs_theta[d]
        columns = columns_from(rows)
        scaled = columns if self.scale is None else columns * self.scale[start:stop, np.newaxis]
        out = np.empty((self.shape[1], columns.shape[1]))
        out[:d] = abs_block.T @ scaled
        if self.intercept is not None:
            out[d] = abs(self.intercept) * np.sum(columns, axis=0)
        return out

    def long_margins(self, theta, chunk):
        """``Z theta`` accumulated in long double, rounded once to float64 (the rows are
        converted to long double first: NumPy's and SciPy's products sum in the dtype
        of their operands)."""
        d = self.n_features
        theta_long = theta[:d].astype(np.longdouble)
        parts = []
        for start in range(0, self.n_rows, chunk):
            stop = start + chunk
            part = self._rows(start, stop, _as_long) @ theta_long
            if self.scale is not None:
                part *= self.scale[start:stop].astype(np.longdouble)
            if self.intercept is not None:
                part += np.longdouble(self.intercept) * np.longdouble(theta[d])
            parts.append(part.astype(np.float64))
        return np.concatenate(parts) if parts else np.zeros(0)

    def gram(self, weights, chunk, stride=1, unit_weights=False):
        """``stride sum_{i = 0 mod stride} w_i z_i z_i^T`` for ``w_i >= 0`` (rank-k updates).

        ``weights`` holds the weights of the rows used only (rows ``0, stride,
        2 stride, ...``).
        """
        d, p = self.n_features, self.shape[1]
        X, scale = self.X, self.scale
        if stride > 1:
            X = X[::stride]
            scale = None if scale is None else scale[::stride]
        gram = np.zeros((p, p))
        for start in range(0, X.shape[0], chunk):
            stop = start + chunk
            block, w = X[start:stop], weights[start:stop]
            if unit_weights and scale is None and bool(np.all(w == 1.0)):
                gram[:d, :d] += block.T @ block
                if self.intercept is not None:
                    cross = self.intercept * (block.T @ w)
            else:
                root = np.sqrt(w)
                weighted = block * (root if scale is None
                                    else root * scale[start:stop])[:, np.newaxis]
                gram[:d, :d] += weighted.T @ weighted
                if self.intercept is not None:
                    # sum_i w_i s_i x_i = W^T sqrt(w), W = sqrt(w) s X (contiguous)
                    cross = self.intercept * (weighted.T @ root)
            if self.intercept is not None:
                self._add_intercept_terms(gram, cross, w)
        if stride > 1:
            gram *= stride
        return gram

    def _add_intercept_terms(self, gram, cross, w):
        """A chunk's intercept row and column: ``c sum_i w_i s_i x_i`` and ``c^2 sum_i w_i``."""
        d = self.n_features
        gram[:d, d] += cross
        gram[d, :d] += cross
        gram[d, d] += self.intercept**2 * float(np.sum(w))


class SparseClippedDesign(ClippedDesign):
    """:class:`ClippedDesign` on a canonical float64 CSR ``X``: only its stored entries are read.

    The same rows ``z_i = (s_i x_i, c)`` and the same operations, each a SciPy
    sparse product (its compiled kernels accumulate in the dtype of the data:
    float64, or long double for :meth:`long_margins`) on the same row chunks
    as the dense design, with the factors and the intercept applied to the
    vectors. A row's sums have at most as many terms as a dense row's (its
    stored entries, at most ``d``), so every rounding bound of the dense
    design holds term for term (``doc/privacy.md``, "Sparse input for
    objective perturbation"). Row chunks are views of ``X``'s arrays (no copy
    of ``X``); the Gram matrix is dense, ``(p, p)``, as for dense ``X``.
    """

    def _rows(self, start=0, stop=None, values=None, X=None):
        """Rows ``[start, stop)`` as a CSR view; ``values`` maps their stored values."""
        return _csr_rows(self.X if X is None else X, start, stop, values)

    def curvature_product(self, vector, curvature):
        """``(Z^T (curvature * Z v), Z v)``: two sparse products (conjugate gradients only,
        never certified)."""
        d = self.n_features
        along = self.X @ vector[:d]
        if self.scale is not None:
            along *= self.scale
        if self.intercept is not None:
            along += self.intercept * vector[d]
        weighted = along * curvature
        if self.scale is not None:
            weighted *= self.scale
        product = np.empty(self.shape[1])
        product[:d] = self.X.T @ weighted
        if self.intercept is not None:
            product[d] = self.intercept * float(curvature @ along)
        return product, along

    def gram(self, weights, chunk, stride=1, unit_weights=False):
        """``stride sum_{i = 0 mod stride} w_i z_i z_i^T`` for ``w_i >= 0``: ``W^T W`` per
        chunk, ``W = sqrt(w) s X_c`` (the chunk's stored entries), added to a dense matrix.

        ``weights`` holds the weights of the rows used only (rows ``0, stride,
        2 stride, ...``). ``unit_weights`` is accepted for the dense design's
        interface (a factor of 1 multiplies exactly).
        """
        d, p = self.n_features, self.shape[1]
        X, scale = self.X, self.scale
        if stride > 1:
            X = X[::stride]
            scale = None if scale is None else scale[::stride]
        gram = np.zeros((p, p))
        for start in range(0, X.shape[0], chunk):
            stop = min(start + chunk, X.shape[0])
            w = weights[start:stop]
            root = np.sqrt(w)
            factor = root if scale is None else root * scale[start:stop]
            counts = np.diff(X.indptr[start:stop + 1])
            per_entry = np.repeat(factor, counts)
            weighted = self._rows(start, stop, lambda v: v * per_entry, X)
            # The chunk's sums added into the dense matrix, the product taken in blocks
            # of a public size (_weights.sparse_gram): a whole chunk's product holds one
            # entry per pair of columns stored together, which one dense record raises
            # to d^2, so its memory (and a MemoryError under a cap) followed one record
            # (review 122; doc/privacy.md 57.7). Each entry is the same sum in the same
            # order, and an entry the product does not store adds an exact 0.
            sparse_gram(weighted, out=gram[:d, :d])
            if self.intercept is not None:
                # sum_i w_i s_i x_i = W^T sqrt(w), as for dense X
                self._add_intercept_terms(gram, self.intercept * (weighted.T @ root), w)
        if stride > 1:
            gram *= stride
        return gram


def _as_long(values):
    return values.astype(np.longdouble)


def _csr_rows(X, start=0, stop=None, values=None):
    """Rows ``[start, stop)`` of the CSR ``X`` as a CSR matrix sharing its arrays
    (``values``, if given, maps the stored values: a new array of the rows' entries)."""
    n = X.shape[0]
    stop = n if stop is None else min(stop, n)
    lo, hi = int(X.indptr[start]), int(X.indptr[stop])
    data = X.data[lo:hi]
    if values is not None:
        data = values(data)
    return csr_matrix((data, X.indices[lo:hi], X.indptr[start:stop + 1] - lo),
                      shape=(stop - start, X.shape[1]), copy=False)


def _sparse_clipped_design(X, max_norm, intercept_value):
    """:func:`clipped_design` for sparse ``X``: the stored entries only, never densified.

    The factors are :func:`_row_scales`' from each row's stored entries (a
    zero entry adds nothing to a norm). A row whose factor is below
    ``FAST_SCALE`` (and every row, for a public bound above ``_FAST_MAX_NORM``)
    has its stored values replaced, in a copy of ``X.data`` that shares the
    index arrays, by its clipped values with factor 1 (:func:`_clip_stored_rows`,
    :func:`_clipped_copy`'s arithmetic): each ``z_i`` is a function of record
    ``i`` alone, whichever rows the others are.
    """
    X = _float64_csr(X)
    n = X.shape[0]
    max_norm = float(max_norm)
    intercept = None if intercept_value is None else float(intercept_value)
    if max_norm > _FAST_MAX_NORM:
        scale = np.ones(n)
        far = np.ones(n, dtype=bool)
    else:
        scale = _row_scales(X, max_norm)
        far = scale < FAST_SCALE
    if np.any(far):
        rows = np.flatnonzero(far)
        data = X.data.copy()
        _clip_stored_rows(X, rows, max_norm, data)
        X = csr_matrix((data, X.indices, X.indptr), shape=X.shape, copy=False)
        scale[rows] = 1.0
    return SparseClippedDesign(X, None if bool(np.all(scale == 1.0)) else scale, intercept)


def _clip_stored_rows(X, rows, max_norm, data):
    """Write the clipped values of ``X``'s ``rows`` into ``data`` (a copy of ``X.data``).

    :func:`_clipped_copy`'s arithmetic on the stored entries: the factor of
    ``_clip``, and a row whose factor is below ``TINY_SCALE`` divided by its
    largest entry, then scaled to ``max_norm`` (no underflow, no overflow,
    nothing subtracted). Each row's values depend on that row only.
    """
    from ._clip import clip_row_scales

    d = X.shape[1]
    shrink = 1.0 - 4.0 * (d + 2) * np.finfo(np.float64).eps
    for start in range(0, rows.size, DESIGN_CHUNK):
        chosen = rows[start:start + DESIGN_CHUNK]
        block = X[chosen]              # a CSR copy of these rows, entries in X's order
        counts = np.diff(block.indptr)
        scale, _ = clip_row_scales(block, max_norm)
        values = block.data * np.repeat(scale, counts)
        tiny = scale < TINY_SCALE
        if np.any(tiny):
            entries = np.repeat(tiny, counts)
            owner = np.repeat(np.arange(chosen.size), counts)[entries]
            stored = block.data[entries]
            largest = np.zeros(chosen.size)
            np.maximum.at(largest, owner, np.abs(stored))
            unit = stored / largest[owner]          # entries in [-1, 1], one at +-1
            root = np.sqrt(np.bincount(owner, weights=unit * unit, minlength=chosen.size))
            values[entries] = unit * ((max_norm * shrink) / root)[owner]
        positions = (np.repeat(X.indptr[chosen] - block.indptr[:-1], counts)
                     + np.arange(block.nnz))
        data[positions] = values


# Rows per chunk when a clipped copy is built; below this clipping factor a
# row is pre-scaled by its largest entry; above FAST_SCALE for every row (and
# a bound below _FAST_MAX_NORM) X is read in place, where no product of a row
# with an iterate can overflow.
DESIGN_CHUNK = 8192
# Bytes of X per chunk of a fused product (kept in cache between its two uses).
CACHE_CHUNK_BYTES = 1 << 20
TINY_SCALE = 2.0**-500
FAST_SCALE = 2.0**-64
_FAST_MAX_NORM = 2.0**512
# Elements per chunk of the O(n) loss and line-search work (bounded temporaries).
VECTOR_CHUNK = 1 << 16
# Additive allowance per margin for products that underflow (far below any
# tolerance, kept for rigour).
_UNDERFLOW = 2.0**-1000


class _LossFunctions:
    """Value, first and second derivative of a GLM loss in the margin ``t``.

    Unweighted, ``y`` holds the targets (a 1-D slice). Weighted
    (``weighted=True``), ``y`` is an ``(n, 2)`` slice of targets and weights
    in ``[0, 1]`` (:func:`_weighted_targets`), and every value and derivative
    is the record's weight times the loss's: one more rounding per derivative,
    which :func:`_summation_factor` counts (``doc/privacy.md``, "Sample weights
    in objective perturbation").
    """

    def __init__(self, loss, threshold, weighted=False):
        if loss not in CURVATURE:
            raise ValueError(f"loss must be one of {sorted(CURVATURE)}; got {loss!r}.")
        self.loss, self.threshold, self.weighted = loss, threshold, bool(weighted)

    def targets(self, y):
        return y[:, 0] if self.weighted else y

    def _weigh(self, y, *arrays):
        if not self.weighted:
            return arrays
        return tuple(y[:, 1] * a for a in arrays)

    def value(self, t, y):
        target = self.targets(y)
        if self.loss == LOG_LOSS:
            values = losses.margin_values(LOG_LOSS, target * t)
        else:
            values = losses.values(HUBER, t - target, self.threshold)
        return float(np.sum(self._weigh(y, values)[0]))

    def derivatives(self, t, y):
        target = self.targets(y)
        if self.loss == LOG_LOSS:
            p = expit(-target * t)
            # target^2 p (1 - p): a record outside the problem's classes (target 0) has a
            # constant loss and no curvature (1 for every +-1 target: the same bits)
            return self._weigh(y, -target * p, (target * target) * (p * (1.0 - p)))
        residual = t - target
        return self._weigh(y, losses.derivatives(HUBER, residual, self.threshold),
                           losses.second_derivatives(HUBER, residual, self.threshold))

    def first(self, t, y):
        target = self.targets(y)
        if self.loss == LOG_LOSS:
            first = target * losses.margin_derivatives(LOG_LOSS, target * t)
        else:
            first = losses.derivatives(HUBER, t - target, self.threshold)
        return self._weigh(y, first)[0]


def _weighted_targets(targets, sample_weight):
    """``(n, 2)``: a problem's targets beside the records' weights (one slice for both)."""
    return np.column_stack((targets, sample_weight))


def _chunk_rows(p):
    """Rows per BLAS product: 4,096, fewer for wide rows (temporaries of at most ~16 MB)."""
    return int(min(CERTIFY_CHUNK, max(256, (1 << 21) // max(int(p), 1))))


def _loss_value(margins, y, loss_fns, direction=None, size=0.0):
    """``sum_i f(t_i + size d_i; y_i)`` in chunks (no temporary of length ``n``)."""
    total = 0.0
    for start in range(0, margins.shape[0], VECTOR_CHUNK):
        t = margins[start:start + VECTOR_CHUNK]
        if direction is not None:
            t = t + size * direction[start:start + VECTOR_CHUNK]
        total += loss_fns.value(t, y[start:start + VECTOR_CHUNK])
    return total


_CONTROLLER = []


def _single_threaded_blas():
    """A context in which BLAS runs on one thread (a null context without threadpoolctl).

    The solve runs in it. Its matrix-vector products are memory-bound, and on
    the shared 2-core machine the benchmarks run on, OpenBLAS's thread
    hand-offs made chunked products 5x slower than one thread and a
    1000 x 1000 Cholesky factorisation 4-20x slower (measured under load);
    the Hessians' rank-k updates lost little.
    """
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
        except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
            _CONTROLLER.append(None)
    if _CONTROLLER[0] is None:  # pragma: no cover
        return contextlib.nullcontext()
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def _data_gradient(Z, y, margins, loss_fns, chunk):
    """``sum_i f'(t_i) z_i``, summed by BLAS in chunks of ``chunk`` rows, then chunk by chunk."""
    gradient = np.zeros(Z.shape[1])
    for start in range(0, Z.shape[0], chunk):
        stop = start + chunk
        gradient += Z.rmatvec(loss_fns.first(margins[start:stop], y[start:stop]), start, stop)
    return gradient


def _hessian(Z, y, margins, loss_fns, lam, chunk, stride=1):
    """``sum_i f''(t_i) z_i z_i^T + Lambda I`` by BLAS rank-k updates on chunks.

    ``f'' >= 0``, so each chunk contributes ``W^T W`` with ``W = sqrt(f'') Z_c``
    (one chunk-sized temporary). With ``stride > 1``, every ``stride``-th row
    only, weighted by ``stride``: an approximation used as a preconditioner
    or for the first Newton steps, never in the certificate.
    """
    _, second = loss_fns.derivatives(margins[::stride], y[::stride])
    hessian = Z.gram(second, chunk, stride, unit_weights=loss_fns.loss == HUBER)
    hessian[np.diag_indices_from(hessian)] += lam
    return hessian


def _newton(Z, y, b, lam, loss_fns, tol, row_norm, budget=MAX_NEWTON_STEPS):
    """Damped Newton from the origin until the certified gradient norm is ``<= tol``.

    Every product with ``Z`` is a BLAS call; margins are kept and updated
    along the step (``t + a Z s``) so a line search costs no pass over ``Z``.
    An exact Hessian costs as much as tens of passes over ``Z`` when ``p`` is
    large, so for wide log-loss problems the Newton system is solved by
    conjugate gradients with exact Hessian-vector products (one pass each),
    preconditioned by the Hessian of every ``stride``-th row (about ``16 p``
    rows; every other row between ``4 p`` and ``32 p`` rows). Narrow log-loss problems on many rows take their first steps
    (until the gradient norm has dropped 100-fold, at most ``EARLY_MAX_STEPS``,
    each of which must halve it) with the Hessian of about ``1024 p`` evenly
    spaced rows, then exact Newton steps, at most ``budget`` of them
    (:func:`newton_step_budget`, public). The Huber loss
    reuses its exact factor while the rows inside the
    threshold do not change. How the minimiser is approached does not matter
    to the guarantee: only the certificate (:func:`_certify`) decides when to
    stop. It recomputes the margins from scratch and is only attempted when
    the computed gradient norm is within the tolerance (a lower bound on the
    certified one).
    """
    n, p = Z.shape
    chunk = _chunk_rows(p)
    stride = early_stride = 1
    if loss_fns.loss == LOG_LOSS and p >= WIDE_COLUMNS:
        stride = n // (PRECONDITIONER_ROWS_PER_COLUMN * p)
        if stride < 2:
            # Fewer than 32 p rows: an exact Hessian costs a few hundred
            # products; half the rows still precondition well from 4 p rows.
            stride = 2 if n >= HALF_PRECONDITIONER_ROWS_PER_COLUMN * p else 1
    elif loss_fns.loss == LOG_LOSS:
        early_stride = max(1, n // (EARLY_ROWS_PER_COLUMN * p))
    theta = np.zeros(p)
    margins = np.zeros(n)
    value = _loss_value(margins, y, loss_fns)
    factor, active = None, None
    first_norm, previous_norm, cg_steps = None, None, 0
    early, early_steps, steps = early_stride > 1, 0, 0
    while True:
        gradient = _data_gradient(Z, y, margins, loss_fns, chunk) + lam * theta + b
        gradient_norm = float(np.linalg.norm(gradient))
        if gradient_norm <= tol:
            certified, margins = _certify(Z, y, theta, b, lam, loss_fns, tol, chunk, row_norm)
            if certified:
                return theta
            gradient = _data_gradient(Z, y, margins, loss_fns, chunk) + lam * theta + b
            gradient_norm = float(np.linalg.norm(gradient))
            value = _loss_value(margins, y, loss_fns)
        first_norm = gradient_norm if first_norm is None else first_norm
        if early and (early_steps >= EARLY_MAX_STEPS
                      or gradient_norm <= EARLY_NEWTON_SWITCH * first_norm
                      or (previous_norm is not None
                          and not gradient_norm <= EARLY_MIN_CUT * previous_norm)):
            early = False   # for good: exact Newton steps from here on
        if early:
            early_steps += 1
        elif steps >= budget:
            break
        else:
            steps += 1
        previous_norm = gradient_norm
        if loss_fns.loss == HUBER:
            now_active = np.abs(margins - loss_fns.targets(y)) < loss_fns.threshold
            if factor is None or not np.array_equal(now_active, active):
                factor = _factorise(_hessian(Z, y, margins, loss_fns, lam, chunk))
                active = now_active
        elif stride == 1:
            # Far from the minimiser an approximate Hessian (every early_stride-th
            # row) steers as well as the exact one; the line search keeps descent.
            rows = early_stride if early else 1
            factor = _factorise(_hessian(Z, y, margins, loss_fns, lam, chunk, rows))
        elif (factor is None
              or cg_steps > CG_REFRESH and gradient_norm > 1e-3 * first_norm):
            # Past a 1e-3 reduction the Hessian barely moves: keep the factor.
            factor = _factorise(_hessian(Z, y, margins, loss_fns, lam, chunk, stride))
        if stride == 1:
            step = -cho_solve(factor, gradient, check_finite=False)
            direction = Z.matvec(step)
        else:
            # Inexact Newton: a relative residual of min(0.1, ||g|| / ||g_0||)
            # (superlinear), but never below a quarter of the tolerance.
            target = max(min(0.1, gradient_norm / first_norm) * gradient_norm, 0.25 * tol)
            step, direction, cg_steps = _preconditioned_cg(Z, y, margins, loss_fns, lam,
                                                           factor, gradient, target)
        moved = _line_search(y, b, lam, loss_fns, theta, margins, value, gradient, step,
                             direction, strict=early)
        if not early and np.array_equal(moved[0], theta):
            # A fixed point of the iteration in floating point that the certificate
            # rejects: no further step can change anything.
            break
        theta, margins, value = moved
    raise SolverDidNotConverge(
        f"Newton's method did not certify ||grad J|| <= {tol:.3g} in {steps} exact "
        "steps; nothing was released. Increase tol or alpha."
    )


def _preconditioned_cg(Z, y, margins, loss_fns, lam, factor, gradient, target):
    """Solve ``H s = -g`` approximately by CG preconditioned with an approximate Hessian's factor.

    Returns ``(s, Z s, iterations)``; stops when the residual norm is below
    ``target`` or after ``MAX_CG_STEPS`` products. Every CG iterate from
    zero is a descent direction, so the line search can always use it.
    """
    _, curvature = loss_fns.derivatives(margins, y)
    step = np.zeros_like(gradient)
    direction = np.zeros_like(margins)
    residual = -gradient
    preconditioned = cho_solve(factor, residual, check_finite=False)
    search = preconditioned.copy()
    rz = float(residual @ preconditioned)
    with _single_threaded_blas():
        return _cg_loop(Z, curvature, lam, factor, gradient, step, direction, residual,
                        target, preconditioned, search, rz)


def _cg_loop(Z, curvature, lam, factor, gradient, step, direction, residual, target,
             preconditioned, search, rz):
    iterations = 0
    while iterations < MAX_CG_STEPS:
        iterations += 1
        product, z_search = Z.curvature_product(search, curvature)
        product += lam * search
        curvature_along = float(search @ product)
        if not curvature_along > 0.0:
            break
        alpha = rz / curvature_along
        step += alpha * search
        direction += alpha * z_search
        residual -= alpha * product
        if float(np.linalg.norm(residual)) <= target:
            break
        preconditioned = cho_solve(factor, residual, check_finite=False)
        rz_new = float(residual @ preconditioned)
        search = preconditioned + (rz_new / rz) * search
        rz = rz_new
    if iterations == 1 and not np.any(step):  # no curvature found: plain preconditioned step
        step = -cho_solve(factor, gradient, check_finite=False)
        direction = Z.matvec(step)
    return step, direction, iterations


def _factorise(hessian):
    try:
        return cho_factor(hessian, check_finite=False)
    except np.linalg.LinAlgError as error:  # scipy raises numpy's LinAlgError
        raise SolverDidNotConverge(
            "The Newton system could not be factorised; nothing was released. "
            "Increase alpha."
        ) from error


def _line_search(y, b, lam, loss_fns, theta, margins, value, gradient, step, direction,
                 strict=False):
    """Backtracking on ``J(theta + a step)``, with margins ``t + a Z step`` (no pass over ``Z``).

    ``strict`` (the subsampled first steps): no move unless the Armijo condition
    holds, so that ``J`` does not increase before the exact phase.
    """
    def objective(size):
        candidate = theta + size * step
        return (_loss_value(margins, y, loss_fns, direction, size)
                + 0.5 * lam * float(candidate @ candidate) + float(b @ candidate))

    def move(size):
        return theta + size * step, margins + size * direction

    def slope_at(size):
        """``d/da J(theta + a step)`` at ``a = size``: nondecreasing in ``a`` (J is convex)."""
        total = 0.0
        for start in range(0, margins.shape[0], VECTOR_CHUNK):
            stop = start + VECTOR_CHUNK
            first, _ = loss_fns.derivatives(margins[start:stop] + size * direction[start:stop],
                                            y[start:stop])
            total += float(first @ direction[start:stop])
        return total + lam * float((theta + size * step) @ step) + float(b @ step)

    def by_slope():
        """Where comparing values of J only measures rounding: the largest step along which
        J's derivative stays <= 0 (bisection on its sign), so that J does not increase in
        exact arithmetic. Full steps taken unchecked could alternate between two points for
        ever (the Huber loss's curvature jumps), and whether they do depended on one record
        (doc/privacy.md 54.17)."""
        if slope_at(1.0) <= 0.0:
            return (*move(1.0), objective(1.0))
        low, high = 0.0, 1.0
        for _ in range(60):
            middle = 0.5 * (low + high)
            if slope_at(middle) <= 0.0:
                low = middle
            else:
                high = middle
        if low == 0.0:
            return theta, margins, value        # no move: _newton stops (certification)
        return (*move(low), objective(low))

    slope = float(gradient @ step)
    if strict and not -slope > 64 * UNIT_ROUNDOFF * (abs(value) + 1.0):
        return theta, margins, value
    if -slope <= 64 * UNIT_ROUNDOFF * (abs(value) + 1.0):
        # The decrease is below the rounding of J, so comparing values would
        # only measure noise; decide by the sign of J's derivative instead.
        return by_slope()
    size = 1.0
    for _ in range(60):
        candidate_value = objective(size)
        if candidate_value <= value + ARMIJO * size * slope:
            return (*move(size), candidate_value)
        size *= 0.5
    if strict:
        return theta, margins, value
    # No decrease is measurable: the iterate is at the rounding floor.
    return by_slope()


def _summation_factor(n, p, weighted=False):
    """Rounding factor of the chunked sums: ``2 (chunk + p + chunks + 6) u``.

    With sample weights the 6 becomes 7: each derivative is multiplied by its
    record's weight, one more rounding per term.
    """
    rows = _chunk_rows(p)
    chunks = max(math.ceil(n / rows), 1)
    return 2.0 * (min(n, rows) + p + chunks + 6 + int(weighted)) * UNIT_ROUNDOFF


def _certify(Z, y, theta, b, lam, loss_fns, tol, chunk, row_norm):
    """Certify ``||grad J(theta)|| <= tol``: returns ``(certified, margins)``.

    First with float64 BLAS margins (error at most ``2 u |t_i| + (p + 2) u
    |z_i|.|theta|`` in any summation order), bounded through the row norms
    (:func:`_norm_certificate`, no pass over ``|X|``), then per column; these
    certify whenever ``||theta||`` is moderate. If that allowance is too
    large, with margins accumulated in long
    double (error ``u |t_i| + (p + 2) u_ld |z_i|.|theta|``), the allowance
    :func:`certifiable_regularization` plans for. The returned margins are the
    float64 ones (fresh, for the next Newton step).
    """
    p = Z.shape[1]
    margins = Z.matvec(theta)
    bound, floor = _norm_certificate(Z, y, margins, theta, b, lam, loss_fns, chunk, row_norm)
    if bound <= tol:
        return True, margins
    if floor > tol:
        return False, margins
    bound, floor = _certified_gradient_norm(Z, y, margins, theta, b, lam, loss_fns, chunk,
                                            2.0 * UNIT_ROUNDOFF, (p + 2) * UNIT_ROUNDOFF)
    if bound <= tol:
        return True, margins
    if floor > tol:
        # Even without the margins' share of the allowance the bound is above
        # the tolerance: more precise margins cannot help, take another step.
        return False, margins
    precise = Z.long_margins(theta, chunk)
    certified = _certified_gradient_norm(Z, y, precise, theta, b, lam, loss_fns, chunk,
                                         UNIT_ROUNDOFF, (p + 2) * LONG_ROUNDOFF)[0] <= tol
    return certified, margins


def _norm_certificate(Z, y, margins, theta, b, lam, loss_fns, chunk, row_norm):
    """:func:`_certified_gradient_norm` with float64 margins, bounded through row norms.

    Every ``||z_i|| <= R``, so the norm of the vector of absolute sizes is at
    most ``R sum_i |f'_i| + Lambda ||theta|| + ||b||`` (triangle inequality)
    and ``|z_i|.|theta| <= R ||theta||``: the same allowance as the per-column
    one, looser, computed with no pass over ``|X|`` (these are the bounds
    :func:`certifiable_regularization` plans with). Returns the bound and the
    bound without the margins' share.
    """
    n, p = Z.shape
    curvature = CURVATURE[loss_fns.loss]
    gradient = np.zeros(p)
    derivative_sum = margin_sum = 0.0
    with _single_threaded_blas():
        for start in range(0, n, chunk):
            stop = start + chunk
            t = margins[start:stop]
            derivative = loss_fns.first(t, y[start:stop])
            gradient += Z.rmatvec(derivative, start, stop)
            derivative_sum += float(np.sum(np.abs(derivative)))
            margin_sum += float(np.sum(np.abs(t)))
    gradient += lam * theta + b
    theta_norm = float(np.linalg.norm(theta))
    sizes = row_norm * derivative_sum + lam * theta_norm + float(np.linalg.norm(b))
    margin_errors = 2.0 * (2.0 * UNIT_ROUNDOFF * margin_sum
                           + n * ((p + 2) * UNIT_ROUNDOFF * row_norm * theta_norm
                                  + p * _UNDERFLOW))
    summation = _summation_factor(n, p, loss_fns.weighted) * sizes
    norm = float(np.linalg.norm(gradient))
    return (norm + summation + 2.0 * curvature * row_norm * margin_errors, norm + summation)


def _certified_gradient_norm(Z, y, margins, theta, b, lam, loss_fns, chunk, unit_margin,
                             unit_product):
    """An upper bound on the exact ``||grad J(theta)||``: computed norm plus rounding.

    The data term is summed in chunks of ``chunk`` rows by BLAS, then the
    chunks one after another, so each coordinate's rounding error is at most
    ``(chunk + p + chunks + 6) u`` times the sum of the absolute values of its
    terms (the standard bound for any summation order; the ``+6`` covers the
    derivative's own few-ulp error and its product with the row's clipping
    factor and the intercept value). The derivatives are evaluated at margins
    whose error is at most ``unit_margin |t_i| + unit_product |z_i|.|theta|``
    (plus an underflow allowance), which moves the derivative by at most the
    curvature bound times that. A factor of 2 is kept as margin.

    Returns the bound and the same bound without the margins' share (a lower
    bound on what any margins could certify).
    """
    n, p = Z.shape
    curvature = CURVATURE[loss_fns.loss]
    abs_theta = np.abs(theta)
    gradient, sizes, drift = np.zeros(p), np.zeros(p), np.zeros(p)
    with _single_threaded_blas():
        _certificate_sums(Z, y, margins, abs_theta, loss_fns, chunk, curvature, unit_margin,
                          unit_product, gradient, sizes, drift)
    gradient += lam * theta + b
    sizes += lam * abs_theta + np.abs(b)
    summation = _summation_factor(n, p, loss_fns.weighted) * sizes
    norm = float(np.linalg.norm(gradient))
    return (norm + float(np.linalg.norm(summation + 2.0 * drift)),
            norm + float(np.linalg.norm(summation)))


def _certificate_sums(Z, y, margins, abs_theta, loss_fns, chunk, curvature, unit_margin,
                      unit_product, gradient, sizes, drift):
    n, p = Z.shape
    for start in range(0, n, chunk):
        stop = start + chunk
        t = margins[start:stop]
        derivative = loss_fns.first(t, y[start:stop])
        gradient += Z.rmatvec(derivative, start, stop)

        def columns(abs_margins, t=t, derivative=derivative):
            margin_error = 2.0 * (unit_margin * np.abs(t) + unit_product * abs_margins
                                  + p * _UNDERFLOW)
            return np.column_stack([np.abs(derivative), curvature * margin_error])

        both = Z.abs_products(start, stop, abs_theta, columns)
        sizes += both[:, 0]
        drift += both[:, 1]
