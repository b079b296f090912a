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

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit

from ..privacy import gaussian_mu
from ..privacy._objective_perturbation import objective_perturbation_mu
from .noise import gaussian_release

LOG_LOSS = "log_loss"
HUBER = "huber"
CURVATURE = {LOG_LOSS: 0.25, HUBER: 1.0}

# Newton's method stores the Hessian: above this many columns, refuse.
MAX_COLUMNS = 4096
# The solver must certify ||grad J|| <= tol; tol defaults to this fraction of
# n L R, the largest possible size of the data term of the gradient.
DEFAULT_RELATIVE_TOL = 1e-10
MAX_NEWTON_STEPS = 200
# At most this share of epsilon goes to the Jacobian term; a larger share
# raises the regularisation instead.
JACOBIAN_SHARE = 0.5
# The output noise is calibrated to this fraction of mu: it covers a gap of
# size tol / Lambda, which is tiny, so it costs about OUTPUT_RATIO**2 / 2 of mu^2.
OUTPUT_RATIO = 0.1
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
            "gap; exact profile of the privacy-loss bound (doc/privacy.md, section 7)"
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
    mu = objective_perturbation_mu(epsilon, delta, dof=2 * K, jacobian_epsilon=jacobian,
                                   output_ratio=OUTPUT_RATIO)
    noise_std = math.sqrt(K) * sensitivity / mu
    return Plan(float(epsilon), float(delta), mu, noise_std, regularization, jacobian,
                sensitivity, float(derivative_bound), float(feature_norm),
                float(curvature_bound), n, K)


def solve(Z, targets, *, loss, plan, rng, threshold=1.0, tol=None):
    """Release the perturbed minimisers of the ``K`` problems.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_columns)
        Rows clipped to ``plan.feature_norm`` (intercept column included).
    targets : ndarray of shape (n_problems, n_samples)
        ``+-1`` labels for ``"log_loss"``, real targets for ``"huber"``.
    loss : {"log_loss", "huber"}
    plan : Plan
    rng : numpy.random.Generator
    threshold : float, default=1.0
        Huber threshold ``h`` (``plan.derivative_bound`` must be ``>= h``).
    tol : float or None, default=None
        Relative tolerance: the solver certifies ``||grad J_k|| <= tol n L R /
        sqrt(K)``. ``None`` takes ``1e-10``. Only utility depends on it: the
        output noise is scaled with it.

    Returns
    -------
    theta : ndarray of shape (n_problems, n_columns)

    Raises
    ------
    SolverDidNotConverge
        When a minimiser cannot be certified; nothing is released.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    targets = np.atleast_2d(np.asarray(targets, dtype=np.float64))
    n_problems, n_columns = targets.shape[0], Z.shape[1]
    if n_columns > MAX_COLUMNS:
        raise ValueError(
            f"Objective perturbation solves by Newton's method and supports at most "
            f"{MAX_COLUMNS} columns; got {n_columns}. Use the iterative solver."
        )
    relative_tol = DEFAULT_RELATIVE_TOL if tol is None else float(tol)
    scale = max(plan.n_samples * plan.derivative_bound * plan.feature_norm, 1.0)
    problem_tol = relative_tol * scale / math.sqrt(n_problems)
    # Draw the objective noise for every problem before touching the data.
    linear_terms = (plan.noise_std * rng.standard_normal((n_problems, n_columns))
                    if plan.noise_std > 0 else np.zeros((n_problems, n_columns)))
    loss_fns = _LossFunctions(loss, float(threshold))
    regularization = certifiable_regularization(plan, linear_terms, Z.shape, problem_tol)
    solutions = np.empty((n_problems, n_columns))
    for k in range(n_problems):
        solutions[k] = _newton(Z, targets[k], linear_terms[k], regularization, loss_fns,
                               problem_tol)
    return gaussian_release(solutions, output_noise_std(plan, tol, regularization), rng)


def certifiable_regularization(plan, linear_terms, shape, problem_tol):
    """The smallest ``Lambda >= plan.regularization`` whose solve can always be certified.

    Decided from public values and the noise only, before the data is read, so
    that whether the solve succeeds does not depend on the data. At the
    minimiser ``||theta*|| <= s / Lambda`` with ``s = n L R + ||b||`` (the data
    term of the gradient has norm at most ``n L R``); allowing twice that, the
    rounding allowance of :func:`_certified_gradient_norm` is at most
    ``factor (s + 2 s) + 2 beta n R^2 (u + (p + 2) u_ld) 2 s / Lambda``, which
    must stay below half the tolerance. A larger ``Lambda`` only lowers the
    Jacobian term of the plan, so the guarantee is unchanged.
    """
    n, p = shape
    s = plan.n_samples * plan.derivative_bound * plan.feature_norm \
        + float(np.max(np.linalg.norm(linear_terms, axis=1)))
    factor = _summation_factor(n, p)
    if 3.0 * factor * s > problem_tol / 4.0:
        raise ValueError(
            f"The tolerance {problem_tol:.3g} is below what float64 rounding lets the "
            "solver certify for this size of problem; increase tol."
        )
    margin_unit = UNIT_ROUNDOFF + (p + 2) * LONG_ROUNDOFF
    curvature = plan.curvature_bound * plan.feature_norm**2
    drift = 4.0 * curvature * plan.n_samples * margin_unit * s
    return max(plan.regularization, drift / (problem_tol / 4.0))


def output_noise_std(plan, tol=None, regularization=None):
    """Standard deviation of the output noise that covers the certified gap.

    ``||theta_hat - theta*|| <= ||grad J|| / Lambda`` per problem, so the
    stacked gap is at most ``tol n L R / Lambda``; replace-one moves it by at
    most twice that, a Gaussian mechanism calibrated to ``plan.output_mu``.
    ``regularization`` is the ``Lambda`` the solve used (``plan``'s by default).
    """
    if math.isinf(plan.mu):
        return 0.0
    relative_tol = DEFAULT_RELATIVE_TOL if tol is None else float(tol)
    scale = max(plan.n_samples * plan.derivative_bound * plan.feature_norm, 1.0)
    lam = plan.regularization if regularization is None else regularization
    return 2.0 * relative_tol * scale / lam / plan.output_mu


def gaussian_equivalent_mu(epsilon, delta):
    """``mu*`` of a Gaussian mechanism at the same target, for comparisons."""
    return gaussian_mu(epsilon, delta)


class _LossFunctions:
    """Value, first and second derivative of a GLM loss in the margin ``t``."""

    def __init__(self, loss, threshold):
        if loss not in CURVATURE:
            raise ValueError(f"loss must be one of {sorted(CURVATURE)}; got {loss!r}.")
        self.loss, self.threshold = loss, threshold

    def value(self, t, y):
        if self.loss == LOG_LOSS:
            return float(np.sum(np.logaddexp(0.0, -y * t)))
        residual = np.abs(t - y)
        h = self.threshold
        return float(np.sum(np.where(residual <= h, 0.5 * residual**2, h * residual - 0.5 * h * h)))

    def derivatives(self, t, y):
        if self.loss == LOG_LOSS:
            p = expit(-y * t)
            return -y * p, p * (1.0 - p)
        residual = t - y
        inside = np.abs(residual) < self.threshold
        return np.clip(residual, -self.threshold, self.threshold), inside.astype(np.float64)


def _objective(Z, y, b, lam, loss_fns, theta):
    return loss_fns.value(Z @ theta, y) + 0.5 * lam * float(theta @ theta) + float(b @ theta)


def _newton(Z, y, b, lam, loss_fns, tol):
    """Damped Newton from the origin until the certified gradient norm is ``<= tol``."""
    theta = np.zeros(Z.shape[1])
    value = _objective(Z, y, b, lam, loss_fns, theta)
    for _ in range(MAX_NEWTON_STEPS):
        margins = _margins(Z, theta)
        first, second = loss_fns.derivatives(margins, y)
        if _certified_gradient_norm(Z, margins, first, theta, b, lam,
                                    CURVATURE[loss_fns.loss]) <= tol:
            return theta
        gradient = Z.T @ first + lam * theta + b
        hessian = Z.T @ (second[:, np.newaxis] * Z)
        hessian[np.diag_indices_from(hessian)] += lam
        try:
            step = -cho_solve(cho_factor(hessian, check_finite=False), gradient)
        except np.linalg.LinAlgError as error:  # scipy raises numpy's LinAlgError
            raise SolverDidNotConverge(
                "The Newton system could not be factorised; nothing was released. "
                "Increase alpha."
            ) from error
        theta, value = _line_search(Z, y, b, lam, loss_fns, theta, value, gradient, step)
    raise SolverDidNotConverge(
        f"Newton's method did not certify ||grad J|| <= {tol:.3g} in {MAX_NEWTON_STEPS} "
        "steps; nothing was released. Increase tol or alpha."
    )


def _line_search(Z, y, b, lam, loss_fns, theta, value, gradient, step):
    slope = float(gradient @ step)
    if -slope <= 64 * UNIT_ROUNDOFF * (abs(value) + 1.0):
        # The decrease is below the rounding of J, so comparing values would
        # only measure noise; this close, the full Newton step converges
        # quadratically (certification decides when to stop).
        return theta + step, _objective(Z, y, b, lam, loss_fns, theta + step)
    size = 1.0
    for _ in range(60):
        candidate = theta + size * step
        candidate_value = _objective(Z, y, b, lam, loss_fns, candidate)
        if candidate_value <= value + 1e-4 * size * slope:
            return candidate, candidate_value
        size *= 0.5
    # No decrease is measurable: the iterate is at the rounding floor, and the
    # full Newton step is the best move left (certification decides).
    return theta + step, _objective(Z, y, b, lam, loss_fns, theta + step)


def _summation_factor(n, p):
    """Rounding factor of the chunked sums: ``2 (chunk + p + chunks + 4) u``."""
    chunks = max(math.ceil(n / CERTIFY_CHUNK), 1)
    return 2.0 * (min(n, CERTIFY_CHUNK) + p + chunks + 4) * UNIT_ROUNDOFF


def _margins(Z, theta):
    """``Z @ theta`` accumulated in long double, rounded once to float64."""
    theta_long = theta.astype(np.longdouble)
    return np.concatenate([
        (Z[start:start + CERTIFY_CHUNK].astype(np.longdouble) @ theta_long).astype(np.float64)
        for start in range(0, Z.shape[0], CERTIFY_CHUNK)
    ])


def _certified_gradient_norm(Z, margins, first, theta, b, lam, curvature):
    """An upper bound on the exact ``||grad J(theta)||``: computed norm plus rounding.

    The data term is summed in chunks of ``CERTIFY_CHUNK`` rows, then the
    chunks one after another, so each coordinate's rounding error is at most
    ``(chunk + p + chunks + 4) u`` times the sum of the absolute values of its
    terms (the standard bound for any summation order; the ``+4`` covers the
    derivative's own few-ulp error). The derivatives are evaluated at margins
    accumulated in long double and rounded once (:func:`_margins`), so a
    margin's error is at most ``u |t_i| + (p + 2) u_ld |z_i|.|theta|``, which moves the
    derivative by at most the curvature bound times that. A factor of 2 is kept
    as margin.
    """
    n, p = Z.shape
    abs_theta = np.abs(theta)
    gradient_parts, size_parts, drift_parts = [], [], []
    for start in range(0, n, CERTIFY_CHUNK):
        chunk, derivative = Z[start:start + CERTIFY_CHUNK], first[start:start + CERTIFY_CHUNK]
        abs_chunk = np.abs(chunk)
        margin_error = (UNIT_ROUNDOFF * 2.0 * np.abs(margins[start:start + CERTIFY_CHUNK])
                        + (p + 2) * LONG_ROUNDOFF * 2.0 * (abs_chunk @ abs_theta))
        gradient_parts.append(chunk.T @ derivative)
        size_parts.append(abs_chunk.T @ np.abs(derivative))
        drift_parts.append(abs_chunk.T @ (curvature * margin_error))
    gradient = np.sum(gradient_parts, axis=0) + lam * theta + b
    sizes = np.sum(size_parts, axis=0) + lam * abs_theta + np.abs(b)
    rounding = _summation_factor(n, p) * sizes + 2.0 * np.sum(drift_parts, axis=0)
    return float(np.linalg.norm(gradient) + np.linalg.norm(rounding))
