"""Warnings and errors of sklearn_dpol."""

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(RuntimeWarning):
    """Something is released without the protection of the privacy guarantee.

    Raised, for example, when the label set of a classifier is taken from the
    training labels: pass it from public knowledge to keep it covered.

    See Also
    --------
    sklearn_dpol.PrivacyGuarantee : Its ``released`` field says what is covered.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateIGDClassifier
    >>> from sklearn_dpol.exceptions import PrivacyLeakWarning
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateIGDClassifier(random_state=0).fit(X, y)  # no classes=[0, 1]
    >>> any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    True
    """
