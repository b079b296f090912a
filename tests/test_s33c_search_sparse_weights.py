"""PrivateHyperparameterSearch on sparse X and with sample weights (review 120, M1)."""

import math
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer
from sklearn.utils import get_tags

from sklearn_dpol import (
    ParameterFreeLocalDPRegressor,
    PrivacyAccountant,
    PrivateIGDClassifier,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
    export_public,
)
from sklearn_dpol._base import make_generator
from sklearn_dpol._core import selection as core
from sklearn_dpol.model_selection import PrivateHyperparameterSearch

N, D = 1_500, 30
XS = sp.random(N, D, density=0.1, format="csr", random_state=0)
_rng = np.random.default_rng(0)
YC = (XS @ _rng.standard_normal(D) > 0).astype(int)
YR = np.clip(XS @ np.linspace(-1, 1, D), -1, 1)
W = _rng.uniform(0.0, 1.0, N)


def igd_search(**kwargs):
    space = kwargs.pop("space", {"alpha": [1e-3, 1e-2], "epsilon": [1.0, 2.0]})
    return PrivateHyperparameterSearch(
        kwargs.pop("estimator", PrivateIGDClassifier(classes=[0, 1])), space,
        n_candidates=3, random_state=0, **kwargs)


@pytest.fixture
def fit_inputs(monkeypatch):
    """The X (and sample_weight) every PrivateIGDClassifier / QFTL fit receives."""
    seen = []
    for kind in (PrivateIGDClassifier, PrivateQFTLRegressor):
        original = kind.fit

        def spy(self, X, y, sample_weight=None, _original=original):
            seen.append((X, sample_weight))
            return _original(self, X, y, sample_weight=sample_weight)
        monkeypatch.setattr(kind, "fit", spy)
    return seen


# ------------------------------------------------------------------------- sparse X
def test_sparse_search_passes_csr_to_the_candidates_and_equals_the_dense_search(fit_inputs):
    sparse = igd_search().fit(XS, YC)
    assert fit_inputs and all(sp.issparse(X) and X.format == "csr" for X, _ in fit_inputs)
    dense = igd_search().fit(XS.toarray(), YC)
    assert sparse.best_params_ == dense.best_params_
    assert sparse.n_candidates_ == dense.n_candidates_
    np.testing.assert_allclose(sparse.best_estimator_.coef_, dense.best_estimator_.coef_,
                               rtol=1e-9, atol=1e-12)
    assert sparse.best_score_ == pytest.approx(dense.best_score_, abs=1e-12)
    assert sparse.privacy_ == dense.privacy_
    # predict, score and export_public on sparse input
    np.testing.assert_array_equal(sparse.predict(XS), dense.predict(XS.toarray()))
    assert sparse.score(XS, YC) == dense.score(XS.toarray(), YC)
    public = sparse.export_public()
    np.testing.assert_array_equal(public.predict(XS), sparse.predict(XS))
    np.testing.assert_array_equal(export_public(sparse.best_estimator_).predict(XS),
                                  sparse.predict(XS))


@pytest.mark.parametrize("fmt", ["csc", "coo", "lil"])
def test_other_sparse_formats_are_converted_to_csr(fmt, fit_inputs):
    reference = igd_search().fit(XS, YC)
    fit_inputs.clear()
    other = igd_search().fit(XS.asformat(fmt), YC)
    assert all(X.format == "csr" for X, _ in fit_inputs)
    assert other.best_params_ == reference.best_params_
    assert other.best_score_ == reference.best_score_
    np.testing.assert_array_equal(other.best_estimator_.coef_, reference.best_estimator_.coef_)


def test_sparse_regression_search():
    search = PrivateHyperparameterSearch(PrivateQFTLRegressor(data_norm=2.0),
                                         {"alpha": [0.1, 1.0]}, y_bound=1.0, n_candidates=3,
                                         random_state=0).fit(XS, YR)
    dense = PrivateHyperparameterSearch(PrivateQFTLRegressor(data_norm=2.0),
                                        {"alpha": [0.1, 1.0]}, y_bound=1.0, n_candidates=3,
                                        random_state=0).fit(XS.toarray(), YR)
    assert search.best_params_ == dense.best_params_
    np.testing.assert_allclose(search.best_estimator_.coef_, dense.best_estimator_.coef_,
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("step", [Normalizer(), FunctionTransformer(partial(np.multiply, 0.5))])
def test_pipeline_with_a_public_step_keeps_sparse_data_sparse(step, fit_inputs):
    pipe = make_pipeline(step, PrivateIGDClassifier(classes=[0, 1]))
    search = igd_search(estimator=pipe, space={"privateigdclassifier__alpha": [1e-3, 1e-2]})
    assert get_tags(search).input_tags.sparse
    search.fit(XS, YC)
    assert fit_inputs and all(sp.issparse(X) for X, _ in fit_inputs)
    assert search.predict(XS).shape == (N,)
    export_public(search.best_estimator_).predict(XS)


def _no_sparse_cases():
    # (Objective perturbation, which refuses sparse X, is not a selection candidate.)
    pipe = make_pipeline(Normalizer(), PrivateIGDClassifier(classes=[0, 1]))
    return [
        # one listed value of a public step's slot is a dense-only private transformer
        igd_search(estimator=pipe, space={
            "normalizer": [Normalizer(), PrivateRangeScaler(bounds=(-1, 1))],
            "privateigdclassifier__alpha": [1e-3, 1e-2]}),
        # ... in the second of two spaces
        igd_search(estimator=pipe, space=[
            {"privateigdclassifier__alpha": [1e-3, 1e-2]},
            {"normalizer": [PrivateRangeScaler(bounds=(-1, 1))]}]),
        PrivateHyperparameterSearch(ParameterFreeLocalDPRegressor(), {"epsilon": [1.0, 2.0]},
                                    y_bound=1.0),
        igd_search(estimator=make_pipeline(PrivateRangeScaler(bounds=(-1, 1)),
                                           PrivateIGDClassifier(classes=[0, 1])),
                   space={"privateigdclassifier__alpha": [1e-3, 1e-2]}),
    ]


@pytest.mark.parametrize("index", range(4))
def test_a_space_with_a_dense_only_candidate_refuses_sparse_x_before_reading(index,
                                                                               monkeypatch):
    search = _no_sparse_cases()[index]
    budget = PrivacyAccountant(epsilon=100.0, delta=1e-3)
    search.set_params(accountant=budget)
    assert not get_tags(search).input_tags.sparse

    def read(*args, **kwargs):
        raise AssertionError("the data was read")
    monkeypatch.setattr("sklearn_dpol.model_selection._search.validate_data", read)
    before = dict(search.__dict__)
    with pytest.raises(ValueError, match="sparse X.*Nothing was read or charged"):
        search.fit(XS, YC)
    assert budget.charges == [] and budget.spent().epsilon == 0.0
    assert search.__dict__ == before


def test_the_dense_fit_of_a_dense_only_space_is_unchanged():
    search = _no_sparse_cases()[0].fit(XS.toarray(), YC)
    assert hasattr(search, "best_estimator_")


def test_score_noise_does_not_depend_on_the_format(monkeypatch):
    """The score's sigma is a function of m and rho only: the same for sparse and dense."""
    sigmas = []
    original = core.score_sigma
    monkeypatch.setattr(core, "score_sigma",
                        lambda m, mu: (sigmas.append((m, mu)), original(m, mu))[1])
    igd_search().fit(XS, YC)
    sparse, sigmas[:] = list(sigmas), []
    igd_search().fit(XS.toarray(), YC)
    assert sparse == sigmas and sparse


# ---------------------------------------------------------------------- sample_weight
def test_weights_reach_the_candidates_and_all_ones_change_nothing(fit_inputs):
    plain = igd_search().fit(XS, YC)
    ones = igd_search().fit(XS, YC, sample_weight=np.ones(N))
    assert ones.best_params_ == plain.best_params_ and ones.best_score_ == plain.best_score_
    np.testing.assert_array_equal(ones.best_estimator_.coef_, plain.best_estimator_.coef_)
    fit_inputs.clear()
    weighted = igd_search().fit(XS, YC, sample_weight=W)
    for X, w in fit_inputs:
        assert w is not None and w.shape == (X.shape[0],) and np.all(np.isin(w, W))
    assert weighted.best_score_ != plain.best_score_


@pytest.mark.parametrize("routing", [False, True])
def test_weights_in_a_pipeline_go_to_the_final_estimator(routing, fit_inputs):
    import sklearn

    pipe = make_pipeline(Normalizer(), PrivateIGDClassifier(classes=[0, 1]))
    search = igd_search(estimator=pipe, space={"privateigdclassifier__alpha": [1e-3, 1e-2]})
    with sklearn.config_context(enable_metadata_routing=routing):
        search.fit(XS, YC, sample_weight=W)
    assert fit_inputs and all(w is not None for _, w in fit_inputs)


def test_weighted_score_is_the_weighted_sum_over_m_without_noise():
    """eps=inf (no noise): best_score_ is (1/m) sum_V w_i v_i, the public m in the denominator."""
    search = igd_search(estimator=PrivateIGDClassifier(classes=[0, 1], epsilon=math.inf),
                        space={"alpha": [1e-2]}).fit(XS, YC, sample_weight=W)
    rng = make_generator(0, purpose=0)     # the search's: the split is its first draw
    _, validation = core.split_indices(N, 0.2, rng)
    correct = search.best_estimator_.predict(XS[validation]) == YC[validation]
    expected = np.sum(W[validation] * correct) / validation.size
    assert search.best_score_ == pytest.approx(expected, rel=1e-12)
    assert search.best_score_ < np.mean(correct)     # not the weighted mean


@pytest.mark.parametrize("bound", [None, 1.0])
def test_neighbouring_validation_sets_with_weights_move_the_score_by_at_most_one_over_m(bound):
    """Noise off: replacing one validation record, its weight included, moves the score by
    at most 1/m, the sensitivity score_sigma calibrates to (the weights do not enter it)."""
    estimator = (PrivateIGDClassifier(classes=[0, 1], epsilon=math.inf) if bound is None
                 else PrivateQFTLRegressor(data_norm=2.0, epsilon=math.inf))
    y = YC if bound is None else YR
    model = estimator.fit(XS[:1000], y[:1000])
    Xv, yv, wv = XS[1000:1300].toarray(), y[1000:1300].astype(float), W[1000:1300].copy()
    m = Xv.shape[0]
    score = PrivateHyperparameterSearch._noisy_score
    rng = np.random.default_rng(0)
    base = score(model, Xv, yv, math.inf, bound, rng, wv)
    worst = 0.0
    for i in range(0, m, 7):
        for w_new in (0.0, 1.0):
            X2, y2, w2 = Xv.copy(), yv.copy(), wv.copy()
            X2[i], y2[i], w2[i] = -Xv[i] * 3, (1 - yv[i]) if bound is None else -yv[i], w_new
            moved = abs(score(model, X2, y2, math.inf, bound, rng, w2) - base)
            worst = max(worst, moved)
            assert moved <= (1.0 / m) * (1 + 1e-12)
    assert worst > 0.5 / m                             # the test can tell
    assert core.score_sigma(m, 1.0) == pytest.approx(1.0 / m, rel=1e-9)


@pytest.mark.parametrize("weights, match", [
    (np.full(N, 1.5), r"\[0, 1\]"),
    (np.ones(N - 1), "shape"),
])
def test_bad_weights_are_refused_before_the_read_and_refunded(weights, match, fit_inputs):
    budget = PrivacyAccountant(epsilon=100.0, delta=1e-3)
    search = igd_search(accountant=budget)
    with pytest.raises(ValueError, match=match):
        search.fit(XS, YC, sample_weight=weights)
    assert fit_inputs == []
    assert budget.spent().epsilon == 0.0
    assert not hasattr(search, "best_estimator_")


def test_weights_for_an_estimator_without_sample_weight_are_refused_before_anything(
        monkeypatch):
    """Every estimator the search accepts takes sample_weight since session 33 (the local-DP
    regressors were the last); the refusal stays for an estimator whose fit has none."""
    import sklearn_dpol.model_selection._search as search_module

    monkeypatch.setattr(search_module, "has_fit_parameter", lambda estimator, name: False)
    budget = PrivacyAccountant(epsilon=100.0, delta=1e-3)
    search = PrivateHyperparameterSearch(ParameterFreeLocalDPRegressor(),
                                         {"epsilon": [1.0, 2.0]}, y_bound=1.0,
                                         accountant=budget)
    with pytest.raises(ValueError, match="takes no sample_weight.*Nothing was read"):
        search.fit(XS.toarray(), YR, sample_weight=W)
    assert budget.charges == []


def test_the_sparse_tag_follows_the_parameters():
    """The tag is kept between calls (predict reads it), but never across a change."""
    pipe = make_pipeline(Normalizer(), PrivateIGDClassifier(classes=[0, 1]))
    slot = [Normalizer()]
    search = igd_search(estimator=pipe, space={"normalizer": slot})
    assert get_tags(search).input_tags.sparse
    slot.append(PrivateRangeScaler(bounds=(-1, 1)))          # the list changed in place
    assert not get_tags(search).input_tags.sparse
    search.set_params(param_distributions={"normalizer": [Binarizer()]})
    assert get_tags(search).input_tags.sparse
    search.set_params(estimator=make_pipeline(PrivateRangeScaler(bounds=(-1, 1)),
                                              PrivateIGDClassifier(classes=[0, 1])),
                      param_distributions={"privateigdclassifier__alpha": [1e-2]})
    assert not get_tags(search).input_tags.sparse
    search.estimator.set_params(privaterangescaler=Normalizer())   # the same estimator object
    assert get_tags(search).input_tags.sparse
