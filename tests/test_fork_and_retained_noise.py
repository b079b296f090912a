"""Unseeded estimators keep nothing that regenerates a release's noise (session 29 review).

Two findings of an independent review:

* after ``os.fork`` (or joblib's multiprocessing backend) in the middle of an unseeded
  stream, the parent's and the child's next calls drew the same noise from the generator
  stored by the previous call: the difference of their releases was the noiseless
  difference of their batches;
* ``PrivateRangeScaler`` kept the generator of its release, and the local-DP estimators
  the exact sampler's state after theirs (xoshiro256** is invertible), so the estimator's
  pickle regenerated the noise bit for bit.

An unseeded call now draws a fresh generator in the calling process, and after the call
keeps only a fresh, unused one (``_base.PrivateEstimatorMixin._forget_noise``).
"""

import copy
import os
import pickle

import numpy as np
import pytest

from sklearn_dpol import _base
from sklearn_dpol.linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.preprocessing import PrivateRangeScaler


def _data(n=200, d=4):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= 2.0 * np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X.sum(axis=1), -1.0, 1.0)
    return X, y, (y > 0).astype(int)


STREAMS = {
    "qftl": (lambda: PrivateQFTLRegressor(horizon=400, data_norm=1.0, y_bound=1.0), "y"),
    "igd": (lambda: PrivateIGDClassifier(classes=[0, 1], horizon=400), "c"),
    "frank_wolfe": (lambda: PrivateFrankWolfeLasso(feature_bound=1.0, y_bound=1.0,
                                                   max_iter=5), "y"),
    "mirror_descent": (lambda: PrivateMirrorDescentRegressor(data_norm=1.0, y_bound=1.0,
                                                             max_iter=5), "y"),
    "parameter_free": (lambda: ParameterFreeLocalDPRegressor(), "y"),
    "mi_ogd": (lambda: MutualInformationPrivateOGDRegressor(), "y"),
}


def _released(est):
    return np.concatenate([np.ravel(est.coef_), np.ravel(getattr(est, "intercept_", 0.0))])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_forked_continuations_of_an_unseeded_stream_draw_different_noise(name):
    make, target = STREAMS[name]
    X, y, c = _data()
    t = y if target == "y" else c
    est = make()
    est.partial_fit(X[:100], t[:100])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:       # the child continues the stream and reports its release
        code = 1
        try:
            est.partial_fit(X[100:], t[100:])
            os.write(write, pickle.dumps(_released(est)))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    est.partial_fit(X[100:], t[100:])
    _, status = os.waitpid(pid, 0)
    assert status == 0
    with os.fdopen(read, "rb") as pipe:
        child = pickle.loads(pipe.read())
    assert not np.array_equal(child, _released(est))


def _fits():
    X, y, c = _data()
    return [
        (lambda: PrivateRangeScaler(bounds=(-1.0, 1.0)), X, None, "fit"),
        *[(make, X, y if target == "y" else c, "fit") for make, target in STREAMS.values()],
        *[(make, X, y if target == "y" else c, "partial_fit")
          for make, target in STREAMS.values()],
    ]


@pytest.mark.parametrize("index", range(13))
def test_an_unseeded_release_keeps_no_generator_that_drew_it(index, monkeypatch):
    make, X, t, method = _fits()[index]
    original = _base.make_generator
    made = []

    def recording(random_state, purpose=0):
        generator = original(random_state, purpose)
        made.append((generator, copy.deepcopy(generator.bit_generator.state)))
        return generator

    monkeypatch.setattr(_base, "make_generator", recording)
    est = make()
    getattr(est, method)(X, t)
    assert len(made) >= 2
    # the generator kept is the last one made, after the release, and drew nothing
    kept, state_when_made = made[-1]
    assert est._rng is kept
    assert kept.bit_generator.state == state_when_made
    assert all(kept is not generator for generator, _ in made[:-1])
    assert "_sampler" not in est.__dict__ and "_sampler_rng" not in est.__dict__


def test_a_seeded_stream_still_reproduces():
    """Seeded estimators keep their generator between calls: the same seed, the same
    releases (the documented experiments-only hazard)."""
    X, y, _ = _data()
    runs = []
    for _ in range(2):
        est = PrivateQFTLRegressor(horizon=400, data_norm=1.0, y_bound=1.0, random_state=3)
        est.partial_fit(X[:100], y[:100])
        est.partial_fit(X[100:], y[100:])
        runs.append(_released(est))
    np.testing.assert_array_equal(*runs)


def test_a_stream_makes_one_generator_a_call_and_never_reuses_a_drawn_one(monkeypatch):
    """In its own process a stream call draws from the unused generator the previous call
    kept (one generator made per call, not two: ~10 us of OS entropy each); every call's
    generator is fresh, and the one kept after a call has drawn nothing."""
    original = _base.make_generator
    made = []

    def recording(random_state, purpose=0):
        generator = original(random_state, purpose)
        made.append((generator, copy.deepcopy(generator.bit_generator.state)))
        return generator

    monkeypatch.setattr(_base, "make_generator", recording)
    X, y, _ = _data()
    est = PrivateQFTLRegressor(horizon=400, data_norm=1.0, y_bound=1.0)
    est.partial_fit(X[:50], y[:50])
    first = len(made)
    for start in (50, 100, 150):
        before = len(made)
        kept, state_when_made = made[-1]
        assert est._rng is kept and kept.bit_generator.state == state_when_made
        est.partial_fit(X[start:start + 50], y[start:start + 50])
        assert len(made) == before + 1                 # only the one kept after the call
        assert kept.bit_generator.state != state_when_made   # this call drew from it
        assert est._rng is made[-1][0] and est._rng is not kept
    assert first == 2
