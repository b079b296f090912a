"""Private linear models."""

from ._frank_wolfe import PrivateFrankWolfeLasso
from ._igd import PrivateIGDClassifier
from ._qftl import PrivateQFTLRegressor

__all__ = ["PrivateFrankWolfeLasso", "PrivateIGDClassifier", "PrivateQFTLRegressor"]
