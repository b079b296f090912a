"""Pipelines of public transformers in private selection; export_public on a Pipeline."""

import pickle
from functools import partial

import joblib
import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    Normalizer,
    PolynomialFeatures,
    StandardScaler,
)

import sklearn_dpol
from sklearn_dpol import (
    PrivacyAccountant,
    PrivateHyperparameterSearch,
    PrivateIGDClassifier,
    PrivateQFTLRegressor,
    export_public,
)
from sklearn_dpol.preprocessing import PrivateRangeScaler

rng = np.random.default_rng(0)
X = rng.normal(size=(3000, 5)) * 4.0
Y_REG = np.clip(X @ np.array([0.1, -0.2, 0.05, 0.0, 0.1]) / 4.0, -1, 1)
Y_CLF = (X[:, 0] + X[:, 1] > 0).astype(int)
QUARTER = partial(np.multiply, 0.25)

# Every private attribute name of the library's estimators.
PRIVATE = {"_w_private", "_rng", "_stream", "_ftrl_mechanism", "_ftrl", "_sampler",
           "_sampler_rng", "n_candidates_"}


def private_names(obj, seen=None):
    """Names of private attributes anywhere in ``obj`` (recursively)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return set()
    seen.add(id(obj))
    found = set()
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__"):
        found |= PRIVATE & set(vars(obj))
        items = vars(obj).items()
    else:
        return found
    for _, value in items:
        found |= private_names(value, seen)
    return found


def search(estimator, space, **kwargs):
    return PrivateHyperparameterSearch(estimator, space, n_candidates=3, delta=1e-6,
                                       random_state=0, **kwargs)


def test_search_accepts_a_pipeline_of_public_steps_with_the_estimators_guarantee():
    plain = search(PrivateIGDClassifier(alpha=1e-2, classes=[0, 1]),
                   {"epsilon": [0.5, 1.0]})
    pipe = search(make_pipeline(FunctionTransformer(QUARTER),
                                PrivateIGDClassifier(alpha=1e-2, classes=[0, 1])),
                  {"privateigdclassifier__epsilon": [0.5, 1.0]})
    # The public step adds nothing: the same plan, before any data.
    assert pipe.privacy_plan().epsilon == plain.privacy_plan().epsilon
    pipe.fit(X, Y_CLF)
    plain.fit(X * 0.25, Y_CLF)
    assert pipe.privacy_.epsilon == plain.privacy_.epsilon
    assert pipe.best_params_ == {"privateigdclassifier__epsilon":
                                 plain.best_params_["epsilon"]}
    # Same seed, same draws, same rows: the same released model.
    np.testing.assert_array_equal(pipe.best_estimator_[-1].coef_, plain.best_estimator_.coef_)
    np.testing.assert_array_equal(pipe.predict(X), plain.predict(X * 0.25))


def test_search_over_a_regressor_pipeline_and_public_step_parameters():
    pipe = make_pipeline(Normalizer(), PolynomialFeatures(degree=1),
                         PrivateQFTLRegressor(y_bound=1.0))
    s = search(pipe, {"privateqftlregressor__epsilon": [1.0, 2.0],
                      "polynomialfeatures__degree": [1, 2]}).fit(X, Y_REG)
    assert np.isfinite(s.best_score_)
    assert s.predict(X).shape == (len(X),)


def test_accountant_is_charged_once_for_a_pipeline_search(tmp_path):
    budget = PrivacyAccountant(epsilon=10.0, delta=1e-5, path=tmp_path / "ledger")
    pipe = make_pipeline(FunctionTransformer(QUARTER),
                         PrivateIGDClassifier(alpha=1e-2, classes=[0, 1], accountant=budget))
    s = search(pipe, {"privateigdclassifier__epsilon": [1.0]}, accountant=budget).fit(X, Y_CLF)
    assert len(budget.charges) == 1
    assert budget.spent().epsilon == pytest.approx(s.privacy_.epsilon)


@pytest.mark.parametrize("step", [StandardScaler(), MinMaxScaler()])
def test_data_fitted_transformers_are_refused_before_reading(step):
    s = search(make_pipeline(step, PrivateIGDClassifier(classes=[0, 1])),
               {"privateigdclassifier__epsilon": [1.0]})
    with pytest.raises(ValueError, match="not on the allow-list of public transformers"):
        s.fit(X, Y_CLF)
    assert not hasattr(s, "best_estimator_")


def test_private_estimator_that_is_no_transformer_is_refused_with_the_reason():
    s = search(make_pipeline(PrivateQFTLRegressor(), PrivateIGDClassifier(classes=[0, 1])),
               {"privateigdclassifier__epsilon": [1.0]})
    with pytest.raises(ValueError, match="private estimator used as a transformer"):
        s.privacy_plan()


def _scaled(scaler_epsilon=0.2):
    return make_pipeline(PrivateRangeScaler(epsilon=scaler_epsilon, delta=1e-6),
                         PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0))


def test_private_scaler_composes_with_the_final_estimator_in_the_plan():
    # Sequential composition over the same records: the candidate's rho is the
    # scaler's data-free bound plus the estimator's (zCDP adds).
    from sklearn_dpol.model_selection._candidates import candidate_rho

    pipe = _scaled(0.2)
    scaler_rho = pipe.steps[0][1]._selection_rho()
    assert scaler_rho == pytest.approx(0.2 ** 2 / 16)   # d = 1: two quantiles of 0.1-DP
    assert candidate_rho(pipe) == pytest.approx(candidate_rho(pipe.steps[-1][1]) + scaler_rho)
    with_scaler = search(pipe, {"privaterangescaler__epsilon": [0.1, 0.4]})
    alone = search(pipe.steps[-1][1], {"epsilon": [1.0]})
    assert with_scaler.privacy_plan().epsilon > alone.privacy_plan().epsilon
    # The bound holds for every number of features (the zCDP case spends it exactly).
    for eps, delta in [(0.2, 0.0), (0.2, 1e-6), (3.0, 1e-6)]:
        scaler = PrivateRangeScaler(epsilon=eps, delta=delta)
        for d in (1, 2, 7, 90):
            assert scaler._quantiles_spec(d).parts_rho() <= scaler._selection_rho() * (1 + 1e-12)


def test_private_scaler_in_search_is_charged_once_and_checked():
    budget = PrivacyAccountant(20.0, 1e-5)
    pipe = _scaled()
    pipe.steps[0][1].set_params(accountant=budget)   # the search replaces it by None
    s = search(pipe, {"privaterangescaler__epsilon": [0.1, 0.3],
                      "privateqftlregressor__alpha": [1e-3, 1e-2]}, accountant=budget)
    s.fit(X, Y_REG)
    assert len(budget.charges) == 1
    assert budget.spent().epsilon == pytest.approx(s.privacy_.epsilon)
    scaler = s.best_estimator_.steps[0][1]
    assert scaler.accountant is None and hasattr(scaler, "low_")
    assert s.best_params_["privaterangescaler__epsilon"] in (0.1, 0.3)
    assert not private_names(export_public(s))


def test_private_scaler_parameters_follow_the_privacy_rules():
    pipe = _scaled()
    with pytest.raises(ValueError, match="searched as a list"):
        search(pipe, {"privaterangescaler__epsilon": _Uniform()}).privacy_plan()
    with pytest.raises(ValueError, match="set by the search"):
        search(pipe, {"privaterangescaler__random_state": [1, 2]}).privacy_plan()
    # A public parameter of the scaler may be a distribution.
    search(pipe, {"privaterangescaler__quantile": _Uniform()}).privacy_plan()


def test_a_scaler_whose_release_exceeds_its_plan_is_caught(monkeypatch):
    # The safety net: a scaler calibration that changed without its bound.
    from sklearn_dpol.preprocessing import _range_scaler

    monkeypatch.setattr(_range_scaler.PrivateRangeScaler, "_selection_rho",
                        lambda self: 1e-6)
    s = search(_scaled(), {"privaterangescaler__epsilon": [0.3]})
    with pytest.raises(RuntimeError, match="above its planned"):
        s.fit(X, Y_REG)
    assert not hasattr(s, "best_estimator_")


class _Uniform:
    """A distribution with an ``rvs`` method (public values in [0.01, 0.05])."""

    def rvs(self, random_state=None):
        return 0.01 + 0.04 * np.random.default_rng(random_state).random()


def test_replacing_a_step_by_a_private_one_or_the_final_estimator_is_refused():
    pipe = make_pipeline(FunctionTransformer(QUARTER), PrivateIGDClassifier(classes=[0, 1]))
    with pytest.raises(ValueError, match="allow-list"):
        search(pipe, {"functiontransformer": [StandardScaler()]}).privacy_plan()
    with pytest.raises(ValueError, match="replaces the Pipeline's steps"):
        search(pipe, {"privateigdclassifier": [PrivateIGDClassifier()]}).privacy_plan()
    with pytest.raises(ValueError, match="set by the search"):
        search(pipe, {"privateigdclassifier__random_state": [1]}).privacy_plan()
    with pytest.raises(ValueError, match="not a parameter"):
        search(pipe, {"epsilon": [1.0]}).privacy_plan()


def test_export_public_of_a_pipeline_pickles_without_private_state(tmp_path):
    pipe = make_pipeline(FunctionTransformer(QUARTER),
                         PrivateIGDClassifier(epsilon=1.0, classes=[0, 1], random_state=0))
    pipe.fit(X, Y_CLF)
    assert private_names(pipe)  # the check can fail: the original holds private state
    public = export_public(pipe)
    assert public is not pipe and private_names(public) == set()
    assert public[-1].random_state is None
    restored = pickle.loads(pickle.dumps(public))
    assert private_names(restored) == set()
    # Not even as a string in the bytes (other names share the prefix "_stream").
    for name in (b"_w_private", b"_rng"):
        assert name not in pickle.dumps(public)
    np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))
    joblib.dump(public, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").predict(X),
                                  pipe.predict(X))
    # The original is untouched and can continue.
    assert "_rng" in vars(pipe[-1])


def test_export_public_of_a_search_over_a_pipeline():
    pipe = make_pipeline(FunctionTransformer(QUARTER),
                         PrivateIGDClassifier(alpha=1e-2, classes=[0, 1]))
    s = search(pipe, {"privateigdclassifier__epsilon": [1.0, 2.0]}).fit(X, Y_CLF)
    public = sklearn_dpol.export_public(s)
    assert private_names(pickle.loads(pickle.dumps(public))) == set()
    np.testing.assert_array_equal(public.predict(X), s.predict(X))


def test_export_public_refuses_a_data_fitted_step():
    pipe = make_pipeline(StandardScaler(), PrivateIGDClassifier(classes=[0, 1],
                                                                random_state=0)).fit(X, Y_CLF)
    with pytest.raises(ValueError, match="allow-list"):
        export_public(pipe)
    with pytest.raises(ValueError, match="no export_public"):
        export_public(StandardScaler().fit(X))


def test_function_transformer_checking_its_inverse_on_the_data_is_not_public():
    checked = FunctionTransformer(QUARTER, inverse_func=partial(np.multiply, 4.0))
    s = search(make_pipeline(checked, PrivateIGDClassifier(classes=[0, 1])),
               {"privateigdclassifier__epsilon": [1.0]})
    with pytest.raises(ValueError, match="check_inverse=False"):
        s.privacy_plan()
    checked.set_params(check_inverse=False)
    assert np.isfinite(s.privacy_plan().epsilon)


# ---- export_public of nested estimators and of the accountant (session 29) ----

def _fitted_attributes(estimator):
    return {name for name in vars(estimator) if name.endswith("_") and not name.startswith("__")}


def _templates():
    Xs = X[:600] / 8.0
    y_reg, y_clf = Y_REG[:600], Y_CLF[:600]
    qftl = PrivateQFTLRegressor(random_state=7).partial_fit(Xs[:300], y_reg[:300])
    qftl.partial_fit(Xs[300:], y_reg[300:])
    igd = PrivateIGDClassifier(classes=[0, 1], stream="iterate_perturbation",
                               random_state=7).partial_fit(Xs, y_clf)
    pipe = make_pipeline(FunctionTransformer(QUARTER),
                         PrivateQFTLRegressor(random_state=5)).fit(Xs, y_reg)
    return [(qftl, {"epsilon": [0.5, 1.0]}, y_reg, 1.0),
            (igd, {"epsilon": [0.5, 1.0]}, y_clf, None),
            (pipe, {"privateqftlregressor__epsilon": [0.5, 1.0]}, y_reg, 1.0)]


@pytest.mark.parametrize("index", range(3))
def test_export_of_a_search_with_a_fitted_template_holds_no_private_state(index):
    # The template passed to the search may be a model the user fitted (a stream):
    # its exact sums, uncorrupted iterate and generator were copied into the export.
    template, space, y, y_bound = _templates()[index]
    assert private_names(template)  # the check below can fail
    s = search(template, space, y_bound=y_bound).fit(X[:600] / 8.0, y)
    public = export_public(s)
    restored = pickle.loads(pickle.dumps(public))
    for copy_ in (public, restored):
        assert private_names(copy_) == set()
        nested = copy_.estimator
        final = nested[-1] if hasattr(nested, "steps") else nested
        assert _fitted_attributes(final) == set()  # an unfitted clone
        assert final.random_state is None and final.accountant is None
        np.testing.assert_array_equal(copy_.predict(X[:50]), s.predict(X[:50]))
    # The original search and its template are untouched.
    assert s.estimator is template and private_names(template)


def test_export_clones_estimators_inside_the_parameters():
    # An estimator anywhere in a parameter (a grid of steps, here) is cloned unfitted.
    fitted_step = FunctionTransformer(QUARTER).fit(X)
    pipe = make_pipeline(FunctionTransformer(QUARTER),
                         PrivateQFTLRegressor(random_state=0))
    s = search(pipe, {"functiontransformer": [fitted_step, "passthrough"]},
               y_bound=1.0).fit(X, Y_REG)
    public = export_public(s)
    exported_step = public.param_distributions["functiontransformer"][0]
    assert exported_step is not fitted_step
    assert not hasattr(exported_step, "n_features_in_")
    assert hasattr(fitted_step, "n_features_in_")


@pytest.mark.parametrize("mode", ["fit", "stream", "search"])
def test_export_drops_the_accountant_and_the_ledger_address(tmp_path, mode):
    # The frozen stream parameters kept the ledger's path (a PostgreSQL URL with its
    # password), and the export's fit charged the original ledger.
    path = str(tmp_path / "secret-project-ledger.sqlite")
    Xs, y = X[:400] / 8.0, Y_REG[:400]
    with PrivacyAccountant(100.0, 1e-3, path=path) as acc:
        if mode == "search":
            model = search(PrivateQFTLRegressor(accountant=acc), {"epsilon": [1.0]},
                           y_bound=1.0, accountant=acc).fit(Xs, y)
        else:
            model = PrivateQFTLRegressor(accountant=acc)
            if mode == "fit":
                model.fit(Xs, y)
            else:
                model.partial_fit(Xs[:200], y[:200]).partial_fit(Xs[200:], y[200:])
        assert path.encode() in pickle.dumps(model)  # the check below can fail
        public = export_public(model)
        assert public.accountant is None
        assert "_frozen_params" not in vars(public)
        blob = pickle.dumps(public)
        assert path.encode() not in blob and b"secret-project" not in blob
        assert private_names(public) == set()
        np.testing.assert_array_equal(public.predict(Xs), model.predict(Xs))
        charges = len(acc.charges)
        if mode != "search":
            with pytest.raises(ValueError, match="public export"):
                public.partial_fit(Xs, y)
        public.fit(Xs, y)  # trains afresh, charging no ledger of the original's
        assert len(acc.charges) == charges
        assert model.accountant is acc  # the original keeps its accountant
