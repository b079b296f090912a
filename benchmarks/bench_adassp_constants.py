"""AdaSSP's two constants checked on synthetic data (issue 17: no constant tuned on the benchmarks).

``PrivateQFTLRegressor.fit`` resolves ``alpha="auto"`` by AdaSSP with two
constants of the library, ``EIGENVALUE_SHARE`` (the share of ``mu*^2`` spent on
the smallest eigenvalue of ``X^T X``) and ``SPECTRAL_FRACTION`` (the fraction of
AdaSSP's spectral bound kept as the ridge's target), both first chosen on
cal_housing and protein. This script re-checks them on synthetic tasks that
share nothing with those data sets: rows in the unit ball with a spectrum that
is flat, decays polynomially or has a few strong directions, ``y = X beta +
noise`` clipped to ``[-1, 1]``, several ``n``, ``d`` and epsilons. For each pair
of constants it reports the mean gap to the best fixed ``alpha`` of a grid (an
oracle picked on the test score), over all tasks and seeds.

    python benchmarks/bench_adassp_constants.py [--seeds 0 1 2] [--quick]
"""

import argparse
import itertools
import warnings

import numpy as np
from sklearn.metrics import r2_score

import sklearn_dpol._core.qftl as qftl
from sklearn_dpol import PrivateQFTLRegressor

DELTA = 1e-6
GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
SHARES = (0.02, 0.05, 0.1, 0.2, 1 / 3)
FRACTIONS = (0.0, 0.01, 0.03, 0.1, 0.3, 1.0)


def task(n, d, spectrum, rng):
    """Rows in the unit ball with the given spectrum; targets in [-1, 1]."""
    if spectrum == "flat":
        scales = np.ones(d)
    elif spectrum == "decay":
        scales = 1.0 / np.sqrt(np.arange(1, d + 1))
    else:                                            # a few strong directions
        scales = np.where(np.arange(d) < 3, 1.0, 0.1)
    Z = rng.normal(size=(2 * n, d)) * scales
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    X = Z @ Q.T
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), np.quantile(
        np.linalg.norm(X, axis=1), 0.99))          # public scale: almost every row inside
    beta = rng.normal(size=d)
    signal = X @ beta
    y = np.clip(signal / (3 * signal.std()) + 0.1 * rng.normal(size=2 * n), -1, 1)
    return X[:n], y[:n], X[n:], y[n:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true", help="one n, one d")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    ns = (5_000,) if args.quick else (2_000, 20_000)
    ds = (10,) if args.quick else (8, 32)
    tasks = list(itertools.product(ns, ds, ("flat", "decay", "spiked"), (0.5, 1.0, 2.0)))
    gaps = {pair: [] for pair in itertools.product(SHARES, FRACTIONS)}
    saved = qftl.EIGENVALUE_SHARE, qftl.SPECTRAL_FRACTION
    try:
        for (n, d, spectrum, eps), seed in itertools.product(tasks, args.seeds):
            X, y, X_te, y_te = task(n, d, spectrum, np.random.default_rng(1000 + seed))
            common = dict(epsilon=eps, delta=DELTA, data_norm=1.0, y_bound=1.0, random_state=seed)
            oracle = max(r2_score(y_te, PrivateQFTLRegressor(alpha=a, **common).fit(X, y)
                                  .predict(X_te)) for a in GRID)
            for share, fraction in gaps:
                qftl.EIGENVALUE_SHARE, qftl.SPECTRAL_FRACTION = share, fraction
                score = r2_score(y_te, PrivateQFTLRegressor(**common).fit(X, y).predict(X_te))
                gaps[share, fraction].append(oracle - score)
    finally:
        qftl.EIGENVALUE_SHARE, qftl.SPECTRAL_FRACTION = saved
    print(f"{len(tasks)} tasks x {len(args.seeds)} seeds; mean (worst) gap to the best fixed "
          f"alpha of {GRID}, test R^2; the library's pair is ({saved[0]:g}, {saved[1]:g})\n")
    print("| EIGENVALUE_SHARE \\ SPECTRAL_FRACTION | " + " | ".join(f"{f:g}" for f in FRACTIONS)
          + " |")
    print("|---|" + "---|" * len(FRACTIONS))
    for share in SHARES:
        cells = [f"{np.mean(gaps[share, f]):.4f} ({np.max(gaps[share, f]):.3f})"
                 for f in FRACTIONS]
        print(f"| {share:.3g} | " + " | ".join(cells) + " |")
    best = min(gaps, key=lambda pair: np.mean(gaps[pair]))
    print(f"\nBest pair on these tasks: {best[0]:.3g}, {best[1]:g} (mean gap "
          f"{np.mean(gaps[best]):.4f}); the library's: {np.mean(gaps[saved]):.4f}.")


if __name__ == "__main__":
    main()
