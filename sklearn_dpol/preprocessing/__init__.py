"""Private preprocessing: the first step of a private Pipeline."""

from ._range_scaler import PrivateRangeScaler

__all__ = ["PrivateRangeScaler"]
