"""Local-DP fits against one SGDRegressor pass, interleaved in one run (issue 19, item 5).

For each (n, d): ``ParameterFreeLocalDPRegressor`` and
``MutualInformationPrivateOGDRegressor`` (defaults, epsilon = 1) and
``SGDRegressor(max_iter=1, tol=None)`` fitted in interleaved rounds; medians of
CPU time (``time.process_time``: all three are single-threaded, and CPU time is
less inflated than wall time by the other sessions on a shared machine; pass
``--wall`` for wall time), ratios ours / SGD, and nanoseconds per coordinate of a row
(``n (d + 1)`` coordinates). The last lines time the exact sampler alone
(``release_values``: one exact normal / Laplace release per value, nothing
else; ``release_values_chunked``: the same bits with the variates drawn ahead in
chunks, as the protocol kernels do), the floor of any local randomiser that adds
exact noise per coordinate.

    python benchmarks/bench_local_dp_speed.py [--grid 10000x50,100000x50,10000x1000] [--rounds 5]
"""

import argparse
import sys
from pathlib import Path
import statistics
import time
import warnings

import numpy as np
from sklearn.linear_model import SGDRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scaling import data as _scaling_data  # noqa: E402

from sklearn_dpol.linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
)

warnings.filterwarnings("ignore")


def data(n, d, seed=0):
    """The rows and targets of ``bench_scaling.py`` (unit ball, targets in [-1, 1])."""
    return _scaling_data(n, d, seed)[:2]


MODELS = {
    "SGD(1 ep)": lambda: SGDRegressor(max_iter=1, tol=None, random_state=0),
    "ParameterFree": lambda: ParameterFreeLocalDPRegressor(random_state=0),
    "MI-OGD": lambda: MutualInformationPrivateOGDRegressor(random_state=0),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="10000x50,100000x50,10000x1000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    args = parser.parse_args()
    global _clock
    _clock = time.perf_counter if args.wall else time.process_time
    X0, y0 = data(2000, 5)
    for make in MODELS.values():          # compile / load the kernels
        make().fit(X0, y0)
    print(f"{'n':>9s} {'d':>5s} {'SGD ns/coord':>13s} {'PF x SGD':>9s} {'PF ns':>7s}"
          f" {'MI x SGD':>9s} {'MI ns':>7s}")
    for cell in args.grid.split(","):
        n, d = (int(v) for v in cell.split("x"))
        X, y = data(n, d)
        times = {name: [] for name in MODELS}
        for _ in range(args.rounds):
            for name, make in MODELS.items():
                start = _clock()
                make().fit(X, y)
                times[name].append(_clock() - start)
        med = {name: statistics.median(t) for name, t in times.items()}
        per = 1e9 / (n * (d + 1))
        sgd = med["SGD(1 ep)"]
        print(f"{n:9d} {d:5d} {sgd * per:13.1f} {med['ParameterFree'] / sgd:9.2f}"
              f" {med['ParameterFree'] * per:7.1f} {med['MI-OGD'] / sgd:9.2f}"
              f" {med['MI-OGD'] * per:7.1f}", flush=True)
    from sklearn_dpol._core import _exact_kernels as kernels

    m = 2_000_000
    values = np.random.default_rng(1).uniform(-1.0, 1.0, m)
    out = np.empty(m)
    state = kernels.generator_state(np.random.default_rng(0))
    gamma, multiplier = kernels.grid(0.7)
    for gaussian, name in ((True, "normal"), (False, "laplace")):
        for release, how in ((kernels.release_values, "one sample per value"),
                             (kernels.release_values_chunked, "variates drawn in chunks")):
            release(values[:10], gamma, multiplier, gaussian, state, out[:10])
            best = min(_timed(release, values, gamma, multiplier, gaussian, state, out)
                       for _ in range(args.rounds))
            print(f"exact {name} release alone ({how}): {best / m * 1e9:.1f} ns per value")


_clock = time.process_time


def _timed(fn, *a):
    start = _clock()
    fn(*a)
    return _clock() - start


if __name__ == "__main__":
    main()
