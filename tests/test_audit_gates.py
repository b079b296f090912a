"""Audit gates: the audited lower bound never exceeds the claim (tight side), and
the same audit catches a deliberately broken calibration (power side).

The canary comes from the sensitivity analysis (doc/privacy.md, section 2):
hinge loss with alpha >= L^2/2, the record e_1 replaced by -e_1 at step 1 and
zero rows after it attains the bound exactly, so the audited pair is as
distinguishable as the guarantee allows, and halving the noise doubles its mu.
"""

import numpy as np
import pytest

import sklearn_dpol._auto_bounds as auto_bounds_module
from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol.audit import audit_estimator, audit_mechanism, epsilon_lower_bound
from sklearn_dpol.privacy import gaussian_mu, gaussian_sigma

EPSILON, DELTA = 1.0, 1e-6
RUNS = 400_000


def worst_case(n=12, d=3):
    X = np.zeros((n, d))
    X[0, 0] = 1.0
    y = np.array([1] + [0, 1] * ((n - 1) // 2) + [0] * ((n - 1) % 2))
    e1 = np.zeros(d)
    e1[0] = -1.0
    return X, y, (e1, 1)


# solver="igd": the replay audits recorded Gaussian releases only (output perturbation),
# and solver="auto" is refused by it (objective perturbation on dense log-loss X).
ATTAINED = dict(loss="hinge", alpha=1.0, data_norm=1.0, fit_intercept=False, max_iter=1,
                epsilon=EPSILON, delta=DELTA, solver="igd")
# The seed's stream; the DP-FTRL stream (the default) has its gates in test_igd_ftrl.py.
SEED_STREAM = dict(ATTAINED, stream="iterate_perturbation")


@pytest.fixture
def broken_accountant(monkeypatch):
    """Patch the accountant the estimator calibrates with by a factor."""
    def apply(factor):
        # The estimator calibrates with the mu of its budget split (_auto_bounds.py).
        monkeypatch.setattr(auto_bounds_module, "gaussian_mu",
                            lambda eps, delta: factor * gaussian_mu(eps, delta))
    return apply


def audit(estimator, release="final", batch_size=None, runs=RUNS):
    X, y, canary = worst_case()
    return audit_estimator(estimator, X, y, 0, canary, runs, release=release,
                           batch_size=batch_size, random_state=0)


# -- the bound itself ----------------------------------------------------------

def test_lower_bound_formula():
    # No errors in 500 runs per side: ln((1 - delta - u) / u), u = 1 - (alpha/2)^(1/500).
    u = 1 - 0.025 ** (1 / 500)
    assert epsilon_lower_bound(0, 0, 500, 500, DELTA) == pytest.approx(np.log((1 - DELTA - u) / u))
    assert epsilon_lower_bound(250, 250, 500, 500, DELTA) == 0.0


def test_mechanism_audit_catches_a_sensitivity_bug():
    """Sum of 100 records in R^10; canary e1 -> -e1 has sensitivity 2."""
    D0 = np.zeros((100, 10))
    D0[0, 0] = 1.0
    D1 = D0.copy()
    D1[0, 0] = -1.0

    def mechanism(sensitivity):
        sigma = gaussian_sigma(sensitivity, EPSILON, 1e-5)
        return lambda D, rng: D.sum(axis=0) + sigma * rng.standard_normal(10)

    right = audit_mechanism(mechanism(2.0), D0, D1, 4000, 1e-5, random_state=0)
    no_noise = audit_mechanism(lambda D, rng: D.sum(axis=0), D0, D1, 1000, 1e-5,
                               random_state=0)
    assert right.epsilon_lower_bound <= EPSILON
    assert no_noise.epsilon_lower_bound > 4 * EPSILON


# -- gates for PrivateIGDClassifier ---------------------------------------------

@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 4)])
def test_attained_bound_is_tight_and_within_the_claim(release, batch_size):
    result = audit(PrivateIGDClassifier(**SEED_STREAM), release, batch_size)
    # The pair attains the guarantee's mu (all of it for fit, the schedule's
    # spent share for a stream), and the audit gets close without passing it.
    assert result.instance_epsilon <= EPSILON * (1 + 1e-9)
    if release == "final":
        assert result.instance_mu == pytest.approx(gaussian_mu(EPSILON, DELTA), rel=1e-9)
    assert result.epsilon_lower_bound <= EPSILON
    assert result.epsilon_lower_bound > 0.3 * result.instance_epsilon


@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 4)])
def test_halved_noise_is_caught(broken_accountant, release, batch_size):
    broken_accountant(2.0)
    params = dict(SEED_STREAM, horizon=12) if release == "stream" else ATTAINED
    result = audit(PrivateIGDClassifier(**params), release, batch_size)
    assert result.epsilon_lower_bound > EPSILON


@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 4)])
def test_removed_noise_is_caught(broken_accountant, release, batch_size):
    broken_accountant(np.inf)
    result = audit(PrivateIGDClassifier(**SEED_STREAM), release, batch_size, runs=1000)
    assert result.epsilon_lower_bound > 5 * EPSILON


# Defaults but the solver: output perturbation (solver="igd", the default before "auto"),
# which the replay can audit; the default fit on dense log-loss data is objective
# perturbation, tested in test_objective_perturbation*.py.
DEFAULTS = [
    PrivateIGDClassifier(solver="igd"),
    PrivateIGDClassifier(solver="igd", loss="hinge"),
    PrivateIGDClassifier(solver="igd", update="gradient"),
    PrivateIGDClassifier(solver="igd", update="gradient", alpha=0.5),  # past its burn-in
    PrivateIGDClassifier(solver="igd", horizon=12),
]


@pytest.mark.parametrize("estimator", DEFAULTS, ids=lambda e: repr(e))
@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 3)])
def test_default_settings_within_the_claim(estimator, release, batch_size):
    """At default settings the canary is a row at the clipping norm whose
    direction and label flip, at the first position (it touches every step)."""
    X, y, _ = worst_case()
    rng = np.random.default_rng(0)
    X[1:] = rng.normal(size=X[1:].shape)
    canary = (-X[0] * 10.0, 0)
    result = audit_estimator(estimator, X, y, 0, canary, RUNS, release=release,
                             batch_size=batch_size, random_state=1)
    assert result.instance_epsilon <= EPSILON * (1 + 1e-9)
    assert result.epsilon_lower_bound <= EPSILON


@pytest.mark.parametrize("params", [dict(solver="igd"),
                                    dict(solver="igd", update="gradient", alpha=0.5)])
def test_default_settings_without_noise_are_caught(broken_accountant, params):
    broken_accountant(np.inf)
    X, y, canary = worst_case()
    result = audit_estimator(PrivateIGDClassifier(**params), X, y, 0, canary, 1000,
                             random_state=0)
    assert result.epsilon_lower_bound > 5 * EPSILON


def test_replay_draws_from_the_distribution_of_real_fits():
    """The replayed releases have the mean and noise scale of real fits with fresh
    seeds, so auditing the replay audits the estimator."""
    from sklearn_dpol._core.noise import recording_releases

    # 200 rows keep the noise at 4% of the ball's radius: projection never acts.
    X, y, canary = worst_case(n=200)
    estimator = PrivateIGDClassifier(**ATTAINED)
    with recording_releases() as log:
        estimator.fit(X, y)
    (mean, sigma, _), = log
    real = np.array([
        PrivateIGDClassifier(**ATTAINED, random_state=seed).fit(X, y).coef_.ravel()
        for seed in range(2000)
    ])
    assert sigma == pytest.approx(estimator.noise_scale_) and sigma > 0
    np.testing.assert_allclose(real.mean(axis=0), mean.ravel(), atol=5 * sigma / np.sqrt(2000))
    np.testing.assert_allclose(real.std(axis=0, ddof=1), sigma, rtol=0.06)
    real_fits = audit_estimator(estimator, X, y, 0, canary, 2000, replay=False, random_state=0)
    assert real_fits.epsilon_lower_bound <= EPSILON
