"""Private linear models."""

from ._frank_wolfe import PrivateFrankWolfeLasso
from ._igd import PrivateIGDClassifier

__all__ = ["PrivateFrankWolfeLasso", "PrivateIGDClassifier"]
