"""joblib's parallel backends give the serial results, bit for bit.

PrivateIGDClassifier runs its one-vs-rest problems with ``n_jobs`` workers
(threads by default; ``joblib.parallel_config`` may choose processes, which work
on copies, so every problem returns its row). The audits give every run its own
seed, so their bound does not depend on ``n_jobs`` or on the backend.
"""

import dataclasses
import math

import joblib
import numpy as np
import pytest

from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor
from sklearn_dpol.audit import _distinct_seeds, audit_estimator, audit_mechanism
from sklearn_dpol.privacy import gaussian_epsilon

BACKENDS = ["threading", "loky", "multiprocessing"]

_rng = np.random.default_rng(0)
X = _rng.uniform(-0.5, 0.5, size=(600, 4))
_scores = X @ _rng.normal(size=(4, 5))
LABELS = np.argmax(_scores + 0.1 * _rng.standard_normal(_scores.shape), axis=1)


def gaussian_sum(data, rng):
    """A module-level mechanism: the multiprocessing backend pickles it by name."""
    return np.array([np.sum(data)]) + rng.normal(size=1)


def as_tuple(result):
    """An AuditResult's fields, with ``nan`` made comparable."""
    return tuple("nan" if isinstance(v, float) and math.isnan(v) else v
                 for v in dataclasses.astuple(result))


def fit_ovr(n_jobs, update):
    # GIGA skips 2 (L^2/4 + alpha)^2 / alpha^2 steps: alpha=0.5 keeps that short.
    alpha = 1e-2 if update == "implicit" else 0.5
    model = PrivateIGDClassifier(classes=list(range(5)), alpha=alpha, max_iter=3, epsilon=20.0,
                                 update=update, random_state=0, n_jobs=n_jobs)
    return model.fit(X, LABELS)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("update", ["implicit", "gradient"])
def test_one_vs_rest_is_the_same_model_under_every_backend(backend, update):
    serial = fit_ovr(None, update=update)
    with joblib.parallel_config(backend=backend):
        parallel = fit_ovr(2, update=update)
    np.testing.assert_array_equal(parallel.coef_, serial.coef_)
    np.testing.assert_array_equal(parallel.intercept_, serial.intercept_)
    assert parallel.privacy_ == serial.privacy_
    # The data were used (a model left at zero plus noise scores about 0.2).
    assert parallel.score(X, LABELS) > 0.4


def test_one_vs_rest_stream_under_a_process_backend():
    serial = PrivateIGDClassifier(alpha=1e-2, random_state=0)
    parallel = PrivateIGDClassifier(alpha=1e-2, random_state=0, n_jobs=2)
    with joblib.parallel_config(backend="loky"):
        for rows in (slice(0, 300), slice(300, 600)):
            serial.partial_fit(X[rows], LABELS[rows], classes=list(range(5)))
            parallel.partial_fit(X[rows], LABELS[rows], classes=list(range(5)))
            np.testing.assert_array_equal(parallel.coef_, serial.coef_)


@pytest.mark.parametrize("backend", BACKENDS)
def test_audit_mechanism_does_not_depend_on_the_backend(backend):
    D0, D1 = np.zeros(3), np.full(3, 1.0 / 3.0)
    serial = audit_mechanism(gaussian_sum, D0, D1, 400, 1e-6, random_state=0)
    with joblib.parallel_config(backend=backend):
        parallel = audit_mechanism(gaussian_sum, D0, D1, 400, 1e-6, random_state=0, n_jobs=2)
    assert as_tuple(parallel) == as_tuple(serial)
    # The mechanism is 1-GDP: a valid audit stays below its epsilon.
    assert 0.0 < serial.epsilon_lower_bound <= gaussian_epsilon(1.0, 1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_audit_estimator_real_fits_do_not_depend_on_the_backend(backend):
    y = np.clip(X @ [0.5, -0.5, 0.2, 0.0], -1, 1)[:40]
    args = (PrivateQFTLRegressor(epsilon=1.0), X[:40], y, 0, (np.array([0.5, 0, 0, 0]), 1.0), 40)
    serial = audit_estimator(*args, replay=False, random_state=0)
    with joblib.parallel_config(backend=backend):
        parallel = audit_estimator(*args, replay=False, random_state=0, n_jobs=2)
    assert as_tuple(parallel) == as_tuple(serial)


def test_real_fit_seeds_never_collide():
    seeds = _distinct_seeds(np.random.default_rng(0), 10_000)
    assert np.unique(seeds).size == seeds.size
    assert seeds.min() >= 0 and seeds.max() <= 2**32 - 1
