"""Defaults against each estimator's best over its main knob (issue 17, public tuning rules).

For every data set and epsilon in {0.5, 1, 2} (delta = 1e-6), the estimator is
fitted with only the budget and the public bounds passed (``alpha`` left at its
default ``"auto"``) and with each value of a small grid of fixed ``alpha``; the
table prints the test score at defaults, the best grid score (the grid point
picked on the test score: an oracle, optimistic for the grid) and the gap.
Scikit-learn's non-private baseline (``Ridge`` / ``LogisticRegression``) is
measured in the same run, and each score is also given as a ratio to it.

Targets: regressors within 0.03 R^2 of their best on cal_housing and protein;
the classifier within 0.02 accuracy on covertype (class 2 vs rest).

Data: ``../shared/data`` (see its README), scaled with public ranges only, by
the loaders of ``bench_qftl.py`` and ``bench_igd_covertype.py``.

Run from anywhere::

    python benchmarks/bench_defaults.py                   # QFTL and IGD, 10 seeds
    python benchmarks/bench_defaults.py --parts qftl --seeds 0
"""

import argparse
import gzip
import shlex
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor

DELTA = 1e-6
EPSILONS = (0.5, 1.0, 2.0)
QFTL_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
IGD_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def compare(name, target, baseline, score_of, grid, seeds, extra=None):
    """One row per epsilon: default score, best grid score (alpha), gap, ratios.

    ``extra``: another named rule (``alpha=extra``), reported in a last column.
    """
    rows, misses = [], 0
    for eps in EPSILONS:
        default = statistics.mean(score_of(eps, "auto", s)[0] for s in seeds)
        resolved = statistics.mean(score_of(eps, "auto", s)[1] for s in seeds)
        best_alpha, best = None, -np.inf
        for alpha in grid:
            value = statistics.mean(score_of(eps, alpha, s)[0] for s in seeds)
            if value > best:
                best_alpha, best = alpha, value
        gap = best - default
        ok = gap <= target
        misses += not ok
        rows.append([name, f"{eps:g}", f"{default:.4f}", f"{resolved:.3g}", f"{best:.4f}",
                     f"{best_alpha:g}", f"{gap:+.4f}", "yes" if ok else "**MISS**",
                     f"{default / baseline:.3f}", f"{best / baseline:.3f}"])
        if extra is not None:
            value = statistics.mean(score_of(eps, extra, s)[0] for s in seeds)
            rows[-1].append(f"{value:.4f}")
    return rows, misses


def run_qftl(args):
    from bench_qftl import load_cal_housing, load_protein

    data_dir = Path(args.data_dir)
    sets = {"cal_housing": (data_dir / "cal_housing.data.gz", load_cal_housing),
            "protein": (data_dir / "trefor_protein.csv.gz", load_protein)}
    rows, misses = [], 0
    for name, (path, loader) in sets.items():
        X, y, bounds, _ = loader(path)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)
        baseline = r2_score(y_te, Ridge(alpha=1.0).fit(X_tr, y_tr).predict(X_te))
        cache = {}

        def score_of(eps, alpha, seed):
            key = (eps, alpha, seed)
            if key not in cache:
                reg = PrivateQFTLRegressor(epsilon=eps, delta=DELTA, alpha=alpha,
                                           random_state=seed, **bounds).fit(X_tr, y_tr)
                cache[key] = (r2_score(y_te, reg.predict(X_te)), reg.alpha_)
            return cache[key]

        print(f"{name}: {len(y_tr):,} train / {len(y_te):,} test, bounds {bounds}; "
              f"sklearn Ridge(alpha=1) test R^2 = {baseline:.4f}")
        part, miss = compare(name, 0.03, baseline, score_of, QFTL_GRID, args.seeds)
        rows += part
        misses += miss
    print("\nPrivateQFTLRegressor.fit, test R^2 (mean over seeds "
          f"{args.seeds}), delta={DELTA:g}; target: gap <= 0.03\n")
    table(["data", "eps", "R^2 default", "alpha_ (mean)", "best R^2", "best alpha", "gap",
           "within", "default / Ridge", "best / Ridge"], rows)
    return misses


def run_igd(args):
    import bench_igd_covertype as cov

    X_raw, y = cov.load_covertype(Path(args.data_dir) / "covtype_ramp_test_rawunits.data.gz")
    X, _ = cov.public_scale(X_raw)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    baseline = LogisticRegression(max_iter=1000).fit(X_tr, y_tr).score(X_te, y_te)
    cache = {}

    def score_of(eps, alpha, seed):
        key = (eps, alpha, seed)
        if key not in cache:
            clf = PrivateIGDClassifier(epsilon=eps, delta=DELTA, alpha=alpha, data_norm=1.0,
                                       classes=[0, 1], random_state=seed).fit(X_tr, y_tr)
            cache[key] = (clf.score(X_te, y_te), clf.alpha_)
        return cache[key]

    print(f"covertype (class 2 vs rest): {len(y_tr):,} train / {len(y_te):,} test, "
          f"majority {max(y_te.mean(), 1 - y_te.mean()):.4f}; "
          f"sklearn LogisticRegression test accuracy = {baseline:.4f}")
    rows, misses = compare("covertype", 0.02, baseline, score_of, IGD_GRID, args.seeds,
                           extra="seed")
    print(f"\nPrivateIGDClassifier.fit, test accuracy (mean over seeds {args.seeds}), "
          f"delta={DELTA:g}; target: gap <= 0.02\n")
    table(["data", "eps", "acc default", "alpha_ (mean)", "best acc", "best alpha", "gap",
           "within", "default / LogReg", "best / LogReg", "acc alpha='seed'"], rows)
    return misses


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["qftl", "igd"], choices=["qftl", "igd"])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args(argv)
    print("command: python " + " ".join(shlex.quote(a) for a in sys.argv) + "\n")
    misses = 0
    if "qftl" in args.parts:
        misses += run_qftl(args)
    if "igd" in args.parts:
        misses += run_igd(args)
    print(f"targets missed: {misses}")


if __name__ == "__main__":
    main()
