"""An SQLite ledger serves one machine (review 120, M3; issue 18, item 7).

A newly opened accountant on another host (the same file through a shared file
system) charged the ledger: only pickled copies refused. Now the ledger's recorded
host is checked at open and inside every charge's transaction, and a deliberate
move (``adopt_host=True``) is a chained entry that the former host's accountants
refuse from then on.
"""

import pickle
import socket
import sqlite3

import numpy as np
import pytest

from sklearn_dpol import PrivacyAccountant, PrivateQFTLRegressor
from sklearn_dpol.exceptions import LedgerError

BUDGET = (1.0, 1e-5)


def _on(monkeypatch, host):
    monkeypatch.setattr(socket, "gethostname", lambda: host)


def test_a_new_accountant_on_another_host_reads_but_never_charges(tmp_path, monkeypatch):
    path = str(tmp_path / "ledger.sqlite")
    live = PrivacyAccountant(*BUDGET, path=path)   # created on this machine
    live.reserve((0.2, 0.0), "here").settle((0.2, 0.0))
    _on(monkeypatch, "host-b")
    remote = PrivacyAccountant(*BUDGET, path=path)   # opens: reading is harmless
    assert remote.spent().epsilon == pytest.approx(0.2)
    with pytest.raises(LedgerError, match="serves host .* and this accountant runs on host "
                                          "host-b"):
        remote.reserve((0.1, 0.0), "from another machine")
    assert pickle.loads(pickle.dumps(live)).spent().epsilon == pytest.approx(0.2)  # a copy
    monkeypatch.undo()
    assert len(live.charges) == 1
    live.reserve((0.1, 0.0), "still served here").settle((0.1, 0.0))


def test_a_fit_on_another_host_charges_nothing(tmp_path, monkeypatch):
    path = str(tmp_path / "ledger.sqlite")
    PrivacyAccountant(*BUDGET, path=path)
    _on(monkeypatch, "host-b")
    with pytest.raises(LedgerError, match="SQLite's locks do not span machines"):
        accountant = PrivacyAccountant(*BUDGET, path=path)
        PrivateQFTLRegressor(accountant=accountant).fit(np.zeros((10, 2)), np.zeros(10))
    monkeypatch.undo()
    assert PrivacyAccountant(*BUDGET, path=path).charges == []


def test_adopting_the_ledger_moves_it_and_the_former_host_refuses(tmp_path, monkeypatch):
    path = str(tmp_path / "ledger.sqlite")
    former = PrivacyAccountant(*BUDGET, path=path)
    former.reserve((0.2, 0.0), "on the first machine").settle((0.2, 0.0))
    _on(monkeypatch, "host-b")
    moved = PrivacyAccountant(*BUDGET, path=path, adopt_host=True)
    assert moved.spent().epsilon == pytest.approx(0.2)   # the budget moves with its charges
    moved.reserve((0.3, 0.0), "on the new machine").settle((0.3, 0.0))
    PrivacyAccountant(*BUDGET, path=path).reserve((0.1, 0.0), "a second accountant here")
    monkeypatch.undo()
    # Back on the first machine: the open accountant refuses at its next charge (it reads
    # the host inside the transaction), and so does a new one, and a pickled copy.
    with pytest.raises(LedgerError, match="serves host host-b"):
        former.reserve((0.1, 0.0), "after the move")
    with pytest.raises(LedgerError, match="serves host host-b"):
        PrivacyAccountant(*BUDGET, path=path).reserve((0.1, 0.0), "a new one")
    with pytest.raises(LedgerError, match="serves host host-b"):
        pickle.loads(pickle.dumps(former)).reserve((0.1, 0.0), "a copy")
    # Reading what was spent is still possible from the former host.
    assert former.spent().epsilon == pytest.approx(0.6)
    # Adopting it back is as explicit.
    back = PrivacyAccountant(*BUDGET, path=path, adopt_host=True)
    back.reserve((0.1, 0.0), "home again").settle((0.1, 0.0))
    assert back.spent().epsilon == pytest.approx(0.7)


def test_adopting_on_the_same_host_writes_nothing(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    PrivacyAccountant(*BUDGET, path=path)
    PrivacyAccountant(*BUDGET, path=path, adopt_host=True)
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    assert max(counts.values()) == 1, counts   # the budget entry only


def test_a_host_entry_is_checked_like_every_entry():
    from sklearn_dpol.privacy._accountant import _InvalidEntry, _Ledger
    from sklearn_dpol.privacy._ledger import LEDGER_VERSION

    with pytest.raises(_InvalidEntry, match="is not the budget"):
        _Ledger().apply({"op": "host", "host": "b"})   # entry 1 must be the budget
    budget = {"op": "budget", "epsilon": 1.0, "delta": 0.0, "version": LEDGER_VERSION, "ledger": "x",
              "host": "a"}
    ledger = _Ledger([budget])
    assert ledger.host == "a"
    with pytest.raises(_InvalidEntry, match="unknown fields"):
        ledger.apply({"op": "host", "host": "b", "extra": 1})
    with pytest.raises(_InvalidEntry, match="host of type int"):
        ledger.apply({"op": "host", "host": 3})
    ledger.apply({"op": "host", "host": "b"})
    assert ledger.host == "b" and ledger.snapshot().host == "b"
