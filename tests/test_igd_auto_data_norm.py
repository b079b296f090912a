"""PrivateIGDClassifier(data_norm="auto"): a private quantile of the row norms.

doc/privacy.md, "data_norm='auto' for every estimator": 10% of epsilon buys the
quantile, the model gets ``(0.9 epsilon, delta)`` by basic composition, and the
data is read only through the quantile and the model's own mechanism.
"""

import math

import numpy as np
import pytest

import sklearn_dpol._auto_bounds as auto_bounds_module
from sklearn_dpol import PrivateHyperparameterSearch, PrivateIGDClassifier
from sklearn_dpol._auto_bounds import AUTO_GRID
from sklearn_dpol._core import igd
from sklearn_dpol.linear_model._igd import public_alpha
from sklearn_dpol.privacy import PrivacyAccountant, gaussian_mu


def _data(n=3000, scale=20.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X @ [1.0, -1.0, 0.5, 0.0, 0.2] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return scale * X, y


def _fixed_quantile(value, calls):
    def fake(values, q, candidates, epsilon, state, slope=0.0):
        calls.append((np.array(values), q, epsilon, slope))
        return value
    return fake


@pytest.mark.parametrize("solver", ["igd", "objective_perturbation"])
def test_auto_resolves_near_the_norm_quantile_and_is_charged(solver):
    X, y = _data()
    true = np.quantile(np.linalg.norm(X, axis=1), 0.98)
    with PrivacyAccountant(epsilon=2.0, delta=1e-6) as budget:
        model = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], epsilon=2.0,
                                     solver=solver, random_state=0, accountant=budget)
        model.fit(X, y)
        assert budget.spent().epsilon == pytest.approx(2.0)
    assert model.data_norm == "auto"   # never written back
    assert true <= model.data_norm_ < true * 2 ** 0.5
    assert (model.privacy_.epsilon, model.privacy_.delta) == (2.0, 1e-6)
    assert math.isnan(model.privacy_.mu)
    assert "data_norm_" in model.privacy_.released
    assert "0.2-DP private quantile of the row norms" in model.privacy_.mechanism
    assert model.score(X, y) > 0.8


def test_auto_reads_the_data_only_through_the_quantile(monkeypatch):
    # With the quantile fixed at 8, the model is the one of data_norm=8 at 0.9 epsilon:
    # same alpha rule, same clipping, same noise (the generator is not touched by the fake).
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile", _fixed_quantile(8.0, calls))
    X, y = _data(n=800)
    auto = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], epsilon=1.0,
                                random_state=3).fit(X, y)
    assert len(calls) == 1
    values, q, eps, slope = calls[0]
    np.testing.assert_allclose(values, np.linalg.norm(X, axis=1))
    assert (q, slope) == (0.98, 0.25) and eps == pytest.approx(0.1)
    fixed = PrivateIGDClassifier(data_norm=8.0, classes=[0, 1], epsilon=0.9,
                                 random_state=3).fit(X, y)
    assert auto.data_norm_ == 8.0 and auto.alpha_ == pytest.approx(fixed.alpha_)
    assert auto.noise_scale_ == pytest.approx(fixed.noise_scale_)
    assert auto.sensitivity_ == pytest.approx(fixed.sensitivity_)


def test_calibration_uses_the_rest_of_the_budget():
    X, y = _data()
    model = PrivateIGDClassifier(solver="igd", data_norm="auto", classes=[0, 1], epsilon=1.0,
                                 random_state=0).fit(X, y)
    mu = gaussian_mu(0.9, 1e-6)
    assert model.noise_scale_ == pytest.approx(model.sensitivity_ / mu)
    # Noise off: the noiseless best candidate, no noise, still a model.
    off = PrivateIGDClassifier(solver="igd", data_norm="auto", classes=[0, 1], epsilon=np.inf).fit(X, y)
    norms = np.sort(np.linalg.norm(X, axis=1))
    assert off.data_norm_ == AUTO_GRID[AUTO_GRID >= norms[round(0.98 * len(norms)) - 1]][0]
    assert off.noise_scale_ == 0.0
    assert off.privacy_.mechanism.startswith("none")


def test_auto_stream_resolves_from_its_first_batch_and_keeps_it():
    X, y = _data(n=4000)
    for stream in ("ftrl", "iterate_perturbation"):
        with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
            model = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], stream=stream,
                                         horizon=4000, random_state=0, accountant=budget)
            model.partial_fit(X[:1000], y[:1000])
            first, alpha = model.data_norm_, model.alpha_
            # alpha="auto" is the rule at the resolved bound, not at the worst case.
            # intercept_scaling="auto" follows the resolved bound: first / sqrt(5).
            assert model.intercept_scaling_ == pytest.approx(first / np.sqrt(5), rel=1e-15)
            lipschitz = igd.loss_lipschitz(first, model.intercept_scaling_)
            assert alpha == pytest.approx(
                public_alpha(lipschitz, 4000, gaussian_mu(0.9, 1e-6)))
            for i in range(1000, 4000, 1000):
                model.partial_fit(X[i:i + 1000], y[i:i + 1000])
                assert (model.data_norm_, model.alpha_) == (first, alpha)
            assert budget.spent().epsilon == pytest.approx(1.0)
        assert "first batch's row norms" in model.privacy_.mechanism
        assert model.score(X, y) > 0.7


def test_stream_after_fit_keeps_the_fit_bound_and_says_so():
    X, y = _data(n=4000)
    model = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], horizon=2000,
                                 random_state=0).fit(X[:2000], y[:2000])
    bound = model.data_norm_
    model.partial_fit(X[2000:3000], y[2000:3000])
    assert model.data_norm_ == bound
    assert "from the fit this stream continues" in model.privacy_.mechanism
    # A new fit draws a new quantile (from its own rows).
    calls = []
    import sklearn_dpol._auto_bounds as module
    real = module.private_quantile

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    module.private_quantile = spy
    try:
        model.fit(X[2000:], y[2000:])
    finally:
        module.private_quantile = real
    assert calls == [1]


def test_refusals_before_reading_leave_the_estimator_unchanged():
    X, y = _data(n=200)
    model = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], update="gradient")
    with pytest.raises(ValueError, match="public data_norm"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    tiny = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], epsilon=1e-9)
    with pytest.raises(ValueError, match="data_norm='auto' cannot spend"):
        tiny.fit(X, y)
    assert not hasattr(tiny, "coef_")
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        refused = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], update="gradient",
                                       accountant=budget)
        with pytest.raises(ValueError):
            refused.fit(X, y)
        assert budget.spent().epsilon == 0.0   # nothing read, nothing charged
    with pytest.raises(ValueError):
        PrivateIGDClassifier(data_norm="big", classes=[0, 1]).fit(X, y)


def test_private_selection_accounts_for_the_quantile():
    X, y = _data(n=3000)
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(data_norm="auto", classes=[0, 1], epsilon=1.0),
        {"alpha": [1e-3, 1e-2]}, n_candidates=2.0, random_state=0).fit(X, y)
    assert search.best_estimator_.data_norm_ in AUTO_GRID
    # Each candidate was planned with the rho of its spec: the quantile's epsilon^2/8
    # and the model's mu^2/2 (doc/privacy.md, "The privacy spec").
    # solver="auto" candidates are planned and fitted with solver="igd" (their rho).
    assert search.best_estimator_.solver_ == "igd"
    spec = PrivateIGDClassifier(data_norm="auto", classes=[0, 1], epsilon=1.0,
                                solver="igd")._privacy_spec()
    parts = {part.name: part for part in spec.parts}
    assert parts["data_norm_, a private quantile of the row norms"].epsilon == pytest.approx(0.1)
    assert spec.rho >= math.fsum(part.rho for part in spec.parts)
    assert math.isfinite(search.privacy_.epsilon)


def test_extreme_finite_rows_are_counted_not_refused():
    # A row of 1e308 entries has an overflowing norm; the quantile counts it above every
    # candidate instead of failing after the data were read.
    X, y = _data(n=2000)
    X[0] = 1e308
    for model in (PrivateIGDClassifier(data_norm="auto", classes=[0, 1], random_state=0),
                  PrivateIGDClassifier(data_norm="auto", classes=[0, 1], random_state=0,
                                       solver="objective_perturbation")):
        model.fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.data_norm_)
    from sklearn_dpol import PrivateQFTLRegressor

    reg = PrivateQFTLRegressor(data_norm="auto", random_state=0).fit(X, y.astype(float))
    assert np.all(np.isfinite(reg.coef_))
