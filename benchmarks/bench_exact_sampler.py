"""Nanoseconds per exact variate and per released coordinate, against numpy's floats.

CPU time (``time.process_time``), best of ``--rounds``, so that a loaded machine
inflates the numbers less than wall time would. Rows:

- ``exact normal / laplace``: the table-driven sampler alone (``sample_parts``);
- ``reference normal / laplace``: Karney's algorithm N and the exponential by
  von Neumann runs, the previous sampler (same compilation);
- ``release normal / laplace``: ``gaussian_release`` / ``laplace_release`` of
  ``--size`` values per call, everything included (the exact floor, the
  generator's seeding, the Python call);
- ``numpy float``: ``values + sigma * rng.standard_normal(size)`` (the baseline
  of the ratio column), and ``rng.laplace``.

    python benchmarks/bench_exact_sampler.py [--n 1000000] [--size 4277] [--rounds 3]
"""

import argparse
import time

import numpy as np

from sklearn_dpol._core import _exact_kernels as kernels
from sklearn_dpol._core.noise import gaussian_release, laplace_release


def best_time(fn, rounds):
    fn()
    best = np.inf
    for _ in range(rounds):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=4277)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n, size = args.n, args.size
    calls = max(1, n // size)
    state = kernels.generator_state(np.random.default_rng(0))
    signs, ks = np.empty(n, np.int64), np.empty(n, np.int64)
    digits = np.empty((n, 2), np.int64)
    values = np.random.default_rng(1).normal(size=size)
    rng = np.random.default_rng(2)

    def sampler(hook, gaussian):
        return lambda: hook(n, gaussian, state, signs, ks, digits)

    def release(fn):
        def run():
            for _ in range(calls):
                fn(values, 0.7, rng)
        return run

    def numpy_floats(gaussian):
        def run():
            for _ in range(calls):
                values + 0.7 * (rng.standard_normal(size) if gaussian else rng.laplace(size=size))
        return run

    rows = [
        ("exact normal", best_time(sampler(kernels.sample_parts, True), args.rounds) / n),
        ("exact laplace", best_time(sampler(kernels.sample_parts, False), args.rounds) / n),
        ("reference normal (Karney N)",
         best_time(sampler(kernels.reference_parts, True), args.rounds) / n),
        ("reference laplace", best_time(sampler(kernels.reference_parts, False), args.rounds) / n),
        ("release normal", best_time(release(gaussian_release), args.rounds) / (calls * size)),
        ("release laplace", best_time(release(laplace_release), args.rounds) / (calls * size)),
        ("numpy float normal", best_time(numpy_floats(True), args.rounds) / (calls * size)),
        ("numpy float laplace", best_time(numpy_floats(False), args.rounds) / (calls * size)),
    ]
    baseline = dict(rows)["numpy float normal"]
    print(f"n = {n:,} variates, releases of {size:,} values, CPU time, best of {args.rounds}")
    print(f"{'':30s} {'ns/value':>9s} {'x numpy normal':>15s}")
    for name, seconds in rows:
        print(f"{name:30s} {seconds * 1e9:9.1f} {seconds / baseline:15.2f}")


if __name__ == "__main__":
    main()
