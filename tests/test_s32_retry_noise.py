"""A call that fails after reading its data never hands its noise on (doc/privacy.md 56.1, 56.3).

``_atomic`` undoes every change when a call raises, so that a rejected input
leaves the estimator exactly as it was. A failure after the data has been read
(charged: a bug, an interrupt, a ledger that cannot be written) may come after
the call's noise was drawn. An unseeded estimator then keeps a fresh generator
(before, it was rewound to the generator the failed call drew from); a seeded one
is rewound exactly, the exact sampler's state included. A stream whose call
failed after the read cannot continue (56.3, review 117): a retry would be a
second continuation of the same state under the same charge. Were it allowed,
the stream's mechanism would roll back correctly (its steps are written past the
restored step count): the last test keeps that property.
"""

import pickle

import numpy as np
import pytest

import sklearn_dpol._base as base
from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, size=(60, 3))
Y_REG = np.clip(X @ np.array([0.5, -0.3, 0.2]), -1, 1)
Y_CLF = (X[:, 0] > 0).astype(int)

MAKERS = {
    "qftl": (lambda rs: PrivateQFTLRegressor(random_state=rs, horizon=600), Y_REG),
    "igd-ftrl": (lambda rs: PrivateIGDClassifier(random_state=rs, classes=[0, 1],
                                                 horizon=600), Y_CLF),
    "igd-iterate": (lambda rs: PrivateIGDClassifier(random_state=rs, classes=[0, 1], horizon=600,
                                                    stream="iterate_perturbation"), Y_CLF),
    "md": (lambda rs: PrivateMirrorDescentRegressor(random_state=rs), Y_REG),
    "fw": (lambda rs: PrivateFrankWolfeLasso(random_state=rs), Y_REG),
    "pf": (lambda rs: ParameterFreeLocalDPRegressor(random_state=rs), Y_REG),
    "mi": (lambda rs: MutualInformationPrivateOGDRegressor(random_state=rs), Y_REG),
}
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _fail_next_settle(monkeypatch):
    """The next call fails after its release was computed (data read, noise drawn)."""
    original = base._settle

    def settle(charge, guarantee):
        monkeypatch.setattr(base, "_settle", original)
        raise RuntimeError("injected failure after the release was computed")

    monkeypatch.setattr(base, "_settle", settle)


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("seed", [None, 7])
def test_a_stream_call_failing_after_the_read_ends_the_stream(monkeypatch, name, seed):
    make, y = MAKERS[name]
    est = make(seed)
    est.partial_fit(X[:20], y[:20])
    coef = np.array(est.coef_, copy=True)
    _fail_next_settle(monkeypatch)
    with pytest.raises(RuntimeError, match="injected"):
        est.partial_fit(X[20:40], y[20:40])
    np.testing.assert_array_equal(est.coef_, coef)          # the released model stays
    for batch in (slice(20, 40), slice(40, 60)):
        with pytest.raises(ValueError, match="this stream cannot continue"):
            est.partial_fit(X[batch], y[batch])
    est.fit(X, y)                                           # fit starts afresh ...
    est.partial_fit(X[:20], y[:20])                         # ... and its stream continues


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_were_it_allowed_a_seeded_retry_would_roll_the_mechanism_back(monkeypatch, name):
    make, y = MAKERS[name]
    failed, clean = make(7), make(7)
    for est in (failed, clean):
        est.partial_fit(X[:20], y[:20])
    _fail_next_settle(monkeypatch)
    with pytest.raises(RuntimeError, match="injected"):
        failed.partial_fit(X[20:40], y[20:40])
    del failed._broken_stream                               # the rule of 56.3 lifted
    for est in (failed, clean):
        est.partial_fit(X[20:40], y[20:40])
        est.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(failed.coef_, clean.coef_)   # the batch is in once


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_an_unseeded_failure_after_the_read_leaves_a_fresh_generator(monkeypatch, name):
    make, y = MAKERS[name]
    est = make(None)
    est.partial_fit(X[:20], y[:20])
    before = est._rng.bit_generator.state
    _fail_next_settle(monkeypatch)
    with pytest.raises(RuntimeError, match="injected"):
        est.partial_fit(X[20:40], y[20:40])
    assert est._rng.bit_generator.state != before
    for attribute in ("_sampler", "_sampler_rng"):
        assert attribute not in est.__dict__


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_seeded_failure_is_rewound_exactly(monkeypatch, name):
    make, y = MAKERS[name]
    est = make(7)
    est.partial_fit(X[:20], y[:20])
    est.partial_fit(X[20:30], y[20:30])        # the exact sampler has state now
    before = {k: v for k, v in est.__dict__.items()
              if k not in ("_stream", "_ftrl_mechanism")}   # rows shared with later states
    snapshot = pickle.dumps(before)
    _fail_next_settle(monkeypatch)
    with pytest.raises(RuntimeError, match="injected"):
        est.partial_fit(X[30:40], y[30:40])
    after = {k: v for k, v in est.__dict__.items()
             if k not in ("_stream", "_ftrl_mechanism", "_broken_stream")}
    assert pickle.dumps(after) == snapshot


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_rejected_input_changes_nothing_and_the_stream_continues(name):
    make, y = MAKERS[name]
    est = make(None)
    est.partial_fit(X[:20], y[:20])
    snapshot = pickle.dumps(est.__dict__)
    bad = X[20:40].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.partial_fit(bad, y[20:40])
    assert pickle.dumps(est.__dict__) == snapshot
    est.partial_fit(X[20:40], y[20:40])
