"""Argument checks shared by the accounting functions.

Every message says what to change, because these errors reach users who asked
for an impossible guarantee.
"""

import math
from numbers import Real

#: The largest finite ``epsilon`` an estimator (or a user of a local-DP estimator) takes.
#: Beyond it a budget protects nothing (``e^1000``), and calibrations that exponentiate it
#: (objective perturbation's ``expm1(epsilon / 2 K)``, zCDP's ``epsilon^2``) overflow or
#: lose every digit of their noise (review 128): ``np.inf`` is the way to ask for no
#: privacy (``doc/privacy.md`` 58.5).
MAX_FINITE_EPSILON = 1000.0


def _as_float(value, name):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    return value


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float; it must be ``>= 0`` (``np.inf`` allowed)."""
    epsilon = _as_float(epsilon, name)
    if epsilon < 0:
        raise ValueError(
            f"{name} must be >= 0 (np.inf for no privacy); got {epsilon}. "
            "Pass a non-negative privacy budget."
        )
    return epsilon


def check_delta(delta, mechanism="this mechanism", name="delta"):
    """Return ``delta`` as a float in ``(0, 1)``."""
    delta = _as_float(delta, name)
    if delta <= 0:
        raise ValueError(
            f"{name}={delta} is impossible for {mechanism}: no Gaussian release is "
            f"(epsilon, 0)-DP. Pass {name} > 0, for example 1e-6, well below 1/n "
            "for n records."
        )
    if delta >= 1:
        raise ValueError(
            f"{name} must be < 1 (a guarantee with {name} >= 1 is void); got "
            f"{delta}. Pass {name} well below 1/n, for example 1e-6."
        )
    return delta


def check_mu(mu, name="mu"):
    """Return ``mu`` as a float; it must be ``>= 0`` (``np.inf`` allowed)."""
    mu = _as_float(mu, name)
    if mu < 0:
        raise ValueError(f"{name} must be >= 0; got {mu}.")
    return mu


def check_rho(rho, name="rho"):
    """Return the zCDP parameter ``rho`` as a float ``>= 0``."""
    rho = _as_float(rho, name)
    if rho < 0:
        raise ValueError(f"{name} must be >= 0; got {rho}.")
    return rho
