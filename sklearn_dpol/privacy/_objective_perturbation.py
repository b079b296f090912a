"""Exact privacy profile of Gaussian objective perturbation (Kifer, Smith and Thakurta 2012).

The mechanism releases the minimiser of

    J(theta) = sum_i f(<z_i, theta>; y_i) + (Lambda / 2) ||theta||^2 + <b, theta>,
    b ~ N(0, sigma^2 I),

for a convex GLM loss with ``|f'| <= L`` and ``0 <= f'' <= beta`` and rows
``||z_i|| <= R``. ``doc/privacy.md`` (section 7) shows
that, under replace-one neighbours, the privacy loss of the output is at most

    eps_J + mu * chi + mu^2 / 2,

where ``eps_J = ln(1 + beta R^2 / Lambda)`` bounds the Jacobian ratio,
``mu = 2 L R / sigma`` and ``chi = ||P b|| / sigma`` is chi-distributed with
``dof <= 2`` degrees of freedom (``P`` projects onto the span of the two rows
that differ; ``dof = 2K`` for ``K`` problems solved jointly). The exact
hockey-stick divergence of that bound is the integral computed here. When the
approximate minimiser is released with extra Gaussian noise (approximate minima
perturbation, Iyengar et al. 2019), that release is a Gaussian mechanism of GDP
parameter ``output_mu`` composed adaptively with the first, and its exact
profile enters the same integral.
"""

import functools
import math
import warnings

from scipy.integrate import IntegrationWarning, quad
from scipy.optimize import brentq
from scipy.special import gammaln, log_ndtr

from ._validation import check_delta, check_epsilon, check_mu

__all__ = ["objective_perturbation_delta", "objective_perturbation_mu"]

# Beyond this many units past its mode the chi density is below exp(-1000).
_CHI_TAIL = 45.0
_QUAD = dict(epsabs=0.0, epsrel=1e-11, limit=400)


def objective_perturbation_delta(epsilon, mu, *, dof=2, jacobian_epsilon=0.0, output_mu=0.0):
    """Smallest delta for which objective perturbation is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``>= 0``.
    mu : float
        Gradient sensitivity over the noise standard deviation, ``2 L R / sigma``
        (times ``sqrt(K)`` for ``K`` problems).
    dof : int, default=2
        Dimension of the span of the gradient differences: 2 for one problem
        under replace-one, ``2K`` for ``K`` problems.
    jacobian_epsilon : float, default=0.0
        The bound ``K ln(1 + beta R^2 / Lambda)`` on the log Jacobian ratio.
    output_mu : float, default=0.0
        GDP parameter of the Gaussian noise added to the approximate minimiser;
        0 releases the exact minimiser.

    Returns
    -------
    delta : float
    """
    epsilon = check_epsilon(epsilon)
    mu, output_mu = check_mu(mu), check_mu(output_mu, name="output_mu")
    return _profile(epsilon, mu, dof, float(jacobian_epsilon), output_mu)


def _profile(epsilon, mu, dof, jacobian_epsilon, output_mu):
    """:func:`objective_perturbation_delta` after validation."""
    if math.isinf(epsilon) or mu == 0.0 and output_mu == 0.0 and jacobian_epsilon <= epsilon:
        return 0.0
    if math.isinf(mu) or math.isinf(output_mu):
        return 1.0
    slack = epsilon - float(jacobian_epsilon)
    if mu == 0.0:
        return _gaussian_profile(slack, output_mu)

    log_normaliser = _chi_log_normaliser(dof)

    def integrand(x):
        remaining = slack - mu * x - mu * mu / 2.0
        return (math.exp(_chi_logpdf(x, dof, log_normaliser))
                * _gaussian_profile(remaining, output_mu))

    # The loss bound exceeds the slack beyond x = crossing: the integrand is 1
    # there (times the density) when output_mu = 0, and switches smoothly otherwise.
    crossing = max((slack - mu * mu / 2.0) / mu, 0.0)
    upper = max(crossing, math.sqrt(dof)) + _CHI_TAIL
    # At extreme public parameters (epsilon 1e-3, delta 1e-12) quad reports roundoff
    # (IntegrationWarning) while the value is still accurate to about 2e-12 relative
    # (checked against mpmath by an independent review), far inside the calibration's
    # 1e-8 margin: the warning would only confuse.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        tail = quad(integrand, crossing, upper, **_QUAD)[0]
        head = (quad(integrand, 0.0, crossing, **_QUAD)[0]
                if crossing > 0 and output_mu > 0 else 0.0)
    return float(min(max(head + tail, 0.0), 1.0))


# Smallest delta calibrated (doc/privacy.md 54.16.3): at 1e-320 the computed
# profile understated the cost by 0.2%, at 5e-324 the calibration failed.
_MIN_DELTA = 1e-303


def objective_perturbation_mu(epsilon, delta, *, dof=2, jacobian_epsilon=0.0, output_ratio=0.0):
    """Largest ``mu`` such that objective perturbation is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> jacobian_epsilon``; ``np.inf`` returns ``np.inf``.
    delta : float
        Target delta in ``[1e-303, 1)``: below (subnormal territory) the
        profile's arithmetic understates the cost, so it is refused.
    dof : int, default=2
        See :func:`objective_perturbation_delta`.
    jacobian_epsilon : float, default=0.0
        See :func:`objective_perturbation_delta`.
    output_ratio : float, default=0.0
        The output noise is calibrated to ``output_mu = output_ratio * mu``.

    Returns
    -------
    mu : float
        The root, stepped down until the computed profile is at most
        ``delta (1 - 1e-8)`` (a margin well above the quadrature's error).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, mechanism="objective perturbation")
    if math.isinf(epsilon):
        return math.inf
    if not delta >= _MIN_DELTA:
        raise ValueError(
            f"objective perturbation needs delta >= {_MIN_DELTA:g} (below, floating-point "
            f"arithmetic cannot calibrate it exactly); got delta={delta:.3g}."
        )
    return _calibrated_mu(epsilon, delta, dof, float(jacobian_epsilon),
                          float(output_ratio))


@functools.lru_cache(maxsize=1024)
def _calibrated_mu(epsilon, delta, dof, jacobian_epsilon, output_ratio):
    """:func:`objective_perturbation_mu` after validation: a pure function of
    public numbers, so it is cached (refits at the same target, a stream's calls
    and ``alpha="auto"`` ask for the same calibration again)."""
    if not epsilon > jacobian_epsilon:
        raise ValueError(
            f"epsilon={epsilon!r} must exceed the Jacobian term {jacobian_epsilon!r}; "
            "increase the regularisation."
        )

    def profile(mu):
        return _profile(epsilon, mu, dof, jacobian_epsilon, output_ratio * mu)

    def excess(log_mu):
        value = profile(math.exp(log_mu))
        return (math.log(value) if value > 0 else -1e300) - math.log(delta)

    low, high = -1.0, 1.0
    while excess(high) < 0:
        low, high = high, high + 2.0
    while excess(low) > 0:
        low, high = low - 2.0, low
    mu = math.exp(brentq(excess, low, high, xtol=1e-13, rtol=1e-13, maxiter=500))
    # Quadrature is accurate to about 1e-11 relative, not exact: keep a margin.
    target = delta * (1.0 - 1e-8)
    while profile(mu) > target:
        mu *= 1.0 - 1e-10
    return float(mu)


@functools.lru_cache(maxsize=64)
def _chi_log_normaliser(dof):
    """The two constant terms of :func:`_chi_logpdf` (computed once per ``dof``)."""
    return (dof / 2.0 - 1.0) * math.log(2.0), float(gammaln(dof / 2.0))


def _chi_logpdf(x, dof, log_normaliser=None):
    if x <= 0.0:
        return -math.inf if dof > 1 else math.log(2.0) - 0.5 * math.log(2.0 * math.pi)
    power, gamma = _chi_log_normaliser(dof) if log_normaliser is None else log_normaliser
    return (dof - 1) * math.log(x) - x * x / 2.0 - power - gamma


def _gaussian_profile(epsilon, mu):
    """``delta(epsilon; mu)`` of a Gaussian mechanism, for any real ``epsilon``.

    With ``mu = 0`` it is ``(1 - e^epsilon)_+``: a deterministic privacy loss.
    """
    if mu == 0.0:
        return -math.expm1(epsilon) if epsilon < 0 else 0.0
    log_upper = float(log_ndtr(mu / 2.0 - epsilon / mu))
    log_ratio = epsilon + float(log_ndtr(-mu / 2.0 - epsilon / mu)) - log_upper
    return math.exp(log_upper) * -math.expm1(min(log_ratio, 0.0))
