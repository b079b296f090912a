"""Private linear models."""

from ._igd import PrivateIGDClassifier
from ._qftl import PrivateQFTLRegressor

__all__ = ["PrivateIGDClassifier", "PrivateQFTLRegressor"]
