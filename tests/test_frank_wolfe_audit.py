"""Audit gates for PrivateFrankWolfeLasso: the audited lower bound never exceeds the
claim (tight side), and the same audits catch a broken calibration (power side).

* Gaussian selection, one step from the origin: the noisy gradient is the only
  release, so the audit replays it and scores it with the exact likelihood
  ratio. The canary attains the L2 bound up to the factor 1/(1 + B r / Y).
* Exponential selection, one step: the selected vertex is a draw of the
  exponential mechanism, whose per-step claim is pure epsilon0-DP. The canary
  attains the score bound; outputs are scored with the exact log-likelihood
  ratio, computed here independently of the library.
* The whole estimator (many steps, fit and partial_fit streams): real fits with
  fresh seeds, against the (epsilon, delta) claim.
"""

import dataclasses

import numpy as np
import pytest

from sklearn_dpol import PrivateFrankWolfeLasso
from sklearn_dpol._core import frank_wolfe as fw
from sklearn_dpol.audit import audit_estimator, audit_samples
from sklearn_dpol.privacy import gaussian_mu

EPSILON, DELTA = 1.0, 1e-6


@pytest.fixture
def broken(monkeypatch):
    """Scale a sensitivity the calibration uses, or remove the noise."""
    def apply(name, factor):
        original = getattr(fw, name)
        monkeypatch.setattr(fw, name, lambda *args, **kw: factor * original(*args, **kw))
        # The calibration refuses a zero noise scale at finite epsilon; switch
        # that guard off so the audit itself has to catch the bug.
        monkeypatch.setattr(fw, "TINY", 0.0)
    return apply


# -- Gaussian selection: replayed releases ----------------------------------------------

GAUSSIAN = dict(selection="gaussian", max_iter=1, fit_intercept=False, radius=1e-3,
                epsilon=EPSILON, delta=DELTA)


def gaussian_worst_case(n=12, p=3):
    """At theta = 0 the gradient is -(1/n) sum z y: (1, 1, 1) with y = -1 against
    (-1, -1, -1) with y = -1 moves it by 2 sqrt(p) / n, the bound 2 sqrt(p) (r + 1) / n
    up to 1 / (1 + r)."""
    X = np.zeros((n, p))
    y = np.zeros(n)
    X[0], y[0] = 1.0, -1.0
    return X, y, (-np.ones(p), -1.0)


def gaussian_audit(runs=400_000):
    X, y, canary = gaussian_worst_case()
    return audit_estimator(PrivateFrankWolfeLasso(**GAUSSIAN), X, y, 0, canary, runs,
                           random_state=0)


def test_gaussian_step_is_tight_and_within_the_claim():
    result = gaussian_audit()
    mu = gaussian_mu(EPSILON, DELTA)
    assert result.instance_mu <= mu * (1 + 1e-9)
    assert result.instance_mu == pytest.approx(mu / (1 + GAUSSIAN["radius"]), rel=1e-9)
    assert result.epsilon_lower_bound <= EPSILON
    assert result.epsilon_lower_bound > 0.3 * result.instance_epsilon


def test_gaussian_halved_sensitivity_is_caught(broken):
    broken("gradient_sensitivity_l2", 0.5)
    assert gaussian_audit().epsilon_lower_bound > EPSILON


def test_gaussian_removed_noise_is_caught(monkeypatch):
    monkeypatch.setattr(fw, "gaussian_mu", lambda epsilon, delta: np.inf)
    with pytest.raises(ValueError, match="too small"):   # the guard refuses it first
        gaussian_audit(runs=1000)
    monkeypatch.setattr(fw, "TINY", 0.0)
    assert gaussian_audit(runs=1000).epsilon_lower_bound > 5 * EPSILON


# -- exponential selection: one step, exact likelihood ratio ------------------------------

# Per-step budget of the one-step calibration at (5, 1e-6): epsilon0 = 1.99.
STEP = dict(epsilon=5.0, delta=DELTA, radius=1.0, feature_bound=1.0, y_bound=1.0)
START = np.array([0.0, 1.0])  # the public iterate r e_1


def exponential_pair(shift):
    """From theta = e_1: the canary x = (1, 1), y = -1 has residual 2 and x' = (1, -1),
    y' = 1 has residual -2, so gradient coordinate 0 moves by 4 / n = 2 L1 / n, the
    score bound. ``shift`` rows x = (1, 0), y = -1 push coordinate 0 up, making the
    vertex +e_0 rare on D0 and much less rare on D1 (a near-worst-case pair)."""
    X0 = np.vstack([[1.0, 1.0], np.tile([1.0, 0.0], (shift, 1))])
    y0 = np.concatenate([[-1.0], -np.ones(shift)])
    X1, y1 = X0.copy(), y0.copy()
    X1[0], y1[0] = [1.0, -1.0], 1.0
    return (X0, y0), (X1, y1)


def selection_law(X, y, scale):
    """P(vertex) of one exponential-mechanism step from START, computed from scratch."""
    g = X.T @ (X @ START - y) / len(y)
    scores = np.concatenate([g, -g])  # +e_0, +e_1, -e_0, -e_1 (radius 1)
    logits = -scores / scale
    return np.exp(logits - np.logaddexp.reduce(logits))


def one_step_outputs(data, calibration, runs, seed):
    """``runs`` independent selections at START, each with the one-step noise:
    steps of size 0 never move the iterate, so each is a fresh draw by the
    library's own selection path."""
    calibration = dataclasses.replace(calibration, n_steps=runs)
    problem = fw.ClippedLeastSquares(*data, feature_bound=1.0, y_bound=1.0, intercept=False,
                                     precompute=True)
    vertices = fw.make_vertices(2, 1.0, False, False)
    _, selected = fw.run(problem, vertices, START, np.zeros(runs), calibration,
                         np.random.default_rng(seed))
    return selected[:, np.newaxis].astype(float)


def exponential_step_audit(shift, runs=40_000, calibration=None):
    D0, D1 = exponential_pair(shift)
    claim = fw.calibrate("exponential", n_samples=len(D0[1]), n_dims=2, n_steps=1,
                         **STEP)
    if calibration is None:
        # The calibration under test; differs from the claim when a test breaks it.
        calibration = fw.calibrate("exponential", n_samples=len(D0[1]), n_dims=2,
                                   n_steps=1, **STEP)
    outputs0 = one_step_outputs(D0, calibration, runs, seed=0)
    outputs1 = one_step_outputs(D1, calibration, runs, seed=1)
    scale = calibration.noise_scale if calibration.noise_scale > 0 else claim.noise_scale
    log_ratio = np.log(selection_law(*D1, scale)) - np.log(selection_law(*D0, scale))
    result = audit_samples(outputs0, outputs1, delta=0.0,
                           statistic=lambda out: log_ratio[out[:, 0].astype(int)],
                           random_state=0)
    return result, claim.epsilon_step, calibration, np.max(np.abs(log_ratio))


def test_exponential_step_is_near_tight_and_within_its_claim():
    result, claim, calibration, instance = exponential_step_audit(shift=6)
    assert calibration.sensitivity == pytest.approx(4 / 7, rel=1e-15)
    assert 0.75 * claim <= instance <= claim  # the pair is close to the worst case
    assert result.epsilon_lower_bound <= claim
    assert result.epsilon_lower_bound > 0.5 * instance


def test_exponential_halved_sensitivity_is_caught(broken):
    broken("score_sensitivity", 0.5)
    result, claim, _, _ = exponential_step_audit(shift=6)
    assert result.epsilon_lower_bound > claim


def test_exponential_removed_noise_is_caught():
    """Without noise the selection is the argmin, which differs on this pair."""
    D0, _ = exponential_pair(1)
    exact = dataclasses.replace(
        fw.calibrate("exponential", n_samples=len(D0[1]), n_dims=2, n_steps=1, **STEP),
        noise_scale=0.0)
    result, claim, _, _ = exponential_step_audit(shift=1, runs=2000, calibration=exact)
    assert result.epsilon_lower_bound > 2 * claim


# -- the whole estimator: real fits ------------------------------------------------------------

def estimator_pair(n=12, p=3):
    """A canary that flips the sign of the first gradient coordinate, so a
    noiseless run selects different vertices on the two data sets."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, p))
    y = rng.uniform(-1, 1, size=n)
    X[0], y[0] = 1.0, 1.0
    return X, y, (np.ones(p), -1.0)


@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 4)])
def test_estimator_within_the_claim(release, batch_size):
    X, y, canary = estimator_pair()
    model = PrivateFrankWolfeLasso(epsilon=EPSILON, delta=DELTA, max_iter=8)
    result = audit_estimator(model, X, y, 0, canary, 300, release=release,
                             batch_size=batch_size, replay=False, random_state=0)
    assert result.epsilon_lower_bound <= EPSILON


@pytest.mark.parametrize("release,batch_size", [("final", None), ("stream", 4)])
def test_estimator_without_noise_is_caught(broken, release, batch_size):
    broken("score_sensitivity", 0.0)
    X, y, canary = estimator_pair()
    model = PrivateFrankWolfeLasso(epsilon=EPSILON, delta=DELTA, max_iter=8)
    result = audit_estimator(model, X, y, 0, canary, 300, release=release,
                             batch_size=batch_size, replay=False, random_state=0)
    assert result.epsilon_lower_bound > 2 * EPSILON
