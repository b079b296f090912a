"""Private hyperparameter selection."""

from ._search import PrivateHyperparameterSearch

__all__ = ["PrivateHyperparameterSearch"]
