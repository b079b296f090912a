"""Copies, parameter changes and re-entry during a call (review 117; doc/privacy.md 56.3).

The per-estimator call lock of 56.2 serialises release calls. A copy or a pickle
taken by another thread during a call, or ``set_params`` from another thread,
used to bypass it: the copy held the ledger's advanced call count with the state
from before the call (the stale-copy check passed and two continuations shared a
charge), and a parameter changed mid-call let the noise be calibrated on one
value while ``privacy_`` and the ledger stated another. Copies, pickles and
``set_params`` now wait for the call; a parameter replaced anyway (a direct
assignment) fails the call (charged, rolled back); a re-entrant call from the
same thread, and a copy made mid-call by the calling thread (or a fork), are
refused before anything is read; a frozen array parameter changed in place is
seen. The engine sleeps inside the call, so the overlaps are certain.
"""

import copy
import pickle
import threading
import time

import numpy as np
import pytest

from sklearn_dpol import (
    ParameterFreeLocalDPRegressor,
    PrivacyAccountant,
    PrivateQFTLRegressor,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, size=(90, 3))
Y = np.clip(X @ np.array([0.5, -0.3, 0.2]) + 0.1 * RNG.standard_normal(90), -1, 1)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _engine_hook(monkeypatch, cls, hook, delay=0.0):
    original = cls._partial_fit

    def engine(self, *args, **kwargs):
        if hook is not None:
            hook(self)
        time.sleep(delay)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_partial_fit", engine)


def _during_call(monkeypatch, est, call, other, delay=0.2):
    """Run ``call`` in a thread with a slow engine; run ``other`` once the call is inside."""
    inside = threading.Event()
    _engine_hook(monkeypatch, type(est), lambda self: inside.set(), delay=delay)
    outcome = {}

    def work():
        try:
            call()
            outcome["call"] = "ok"
        except Exception as exc:          # noqa: BLE001
            outcome["call"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    assert inside.wait(5)
    started = time.perf_counter()
    result = other()
    waited = time.perf_counter() - started
    thread.join()
    monkeypatch.undo()
    return outcome["call"], result, waited


@pytest.mark.parametrize("take", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))],
                         ids=["deepcopy", "pickle"])
def test_a_copy_taken_during_a_call_waits_for_it(monkeypatch, tmp_path, take):
    accountant = PrivacyAccountant(10.0, 1e-3, path=tmp_path / "ledger")
    est = PrivateQFTLRegressor(horizon=900, accountant=accountant)
    est.partial_fit(X[:30], Y[:30])
    done, twin, waited = _during_call(monkeypatch, est,
                                      lambda: est.partial_fit(X[30:60], Y[30:60]),
                                      lambda: take(est))
    assert done == "ok" and waited > 0.05
    assert twin.privacy_.n_records == 60           # the state after the call, not before
    twin.partial_fit(X[60:], Y[60:])               # the latest checkpoint continues
    from sklearn_dpol.exceptions import StaleStreamError
    with pytest.raises(StaleStreamError):          # and the original is now the stale one
        est.partial_fit(X[60:], Y[60:])


def test_set_params_from_another_thread_waits_for_the_call(monkeypatch):
    est = PrivateQFTLRegressor(epsilon=0.1, random_state=0)
    done, _, waited = _during_call(monkeypatch, est, lambda: est.fit(X, Y),
                                   lambda: est.set_params(epsilon=8.0))
    assert done == "ok" and waited > 0.05
    reference = PrivateQFTLRegressor(epsilon=0.1, random_state=0).fit(X, Y)
    assert est.noise_scale_ == reference.noise_scale_ and est.privacy_.epsilon == 0.1
    assert est.epsilon == 8.0                      # applied after the call


def test_a_parameter_replaced_during_the_call_fails_it_charged(monkeypatch, tmp_path):
    accountant = PrivacyAccountant(10.0, 1e-3, path=tmp_path / "ledger")
    est = PrivateQFTLRegressor(epsilon=0.1, random_state=0, accountant=accountant)
    _engine_hook(monkeypatch, PrivateQFTLRegressor,
                 lambda self: self.__dict__.__setitem__("epsilon", 8.0))  # bypasses set_params
    with pytest.raises(RuntimeError, match="changed while the call was running"):
        est.fit(X, Y)
    assert not hasattr(est, "coef_")
    (charge,) = accountant.charges
    assert charge.status == "spent"


def test_a_reentrant_call_is_refused_before_it_reads(monkeypatch):
    est = PrivateQFTLRegressor(horizon=900, random_state=0)
    est.partial_fit(X[:30], Y[:30])
    inner = {}

    def reenter(self):
        if "done" not in inner:
            inner["done"] = True
            try:
                self.partial_fit(X[60:], Y[60:])
                inner["outcome"] = "ok"
            except ValueError as exc:
                inner["outcome"] = str(exc)

    _engine_hook(monkeypatch, PrivateQFTLRegressor, reenter)
    est.partial_fit(X[30:60], Y[30:60])
    assert "re-entrant" in inner["outcome"]
    assert est.privacy_.n_records == 60            # only the outer call released


def test_a_copy_made_by_the_calling_thread_mid_call_refuses_to_stream(monkeypatch):
    est = PrivateQFTLRegressor(horizon=900, random_state=0)
    est.partial_fit(X[:30], Y[:30])
    holder = {}
    _engine_hook(monkeypatch, PrivateQFTLRegressor,
                 lambda self: holder.setdefault("copy", copy.deepcopy(self)))
    est.partial_fit(X[30:60], Y[30:60])
    monkeypatch.undo()
    twin = holder["copy"]
    result = {}

    def other_thread():
        try:
            twin.partial_fit(X[60:], Y[60:])
            result["outcome"] = "ok"
        except ValueError as exc:
            result["outcome"] = str(exc)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert "copy was made while a call was running" in result["outcome"]
    twin.fit(X, Y)                                 # a fit starts afresh
    twin.partial_fit(X[:30], Y[:30])


def test_a_frozen_array_parameter_changed_in_place_is_refused():
    weights = np.ones(4)
    est = ParameterFreeLocalDPRegressor(feature_weights=weights, random_state=0)
    est.partial_fit(X[:30], Y[:30])
    weights[1] = 0.0
    with pytest.raises(ValueError, match="changed since the stream started"):
        est.partial_fit(X[30:60], Y[30:60])
    weights[1] = 1.0
    est.partial_fit(X[30:60], Y[30:60])
