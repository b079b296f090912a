"""What a PrivacyAccountant costs per fit, on each ledger backend.

Two measurements, best of ``--repeat`` runs each:

* one charge as a fit makes it (``reserve`` then ``settle``: two ledger
  transactions), timed over ``--charges`` charges;
* a ``GridSearchCV`` of 51 ``PrivateQFTLRegressor`` fits on 2,000 rows (5
  epsilons x 2 alphas x 5 folds + refit), without an accountant and with
  one (opened before the timing, and kept over the repetitions): the ratio
  and the overhead per fit; and the time to create and close a new ledger.

Backends: a temporary SQLite ledger (no fsync: nothing reads it after a
crash), an SQLite ledger at a path (``synchronous=FULL``: one fsync per
transaction), and PostgreSQL (``--postgres URL``, or ``--postgres auto`` to
start a private server as the tests do). The same script runs against an
older checkout (``PYTHONPATH=old``) for a before/after comparison; backends
that checkout lacks are skipped.

    python benchmarks/bench_accountant.py --postgres auto
"""

import argparse
import os
import sys
import tempfile
import time
import uuid

import numpy as np
from sklearn.model_selection import GridSearchCV

from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol.privacy import PrivacyAccountant


def best(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=None,
                        help="a PostgreSQL URL, or 'auto' to start a private server")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--charges", type=int, default=100)
    args = parser.parse_args()

    directory = tempfile.mkdtemp()
    backends = {"sqlite-temporary": lambda: None,
                "sqlite-path": lambda: os.path.join(directory, uuid.uuid4().hex + ".ledger")}
    if args.postgres:
        url = args.postgres
        if url == "auto":
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
            from _ledger_postgres import postgres_url

            url = postgres_url()
        backends["postgres"] = lambda: f"{url}#bench-{uuid.uuid4().hex}"

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 4)) / 2
    y = np.clip(X @ [0.5, -0.3, 0.2, 0.1], -1, 1)
    grid = {"epsilon": [0.25, 0.5, 1.0, 2.0, 4.0], "alpha": [1e-3, 1e-2]}

    def search(accountant):
        GridSearchCV(PrivateQFTLRegressor(accountant=accountant), grid, cv=5).fit(X, y)

    search(None)  # compile the kernels
    baseline = best(lambda: search(None), args.repeat)
    print(f"GridSearchCV, 51 fits, no accountant: {baseline:.3f} s (best of {args.repeat})")
    for name, make_path in backends.items():
        try:
            probe = PrivacyAccountant(np.inf, 1e-3, path=make_path())
        except Exception as error:  # noqa: BLE001 - an older checkout without the backend
            print(f"{name}: not available here ({type(error).__name__}: {error})"[:160])
            continue
        probe.close()

        def charges():
            acc = PrivacyAccountant(np.inf, 1e-3, path=make_path())
            start = time.perf_counter()
            for _ in range(args.charges):
                acc.reserve((0.001, 0.0), "bench").settle((0.001, 0.0))
            elapsed = time.perf_counter() - start
            acc.close()
            return elapsed

        per_charge = min(charges() for _ in range(args.repeat)) / args.charges
        accountant = PrivacyAccountant(np.inf, 1e-3, path=make_path())
        with_acc = best(lambda: search(accountant), args.repeat)
        accountant.close()
        start = time.perf_counter()
        PrivacyAccountant(np.inf, 1e-3, path=make_path()).close()
        opening = time.perf_counter() - start
        print(f"{name}: one charge (reserve + settle) {1e3 * per_charge:.2f} ms; "
              f"search {with_acc:.3f} s, ratio {with_acc / baseline:.3f}, "
              f"overhead {1e3 * (with_acc - baseline) / 51:.2f} ms per fit; creating "
              f"and closing a ledger {1e3 * opening:.1f} ms")


if __name__ == "__main__":
    main()
