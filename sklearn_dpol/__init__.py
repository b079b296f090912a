"""scikit-learn compatible, differentially private online learners.

Importing the package does not load numba: the numeric kernels compile (and
cache) the first time an estimator is fitted.
"""

from . import model_selection, preprocessing, privacy
from ._export import export_public
from .linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from .model_selection import PrivateHyperparameterSearch
from .preprocessing import PrivateRangeScaler
from .privacy import PrivacyAccountant, PrivacyGuarantee

__version__ = "0.1.0"

__all__ = [
    "MutualInformationPrivateOGDRegressor",
    "ParameterFreeLocalDPRegressor",
    "PrivacyAccountant",
    "PrivacyGuarantee",
    "PrivateFrankWolfeLasso",
    "PrivateHyperparameterSearch",
    "PrivateIGDClassifier",
    "PrivateMirrorDescentRegressor",
    "PrivateQFTLRegressor",
    "PrivateRangeScaler",
    "model_selection",
    "preprocessing",
    "privacy",
    "__version__",
    "export_public",
]
