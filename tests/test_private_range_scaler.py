"""PrivateRangeScaler: private per-feature ranges (doc/privacy.md, private scaling)."""

import math

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import sklearn_dpol._base as base
from sklearn_dpol import PrivateQFTLRegressor, PrivateRangeScaler
from sklearn_dpol.privacy import PrivacyAccountant, zcdp_epsilon


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(loc=[10.0, -3.0, 0.0], scale=[2.0, 0.5, 100.0], size=(n, 3))


def test_ranges_near_true_quantiles_and_transform_in_unit_box():
    X = _data()
    scaler = PrivateRangeScaler(epsilon=3.0, bounds=(-500, 500), n_candidates=2001,
                                random_state=0).fit(X)
    true_low, true_high = np.quantile(X, [0.02, 0.98], axis=0)
    span = true_high - true_low
    step = 1000 / 2000   # the grid's resolution: the quantiles round outward to it
    assert np.all(np.abs(scaler.low_ - true_low) <= 0.1 * span + step)
    assert np.all(np.abs(scaler.high_ - true_high) <= 0.1 * span + step)
    assert np.all(scaler.low_ <= true_low + 0.1 * span)    # outward, up to the noise
    assert np.all(scaler.high_ >= true_high - 0.1 * span)
    Xt = scaler.transform(X)
    assert np.abs(Xt).max() <= 1.0
    assert np.all(np.abs(np.median(Xt, axis=0)) < 0.15)  # centred
    # inverse on the unclipped part
    inside = np.all(np.abs(Xt) < 1, axis=1)
    np.testing.assert_allclose(scaler.inverse_transform(Xt[inside]), X[inside], atol=1e-9)


def test_noise_off_releases_the_best_grid_points():
    X = np.tile(np.arange(1.0, 101.0)[:, None], (1, 2))
    scaler = PrivateRangeScaler(epsilon=np.inf, quantile=0.1, bounds=(0, 200),
                                n_candidates=201).fit(X)
    np.testing.assert_array_equal(scaler.low_, [10.0, 10.0])
    np.testing.assert_array_equal(scaler.high_, [90.0, 90.0])
    assert math.isinf(scaler.privacy_.epsilon)


def test_default_grid_finds_the_scale():
    # Needs n * quantile * epsilon_per_quantile / 2 well above ln(2561) = 7.9: here 50.
    X = _data(n=30000)
    scaler = PrivateRangeScaler(epsilon=1.0, random_state=0).fit(X)
    true_low, true_high = np.quantile(X, [0.02, 0.98], axis=0)
    # the 2.2% geometric grid: within a factor 1.5 of the true quantile, same sign
    for released, true in [(scaler.low_, true_low), (scaler.high_, true_high)]:
        assert np.all(np.sign(released) == np.sign(true))
        ratio = released / true
        assert np.all((ratio > 1 / 1.5) & (ratio < 1.5))


def test_composition_basic_and_zcdp():
    X = _data(n=500)
    pure = PrivateRangeScaler(epsilon=1.0, random_state=0).fit(X)
    assert pure.epsilon_per_quantile_ == pytest.approx(1.0 / 6)
    assert (pure.privacy_.epsilon, pure.privacy_.delta) == (1.0, 0.0)
    # Many features: zCDP composition gives each quantile more.
    Xw = np.random.default_rng(0).normal(size=(500, 40))
    approx = PrivateRangeScaler(epsilon=1.0, delta=1e-6, random_state=0).fit(Xw)
    eps0 = approx.epsilon_per_quantile_
    assert eps0 > 1.0 / 80
    assert zcdp_epsilon(80 * eps0**2 / 8, 1e-6) <= 1.0 + 1e-9
    assert approx.privacy_.delta == 1e-6 and "zCDP" in approx.privacy_.mechanism
    # Few features: basic composition is better, and the guarantee is pure.
    few = PrivateRangeScaler(epsilon=1.0, delta=1e-6, random_state=0).fit(X[:, :1])
    assert few.epsilon_per_quantile_ == pytest.approx(1.0 / 2) and few.privacy_.delta == 0.0


def test_charged_to_the_accountant_and_refunded_on_bad_input():
    X = _data(n=500)
    with PrivacyAccountant(epsilon=2.0, delta=1e-6) as budget:
        with pytest.raises(ValueError, match="shape"):
            PrivateRangeScaler(bounds=([0, 1], [2, 3]), accountant=budget).fit(X)
        assert budget.spent().epsilon == 0.0
        PrivateRangeScaler(epsilon=0.5, accountant=budget, random_state=0).fit(X)
        assert budget.spent().epsilon == pytest.approx(0.5)


def test_bad_bounds_raise_before_any_work():
    X = _data(n=50)
    scaler = PrivateRangeScaler(bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match="low < high"):
        scaler.fit(X)
    assert not hasattr(scaler, "low_")


@pytest.mark.parametrize("bounds", [(0.0, 1.5e-323), (-1e308, 1e308)])
def test_bounds_whose_candidates_break_are_refused_before_the_data_and_refunded(bounds):
    """Finite public bounds can still give a broken grid (linspace overflows, or repeats
    subnormal steps): refused before any value is read, so not charged (fourth review,
    session 28: the grid was checked only inside the quantile, after the data was read)."""
    X = _data(n=100)
    with PrivacyAccountant(epsilon=10.0, delta=0.0) as budget:
        with pytest.raises(ValueError, match="strictly increasing"):
            PrivateRangeScaler(epsilon=1.0, bounds=bounds, accountant=budget).fit(X)
        assert budget.spent().epsilon == 0.0


def test_pipeline_with_a_private_estimator():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=50.0, scale=10.0, size=(20000, 3))
    y = np.clip(((X - 50) / 10) @ [0.3, -0.2, 0.1] / 2, -1, 1)
    with PrivacyAccountant(epsilon=2.0, delta=1e-6) as budget:
        model = make_pipeline(
            PrivateRangeScaler(epsilon=0.5, bounds=(0, 100), accountant=budget,
                               random_state=0),
            PrivateQFTLRegressor(epsilon=1.0, data_norm=math.sqrt(3), y_bound=1.0,
                                 alpha=1e-3, accountant=budget, random_state=1),
        ).fit(X, y)
        assert model.score(X, y) > 0.8
        assert budget.spent().epsilon <= 1.5 + 1e-9  # sequential composition


def test_draws_no_float_noise(monkeypatch):
    class IntegerOnly(np.random.Generator):
        pass

    def refuse(self, *a, **k):
        raise AssertionError("floating-point noise")

    for name in ("standard_normal", "normal", "laplace", "gumbel", "exponential",
                 "standard_exponential", "random", "uniform"):
        setattr(IntegerOnly, name, refuse)
    original = base.make_generator
    monkeypatch.setattr(base, "make_generator",
                        lambda rs, purpose=0: IntegerOnly(original(rs, purpose).bit_generator))
    PrivateRangeScaler(random_state=0).fit(_data(n=200))


def test_no_features_is_a_value_error_with_an_accountant():
    """The planned cost (computed before validation, for the accountant) divided by the
    number of features: a ZeroDivisionError instead of the ValueError (session 29 review)."""
    from sklearn_dpol.privacy import PrivacyAccountant

    acc = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    with pytest.raises(ValueError, match="feature"):
        PrivateRangeScaler(bounds=(-1.0, 1.0), accountant=acc).fit(np.zeros((5, 0)))
    assert acc.spent().n_charges == 0


@pytest.mark.parametrize("delta, d", [(0.0, 3), (1e-6, 40)])
def test_each_quantile_is_drawn_at_the_per_quantile_epsilon(monkeypatch, delta, d):
    """The 2 d quantiles are drawn at ``epsilon_per_quantile_`` (basic composition with
    delta = 0, zCDP with delta > 0): drawing them at twice that epsilon passed every other
    scaler test, since privacy_ is computed apart from the draws (a mutation review,
    session 29)."""
    from sklearn_dpol.preprocessing import _range_scaler as rs

    used = []
    original = rs.private_quantile

    def spy(values, q, candidates, epsilon, rng, slope=0.0):
        used.append(epsilon)
        return original(values, q, candidates, epsilon, rng, slope)

    monkeypatch.setattr(rs, "private_quantile", spy)
    X = np.random.default_rng(0).normal(size=(300, d))
    scaler = PrivateRangeScaler(epsilon=1.0, delta=delta, bounds=(-10, 10),
                                random_state=0).fit(X)
    assert len(used) == 2 * d and all(e == scaler.epsilon_per_quantile_ for e in used)
    if delta == 0.0:
        assert sum(used) <= 1.0
