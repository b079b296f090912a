"""Exact privacy accounting: analytic Gaussian, Gaussian DP, zCDP, stream schedules,
the Renyi accounting of private selection, and a budget accountant shared by
every fit on one data set.

All functions work under any neighbouring relation; the estimators of this
library use replace-one neighbours and pass the matching sensitivities.
"""

from ._accountant import (
    Charge,
    PrivacyAccountant,
    PrivacyCost,
    PrivacySpend,
    Reservation,
)
from ._gaussian import (
    compose_gdp,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    gaussian_sigma,
)
from ._guarantee import PrivacyGuarantee
from ._local import local_gaussian_report, local_laplace_report, local_sampled_coordinate_report
from ._schedules import AnytimeSchedule, KnownHorizonSchedule
from ._selection import (
    candidate_rdp,
    selection_candidate_rho,
    selection_epsilon,
    selection_rdp,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_mean,
)
from ._zcdp import exponential_mechanism_zcdp, zcdp_delta, zcdp_epsilon, zcdp_rho

__all__ = [
    "AnytimeSchedule",
    "Charge",
    "KnownHorizonSchedule",
    "PrivacyAccountant",
    "PrivacyCost",
    "PrivacyGuarantee",
    "PrivacySpend",
    "Reservation",
    "candidate_rdp",
    "compose_gdp",
    "exponential_mechanism_zcdp",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_sigma",
    "local_gaussian_report",
    "local_laplace_report",
    "local_sampled_coordinate_report",
    "selection_candidate_rho",
    "selection_epsilon",
    "selection_rdp",
    "truncated_negative_binomial_gamma",
    "truncated_negative_binomial_mean",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
]
