"""Weights that are all zero are fitted, not refused (review 123; privacy.md 57.9).

The refusal released whether every weight is 0, a property of the data set: inside a
private search it raised (charged) when the training part's weights happened to be all
zero, on one neighbour and not the other, and a stream's batch of one user told that
user's weight. Now every estimator fits them (its release is noise only), and dask
arrays of unknown chunk sizes are refused before anything is computed (57.9, low).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivacyAccountant,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.model_selection import PrivateHyperparameterSearch

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, (60, 4))
Y_CLASS, Y_REG = (X[:, 0] > 0).astype(int), X[:, 0].copy()

MAKERS = {
    "igd": lambda: PrivateIGDClassifier(classes=[0, 1], solver="igd", random_state=0),
    "igd-op": lambda: PrivateIGDClassifier(classes=[0, 1], solver="objective_perturbation",
                                           random_state=0),
    "qftl": lambda: PrivateQFTLRegressor(random_state=0),
    "fw": lambda: PrivateFrankWolfeLasso(random_state=0),
    "md": lambda: PrivateMirrorDescentRegressor(solver="mirror_descent", random_state=0),
    "md-auto": lambda: PrivateMirrorDescentRegressor(random_state=0),
    "md-op": lambda: PrivateMirrorDescentRegressor(solver="objective_perturbation",
                                                   random_state=0),
    "pf": lambda: ParameterFreeLocalDPRegressor(random_state=0),
    "mi": lambda: MutualInformationPrivateOGDRegressor(random_state=0),
    "mi-bandit": lambda: MutualInformationPrivateOGDRegressor(feedback="bandit",
                                                              random_state=0),
}
LOCAL = ("pf", "mi", "mi-bandit")


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
@pytest.mark.parametrize("name, sparse", [(name, sparse) for name in sorted(MAKERS)
                                          for sparse in (False, True)
                                          if not (sparse and name in LOCAL)])  # dense only
def test_all_zero_weights_are_fitted(name, sparse, method):
    estimator = MAKERS[name]()
    y = Y_CLASS if name.startswith("igd") else Y_REG
    data = sp.csr_matrix(X) if sparse else X
    getattr(estimator, method)(data, y, sample_weight=np.zeros(len(y)))
    assert np.all(np.isfinite(estimator.coef_))


@pytest.mark.parametrize("name", LOCAL)
def test_a_lone_zero_weight_user_reports_like_any_other(name):
    """One user per call: the call's outcome must not tell the user's weight (57.5)."""
    outcomes = []
    for weight in (0.3, 0.0):
        stream = MAKERS[name]().partial_fit(X[:5], Y_REG[:5])
        stream.partial_fit(X[5:6], Y_REG[5:6], sample_weight=[weight])
        outcomes.append(stream.t_)
    assert outcomes == [6, 6]


@pytest.mark.parametrize("label", ["igd", "pf"])
def test_the_search_fits_neighbours_whose_training_weights_may_all_be_zero(label):
    """D has weights (1, 1), D' = (0, 1): D' failed (charged) whenever the split put the
    non-zero weight in the validation part."""
    x = np.array([[0.3, -0.1, 0.2], [-0.2, 0.25, 0.1]])
    estimator, y, extra = ((PrivateIGDClassifier(classes=[0, 1], data_norm=1.0),
                            np.array([0, 1]), {})
                           if label == "igd" else
                           (ParameterFreeLocalDPRegressor(), np.array([0.3, -0.2]),
                            {"y_bound": 1.0}))
    for weights in (np.array([1.0, 1.0]), np.array([0.0, 1.0])):
        for seed in range(8):
            budget = PrivacyAccountant(epsilon=1e6, delta=1e-3)
            search = PrivateHyperparameterSearch(estimator, {"epsilon": [0.5, 1.0]},
                                                 n_candidates=2.0, random_state=seed,
                                                 accountant=budget, **extra)
            search.fit(x, y, sample_weight=weights)
            assert [c.status for c in budget.charges] == ["spent"]


def test_dask_arrays_of_unknown_chunk_sizes_are_refused_before_anything():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    frame = dd.from_pandas(pd.DataFrame(X[:, :3], columns=list("abc")), npartitions=3)
    unknown = frame.to_dask_array()
    assert np.isnan(unknown.shape[0])
    target = frame["a"].to_dask_array()
    for estimator, y in [(PrivateIGDClassifier(classes=[0.0, 1.0]), (target > 0) * 1.0),
                         (ParameterFreeLocalDPRegressor(), target),
                         (PrivateQFTLRegressor(), target)]:
        budget = PrivacyAccountant(epsilon=10.0, delta=1e-5)
        estimator.set_params(accountant=budget)
        with pytest.raises(ValueError, match="unknown chunk sizes.*Nothing was computed"):
            estimator.fit(unknown, y)
        assert budget.charges == []


def test_the_search_plans_under_a_strict_floating_point_state():
    """Review 124: logsumexp's harmless underflow in the plan raised a FloatingPointError
    under np.seterr(all='raise') (public: the search space; before the read)."""
    x = X[:40, :3]
    y = (x[:, 0] > 0).astype(int)
    budget = PrivacyAccountant(epsilon=1e3, delta=1e-3)
    search = PrivateHyperparameterSearch(PrivateIGDClassifier(classes=[0, 1], data_norm=1.0),
                                         {"epsilon": [0.5, 1.0]}, n_candidates=2.0,
                                         random_state=0, accountant=budget)
    with np.errstate(all="raise"):
        search.fit(x, y)
    assert [c.status for c in budget.charges] == ["spent"]
