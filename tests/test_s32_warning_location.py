"""Warnings point at the user's line, whatever the wrappers in between (review 118).

Fixed stack levels pointed into ``sklearn_dpol/_base.py`` once the call lock added
a frame (56.2); every warning about a call now goes through
``exceptions._warn_at_caller``, which walks out of the package and scikit-learn.
"""

import warnings

import numpy as np
import pytest

from sklearn_dpol import PrivateHyperparameterSearch, PrivateIGDClassifier, PrivateQFTLRegressor
from sklearn_dpol.exceptions import DefaultBoundWarning, PrivacyLeakWarning

X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(60, 2))
Y = (X[:, 0] > 0).astype(int)


def _where(category, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return {w.filename for w in caught if issubclass(w.category, category)}


@pytest.mark.parametrize("category, call", [
    (PrivacyLeakWarning, lambda: PrivateIGDClassifier(random_state=0).fit(X, Y)),
    (DefaultBoundWarning, lambda: PrivateIGDClassifier(classes=[0, 1], random_state=0).fit(X, Y)),
    (DefaultBoundWarning, lambda: PrivateQFTLRegressor(random_state=0).partial_fit(X, X[:, 0])),
    (UserWarning, lambda: PrivateIGDClassifier(classes=[0, 1], update="gradient", alpha=1e-3,
                                               random_state=0, data_norm=0.8).fit(X[:3], Y[:3])),
    (PrivacyLeakWarning, lambda: PrivateHyperparameterSearch(
        PrivateIGDClassifier(data_norm=0.8), {"alpha": [0.1, 1.0]}, n_candidates=2.0,
        random_state=0).fit(X, Y)),
])
def test_the_warning_names_the_callers_file(category, call):
    assert _where(category, call) == {__file__}
