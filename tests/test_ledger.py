"""The privacy ledger fails closed, on SQLite and on a real PostgreSQL server.

Every way issue 18 found the JSON-lines ledger to corrupt silently has a
regression test here (truncated to 0 bytes, entries dropped, a settle that
lowers a charge, a ``{}`` entry, an unpickled accountant that never re-checks
the budget), with the other damage a chained ledger must catch: entries
reordered or edited, the ledger emptied or replaced, and a process that
cannot reach the ledger. Each damaged ledger must refuse, with a
``LedgerError`` that says how to recover, both when it is opened afresh and
when a live accountant next charges it, and nothing may be charged.
"""

import json
import multiprocessing
import os
import pickle
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from _ledger_postgres import ledger_path, new_ledger_url, start_server, stop_server

from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol.exceptions import BudgetExceededError, LedgerError
from sklearn_dpol.privacy import PrivacyAccountant
from sklearn_dpol.privacy._ledger import ENTRIES, GENESIS, HEAD, NAMES, canonical, chain_hash

BACKENDS = ["sqlite", "postgres"]
BUDGET = (1.0, 1e-6)


class Raw:
    """Direct access to a ledger's tables, as a person (or a bug) editing them would."""

    def __init__(self, path):
        self.postgres = path.startswith("postgresql://")
        if self.postgres:
            import psycopg

            conninfo, _, self.name = path.partition("#")
            self.conn = psycopg.connect(conninfo, autocommit=True)
        else:
            self.name = "default"
            self.conn = sqlite3.connect(path, isolation_level=None)
        self.ledger_id = self.query(f"SELECT ledger_id FROM {HEAD} WHERE name = ?",
                                    (self.name,))[0][0]

    def query(self, sql, params=()):
        if self.postgres:
            sql = sql.replace("?", "%s")
        cursor = self.conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None

    def entries(self):
        return self.query(f"SELECT seq, body, hash FROM {ENTRIES} WHERE ledger_id = ? "
                          "ORDER BY seq", (self.ledger_id,))

    def rewrite(self, bodies):
        """Replace the entries by ``bodies``, chained and headed correctly (a forgery)."""
        self.query(f"DELETE FROM {ENTRIES} WHERE ledger_id = ?", (self.ledger_id,))
        previous = GENESIS
        for seq, body in enumerate(bodies, start=1):
            previous = chain_hash(previous, seq, body)
            self.query(f"INSERT INTO {ENTRIES} VALUES (?, ?, ?, ?)",
                       (self.ledger_id, seq, body, previous))
        self.query(f"UPDATE {HEAD} SET n_entries = ?, last_hash = ? WHERE name = ?",
                   (len(bodies), previous, self.name))

    def close(self):
        self.conn.close()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def ledger(backend, tmp_path):
    """A ledger with a budget of (1, 1e-6) and three charges: 0.25 spent, 0.125
    spent, 0.0625 reserved (a process that died)."""
    path = ledger_path(backend, tmp_path)
    acc = PrivacyAccountant(*BUDGET, path=path)
    acc.reserve((0.25, 0.0), "first").settle((0.25, 0.0))
    acc.reserve((0.125, 0.0), "second").settle((0.125, 0.0))
    acc.reserve((0.0625, 0.0), "died")
    return path, acc


def refuses(path, live, match="corrupt", live_too=True):
    """The damaged ledger refuses afresh, for an unpickled copy, and (when the
    damage is in what it verified last, or in the count) for the live
    accountant; nothing is charged."""
    with pytest.raises(LedgerError, match=match) as fresh:
        PrivacyAccountant(*BUDGET, path=path)
    with pytest.raises(LedgerError, match=match) as copied:
        pickle.loads(pickle.dumps(live)).reserve((0.01, 0.0), "from a copy")
    errors = [fresh, copied]
    if live_too:
        with pytest.raises(LedgerError, match=match) as charged:
            live.reserve((0.01, 0.0), "after the damage")
        errors.append(charged)
    for error in errors:
        if match == "corrupt":
            assert "How to recover" in str(error.value)
            assert "Nothing was charged" in str(error.value) or "nothing was charged" in \
                str(error.value)
    return fresh.value


# -- the format ---------------------------------------------------------------------------


def test_entries_are_numbered_and_chained(ledger):
    path, acc = ledger
    raw = Raw(path)
    rows = raw.entries()
    assert [seq for seq, _, _ in rows] == list(range(1, len(rows) + 1))
    previous = GENESIS
    for seq, body, digest in rows:
        assert digest == chain_hash(previous, seq, body)
        previous = digest
    header = json.loads(rows[0][1])
    assert header["op"] == "budget" and (header["epsilon"], header["delta"]) == BUDGET
    assert raw.query(f"SELECT n_entries, last_hash FROM {HEAD} WHERE name = ?",
                     (raw.name,))[0] == (len(rows), previous)
    assert len(rows) == 1 + 2 * 2 + 1  # budget, two opened and settled, one opened
    assert acc.spent().epsilon == pytest.approx(0.4375)
    reopened = PrivacyAccountant(*BUDGET, path=path)
    assert [c.status for c in reopened.charges] == ["spent", "spent", "reserved"]


# -- the silent corruptions, now refused ------------------------------------------


def test_sqlite_file_truncated_to_zero_bytes_refuses(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    live = PrivacyAccountant(*BUDGET, path=path)
    live.reserve((0.5, 0.0), "spent").settle((0.5, 0.0))
    live._store.close()  # as after a restart: the file is all there is
    with open(path, "wb"):
        pass
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    error = refuses(path, live, match="is empty")
    assert "truncated or emptied" in str(error) and "How to recover" in str(error)
    assert os.path.getsize(path) == 0  # and the empty file was not made a new ledger


def test_sqlite_file_truncated_halfway_refuses(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    live = PrivacyAccountant(*BUDGET, path=path)
    for _ in range(200):  # a ledger of several pages
        live.reserve((0.001, 0.0), "a charge with a long label " * 4).settle((0.001, 0.0))
    live._store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    assert size > 8 * 4096
    with open(path, "r+b") as handle:
        handle.truncate(size // 2)
    refuses(path, live)


def test_dropped_entries_refuse(ledger):
    path, live = ledger
    Raw(path).query(f"DELETE FROM {ENTRIES} WHERE seq = 3")
    refuses(path, live, match="holds 5 entries where its head records 6")


def test_dropped_last_entries_refuse(ledger):
    # The head still counts them: a truncation.
    path, live = ledger
    Raw(path).query(f"DELETE FROM {ENTRIES} WHERE seq > 3")
    error = refuses(path, live)
    assert "truncated" in str(error)


def test_dropped_last_entries_with_a_rewritten_head_refuse_for_a_live_copy(ledger):
    # A consistent rewrite of the tail (head updated too): a ledger opened afresh
    # cannot tell, but every live copy knows how far it had verified.
    path, live = ledger
    raw = Raw(path)
    rows = raw.entries()
    raw.rewrite([body for _, body, _ in rows[:3]])
    with pytest.raises(LedgerError, match="already verified"):
        live.reserve((0.01, 0.0), "after the damage")
    with pytest.raises(LedgerError, match="already verified"):
        live.spent()


def test_emptied_ledger_refuses(ledger):
    path, live = ledger
    Raw(path).query(f"DELETE FROM {ENTRIES}")
    refuses(path, live)


def test_emptied_tables_refuse(ledger, backend):
    path, live = ledger
    raw = Raw(path)
    raw.query(f"DELETE FROM {ENTRIES}")
    raw.query(f"DELETE FROM {HEAD}")
    with pytest.raises(LedgerError, match="head record is missing"):
        live.reserve((0.01, 0.0), "after the damage")
    # SQLite: the file is there, a ledger emptied. PostgreSQL: the name was
    # registered (sklearn_dpol_ledger_names). Only a name whose registration
    # is deleted too is a new ledger to a process that never saw it
    # (doc/accountant.md, "When the ledger is damaged").
    refuses(path, live, match="head record is missing")


def test_reordered_entries_refuse(ledger):
    path, live = ledger
    raw = Raw(path)
    rows = raw.entries()
    for (seq, _, digest), (_, body, _) in [(rows[2], rows[3]), (rows[3], rows[2])]:
        raw.query(f"UPDATE {ENTRIES} SET body = ?, hash = ? WHERE ledger_id = ? AND seq = ?",
                  (body, digest, raw.ledger_id, seq))
    error = refuses(path, live, live_too=False)  # older entries: checked on opening
    assert "entry 3 does not match its hash" in str(error)


def test_edited_entry_refuses(ledger):
    path, live = ledger
    raw = Raw(path)
    raw.query(f"UPDATE {ENTRIES} SET body = replace(body, '0.25', '0.0') WHERE seq = 2")
    error = refuses(path, live, live_too=False)
    assert "entry 2 does not match its hash" in str(error)


def test_appended_settle_that_lowers_a_charge_refuses(ledger):
    # Even with a valid chain (a forgery, or a bug that wrote it), a settle
    # never lowers what a charge spent.
    path, live = ledger
    raw = Raw(path)
    bodies = [body for _, body, _ in raw.entries()]
    first = json.loads(bodies[1])["id"]
    bodies.append(canonical({"op": "settle", "id": first,
                             "cost": {"epsilon": 0.0, "delta": 0.0, "mu": float("nan")}}))
    raw.rewrite(bodies)
    error = refuses(path, live)
    assert "lowers a spent charge" in str(error)


@pytest.mark.parametrize("body", ["{}", "[]", '{"op": "open"}', '{"op": "refund", "id": "x"}',
                                  '{"op": "budget", "epsilon": 9, "delta": 0, "version": 2, '
                                  '"ledger": "x"}', "not json"])
def test_malformed_entry_refuses_with_a_ledger_error(ledger, body):
    # Was a bare KeyError for "{}".
    path, live = ledger
    raw = Raw(path)
    raw.rewrite([b for _, b, _ in raw.entries()] + [body])
    error = refuses(path, live)
    assert "entry 7" in str(error)


def test_a_rewritten_budget_refuses(ledger):
    path, live = ledger
    raw = Raw(path)
    bodies = [body for _, body, _ in raw.entries()]
    header = json.loads(bodies[0])
    header["epsilon"] = 100.0
    bodies[0] = canonical(header)
    raw.rewrite(bodies)
    with pytest.raises(LedgerError, match="holds a budget of"):
        PrivacyAccountant(*BUDGET, path=path)
    with pytest.raises(LedgerError, match="already verified|missing or was changed"):
        live.reserve((0.01, 0.0), "after the damage")


def test_an_unpickled_accountant_rechecks_the_stored_budget(ledger):
    path, live = ledger
    state = pickle.loads(pickle.dumps(live)).__getstate__()
    state["epsilon"] = 100.0  # a tampered (or stale) copy claims a larger budget
    forged = PrivacyAccountant.__new__(PrivacyAccountant)
    forged.__setstate__(state)
    with pytest.raises(LedgerError, match="holds a budget of"):
        forged.reserve((50.0, 0.0), "with the forged budget")
    with pytest.raises(LedgerError, match="holds a budget of"):
        forged.spent()
    assert live.spent().epsilon == pytest.approx(0.4375)  # nothing charged


def test_an_unpickled_accountant_reverifies_the_chain(ledger):
    # A copy starts from nothing it trusts: it verifies every entry again.
    path, live = ledger
    blob = pickle.dumps(live)
    Raw(path).query(f"UPDATE {ENTRIES} SET body = replace(body, '0.125', '0.0') "
                    "WHERE seq = 4")
    with pytest.raises(LedgerError, match="entry 4 does not match"):
        pickle.loads(blob).reserve((0.01, 0.0), "from a copy")


def test_a_replaced_ledger_refuses(backend, tmp_path):
    path = ledger_path(backend, tmp_path)
    live = PrivacyAccountant(*BUDGET, path=path)
    live.reserve((0.5, 0.0), "spent").settle((0.5, 0.0))
    copy = pickle.loads(pickle.dumps(live))
    if backend == "sqlite":
        os.replace(path, str(tmp_path / "moved.sqlite"))
    else:
        raw = Raw(path)
        raw.query(f"DELETE FROM {ENTRIES} WHERE ledger_id = ?", (raw.ledger_id,))
        raw.query(f"DELETE FROM {HEAD} WHERE name = ?", (raw.name,))
        raw.query(f"DELETE FROM {NAMES} WHERE name = ?", (raw.name,))  # deliberately
    fresh = PrivacyAccountant(*BUDGET, path=path)  # a new ledger under the old name
    assert fresh.spent().epsilon == 0.0
    for accountant in (live, copy):
        with pytest.raises(LedgerError, match="replaced"):
            accountant.reserve((0.6, 0.0), "into the new ledger")
    assert fresh.charges == []


# -- not reachable: refuse, never charge another ledger -----------------------------------


def test_a_copy_that_cannot_find_the_sqlite_file_refuses(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    live = PrivacyAccountant(*BUDGET, path=path)
    blob = pickle.dumps(live)
    os.replace(path, str(tmp_path / "elsewhere.sqlite"))  # as seen from another machine
    with pytest.raises(LedgerError, match="Cannot reach the privacy ledger file"):
        pickle.loads(blob).reserve((0.1, 0.0), "from a worker")
    assert not os.path.exists(path)  # no new ledger was started in its place
    with pytest.raises(LedgerError, match="no such file here"):
        live.reserve((0.1, 0.0), "from the owner")


def test_a_copy_on_another_host_refuses_an_sqlite_ledger(tmp_path, monkeypatch):
    path = str(tmp_path / "ledger.sqlite")
    live = PrivacyAccountant(*BUDGET, path=path)
    blob = pickle.dumps(PrivateQFTLRegressor(accountant=live))
    monkeypatch.setattr(socket, "gethostname", lambda: "another-machine")
    remote = pickle.loads(blob)  # unpickled on a worker of a cluster (a shared path)
    with pytest.raises(LedgerError, match="SQLite's locks do not span machines"):
        remote.fit(np.zeros((10, 2)), np.zeros(10))
    monkeypatch.undo()
    assert live.charges == []


def test_an_unreachable_postgres_server_refuses_and_recovers(tmp_path):
    path = new_ledger_url()
    live = PrivacyAccountant(*BUDGET, path=path)
    live.reserve((0.25, 0.0), "before").settle((0.25, 0.0))
    stop_server()
    try:
        with pytest.raises(LedgerError, match="Cannot reach the privacy ledger's server"):
            live.reserve((0.25, 0.0), "while the server is down")
        with pytest.raises(LedgerError, match="Cannot reach"):
            PrivacyAccountant(*BUDGET, path=path)
        with pytest.raises(LedgerError, match="Cannot reach"):
            PrivateQFTLRegressor(accountant=live).fit(np.zeros((10, 2)), np.zeros(10))
    finally:
        start_server()
    live.reserve((0.25, 0.0), "after").settle((0.25, 0.0))  # reconnects
    assert [c.label for c in live.charges] == ["before", "after"]


def test_a_wrong_postgres_url_refuses(tmp_path):
    url = f"postgresql://postgres@/postgres?host={tmp_path}&port=5432#nowhere"
    with pytest.raises(LedgerError, match="Cannot reach") as error:
        PrivacyAccountant(*BUDGET, path=url)
    assert str(tmp_path) in str(error.value)
    secret = "postgresql://postgres:hunter2@/postgres?host=/nonexistent&port=5432"
    with pytest.raises(LedgerError) as error:
        PrivacyAccountant(*BUDGET, path=secret)
    assert "hunter2" not in str(error.value) and "***" in str(error.value)


def test_other_sqlite_files_are_not_ledgers(tmp_path):
    other = str(tmp_path / "other.sqlite")
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(LedgerError, match="not a privacy ledger"):
        PrivacyAccountant(*BUDGET, path=other)
    old = tmp_path / "budget.jsonl"
    old.write_text('{"op": "budget", "epsilon": 1.0, "delta": 1e-06, "version": 1}\n')
    with pytest.raises(LedgerError, match="JSON-lines ledger of sklearn_dpol 0.1"):
        PrivacyAccountant(*BUDGET, path=old)
    assert old.read_text().startswith('{"op": "budget"')  # left as it was


# -- crashes and concurrency ---------------------------------------------------------------

_CRASHER = textwrap.dedent("""
    import sys
    from sklearn_dpol.privacy import PrivacyAccountant
    acc = PrivacyAccountant(1e6, 0.0, path=sys.argv[1])
    print("ready", flush=True)
    while True:
        acc.reserve((0.001, 0.0), "crashing").settle((0.001, 0.0))
""")


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_a_process_killed_while_charging_leaves_a_ledger_that_opens(backend_name, tmp_path):
    path = ledger_path(backend_name, tmp_path)
    PrivacyAccountant(1e6, 0.0, path=path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [os.path.dirname(os.path.dirname(__file__)),
                      os.environ.get("PYTHONPATH")])))
    child = subprocess.Popen([sys.executable, "-c", _CRASHER, path], stdout=subprocess.PIPE,
                             env=env)
    assert child.stdout.readline().strip() == b"ready"
    time.sleep(1.0)
    child.send_signal(signal.SIGKILL)  # in the middle of a transaction, likely
    child.wait()
    acc = PrivacyAccountant(1e6, 0.0, path=path)
    charges = acc.charges
    assert len(charges) > 3
    # Every charge the child opened is counted, settled or not.
    assert all(c.status == "spent" for c in charges[:-1])
    assert acc.spent().epsilon == pytest.approx(0.001 * len(charges))
    acc.reserve((0.001, 0.0), "after the crash").settle((0.001, 0.0))


def _reserve_and_die(path):
    PrivacyAccountant(*BUDGET, path=path).reserve((0.5, 0.0), "died mid-fit")
    os._exit(0)


def test_a_reservation_of_a_dead_process_stays_counted(backend, tmp_path):
    path = ledger_path(backend, tmp_path)
    acc = PrivacyAccountant(*BUDGET, path=path)
    child = multiprocessing.get_context("fork").Process(target=_reserve_and_die, args=(path,))
    child.start()
    child.join()
    (charge,) = acc.charges
    assert charge.status == "reserved" and charge.pid == child.pid
    with pytest.raises(BudgetExceededError):
        acc.reserve((0.6, 0.0), "more than is left")


def test_a_temporary_ledger_leaves_no_files(tmp_path):
    acc = PrivacyAccountant(*BUDGET)
    acc.reserve((0.1, 0.0), "x").settle((0.1, 0.0))
    path = acc.path
    assert os.path.exists(path)
    acc.close()
    assert not any(os.path.exists(path + suffix) for suffix in ("", "-wal", "-shm"))
    assert acc.spent().epsilon == 0.1


def test_a_postgres_ledger_persists_and_names_ledgers(tmp_path):
    url = new_ledger_url()
    with PrivacyAccountant(*BUDGET, path=url) as acc:
        acc.reserve((0.5, 0.0), "session 1").settle((0.5, 0.0))
    again = PrivacyAccountant(*BUDGET, path=url)
    assert again.spent().epsilon == 0.5
    other = PrivacyAccountant(2.0, 1e-6, path=url.rpartition("#")[0] + "#another-data-set-"
                              + url.rpartition("-")[2])
    assert other.spent().epsilon == 0.0
    with pytest.raises(LedgerError, match="holds a budget"):
        PrivacyAccountant(2.0, 1e-6, path=url)
