"""Where a :class:`PrivacyAccountant` keeps its ledger: SQLite or PostgreSQL.

Both stores hold the same two tables:

* ``sklearn_dpol_ledger_entries(ledger_id, seq, body, hash)``: the entries of
  each ledger, numbered ``1, 2, ...`` (``seq``), each a JSON event (``body``)
  chained to the previous one by ``hash = sha256(previous hash, seq, body)``;
  entry 1 is the budget, which carries the ledger's random identifier.
* ``sklearn_dpol_ledger_head(name, ledger_id, n_entries, last_hash)``: per
  ledger, the number of entries and the hash of the last, written in the same
  transaction as each entry.

Every read verifies the chain from the last entry this copy of the accountant
had verified (from entry 1 when it opens the ledger), and that the head
matches: a ledger whose entries were dropped, reordered, edited or emptied,
or that was replaced by another ledger, raises :class:`LedgerError` instead of
being read. Every write happens in one database transaction that first locks
the ledger (SQLite ``BEGIN IMMEDIATE``, PostgreSQL ``SELECT ... FOR UPDATE``
on the head row), so that the budget check and the entry are atomic across
processes; a transaction that does not commit leaves no entry.
"""

import hashlib
import json
import os
import socket
import sqlite3
import tempfile
import threading
import urllib.parse
import uuid
import weakref
from contextlib import contextmanager

from ..exceptions import LedgerError

__all__ = ["LedgerError", "open_store"]

GENESIS = "0" * 64
LEDGER_VERSION = 2
# PRAGMA application_id of a ledger file ("dpol"), so that another SQLite
# database is refused as "not a ledger" rather than read.
APPLICATION_ID = 0x64706F6C
ENTRIES = "sklearn_dpol_ledger_entries"
HEAD = "sklearn_dpol_ledger_head"
# PostgreSQL only: every ledger name ever created, with its ledger (never
# deleted by an accountant, so that a ledger whose head row alone was deleted
# is not taken for a new one), and the secret key of each ledger's noise
# fingerprints (readable by the charging role only; see noise_key).
NAMES = "sklearn_dpol_ledger_names"
KEYS = "sklearn_dpol_ledger_keys"
SQLITE_NAME = "default"
# Seconds a transaction waits for the ledger's lock before it gives up (SQLite's
# busy timeout, PostgreSQL's lock_timeout).
LOCK_TIMEOUT = 120.0

_TABLES = {
    HEAD: (f"CREATE TABLE IF NOT EXISTS {HEAD} (name TEXT PRIMARY KEY, ledger_id TEXT NOT "
           "NULL UNIQUE, n_entries BIGINT NOT NULL, last_hash TEXT NOT NULL)"),
    ENTRIES: (f"CREATE TABLE IF NOT EXISTS {ENTRIES} (ledger_id TEXT NOT NULL, seq BIGINT "
              "NOT NULL, body TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (ledger_id, "
              "seq))"),
}
_SCHEMA = tuple(_TABLES.values())
_PG_TABLES = {
    **_TABLES,
    NAMES: (f"CREATE TABLE IF NOT EXISTS {NAMES} (name TEXT PRIMARY KEY, ledger_id TEXT "
            "NOT NULL)"),
    KEYS: (f"CREATE TABLE IF NOT EXISTS {KEYS} (ledger_id TEXT PRIMARY KEY, key TEXT NOT "
           "NULL)"),
}

RECOVERY = (
    "How to recover: charge this ledger no more, and start a new ledger for this data "
    "set whose budget is what is left: PrivacyAccountant(epsilon=LEFT, delta=LEFT, "
    "path=NEW). LEFT is the budget minus what the last intact copy of this ledger records "
    "as spent (a backup, or the entries that verify), minus an upper bound on everything "
    "charged after that copy was taken. Do not put a backup back in place of the ledger: "
    "it drops every charge made after it was taken, and accountants opened later do not "
    "detect that. Deleting the ledger and opening the same path again would restart the "
    "data set's budget from zero."
)


class RetryTransaction(LedgerError):
    """A transaction the database rolled back to serialise it: nothing was written."""


def canonical(event):
    """The JSON text of an event, as stored and hashed."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"))


def chain_hash(previous, seq, body):
    """The hash of entry ``seq``: it covers the previous entry's hash."""
    return hashlib.sha256(f"{previous}\n{seq}\n{body}".encode("utf-8")).hexdigest()


def hostname():
    return socket.gethostname()


def is_url(path):
    return isinstance(path, str) and path.split(":", 1)[0].lower() in ("postgresql",
                                                                       "postgres")


def open_store(path, temporary=False):
    """The store of ``path``: a PostgreSQL URL or an SQLite file."""
    if is_url(path):
        return PostgresStore(path)
    return SQLiteStore(path, temporary=temporary)


def corrupt(location, detail):
    return LedgerError(
        f"The privacy ledger at {location} is corrupt: {detail}. Refusing to guess what "
        f"was spent; nothing was charged. {RECOVERY}"
    )


class _Head:
    """A position in a ledger's chain: entry ``seq`` has hash ``hash``."""

    __slots__ = ("seq", "hash")

    def __init__(self, seq=0, hash=GENESIS):
        self.seq, self.hash = seq, hash


class Store:
    """What both stores share: the chained entries and their verification.

    Subclasses provide ``location`` (for messages), ``placeholder``,
    ``exists()``, ``create(header)``, ``close()``, ``remove()`` and
    ``transaction(write, missing)``: a context manager that locks the ledger
    (for writing, or for a consistent read), yields a :class:`Transaction`,
    and commits at the end (rolls back on an exception).
    """

    placeholder = "?"
    name = SQLITE_NAME

    def register(self, ledger_id):
        """Record the ledger's name where the store keeps one (PostgreSQL)."""

    def sql(self, text):
        return text.replace("?", self.placeholder)

    def read_head(self, cursor):
        cursor.execute(self.sql(f"SELECT ledger_id, n_entries, last_hash FROM {HEAD} "
                                "WHERE name = ?"), (self.name,))
        rows = cursor.fetchall()
        if not rows:
            return None
        return rows[0]


class Transaction:
    """One locked transaction on a ledger."""

    def __init__(self, store, cursor):
        self.store, self.cursor = store, cursor
        self.ledger_id = None
        self.n_entries = None

    def entries(self, known, ledger_id=None, mark=None):
        """The events after ``known`` (a :class:`_Head`), verified; advances ``known``.

        Verifies that entry ``known.seq`` still has hash ``known.hash`` (no
        entry this copy saw was dropped or changed), that the entries after it
        are numbered consecutively and chained, and that the last one is the
        head's. ``ledger_id``: the ledger this copy belongs to (a ledger
        replaced by another one is refused). ``mark``: ``(seq, hash)`` of the
        last entry this accountant (or the copy it was pickled from) ever
        verified, checked when ``known`` starts afresh: a ledger rolled back
        or rewritten behind it is refused even where its chain is consistent.
        """
        store, cursor = self.store, self.cursor
        head = store.read_head(cursor)
        if head is None:
            raise corrupt(store.location, "its head record is missing (the ledger was "
                                          "emptied, or its tables were dropped)")
        head_id, n_entries, last_hash = head[0], int(head[1]), head[2]
        if ledger_id is not None and head_id != ledger_id:
            raise LedgerError(
                f"The privacy ledger at {store.location} was replaced while this "
                f"accountant used it (it is ledger {head_id}, not {ledger_id}); refusing "
                "to charge a ledger that may have lost charges. Nothing was charged. "
                "Open the current ledger with a new PrivacyAccountant if it is meant "
                f"to hold this data set's budget. {RECOVERY}"
            )
        mark_seq, mark_hash = mark if mark is not None else (0, GENESIS)
        if n_entries < max(known.seq, mark_seq):
            known = _Head(max(known.seq, mark_seq))  # for the message
            raise corrupt(store.location,
                          f"it holds {n_entries} entries, but this accountant already "
                          f"verified {known.seq} (entries were dropped, or the ledger "
                          "was restored from an older copy)")
        cursor.execute(store.sql(f"SELECT count(*) FROM {ENTRIES} WHERE ledger_id = ?"),
                       (head_id,))
        count = int(cursor.fetchall()[0][0])
        if count != n_entries:
            raise corrupt(store.location,
                          f"it holds {count} entries where its head records {n_entries} "
                          "(entries were dropped, added, or the ledger was truncated or "
                          "emptied)")
        cursor.execute(store.sql(f"SELECT seq, body, hash FROM {ENTRIES} WHERE ledger_id = ? "
                                 "AND seq >= ? ORDER BY seq"),
                       (head_id, max(known.seq, 1)))
        rows = cursor.fetchall()
        if known.seq > 0:
            if not rows or int(rows[0][0]) != known.seq or rows[0][2] != known.hash:
                raise corrupt(store.location,
                              f"entry {known.seq}, which this accountant verified, is "
                              "missing or was changed")
            rows = rows[1:]
        events = []
        previous, expected = known.hash, known.seq + 1
        for seq, body, stored in rows:
            seq = int(seq)
            if seq != expected:
                what = "missing" if seq > expected else "duplicated"
                raise corrupt(store.location, f"entry {expected} is {what} (entries "
                                              "are numbered 1, 2, ... without gaps)")
            if seq > n_entries:
                raise corrupt(store.location, f"entry {seq} is beyond the head's "
                                              f"{n_entries} entries")
            if chain_hash(previous, seq, body) != stored:
                raise corrupt(store.location,
                              f"entry {seq} does not match its hash (it was edited, "
                              "reordered, or a previous entry was)")
            if seq == mark_seq and stored != mark_hash:
                raise corrupt(store.location,
                              f"entry {seq}, which this accountant verified, was "
                              "changed (the ledger was rewritten)")
            try:
                event = json.loads(body)
            except (TypeError, ValueError):
                raise corrupt(store.location, f"entry {seq} is not JSON") from None
            events.append((seq, event))
            previous, expected = stored, seq + 1
        if expected - 1 != n_entries:
            raise corrupt(store.location,
                          f"the head records {n_entries} entries but entries after "
                          f"{expected - 1} are missing (the ledger was truncated or "
                          "emptied)")
        if previous != last_hash:
            raise corrupt(store.location, "the head's hash is not the last entry's")
        known.seq, known.hash = n_entries, previous
        self.ledger_id, self.n_entries = head_id, n_entries
        return events

    def append(self, known, event):
        """Write ``event`` as entry ``known.seq + 1``; advances ``known``."""
        store, cursor = self.store, self.cursor
        seq, body = known.seq + 1, canonical(event)
        digest = chain_hash(known.hash, seq, body)
        cursor.execute(store.sql(f"INSERT INTO {ENTRIES} (ledger_id, seq, body, hash) "
                                 "VALUES (?, ?, ?, ?)"),
                       (self.ledger_id, seq, body, digest))
        cursor.execute(store.sql(f"UPDATE {HEAD} SET n_entries = ?, last_hash = ? "
                                 "WHERE name = ? AND n_entries = ?"),
                       (seq, digest, store.name, known.seq))
        if cursor.rowcount != 1:  # pragma: no cover - the lock makes this impossible
            raise LedgerError(f"The privacy ledger at {store.location} changed during a "
                              "locked transaction; nothing was charged.")
        known.seq, known.hash = seq, digest


# -- SQLite ------------------------------------------------------------------------------

# A connection opened before a fork must not be used or closed in the child
# (SQLite's rule); the child opens its own and keeps the inherited one here.
_INHERITED = []

# Every live store, for the fork hooks below.
_STORES = weakref.WeakSet()


def _before_fork():
    # No SQLite connection may be open across a fork. SQLite's unix VFS keeps
    # one record of its POSIX locks per file (inode) per process; the child
    # inherits the parent's record, and a connection the child opens to the
    # same file then counts the parent's locks as its own and never takes
    # them from the kernel (fcntl locks are not inherited). Another process
    # that closes its connection finds no other lock holder, checkpoints and
    # deletes the -wal and -shm files that the children still write to:
    # lost charges (an overspent budget) and "disk I/O error". So the parent
    # closes its ledger connections here (each reopens on its next use), and
    # holds every store's lock across the fork so that no thread is inside a
    # transaction, or owns a lock that the child would inherit held.
    stores = list(_STORES)
    for store in stores:
        store._lock.acquire()
    _HELD.extend(stores)
    for store in stores:
        store._close_before_fork()


def _after_fork_in_parent():
    while _HELD:
        _HELD.pop()._lock.release()


def _after_fork_in_child():
    stores, _HELD[:] = list(_HELD), []
    for store in stores:
        # The parent's lock object is held: replace it. A connection left open
        # (a fork inside a transaction of the forking thread) is never used
        # here: _connection sees that another process opened it.
        store._lock = threading.RLock()


def _close_owned(conn, pid):
    # The finalizer of an SQLite store. A connection is kept alive by a
    # reference cycle (its statement cache refers to it) until the cyclic
    # garbage collector runs, at any later time and in any forked child: so a
    # store that is dropped closes its connection at once, in its own process.
    if os.getpid() == pid:
        conn.close()
    else:
        _INHERITED.append(conn)


_HELD = []
if hasattr(os, "register_at_fork"):  # pragma: no branch - every POSIX platform
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


class SQLiteStore(Store):
    """A ledger in an SQLite file: one machine, any number of processes.

    The file is created complete (schema, budget entry and head written to a
    temporary file in the same directory, which is then linked into place), so
    a path holds a whole ledger or nothing. Write-ahead logging, with
    ``synchronous=FULL`` (a committed charge survives a crash of the machine),
    except for a temporary ledger, which no process reads after a crash.
    """

    def __init__(self, path, temporary=False):
        self.path = os.path.abspath(os.fspath(path))
        self.location = self.path
        self.temporary = temporary
        self._conn = None
        self._pid = None
        self._inode = None
        self._finalizer = None
        self._durable = True
        self._keys = {}
        self._lock = threading.RLock()
        _STORES.add(self)

    # -- creation ------------------------------------------------------------------------

    def exists(self):
        return os.path.exists(self.path)

    @property
    def key_path(self):
        return self.path + ".key"

    def create(self, header):
        """Create the ledger with ``header`` as entry 1; False if the path exists.

        The ledger file and its key file (:meth:`noise_key`) are written to
        staging files, verified, and put in place key first: a path holds a
        whole ledger with its key, or no ledger (a key file left without a
        ledger by a crash is replaced by the next creator).
        """
        directory = os.path.dirname(self.path)
        stem = os.path.join(directory, f".{os.path.basename(self.path)}.{uuid.uuid4().hex}")
        staging, key_staging = stem + ".creating", stem + ".key.creating"
        try:
            self._write_staging(staging, header)
            _write_key_file(key_staging, header["ledger"], durable=not self.temporary)
            with _creating(directory):
                # Creators take turns: one that found no ledger must not
                # delete the log of the ledger that another one linked and
                # charges meanwhile, nor replace its key.
                if os.path.exists(self.path):
                    return False
                # A WAL left by a ledger that was moved or deleted must not
                # be replayed into this one.
                for suffix in ("-wal", "-shm"):
                    try:
                        os.remove(self.path + suffix)
                    except FileNotFoundError:
                        pass
                os.replace(key_staging, self.key_path)
                os.link(staging, self.path)  # atomic; fails if the path exists
        except FileExistsError:
            return False
        except (sqlite3.Error, OSError) as error:
            raise LedgerError(f"Cannot create the privacy ledger at {self.path}: {error}. "
                              "No ledger was created there, and nothing was "
                              "charged.") from None
        finally:
            for name in (staging, staging + "-wal", staging + "-shm", staging + "-journal",
                         key_staging):
                try:
                    os.remove(name)
                except FileNotFoundError:
                    pass
        if not self.temporary:
            _fsync_directory(directory)
        return True

    def _write_staging(self, staging, header):
        """Write the new ledger to ``staging``, then check what the file itself holds."""
        body = canonical(header)
        digest = chain_hash(GENESIS, 1, body)
        conn = sqlite3.connect(staging, isolation_level=None)
        try:
            # No syncing while the staging file is written: no process can see
            # it until it is complete, synced (below) and linked into place.
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"INSERT INTO {ENTRIES} VALUES (?, 1, ?, ?)",
                         (header["ledger"], body, digest))
            conn.execute(f"INSERT INTO {HEAD} VALUES (?, ?, 1, ?)",
                         (SQLITE_NAME, header["ledger"], digest))
            conn.execute("COMMIT")
            # Copy the log into the file now, and check that it was: close()
            # would do it too, but reports no failure (a full disk).
            busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy or log != done:  # pragma: no cover - no other connection exists
                raise sqlite3.OperationalError("the new ledger's log could not be "
                                               "copied into its file")
        finally:
            conn.close()
        os.chmod(staging, 0o600)
        # What the file itself holds, without its log (immutable: no locks and
        # no -wal or -shm files are read or made).
        check = sqlite3.connect("file:" + urllib.parse.quote(staging) + "?immutable=1",
                                uri=True, isolation_level=None)
        try:
            ok = (check.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
                  and [r[0] for r in check.execute("PRAGMA quick_check")] == ["ok"]
                  and check.execute(f"SELECT name, ledger_id, n_entries, last_hash FROM "
                                    f"{HEAD}").fetchall()
                  == [(SQLITE_NAME, header["ledger"], 1, digest)]
                  and check.execute(f"SELECT ledger_id, seq, body, hash FROM "
                                    f"{ENTRIES}").fetchall()
                  == [(header["ledger"], 1, body, digest)])
        finally:
            check.close()
        if not ok:
            raise sqlite3.DatabaseError("the new ledger's file does not read back as "
                                        "written (a full disk?)")
        if not self.temporary:
            with open(staging, "rb") as handle:
                os.fsync(handle.fileno())

    def noise_key(self, ledger_id):
        """The secret key of this ledger's noise fingerprints: its key file's."""
        with self._lock:
            if ledger_id not in self._keys:
                self._keys[ledger_id] = _read_key_file(self.key_path, ledger_id, self.path)
            return self._keys[ledger_id]

    def remove(self):
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal", ".key"):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass

    # -- connections ---------------------------------------------------------------------

    def close(self):
        with self._lock:
            self._release(close=True)

    def _release(self, close):
        # Forget the connection; close it only if asked and opened by this process.
        if self._conn is not None:
            self._finalizer.detach()
            if close and self._pid == os.getpid():
                self._conn.close()
            else:
                _INHERITED.append(self._conn)
        self._conn = self._pid = self._inode = self._finalizer = None

    def _close_before_fork(self):
        # Called with the lock held, in the parent (see _before_fork).
        if (self._conn is not None and self._pid == os.getpid()
                and not self._conn.in_transaction):
            self._release(close=True)

    def _connection(self, missing):
        """The open connection, (re)opened if needed; ``missing()`` makes the error for no file."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            raise missing() from None
        except OSError as error:
            raise LedgerError(f"Cannot reach the privacy ledger file {self.path}: {error}. "
                              "Nothing was charged.") from None
        if self._conn is not None and self._pid != os.getpid():
            self._release(close=False)  # opened before a fork: never touch it here
        if self._conn is not None and self._inode != inode:
            # The path names another file now: read that one. The old connection
            # is never closed: closing would checkpoint and remove a WAL file
            # by name, which is now the new file's.
            self._release(close=False)
        if self._conn is None:
            conn = self._open(missing)
            self._conn, self._pid, self._inode = conn, os.getpid(), inode
            self._finalizer = weakref.finalize(self, _close_owned, conn, self._pid)
            self._durable = True
        return self._conn

    def _open(self, missing):
        # mode=rw: never create a file here (a missing ledger is never restarted).
        uri = "file:" + urllib.parse.quote(self.path) + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=LOCK_TIMEOUT,
                                   check_same_thread=False)
        except sqlite3.OperationalError:
            if not os.path.exists(self.path):
                raise missing() from None
            raise LedgerError(f"Cannot open the privacy ledger file {self.path} for "
                              "reading and writing. Nothing was charged.") from None
        try:
            # The file is read through SQLite only: opening and closing another
            # descriptor of it would drop every POSIX lock this process holds
            # on it (those of this process's other connections to the ledger),
            # and another process could then delete the write-ahead log that
            # they still use. Only a file SQLite refuses is read directly.
            try:
                application_id = conn.execute("PRAGMA application_id").fetchone()[0]
            except sqlite3.DatabaseError:
                if not self._starts_as_sqlite():
                    raise LedgerError(self._not_a_ledger()) from None
                raise
            if application_id != APPLICATION_ID:
                raise LedgerError(self._not_a_ledger())
            check = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if check != ["ok"]:
                raise corrupt(self.path, "SQLite's integrity check fails ("
                                         + "; ".join(check[:3]) + ")")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":  # pragma: no cover - a file system without WAL
                raise LedgerError(f"The privacy ledger file {self.path} cannot use "
                                  "write-ahead logging here (journal mode {mode}).")
            conn.execute("PRAGMA synchronous = " + ("OFF" if self.temporary else "FULL"))
        except sqlite3.DatabaseError as error:
            conn.close()
            raise self._failure(error) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _starts_as_sqlite(self):
        try:
            with open(self.path, "rb") as handle:
                return handle.read(16) == b"SQLite format 3\x00"
        except OSError:
            return False

    def _not_a_ledger(self):
        try:
            with open(self.path, "rb") as handle:
                start = handle.read(64)
        except OSError:
            start = b""
        if not start:
            return (f"The privacy ledger file {self.path} is empty: a ledger always holds "
                    "at least its budget, so it was truncated or emptied. Nothing was "
                    f"charged. {RECOVERY}")
        if start.lstrip().startswith(b"{"):
            return (f"{self.path} is a JSON-lines ledger of sklearn_dpol 0.1, which this "
                    "version does not read (its entries are not chained, so its "
                    "corruption could not be detected). Start an SQLite ledger at a new "
                    "path with the budget that file leaves: PrivacyAccountant(epsilon="
                    "LEFT, delta=LEFT, path=NEW).")
        return (f"{self.path} is not a privacy ledger (it is not an SQLite database made "
                f"by sklearn_dpol). Nothing was charged. {RECOVERY}")

    @contextmanager
    def _begin(self, write, missing, durable=True):
        with self._lock:
            conn = self._connection(missing)
            if write and not self.temporary and durable != self._durable:
                # FULL: the write-ahead log is synced at commit. NORMAL: at the
                # next FULL commit or checkpoint (durable against a crash of
                # the process, and never reordered).
                conn.execute("PRAGMA synchronous = " + ("FULL" if durable else "NORMAL"))
                self._durable = durable
            try:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.OperationalError as error:
                raise LedgerError(f"Cannot lock the privacy ledger file {self.path} "
                                  f"({error}). Nothing was charged.") from None
            cursor = conn.cursor()
            try:
                yield cursor
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as error:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise LedgerError(f"The privacy ledger file {self.path} could not commit "
                                  f"({error}). Nothing was charged.") from None

    @contextmanager
    def transaction(self, write, missing, durable=True):
        try:
            with self._begin(write, missing, durable) as cursor:
                yield Transaction(self, cursor)
        except sqlite3.DatabaseError as error:
            self.close()
            raise self._failure(error) from None

    def _failure(self, error):
        """The LedgerError for an SQLite error: damage, or a file that cannot be used now."""
        if _transient(error):
            return LedgerError(
                f"Cannot use the privacy ledger file {self.path} now ({error}): it cannot "
                "be written or locked here (a read-only file or file system, a lock held "
                "by another process, a full disk, or an I/O error). Nothing was charged. "
                "This says nothing about the ledger's contents: retry once the file can "
                "be written."
            )
        return corrupt(self.path, f"SQLite cannot read it ({error})")


# SQLite's result codes for a file that cannot be used now, as opposed to one
# whose contents are damaged (SQLITE_CORRUPT, SQLITE_NOTADB, a missing table).
_TRANSIENT_CODES = {3: "SQLITE_PERM", 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED",
                    8: "SQLITE_READONLY", 10: "SQLITE_IOERR", 13: "SQLITE_FULL",
                    14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL"}
_TRANSIENT_MESSAGES = ("readonly", "read-only", "locked", "disk i/o error", "is full",
                       "unable to open", "access permission denied", "locking protocol")


def _transient(error):
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return code & 0xFF in _TRANSIENT_CODES
    text = str(error).lower()  # pragma: no cover - Python 3.10
    return any(message in text for message in _TRANSIENT_MESSAGES)


@contextmanager
def _creating(directory):
    """An exclusive lock among the processes creating ledgers in ``directory``.

    ``flock`` on the directory itself: no file is added, and (unlike a POSIX
    ``fcntl`` lock on a ledger file) it never touches SQLite's locks. Where
    the platform or file system has no ``flock``, creators do not wait.
    """
    try:
        import fcntl
        fd = os.open(directory, os.O_RDONLY)
    except (ImportError, OSError):  # pragma: no cover - no flock, or no directory handle
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # pragma: no cover - a file system without flock
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def no_key(location, detail):
    return LedgerError(
        f"The privacy ledger at {location} cannot check this charge's noise: {detail}. "
        "A charge whose noise comes from a seeded generator (an integer or RandomState "
        "random_state, or a partial_fit stream that continues a fitted estimator's "
        "generator) is recorded by a fingerprint keyed with the ledger's secret key, which "
        "is kept outside the ledger; without the key the ledger cannot tell whether the "
        "charge repeats another charge's noise, so it is refused. Nothing was charged. "
        "Charges with fresh noise (random_state=None) are not affected. Restore the key "
        "(an SQLite ledger's is the file LEDGER.key, made with the ledger; a PostgreSQL "
        "ledger's is its row in sklearn_dpol_ledger_keys), or start a new ledger with the "
        "budget that is left. Ledgers made by sklearn_dpol 0.2 or earlier have no key."
    )


def _write_key_file(path, ledger_id, durable):
    """A new key file at ``path`` (mode 0600), for ledger ``ledger_id``."""
    text = json.dumps({"ledger": ledger_id, "key": os.urandom(32).hex()}).encode("ascii")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(text)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _parse_key(text):
    if not (isinstance(text, str) and len(text) == 64):
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _read_key_file(path, ledger_id, location):
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(4096).decode("ascii"))
    except FileNotFoundError:
        raise no_key(location, f"its key file {path} is missing") from None
    except (OSError, ValueError) as error:
        raise no_key(location, f"its key file {path} cannot be read ({error})") from None
    key = _parse_key(data.get("key")) if isinstance(data, dict) else None
    if key is None or data.get("ledger") != ledger_id:
        raise no_key(location, f"its key file {path} is damaged, or belongs to another "
                               "ledger")
    return key


def temporary_path():
    return os.path.join(tempfile.gettempdir(),
                        f"sklearn_dpol_budget_{uuid.uuid4().hex}.sqlite")


# -- PostgreSQL --------------------------------------------------------------------------


class PostgresStore(Store):
    """A ledger in a PostgreSQL database: any number of processes on any machines.

    ``url`` is a libpq connection URL; its fragment (``#name``) names the
    ledger within the database (``default`` without one), so one database
    holds the ledgers of many data sets. Each transaction runs at READ
    COMMITTED (whatever the database's default) and locks the ledger's head
    row (``SELECT ... FOR UPDATE``), waiting at most ``LOCK_TIMEOUT`` seconds;
    the server's commit is durable (``synchronous_commit`` as configured,
    ``on`` by default). Besides the two tables of every store, the database
    holds ``sklearn_dpol_ledger_names`` (every ledger name created, so that a
    name whose head row was deleted is not taken for a new ledger) and
    ``sklearn_dpol_ledger_keys`` (each ledger's secret noise key: grant it to
    the roles that charge, never to one that only reads the ledger).
    """

    placeholder = "%s"

    def __init__(self, url):
        conninfo, _, fragment = url.partition("#")
        self.url = url
        self.conninfo = conninfo
        self.name = urllib.parse.unquote(fragment) or "default"
        self.location = f"{redact(conninfo)}#{self.name}"
        self.temporary = False
        self._conn = None
        self._pid = None
        self._keys = {}
        self._lock = threading.RLock()
        _STORES.add(self)

    def exists(self):
        with self.transaction(write=False, missing=None) as tx:
            return self.read_head(tx.cursor) is not None

    def create(self, header):
        """Create the ledger with ``header`` as entry 1; False if it exists.

        Refused (``LedgerError``) when the name has no head row but was
        registered by an earlier ledger: its head row alone was deleted, and
        its entries may still be stored.
        """
        psycopg = _psycopg()
        body = canonical(header)
        digest = chain_hash(GENESIS, 1, body)
        try:
            with self._begin(write=False, missing=None, lock_head=False) as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                               ("sklearn_dpol_ledger:" + self.name,))
                if self.read_head(cursor) is not None:
                    return False
                cursor.execute(f"SELECT ledger_id FROM {NAMES} WHERE name = %s",
                               (self.name,))
                rows = cursor.fetchall()
                if rows:
                    raise corrupt(self.location,
                                  f"its head record is missing, but ledger {rows[0][0]} "
                                  f"was created under this name ({NAMES}) and its entries "
                                  "may still be stored: a headless ledger is never taken "
                                  "for a new one")
                cursor.execute(f"INSERT INTO {ENTRIES} VALUES (%s, 1, %s, %s)",
                               (header["ledger"], body, digest))
                cursor.execute(f"INSERT INTO {HEAD} VALUES (%s, %s, 1, %s)",
                               (self.name, header["ledger"], digest))
                cursor.execute(f"INSERT INTO {NAMES} VALUES (%s, %s)",
                               (self.name, header["ledger"]))
                cursor.execute(f"INSERT INTO {KEYS} VALUES (%s, %s)",
                               (header["ledger"], os.urandom(32).hex()))
                return True
        except psycopg.errors.UniqueViolation:  # pragma: no cover - the advisory lock
            return False

    def register(self, ledger_id):
        """Record the name of a ledger made by an earlier version (no-op if recorded)."""
        with self._begin(write=False, missing=None, lock_head=False) as cursor:
            cursor.execute(f"SELECT 1 FROM {NAMES} WHERE name = %s", (self.name,))
            if not cursor.fetchall():
                cursor.execute(f"INSERT INTO {NAMES} VALUES (%s, %s) ON CONFLICT (name) "
                               "DO NOTHING", (self.name, ledger_id))

    def noise_key(self, ledger_id):
        """The secret key of this ledger's noise fingerprints (its row in the keys table)."""
        with self._lock:
            if ledger_id not in self._keys:
                with self._begin(write=False, missing=None, lock_head=False) as cursor:
                    cursor.execute(f"SELECT key FROM {KEYS} WHERE ledger_id = %s",
                                   (ledger_id,))
                    rows = cursor.fetchall()
                key = _parse_key(rows[0][0]) if rows else None
                if key is None:
                    raise no_key(self.location, f"its row in {KEYS} is "
                                                + ("damaged" if rows else "missing"))
                self._keys[ledger_id] = key
            return self._keys[ledger_id]

    def remove(self):  # a server ledger is never removed by an accountant
        self.close()

    def _close_before_fork(self):
        # A server connection stays open in the parent: the child never uses
        # or closes it (psycopg does not close a connection of another process).
        pass

    def close(self):
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                try:
                    self._conn.close()
                except Exception:  # pragma: no cover - closing a broken connection
                    pass
            elif self._conn is not None:
                _INHERITED.append(self._conn)
            self._conn = self._pid = None

    def _connection(self):
        psycopg = _psycopg()
        if self._conn is not None and self._pid != os.getpid():
            _INHERITED.append(self._conn)
            self._conn = None
        if self._conn is not None and (self._conn.closed
                                       or getattr(self._conn, "broken", False)):
            self._conn = None
        if self._conn is None:
            try:
                conn = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10)
            except psycopg.Error as error:
                raise self.unreachable(error) from None
            # Every transaction begins at READ COMMITTED, whatever the database's
            # default: the row lock then serialises the charges, where REPEATABLE
            # READ or SERIALIZABLE would fail the concurrent ones.
            conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
            try:
                with conn.transaction():
                    cursor = conn.cursor()
                    cursor.execute("SELECT set_config('lock_timeout', %s, true)",
                                   (f"{int(LOCK_TIMEOUT * 1000)}ms",))
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtext('sklearn_dpol_"
                                   "ledger_schema'))")
                    # Only the missing tables are created: CREATE TABLE IF NOT
                    # EXISTS needs the CREATE privilege even where the table
                    # exists, which a least-privilege role does not have.
                    cursor.execute("SELECT t FROM unnest(%s::text[]) AS t WHERE "
                                   "to_regclass(t) IS NULL", (list(_PG_TABLES),))
                    for (table,) in cursor.fetchall():
                        cursor.execute(_PG_TABLES[table])
            except psycopg.Error as error:
                conn.close()
                if isinstance(error, psycopg.errors.LockNotAvailable):
                    raise self.locked() from None
                raise LedgerError(f"Cannot set up the privacy ledger tables at "
                                  f"{self.location}: {error}. Nothing was charged.") from None
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def unreachable(self, error):
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        return LedgerError(
            f"Cannot reach the privacy ledger's server at {self.location} from this "
            f"process (host {hostname()}): {detail}. Nothing was charged, and no other "
            "ledger is charged instead: make the server reachable from every process "
            "that fits with this accountant, then retry."
        )

    def locked(self):
        return LedgerError(
            f"Cannot lock the privacy ledger at {self.location} within {LOCK_TIMEOUT:g} s: "
            "another session holds its lock (a process stopped, or hung, in the middle of "
            "a charge; see pg_stat_activity and pg_locks). Nothing was charged; retry "
            "once that session has ended."
        )

    @contextmanager
    def _begin(self, write, missing, lock_head=True, durable=True):
        psycopg = _psycopg()
        with self._lock:
            for attempt in (0, 1):
                conn = self._connection()
                started = False
                try:
                    with conn.transaction():
                        cursor = conn.cursor()
                        # A lock held by a stopped process fails the charge
                        # instead of blocking it forever (advisory locks too).
                        cursor.execute("SELECT set_config('lock_timeout', %s, true)",
                                       (f"{int(LOCK_TIMEOUT * 1000)}ms",))
                        if not durable:  # as SQLite's NORMAL: may be lost, never reordered
                            cursor.execute("SET LOCAL synchronous_commit = off")
                        if lock_head:
                            cursor.execute(f"SELECT 1 FROM {HEAD} WHERE name = %s FOR "
                                           + ("UPDATE" if write else "SHARE"), (self.name,))
                        started = True
                        yield cursor
                    return
                except psycopg.errors.LockNotAvailable:
                    raise self.locked() from None
                except (psycopg.errors.SerializationFailure,
                        psycopg.errors.DeadlockDetected) as error:
                    # Rolled back, nothing written: the accountant runs it again.
                    raise RetryTransaction(
                        f"The privacy ledger at {self.location} could not serialise a "
                        f"transaction ({str(error).strip().splitlines()[0]}). Nothing was "
                        "charged; retry.") from None
                except psycopg.OperationalError as error:
                    self.close()
                    # A connection that broke before the transaction did anything
                    # (a server restart, an idle timeout) is opened again, once.
                    if started or attempt:
                        raise self.unreachable(error) from None
                except psycopg.Error as error:
                    raise LedgerError(f"The privacy ledger at {self.location} refused a "
                                      f"transaction: {error}. Nothing was charged.") from None

    @contextmanager
    def transaction(self, write, missing, durable=True):
        with self._begin(write, missing, durable=durable) as cursor:
            yield Transaction(self, cursor)


def redact(conninfo):
    """``conninfo`` without its password (for messages and repr)."""
    parts = urllib.parse.urlsplit(conninfo)
    if parts.password is None:
        return conninfo
    netloc = parts.netloc.rpartition("@")
    user = parts.username or ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise LedgerError(
            "A PostgreSQL ledger needs psycopg 3, which is not installed: "
            "pip install 'sklearn-dpol[postgres]' (or 'psycopg[binary]')."
        ) from None
    return psycopg
