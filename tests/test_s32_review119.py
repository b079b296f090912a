"""Review 119's findings on session 32's merged features.

* The replay audit decides its refusal on the array its fits use: a pandas DataFrame of
  sparse columns resolves ``solver="auto"`` to IGD, but the audit fits a dense copy
  (objective perturbation), whose recorded Gaussian term is not a release.
* ``OneHotEncoder`` stays off the allow-list of public steps: even with listed
  categories its fit reads the data (raises or warns on a category outside the list,
  casts the listed categories to the dtype inferred from the column).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import OneHotEncoder

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._export import is_public_step
from sklearn_dpol.audit import audit_estimator


def test_the_replay_refuses_what_its_dense_fits_would_run():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    sparse_frame = pd.DataFrame(X).astype(pd.SparseDtype(float, 0.0))
    est = PrivateIGDClassifier(classes=[0, 1], data_norm=1.0)
    assert est._fit_solver(sparse_frame) == "igd"          # the format says IGD ...
    with pytest.raises(ValueError, match="objective perturbation"):
        audit_estimator(est, sparse_frame, y, 0, (np.ones(3) * 0.5, 1 - y[0]), 10, replay=True,
                        random_state=0)


@pytest.mark.parametrize("encoder", [
    OneHotEncoder(categories=[["a", "b"]], handle_unknown="ignore"),
    OneHotEncoder(categories=[[0.0, 2.5]], handle_unknown="ignore"),
    OneHotEncoder(),
])
def test_one_hot_encoders_are_not_public_steps(encoder):
    assert not is_public_step(encoder)
