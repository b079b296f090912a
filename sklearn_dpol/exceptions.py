"""Warnings and errors of sklearn_dpol."""

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(RuntimeWarning):
    """Something is released without the protection of the privacy guarantee.

    Raised, for example, when the label set of a classifier is taken from the
    training labels: pass it from public knowledge to keep it covered.
    """
