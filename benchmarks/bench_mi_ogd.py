"""Seed 003, Figure 3: regret of mutual-information-private OGD (Algorithm 1) and its
non-private version on a simple linear regression, d = L = B = sigma^2 = 1.

Each round one user holds ``(x_t, y_t)`` with ``x_t`` uniform on ``[-1, 1]`` and
``y_t = 0.5 x_t + 0.1 N(0, 1)`` clipped to ``[-1, 1]``; the loss is the squared
loss ``(w x_t - y_t)^2 / 2`` without intercept, whose gradient has norm at most
``(B + 1) = 2`` and is clipped to ``L = 1`` by the user. The learner plays
``w_t`` from the released model before the user's report (``average=False``,
one ``partial_fit`` call per user, so every played iterate is a release), and
the regret is ``sum_t l_t(w_t) - min_{|u| <= B} sum_t l_t(u)`` on the
(clipped-gradient) losses. The "non-private" run uses ``sigma = 1e-6`` (not smaller: the grid
release clamps |value| to about 2^33 sigma, doc/privacy.md section 14.2).

Also printed: the two guarantees of ``privacy_`` for ``sigma = 1`` (the seed's
mutual-information bound ``(1/2) ln 2`` nats, and the local ``(epsilon,
delta)``-DP of the same Gaussian report, ``mu = 2 L / sigma = 2``).

Run::

    python benchmarks/bench_mi_ogd.py            # T up to 10,000, 5 seeds, ~1 minute
    python benchmarks/bench_mi_ogd.py --quick
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sklearn_dpol import MutualInformationPrivateOGDRegressor  # noqa: E402

HORIZONS = (100, 1000, 10_000)
SLOPE, NOISE = 0.5, 0.1


def stream(T, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=T)
    y = np.clip(SLOPE * x + NOISE * rng.standard_normal(T), -1.0, 1.0)
    return x, y


def best_fixed_loss(x, y):
    """min over |u| <= 1 of sum (u x - y)^2 / 2: the clipped least-squares slope."""
    u = np.clip(np.dot(x, y) / np.dot(x, x), -1.0, 1.0)
    return 0.5 * np.sum((u * x - y) ** 2)


def played_losses(sigma, x, y, seed):
    model = MutualInformationPrivateOGDRegressor(
        epsilon=None, sigma=sigma, gradient_bound=1.0, radius=1.0, data_norm=1.0, y_bound=1.0,
        loss="squared", fit_intercept=False, average=False, random_state=seed,
    )
    total, w = 0.0, 0.0   # the learner's first iterate is the origin
    for t in range(len(x)):
        total += 0.5 * (w * x[t] - y[t]) ** 2
        model.partial_fit(x[t:t + 1, np.newaxis], y[t:t + 1])
        w = float(model.coef_[0])
    return total, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="T <= 1,000, 3 seeds")
    args = parser.parse_args(argv)
    horizons = HORIZONS[:2] if args.quick else HORIZONS
    seeds = range(3 if args.quick else args.seeds)
    print("| T | regret, Algorithm 1 (sigma^2 = 1) | regret, non-private | "
          "average regret (private) | time (s) |")
    print("|---|---|---|---|---|")
    last_model = None
    for T in horizons:
        start = time.perf_counter()
        private, public = [], []
        for seed in seeds:
            x, y = stream(T, seed)
            best = best_fixed_loss(x, y)
            loss, last_model = played_losses(1.0, x, y, seed)
            private.append(loss - best)
            public.append(played_losses(1e-6, x, y, seed)[0] - best)
        elapsed = time.perf_counter() - start
        print(f"| {T:,} | {statistics.mean(private):.2f} ± {statistics.pstdev(private):.2f} | "
              f"{statistics.mean(public):.2f} ± {statistics.pstdev(public):.2f} | "
              f"{statistics.mean(private) / T:.4f} | {elapsed:.1f} |", flush=True)
    print()
    print(f"privacy_ at sigma = 1: {last_model.privacy_}")
    print(f"mutual_information_bound_ = {last_model.mutual_information_bound_:.4f} nats "
          f"(the seed's (1/2) ln 2 = {0.5 * np.log(2):.4f})")


if __name__ == "__main__":
    main()
