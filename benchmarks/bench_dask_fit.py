"""``fit`` on a lazily generated dask array on a LocalCluster, against the in-memory ``fit``.

Two tables (``--only`` selects one):

* ``qftl``: ``PrivateQFTLRegressor`` (``--lazy qftl fw md`` adds Frank-Wolfe and
  mirror descent on their Gram statistics) on a lazily generated array (default 3e7 x
  40 float64, 9.6 GB), generated block by block on the workers (2 worker
  processes, 1 thread each, memory_limit 3 GB); each block is clipped and
  summed there, and the driver receives one packed vector. Reports rows/s
  against the in-memory ``fit`` of a smaller array measured in the same run
  (an in-memory 3e7 x 40 array does not fit in such a driver), and the
  driver's peak memory (``tracemalloc`` for the Python heap, numpy arrays
  included, and ``ru_maxrss`` for the whole process).
* ``gram``: ``PrivateFrankWolfeLasso`` and ``PrivateMirrorDescentRegressor``
  (squared loss) on a smaller array (default 1e6 x 20) generated on the
  workers and kept there (``persist``), whose Gram statistics are reduced on the
  same cluster; the in-memory ``fit`` runs on the same array computed into the
  driver, in the same run, with the same seed, in interleaved rounds (the
  fastest of each is kept), so the table also gives the largest difference
  between the two models.

    python benchmarks/bench_dask_fit.py [--only {all,qftl,gram}] [--rows 3e7] [--features 40]
        [--chunk 500000] [--lazy qftl fw md] [--gram-rows 1e6] [--gram-features 20] [--gram-chunk 125000]
"""

import argparse
import math
import resource
import time
import tracemalloc

import numpy as np


def _lazy_estimators(d):
    """The estimators of the lazy table: each reduces its statistics on the workers."""
    from sklearn_dpol import (PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor,
                              PrivateQFTLRegressor)

    return {
        "qftl": ("PrivateQFTLRegressor", lambda: PrivateQFTLRegressor(
            epsilon=1.0, data_norm=math.sqrt(d), y_bound=1.0, alpha=1e-3, random_state=0)),
        "fw": ("PrivateFrankWolfeLasso", lambda: PrivateFrankWolfeLasso(
            epsilon=1.0, radius=1.0, feature_bound=1.0, y_bound=1.0, random_state=0)),
        "md": ("PrivateMirrorDescentRegressor (squared, l1)", lambda: PrivateMirrorDescentRegressor(
            solver="mirror_descent",
            epsilon=1.0, radius=1.0, data_norm=math.sqrt(d), y_bound=1.0, constraint="l1",
            random_state=0)),
    }


def _qftl_table(args, da, client):
    """The lazy table: ``--lazy`` estimators on a lazily generated ``--rows`` array."""
    n, d = int(args.rows), args.features
    estimators = _lazy_estimators(d)
    print(f"| estimator | rows x features | chunk | dask fit (s) | dask rows/s | in-memory rows/s "
          f"({int(args.memory_rows):.0e} rows) | ratio | driver peak heap (MB) | "
          "driver max RSS (MB) | max |coef - true| |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    # Coefficients of the generated task; the L1-constrained fits (radius 1) reach them too.
    truth = np.r_[[0.25] * 4, [0.0] * (d - 4)]
    for key in args.lazy:
        name, estimator = estimators[key]
        # In-memory baseline (after a warm-up that compiles the kernels).
        rng = np.random.default_rng(0)
        m = int(args.memory_rows)
        X = rng.uniform(-1.0, 1.0, size=(m, d))
        y = X[:, :4].sum(axis=1) / 4.0
        estimator().fit(X[:1000], y[:1000])
        start = time.perf_counter()
        estimator().fit(X, y)
        memory_rate = m / (time.perf_counter() - start)
        del X, y

        def lazy(rows):
            X_lazy = da.random.RandomState(0).uniform(-1.0, 1.0, size=(rows, d),
                                                      chunks=(args.chunk, d))
            return X_lazy, X_lazy[:, :4].sum(axis=1) / 4.0

        estimator().fit(*lazy(args.chunk))   # warm-up: workers compile the kernels
        X_lazy, y_lazy = lazy(n)
        tracemalloc.start()
        start = time.perf_counter()
        fitted = estimator().fit(X_lazy, y_lazy)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        dask_rate = n / seconds
        maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        error = np.max(np.abs(fitted.coef_ - truth))
        print(f"| {name} | {n:.0e} x {d} | {args.chunk} | {seconds:.1f} | {dask_rate:,.0f} | "
              f"{memory_rate:,.0f} | {dask_rate / memory_rate:.2f} | {peak / 1e6:.1f} | "
              f"{maxrss_mb:.0f} | {error:.2g} |", flush=True)


def _gram_table(args, da, client):
    from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor

    n, d = int(args.gram_rows), args.gram_features
    estimators = {
        "PrivateFrankWolfeLasso": lambda: PrivateFrankWolfeLasso(
            epsilon=1.0, radius=1.0, feature_bound=1.0, y_bound=1.0, random_state=0),
        "PrivateMirrorDescentRegressor (squared, l1)": lambda: PrivateMirrorDescentRegressor(
            solver="mirror_descent",
            epsilon=1.0, radius=1.0, data_norm=math.sqrt(d), y_bound=1.0, constraint="l1",
            random_state=0),
    }
    X_lazy = da.random.RandomState(1).uniform(-1.0, 1.0, size=(n, d),
                                              chunks=(args.gram_chunk, d))
    y_lazy = X_lazy[:, :4].sum(axis=1) / 4.0
    # Generated once and kept on the workers, so the dask fit is timed on data that
    # is already there (as the in-memory fit is), not on generating it.
    X_lazy, y_lazy = client.persist([X_lazy, y_lazy])
    X, y = (np.asarray(a) for a in da.compute(X_lazy, y_lazy))
    small = slice(0, args.gram_chunk)
    print("| estimator | rows x features | chunk | max_iter_ | dask fit (s) | dask rows/s | "
          "in-memory fit (s) | in-memory rows/s | ratio | driver peak heap, dask (MB) | "
          "max |coef dask - coef in memory| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, make in estimators.items():
        make().fit(X[small], y[small])                     # warm-up: the driver's kernels
        make().fit(X_lazy[small], y_lazy[small])           # and the workers'
        seconds_dask, seconds_memory = [], []
        for _ in range(args.repeat):                       # interleaved rounds
            tracemalloc.start()
            start = time.perf_counter()
            lazy_fit = make().fit(X_lazy, y_lazy)
            seconds_dask.append(time.perf_counter() - start)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            start = time.perf_counter()
            memory_fit = make().fit(X, y)
            seconds_memory.append(time.perf_counter() - start)
        t_dask, t_memory = min(seconds_dask), min(seconds_memory)
        gap = max(np.max(np.abs(lazy_fit.coef_ - memory_fit.coef_)),
                  abs(lazy_fit.intercept_ - memory_fit.intercept_))
        assert lazy_fit.privacy_ == memory_fit.privacy_
        print(f"| {name} | {n:.0e} x {d} | {args.gram_chunk} | {lazy_fit.max_iter_} | "
              f"{t_dask:.2f} | {n / t_dask:,.0f} | {t_memory:.2f} | {n / t_memory:,.0f} | "
              f"{t_memory / t_dask:.2f} | {peak / 1e6:.1f} | {gap:.2g} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("all", "qftl", "gram"), default="all")
    parser.add_argument("--rows", type=float, default=3e7)
    parser.add_argument("--features", type=int, default=40)
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--memory-rows", type=float, default=1e6,
                        help="rows of the in-memory baseline of the lazy table")
    parser.add_argument("--lazy", nargs="+", choices=("qftl", "fw", "md"), default=["qftl"],
                        help="estimators of the lazy table (qftl: the 3e7 x 40 run of the README)")
    parser.add_argument("--gram-rows", type=float, default=1e6)
    parser.add_argument("--gram-features", type=int, default=20)
    parser.add_argument("--gram-chunk", type=int, default=125_000)
    parser.add_argument("--repeat", type=int, default=2,
                        help="interleaved rounds of the gram table (the fastest is kept)")
    args = parser.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="3GB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if args.only in ("all", "qftl"):
            _qftl_table(args, da, client)
        if args.only in ("all", "gram"):
            _gram_table(args, da, client)


if __name__ == "__main__":
    main()
