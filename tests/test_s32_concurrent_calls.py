"""Concurrent calls on one estimator run one after the other (doc/privacy.md 56.2).

Review 116: two threads calling ``partial_fit`` (or ``fit``) on one estimator
shared its call bookkeeping (``_call``) and the state ``_atomic`` saved. One call
failed on the other's bookkeeping, and its restore rewound the generator that had
drawn the other's published noise, so the next call drew that noise again: the
difference of two releases was the noiseless difference of their batches. A
per-estimator lock now serialises release calls. The tests make the two calls
overlap for certain (the engine sleeps inside the call) instead of hoping for
the race.
"""

import threading
import time

import numpy as np
import pytest

from sklearn_dpol import (
    PrivacyAccountant,
    PrivateIGDClassifier,
    PrivateQFTLRegressor,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, size=(90, 3))
Y_REG = np.clip(X @ np.array([0.5, -0.3, 0.2]), -1, 1)
Y_CLF = (X[:, 0] > 0).astype(int)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _slow_engine(monkeypatch, cls):
    original = cls._partial_fit

    def slow(self, *args, **kwargs):
        time.sleep(0.05)             # hold the call open: the other thread arrives meanwhile
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_partial_fit", slow)


def _run_together(calls):
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def work(k, call):
        barrier.wait()
        try:
            call()
            outcomes[k] = "ok"
        except Exception as exc:        # noqa: BLE001 - the outcome is what is tested
            outcomes[k] = f"{type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=work, args=(k, call)) for k, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.parametrize("make, y", [
    (lambda acc: PrivateQFTLRegressor(horizon=900, prefix_sums="tree", accountant=acc), Y_REG),
    (lambda acc: PrivateIGDClassifier(classes=[0, 1], horizon=900, accountant=acc), Y_CLF),
])
def test_two_threads_streaming_into_one_estimator_both_release(monkeypatch, tmp_path, make, y):
    accountant = PrivacyAccountant(10.0, 1e-3, path=tmp_path / "ledger")
    est = make(accountant)
    est.partial_fit(X[:30], y[:30])
    _slow_engine(monkeypatch, type(est))
    outcomes = _run_together([lambda: est.partial_fit(X[30:60], y[30:60]),
                              lambda: est.partial_fit(X[60:], y[60:])])
    assert outcomes == ["ok", "ok"]
    assert est.privacy_.n_records == 90


def test_two_threads_fitting_one_estimator_are_both_charged(monkeypatch, tmp_path):
    accountant = PrivacyAccountant(10.0, 1e-3, path=tmp_path / "ledger")
    est = PrivateQFTLRegressor(accountant=accountant)
    _slow_engine(monkeypatch, PrivateQFTLRegressor)
    outcomes = _run_together([lambda: est.fit(X[:45], Y_REG[:45]),
                              lambda: est.fit(X[45:], Y_REG[45:])])
    assert outcomes == ["ok", "ok"]
    fits = [c for c in accountant.charges if c.kind == "fit"]
    assert len(fits) == 2 and all(c.status == "spent" for c in fits)


def test_the_lock_is_not_in_the_estimator_and_copies_do_not_share_it():
    import copy
    import pickle

    from sklearn_dpol._base import _call_lock

    est = PrivateQFTLRegressor(random_state=0).fit(X, Y_REG)
    assert not any("lock" in name.lower() for name in vars(est))
    twin = copy.deepcopy(est)
    assert _call_lock(twin) is not _call_lock(est)
    assert _call_lock(est) is _call_lock(est)
    pickle.loads(pickle.dumps(est)).partial_fit(X[:10], Y_REG[:10])
