"""Floating-point attacks on the released bits (doc/privacy.md section 14, doc/audit.md).

The attacker knows every record but one and the two candidates for it, computes the
noiseless release ``W_b`` of each hypothesis (the estimator at ``epsilon=inf``), and
rules a hypothesis out when no double ``t`` satisfies ``fl(W_b + t) == z`` for the released
``z`` (representability). On the grid release no hypothesis is ever ruled out; on the
naive float release (``values + sigma * N``, reachable only from this file as a positive
control) the wrong neighbour is ruled out in most runs and the right one never.
"""

import numpy as np
import pytest

from sklearn_dpol._core import noise
from sklearn_dpol.audit import float_release, representable
from sklearn_dpol.linear_model import PrivateIGDClassifier


@pytest.fixture
def naive_release(monkeypatch):
    monkeypatch.setattr(noise, "_exact_release", float_release)


def _neighbours(n=500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X @ np.arange(1, d + 1) > 0).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[-1], y2[-1] = -X[-1], 1 - y[-1]
    return (X, y), (X2, y2)


def _release(params, data, seed, how):
    X, y = data
    # A fixed alpha: the attack compares with the epsilon=inf release of the same
    # model, and alpha="auto" resolves differently for each epsilon. intercept_scaling=1:
    # intercept_ is the released weight times the constant feature, exactly the noised
    # value only for a constant of 1 (the "auto" 1/sqrt(d) rounds the product, which
    # the attack's model W_b + t does not describe).
    est = PrivateIGDClassifier(classes=[0, 1], random_state=seed,
                               **{"alpha": 1e-3, "intercept_scaling": 1.0, **params})
    if how == "fit":
        est.fit(X, y)
    else:                                  # a stream of five batches, the last release
        for chunk in np.array_split(np.arange(len(y)), 5):
            est.partial_fit(X[chunk], y[chunk])
    return np.append(est.coef_.ravel(), est.intercept_)


SETTINGS = [
    ("fit", dict(shuffle=False, solver="igd")),      # IGD's output perturbation by name
    ("fit", dict(shuffle=False, max_iter=1, loss="hinge")),
    ("stream", dict(horizon=500, stream="iterate_perturbation")),
]


def _event_counts(params, how, runs):
    """E = "D' ruled out and D not": how often under truth D and under truth D'.

    (epsilon, delta)-DP requires P(E | D) <= e^epsilon P(E | D') + delta.
    """
    right, wrong = _neighbours()
    noiseless = [_release({**params, "epsilon": np.inf}, data, 0, how) for data in (right, wrong)]
    counts = []
    for truth in (right, wrong):
        count = 0
        for seed in range(runs):
            z = _release(params, truth, seed + 1, how)
            count += representable(noiseless[0], z) and not representable(noiseless[1], z)
        counts.append(count)
    return counts


RUNS = 150


@pytest.mark.parametrize("how, params", SETTINGS)
def test_grid_release_gives_the_attack_nothing(how, params):
    under_right, under_wrong = _event_counts(params, how, RUNS)
    # epsilon = 1, delta = 1e-6: P(E|D) <= e P(E|D') up to sampling error (5 sd of a
    # binomial at the observed rate)
    slack = 5 * np.sqrt(max(under_wrong, 1) * np.e ** 2)
    assert under_right <= np.e * under_wrong + slack, (under_right, under_wrong)


@pytest.mark.parametrize("how, params", SETTINGS)
def test_attack_catches_the_naive_float_release(naive_release, how, params):
    under_right, under_wrong = _event_counts(params, how, RUNS)
    assert under_wrong == 0                # never fires when D' is the truth
    assert under_right >= 25               # and fires often when D is: delta >= 1/6
