"""OneHotEncoder with public categories is a public Pipeline step (review 118, M2)."""

import pickle

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from sklearn_dpol import PrivateHyperparameterSearch, PrivateIGDClassifier
from sklearn_dpol._export import export_public, is_public_step

CATEGORIES = [["red", "green", "blue"]] * 2
RNG = np.random.default_rng(0)
COLOURS = RNG.choice(["red", "green", "blue"], size=(600, 2))
LABELS = (COLOURS[:, 0] == "red").astype(int)


@pytest.mark.parametrize("encoder, public", [
    (OneHotEncoder(categories=CATEGORIES, handle_unknown="ignore"), True),
    (OneHotEncoder(categories=CATEGORIES, handle_unknown="infrequent_if_exist"), True),
    (OneHotEncoder(categories=CATEGORIES), False),                      # raises on one record
    (OneHotEncoder(handle_unknown="ignore"), False),                    # categories from data
    (OneHotEncoder(categories=CATEGORIES, handle_unknown="ignore", min_frequency=5), False),
    (OneHotEncoder(categories=CATEGORIES, handle_unknown="ignore", max_categories=2), False),
])
def test_which_encoders_are_public(encoder, public):
    assert is_public_step(encoder) is public


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_pipeline_with_a_public_encoder_exports_and_searches():
    model = make_pipeline(OneHotEncoder(categories=CATEGORIES, handle_unknown="ignore"),
                          PrivateIGDClassifier(classes=[0, 1], alpha=1e-2, random_state=0))
    model.fit(COLOURS, LABELS)
    public = pickle.loads(pickle.dumps(export_public(model)))
    np.testing.assert_array_equal(public.predict(COLOURS), model.predict(COLOURS))
    # Private selection validates numeric X: categories as public integer codes.
    codes = np.searchsorted(["blue", "green", "red"], COLOURS).astype(float)
    coded = make_pipeline(OneHotEncoder(categories=[[0.0, 1.0, 2.0]] * 2,
                                        handle_unknown="ignore"),
                          PrivateIGDClassifier(classes=[0, 1], alpha=1e-2, random_state=0))
    search = PrivateHyperparameterSearch(coded, {"privateigdclassifier__alpha": [1e-2, 1e-1]},
                                         n_candidates=2.0, random_state=0).fit(codes, LABELS)
    assert search.best_estimator_.predict(codes).shape == (600,)   # accepted, released


def test_an_encoder_that_raises_on_one_record_is_refused_with_the_reason():
    model = make_pipeline(OneHotEncoder(categories=CATEGORIES),
                          PrivateIGDClassifier(classes=[0, 1]))
    codes = np.searchsorted(["blue", "green", "red"], COLOURS).astype(float)
    with pytest.raises(ValueError, match="handle_unknown"):
        PrivateHyperparameterSearch(model, {"privateigdclassifier__alpha": [1e-2]},
                                    random_state=0).fit(codes, LABELS)
