"""Private hyperparameter selection: accounting, the numeric core and the meta-estimator."""

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy import integrate, stats
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol._core import selection as core
from sklearn_dpol.exceptions import BudgetExceededError, NoiseReuseError
from sklearn_dpol.model_selection import PrivateHyperparameterSearch
from sklearn_dpol.model_selection._candidates import (
    candidate_rho,
    check_released_guarantee,
)
from sklearn_dpol.privacy import PrivacyAccountant, gaussian_mu, zcdp_epsilon, zcdp_rho
from sklearn_dpol.privacy._selection import (
    candidate_rdp,
    selection_candidate_rho,
    selection_epsilon,
    selection_rdp,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_mean,
)

DELTA = 1e-6
ORDERS = np.concatenate([np.linspace(1.01, 8, 300), np.linspace(8.1, 300, 600),
                         np.geomspace(300, 1e5, 100)])


def _classification(n=2_000, seed=0):
    X, y = make_classification(n_samples=n, n_features=5, random_state=seed)
    return X / 4.0, y


def _search(**kwargs):
    params = dict(n_candidates=4, random_state=0)
    params.update(kwargs)
    return PrivateHyperparameterSearch(
        PrivateIGDClassifier(classes=[0, 1], max_iter=1),
        {"alpha": [1e-2, 1e-1], "epsilon": [1.0, 2.0]}, **params)


# ------------------------------------------------------------------ accounting
@pytest.mark.parametrize("mu, mean, shape", [
    (0.5, 10, 1.0), (0.2, 10, 0.0), (1.0, 5, 1.0), (0.1, 30, 2.0), (0.5, 10, 0.5),
    (2.0, 3, 1.0),
])
def test_selection_epsilon_matches_dp_accounting(mu, mean, shape):
    """dp-accounting's RepeatAndSelectDpEvent implements the same theorem on a grid
    of orders: ours (continuous orders) is never larger and agrees closely."""
    accountant = rdp.RdpAccountant(ORDERS)
    accountant.compose(dp_event.RepeatAndSelectDpEvent(
        dp_event.GaussianDpEvent(1.0 / mu), mean, shape))
    reference = accountant.get_epsilon(DELTA)
    ours, _ = selection_epsilon(DELTA, [mu**2 / 2], n_candidates=mean, shape=shape)
    assert ours <= reference * (1 + 1e-9)
    assert ours == pytest.approx(reference, rel=2e-3)


@pytest.mark.parametrize("shape", [0.0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("mean", [1.5, 5.0, 40.0])
def test_truncated_negative_binomial_parameters_match_dp_accounting(mean, shape):
    gamma = truncated_negative_binomial_gamma(mean, shape)
    assert truncated_negative_binomial_mean(gamma, shape) == pytest.approx(mean, rel=1e-9)
    assert gamma == pytest.approx(rdp._gamma_truncated_negative_binomial(shape, mean),
                                  rel=1e-6)


def test_selection_rdp_is_theorem_2_for_one_setting():
    """By hand: eps(l) + (1+eta)((1-1/lh) eps(lh) + log(1/gamma)/lh) + log E[K]/(l-1),
    with eps(l) = l rho and the best lh = sqrt(log(1/gamma)/rho)."""
    rho, shape, gamma, order = 0.02, 1.0, 0.1, 12.0
    order_hat = math.sqrt(math.log(1 / gamma) / rho)
    expected = (order * rho + (1 + shape) * ((order_hat - 1) * rho
                                             + math.log(1 / gamma) / order_hat)
                + math.log(truncated_negative_binomial_mean(gamma, shape)) / (order - 1))
    assert selection_rdp(order, [rho], gamma=gamma, shape=shape) == pytest.approx(
        expected, rel=1e-9)


def test_candidate_rdp_of_a_mixture_by_numerical_integration():
    """A random setting released with its output: the Renyi divergence of the labelled
    mixture of N(mu_h, 1) against N(0, 1), integrated numerically, is the formula."""
    mus, weights, order = np.array([0.3, 0.8, 1.5]), np.array([0.5, 0.3, 0.2]), 3.5

    def moment(mu):
        def integrand(x):
            return math.exp(order * stats.norm.logpdf(x, mu)
                            + (1 - order) * stats.norm.logpdf(x))

        return integrate.quad(integrand, -30, 30, epsabs=0, epsrel=1e-11, limit=200)[0]

    exact = math.log(sum(w * moment(m) for w, m in zip(weights, mus))) / (order - 1)
    assert candidate_rdp(order, mus**2 / 2, weights) == pytest.approx(exact, rel=1e-8)
    # Quasi-convexity: never more than the worst setting, never less than the average.
    assert candidate_rdp(order, mus**2 / 2, weights) <= order * (mus**2 / 2).max()
    assert candidate_rdp(order, mus**2 / 2, weights) >= order * np.dot(weights, mus**2 / 2)


def test_selection_epsilon_is_monotone_and_above_one_candidate():
    base = selection_epsilon(DELTA, [0.02], n_candidates=10, shape=1.0)[0]
    assert selection_epsilon(DELTA, [0.02], n_candidates=20, shape=1.0)[0] > base
    assert selection_epsilon(DELTA, [0.04], n_candidates=10, shape=1.0)[0] > base
    assert selection_epsilon(1e-4, [0.02], n_candidates=10, shape=1.0)[0] < base
    assert selection_epsilon(DELTA, [0.02, 0.04], n_candidates=10, shape=1.0)[0] > base
    # Selecting among candidates can never be cheaper than one candidate.
    assert base > zcdp_epsilon(0.02, DELTA)
    assert selection_epsilon(DELTA, [math.inf], n_candidates=10, shape=1.0)[0] == math.inf


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 8.0])
def test_selection_candidate_rho_inverts_the_total(epsilon):
    rho = selection_candidate_rho(epsilon, DELTA, n_candidates=8, shape=1.0)
    assert selection_epsilon(DELTA, [rho], n_candidates=8, shape=1.0)[0] <= epsilon
    assert selection_epsilon(DELTA, [rho * 1.001], n_candidates=8, shape=1.0)[0] > epsilon


def test_selection_candidate_rho_refuses_an_impossible_budget():
    with pytest.raises(ValueError, match="selection alone costs more"):
        selection_candidate_rho(1e-12, 1e-12, n_candidates=1e6, shape=2.0)


# ------------------------------------------------------------------ numeric core
@pytest.mark.parametrize("mean, shape", [(5.0, 1.0), (10.0, 0.0), (4.0, 2.5), (3.0, 1e-6)])
def test_candidate_count_has_the_theoretical_law(mean, shape):
    gamma = truncated_negative_binomial_gamma(mean, shape)
    rng = np.random.default_rng(12)
    draws = np.array([core.draw_candidate_count(gamma, shape, rng) for _ in range(20_000)])
    assert draws.min() >= 1
    # P[K=1] and E[K], each within 5 standard errors.
    p1 = ((1 - gamma) / -math.log(gamma) if shape == 0
          else (1 - gamma) * shape / math.expm1(-shape * math.log(gamma)))
    assert abs((draws == 1).mean() - p1) < 5 * math.sqrt(p1 * (1 - p1) / draws.size)
    standard_error = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - mean) < 5 * standard_error


def test_geometric_count_passes_a_chi_square_test():
    gamma, rng = 0.25, np.random.default_rng(3)
    draws = np.array([core.draw_candidate_count(gamma, 1.0, rng) for _ in range(10_000)])
    ks = np.arange(1, 15)
    expected = gamma * (1 - gamma) ** (ks - 1)
    observed = np.array([(draws == k).sum() for k in ks])
    tail_observed, tail_expected = (draws >= 15).sum(), (1 - gamma) ** 14
    chi2 = stats.chisquare(np.append(observed, tail_observed),
                           np.append(expected, tail_expected) * draws.size)
    assert chi2.pvalue > 1e-4


def test_split_is_a_partition_independent_of_the_data():
    train, validation = core.split_indices(101, 0.2, np.random.default_rng(0))
    assert validation.size == 20 and train.size == 81
    assert np.array_equal(np.sort(np.concatenate([train, validation])), np.arange(101))
    again = core.split_indices(101, 0.2, np.random.default_rng(0))
    assert np.array_equal(again[1], validation)


def test_score_values_are_bounded_so_one_record_moves_the_mean_by_at_most_1_over_m():
    rng = np.random.default_rng(0)
    for _ in range(200):
        y = rng.normal(scale=5, size=30)
        pred = rng.normal(scale=5, size=30)
        values = core.clipped_squared_error_values(y, pred, bound=2.0)
        assert values.min() >= 0 and values.max() <= 1
        y2 = y.copy()
        y2[rng.integers(30)] = rng.normal(scale=50)
        moved = core.clipped_squared_error_values(y2, pred, bound=2.0)
        assert abs(moved.mean() - values.mean()) <= 1 / 30 + 1e-15
    assert core.clipped_squared_error_values([0.0], [np.nan], 1.0)[0] == 0.0
    assert core.score_sigma(50, 0.5) == pytest.approx(1 / 25)
    assert core.score_sigma(50, math.inf) == 0.0
    assert core.noisy_mean_score([0.0, 1.0], 0.0, rng) == 0.5
    with pytest.raises(ValueError):
        core.noisy_mean_score([0.0, 2.0], 0.1, rng)


def test_settings_are_drawn_independently_with_replacement():
    rng = np.random.default_rng(1)
    spaces = [{"a": [1, 2]}, {"a": [3], "b": stats.uniform(0, 1)}]
    draws = [core.sample_setting(spaces, rng) for _ in range(4_000)]
    a = np.array([d["a"] for d in draws])
    assert abs((a == 3).mean() - 0.5) < 0.04 and abs((a == 1).mean() - 0.25) < 0.04
    b = np.array([d["b"] for d in draws if "b" in d])
    assert 0 <= b.min() and b.max() <= 1 and abs(b.mean() - 0.5) < 0.03


# ------------------------------------------------------------------ candidates
SUPPORTED = [
    (PrivateIGDClassifier(epsilon=1.5, classes=[0, 1]), "c"),
    (PrivateQFTLRegressor(epsilon=0.7), "r"),
    (PrivateFrankWolfeLasso(epsilon=0.9, max_iter=20), "r"),
    (PrivateFrankWolfeLasso(epsilon=0.9, max_iter=20, selection="gaussian"), "r"),
    (PrivateMirrorDescentRegressor(epsilon=1.2, max_iter=30), "r"),
    (ParameterFreeLocalDPRegressor(epsilon=2.0), "r"),
]


@pytest.mark.parametrize("estimator, task", SUPPORTED, ids=lambda e: type(e).__name__)
def test_planned_rho_covers_the_fitted_guarantee(estimator, task):
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(300, 3))
    y = (X[:, 0] > 0).astype(int) if task == "c" else np.clip(X[:, 0], -1, 1)
    rho = candidate_rho(estimator)
    fitted = estimator.fit(X, y)
    check_released_guarantee(fitted, rho)
    if not math.isnan(fitted.privacy_.mu):
        assert fitted.privacy_.mu == pytest.approx(math.sqrt(2 * rho), rel=1e-6)
    if isinstance(estimator, PrivateFrankWolfeLasso) and estimator.selection == "exponential":
        assert rho == zcdp_rho(0.9, 1e-6)
    with pytest.raises(RuntimeError, match="out of date"):
        check_released_guarantee(fitted, rho / 4)


@pytest.mark.parametrize("estimator, match", [
    (PrivateIGDClassifier(solver="objective_perturbation"), "custom privacy profile"),
    (PrivateMirrorDescentRegressor(solver="objective_perturbation"), "custom privacy profile"),
    (MutualInformationPrivateOGDRegressor(), "does not support"),
    (LogisticRegression(), "knows it only for this library"),
    (make_pipeline(StandardScaler(), PrivateIGDClassifier()), "allow-list"),
    (make_pipeline(FunctionTransformer(), LogisticRegression()), "knows it only for this"),
    (ParameterFreeLocalDPRegressor(feature_weights=[1.0, 0.0]), "zero feature weight"),
])
def test_unsupported_candidates_are_refused_before_the_data_is_read(estimator, match):
    class Untouchable:
        """Array-like data that fails the test if anything reads it."""

        def __array__(self, *args, **kwargs):
            raise AssertionError("the data was read")

        def __len__(self):
            raise AssertionError("the data was read")

    grid = {"epsilon": [1.0]} if "epsilon" in estimator.get_params() else \
        {"C": [1.0, 2.0]}
    search = PrivateHyperparameterSearch(estimator, grid, y_bound=1.0)
    with pytest.raises(ValueError, match=match):
        search.privacy_plan()
    with pytest.raises(ValueError, match=match):
        search.fit(Untouchable(), Untouchable())
    assert not hasattr(search, "privacy_")


@pytest.mark.parametrize("grid, match", [
    ({"epsilon": stats.uniform(0.5, 1.0)}, "must be searched as a list"),
    ({"random_state": [0, 1]}, "set by the search"),
    ({"classes": [[0, 1]]}, "set by the search"),
    ({"not_a_param": [1]}, "is not a parameter"),
    ({"alpha": []}, "non-empty list"),
    ({"alpha": [1e-2, -1.0]}, "alpha"),
    ([], "non-empty"),
])
def test_bad_search_spaces_are_refused_before_the_data_is_read(grid, match):
    search = PrivateHyperparameterSearch(PrivateIGDClassifier(classes=[0, 1]), grid)
    with pytest.raises(ValueError, match=match):
        search.fit(None, None)


def test_an_accountant_that_is_not_a_privacy_accountant_is_refused():
    with pytest.raises(ValueError, match="accountant"):
        _search(accountant=object()).fit(*_classification(200))


def test_the_search_charges_the_accountant_once_for_its_total(tmp_path):
    X, y = _classification(300)
    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "ledger") as accountant:
        search = _search(accountant=accountant, random_state=0).fit(X, y)
        charges = accountant.charges
        assert search.n_candidates_ >= 1
        # One charge, for the whole search; no candidate charged on its own.
        assert [c.label for c in charges] == ["PrivateHyperparameterSearch"]
        assert charges[0].cost.epsilon == search.privacy_.epsilon
        assert charges[0].cost.delta == search.privacy_.delta
        assert search.best_estimator_.get_params()["accountant"] is None


def test_a_search_over_budget_is_refused_before_the_data_is_read(tmp_path):
    search = _search()
    total = search.privacy_plan().epsilon
    with PrivacyAccountant(epsilon=total / 2, delta=1e-5, path=tmp_path / "l") as accountant:
        with pytest.raises(BudgetExceededError):
            _search(accountant=accountant).fit(None, None)  # never read
        assert accountant.charges == []
        X, y = _classification(200)
        with pytest.raises(BudgetExceededError):
            _search(accountant=accountant).fit(X, y)
        assert accountant.charges == []


def test_a_failed_search_is_refunded(tmp_path):
    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "l") as accountant:
        X, y = _classification(200)
        X[0, 0] = np.nan
        with pytest.raises(ValueError):
            _search(accountant=accountant).fit(X, y)
        assert accountant.spent().epsilon == 0.0


def test_a_failure_after_validation_is_charged_not_refunded(tmp_path):
    """A finite record that a public step overflows (PolynomialFeatures squares 1e155)
    makes the candidate's estimator refuse its training rows: a failure that depends on
    one record, after the search read the data, so it is charged (independent review,
    session 28: it was refunded, a free repeatable query)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures

    from sklearn_dpol import PrivateQFTLRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 3))
    y = rng.uniform(-1, 1, 400)

    def search(accountant):
        return PrivateHyperparameterSearch(
            make_pipeline(PolynomialFeatures(), PrivateQFTLRegressor(data_norm=1.0,
                                                                     y_bound=1.0)),
            {"privateqftlregressor__alpha": [0.01, 0.1]}, y_bound=1.0,
            validation_fraction=0.05, accountant=accountant, random_state=0)

    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "fine") as accountant:
        planned = search(None).privacy_plan()
        search(accountant).fit(X, y)
        assert accountant.spent().epsilon == pytest.approx(planned.epsilon)
    X[7, 0] = 1e155                        # on the training side of this seed's split
    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "huge") as accountant:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with pytest.raises(ValueError, match="infinity"):
                search(accountant).fit(X, y)
        assert accountant.spent().epsilon == pytest.approx(planned.epsilon)


def test_seeded_searches_on_one_ledger_are_refused_as_noise_reuse(tmp_path):
    # A search draws everything, its candidates' seeds included, from one
    # generator: one noise fingerprint per search.
    X, y = _classification(300)
    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "l") as accountant:
        _search(accountant=accountant, random_state=0).fit(X, y)
        with pytest.raises(NoiseReuseError):
            _search(accountant=accountant, random_state=0).fit(None, None)  # never read
        _search(accountant=accountant, random_state=1).fit(X, y)
        _search(accountant=accountant, random_state=None).fit(X, y)
        _search(accountant=accountant, random_state=None).fit(X, y)
        assert len(accountant.charges) == 4


def test_labels_from_y_are_refused_with_an_accountant(tmp_path):
    search = PrivateHyperparameterSearch(PrivateIGDClassifier(max_iter=1), {"alpha": [0.1]},
                                         n_candidates=2)
    with PrivacyAccountant(epsilon=50.0, delta=1e-5, path=tmp_path / "l") as accountant:
        with pytest.raises(ValueError, match="classes="):
            search.set_params(accountant=accountant).fit(None, None)  # never read
        assert accountant.charges == []


def test_regression_needs_a_public_target_bound():
    search = PrivateHyperparameterSearch(ParameterFreeLocalDPRegressor(), {"prior_strength": [1.0]})
    with pytest.raises(ValueError, match="y_bound"):
        search.privacy_plan()
    search = PrivateHyperparameterSearch(PrivateQFTLRegressor(), {"y_bound": [1.0, 2.0]})
    with pytest.raises(ValueError, match="y_bound"):
        search.privacy_plan()


# ------------------------------------------------------------------ the search
def test_guarantee_is_planned_before_the_data_and_matches_the_formula():
    search = _search()
    planned = search.privacy_plan()
    rhos = [gaussian_mu(e, 1e-6) ** 2 / 2 for e in (1.0, 2.0)]
    expected, _ = selection_epsilon(DELTA, rhos, n_candidates=4, shape=1.0)
    assert planned.epsilon == expected and planned.delta == DELTA
    fitted = search.fit(*_classification())
    assert fitted.privacy_.epsilon == planned.epsilon
    assert fitted.privacy_.n_records == 2_000 and planned.n_records == 0
    # Equal to the worst setting's bound only if all settings were the worst.
    worst, _ = selection_epsilon(DELTA, [max(rhos)], n_candidates=4, shape=1.0)
    assert expected < worst


def test_alpha_only_search_costs_the_selection_of_one_setting():
    search = PrivateHyperparameterSearch(PrivateIGDClassifier(epsilon=1.0),
                                         {"alpha": [1e-3, 1e-2]}, n_candidates=6)
    expected, _ = selection_epsilon(DELTA, [gaussian_mu(1.0, 1e-6) ** 2 / 2],
                                    n_candidates=6, shape=1.0)
    assert search.privacy_plan().epsilon == expected


def test_integer_seed_reproduces_and_none_draws_fresh_noise():
    X, y = _classification()
    first, second = _search().fit(X, y), _search().fit(X, y)
    assert first.best_params_ == second.best_params_
    assert first.best_score_ == second.best_score_
    assert np.array_equal(first.best_estimator_.coef_, second.best_estimator_.coef_)
    assert first.n_candidates_ == second.n_candidates_
    other = _search(random_state=1).fit(X, y)
    assert other.best_score_ != first.best_score_
    fresh = [_search(random_state=None).fit(X, y).best_score_ for _ in range(2)]
    assert fresh[0] != fresh[1]


def test_the_best_candidate_is_the_argmax_of_the_noisy_scores(monkeypatch):
    scores, settings = [], []
    original_score, original_setting = core.noisy_mean_score, core.sample_setting

    def spy_score(values, sigma, rng):
        scores.append(original_score(values, sigma, rng))
        return scores[-1]

    def spy_setting(spaces, rng, return_space=False):
        index, setting = original_setting(spaces, rng, return_space=True)
        settings.append(setting)
        return (index, setting) if return_space else setting

    monkeypatch.setattr(core, "noisy_mean_score", spy_score)
    monkeypatch.setattr(core, "sample_setting", spy_setting)
    search = _search(n_candidates=6, random_state=3).fit(*_classification())
    assert len(scores) == search.n_candidates_ == len(settings)
    best = int(np.argmax(scores))
    assert search.best_score_ == scores[best]
    assert search.best_params_ == settings[best]
    assert search.best_estimator_.get_params()["alpha"] == settings[best]["alpha"]


def test_score_noise_is_calibrated_to_the_candidate(monkeypatch):
    sigmas = []
    original = core.noisy_mean_score
    monkeypatch.setattr(core, "noisy_mean_score",
                        lambda v, s, r: sigmas.append((len(v), s)) or original(v, s, r))
    search = PrivateHyperparameterSearch(PrivateIGDClassifier(classes=[0, 1], max_iter=1),
                                         {"epsilon": [1.0]}, n_candidates=2,
                                         validation_fraction=0.25, random_state=0)
    search.fit(*_classification(400))
    for m, sigma in sigmas:
        assert m == 100
        assert sigma == pytest.approx(1 / (100 * gaussian_mu(1.0, 1e-6)))


def test_released_attributes_are_only_what_the_theorem_covers():
    search = _search().fit(*_classification())
    public = {k for k in vars(search) if k.endswith("_") and not k.startswith("_")}
    assert public == {"best_estimator_", "best_params_", "best_score_", "privacy_",
                      "n_candidates_", "n_features_in_"}
    assert "NOT released" in search.privacy_.released
    exported = search.export_public()
    assert not hasattr(exported, "n_candidates_")
    assert exported.random_state is None and exported.best_estimator_.random_state is None
    assert not hasattr(exported.best_estimator_, "_rng")
    X, _ = _classification(50)
    assert np.array_equal(exported.predict(X), search.predict(X))


def test_the_released_model_is_trained_on_the_training_part_only():
    search = _search(validation_fraction=0.3).fit(*_classification(1_000))
    assert search.best_estimator_.privacy_.n_records == 700


def test_labels_taken_from_y_warn_and_are_flagged():
    from sklearn_dpol.exceptions import PrivacyLeakWarning

    search = PrivateHyperparameterSearch(PrivateIGDClassifier(max_iter=1),
                                         {"alpha": [0.1]}, n_candidates=2, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        search.fit(*_classification(300))
    assert "classes_ was taken from y" in search.privacy_.released
    assert list(search.classes_) == [0, 1]


def test_a_failed_fit_leaves_the_search_as_it_was():
    X, y = _classification()
    search = _search().fit(X, y)
    before = dict(vars(search))
    with pytest.raises(ValueError):
        search.fit(X[:1], y[:1])
    with pytest.raises(ValueError):
        search.fit(X[:, :2].astype(str).tolist() + [["a", "b"]], list(y) + [0])
    assert vars(search).keys() == before.keys()
    assert all(vars(search)[k] is before[k] for k in before)


def test_regression_search_scores_with_the_clipped_error():
    X, y = make_regression(n_samples=1_500, n_features=4, noise=5.0, random_state=0)
    X, y = X / 4.0, np.clip(y / 100.0, -1, 1)
    search = PrivateHyperparameterSearch(
        PrivateQFTLRegressor(epsilon=2.0), {"alpha": [0.1, 1.0, 10.0]}, n_candidates=4,
        random_state=0).fit(X, y)
    assert 0.0 < search.best_score_ < 1.1
    assert search.score(X, y) > 0.5


# ------------------------------------------------------------------ the page
def _python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_model_selection_page_code_runs():
    page = Path(__file__).resolve().parents[1] / "doc" / "model_selection.md"
    blocks = _python_blocks(page)
    assert blocks, "doc/model_selection.md has no python block"
    from sklearn_dpol.exceptions import DefaultBoundWarning

    namespace = {}
    for block in blocks:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DefaultBoundWarning)
            exec(compile(block, str(page), "exec"), namespace)  # noqa: S102
        assert not [w for w in caught if issubclass(w.category, DefaultBoundWarning)]


def test_docstring_example_runs():
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(PrivateHyperparameterSearch, "PrivateHyperparameterSearch")
    assert tests and tests[0].examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("name", [
    "sklearn_dpol.model_selection.PrivateHyperparameterSearch",
    *(f"sklearn_dpol.model_selection.PrivateHyperparameterSearch.{method}" for method in (
        "fit", "predict", "score", "predict_proba", "decision_function",
        "predict_log_proba", "export_public", "privacy_plan")),
    *(f"sklearn_dpol.privacy._selection.{function}" for function in (
        "candidate_rdp", "selection_rdp", "selection_epsilon", "selection_candidate_rho",
        "truncated_negative_binomial_gamma", "truncated_negative_binomial_mean")),
])
def test_public_docstrings_are_valid_numpydoc(name):
    from numpydoc.validate import validate

    ignored = {"SA01", "EX01", "ES01", "GL08", "RT02", "SS05", "PR09"}
    errors = [e for e in validate(name)["errors"] if e[0] not in ignored]
    assert not errors, errors


def test_only_the_released_candidates_warnings_are_shown():
    """GIGA warns when its burn-in swallows the data; with alpha in the grid only some
    candidates warn, and only the released one's warnings may be shown."""
    X, _ = _classification(300)
    y = np.random.default_rng(0).integers(0, 2, size=300)  # pure noise: either may win
    outcomes = set()
    for seed in range(8):
        search = PrivateHyperparameterSearch(
            PrivateIGDClassifier(classes=[0, 1], update="gradient", max_iter=1),
            {"alpha": [1e-3, 10.0]}, n_candidates=6, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y)
        burn_in = [w for w in caught if "burn-in" in str(w.message)]
        released_warns = search.best_params_["alpha"] == 1e-3
        assert len(burn_in) == int(released_warns)
        outcomes.add(released_warns)
    assert outcomes == {True, False}  # both kinds of candidate were released


def test_search_refuses_a_private_target_bound_without_its_own():
    from sklearn_dpol import PrivateHyperparameterSearch, PrivateQFTLRegressor

    X = np.random.default_rng(0).uniform(-1, 1, (200, 3))
    y = X[:, 0]
    search = PrivateHyperparameterSearch(PrivateQFTLRegressor(y_bound="auto"),
                                         {"alpha": [1e-3, 1e-2]}, n_candidates=2.0)
    with pytest.raises(ValueError, match="resolved privately inside each candidate"):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")
    # With its own public bound the search runs.
    search.set_params(y_bound=1.0, random_state=0).fit(X, y)
    assert search.best_estimator_.y_bound_ > 0


def test_a_searched_auto_bound_is_planned_at_its_own_rho():
    """``feature_bound=["auto", 1.0]`` changes a candidate's rho ("auto" spends part of
    epsilon on a private quantile): the plan enumerates it (independent review, session
    28: it planned every candidate at the numeric bound's rho, an under-charge)."""
    from sklearn.base import clone

    from sklearn_dpol import PrivateFrankWolfeLasso
    from sklearn_dpol.model_selection._candidates import candidate_rho
    from sklearn_dpol.privacy._selection import selection_epsilon

    est = PrivateFrankWolfeLasso(epsilon=1.0, feature_bound=1.0, y_bound=1.0)
    rho_numeric = candidate_rho(est)
    rho_auto = candidate_rho(clone(est).set_params(feature_bound="auto"))
    assert rho_auto != rho_numeric

    def plan(values):
        return PrivateHyperparameterSearch(est, {"feature_bound": values}, y_bound=1.0,
                                           n_candidates=10.0).privacy_plan().epsilon

    def mixture(rhos):
        return selection_epsilon(1e-6, np.array(rhos), np.full(len(rhos), 1 / len(rhos)),
                                 n_candidates=10.0, shape=1.0)[0]

    assert plan(["auto", 1.0]) == pytest.approx(mixture([rho_auto, rho_numeric]), rel=1e-12)
    assert plan(["auto"]) == pytest.approx(mixture([rho_auto]), rel=1e-12)
    assert plan([1.0, 2.0]) == pytest.approx(mixture([rho_numeric]), rel=1e-12)
    assert plan(["auto"]) > plan(["auto", 1.0]) > plan([1.0])


def test_the_released_score_carries_the_calibrated_noise():
    """The score's noise is the one calibrated (sigma = 1 / (m mu), on the exact grid):
    its empirical standard deviation within 5%, so half or twice it would fail."""
    from sklearn_dpol._core.noise import released_scale

    values = np.r_[np.ones(30), np.zeros(20)]
    sigma = core.score_sigma(values.size, 0.5)
    rng = np.random.default_rng(0)
    scores = np.array([core.noisy_mean_score(values, sigma, rng) for _ in range(4000)])
    assert np.mean(scores) == pytest.approx(0.6, abs=4 * sigma / np.sqrt(4000))
    assert np.std(scores) == pytest.approx(released_scale(sigma), rel=0.05)
    assert released_scale(sigma) == pytest.approx(sigma, rel=1e-6)


def test_the_search_scores_at_the_candidates_own_rho():
    """Every score the search releases is calibrated to its candidate's rho and the
    validation part's size (the recorded releases of one-value vectors)."""
    from sklearn_dpol._core.noise import recording_releases

    X, y = _classification(400)
    search = _search(random_state=0)
    with recording_releases() as log:
        search.fit(X, y)
    n_validation = int(round(400 * search.validation_fraction))
    allowed = [core.score_sigma(n_validation, math.sqrt(2 * candidate_rho(
        PrivateIGDClassifier(classes=[0, 1], max_iter=1, epsilon=epsilon))))
        for epsilon in (1.0, 2.0)]
    assert allowed[0] != pytest.approx(allowed[1])
    scores = [sigma for values, sigma, _ in log if values.shape == (1,)]
    assert len(scores) == search.n_candidates_
    for sigma in scores:
        assert min(abs(sigma / a - 1.0) for a in allowed) < 1e-12
