"""Exact accounting for Gaussian mechanisms: the analytic Gaussian and Gaussian DP.

A Gaussian mechanism with L2 sensitivity ``Delta`` and noise standard deviation
``sigma`` is ``mu``-GDP with ``mu = Delta / sigma`` (Dong, Roth and Su 2019), and
its exact privacy profile is (Balle and Wang 2018, Theorem 8)::

    delta(eps; mu) = Phi(mu/2 - eps/mu) - exp(eps) * Phi(-mu/2 - eps/mu).

Every calibration in the library goes through these functions instead of the
classical ``sqrt(2 ln(1.25/delta)) / eps`` bound, which is both looser and
invalid for ``eps > 1``.
"""

import functools
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtri

from ._validation import check_delta, check_epsilon, check_mu

__all__ = [
    "compose_gdp",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_sigma",
]


def gaussian_delta(epsilon, mu):
    """Smallest delta such that a ``mu``-GDP mechanism is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``>= 0`` (``np.inf`` gives 0).
    mu : float
        The Gaussian DP parameter, sensitivity over noise standard deviation.

    Returns
    -------
    delta : float
        ``Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu)``, the
        exact privacy profile (Balle and Wang 2018, Theorem 8).
    """
    epsilon = check_epsilon(epsilon)
    mu = check_mu(mu)
    if mu == 0.0 or math.isinf(epsilon):
        return 0.0
    if math.isinf(mu):
        return 1.0
    upper = mu / 2.0 - epsilon / mu
    lower = -mu / 2.0 - epsilon / mu
    log_first = float(log_ndtr(upper))
    # delta = Phi(upper) * (1 - exp(eps + log Phi(lower) - log Phi(upper))):
    # computing the ratio in log space avoids overflow of exp(eps) and the
    # cancellation of two nearly equal tail probabilities.
    log_ratio = epsilon + float(log_ndtr(lower)) - log_first
    return float(math.exp(log_first) * -math.expm1(min(log_ratio, 0.0)))


def gaussian_mu(epsilon, delta):
    """Largest ``mu`` such that ``mu``-GDP implies ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``>= 0``; ``np.inf`` returns ``np.inf`` (no noise).
    delta : float
        Target delta in ``(0, 1)``. A Gaussian mechanism cannot be
        ``(epsilon, 0)``-DP, so ``delta=0`` raises ``ValueError``.

    Returns
    -------
    mu : float
        The root of ``gaussian_delta(epsilon, mu) = delta``, rounded down so
        that the profile provably stays within ``delta``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, mechanism="a Gaussian mechanism")
    return _gaussian_mu(epsilon, delta)


@functools.lru_cache(maxsize=4096)
def _gaussian_mu(epsilon, delta):
    """:func:`gaussian_mu` after validation: a pure function of two floats, so it is
    cached (a stream asks for the same calibration on every call)."""
    if math.isinf(epsilon):
        return math.inf
    if epsilon == 0.0:
        # delta(0; mu) = 2 Phi(mu/2) - 1 has a closed-form inverse.
        return float(2.0 * ndtri((1.0 + delta) / 2.0))
    target = math.log(delta)

    def excess(log_mu):
        value = gaussian_delta(epsilon, math.exp(log_mu))
        return (math.log(value) if value > 0 else -1e300) - target

    low, high = _bracket_increasing(excess, -1.0, 1.0)
    log_mu = brentq(excess, low, high, xtol=1e-15, rtol=1e-15, maxiter=500)
    mu = math.exp(log_mu)
    # The root is accurate to a few ulps; step below it until the profile is
    # provably within the target, so rounding never overspends.
    while gaussian_delta(epsilon, mu) > delta:
        mu *= 1.0 - 1e-12
    return float(mu)


def gaussian_epsilon(mu, delta):
    """Smallest epsilon such that a ``mu``-GDP mechanism is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    mu : float
        The Gaussian DP parameter; ``np.inf`` (no noise) returns ``np.inf``.
    delta : float
        Target delta in ``(0, 1)``.

    Returns
    -------
    epsilon : float
        The root of ``gaussian_delta(epsilon, mu) = delta``; 0 when ``mu`` is
        small enough that ``(0, delta)``-DP already holds.
    """
    mu = check_mu(mu)
    delta = check_delta(delta, mechanism="a Gaussian mechanism")
    return _gaussian_epsilon(mu, delta)


@functools.lru_cache(maxsize=4096)
def _gaussian_epsilon(mu, delta):
    """:func:`gaussian_epsilon` after validation (pure, cached like :func:`_gaussian_mu`)."""
    if math.isinf(mu):
        return math.inf
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    target = math.log(delta)

    def excess(epsilon):
        value = gaussian_delta(epsilon, mu)
        return target - (math.log(value) if value > 0 else -1e300)

    low, high = _bracket_increasing(excess, 0.0, 1.0, lower_limit=0.0)
    epsilon = brentq(excess, low, high, xtol=1e-15, rtol=1e-15, maxiter=500)
    # The root is accurate to a few ulps and may lie just below the exact epsilon:
    # step above it until the profile is within delta, so that the reported
    # guarantee is never understated (as _gaussian_mu steps below its root).
    # brentq's tolerance is absolute (1e-15), so a small root can be off by many ulps:
    # the step doubles, and the overshoot is at most the distance to the exact root.
    step = math.ulp(epsilon)
    while gaussian_delta(epsilon, mu) > delta:
        epsilon += step
        step *= 2.0
    return float(epsilon)


def gaussian_sigma(sensitivity, epsilon, delta):
    """Noise standard deviation of an ``(epsilon, delta)``-DP Gaussian mechanism.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released vector under the neighbouring relation.
    epsilon, delta : float
        The target guarantee.

    Returns
    -------
    sigma : float
        ``sensitivity / gaussian_mu(epsilon, delta)``; 0 when ``epsilon`` is
        infinite.
    """
    sensitivity = float(sensitivity)
    if not sensitivity >= 0 or math.isinf(sensitivity):
        raise ValueError(
            f"sensitivity must be a finite number >= 0; got {sensitivity!r}."
        )
    mu = gaussian_mu(epsilon, delta)
    return 0.0 if math.isinf(mu) else sensitivity / mu


def compose_gdp(mus):
    """Compose Gaussian DP mechanisms (adaptively): ``mu`` adds in quadrature.

    Parameters
    ----------
    mus : iterable of float
        The ``mu`` of each mechanism.

    Returns
    -------
    mu : float
        ``sqrt(sum(mu_i ** 2))`` (Dong, Roth and Su 2019, Corollary 2); exact.
    """
    values = np.asarray([check_mu(m) for m in mus], dtype=float)
    if values.size == 0:
        return 0.0
    if np.isinf(values).any():
        return math.inf
    return float(math.sqrt(float(np.sum(values**2))))


def _bracket_increasing(func, low, high, lower_limit=None):
    """Grow ``[low, high]`` until an increasing ``func`` changes sign in it."""
    for _ in range(200):
        if func(high) >= 0:
            break
        low, high = high, high + 2.0 * (high - low) + 1.0
    else:  # pragma: no cover - the profiles above are unbounded
        raise RuntimeError("could not bracket the root")
    for _ in range(200):
        if func(low) <= 0:
            return low, high
        if lower_limit is not None and low <= lower_limit:
            return lower_limit, high
        high, low = low, low - 2.0 * (high - low) - 1.0
        if lower_limit is not None:
            low = max(low, lower_limit)
    raise RuntimeError("could not bracket the root")  # pragma: no cover
