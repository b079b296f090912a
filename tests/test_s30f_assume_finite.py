"""``sklearn.set_config(assume_finite=True)`` does not turn off the refusal of
non-finite records before reading (review 101, L3).

scikit-learn skips its finiteness check under the global ``assume_finite``
setting, even with ``ensure_all_finite=True``. The library's validation runs
the check whatever the setting: a NaN or inf record is refused before the data
is read (refunded, nothing charged, nothing fitted). On the old code the
estimators were charged and released a model computed on NaN mapped to 0.
"""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateHyperparameterSearch,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
)
from sklearn_dpol.privacy import PrivacyAccountant

RNG = np.random.default_rng(0)
N = 300
X = RNG.uniform(-1, 1, size=(N, 3)) / 2
Y = np.clip(X @ [0.5, -0.3, 0.2] + 0.05 * RNG.standard_normal(N), -1, 1)
Y_CLASS = (Y > 0).astype(int)

ESTIMATORS = [
    PrivateIGDClassifier(classes=[0, 1], data_norm=1.0),
    PrivateIGDClassifier(classes=[0, 1], data_norm="auto"),
    PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0),
    PrivateQFTLRegressor(data_norm="auto", y_bound="auto"),
    PrivateFrankWolfeLasso(feature_bound=1.0, y_bound=1.0, max_iter=20),
    PrivateFrankWolfeLasso(feature_bound="auto", y_bound="auto", max_iter=20),
    PrivateMirrorDescentRegressor(data_norm=1.0, y_bound=1.0, max_iter=3),
    PrivateMirrorDescentRegressor(data_norm="auto", y_bound="auto", max_iter=3),
    ParameterFreeLocalDPRegressor(),
    MutualInformationPrivateOGDRegressor(),
    PrivateRangeScaler(),
    PrivateHyperparameterSearch(PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0),
                                {"alpha": [0.1, 1.0]}, n_candidates=2.0, y_bound=1.0),
]
IDS = [f"{type(e).__name__}-{i}" for i, e in enumerate(ESTIMATORS)]


def _targets(estimator):
    inner = getattr(estimator, "estimator", estimator)
    return Y_CLASS if isinstance(inner, PrivateIGDClassifier) else Y


def _bad_inputs(estimator):
    y = _targets(estimator)
    nan_x = X.copy()
    nan_x[7, 1] = np.nan
    inf_x = X.copy()
    inf_x[3, 0] = -np.inf
    cases = {"nan_in_X": (nan_x, y), "inf_in_X": (inf_x, y)}
    if not isinstance(estimator, PrivateRangeScaler) and y.dtype.kind == "f":
        inf_y = y.copy()
        inf_y[5] = np.inf
        nan_y = y.copy()
        nan_y[9] = np.nan
        cases.update({"inf_in_y": (X, inf_y), "nan_in_y": (X, nan_y)})
    return cases


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
def test_non_finite_records_are_refused_before_reading_under_assume_finite(
        tmp_path, estimator):
    methods = ["fit"] + (["partial_fit"] if hasattr(estimator, "partial_fit") else [])
    with sklearn.config_context(assume_finite=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in methods:
            for name, (Xb, yb) in _bad_inputs(estimator).items():
                with PrivacyAccountant(100.0, 1e-3, path=tmp_path / f"{method}_{name}") as acc:
                    est = clone(estimator).set_params(accountant=acc, random_state=0)
                    with pytest.raises(ValueError, match="NaN|infinity"):
                        getattr(est, method)(Xb, yb)
                    assert acc.charges == [], (method, name)
                    assert acc.spent().epsilon == 0.0
                    assert not hasattr(est, "coef_") and not hasattr(est, "data_min_")
                    assert not hasattr(est, "best_estimator_")
        # the global setting is left as the caller set it
        assert sklearn.get_config()["assume_finite"] is True


def test_finite_data_still_fits_under_assume_finite():
    with sklearn.config_context(assume_finite=True):
        model = PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, random_state=0).fit(X, Y)
    assert np.all(np.isfinite(model.coef_))
