"""PrivateFrankWolfeLasso(feature_bound="auto", y_bound="auto"): private quantiles.

doc/privacy.md, "feature_bound='auto' for Frank-Wolfe": each "auto" bound spends
10% of epsilon on a private 98% quantile (of the rows' L-infinity norms, of |y|)
through the one mixin of ``sklearn_dpol/_auto_bounds.py``; Frank-Wolfe gets the
rest, ``(epsilon - epsilon_q, delta)``, by basic composition, and the data is read
only through the quantiles and the selections.
"""

import math

import numpy as np
import pytest
from scipy import sparse

import sklearn_dpol._auto_bounds as auto_bounds_module
from sklearn_dpol import PrivateFrankWolfeLasso, PrivateHyperparameterSearch
from sklearn_dpol._auto_bounds import AUTO_GRID, L2, LINF, row_norms
from sklearn_dpol.privacy import PrivacyAccountant, zcdp_rho
from sklearn_dpol.privacy._quantile import _distances, quantile_probabilities
# one copy of the state check and of the fake quantile (feature_bound first, then y_bound)
from test_md_auto_bounds import _fixed_quantiles, _state, _unchanged

SELECTIONS = ["exponential", "gaussian"]


def _data(n=4000, x_scale=6.0, y_scale=2.0, seed=0, p=6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, p))
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return x_scale * X, y_scale * y


def _model(**params):
    params.setdefault("radius", 0.5)
    return PrivateFrankWolfeLasso(**params)


# -- the L-inf row norms and the quantile's sensitivity ----------------------------------

def test_linf_row_norms_dense_and_sparse_read_stored_entries_only():
    X = np.array([[0.0, -3.0, 1.0], [0.0, 0.0, 0.0], [-0.5, 0.0, 0.0], [2.0, -2.0, 0.0]])
    expected = np.array([3.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(row_norms(X, LINF), expected)
    csr = sparse.csr_matrix(X)
    # An all-negative row, an empty row (implicit zeros count as 0), an explicit zero.
    csr_explicit = sparse.csr_matrix((np.array([-3.0, 0.0]), np.array([1, 2]),
                                      np.array([0, 2, 2, 2, 2])), shape=(4, 3))
    np.testing.assert_array_equal(row_norms(csr, LINF), expected)
    np.testing.assert_array_equal(row_norms(csr_explicit, LINF), [3.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(row_norms(X.astype(np.float32), LINF), expected)
    # Non-canonical CSR: duplicates add up (-3 + 2 = -1) before the maximum; CSC input.
    duplicates = sparse.csr_matrix((np.array([-3.0, 2.0, 0.5]), np.array([1, 1, 0]),
                                    np.array([0, 2, 2, 3])), shape=(3, 3))
    np.testing.assert_array_equal(row_norms(duplicates, LINF), [1.0, 0.0, 0.5])
    np.testing.assert_array_equal(row_norms(sparse.csc_matrix(X), LINF), expected)
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(300, 20)) * (rng.random((300, 20)) < 0.1)
    np.testing.assert_array_equal(row_norms(sparse.csr_matrix(Z), LINF),
                                  np.max(np.abs(Z), axis=1))
    # The L2 kind is the one the other estimators used (unchanged).
    np.testing.assert_allclose(row_norms(X, L2), np.linalg.norm(X, axis=1))
    np.testing.assert_allclose(row_norms(csr, L2), np.linalg.norm(X, axis=1))
    with pytest.raises(ValueError, match="kind"):
        row_norms(X, "l1")


def test_neighbours_move_the_linf_quantile_scores_by_at_most_one():
    # Noise off: replacing one row changes one L-inf norm, so every candidate's
    # distance moves by at most 1 (Delta_u = 1), and with noise each probability
    # by at most e^eps_q, the prior included; sparse rows the same.
    rng = np.random.default_rng(4)
    for trial in range(40):
        X = rng.normal(scale=3.0, size=(60, 5)) * (rng.random((60, 5)) < 0.6)
        other = X.copy()
        i = rng.integers(60)
        other[i] = rng.choice([0.0, 1e6, -1e6]) * (rng.random(5) < 0.5) \
            if trial % 2 else rng.normal(size=5)
        for A, B in ((X, other), (sparse.csr_matrix(X), sparse.csr_matrix(other))):
            a, b = row_norms(A, LINF), row_norms(B, LINF)
            assert np.count_nonzero(a != b) <= 1
            d = _distances(a, 0.98, AUTO_GRID) - _distances(b, 0.98, AUTO_GRID)
            assert np.max(np.abs(d)) <= 1
            for eps in (0.1, 1.0):
                pa = quantile_probabilities(a, 0.98, AUTO_GRID, eps, slope=0.25)
                pb = quantile_probabilities(b, 0.98, AUTO_GRID, eps, slope=0.25)
                assert np.max(np.abs(np.log(pa) - np.log(pb))) <= eps * (1 + 1e-9)


# -- the estimator ------------------------------------------------------------------------

@pytest.mark.parametrize("selection", SELECTIONS)
def test_auto_resolves_near_the_quantiles_and_is_charged(selection):
    X, y = _data()
    norm_q = np.quantile(np.max(np.abs(X), axis=1), 0.98)
    y_q = np.quantile(np.abs(y), 0.98)
    with PrivacyAccountant(epsilon=2.0, delta=1e-6) as budget:
        model = _model(feature_bound="auto", y_bound="auto", epsilon=2.0, selection=selection,
                       random_state=0, accountant=budget).fit(X, y)
        assert budget.spent().epsilon == pytest.approx(2.0)
        assert budget.spent().delta == pytest.approx(1e-6)
    assert (model.feature_bound, model.y_bound) == ("auto", "auto")   # never written back
    assert norm_q / 2 ** 0.5 < model.feature_bound_ < norm_q * 2 ** 0.5
    assert y_q / 2 ** 0.5 < model.y_bound_ < y_q * 2 ** 0.5
    assert model.feature_bound_ in AUTO_GRID and model.y_bound_ in AUTO_GRID
    assert (model.privacy_.epsilon, model.privacy_.delta) == (2.0, 1e-6)
    assert math.isnan(model.privacy_.mu)
    assert "feature_bound_ (the private quantile of the row L-inf norms)" \
        in model.privacy_.released
    assert "y_bound_" in model.privacy_.released
    assert ("0.2-DP private quantile of the row L-inf norms (feature_bound='auto'"
            in model.privacy_.mechanism)
    assert "0.2-DP private quantile of |y|" in model.privacy_.mechanism
    assert "at (1.6, 1e-06)-DP" in model.privacy_.mechanism
    assert model.score(X, y) > 0.5


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("which", ["both", "feature_bound", "y_bound"])
@pytest.mark.parametrize("sparse_input", [False, True])
def test_auto_reads_the_data_only_through_the_quantiles(monkeypatch, selection, which,
                                                        sparse_input):
    # With the quantiles fixed, the model is the one of those public bounds at the rest
    # of epsilon: same step count, sensitivity, noise scale, noise and coefficients.
    X, y = _data(n=1500)
    X_in = sparse.csr_matrix(X * (np.abs(X) > 2.0)) if sparse_input else X
    values = {"both": (4.0, 2.0), "feature_bound": (4.0,), "y_bound": (2.0,)}[which]
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile",
                        _fixed_quantiles(values, calls))
    auto_params = {"both": dict(feature_bound="auto", y_bound="auto"),
                   "feature_bound": dict(feature_bound="auto", y_bound=2.0),
                   "y_bound": dict(feature_bound=4.0, y_bound="auto")}[which]
    auto = _model(epsilon=1.0, selection=selection, random_state=3, **auto_params)
    auto.fit(X_in, y)
    eps_rest = 0.8 if which == "both" else 0.9
    fixed = _model(epsilon=eps_rest, selection=selection, random_state=3, feature_bound=4.0,
                   y_bound=2.0)
    # The quantile's exact sampler draws its state from the generator before the
    # selections do; the public-bound model draws it at the same point.
    mark = fixed._mark_data_read

    def mark_and_draw_the_quantile_sampler():
        mark()
        fixed._exact_sampler()
    fixed._mark_data_read = mark_and_draw_the_quantile_sampler
    fixed.fit(X_in, y)
    assert len(calls) == len(values)
    dense = X_in.toarray() if sparse_input else X
    inputs = {"both": [np.max(np.abs(dense), axis=1), np.abs(y)],
              "feature_bound": [np.max(np.abs(dense), axis=1)], "y_bound": [np.abs(y)]}[which]
    for (data, q, eps, slope), expected in zip(calls, inputs):
        np.testing.assert_array_equal(data, expected)
        assert (q, slope) == (0.98, 0.25) and eps == pytest.approx(0.1)
    assert (auto.feature_bound_, auto.y_bound_) == (4.0, 2.0)
    for name in ("max_iter_", "noise_scale_", "sensitivity_"):
        assert getattr(auto, name) == pytest.approx(getattr(fixed, name), rel=1e-12), name
    np.testing.assert_array_equal(auto.coef_, fixed.coef_)
    assert auto.intercept_ == fixed.intercept_
    np.testing.assert_array_equal(auto.predict(X_in), fixed.predict(X_in))


def test_calibration_uses_the_rest_of_the_budget():
    X, y = _data()
    model = _model(feature_bound="auto", y_bound="auto", epsilon=1.0, max_iter=30,
                   random_state=0).fit(X, y)
    public = _model(feature_bound=model.feature_bound_, y_bound=model.y_bound_, epsilon=0.8,
                    max_iter=30, random_state=0).fit(X, y)
    assert model.noise_scale_ == pytest.approx(public.noise_scale_, rel=1e-12)
    # A public bound keeps its value; only the "auto" one spends epsilon.
    one = _model(feature_bound="auto", y_bound=3.0, epsilon=1.0, max_iter=30,
                 random_state=0).fit(X, y)
    assert one.y_bound_ == 3.0
    public = _model(feature_bound=one.feature_bound_, y_bound=3.0, epsilon=0.9, max_iter=30,
                    random_state=0).fit(X, y)
    assert one.noise_scale_ == pytest.approx(public.noise_scale_, rel=1e-12)


@pytest.mark.parametrize("sparse_input", [False, True])
def test_noise_off_takes_the_noiseless_quantiles(sparse_input):
    X, y = _data()
    X_in = sparse.csr_matrix(X) if sparse_input else X
    off = _model(feature_bound="auto", y_bound="auto", epsilon=np.inf).fit(X_in, y)
    for values, bound in ((np.max(np.abs(X), axis=1), off.feature_bound_),
                          (np.abs(y), off.y_bound_)):
        ranked = np.sort(values)
        assert bound == AUTO_GRID[AUTO_GRID >= ranked[round(0.98 * len(ranked)) - 1]][0]
    assert off.noise_scale_ == 0.0
    assert off.privacy_.epsilon == math.inf
    assert off.score(X, y) > 0.9


def test_sparse_and_dense_give_the_same_model_at_eps_inf():
    X, y = _data(n=2000)
    X = X * (np.abs(X) > 3.0)   # many zeros
    dense = _model(feature_bound="auto", y_bound="auto", epsilon=np.inf, max_iter=40).fit(X, y)
    csr = _model(feature_bound="auto", y_bound="auto", epsilon=np.inf,
                 max_iter=40).fit(sparse.csr_matrix(X), y)
    assert (dense.feature_bound_, dense.y_bound_) == (csr.feature_bound_, csr.y_bound_)
    np.testing.assert_allclose(dense.coef_, csr.coef_, rtol=1e-10, atol=1e-12)


def test_stream_resolves_from_its_first_batch_and_keeps_it():
    X, y = _data(n=20000)
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        model = _model(feature_bound="auto", y_bound="auto", random_state=0, accountant=budget)
        model.partial_fit(X[:5000], y[:5000])
        first = (model.feature_bound_, model.y_bound_)
        for i in range(5000, 20000, 5000):
            model.partial_fit(X[i:i + 5000], y[i:i + 5000])
            assert (model.feature_bound_, model.y_bound_) == first
            # Every batch's selections at the rest of the budget (parallel composition).
            public = _model(feature_bound=first[0], y_bound=first[1], epsilon=0.8,
                            random_state=0).fit(X[i:i + 5000], y[i:i + 5000])
            assert model.noise_scale_ == pytest.approx(public.noise_scale_, rel=1e-12)
            assert model.max_iter_ == public.max_iter_
        assert budget.spent().epsilon == pytest.approx(1.0)
    assert "first batch's row L-inf norms" in model.privacy_.mechanism
    assert model.privacy_.epsilon == 1.0
    assert model.score(X, y) > 0.5


def test_stream_after_fit_keeps_the_fit_bounds_and_a_new_fit_redraws(monkeypatch):
    X, y = _data(n=4000)
    model = _model(feature_bound="auto", y_bound="auto", random_state=0).fit(X[:2000], y[:2000])
    bounds = (model.feature_bound_, model.y_bound_)
    intercept = model.intercept_
    model.partial_fit(X[2000:3000], y[2000:3000])
    assert (model.feature_bound_, model.y_bound_) == bounds
    assert "from the fit this stream continues" in model.privacy_.mechanism
    assert np.sum(np.abs(model.coef_)) + abs(model.intercept_) / bounds[0] <= 0.5 * (1 + 1e-9)
    assert math.isfinite(intercept)
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile",
                        _fixed_quantiles((2.0, 1.0), calls))
    model.fit(X[2000:], y[2000:])
    assert len(calls) == 2 and (model.feature_bound_, model.y_bound_) == (2.0, 1.0)


def test_predict_clips_to_the_resolved_bound(monkeypatch):
    X, y = _data(n=500)
    monkeypatch.setattr(auto_bounds_module, "private_quantile",
                        _fixed_quantiles((1.0,), []))
    model = _model(feature_bound="auto", y_bound=2.0, epsilon=np.inf, max_iter=20).fit(X, y)
    clipped = np.clip(X, -1.0, 1.0)
    np.testing.assert_allclose(model.predict(X), clipped @ model.coef_ + model.intercept_)


def test_refusals_before_reading_charge_nothing_and_leave_the_estimator_unchanged(
        monkeypatch):
    X, y = _data(n=300)
    monkeypatch.setattr(auto_bounds_module, "private_quantile",
                        lambda *a, **k: pytest.fail("the quantile was drawn"))
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        tiny = _model(feature_bound="auto", y_bound="auto", epsilon=1e-9, accountant=budget)
        with pytest.raises(ValueError, match="feature_bound='auto' cannot spend"):
            tiny.fit(X, y)
        assert not hasattr(tiny, "coef_")
        tiny_y = _model(feature_bound=6.0, y_bound="auto", epsilon=1e-9, accountant=budget)
        with pytest.raises(ValueError, match="y_bound='auto' cannot spend"):
            tiny_y.fit(X, y)
        # A bound check that fails at the worst candidate 2**20 only (radius**2 * 2**40
        # overflows; at feature_bound=1 it passes).
        huge = _model(feature_bound="auto", radius=1e145, accountant=budget)
        with pytest.raises(ValueError, match="infinite sensitivity"):
            huge.fit(X, y)
        assert not hasattr(huge, "coef_")
        _model(feature_bound=1.0, radius=1e145)._more_validate_params()   # public: passes
        assert budget.spent().epsilon == 0.0 and budget.spent().delta == 0.0
    monkeypatch.undo()
    # A fitted estimator refused on a new fit keeps its model and its bounds.
    model = _model(feature_bound="auto", y_bound="auto", random_state=0).fit(X, y)
    model.set_params(epsilon=1e-9)
    before = _state(model)
    with pytest.raises(ValueError, match="cannot spend"):
        model.fit(X, y)
    _unchanged(before, model)
    for bad in ("big", "Auto", -1.0, 0.0):
        with pytest.raises(ValueError):
            _model(feature_bound=bad).fit(X, y)
        with pytest.raises(ValueError):
            _model(y_bound=bad).fit(X, y)


def test_dask_input_with_auto_is_refused_before_reading():
    da = pytest.importorskip("dask.array")
    X, y = _data(n=400)
    with PrivacyAccountant(epsilon=1.0, delta=1e-6) as budget:
        for params in (dict(feature_bound="auto"), dict(y_bound="auto")):
            model = _model(accountant=budget, **params)
            with pytest.raises(ValueError, match="dask array takes neither"):
                model.fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
            assert not hasattr(model, "coef_")
        assert budget.spent().epsilon == 0.0


@pytest.mark.parametrize("selection", SELECTIONS)
def test_spec_parts_and_private_selection(selection):
    X, y = _data(n=3000)
    spec = _model(feature_bound="auto", y_bound="auto", epsilon=1.0,
                  selection=selection)._privacy_spec()
    parts = {part.name: part for part in spec.parts}
    share = parts["feature_bound_, a private quantile of the row L-inf norms"]
    assert share.epsilon == pytest.approx(0.1) and share.rho == pytest.approx(0.1 ** 2 / 8)
    assert parts["y_bound_, a private quantile of |y|"].epsilon == pytest.approx(0.1)
    main = spec.parts[-1]
    assert main.epsilon == pytest.approx(0.8)
    if selection == "exponential":
        assert main.rho == pytest.approx(zcdp_rho(0.8, 1e-6))
    assert spec.composition == "basic" and math.isnan(spec.mu)
    assert (spec.epsilon, spec.delta) == (1.0, 1e-6)
    assert spec.rho >= math.fsum(part.rho for part in spec.parts)
    search = PrivateHyperparameterSearch(
        _model(feature_bound="auto", y_bound="auto", epsilon=1.0, selection=selection),
        {"radius": [0.25, 0.5]}, n_candidates=2.0, y_bound=4.0, random_state=0).fit(X, y)
    best = search.best_estimator_
    assert best.feature_bound_ in AUTO_GRID and best.y_bound_ in AUTO_GRID
    assert math.isfinite(search.privacy_.epsilon)


def test_public_bounds_unchanged_by_the_mixin():
    # Public bounds: feature_bound_ and y_bound_ are the parameters, the spec is the
    # plain zCDP one, and no quantile is drawn.
    X, y = _data(n=500)
    model = _model(feature_bound=6.0, y_bound=2.0, random_state=0).fit(X, y)
    assert (model.feature_bound_, model.y_bound_) == (6.0, 2.0)
    spec = model._privacy_spec()
    assert spec.parts == () and spec.rho == pytest.approx(zcdp_rho(1.0, 1e-6))
