"""Private selection of the best of a random number of private candidates.

Papernot and Steinke (ICLR 2022, "Hyperparameter tuning with Renyi
differential privacy", Theorem 2): let ``Q`` be ``(lambda, eps)``-RDP and
``(lambda_hat, eps_hat)``-RDP, with ``lambda > 1`` and ``lambda_hat >= 1``.
Draw ``K`` from the truncated negative binomial ``D(eta, gamma)``
(``eta >= 0`` here, ``0 < gamma < 1``)::

    P[K = k] = (1 - gamma)^k / (gamma^-eta - 1) * prod_{l<k} (l + eta) / (l + 1),

run ``Q`` ``K`` times independently and release only the output with the best
score. That algorithm is ``(lambda, eps')``-RDP with::

    eps' = eps + (1 + eta) ((1 - 1/lambda_hat) eps_hat + log(1/gamma) / lambda_hat)
           + log(E[K]) / (lambda - 1).

``eta = 1`` is the geometric distribution (the random stopping of Liu and
Talwar, STOC 2019), ``eta = 0`` the logarithmic distribution. ``K`` itself is
part of the secret randomness: releasing it is not covered.

Candidates here are ``rho``-zCDP (a ``mu``-GDP mechanism is exactly
``mu^2/2``-zCDP: its Renyi divergence of order ``lambda`` is
``lambda mu^2 / 2``). A candidate whose hyperparameters are drawn at random,
with probability ``w_h`` for a setting that is ``rho_h``-zCDP, releases the
setting with its output, so its Renyi divergence is exactly the mixture::

    eps_Q(lambda) = log(sum_h w_h exp((lambda - 1) lambda rho_h)) / (lambda - 1),

at most ``lambda max_h rho_h``. The RDP of the selection is converted to
``(epsilon, delta)`` with Canonne, Kamath and Steinke (2020, Proposition 12),
minimised over the order.
"""

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

from ._validation import check_delta, check_epsilon, check_rho

__all__ = [
    "selection_candidate_rho",
    "selection_epsilon",
    "selection_rdp",
    "truncated_negative_binomial_gamma",
    "truncated_negative_binomial_mean",
]


def truncated_negative_binomial_mean(gamma, shape):
    """``E[K]`` under the truncated negative binomial ``D(shape, gamma)``.

    Parameters
    ----------
    gamma : float
        Success probability in ``(0, 1)``.
    shape : float
        ``eta >= 0``; 0 is the logarithmic and 1 the geometric distribution.

    Returns
    -------
    mean : float
        ``eta (1/gamma - 1) / (1 - gamma^eta)``, and ``(1/gamma - 1) / log(1/gamma)``
        for ``eta = 0``.
    """
    gamma, shape = _check_gamma(gamma), _check_shape(shape)
    log_gamma = math.log(gamma)
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / -log_gamma
    # 1 - gamma^eta through expm1: exact for tiny eta, where gamma^eta ~ 1.
    return shape * (1.0 / gamma - 1.0) / -math.expm1(shape * log_gamma)


def truncated_negative_binomial_gamma(mean, shape):
    """The ``gamma`` whose truncated negative binomial has the given mean.

    Parameters
    ----------
    mean : float
        Expected number of candidates, ``> 1``.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    gamma : float
        Root of ``truncated_negative_binomial_mean(gamma, shape) = mean``; the
        mean is decreasing in ``gamma``. The guarantee is computed with this
        ``gamma`` and its exact mean, so a rounding error of the root changes
        nothing about its validity.
    """
    mean, shape = float(mean), _check_shape(shape)
    if not math.isfinite(mean) or mean <= 1.0:
        raise ValueError(
            f"The expected number of candidates must be a finite number > 1; got {mean}. "
            "Pass n_candidates > 1 (for example 10)."
        )
    if shape == 1.0:
        return 1.0 / mean

    def excess(log_gamma):
        return math.log(truncated_negative_binomial_mean(math.exp(log_gamma), shape)) \
            - math.log(mean)

    # The mean decreases from infinity (gamma -> 0) to 1 (gamma -> 1): bracket it.
    low, high = -math.log1p(mean), math.log1p(-1e-12)
    while excess(low) < 0:
        low *= 2.0
    return float(math.exp(brentq(excess, low, high, xtol=1e-14, rtol=1e-14)))


def _check_gamma(gamma):
    gamma = float(gamma)
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1); got {gamma}.")
    return gamma


def _check_shape(shape):
    shape = float(shape)
    if not (shape >= 0.0 and math.isfinite(shape)):
        raise ValueError(
            f"The shape eta of the truncated negative binomial must be a finite number "
            f">= 0 (0: logarithmic, 1: geometric); got {shape}."
        )
    return shape


def _mixture_weights(rhos, weights):
    """Validated ``(rho_h, w_h)`` arrays; weights are normalised to sum to one."""
    rhos = np.asarray([check_rho(float(r)) for r in np.atleast_1d(rhos)], dtype=float)
    weights = np.ones_like(rhos) if weights is None else np.asarray(weights, dtype=float)
    if weights.shape != rhos.shape or rhos.size == 0:
        raise ValueError(
            "rhos and weights must be non-empty and of the same length; got "
            f"{rhos.size} and {weights.size}."
        )
    if not np.all(np.isfinite(weights) & (weights >= 0)) or weights.sum() <= 0:
        raise ValueError("weights must be finite, >= 0 and not all zero.")
    keep = weights > 0
    return rhos[keep], weights[keep] / weights.sum()


def candidate_rdp(order, rhos, weights=None):
    """Renyi divergence of order ``order >= 1`` of one random candidate.

    Parameters
    ----------
    order : float
        ``lambda >= 1``; ``lambda = 1`` is the KL divergence ``sum_h w_h rho_h``.
    rhos : array-like of float
        The zCDP parameter of each candidate setting.
    weights : array-like of float or None, default=None
        Probability of each setting (normalised); ``None`` is uniform.

    Returns
    -------
    rdp : float
        ``log(sum_h w_h exp((lambda - 1) lambda rho_h)) / (lambda - 1)``.
    """
    rhos, weights = _mixture_weights(rhos, weights)
    order = float(order)
    if order < 1.0:
        raise ValueError(f"order must be >= 1; got {order}.")
    if np.isinf(rhos).any():
        return math.inf
    if order == 1.0:
        return float(np.dot(weights, rhos))
    exponents = (order - 1.0) * order * rhos
    return float(logsumexp(exponents, b=weights) / (order - 1.0))


def _overhead(rhos, weights, gamma, shape):
    """``(1 + eta) min_{lambda_hat >= 1} ((1 - 1/lambda_hat) eps_hat + log(1/gamma) / lambda_hat)``.

    ``(1 - 1/l) eps_Q(l) = log(sum_h w_h exp((l - 1) l rho_h)) / l``, defined at
    ``l = 1`` too (it is 0 there). Every ``lambda_hat`` gives a valid bound, so
    the numerical minimisation only affects tightness, never validity.
    """
    log_inv_gamma = -math.log(gamma)

    def term(order_hat):
        exponents = (order_hat - 1.0) * order_hat * rhos
        return (float(logsumexp(exponents, b=weights)) + log_inv_gamma) / order_hat

    result = minimize_scalar(lambda s: term(math.exp(s)), bounds=(0.0, 40.0),
                             method="bounded", options={"xatol": 1e-10})
    best = min(term(1.0), term(math.exp(result.x)))
    if rhos.size == 1 and rhos[0] > 0:
        # One setting: (l - 1) rho + log(1/gamma)/l is minimal at l = sqrt(log(1/gamma)/rho).
        best = min(best, term(max(1.0, math.sqrt(log_inv_gamma / rhos[0]))))
    return (1.0 + shape) * best


def selection_rdp(order, rhos, weights=None, *, gamma, shape):
    """Renyi DP of order ``order > 1`` of the best of ``K ~ D(shape, gamma)`` candidates.

    Parameters
    ----------
    order : float
        ``lambda > 1``.
    rhos : array-like of float
        The zCDP parameter of each candidate setting.
    weights : array-like of float or None, default=None
        Probability of each setting; ``None`` is uniform.
    gamma : float
        Parameter of the truncated negative binomial, in ``(0, 1)``.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    rdp : float
        Papernot and Steinke (2022), Theorem 2, with the candidate's RDP
        from :func:`candidate_rdp`.
    """
    gamma, shape = _check_gamma(gamma), _check_shape(shape)
    rhos, weights = _mixture_weights(rhos, weights)
    order = float(order)
    if order <= 1.0:
        raise ValueError(f"order must be > 1; got {order}.")
    if np.isinf(rhos).any():
        return math.inf
    mean = truncated_negative_binomial_mean(gamma, shape)
    return (candidate_rdp(order, rhos, weights) + _overhead(rhos, weights, gamma, shape)
            + math.log(mean) / (order - 1.0))


def _rdp_to_epsilon(rdp, order, delta):
    """Canonne, Kamath and Steinke (2020), Proposition 12: ``(lambda, rdp)``-RDP to DP."""
    return rdp + (math.log(1.0 / delta) + (order - 1.0) * math.log1p(-1.0 / order)
                  - math.log(order)) / (order - 1.0)


def selection_epsilon(delta, rhos, weights=None, *, n_candidates, shape):
    """``(epsilon, delta)``-DP of private selection, optimised over the Renyi order.

    Parameters
    ----------
    delta : float
        Target delta in ``(0, 1)``.
    rhos : array-like of float
        The zCDP parameter of each candidate setting (``mu^2 / 2`` for ``mu``-GDP).
    weights : array-like of float or None, default=None
        Probability of each setting; ``None`` is uniform.
    n_candidates : float
        Expected number of candidates ``E[K] > 1``.
    shape : float
        ``eta >= 0`` of the truncated negative binomial.

    Returns
    -------
    epsilon : float
        ``min_lambda`` of the converted bound (``np.inf`` if a candidate has
        ``rho = inf``). Every order gives a valid bound; the search only
        tightens it.
    order : float
        The Renyi order attaining it.
    """
    delta = check_delta(delta, mechanism="private selection of Gaussian candidates")
    rhos, weights = _mixture_weights(rhos, weights)
    gamma = truncated_negative_binomial_gamma(n_candidates, shape)
    if np.isinf(rhos).any():
        return math.inf, math.nan
    # logsumexp's exp underflows to 0 for far-apart exponents (an exact 0 term): harmless,
    # but a caller's np.seterr(all="raise") turned it into a FloatingPointError (review 124).
    with np.errstate(under="ignore"):
        return _selection_epsilon(delta, rhos, weights, gamma, shape)


def _selection_epsilon(delta, rhos, weights, gamma, shape):
    mean = truncated_negative_binomial_mean(gamma, shape)
    overhead = _overhead(rhos, weights, gamma, shape)

    def bound(log_order_minus_one):
        order = 1.0 + math.exp(log_order_minus_one)
        rdp = candidate_rdp(order, rhos, weights) + overhead + math.log(mean) / (order - 1.0)
        return _rdp_to_epsilon(rdp, order, delta)

    grid = np.linspace(-12.0, 12.0, 97)
    values = [bound(s) for s in grid]
    start = int(np.argmin(values))
    low, high = grid[max(start - 1, 0)], grid[min(start + 1, grid.size - 1)]
    result = minimize_scalar(bound, bounds=(low, high), method="bounded",
                             options={"xatol": 1e-10})
    best_s = result.x if result.fun < values[start] else grid[start]
    return float(max(0.0, min(result.fun, values[start]))), float(1.0 + math.exp(best_s))


def selection_candidate_rho(epsilon, delta, *, n_candidates, shape):
    """Largest common ``rho`` of the candidates that keeps the selection within budget.

    Parameters
    ----------
    epsilon : float
        Target total epsilon, ``> 0``.
    delta : float
        Target total delta in ``(0, 1)``.
    n_candidates : float
        Expected number of candidates ``E[K] > 1``.
    shape : float
        ``eta >= 0``.

    Returns
    -------
    rho : float
        Every candidate may be ``rho``-zCDP (``sqrt(2 rho)``-GDP): the selection
        is then ``(epsilon, delta)``-DP by :func:`selection_epsilon`.
    """
    epsilon = check_epsilon(epsilon)
    if math.isinf(epsilon):
        return math.inf

    def excess(log_rho):
        return selection_epsilon(delta, [math.exp(log_rho)], n_candidates=n_candidates,
                                 shape=shape)[0] - epsilon

    low, high = -40.0, math.log(epsilon + 1.0)
    if excess(low) > 0:
        raise ValueError(
            f"No candidate budget fits a total epsilon of {epsilon} at delta={delta} with "
            f"{n_candidates} expected candidates: the selection alone costs more. Raise "
            "epsilon or delta, or lower n_candidates."
        )
    while excess(high) < 0:
        high += 2.0
    rho = math.exp(brentq(excess, low, high, xtol=1e-13, rtol=1e-13))
    # The root may sit a few ulps over the budget: step below it until it provably fits.
    while excess(math.log(rho)) > 0:
        rho *= 1.0 - 1e-10
    return float(rho)
