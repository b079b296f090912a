"""PrivateQFTLRegressor(data_norm="auto"): a private quantile of the row norms."""

import math

import numpy as np
import pytest

import sklearn_dpol._auto_bounds as auto_bounds_module
import sklearn_dpol.linear_model._qftl as qftl_module
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol.privacy import PrivacyAccountant, gaussian_mu


def _data(n=20000, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(n, 4))
    y = np.clip(X @ [0.1, -0.1, 0.05, 0.0] / scale * 2, -1, 1)
    return X, y


def test_auto_resolves_near_the_norm_quantile_and_is_charged():
    X, y = _data()
    true = np.quantile(np.linalg.norm(X, axis=1), 0.98)
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        model = PrivateQFTLRegressor(data_norm="auto", alpha=1e-3, random_state=0,
                                     accountant=budget).fit(X, y)
        assert budget.spent().epsilon == pytest.approx(1.0)
    assert model.data_norm == "auto"  # never written back
    assert true / 1.5 < model.data_norm_ < true * 1.5
    assert (model.privacy_.epsilon, model.privacy_.delta) == (1.0, 1e-6)
    assert math.isnan(model.privacy_.mu)
    assert "data_norm_" in model.privacy_.released
    assert model.score(X, y) > 0.8
    # The statistics get (0.9 epsilon, delta), calibrated on the resolved bound.
    mu = gaussian_mu(0.9, 1e-6)
    assert model.noise_scale_ == pytest.approx(model.sensitivity() / mu)
    # the fit's statistics: section 54.8's rounding allowance for a sum of n atoms
    from sklearn_dpol._core import qftl
    from sklearn_dpol.privacy._rounding import sum_rounding_factor
    assert model.sensitivity_ == model.sensitivity() * sum_rounding_factor(
        X.shape[0], qftl.ATOM_NORM_FRACTION)


def test_auto_reads_the_data_only_through_the_quantile(monkeypatch):
    calls = []

    def fake(values, q, candidates, epsilon, state, slope=0.0):
        calls.append((np.array(values), q, epsilon))
        return 4.0

    monkeypatch.setattr(auto_bounds_module, "private_quantile", fake)
    X, y = _data(n=500)
    model = PrivateQFTLRegressor(data_norm="auto", epsilon=2.0, random_state=0).fit(X, y)
    assert len(calls) == 1
    values, q, eps = calls[0]
    np.testing.assert_allclose(values, np.linalg.norm(X, axis=1))
    assert q == 0.98 and eps == pytest.approx(0.2)
    assert model.data_norm_ == 4.0
    # Rows are clipped to the resolved bound exactly as with data_norm=4.0.
    fixed = PrivateQFTLRegressor(data_norm=4.0, epsilon=1.8, random_state=0)
    np.testing.assert_allclose(model._statistics(X, y).sum(0, 500),
                               fixed.fit(X, y)._statistics(X, y).sum(0, 500))


def test_noise_off_takes_the_best_candidate():
    X = np.zeros((100, 2))
    X[:, 0] = np.linspace(0.5, 3.0, 100)
    y = np.zeros(100)
    model = PrivateQFTLRegressor(data_norm="auto", epsilon=np.inf).fit(X, y)
    grid = qftl_module._AUTO_GRID
    # The smallest candidate at or above the 98th of the 100 row norms.
    assert model.data_norm_ == grid[grid >= np.sort(X[:, 0])[97]][0]


def test_auto_stream_resolves_from_its_first_batch_and_is_charged():
    X, y = _data(n=4000)
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        model = PrivateQFTLRegressor(data_norm="auto", accountant=budget, random_state=0)
        model.partial_fit(X[:2000], y[:2000])
        first = model.data_norm_
        model.partial_fit(X[2000:], y[2000:])
        assert model.data_norm_ == first  # frozen for the stream
        assert budget.spent().epsilon == pytest.approx(1.0)
    assert math.isnan(model.privacy_.mu) and model.privacy_.epsilon == 1.0
    assert "first batch" in model.privacy_.mechanism
