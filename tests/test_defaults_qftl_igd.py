"""Public tuning rules (issue 17): QFTL's AdaSSP ridge and IGD's L2 strength."""

import math

import numpy as np
import pytest
from sklearn.base import clone

import sklearn_dpol.linear_model._qftl as qftl_module
from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol._core.noise import recording_releases
from sklearn_dpol.model_selection._candidates import (
    _calibrated_rho,
    candidate_rho,
    check_released_guarantee,
)
from sklearn_dpol.privacy import PrivacyAccountant, gaussian_mu


def regression_data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    y = np.clip(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n), -1, 1)
    return X, y


def eigenvalue_release(reg, X, y):
    """The values before noise and the noise scale of the fit's eigenvalue release."""
    with recording_releases() as log:
        reg.fit(X, y)
    scalar = [(values, sigma) for values, sigma, _ in log if values.shape == (1,)]
    assert len(scalar) == 1 and len(log) == 2
    return float(scalar[0][0][0]), scalar[0][1]


# -- QFTL: AdaSSP ---------------------------------------------------------------

def test_alpha_auto_is_the_default_and_never_written_back():
    X, y = regression_data()
    reg = PrivateQFTLRegressor(random_state=0)
    assert reg.get_params()["alpha"] == "auto"
    reg.fit(X, y)
    assert reg.alpha == "auto" and reg.get_params()["alpha"] == "auto"
    assert isinstance(reg.alpha_, float) and reg.alpha_ > 0
    assert clone(reg).alpha == "auto"
    fixed = PrivateQFTLRegressor(alpha=0.05, random_state=0).fit(X, y)
    assert fixed.alpha_ == 0.05 and fixed.eigenvalue_noise_scale_ is None


@pytest.mark.parametrize("seed", range(5))
def test_eigenvalue_query_moves_by_at_most_its_sensitivity(seed):
    """Noise off: replace-one neighbours move lambda_min(V) by at most R^2 (Weyl)."""
    rng = np.random.default_rng(seed)
    X, y = regression_data(n=60, d=3, seed=seed)
    # Nearly singular data: most rows on a line, so one record matters a lot.
    X[:, 2] = X[:, 0] * 0.01
    params = dict(epsilon=1.0, data_norm=0.7, y_bound=1.0, intercept_scaling=0.4,
                  random_state=0)
    # The statistics are those of the unit-scale rows (x / data_norm, intercept 0.4 / 0.7).
    R = norm_bound(1.0, 0.4 / 0.7)
    base, sigma = eigenvalue_release(PrivateQFTLRegressor(**params), X, y)
    bound = qftl.min_eigenvalue_sensitivity(R, len(X))
    assert bound >= R * R
    worst = 0.0
    for index in rng.choice(len(X), 5, replace=False):
        for _ in range(6):
            X2, y2 = X.copy(), y.copy()
            # Replacements of every size, beyond the bound (clipped) included.
            X2[index] = rng.standard_normal(3) * rng.choice([0.01, 0.5, 5.0])
            y2[index] = rng.uniform(-2, 2)
            moved, sigma2 = eigenvalue_release(PrivateQFTLRegressor(**params), X2, y2)
            assert sigma2 == sigma                       # the scale is public
            worst = max(worst, abs(moved - base))
            assert abs(moved - base) <= bound
    assert worst > 0.05 * R * R   # the test data does move it


def test_weyl_bound_is_attained_and_never_exceeded():
    """A record along the only direction of a rank-deficient V moves lambda_min by R^2."""
    R = 1.0
    X = np.zeros((10, 2))
    X[:, 0] = 1.0
    # V = diag(9, 1) with row 0 = (0, 1); replacing it by (1, 0) gives diag(10, 0).
    X[0] = [0.0, 1.0]
    y = np.zeros(10)
    params = dict(epsilon=1.0, data_norm=R, fit_intercept=False, random_state=0)
    a, _ = eigenvalue_release(PrivateQFTLRegressor(**params), X, y)
    X2 = X.copy()
    X2[0] = [1.0, 0.0]
    b, _ = eigenvalue_release(PrivateQFTLRegressor(**params), X2, y)
    assert abs(a - b) == pytest.approx(1.0)
    assert abs(a - b) <= qftl.min_eigenvalue_sensitivity(R, 10)


def test_rule_reads_the_data_only_through_the_released_eigenvalue(monkeypatch):
    """With the eigenvalue's release fixed, alpha_ is a function of public values."""
    real_release = qftl_module.gaussian_release
    pinned = {"value": 3.0}

    def release(values, sigma, rng, postprocess=None):
        if np.shape(values) == (1,):                   # the eigenvalue's release
            return np.array([pinned["value"]])
        return real_release(values, sigma, rng, postprocess)

    monkeypatch.setattr(qftl_module, "gaussian_release", release)
    seen = set()
    for seed in range(4):
        X, y = regression_data(n=500, d=4, seed=seed)
        X = X * (0.2 + seed)                          # different spectra, same shape
        reg = PrivateQFTLRegressor(epsilon=1.0, random_state=seed).fit(X, y)
        seen.add(reg.alpha_)
    assert len(seen) == 1
    alpha_pinned = seen.pop()
    # And it is the documented function of the released value and public scales.
    reg = PrivateQFTLRegressor(epsilon=1.0, random_state=0).fit(*regression_data(n=500))
    lam = qftl.adassp_ridge(3.0, 5, reg.eigenvalue_noise_scale_, reg.noise_scale_, 1e-6)
    assert alpha_pinned == pytest.approx(max(lam / 500, qftl.ALPHA_FLOOR * 2.0))
    # The released value does drive the rule: a large eigenvalue needs no ridge.
    pinned["value"] = 1e6
    big = PrivateQFTLRegressor(epsilon=1.0, random_state=0).fit(*regression_data(n=500))
    assert big.alpha_ == pytest.approx(qftl.ALPHA_FLOOR * 2.0)
    assert big.alpha_ < alpha_pinned


def test_adassp_ridge_formula():
    d, s1, sV, delta = 6, 2.0, 3.0, 1e-6
    spectral = qftl.SPECTRAL_FRACTION * sV * math.sqrt(d * math.log(2 * d * d / 0.05))
    shift = s1 * math.sqrt(math.log(6 / delta))
    assert qftl.adassp_ridge(-50.0, d, s1, sV, delta) == pytest.approx(spectral)
    assert qftl.adassp_ridge(shift + spectral / 4, d, s1, sV, delta) == pytest.approx(
        spectral * 3 / 4)
    assert qftl.adassp_ridge(shift + 10 * spectral, d, s1, sV, delta) == 0.0


@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-8)])
def test_composed_mu_is_the_target(epsilon, delta):
    X, y = regression_data()
    reg = PrivateQFTLRegressor(epsilon=epsilon, delta=delta, random_state=0).fit(X, y)
    target = gaussian_mu(epsilon, delta)
    mu_stats = reg.sensitivity_ / reg.noise_scale_
    mu_eig = reg.eigenvalue_sensitivity_ / reg.eigenvalue_noise_scale_
    assert math.hypot(mu_stats, mu_eig) == pytest.approx(target, rel=1e-12)
    assert mu_eig ** 2 == pytest.approx(qftl.EIGENVALUE_SHARE * target ** 2)
    assert reg.privacy_.mu == pytest.approx(target) and reg.privacy_.spent_mu == pytest.approx(target)
    assert "lambda_min" in reg.privacy_.mechanism
    # Private selection plans mu*^2/2 and measures the same from the noise drawn.
    rho = candidate_rho(PrivateQFTLRegressor(epsilon=epsilon, delta=delta))
    assert rho == pytest.approx(target ** 2 / 2)
    assert _calibrated_rho(reg) == pytest.approx(rho, rel=1e-9)
    check_released_guarantee(reg, rho)
    # Leaving the eigenvalue out of the measured rho would under-count it.
    assert mu_stats ** 2 / 2 == pytest.approx((1 - qftl.EIGENVALUE_SHARE) * rho, rel=1e-9)
    assert mu_stats ** 2 / 2 < (1 - qftl.EIGENVALUE_SHARE / 2) * rho


def test_selection_safety_net_catches_an_uncounted_eigenvalue_release(monkeypatch):
    X, y = regression_data()
    monkeypatch.setattr(qftl, "EIGENVALUE_SHARE", 0.5)
    reg = PrivateQFTLRegressor(epsilon=1.0, random_state=0).fit(X, y)
    # Pretend the statistics took the whole budget: the eigenvalue is then extra.
    reg.noise_scale_ = reg.sensitivity_ / gaussian_mu(1.0, 1e-6)
    with pytest.raises(RuntimeError, match="outside the planned"):
        check_released_guarantee(reg, gaussian_mu(1.0, 1e-6) ** 2 / 2)


def test_accountant_is_charged_the_whole_budget(tmp_path):
    X, y = regression_data()
    target = gaussian_mu(1.0, 1e-6)
    with PrivacyAccountant(epsilon=3.0, delta=1e-6) as accountant:
        PrivateQFTLRegressor(epsilon=1.0, random_state=0, accountant=accountant).fit(X, y)
        charges = accountant.charges
        spend = accountant.spent()
    assert len(charges) == 1 and charges[0].status == "spent"
    assert charges[0].cost.mu == pytest.approx(target)
    assert spend.mu == pytest.approx(target)


def test_streams_keep_a_public_alpha():
    X, y = regression_data(n=600)
    stream = PrivateQFTLRegressor(random_state=0)
    stream.partial_fit(X[:100], y[:100])
    # AdaSSP's ridge with lambda_min taken as 0, from the release's public noise level.
    d = X.shape[1] + 1
    _, _, noise_std, _, *_ = stream._released_solve
    expected = qftl.adassp_ridge(0.0, d, 0.0, noise_std, 1e-6) / 100
    assert stream.alpha_ == pytest.approx(expected) and stream.alpha == "auto"
    with recording_releases() as log:
        stream.partial_fit(X[100:200], y[100:200])
    assert all(values.shape != (1,) for values, _, _ in log)   # no eigenvalue release
    _, _, noise_std, _, *_ = stream._released_solve
    assert stream.alpha_ == pytest.approx(qftl.adassp_ridge(0.0, d, 0.0, noise_std, 1e-6) / 200)
    # A stream continuing a fit keeps the fit's released alpha_.
    reg = PrivateQFTLRegressor(random_state=0).fit(X[:400], y[:400])
    fitted_alpha = reg.alpha_
    reg.partial_fit(X[400:], y[400:])
    assert reg.alpha_ == fitted_alpha


def test_no_noise_gives_near_least_squares():
    X, y = regression_data(n=2000)
    reg = PrivateQFTLRegressor(epsilon=np.inf, data_norm=10.0, y_bound=10.0).fit(X, y)
    # The floor of the unit-scale rows (R^2 = 2: intercept_scaling="auto" is data_norm),
    # in the units of X (times data_norm^2).
    assert reg.alpha_ == pytest.approx(qftl.ALPHA_FLOOR * 2.0 * 100.0)
    assert reg.eigenvalue_noise_scale_ == 0.0
    A = np.hstack([X, np.ones((len(X), 1))])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(reg.coef_, coef[:-1], atol=1e-6)


def test_audit_of_auto_stays_within_the_claim():
    from sklearn_dpol.audit import audit_estimator

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(64, 2)) / math.sqrt(2)
    y = rng.uniform(-1, 1, size=64)
    X[0], y[0] = [1.0, 0.0], 1.0
    canary = (np.array([0.5, math.sqrt(3) / 2]), -1.0)
    params = dict(epsilon=1.0, fit_intercept=False, data_norm=1.0, y_bound=1.0)
    result = audit_estimator(PrivateQFTLRegressor(**params), X, y, 0, canary, 2000,
                             random_state=0)
    assert result.instance_mu <= gaussian_mu(1.0, 1e-6) * (1 + 1e-9)
    assert result.epsilon_lower_bound <= 1.0


# -- IGD: the public L2 strength ------------------------------------------------

import sklearn_dpol.linear_model._igd as igd_module  # noqa: E402
from sklearn_dpol import PrivateIGDClassifier  # noqa: E402


def classification_data(n=300, d=3, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / math.sqrt(d)
    y = rng.integers(0, n_classes, size=n)
    return X, y


def test_igd_alpha_auto_is_the_default_and_a_public_rule():
    X, y = classification_data()
    clf = PrivateIGDClassifier(solver="igd", classes=[0, 1], random_state=0)
    assert clf.get_params()["alpha"] == "auto"
    clf.fit(X, y)
    assert clf.alpha == "auto"
    # intercept_scaling="auto": 1/sqrt(3) at data_norm=1 and 3 features (privacy.md 55.16).
    assert clf.intercept_scaling_ == 1 / math.sqrt(3)
    L = norm_bound(1.0, clf.intercept_scaling_)
    mu = gaussian_mu(1.0, 1e-6)
    assert clf.alpha_ == pytest.approx(igd_module.public_alpha(L, 300, mu))
    expected = (2 * L ** 6 / (igd_module.LOGIT_SCALE ** 2 * 300 ** 2 * mu ** 2)) ** (1 / 3)
    assert clf.alpha_ == pytest.approx(max(expected, L * L / 300))
    # The sensitivity the noise is calibrated to uses the resolved value.
    fixed = PrivateIGDClassifier(solver="igd", classes=[0, 1], alpha=clf.alpha_, random_state=0).fit(X, y)
    assert fixed.noise_scale_ == pytest.approx(clf.noise_scale_)
    np.testing.assert_array_equal(fixed.coef_, clf.coef_)


def test_igd_rule_reads_no_data():
    """Same shape and classes, any values: the same alpha_; n, epsilon and K move it."""
    seen = set()
    for seed in range(4):
        X, y = classification_data(seed=seed)
        X = X * (0.1 + seed)
        seen.add(PrivateIGDClassifier(solver="igd", classes=[0, 1], random_state=seed).fit(X, y).alpha_)
    assert len(seen) == 1
    X, y = classification_data(n=3000)
    assert PrivateIGDClassifier(solver="igd", classes=[0, 1]).fit(X, y).alpha_ < seen.pop()
    X, y = classification_data(n_classes=3)
    multi = PrivateIGDClassifier(solver="igd", classes=[0, 1, 2], random_state=0).fit(X, y).alpha_
    binary = PrivateIGDClassifier(solver="igd", classes=[0, 1], random_state=0).fit(X, y % 2).alpha_
    assert multi == pytest.approx(binary * 3 ** (1 / 3))
    loose = PrivateIGDClassifier(solver="igd", classes=[0, 1], epsilon=4.0).fit(X, y % 2).alpha_
    assert loose < binary


def test_igd_rule_minimises_its_stated_risk_proxy():
    L, n, mu, K = math.sqrt(2.0), 50_000, 0.3, 1
    W = igd_module.LOGIT_SCALE / L

    def proxy(alpha):
        sigma = math.sqrt(K) * 2 * L / (alpha * n * mu)
        return alpha * W * W / 2 + L * L * sigma * sigma / 8

    alpha = igd_module.public_alpha(L, n, mu, K)
    assert proxy(alpha) <= min(proxy(0.9 * alpha), proxy(1.1 * alpha))
    assert igd_module.public_alpha(L, n, math.inf) == pytest.approx(L * L / n)


def test_igd_seed_option_is_the_horizon_rule():
    X, y = classification_data(n=400)
    clf = PrivateIGDClassifier(classes=[0, 1], alpha="seed", random_state=0).fit(X, y)
    assert clf.alpha == "seed"
    L2 = 1 + 1 / 3                     # L^2 with the "auto" intercept 1/sqrt(3) (55.16)
    assert clf.alpha_ == pytest.approx(L2 / math.sqrt(400))
    stream = PrivateIGDClassifier(classes=[0, 1], alpha="seed", horizon=10_000)
    stream.partial_fit(X[:100], y[:100])
    assert stream.alpha_ == pytest.approx(L2 / 100.0)


def test_igd_streams_resolve_from_public_values():
    X, y = classification_data(n=600)
    bare = PrivateIGDClassifier(classes=[0, 1], random_state=0).partial_fit(X[:100], y[:100])
    L2 = 1 + 1 / 3                     # L^2 with the "auto" intercept 1/sqrt(3) (55.16)
    assert bare.alpha_ == pytest.approx(igd_module.STREAM_ALPHA * L2)
    horizon = PrivateIGDClassifier(classes=[0, 1], horizon=600, random_state=0)
    horizon.partial_fit(X[:100], y[:100])
    assert horizon.alpha_ == pytest.approx(
        igd_module.public_alpha(math.sqrt(L2), 600, gaussian_mu(1.0, 1e-6)))
    first = horizon.alpha_
    horizon.partial_fit(X[100:400], y[100:400])      # the calibration is fixed
    assert horizon.alpha_ == first
    fitted = PrivateIGDClassifier(classes=[0, 1], random_state=0).fit(X[:300], y[:300])
    alpha = fitted.alpha_
    fitted.partial_fit(X[300:], y[300:])
    assert fitted.alpha_ == alpha


def test_igd_auto_overflow_is_refused_before_reading_the_data():
    X, y = classification_data()
    clf = PrivateIGDClassifier(classes=[0, 1], data_norm=1e200)
    with pytest.raises(ValueError, match="infinite sensitivity"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_") and not hasattr(clf, "alpha_")


# -- IGD's objective perturbation: the ridge at its own noise (privacy.md 47) ------

import sklearn_dpol._core.objective_perturbation as op_core  # noqa: E402


def op_classifier(**params):
    params.setdefault("classes", [0, 1])
    return PrivateIGDClassifier(solver="objective_perturbation", random_state=0, **params)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_igd_op_alpha_is_the_worst_case_balance_at_its_own_noise(n_classes):
    X, y = classification_data(n=400, n_classes=n_classes)
    classes = list(range(n_classes))
    clf = op_classifier(classes=classes).fit(X, y)
    assert clf.alpha == "auto"
    # 3 features and the intercept ("auto": 1/sqrt(3), privacy.md 55.16)
    L, n, k = norm_bound(1.0, 1 / math.sqrt(3)), 400, 4
    T = igd_module.LOGIT_SCALE / L
    K = 1 if n_classes == 2 else n_classes
    # The fixed point: Lambda = sqrt(k) sigma / (2 T) with sigma the fit's own noise.
    assert igd_module.OP_BALANCE_FACTOR == 0.5
    assert n * clf.alpha_ == pytest.approx(math.sqrt(k) * clf.noise_scale_ / (2 * T),
                                           rel=1e-9)
    assert n * clf.alpha_ == pytest.approx(
        0.5 * op_core.worst_case_ridge(clf.noise_scale_, k, T), rel=1e-9)
    assert clf.alpha_ == igd_module.objective_perturbation_alpha(
        1.0, 1e-6, n_samples=n, lipschitz=L, n_columns=k, n_problems=K)
    # Above the curvature floor, with less noise than the floor's plan.
    floor = op_core.plan(1.0, 1e-6, n_samples=n, feature_norm=L, derivative_bound=1.0,
                         curvature_bound=0.25, alpha=0.0, n_problems=K)
    assert n * clf.alpha_ > floor.regularization
    assert clf.noise_scale_ < floor.noise_std
    # alpha is a public input: the same value passed explicitly gives the same release.
    fixed = op_classifier(classes=classes, alpha=clf.alpha_).fit(X, y)
    assert fixed.noise_scale_ == clf.noise_scale_
    np.testing.assert_array_equal(fixed.coef_, clf.coef_)
    # solver="igd" keeps its own rule.
    igd = PrivateIGDClassifier(classes=classes, random_state=0, solver="igd").fit(X, y)
    assert igd.alpha_ == pytest.approx(
        igd_module.public_alpha(L, n, gaussian_mu(1.0, 1e-6), K))


def test_igd_op_alpha_worst_case_balance_minimises_its_bound():
    sigma, k, T, n = 7.0, 12, 3.0, 1000
    s = sigma / n

    def bound(alpha):
        return alpha * T * T / 8 + k * s * s / (8 * alpha)

    best = op_core.worst_case_ridge(sigma, k, T) / n
    assert bound(best) <= min(bound(0.9 * best), bound(1.1 * best))
    ridge = np.linspace(0.2, 5.0, 49) * best
    assert bound(best) <= bound(ridge).min() * (1 + 1e-12)


def test_igd_op_alpha_at_the_curvature_floor_and_without_noise():
    # One feature, no intercept, a small epsilon and a large delta: the balance at the
    # floor's noise is below the floor, so the rule takes the floor.
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, size=(300, 1)), rng.integers(0, 2, 300)
    clf = op_classifier(epsilon=0.01, delta=0.01, fit_intercept=False).fit(X, y)
    floor = op_core.plan(0.01, 0.01, n_samples=300, feature_norm=1.0, derivative_bound=1.0,
                         curvature_bound=0.25, alpha=0.0)
    assert 0.5 * op_core.worst_case_ridge(floor.noise_std, 1, igd_module.LOGIT_SCALE) < (
        floor.regularization)
    assert 300 * clf.alpha_ == pytest.approx(floor.regularization, rel=1e-12)
    assert clf.noise_scale_ == pytest.approx(floor.noise_std, rel=1e-12)
    X, y = classification_data()
    exact = op_classifier(epsilon=math.inf).fit(X, y)
    assert exact.alpha_ == pytest.approx((1 + 1 / 3) / 300)   # L^2 / n, as public_alpha


def test_igd_op_alpha_reads_no_data():
    """Same shape and classes, any values: the same alpha_ and noise; eps, K, d move it."""
    seen = set()
    for seed in range(3):
        X, y = classification_data(seed=seed)
        X = X * (0.1 + seed)
        clf = op_classifier().fit(X, y)
        seen.add((clf.alpha_, clf.noise_scale_, clf.sensitivity_))
    assert len(seen) == 1
    alpha = seen.pop()[0]
    X, y = classification_data()
    assert op_classifier(epsilon=4.0).fit(X, y).alpha_ < alpha
    X, y = classification_data(d=12)
    assert op_classifier().fit(X, y).alpha_ > alpha


def test_igd_op_alpha_with_auto_data_norm_uses_the_resolved_bound():
    X, y = classification_data(n=2000, d=5)
    clf = op_classifier(data_norm="auto").fit(X, y)
    # intercept_scaling="auto" follows the resolved bound: data_norm_ / sqrt(5) (55.16).
    L = norm_bound(clf.data_norm_, clf.intercept_scaling_)
    assert clf.intercept_scaling_ == pytest.approx(clf.data_norm_ / math.sqrt(5), rel=1e-15)
    assert clf.alpha_ == igd_module.objective_perturbation_alpha(
        clf._budget_split()[1], 1e-6, n_samples=2000, lipschitz=L, n_columns=6)
    assert 2000 * clf.alpha_ == pytest.approx(
        0.5 * math.sqrt(6) * clf.noise_scale_ * L / igd_module.LOGIT_SCALE, rel=1e-9)
