"""Private linear models."""

from ._igd import PrivateIGDClassifier

__all__ = ["PrivateIGDClassifier"]
