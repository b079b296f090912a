"""Regression tests for the findings of the independent privacy review."""

import warnings

import numpy as np
import pytest

from sklearn_dpol.exceptions import DefaultBoundWarning

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core import igd
from sklearn_dpol.exceptions import PrivacyLeakWarning
from sklearn_dpol.privacy import gaussian_delta, gaussian_mu


def data(seed=0, n=60, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.integers(0, 2, n)


@pytest.mark.parametrize("update,alpha", [("implicit", 1e-3), ("gradient", 0.5)])
@pytest.mark.parametrize("big", [1e154, 1e200, 1e300, 1e308, np.finfo(float).max])
def test_huge_finite_rows_are_clipped_not_nan(monkeypatch, update, alpha, big):
    """A finite row near the float limit must be clipped like any other row:
    before the fix it turned every release into NaN (epsilon = infinity)."""
    X, y = data()
    X[5] = [big, big / 2, -big]
    params = dict(update=update, alpha=alpha, random_state=0, classes=[0, 1])
    clf = PrivateIGDClassifier(**params).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    # Its direction is all that is left after clipping: any magnitude gives the same model.
    X2 = X.copy()
    X2[5] = [1.0, 0.5, -1.0]
    X2[5] *= 1e6
    np.testing.assert_allclose(PrivateIGDClassifier(**params).fit(X2, y).coef_, clf.coef_,
                               rtol=1e-9)
    monkeypatch.setattr(igd, "release", lambda W, sigma, radius, rng: W.copy())
    a = PrivateIGDClassifier(**params).fit(X, y)
    X3, y3 = X.copy(), y.copy()
    X3[5], y3[5] = -X[5], 1 - y[5]
    b = PrivateIGDClassifier(**params).fit(X3, y3)
    gap = np.linalg.norm(np.append(a.coef_ - b.coef_, a.intercept_ - b.intercept_))
    assert gap <= a.sensitivity_ * (1 + 1e-9)


def test_label_set_from_data_warns_and_is_declared():
    X, y = data()
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        clf = PrivateIGDClassifier(random_state=0).fit(X, y)
    assert "NOT covered" in clf.privacy_.released
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        public = PrivateIGDClassifier(classes=[0, 1, 2], random_state=0).fit(X, y)
    # The public label set fixes the shape of the release, whatever y contains.
    assert public.coef_.shape == (3, 3) and "NOT covered" not in public.privacy_.released
    with pytest.raises(ValueError, match="at least two classes"):
        PrivateIGDClassifier(classes=[0]).fit(X, y)
    # Naming the classes later does not un-leak a label set inferred by fit.
    clf.partial_fit(X, y, classes=[0, 1])
    assert "NOT covered" in clf.privacy_.released


def test_unseeded_generator_is_replaced_after_each_release(monkeypatch):
    used = []
    original = igd.release
    monkeypatch.setattr(igd, "release",
                        lambda W, sigma, radius, rng: used.append(rng) or original(W, sigma, radius, rng))
    X, y = data()
    clf = PrivateIGDClassifier(solver="igd", classes=[0, 1], stream="iterate_perturbation").fit(X, y)
    assert clf._rng is not used[-1]
    clf.partial_fit(X, y)
    assert clf._rng is not used[-1] and used[-1] is not used[0]
    seeded = PrivateIGDClassifier(solver="igd", classes=[0, 1], random_state=3).fit(X, y)
    assert seeded._rng is used[-1]  # reproducible by design with an integer seed


def test_fit_and_stream_never_share_noise_under_one_seed(noise_draws):
    draws = noise_draws
    X, y = data()
    PrivateIGDClassifier(solver="igd", classes=[0, 1], random_state=0).fit(X, y)
    PrivateIGDClassifier(solver="igd", classes=[0, 1], stream="iterate_perturbation", random_state=0).partial_fit(X, y)
    assert not np.allclose(draws[0], draws[1])


@pytest.mark.parametrize("epsilon", [1e-3, 0.3, 1.0, 7.0, 30.0])
@pytest.mark.parametrize("delta", [1e-15, 1e-9, 1e-6, 1e-3, 0.2])
def test_calibrated_mu_never_overspends(epsilon, delta):
    assert gaussian_delta(epsilon, gaussian_mu(epsilon, delta)) <= delta


@pytest.mark.parametrize("params", [
    dict(data_norm=1e200), dict(alpha=1e-300), dict(intercept_scaling=1e300),
    dict(update="gradient", alpha=1e-12),
])
def test_extreme_bounds_raise_a_clear_error(params):
    X, y = data()
    with pytest.raises(ValueError, match="alpha|data_norm|burn-in"):
        PrivateIGDClassifier(**params).fit(X, y)


def test_gradient_burn_in_warns_when_the_data_is_ignored():
    X, y = data()
    with pytest.warns(UserWarning, match="burn-in"):
        PrivateIGDClassifier(update="gradient", alpha=1e-3, classes=[0, 1]).fit(X, y)


def test_extreme_curvature_solves_the_implicit_step():
    from sklearn_dpol._core._loss_kernels import implicit_log_loss_weight

    for margin, curvature in [(1e34, 8e33), (-1e34, 8e33), (40.0, 1e5), (0.0, 1e250), (3.0, 1e87)]:
        s = implicit_log_loss_weight(margin, curvature)
        assert 0.0 <= s <= 1.0 and np.isfinite(s)
        if 0.0 < s:
            residual = s - 1.0 / (1.0 + np.exp(min(margin + curvature * s, 700.0)))
            assert abs(residual) <= 1e-9 * s


def test_gradient_burn_in_with_tiny_alpha_does_not_divide_by_zero():
    X, y = data()
    clf = PrivateIGDClassifier(update="gradient", alpha=1e-200, data_norm=1e-160,
                               fit_intercept=False, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert np.all(np.isfinite(clf.coef_))


def test_equal_array_params_do_not_count_as_changed():
    X, y = data()
    clf = PrivateIGDClassifier(classes=np.array([0, 1]), random_state=0)
    clf.partial_fit(X, y)
    clf.set_params(classes=np.array([0, 1]))  # a new but equal array
    clf.partial_fit(X, y)
    clf.set_params(classes=np.array([0, 2]))
    with pytest.raises(ValueError, match="changed since the stream started"):
        clf.partial_fit(X, y)


# -- second review (Frank-Wolfe, QFTL, shared machinery) -------------------------

from sklearn_dpol import PrivateFrankWolfeLasso, PrivateQFTLRegressor  # noqa: E402
from sklearn_dpol._core import frank_wolfe as fw_core  # noqa: E402
from sklearn_dpol.privacy import zcdp_delta, zcdp_rho  # noqa: E402


@pytest.mark.parametrize("selection", ["exponential", "gaussian"])
@pytest.mark.parametrize("bounds", [dict(feature_bound=1e-160, y_bound=1e-160),
                                    dict(radius=1e-320), dict(feature_bound=1e-320, radius=1.0)])
def test_bounds_that_round_the_noise_to_zero_are_refused(selection, bounds):
    X = np.random.default_rng(0).uniform(-1, 1, size=(200, 4)) * 1e-160
    y = np.zeros(200)
    model = PrivateFrankWolfeLasso(selection=selection, **bounds)
    if selection == "gaussian" and bounds.get("radius") == 1e-320:
        # The gradient's bound B (B r + Y) does not shrink with r: the noise stays.
        assert model.fit(X, y).noise_scale_ > 1e-3
        return
    # (or, since 54.3, the Gram statistics' floor, checked first for tiny bounds)
    with pytest.raises(ValueError, match="too small for floating point|smaller than 1e-290"):
        model.fit(X, y)


def test_bounds_whose_gram_matrix_overflows_are_refused():
    X = np.zeros((2, 3))
    X[:, 0] = 1e154
    with pytest.raises(ValueError, match="overflow"):
        PrivateFrankWolfeLasso(feature_bound=1e154, y_bound=1e-160, radius=1e-10).fit(
            X, np.zeros(2))


def test_float32_rows_are_clipped_to_the_bound_itself():
    X = np.full((5, 3), 0.5, dtype=np.float32)
    problem = fw_core.ClippedLeastSquares(X, np.zeros(5), feature_bound=0.1, y_bound=1.0,
                                          intercept=False, precompute=False)
    assert problem._clip_rows(0, 5).max() <= 0.1


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (0.1, 1e-9), (5.0, 1e-5), (0.01, 1e-12)])
def test_zcdp_rho_never_overspends_delta(epsilon, delta):
    assert zcdp_delta(zcdp_rho(epsilon, delta), epsilon) <= delta


@pytest.mark.parametrize("make", [
    lambda rs: PrivateFrankWolfeLasso(random_state=rs),
    lambda rs: PrivateQFTLRegressor(random_state=rs),
    lambda rs: PrivateIGDClassifier(random_state=rs, classes=[0, 1]),
])
def test_failed_fit_leaves_a_random_state_instance_untouched(make):
    seeder = np.random.RandomState(3)
    before = seeder.get_state()[1].copy()
    X = np.ones((4, 2))
    X[0, 0] = np.nan
    with pytest.raises(ValueError):
        make(seeder).fit(X, np.array([0, 1, 0, 1]))
    np.testing.assert_array_equal(seeder.get_state()[1], before)


def test_private_search_emits_no_warning_that_depends_on_one_record():
    """Review of the private selection: predictions on the validation part
    overflowed for one extreme record and warned once per candidate, revealing
    both that record and the secret number of candidates K."""
    from sklearn_dpol.model_selection import PrivateHyperparameterSearch

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    neighbour = X.copy()
    neighbour[:, 0] = 1.7e308  # every row extreme: a warning would fire in every scoring
    seen = []
    for data_set in (X, neighbour):
        search = PrivateHyperparameterSearch(
            PrivateIGDClassifier(classes=[0, 1]), {"alpha": [1e-3, 1e-2]},
            n_candidates=10, random_state=5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(data_set, y)
        # Only the default-bound warning, whose text depends on the parameters alone.
        assert {w.category for w in caught} <= {DefaultBoundWarning}
        seen.append([str(w.message) for w in caught])
    assert seen[0] == seen[1]


@pytest.mark.parametrize("weights", [[5e-324, 1.0, 1.0, 1.0], [1e-13, 1.0, 1.0, 1.0]])
def test_a_weight_whose_share_vanishes_is_refused_not_made_public(weights):
    """Review of the private selection: a positive weight that normalised to 0
    made its coordinate public while the plan still promised epsilon."""
    from sklearn_dpol import ParameterFreeLocalDPRegressor

    X, y = data(n=40)
    with pytest.raises(ValueError, match="positive weight below"):
        ParameterFreeLocalDPRegressor(feature_weights=weights).fit(X, y.astype(float))


def test_private_search_silences_a_verbose_candidate(capsys):
    """A verbose base estimator printed one summary per candidate: that count is K."""
    from sklearn_dpol.model_selection import PrivateHyperparameterSearch

    X, y = data(n=200)
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(classes=[0, 1], verbose=1), {"alpha": [1e-3, 1e-2]},
        n_candidates=5, random_state=0).fit(X / 4, y)
    assert search.n_candidates_ > 1
    assert capsys.readouterr().out == ""
    assert search.best_estimator_.verbose == 0


def test_unknown_label_is_not_an_error():
    """Accountant review: the refunded error named the unknown label, a record's value.

    Issue 15 item 4 went further: any error was a free one-bit answer. A record
    whose label is outside the public classes now contributes nothing
    (tests/test_failures_and_copies.py checks the release).
    """
    X, y = data(n=40)
    y = y.copy()
    y[3] = 7
    clf = PrivateIGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert np.all(np.isfinite(clf.coef_))


@pytest.mark.parametrize("target", ["frank_wolfe", "igd"])
def test_private_search_measures_each_candidate_from_its_noise(monkeypatch, target):
    """Selection review: the safety net compared a candidate's claim with its own
    hyperparameters, so a calibration bug (here: too little noise) passed."""
    from sklearn_dpol import PrivateFrankWolfeLasso
    from sklearn_dpol._core import frank_wolfe
    from sklearn_dpol.model_selection import PrivateHyperparameterSearch

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (500, 4))
    if target == "frank_wolfe":
        original = frank_wolfe._bounded_range_per_step
        monkeypatch.setattr(frank_wolfe, "_bounded_range_per_step",
                            lambda *args: 3.0 * original(*args))
        estimator, y = PrivateFrankWolfeLasso(max_iter=20), np.clip(X[:, 0], -1, 1)
    else:
        import sklearn_dpol._auto_bounds as auto_bounds

        # A calibration bug: the estimator's noise for three times the budget (it
        # calibrates with the mu of its budget split, _auto_bounds.py).
        monkeypatch.setattr(auto_bounds, "gaussian_mu", lambda *args: 3.0 * gaussian_mu(*args))
        estimator, y = PrivateIGDClassifier(classes=[0, 1], max_iter=1), (X[:, 0] > 0).astype(int)
    search = PrivateHyperparameterSearch(estimator, {"epsilon": [1.0]}, n_candidates=2,
                                         random_state=0)
    with pytest.raises(RuntimeError, match="out of date"):
        search.fit(X / 4, y)
    assert not hasattr(search, "best_estimator_")


@pytest.mark.parametrize("kind", ["igd", "qftl", "frank_wolfe"])
def test_measured_candidate_rho_equals_the_plan_exactly(kind):
    """The measured zCDP must equal the planned one in a correct fit, so that a
    formula off by any factor (2 included) in either direction fails here."""
    from sklearn_dpol import PrivateFrankWolfeLasso, PrivateQFTLRegressor
    from sklearn_dpol.model_selection._candidates import _calibrated_rho, candidate_rho

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(300, 3))
    estimator, y = {
        "igd": (PrivateIGDClassifier(solver="igd", classes=[0, 1, 2], epsilon=0.7), rng.integers(0, 3, 300)),
        "qftl": (PrivateQFTLRegressor(epsilon=2.0), X[:, 0]),
        "frank_wolfe": (PrivateFrankWolfeLasso(epsilon=0.9, max_iter=20), X[:, 0]),
    }[kind]
    fitted = estimator.fit(X, y)
    assert _calibrated_rho(fitted) == pytest.approx(candidate_rho(estimator), rel=1e-9)
