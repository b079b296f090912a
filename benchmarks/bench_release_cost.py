"""What the floating-point-safe release costs: each estimator with the grid release
against the same code with the old float release (values + sigma * N), in one run.

Ratios are time(grid) / time(float), median of interleaved rounds. Issue 15's budget:
every fit at most 1.3x, and QFTL streams at least 200,000 rows/s at d = 90 in batches
of 1,000.

    python benchmarks/bench_release_cost.py [--rounds 5] [--n 100000]
"""

import argparse
import time
import warnings

import numpy as np

from sklearn_dpol._core import noise
from sklearn_dpol.exceptions import DefaultBoundWarning
from sklearn_dpol.linear_model import (
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)


def naive_release(values, scale, rng, gaussian):
    draw = rng.standard_normal(np.shape(values)) if gaussian else rng.laplace(size=np.shape(values))
    return values + scale * draw


def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    w = rng.normal(size=d) / np.sqrt(d)
    y_reg = np.clip(X @ w + 0.1 * rng.normal(size=n), -1, 1)
    return X, y_reg, (y_reg > 0).astype(int)


def cases(n):
    X54, y54, c54 = data(n, 54)
    X90, y90, _ = data(n, 90)

    def stream():
        est = PrivateQFTLRegressor(horizon=n, random_state=0)
        for start in range(0, n, 1000):
            est.partial_fit(X90[start:start + 1000], y90[start:start + 1000])

    return [
        ("IGD fit (d=54)", lambda: PrivateIGDClassifier(classes=[0, 1], solver="igd", random_state=0).fit(X54, c54), n),
        ("QFTL fit (d=90)", lambda: PrivateQFTLRegressor(random_state=0).fit(X90, y90), n),
        ("QFTL stream (d=90, batches 1000)", stream, n),
        ("Frank-Wolfe gaussian (d=54)",
         lambda: PrivateFrankWolfeLasso(selection="gaussian", radius=1.0, random_state=0).fit(X54, y54), n),
        ("mirror descent (d=54)",
         lambda: PrivateMirrorDescentRegressor(solver="mirror_descent",
                                               radius=1.0, random_state=0).fit(X54, y54), n),
    ]


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    # The estimators run with their default bounds on purpose (the cost of the
    # release is measured, not the fit's quality): one warning per fit would
    # flood the table.
    warnings.simplefilter("ignore", DefaultBoundWarning)
    exact = noise._exact_release
    print(f"n = {args.n}, median of {args.rounds} interleaved rounds")
    print(f"{'case':36s} {'float s':>9s} {'grid s':>9s} {'ratio':>7s} {'grid rows/s':>12s}")
    for name, fn, rows in cases(args.n):
        fn()                                   # compile
        float_times, grid_times = [], []
        for _ in range(args.rounds):
            noise._exact_release = naive_release
            try:
                float_times.append(timed(fn))
            finally:
                noise._exact_release = exact
            grid_times.append(timed(fn))
        f, g = np.median(float_times), np.median(grid_times)
        print(f"{name:36s} {f:9.3f} {g:9.3f} {g / f:7.2f} {rows / g:12,.0f}")


if __name__ == "__main__":
    main()
