"""Per-row budgets (``sample_epsilon`` of ParameterFreeLocalDPRegressor) through
scikit-learn's meta-estimators, with metadata routing enabled and without it.

Each path is checked by what the fitted models received, not only by the
absence of errors: the budgets are distinct per row (so a fold's smallest and
largest finite budget name its rows) with some rows at ``inf``, and with an
integer seed every fold model is bit-identical to a direct fit on the fold's
rows with the fold's budgets. A wrong slice, a missing budget or a budget
routed to the wrong rows changes the noise and so the model.
"""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_dpol import ParameterFreeLocalDPRegressor

N, D = 300, 3
_rng = np.random.default_rng(0)
X = _rng.uniform(-2.0, 2.0, size=(N, D))
Y = np.clip(X @ np.array([0.3, -0.2, 0.1]) + 0.05 * _rng.standard_normal(N), -1.0, 1.0)
# Distinct budgets, increasing with the row; every fifth user asks for none.
BUDGETS = np.where(np.arange(N) % 5 == 0, np.inf, 1.0 + np.arange(N) / 10.0)
CV = KFold(3)
STEP = "parameterfreelocaldpregressor"
GRID = {"method": ["coordinate", "reduction"]}


def public_scale(X):
    return X / 2.0   # the public bound of the features


def estimator(**params):
    return ParameterFreeLocalDPRegressor(random_state=0, **params)


def pipeline(reg):
    return make_pipeline(FunctionTransformer(public_scale), reg)


def expected_summary(budgets):
    finite = budgets[np.isfinite(budgets)]
    return {"n_users": budgets.size, "n_without_noise": int(budgets.size - finite.size),
            "min_finite_epsilon": float(finite.min()),
            "max_finite_epsilon": float(finite.max())}


def direct_fit(rows, **params):
    """What a fold model must be: a fit on its rows with its rows' budgets."""
    return estimator(**params).fit(public_scale(X[rows]), Y[rows],
                                   sample_epsilon=BUDGETS[rows])


def assert_received(model, rows, **params):
    assert model.sample_epsilon_summary_ == expected_summary(BUDGETS[rows])
    reference = direct_fit(rows, **params)
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    assert model.intercept_ == reference.intercept_


def assert_search_used_fold_budgets(search):
    """Every split score is that of the direct fit on the fold (per candidate)."""
    for candidate, params in enumerate(search.cv_results_["params"]):
        params = {name.split("__")[-1]: value for name, value in params.items()}
        for split, (train, test) in enumerate(CV.split(X)):
            model = direct_fit(train, **params)
            score = model.score(public_scale(X[test]), Y[test])
            assert search.cv_results_[f"split{split}_test_score"][candidate] == score
    best = search.best_estimator_
    assert_received(best[-1] if hasattr(best, "steps") else best, np.arange(N),
                    **{k.split("__")[-1]: v for k, v in search.best_params_.items()})


def assert_cross_validate_used_fold_budgets(result):
    for model, (train, _) in zip(result["estimator"], CV.split(X)):
        assert_received(model[-1] if hasattr(model, "steps") else model, train)


# -- routing enabled ----------------------------------------------------------------

@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_routed_through_a_pipeline(routing):
    pipe = pipeline(estimator().set_fit_request(sample_epsilon=True))
    pipe.fit(X, Y, sample_epsilon=BUDGETS)
    assert_received(pipe[-1], np.arange(N))


def test_routed_through_grid_search_over_a_pipeline(routing):
    pipe = pipeline(estimator().set_fit_request(sample_epsilon=True))
    search = GridSearchCV(pipe, {f"{STEP}__{k}": v for k, v in GRID.items()}, cv=CV)
    search.fit(X, Y, sample_epsilon=BUDGETS)
    assert_search_used_fold_budgets(search)


def test_routed_through_cross_validate(routing):
    pipe = pipeline(estimator().set_fit_request(sample_epsilon=True))
    result = cross_validate(pipe, X, Y, cv=CV, params={"sample_epsilon": BUDGETS},
                            return_estimator=True)
    assert_cross_validate_used_fold_budgets(result)


def test_routed_under_an_alias(routing):
    reg = estimator().set_fit_request(sample_epsilon="user_budget")
    result = cross_validate(pipeline(reg), X, Y, cv=CV, params={"user_budget": BUDGETS},
                            return_estimator=True)
    assert_cross_validate_used_fold_budgets(result)


def test_routed_to_partial_fit(routing):
    """MultiOutputRegressor routes partial_fit metadata to every output's learner."""
    targets = np.column_stack([Y, -Y])
    reg = estimator().set_partial_fit_request(sample_epsilon=True)
    multi = MultiOutputRegressor(reg)
    halves = (slice(0, N // 2), slice(N // 2, N))
    for rows in halves:
        multi.partial_fit(public_scale(X[rows]), targets[rows], sample_epsilon=BUDGETS[rows])
    for output, model in enumerate(multi.estimators_):
        assert model.sample_epsilon_summary_ == expected_summary(BUDGETS)
        reference = estimator()
        for rows in halves:
            reference.partial_fit(public_scale(X[rows]), targets[rows, output],
                                  sample_epsilon=BUDGETS[rows])
        np.testing.assert_array_equal(model.coef_, reference.coef_)


def test_an_unset_request_raises_the_documented_error(routing):
    # A meta-estimator routing to the learner itself refuses before any fit.
    with pytest.raises(UnsetMetadataPassedError, match=r"\[sample_epsilon\] are passed"):
        GridSearchCV(estimator(), GRID, cv=CV).fit(X, Y, sample_epsilon=BUDGETS)
    with pytest.raises(UnsetMetadataPassedError, match="sample_epsilon"):
        cross_validate(estimator(), X, Y, cv=CV, params={"sample_epsilon": BUDGETS})
    with pytest.raises(UnsetMetadataPassedError, match="sample_epsilon"):
        MultiOutputRegressor(estimator()).partial_fit(X, np.column_stack([Y, Y]),
                                                      sample_epsilon=BUDGETS)
    # Inside a pipeline the refusal comes from Pipeline.fit in each fold, which
    # the search turns into a failed fit unless error_score="raise".
    with pytest.raises(UnsetMetadataPassedError, match="used within Pipeline.fit"):
        GridSearchCV(pipeline(estimator()), {f"{STEP}__method": GRID["method"]}, cv=CV,
                     error_score="raise").fit(X, Y, sample_epsilon=BUDGETS)


def test_a_refused_request_does_not_silently_drop_the_budgets(routing):
    reg = estimator().set_fit_request(sample_epsilon=False)
    with pytest.raises(TypeError, match="sample_epsilon"):
        GridSearchCV(reg, GRID, cv=CV).fit(X, Y, sample_epsilon=BUDGETS)


def test_clone_keeps_the_request(routing):
    reg = clone(estimator().set_fit_request(sample_epsilon=True))
    assert reg.get_metadata_routing().fit.requests["sample_epsilon"] is True


# -- routing disabled (scikit-learn's default) --------------------------------------

def test_pipeline_step_prefix_without_routing():
    pipe = pipeline(estimator()).fit(X, Y, **{f"{STEP}__sample_epsilon": BUDGETS})
    assert_received(pipe[-1], np.arange(N))
    with pytest.raises(ValueError, match="stepname__parameter"):
        pipeline(estimator()).fit(X, Y, sample_epsilon=BUDGETS)


def test_grid_search_fit_params_without_routing():
    search = GridSearchCV(estimator(), GRID, cv=CV).fit(X, Y, sample_epsilon=BUDGETS)
    # GridSearchCV scores the unscaled data here: compare with direct fits on X.
    for candidate, params in enumerate(search.cv_results_["params"]):
        for split, (train, test) in enumerate(CV.split(X)):
            model = estimator(**params).fit(X[train], Y[train], sample_epsilon=BUDGETS[train])
            assert search.cv_results_[f"split{split}_test_score"][candidate] == \
                model.score(X[test], Y[test])
    assert search.best_estimator_.sample_epsilon_summary_ == expected_summary(BUDGETS)


def test_grid_search_over_a_pipeline_without_routing():
    search = GridSearchCV(pipeline(estimator()), {f"{STEP}__{k}": v for k, v in GRID.items()},
                          cv=CV)
    search.fit(X, Y, **{f"{STEP}__sample_epsilon": BUDGETS})
    assert_search_used_fold_budgets(search)


def test_cross_validate_params_without_routing():
    result = cross_validate(pipeline(estimator()), X, Y, cv=CV,
                            params={f"{STEP}__sample_epsilon": BUDGETS},
                            return_estimator=True)
    assert_cross_validate_used_fold_budgets(result)


def test_set_fit_request_needs_routing():
    with pytest.raises(RuntimeError, match="metadata routing is enabled"):
        estimator().set_fit_request(sample_epsilon=True)
