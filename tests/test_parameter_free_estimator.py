"""ParameterFreeLocalDPRegressor: validation, atomic calls, streaming, privacy_."""

import math
import pickle

import numpy as np
import pytest

from sklearn_dpol import ParameterFreeLocalDPRegressor


def data(seed=0, n=400, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ np.linspace(-0.5, 0.5, d) + 0.2 + 0.05 * rng.normal(size=n)
    return X, y


BAD_EPSILONS = [
    np.ones(399),            # wrong length
    -np.ones(400),           # negative
    np.r_[np.ones(399), np.nan],
    np.r_[np.ones(399), 0.0],
    np.ones((400, 1)),       # 2-D
    np.array(["a"] * 400),
]


@pytest.mark.parametrize("bad", BAD_EPSILONS, ids=["length", "negative", "nan", "zero", "2d",
                                                    "str"])
def test_bad_sample_epsilon_raises_and_leaves_the_estimator_unchanged(bad):
    X, y = data()
    reg = ParameterFreeLocalDPRegressor(random_state=0)
    before = pickle.dumps(reg)
    with pytest.raises(ValueError, match="sample_epsilon"):
        reg.fit(X, y, sample_epsilon=bad)
    assert pickle.dumps(reg) == before
    reg.partial_fit(X, y)
    before = pickle.dumps(reg)
    with pytest.raises(ValueError, match="sample_epsilon"):
        reg.partial_fit(X, y, sample_epsilon=bad)
    assert pickle.dumps(reg) == before
    with pytest.raises(ValueError, match="sample_epsilon"):
        reg.fit(X, y, sample_epsilon=bad)
    assert pickle.dumps(reg) == before


@pytest.mark.parametrize("weights", [[1, 1, 1], [1, -1, 1, 1], [0, 0, 0, 0], [1, np.nan, 1, 1]])
def test_bad_feature_weights(weights):
    X, y = data()
    reg = ParameterFreeLocalDPRegressor(feature_weights=weights)
    with pytest.raises(ValueError, match="feature_weights"):
        reg.fit(X, y)
    assert not hasattr(reg, "coef_")


def test_feature_weights_are_normalised_over_nonzero():
    X, y = data()
    reg = ParameterFreeLocalDPRegressor(feature_weights=[2, 0, 1, 1], random_state=0).fit(X, y)
    np.testing.assert_allclose(reg.feature_weights_, [0.5, 0, 0.25, 0.25])
    assert math.isinf(reg.privacy_.epsilon)  # a public coordinate: no row-level guarantee
    assert "public" in reg.privacy_.mechanism and "[1]" in reg.privacy_.mechanism


@pytest.mark.parametrize("name, value", [("gradient_bound", 1e-200), ("prior_strength", 1e200)])
def test_out_of_range_prior_parameters(name, value):
    X, y = data()
    with pytest.raises(ValueError, match=name):
        ParameterFreeLocalDPRegressor(**{name: value}).fit(X, y)


@pytest.mark.parametrize("method", ["coordinate", "reduction"])
@pytest.mark.parametrize("prior", ["conjugate", "improper"])
def test_partial_fit_continues_the_recursion(method, prior):
    X, y = data(1)
    eps = np.random.default_rng(2).choice([0.5, 3.0, np.inf], size=400)
    whole = ParameterFreeLocalDPRegressor(method=method, prior=prior, random_state=4)
    whole.fit(X, y, sample_epsilon=eps)
    split = ParameterFreeLocalDPRegressor(method=method, prior=prior, random_state=4)
    split.fit(X[:150], y[:150], sample_epsilon=eps[:150])
    split.partial_fit(X[150:300], y[150:300], sample_epsilon=eps[150:300])
    split.partial_fit(X[300:], y[300:], sample_epsilon=eps[300:])
    np.testing.assert_array_equal(split.coef_, whole.coef_)
    assert split.intercept_ == whole.intercept_ and split.t_ == whole.t_ == 400
    # A stream started by partial_fit is also one recursion.
    a = ParameterFreeLocalDPRegressor(method=method, prior=prior, random_state=4)
    b = ParameterFreeLocalDPRegressor(method=method, prior=prior, random_state=4)
    a.partial_fit(X, y, sample_epsilon=eps)
    b.partial_fit(X[:200], y[:200], sample_epsilon=eps[:200])
    b.partial_fit(X[200:], y[200:], sample_epsilon=eps[200:])
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_privacy_report():
    X, y = data()
    eps = np.r_[np.full(100, 0.5), np.full(100, 2.0), np.full(200, np.inf)]
    reg = ParameterFreeLocalDPRegressor(random_state=0).fit(X, y, sample_epsilon=eps)
    p = reg.privacy_
    assert p.epsilon == 2.0 and p.delta == 0.0 and math.isnan(p.mu)
    assert p.neighbouring == "replace-one (local: each user's report)"
    # "auto" with per-user budgets: the Laplace reports (section 54.2)
    assert reg.randomizer_ == "laplace"
    assert "local Laplace randomiser, each user epsilon_t = sum_j tau_tj" in p.mechanism
    sampled = ParameterFreeLocalDPRegressor(randomizer="sampled_coordinate", random_state=0)
    sampled.fit(X, y, sample_epsilon=eps)
    assert sampled.randomizer_ == "sampled_coordinate"
    assert "local sampled-coordinate randomiser" in sampled.privacy_.mechanism
    assert p.n_records == 400 and "200 chose epsilon_t=inf" in p.records
    assert reg.sample_epsilon_summary_ == {
        "n_users": 400, "n_without_noise": 200, "min_finite_epsilon": 0.5,
        "max_finite_epsilon": 2.0}
    reg.partial_fit(X[:10], y[:10], sample_epsilon=np.full(10, 5.0))
    assert reg.privacy_.epsilon == 5.0 and reg.privacy_.n_records == 410
    everyone_public = ParameterFreeLocalDPRegressor(epsilon=np.inf).fit(X, y)
    assert math.isinf(everyone_public.privacy_.epsilon)
    assert everyone_public.privacy_.mechanism.startswith("none")
    default = ParameterFreeLocalDPRegressor(epsilon=0.7, random_state=0).fit(X, y)
    assert default.privacy_.epsilon == 0.7


def test_stream_hyperparameters_are_frozen_and_export_is_public():
    X, y = data()
    reg = ParameterFreeLocalDPRegressor(random_state=0).fit(X, y)
    reg.set_params(prior="conjugate")   # the default is "improper"
    before = pickle.dumps(reg)
    with pytest.raises(ValueError, match="changed"):
        reg.partial_fit(X, y)
    assert pickle.dumps(reg) == before
    reg.set_params(prior="conjugate")
    public = reg.export_public()
    np.testing.assert_array_equal(public.predict(X), reg.predict(X))
    assert not hasattr(public, "_rng")
    with pytest.raises(ValueError, match="public export"):
        public.partial_fit(X, y)


def test_learns_when_most_users_need_no_noise():
    # Seed section 4, scenario 1: a few private users barely hurt.
    X, y = data(5, n=20_000)
    rng = np.random.default_rng(6)
    eps = np.where(rng.random(20_000) < 0.05, 2.0, np.inf)
    for method in ("coordinate", "reduction"):
        # The seed's learner (conjugate prior), as in its section 4.
        mixed = ParameterFreeLocalDPRegressor(method=method, prior="conjugate",
                                              randomizer="laplace", random_state=0)
        everyone = ParameterFreeLocalDPRegressor(method=method, prior="conjugate", epsilon=2.0,
                                                 randomizer="laplace", random_state=0)
        mixed_score = mixed.fit(X, y, sample_epsilon=eps).score(X, y)
        assert mixed_score > 0.95
        assert mixed_score > everyone.fit(X, y).score(X, y) + 0.1


def test_a_stream_that_mixes_randomisers_names_both():
    """Review 112: after a sampled call and a call with per-user budgets (Laplace),
    privacy_.mechanism named only the last call's randomiser."""
    import numpy as np

    from sklearn_dpol import ParameterFreeLocalDPRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(400, 10))
    y = np.clip(X.sum(axis=1), -1, 1)
    reg = ParameterFreeLocalDPRegressor(epsilon=1.0, random_state=0)
    reg.partial_fit(X[:200], y[:200])
    assert reg.randomizer_ == "sampled_coordinate"
    assert "sampled-coordinate" in reg.privacy_.mechanism
    assert "Laplace" not in reg.privacy_.mechanism
    reg.partial_fit(X[200:], y[200:], sample_epsilon=np.full(200, 1.0))
    assert reg.randomizer_ == "laplace"
    assert "sampled-coordinate" in reg.privacy_.mechanism and "Laplace" in reg.privacy_.mechanism
    reg.fit(X, y)                                # a new stream forgets the old one
    assert "Laplace" not in reg.privacy_.mechanism


def test_per_user_budgets_warn_once_when_they_force_the_noisier_randomiser():
    """Review 128: sample_epsilon switched randomizer='auto' to the Laplace reports silently
    (R^2 -0.07 against 0.13-0.17 on cal_housing). The warning depends on the parameters and
    on sample_epsilon being passed, never on the data or the budgets' values."""
    import warnings

    from sklearn_dpol import ParameterFreeLocalDPRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 5))
    y = X[:, 0] / 2

    def messages(est, calls):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for kwargs in calls:
                est.partial_fit(X, y, **kwargs)
        return [str(w.message) for w in caught if "per-user sample_epsilon" in str(w.message)]

    budgets = dict(sample_epsilon=np.full(200, 2.0))
    first = messages(ParameterFreeLocalDPRegressor(epsilon=2.0, random_state=0),
                     [budgets, budgets, budgets])
    assert len(first) == 1 and "randomizer='sampled_coordinate'" in first[0]
    other = messages(ParameterFreeLocalDPRegressor(epsilon=2.0, random_state=1),
                     [dict(sample_epsilon=rng.uniform(0.5, 5.0, 200))])
    assert other == first
    assert messages(ParameterFreeLocalDPRegressor(epsilon=2.0), [{}]) == []
    assert messages(ParameterFreeLocalDPRegressor(epsilon=2.0, randomizer="laplace"),
                    [budgets]) == []


@pytest.mark.parametrize("budgets", [np.array([True] * 200), np.full(200, 1e308),
                                     np.full(200, 1000.5)])
def test_per_user_budgets_are_real_and_at_most_the_largest_finite_epsilon(budgets):
    """Review 129: booleans and budgets above MAX_FINITE_EPSILON were taken (privacy_
    reported epsilon 1e308); refused before anything is read, without quoting a budget."""
    from sklearn_dpol import ParameterFreeLocalDPRegressor

    X = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
    est = ParameterFreeLocalDPRegressor(random_state=0)
    with pytest.raises(ValueError, match="sample_epsilon") as info:
        est.fit(X, X[:, 0], sample_epsilon=budgets)
    assert "1e+308" not in str(info.value) and "1000.5" not in str(info.value)
    assert not hasattr(est, "coef_")
    est.fit(X, X[:, 0], sample_epsilon=np.where(np.arange(200) % 2, 1000.0, np.inf))
