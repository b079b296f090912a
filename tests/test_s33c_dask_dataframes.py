"""A dask DataFrame or Series is refused before anything is computed or charged (review
120, M2): scikit-learn's validation would compute it whole on the driver, silently."""

import numpy as np
import pytest

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivacyAccountant,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
)
from sklearn_dpol.model_selection import PrivateHyperparameterSearch

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
from dask.callbacks import Callback  # noqa: E402

N = 400
_rng = np.random.default_rng(0)
X = _rng.uniform(-1, 1, (N, 3))
Y = (X[:, 0] > 0).astype(float)
FRAME = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=4)
SERIES = dd.from_pandas(pd.Series(Y), npartitions=4)


@pytest.fixture
def tasks():
    """The keys of every dask task run while the fixture is active (threaded scheduler)."""
    ran = []
    with dask.config.set(scheduler="threads"), \
            Callback(pretask=lambda key, dsk, state: ran.append(key)):
        yield ran


def estimators(accountant):
    return [
        PrivateQFTLRegressor(data_norm=2.0, accountant=accountant),
        PrivateFrankWolfeLasso(accountant=accountant),
        PrivateMirrorDescentRegressor(accountant=accountant),
        PrivateIGDClassifier(classes=[0.0, 1.0], accountant=accountant),
        ParameterFreeLocalDPRegressor(accountant=accountant),
        MutualInformationPrivateOGDRegressor(accountant=accountant),
        PrivateHyperparameterSearch(PrivateQFTLRegressor(data_norm=2.0),
                                    {"alpha": [0.1, 1.0]}, y_bound=1.0,
                                    accountant=accountant),
    ]


@pytest.mark.parametrize("index", range(7))
@pytest.mark.parametrize("which", ["X", "y", "both"])
def test_dask_frames_are_refused_before_anything_is_computed(index, which, tasks):
    budget = PrivacyAccountant(epsilon=50.0, delta=1e-3)
    est = estimators(budget)[index]
    X_in = FRAME if which in ("X", "both") else X
    y_in = SERIES if which in ("y", "both") else Y
    before = dict(est.__dict__)
    with pytest.raises(ValueError, match=r"dask (DataFrame|Series).*to_dask_array\("
                                         r"lengths=True\).*compute\(\)"):
        est.fit(X_in, y_in)
    assert tasks == []                        # nothing computed
    assert budget.spent().epsilon == 0.0 and budget.charges == []    # nothing charged
    assert est.__dict__ == before             # the estimator unchanged


def test_partial_fit_and_the_scaler_refuse_them_too(tasks):
    for est, args in [(PrivateIGDClassifier(classes=[0.0, 1.0]), (FRAME, Y)),
                      (PrivateQFTLRegressor(data_norm=2.0), (X, SERIES)),
                      (PrivateRangeScaler(), (FRAME,))]:
        call = est.fit if isinstance(est, PrivateRangeScaler) else est.partial_fit
        with pytest.raises(ValueError, match="dask (DataFrame|Series)"):
            call(*args)
    assert tasks == []


def test_predict_refuses_a_dask_frame(tasks):
    est = PrivateQFTLRegressor(data_norm=2.0, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="dask DataFrame"):
        est.predict(FRAME)
    assert tasks == []


def test_sample_weight_as_a_dask_series_is_refused(tasks):
    weights = dd.from_pandas(pd.Series(np.full(N, 0.5)), npartitions=4)
    with pytest.raises(ValueError, match="sample_weight as a dask Series"):
        PrivateQFTLRegressor(data_norm=2.0).fit(X, Y, sample_weight=weights)
    assert tasks == []


def test_a_dask_array_from_the_frame_is_still_reduced_on_the_workers(monkeypatch):
    import sklearn_dpol.linear_model._dask_fit as dask_fit

    calls = []
    original = dask_fit._reduce
    monkeypatch.setattr(dask_fit, "_reduce",
                        lambda *a, **k: (calls.append(1), original(*a, **k))[1])
    with dask.config.set(scheduler="threads"):
        PrivateQFTLRegressor(data_norm=2.0, random_state=0).fit(
            FRAME.to_dask_array(lengths=True), SERIES.to_dask_array(lengths=True))
    assert calls == [1]
