"""scikit-learn compatible, differentially private online learners.

Importing the package does not load numba: the numeric kernels compile (and
cache) the first time an estimator is fitted.
"""

from . import privacy
from .linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from .privacy import PrivacyGuarantee

__version__ = "0.1.0"

__all__ = [
    "MutualInformationPrivateOGDRegressor",
    "ParameterFreeLocalDPRegressor",
    "PrivacyGuarantee",
    "PrivateFrankWolfeLasso",
    "PrivateIGDClassifier",
    "PrivateMirrorDescentRegressor",
    "PrivateQFTLRegressor",
    "privacy",
    "__version__",
]
