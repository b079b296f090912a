"""delta at or above 1/n draws a LargeDeltaWarning from public values (review 118, M3)."""

import warnings

import numpy as np
import pytest

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    PrivateHyperparameterSearch,
    PrivateIGDClassifier,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
)
from sklearn_dpol.exceptions import LargeDeltaWarning


def _data(seed, n=200):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, 2))
    return X, X[:, 0]


def _messages(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, LargeDeltaWarning)]


@pytest.mark.parametrize("make", [
    lambda d: PrivateQFTLRegressor(delta=d, data_norm=0.75, y_bound=0.5, random_state=0),
    lambda d: MutualInformationPrivateOGDRegressor(delta=d, random_state=0),
    lambda d: PrivateRangeScaler(delta=d, random_state=0),
])
def test_delta_not_below_one_over_n_warns_the_same_for_any_data(make):
    first = _messages(make(0.005), *_data(0))
    second = _messages(make(0.005), *_data(1))
    assert len(first) == 1 and first == second and "1/200" in first[0]
    assert _messages(make(0.004), *_data(0)) == []      # 0.004 * 200 < 1
    assert _messages(make(1e-6), *_data(0)) == []


def test_classifier_and_search_warn_too():
    X, y = _data(0)
    labels = (y > 0).astype(int)
    clf = PrivateIGDClassifier(classes=[0, 1], delta=0.01, data_norm=0.8, random_state=0)
    assert len(_messages(clf, X, labels)) == 1
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(classes=[0, 1], data_norm=0.8), {"alpha": [0.1, 1.0]},
        n_candidates=2.0, delta=0.01, random_state=0)
    assert any("PrivateHyperparameterSearch" in m for m in _messages(search, X, labels))
