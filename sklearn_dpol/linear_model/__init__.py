"""Private linear models."""

from ._frank_wolfe import PrivateFrankWolfeLasso
from ._igd import PrivateIGDClassifier
from ._mi_ogd import MutualInformationPrivateOGDRegressor
from ._mirror_descent import PrivateMirrorDescentRegressor
from ._parameter_free import ParameterFreeLocalDPRegressor
from ._qftl import PrivateQFTLRegressor

__all__ = [
    "MutualInformationPrivateOGDRegressor",
    "ParameterFreeLocalDPRegressor",
    "PrivateFrankWolfeLasso",
    "PrivateIGDClassifier",
    "PrivateMirrorDescentRegressor",
    "PrivateQFTLRegressor",
]
