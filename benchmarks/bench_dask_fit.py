"""``PrivateQFTLRegressor.fit`` on a lazily generated dask array on a LocalCluster.

The array (default 3e7 x 40 float64, 9.6 GB) is generated block by block on the
workers (2 worker processes, 1 thread each, memory_limit 3 GB); each block is
clipped and summed there, and the driver receives one packed vector. Reports
rows/s against the in-memory ``fit`` of a smaller array measured in the same
run (an in-memory 3e7 x 40 array does not fit in such a driver), and the
driver's peak memory (``tracemalloc`` for the Python heap, numpy arrays
included, and ``ru_maxrss`` for the whole process).

    python benchmarks/bench_dask_fit.py [--rows 3e7] [--features 40] [--chunk 500000]
"""

import argparse
import math
import resource
import time
import tracemalloc

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=3e7)
    parser.add_argument("--features", type=int, default=40)
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--memory-rows", type=float, default=1e6,
                        help="rows of the in-memory baseline")
    args = parser.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    from sklearn_dpol import PrivateQFTLRegressor

    n, d = int(args.rows), args.features

    def estimator():
        return PrivateQFTLRegressor(epsilon=1.0, data_norm=math.sqrt(d), y_bound=1.0,
                                    alpha=1e-3, random_state=0)

    # In-memory baseline (after a warm-up that compiles the clipping kernel).
    rng = np.random.default_rng(0)
    m = int(args.memory_rows)
    X = rng.uniform(-1.0, 1.0, size=(m, d))
    y = X[:, :4].sum(axis=1) / 4.0
    estimator().fit(X[:1000], y[:1000])
    start = time.perf_counter()
    estimator().fit(X, y)
    memory_rate = m / (time.perf_counter() - start)
    del X, y

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="3GB",
                      dashboard_address=None) as cluster, Client(cluster):
        def lazy(rows):
            X_lazy = da.random.RandomState(0).uniform(-1.0, 1.0, size=(rows, d),
                                                      chunks=(args.chunk, d))
            return X_lazy, X_lazy[:, :4].sum(axis=1) / 4.0

        estimator().fit(*lazy(args.chunk))   # warm-up: workers compile the kernel
        X_lazy, y_lazy = lazy(n)
        tracemalloc.start()
        start = time.perf_counter()
        fitted = estimator().fit(X_lazy, y_lazy)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    dask_rate = n / seconds
    maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    error = np.max(np.abs(fitted.coef_ - np.r_[[0.25] * 4, [0.0] * (d - 4)]))
    print(f"| rows x features | chunk | dask fit (s) | dask rows/s | in-memory rows/s "
          f"({m:.0e} rows) | ratio | driver peak heap (MB) | driver max RSS (MB) | "
          "max |coef - true| |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {n:.0e} x {d} | {args.chunk} | {seconds:.1f} | {dask_rate:,.0f} | "
          f"{memory_rate:,.0f} | {dask_rate / memory_rate:.2f} | {peak / 1e6:.1f} | "
          f"{maxrss_mb:.0f} | {error:.2g} |")


if __name__ == "__main__":
    main()
