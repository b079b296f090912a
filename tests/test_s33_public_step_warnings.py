"""Warnings of public Pipeline steps on one finite record (review 121, F1; privacy.md 57.3).

scikit-learn's own steps check their input with a sum per row that overflows on a record
such as [M, M, -M, -M] (numpy warns; its neighbour prints nothing). The library cannot
silence code that runs before its estimator: the documented recipes are a fit under
``np.errstate(all="ignore")`` and a clipping FunctionTransformer (validate=False) first;
inside PrivateHyperparameterSearch the steps are silenced by the search.
"""

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer

from sklearn_dpol import PrivateHyperparameterSearch, PrivateIGDClassifier

M = 1.7e308


def _data(extreme):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] > 0).astype(float)
    X[0] = [M, M, -M, -M] if extreme else [1.0, 1.0, 1.0, 1.0]
    return X, y


def _caught(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught]


def _estimator():
    return PrivateIGDClassifier(epsilon=1.0, data_norm=4.0, classes=[0.0, 1.0], random_state=0)


STEPS = [Binarizer, Normalizer, lambda: FunctionTransformer(np.negative, validate=True)]


@pytest.mark.parametrize("step", STEPS)
def test_the_plain_pipeline_warns_and_errstate_silences_it(step):
    X, y = _data(extreme=True)
    # What the review found (scikit-learn's code, outside the library): it warns.
    assert _caught(lambda: make_pipeline(step(), _estimator()).fit(X, y))

    def silenced():
        with np.errstate(all="ignore"):
            make_pipeline(step(), _estimator()).fit(X, y)

    assert _caught(silenced) == []
    X_neighbour, _ = _data(extreme=False)
    assert _caught(lambda: make_pipeline(step(), _estimator()).fit(X_neighbour, y)) == []


@pytest.mark.parametrize("step", STEPS)
def test_a_clipping_first_step_keeps_the_public_step_silent(step):
    X, y = _data(extreme=True)
    clip = FunctionTransformer(np.clip, kw_args={"a_min": -4.0, "a_max": 4.0})
    assert _caught(lambda: make_pipeline(clip, step(), _estimator()).fit(X, y)) == []


@pytest.mark.parametrize("step", STEPS)
def test_inside_the_search_the_public_step_is_silent(step):
    X, y = _data(extreme=True)
    search = PrivateHyperparameterSearch(
        make_pipeline(step(), _estimator()), {"privateigdclassifier__alpha": [1e-2, 1e-1]},
        n_candidates=2, delta=1e-6, random_state=0)
    assert _caught(lambda: search.fit(X, y)) == []
