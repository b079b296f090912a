"""Every estimator in scikit-learn's model selection: Pipeline, GridSearchCV,
RandomizedSearchCV and cross_validate, searching over the privacy knob.

Checked: the search picks from its grid, the selected model's ``privacy_`` is the
guarantee of the selected hyperparameters, scores beat a trivial model at a
generous budget, ``n_jobs=2`` reproduces ``n_jobs=1``, and ``random_state``
behaves as documented (``doc/privacy.md``, section 5): an integer reproduces a
whole search, ``None`` draws fresh noise for every fit. The last test measures
the hazard of an integer seed in a search: every clone draws the same noise.
Selecting on private data is not covered by ``privacy_`` (see
``doc/model_selection.md``).
"""

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.base import clone, is_classifier
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    RandomizedSearchCV,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.privacy import gaussian_epsilon

N, D = 1200, 4
_rng = np.random.default_rng(0)
X = _rng.uniform(-2.0, 2.0, size=(N, D))            # public range: [-2, 2] per feature
_signal = X @ np.array([0.5, -0.4, 0.3, 0.0])
Y_REGRESSION = np.clip(_signal / 2 + 0.1 * _rng.standard_normal(N), -1.0, 1.0)
Y_BINARY = (_signal + 0.3 * _rng.standard_normal(N) > 0).astype(int)
Y_THREE = np.digitize(_signal + 0.3 * _rng.standard_normal(N), [-0.5, 0.5])


def public_scale(X):
    """Divide by the public range bound 4 (a constant, never a data statistic)."""
    return X / 4.0


# id -> (estimator, target, {parameter: grid}); the privacy knob comes first.
CASES = {
    "igd": (PrivateIGDClassifier(classes=[0, 1], random_state=0), Y_BINARY,
            {"epsilon": [1.0, 8.0], "alpha": [1e-2, 1e-1]}),
    "igd_multiclass": (PrivateIGDClassifier(classes=[0, 1, 2], alpha=1e-2, random_state=0),
                       Y_THREE, {"epsilon": [1.0, 8.0], "max_iter": [2, 5]}),
    "igd_objective_perturbation": (
        PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1], alpha=1e-3,
                             random_state=0),
        Y_BINARY, {"epsilon": [1.0, 8.0], "alpha": [1e-3, 1e-2]}),
    "qftl": (PrivateQFTLRegressor(random_state=0), Y_REGRESSION,
             {"epsilon": [1.0, 8.0], "alpha": [1e-3, 1e-2]}),
    "frank_wolfe": (PrivateFrankWolfeLasso(random_state=0), Y_REGRESSION,
                    {"epsilon": [1.0, 8.0], "radius": [0.5, 1.0]}),
    "mirror_descent": (PrivateMirrorDescentRegressor(solver="mirror_descent", random_state=0),
                       Y_REGRESSION,
                       {"epsilon": [1.0, 8.0], "constraint": ["l2", "l1"]}),
    "mirror_descent_objective_perturbation": (
        PrivateMirrorDescentRegressor(solver="objective_perturbation", random_state=0),
        Y_REGRESSION, {"epsilon": [1.0, 8.0], "alpha": [1e-4, 1e-3]}),
    "parameter_free": (ParameterFreeLocalDPRegressor(random_state=0), Y_REGRESSION,
                       {"epsilon": [8.0, 50.0], "method": ["coordinate", "reduction"]}),
    "mi_ogd": (MutualInformationPrivateOGDRegressor(epsilon=None, sigma=1.0, loss="squared",
                                                    random_state=0),
               Y_REGRESSION, {"sigma": [0.1, 1.0], "radius": [0.5, 1.0]}),
}


def pipeline(estimator):
    return make_pipeline(FunctionTransformer(public_scale), clone(estimator))


def prefixed(estimator, params):
    """``{"step__param": value}``: the grid as the pipeline spells it."""
    step = type(estimator).__name__.lower()
    return {f"{step}__{name}": value for name, value in params.items()}


def chosen(search, estimator):
    step = type(estimator).__name__.lower() + "__"
    return {name[len(step):]: value for name, value in search.best_params_.items()}


def baseline_score(estimator, y):
    """A model that ignores X: accuracy of the majority class, or R^2 = 0."""
    if is_classifier(estimator):
        return cross_val_score(DummyClassifier(), X, y, cv=3).mean()
    return 0.0


def assert_guarantee_of(model, params):
    """``privacy_`` is the guarantee of ``params`` for all ``N`` rows (one refit)."""
    guarantee = model.privacy_
    if isinstance(model, MutualInformationPrivateOGDRegressor):
        mu = 2.0 * model.gradient_bound / params["sigma"]   # local Gaussian, 2L/sigma
        assert guarantee.mu == pytest.approx(mu, rel=1e-12)
        assert guarantee.epsilon == pytest.approx(gaussian_epsilon(mu, model.delta))
    else:
        assert guarantee.epsilon == params["epsilon"]
    expected_delta = 0.0 if isinstance(model, ParameterFreeLocalDPRegressor) else model.delta
    assert guarantee.delta == expected_delta
    assert guarantee.n_records == N and guarantee.n_releases == 1


def released(model):
    return np.append(model.coef_, model.intercept_)


@pytest.mark.parametrize("case", CASES)
def test_grid_search_over_the_privacy_knob_in_a_pipeline(case):
    estimator, y, grid = CASES[case]
    search = GridSearchCV(pipeline(estimator), prefixed(estimator, grid), cv=3)
    search.fit(X, y)
    best = chosen(search, estimator)
    assert set(best) == set(grid) and all(best[k] in grid[k] for k in grid)
    model = search.best_estimator_[-1]
    assert_guarantee_of(model, best)
    assert all(getattr(model, k) == v for k, v in best.items())
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (4,) and np.all(np.isfinite(scores))
    assert search.best_score_ > baseline_score(estimator, y) + 0.1
    assert search.predict(X).shape == (N,)
    # Integer seeds: two workers give exactly the serial search.
    parallel = GridSearchCV(pipeline(estimator), prefixed(estimator, grid), cv=3, n_jobs=2)
    parallel.fit(X, y)
    np.testing.assert_array_equal(parallel.cv_results_["mean_test_score"], scores)
    np.testing.assert_array_equal(released(parallel.best_estimator_[-1]), released(model))


@pytest.mark.parametrize("case", CASES)
def test_randomized_search_with_scipy_distributions(case):
    estimator, y, grid = CASES[case]
    knob = next(iter(grid))
    low, high = grid[knob]
    others = {k: v for k, v in grid.items() if k != knob}
    space = prefixed(estimator, {knob: loguniform(low, high), **others})

    def search():
        return RandomizedSearchCV(pipeline(estimator), space, n_iter=3, cv=3,
                                  random_state=0).fit(X, y)

    first, second = search(), search()
    sampled = [params[knob] for params in
               ({k.split("__")[1]: v for k, v in p.items()} for p in first.cv_results_["params"])]
    assert all(low <= value <= high for value in sampled) and len(set(sampled)) == 3
    best = chosen(first, estimator)
    assert_guarantee_of(first.best_estimator_[-1], best)
    assert np.all(np.isfinite(first.cv_results_["mean_test_score"]))
    # An integer random_state (search and estimator) reproduces the whole search.
    np.testing.assert_array_equal(first.cv_results_["mean_test_score"],
                                  second.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(released(first.best_estimator_[-1]),
                                  released(second.best_estimator_[-1]))


@pytest.mark.parametrize("case", CASES)
def test_cross_validate_releases_one_model_per_fold(case):
    estimator, y, grid = CASES[case]
    generous = {k: v[-1] for k, v in grid.items()}
    pipe = pipeline(estimator).set_params(**prefixed(estimator, generous))
    result = cross_validate(pipe, X, y, cv=3, return_estimator=True, return_train_score=True)
    assert result["test_score"].shape == (3,)
    assert np.all(np.isfinite(result["test_score"]))
    assert result["test_score"].mean() > baseline_score(estimator, y) + 0.1
    for fold in result["estimator"]:
        model = fold[-1]
        assert model.privacy_.n_records == 2 * N // 3 and model.privacy_.n_releases == 1
        assert model.coef_.shape[-1] == D
    serial = result["test_score"]
    parallel = cross_validate(pipe, X, y, cv=3, n_jobs=2)["test_score"]
    np.testing.assert_array_equal(parallel, serial)


@pytest.mark.parametrize("case", CASES)
def test_random_state_none_draws_fresh_noise_for_every_fit(case):
    estimator, y, _ = CASES[case]
    unseeded = clone(estimator).set_params(random_state=None)
    first = released(clone(unseeded).fit(X, y))
    second = released(clone(unseeded).fit(X, y))
    assert not np.array_equal(first, second)
    scores = [cross_val_score(pipeline(unseeded), X, y, cv=3) for _ in range(2)]
    assert not np.array_equal(*scores)
    seeded = [released(clone(estimator).fit(X, y)) for _ in range(2)]
    np.testing.assert_array_equal(*seeded)


def test_an_integer_seed_gives_every_clone_the_same_noise():
    """The hazard of integer seeds in model selection (doc/integrations.md).

    Each fold's clone carries ``random_state=0``, so equal-sized folds draw the
    same noise: the difference of two released fold models is the difference
    of the noiseless models, exactly. Unseeded, it is buried in noise. And two
    releases on the same data at two epsilons give the noiseless model away.
    """
    def fold_models(**params):
        estimator = PrivateIGDClassifier(solver="igd", alpha=1e-2, classes=[0, 1], **params)
        models = cross_validate(estimator, public_scale(X), Y_BINARY, cv=KFold(3),
                                return_estimator=True)["estimator"]
        return [released(m) for m in models], models[0].noise_scale_

    seeded, sigma = fold_models(epsilon=1.0, random_state=0)
    exact, _ = fold_models(epsilon=np.inf, random_state=0)
    fresh, _ = fold_models(epsilon=1.0, random_state=None)
    noiseless = exact[0] - exact[1]
    # the same noise, up to the noise grid's step sigma 2^-28 (doc/privacy.md section 14)
    assert np.abs((seeded[0] - seeded[1]) - noiseless).max() <= sigma * 2.0 ** -27
    assert np.abs((fresh[0] - fresh[1]) - noiseless).max() > 0.1 * sigma

    def fit(epsilon):
        return PrivateIGDClassifier(solver="igd", alpha=1e-2, classes=[0, 1], epsilon=epsilon,
                                    random_state=0).fit(public_scale(X), Y_BINARY)

    low, high, exact = fit(1.0), fit(2.0), fit(np.inf)
    s1, s2 = low.noise_scale_, high.noise_scale_
    recovered = (s2 * released(low) - s1 * released(high)) / (s2 - s1)
    np.testing.assert_allclose(recovered, released(exact), atol=1e-6)
