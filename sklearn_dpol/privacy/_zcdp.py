"""Zero-concentrated DP (Bun and Steinke 2016) and its exact conversion to (eps, delta).

The exponential mechanism with an ``eps0``-DP score is ``eps0``-bounded range,
hence ``eps0**2 / 8``-zCDP (Cesar and Rogers 2021), four times better than the
``eps0**2 / 2`` of a generic ``eps0``-DP mechanism; this is how the library
accounts Frank-Wolfe's vertex selection.
"""

import functools
import math

from scipy.optimize import brentq, minimize_scalar

from ._validation import check_delta, check_epsilon, check_rho

__all__ = [
    "exponential_mechanism_zcdp",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
]


def zcdp_epsilon(rho, delta):
    """Smallest epsilon such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    Uses the conversion of Canonne, Kamath and Steinke (2020, Proposition 12)::

        eps = inf_{a > 1} a*rho + (ln(1/delta) + (a-1) ln(1 - 1/a) - ln a) / (a-1),

    which is tighter than ``rho + 2 sqrt(rho ln(1/delta))``.

    Parameters
    ----------
    rho : float
        The zCDP parameter, ``>= 0`` (``np.inf`` gives ``np.inf``).
    delta : float
        Target delta in ``(0, 1)``.

    Returns
    -------
    epsilon : float
        The infimum above, over a continuous order ``a``.
    """
    rho = check_rho(rho)
    delta = check_delta(delta, mechanism="a zCDP mechanism")
    if math.isinf(rho):
        return math.inf
    if rho == 0.0:
        return 0.0
    log_inv_delta = -math.log(delta)

    def bound(order):
        return (
            order * rho
            + (log_inv_delta + (order - 1) * math.log1p(-1 / order) - math.log(order))
            / (order - 1)
        )

    # The minimiser is near 1 + sqrt(ln(1/delta)/rho); search in log(order - 1).
    centre = math.log(math.sqrt(log_inv_delta / rho) + 1e-12)
    result = minimize_scalar(
        lambda s: bound(1 + math.exp(s)),
        bounds=(centre - 30, centre + 30),
        method="bounded",
        options={"xatol": 1e-12, "maxiter": 1000},
    )
    return float(max(0.0, min(result.fun, bound(1 + math.exp(centre)))))


def zcdp_delta(rho, epsilon):
    """Smallest delta such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    Canonne, Kamath and Steinke (2020, Proposition 12)::

        delta = inf_{a > 1} exp((a-1)(a*rho - eps)) / (a-1) * (1 - 1/a)**a.

    Parameters
    ----------
    rho : float
        The zCDP parameter, ``>= 0``.
    epsilon : float
        Target epsilon, ``>= 0``.

    Returns
    -------
    delta : float
        The infimum above, over a continuous order ``a``, capped at 1.
    """
    rho = check_rho(rho)
    epsilon = check_epsilon(epsilon)
    if rho == 0.0 or math.isinf(epsilon):
        return 0.0
    if math.isinf(rho):
        return 1.0

    def log_bound(order):
        return (
            (order - 1) * (order * rho - epsilon)
            - math.log(order - 1)
            + order * math.log1p(-1 / order)
        )

    centre = math.log((epsilon + rho) / (2 * rho) + 1e-12)
    result = minimize_scalar(
        lambda s: log_bound(1 + math.exp(s)),
        bounds=(centre - 30, centre + 30),
        method="bounded",
        options={"xatol": 1e-12, "maxiter": 1000},
    )
    return float(min(1.0, math.exp(result.fun)))


def zcdp_rho(epsilon, delta):
    """Largest ``rho`` such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``>= 0``; ``np.inf`` returns ``np.inf``.
    delta : float
        Target delta in ``(0, 1)``.

    Returns
    -------
    rho : float
        The root of ``zcdp_delta(rho, epsilon) = delta``, rounded down so that
        the conversion provably stays within ``delta``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, mechanism="a zCDP mechanism")
    return _zcdp_rho(epsilon, delta)


@functools.lru_cache(maxsize=4096)
def _zcdp_rho(epsilon, delta):
    """:func:`zcdp_rho` after validation: a pure function of two floats, so it is
    cached (a fit asks for it twice, a stream on every call; each is a root search)."""
    if math.isinf(epsilon):
        return math.inf
    if epsilon == 0.0:
        return 0.0
    target = math.log(delta)

    def excess(log_rho):
        return math.log(max(zcdp_delta(math.exp(log_rho), epsilon), 1e-320)) - target

    low, high = math.log(epsilon**2 / 100), math.log(epsilon + 1.0)
    while excess(high) < 0:
        high += 2.0
    while excess(low) > 0:
        low -= 5.0
    rho = float(math.exp(brentq(excess, low, high, xtol=1e-14, rtol=1e-15)))
    # The root lands within a few ulps of the budget, on either side: step below
    # it until the conversion provably stays within delta.
    while zcdp_delta(rho, epsilon) > delta:
        rho = math.nextafter(rho, 0.0)
    return rho


def exponential_mechanism_zcdp(epsilon0):
    """Compute the zCDP parameter of an ``epsilon0``-DP exponential mechanism.

    Parameters
    ----------
    epsilon0 : float
        Pure-DP parameter of the selection, ``2 * sensitivity * scale`` for the
        sampling rule ``P(i) ~ exp(scale * score_i)`` (equivalently Gumbel-max
        with noise scale ``1 / scale``).

    Returns
    -------
    rho : float
        ``epsilon0 ** 2 / 8`` (bounded-range analysis, Cesar and Rogers 2021).
    """
    epsilon0 = check_epsilon(epsilon0, name="epsilon0")
    return epsilon0**2 / 8.0
