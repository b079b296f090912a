"""A real PostgreSQL server for the ledger tests, started once per test session.

The server is Debian's ``postgresql`` package (any ``initdb``/``pg_ctl`` on the
PATH or under ``/usr/lib/postgresql/*/bin``), run in a fresh temporary data
directory that listens on a Unix socket in that directory only (no TCP port,
so parallel sessions never collide), with ``trust`` authentication, and
stopped and removed when the session ends. Run as root (as CI does), it runs
as the ``postgres`` user, since PostgreSQL refuses to run as root.

Where the server cannot be started (no PostgreSQL binaries, no psycopg), the
tests that need it are skipped with the reason, unless the environment sets
``SKLEARN_DPOL_REQUIRE_POSTGRES=1`` (``.ci/run`` does): then they fail.
"""

import atexit
import glob
import os
import shutil
import subprocess
import tempfile
import uuid

import pytest

REQUIRED = os.environ.get("SKLEARN_DPOL_REQUIRE_POSTGRES") == "1"
_STATE = {}


def _bindir():
    candidates = [shutil.which("pg_ctl")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                         key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit()
                         else 0, reverse=True)
    for pg_ctl in candidates:
        if pg_ctl and os.path.exists(os.path.join(os.path.dirname(pg_ctl), "initdb")):
            return os.path.dirname(os.path.realpath(pg_ctl))
    return None


def _as_server_user(command):
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def _start():
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "psycopg is not installed (pip install '.[test]' installs it)"
    bindir = _bindir()
    if bindir is None:
        return None, ("PostgreSQL's initdb and pg_ctl were not found; install the Debian "
                      "package postgresql (apt-get install postgresql)")
    if os.geteuid() == 0:
        try:
            import pwd
            server_user = pwd.getpwnam("postgres")
        except KeyError:
            return None, "running as root, and there is no postgres user to run the server"
    base = tempfile.mkdtemp(prefix="sklearn_dpol_pg_")
    if os.geteuid() == 0:
        os.chown(base, server_user.pw_uid, server_user.pw_gid)
    data = os.path.join(base, "data")
    log = os.path.join(base, "server.log")
    try:
        subprocess.run(_as_server_user([os.path.join(bindir, "initdb"), "-D", data, "-U",
                                        "postgres", "--auth=trust", "--no-sync", "-E",
                                        "UTF8"]),
                       check=True, capture_output=True, timeout=120)
        _pg_ctl(bindir, data, log, base, "start")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        output = getattr(error, "stderr", b"") or b""
        shutil.rmtree(base, ignore_errors=True)
        return None, f"the PostgreSQL server did not start: {error} {output.decode()[-500:]}"
    _STATE.update(bindir=bindir, data=data, log=log, base=base, pid=os.getpid())
    atexit.register(_stop)
    return f"postgresql://postgres@/postgres?host={base}&port=5432", None


def _pg_ctl(bindir, data, log, socket_dir, action):
    command = [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-t", "60"]
    if action == "start":
        command += ["-l", log, "-o", f"-c listen_addresses='' -k {socket_dir} -p 5432",
                    "start"]
    else:
        command += ["-m", "fast", "stop"]
    subprocess.run(_as_server_user(command), check=True, capture_output=True, timeout=90)


def stop_server():
    """Stop the session's server (a test of an unreachable ledger); see :func:`start_server`."""
    _pg_ctl(_STATE["bindir"], _STATE["data"], _STATE["log"], _STATE["base"], "stop")


def start_server():
    _pg_ctl(_STATE["bindir"], _STATE["data"], _STATE["log"], _STATE["base"], "start")


def _stop():
    if _STATE.get("pid") != os.getpid():  # a forked child leaves the server alone
        return
    try:
        _pg_ctl(_STATE["bindir"], _STATE["data"], _STATE["log"], _STATE["base"], "stop")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
        pass
    shutil.rmtree(_STATE["base"], ignore_errors=True)


def postgres_url():
    """The URL of the session's server: started on first use; skips (fails in CI) without one."""
    if "url" not in _STATE:
        _STATE["url"], _STATE["reason"] = _start()
    if _STATE["url"] is None:
        message = f"no PostgreSQL server for the ledger tests: {_STATE['reason']}"
        if REQUIRED:
            pytest.fail(message + " (SKLEARN_DPOL_REQUIRE_POSTGRES=1: required here)")
        pytest.skip(message)
    return _STATE["url"]


def new_ledger_url():
    """A URL naming a new, empty ledger on the session's server."""
    return f"{postgres_url()}#test-{uuid.uuid4().hex}"


def ledger_path(backend, tmp_path):
    """Where a new ledger of ``backend`` ("sqlite" or "postgres") lives."""
    if backend == "postgres":
        return new_ledger_url()
    return str(tmp_path / f"ledger-{uuid.uuid4().hex[:8]}.sqlite")
