"""PrivateQFTLRegressor.fit on a dask array takes in-memory sample weights (review 120, L3).

The weights are validated before anything is computed, cut into X's row blocks and
folded into each block's sums by the in-memory code, so the model is the in-memory
weighted fit (to rounding) at eps=inf and at eps=1 with one seed (the same noise).
Threaded scheduler, small arrays.
"""

import numpy as np
import pytest

from sklearn_dpol import PrivacyAccountant, PrivateQFTLRegressor

da = pytest.importorskip("dask.array", reason="dask is not installed")
dask = pytest.importorskip("dask")

N, D = 600, 4
_rng = np.random.default_rng(5)
X = _rng.uniform(-1.0, 1.0, size=(N, D)) * np.array([1, 1, 4, 4])   # rows clipped
Y = np.clip(X @ np.linspace(-0.5, 0.5, D) + 0.1 * _rng.standard_normal(N), -2, 2)
W = _rng.uniform(0.0, 1.0, size=N)


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


def model(**kwargs):
    return PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0, alpha=1.0, **kwargs)


def lazy(X_=X):
    return da.from_array(X_, chunks=(170, 2))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_dask_fit_is_the_weighted_in_memory_fit_without_noise(fit_intercept):
    memory = model(epsilon=np.inf, fit_intercept=fit_intercept).fit(X, Y, sample_weight=W)
    dask_fit = model(epsilon=np.inf, fit_intercept=fit_intercept).fit(
        lazy(), da.from_array(Y, chunks=200), sample_weight=W)
    np.testing.assert_allclose(dask_fit.coef_, memory.coef_, rtol=1e-10, atol=1e-13)
    assert dask_fit.intercept_ == pytest.approx(memory.intercept_, rel=1e-10, abs=1e-13)
    assert dask_fit.privacy_ == memory.privacy_
    # The weights matter (the test can tell): the unweighted fit differs.
    unweighted = model(epsilon=np.inf, fit_intercept=fit_intercept).fit(X, Y)
    assert not np.allclose(unweighted.coef_, memory.coef_, rtol=1e-3)


def test_weighted_dask_fit_with_noise_is_the_in_memory_release():
    memory = model(epsilon=1.0, random_state=3).fit(X, Y, sample_weight=W)
    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    dask_fit = model(epsilon=1.0, random_state=3, accountant=budget).fit(
        lazy(), Y, sample_weight=W)
    # Same seed, same sums to rounding: the same noise draw (not bit-identical: the
    # blocks' sums are added in another order than the in-memory sum).
    np.testing.assert_allclose(dask_fit.coef_, memory.coef_, rtol=1e-9, atol=1e-12)
    assert dask_fit.noise_scale_ == memory.noise_scale_ > 0
    assert dask_fit.sensitivity_ == memory.sensitivity_
    assert dask_fit.privacy_ == memory.privacy_
    assert [c.status for c in budget.charges] == ["spent"]


def test_neighbouring_weighted_dask_statistics_move_by_at_most_the_sensitivity():
    """Noise off: replacing one record (its row, target and weight) moves the reduced
    statistics by at most the sensitivity the noise is calibrated to."""
    from sklearn_dpol.linear_model._dask_fit import dask_statistics

    X2, Y2, W2 = X.copy(), Y.copy(), W.copy()
    X2[17], Y2[17], W2[17] = [3.0, -3.0, 3.0, -3.0], -5.0, 1.0
    est = model(epsilon=1.0, random_state=0)
    a = dask_statistics(est, lazy(), Y, W).total
    b = dask_statistics(model(epsilon=1.0, random_state=0), lazy(X2), Y2, W2).total
    moved = np.linalg.norm(a - b)
    fitted = model(epsilon=1.0, random_state=0).fit(lazy(), Y, sample_weight=W)
    assert 0 < moved <= fitted.sensitivity_ * (1 + 1e-12)


@pytest.mark.parametrize("weights, match", [
    (np.full(N, 1.5), r"\[0, 1\]"),
    (np.ones(N - 1), "shape"),
])
def test_bad_weights_are_refused_before_anything_is_computed(weights, match, monkeypatch):
    import sklearn_dpol.linear_model._dask_fit as dask_fit

    def fail(*args, **kwargs):
        raise AssertionError("computed")
    monkeypatch.setattr(dask_fit, "_reduce", fail)
    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    est = model(epsilon=1.0, accountant=budget)
    with pytest.raises(ValueError, match=match):
        est.fit(lazy(), Y, sample_weight=weights)
    assert not hasattr(est, "coef_")
    assert budget.spent().epsilon == 0.0


def test_weights_as_a_dask_array_stay_refused_before_anything_is_computed(monkeypatch):
    """As for Frank-Wolfe and mirror descent: in-memory weights only."""
    import sklearn_dpol.linear_model._dask_fit as dask_fit

    def fail(*args, **kwargs):
        raise AssertionError("computed")
    monkeypatch.setattr(dask_fit, "_reduce", fail)
    with pytest.raises(ValueError, match="sample_weight as a dask array is not supported"):
        model(epsilon=1.0).fit(lazy(), Y, sample_weight=da.from_array(W, chunks=170))
