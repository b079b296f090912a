"""Private bounds and scaling on California housing (issue 17, item 2).

Part 1: the private quantile (exponential mechanism over the default public grid 0, +-2^(k/32),
with the scaler's public prior of 1 nat per octave toward the data,
k/32 in [-20, 20]) of each feature at q = 0.02 and 0.98, epsilon per quantile 0.1 and 1, against
the exact (non-private) ``np.quantile`` computed in the same run: median over seeds of the rank
error |F_n(released) - q| and of the ratio released / exact.

Part 2: R^2 on a held-out quarter of a Pipeline PrivateRangeScaler (epsilon 0.2) +
PrivateQFTLRegressor (epsilon 0.8, data_norm = sqrt(8) public after the scaler), total
epsilon 1, delta 1e-6; and QFTL with data_norm="auto" on the scaled features, against
scikit-learn's MinMaxScaler + Ridge (non-private) in the same run, and the defaults
(no scaler, data_norm=1) for contrast. The target is mapped by its public cap
(500,001) into [-1, 1].

Part 3 (``--igd``): ``PrivateIGDClassifier(data_norm="auto")`` on the covertype split (class 2
against the rest, the public UCI scaling of ``bench_igd_covertype.py``, then every row
multiplied by 20 so that the public bound is 20): test accuracy against the same estimator
with the public ``data_norm=20``, ``fit`` (IGD and objective perturbation) at eps 0.5, 1, 2 and
a DP-FTRL stream in batches of 1,000 at eps 1, 70,000 training rows, 3 seeds.

Part 4 (``--md``): ``PrivateMirrorDescentRegressor(data_norm="auto", y_bound="auto")`` on
cal_housing and protein with the public scaling of ``bench_mirror_descent.py``'s defaults table
(rows of L2 norm <= 1, targets in [-1, 1] and [-2, 2]), both solvers at their defaults
(radius 5), test R^2 on the same 80/20 split against the same estimator with the public bounds
(``data_norm=1``, ``y_bound`` = the public target bound) at eps 0.5, 1, 2 (delta 1e-6), mean
over 3 seeds, and scikit-learn's ``Ridge(alpha=1)`` measured in the same run.

Part 5 (``--fw``): ``PrivateFrankWolfeLasso(feature_bound="auto")`` on cal_housing and protein
with the public entrywise scaling of ``bench_mirror_descent.py``'s defaults table (entries in
[-1, 1] and [-1/3, 1/3], targets in [-1, 1] and [-2, 2]), then every entry multiplied by
``--scale`` (20) and the radius (5) divided by it, so that the problem is the same and the
correct public entry bound is 20 (cal_housing) and 20/3 (protein): test R^2 on the same 80/20
split of the public bound, of "auto" (``y_bound`` public), of both "auto", and of the default
``feature_bound=1`` (which clips the scaled rows), default step count, eps 0.5, 1, 2 (delta
1e-6), mean over ``--seeds-fw`` (5) seeds, and scikit-learn's ``Lasso(alpha=1e-4)`` in the same
run.

Usage: python benchmarks/bench_private_bounds.py [--data ../shared/data/cal_housing.data.gz]
       [--seeds 10] [--igd [--covertype ../shared/data/covtype_ramp_test_rawunits.data.gz]]
       [--md [--data-dir ../shared/data]] [--fw [--scale 20] [--seeds-fw 5]]
"""

import argparse
import math
import time
import warnings

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from sklearn_dpol import PrivateQFTLRegressor, PrivateRangeScaler
from sklearn_dpol.exceptions import DefaultBoundWarning
from sklearn_dpol.privacy._quantile import geometric_grid, private_quantile


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    names = open_names(path)
    return data[:, :-1], data[:, -1], names[:-1]


def open_names(path):
    import gzip

    with gzip.open(path, "rt") as f:
        return f.readline().strip().split(",")


def part_quantiles(X, names, seeds):
    grid = geometric_grid(-20, 20, per_octave=32)
    n = X.shape[0]
    print(f"Part 1: private quantiles, n = {n}, grid of {grid.size} public candidates, "
          f"median over {seeds} seeds (epsilon is per quantile)")
    print(f"{'feature':>18} {'q':>5} {'exact':>11} | {'eps':>4} {'released':>11} "
          f"{'ratio':>6} {'rank err':>8}")
    summary = {}
    for j, name in enumerate(names):
        column = np.sort(X[:, j])
        for q in (0.02, 0.98):
            exact = float(np.quantile(column, q))
            for eps in (0.1, 1.0):
                released = np.array([private_quantile(column, q, grid, eps, seed, slope=1 / 32)
                                     for seed in range(seeds)])
                ranks = np.searchsorted(column, released, side="right") / n
                rank_err = float(np.median(np.abs(ranks - q)))
                ratio = float(np.median(released / exact))
                summary.setdefault(eps, []).append(rank_err)
                print(f"{name:>18} {q:5.2f} {exact:11.4g} | {eps:4.1f} "
                      f"{np.median(released):11.4g} {ratio:6.3f} {rank_err:8.4f}")
    for eps, errs in summary.items():
        print(f"eps={eps}: median rank error over features and tails {np.median(errs):.4f}, "
              f"max {np.max(errs):.4f}")


def part_pipeline(X, y, seeds):
    y = 2.0 * y / 500_001.0 - 1.0  # public cap of the target
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    cut = 3 * X.shape[0] // 4
    tr, te = order[:cut], order[cut:]
    d = X.shape[1]
    start = time.perf_counter()
    base = make_pipeline(MinMaxScaler(), Ridge(alpha=1e-3)).fit(X[tr], y[tr]).score(X[te], y[te])
    print(f"\nPart 2: R^2 on the held-out quarter ({len(te)} rows), total epsilon 1, delta 1e-6, "
          f"mean over {seeds} seeds")
    print(f"scikit-learn MinMaxScaler + Ridge (not private): {base:.3f}")
    rows = {
        "PrivateRangeScaler(0.2) + QFTL(0.8, data_norm=sqrt(d))": lambda s: make_pipeline(
            PrivateRangeScaler(epsilon=0.2, random_state=s),
            PrivateQFTLRegressor(epsilon=0.8, data_norm=math.sqrt(d), y_bound=1.0,
                                 alpha=1e-3, random_state=10_000 + s)),
        "PrivateRangeScaler(0.2) + QFTL(0.8, data_norm='auto')": lambda s: make_pipeline(
            PrivateRangeScaler(epsilon=0.2, random_state=s),
            PrivateQFTLRegressor(epsilon=0.8, data_norm="auto", y_bound=1.0,
                                 alpha=1e-3, random_state=10_000 + s)),
        "QFTL defaults (no scaler, data_norm=1), epsilon 1": lambda s: PrivateQFTLRegressor(
            epsilon=1.0, y_bound=1.0, alpha=1e-3, random_state=s),
    }
    for label, make in rows.items():
        scores = []
        for s in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DefaultBoundWarning)
                scores.append(make(s).fit(X[tr], y[tr]).score(X[te], y[te]))
        mean = float(np.mean(scores))
        print(f"{label}: {mean:.3f} (ratio to sklearn {mean / base:.3f}; "
              f"min {min(scores):.3f})")
    print(f"({time.perf_counter() - start:.1f} s)")


def part_igd(path, seeds=3, scale=20.0, n_train=70_000):
    """IGD with data_norm="auto" against the public bound, on covertype scaled by ``scale``."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_igd_covertype import load_covertype, public_scale

    from sklearn_dpol import PrivateIGDClassifier

    start = time.perf_counter()
    X, y = load_covertype(path)
    X, _ = public_scale(X)
    order = np.random.default_rng(0).permutation(len(X))
    X, y = X[order] * scale, y[order]
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    print(f"\n## IGD data_norm='auto' on covertype (rows x {scale:g}: public bound {scale:g}; "
          f"98% quantile of the norms {np.quantile(np.linalg.norm(Xtr, axis=1), 0.98):.2f}), "
          f"{seeds} seeds, majority {max(yte.mean(), 1 - yte.mean()):.3f}")
    print("| call | eps | public bound: accuracy | 'auto': accuracy | 'auto': data_norm_ |")
    print("|---|---|---|---|---|")

    def run(make, stream):
        accs, bounds = [], []
        for seed in range(seeds):
            model = make(seed)
            if stream:
                for i in range(0, n_train, 1000):
                    model.partial_fit(Xtr[i:i + 1000], ytr[i:i + 1000])
            else:
                model.fit(Xtr, ytr)
            accs.append(model.score(Xte, yte))
            bounds.append(model.data_norm_)
        return np.mean(accs), bounds

    for label, eps, extra, stream in (
            *((f"fit ({solver})", eps, dict(solver=solver), False)
              for solver in ("igd", "objective_perturbation") for eps in (0.5, 1.0, 2.0)),
            ("DP-FTRL stream, batches of 1,000", 1.0, dict(horizon=n_train), True)):
        cells = []
        for data_norm in (scale, "auto"):
            cells.append(run(lambda seed: PrivateIGDClassifier(
                classes=[0, 1], data_norm=data_norm, epsilon=eps, solver="igd",
                random_state=seed, **extra),
                stream))
        print(f"| {label} | {eps:g} | {cells[0][0]:.3f} | {cells[1][0]:.3f} | "
              f"{', '.join(f'{b:.3g}' for b in cells[1][1])} |")
    print(f"({time.perf_counter() - start:.1f} s)")


def part_md(data_dir, seeds=3, epsilons=(0.5, 1.0, 2.0)):
    """Mirror descent with data_norm="auto" and y_bound="auto" against the public bounds."""
    import sys
    from pathlib import Path

    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_mirror_descent import DEFAULT_RADIUS, DELTA, defaults_datasets

    from sklearn_dpol import PrivateMirrorDescentRegressor

    start = time.perf_counter()
    print(f"\n## Mirror descent data_norm='auto', y_bound='auto' (test R^2, mean over {seeds} "
          f"seeds, delta {DELTA:g}, radius {DEFAULT_RADIUS:g})")
    print("| data | solver | eps | public bounds: R^2 | 'auto': R^2 | auto - public "
          "| 'auto' / Ridge | data_norm_ (mean) | y_bound_ (mean) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, X, _, y, bounds in defaults_datasets(Path(data_dir)):
        tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
        X_tr, X_te = np.ascontiguousarray(X[tr]), np.ascontiguousarray(X[te])
        y_tr, y_te = y[tr], y[te]
        ridge = r2_score(y_te, Ridge(alpha=1.0).fit(X_tr, y_tr).predict(X_te))
        public = dict(data_norm=1.0, y_bound=bounds["y_bound"])
        auto = dict(data_norm="auto", y_bound="auto")
        for solver in ("mirror_descent", "objective_perturbation"):
            for eps in epsilons:
                cells = []
                for params in (public, auto):
                    scores, norms, ys = [], [], []
                    for seed in range(seeds):
                        model = PrivateMirrorDescentRegressor(
                            epsilon=eps, delta=DELTA, radius=DEFAULT_RADIUS, solver=solver,
                            random_state=seed, **params)
                        with warnings.catch_warnings():   # data_norm=1 is the public bound
                            warnings.simplefilter("ignore", DefaultBoundWarning)
                            model.fit(X_tr, y_tr)
                        scores.append(r2_score(y_te, model.predict(X_te)))
                        norms.append(model.data_norm_)
                        ys.append(model.y_bound_)
                    cells.append((float(np.mean(scores)), float(np.mean(norms)),
                                  float(np.mean(ys))))
                (pub, _, _), (aut, norm, yb) = cells
                print(f"| {name} | {solver} | {eps:g} | {pub:.4f} | {aut:.4f} | "
                      f"{aut - pub:+.4f} | {aut / ridge:.3f} | {norm:.3g} | {yb:.3g} |")
        print(f"| {name} | sklearn Ridge(alpha=1), not private | | | {ridge:.4f} | | | "
              f"public: 1 | public: {bounds['y_bound']:g} |")
    print(f"({time.perf_counter() - start:.1f} s)")


def part_fw(data_dir, seeds=5, scale=20.0, epsilons=(0.5, 1.0, 2.0)):
    """Frank-Wolfe with feature_bound="auto" against the public bound and the default."""
    import sys
    from pathlib import Path

    from sklearn.linear_model import Lasso
    from sklearn.metrics import r2_score
    from sklearn.model_selection import train_test_split

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_mirror_descent import DEFAULT_RADIUS, DELTA, defaults_datasets

    from sklearn_dpol import PrivateFrankWolfeLasso

    start = time.perf_counter()
    radius = DEFAULT_RADIUS / scale
    print(f"\n## Frank-Wolfe feature_bound='auto' (entries x {scale:g}, radius "
          f"{DEFAULT_RADIUS:g}/{scale:g}; test R^2, mean over {seeds} seeds, delta {DELTA:g}, "
          "default step count)")
    print("| data | eps | public bound | 'auto' | auto - public | both 'auto' | default "
          "feature_bound=1 | 'auto' / Lasso | feature_bound_ (mean; public) | y_bound_ "
          "(both 'auto', mean; public) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, _, X, y, bounds in defaults_datasets(Path(data_dir)):
        tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
        X_tr, X_te = np.ascontiguousarray(X[tr]) * scale, np.ascontiguousarray(X[te]) * scale
        y_tr, y_te = y[tr], y[te]
        lasso = r2_score(y_te, Lasso(alpha=1e-4).fit(X_tr, y_tr).predict(X_te))
        public_b, y_b = scale * bounds["feature_bound"], bounds["y_bound"]
        configs = (dict(feature_bound=public_b, y_bound=y_b),
                   dict(feature_bound="auto", y_bound=y_b),
                   dict(feature_bound="auto", y_bound="auto"),
                   dict(feature_bound=1.0, y_bound=y_b))
        exact = float(np.quantile(np.max(np.abs(X_tr), axis=1), 0.98))
        for eps in epsilons:
            cells = []
            for params in configs:
                scores, fbs, ybs = [], [], []
                for seed in range(seeds):
                    model = PrivateFrankWolfeLasso(epsilon=eps, delta=DELTA, radius=radius,
                                                   random_state=seed, **params)
                    with warnings.catch_warnings():   # feature_bound=1: the default row
                        warnings.simplefilter("ignore", DefaultBoundWarning)
                        model.fit(X_tr, y_tr)
                    scores.append(r2_score(y_te, model.predict(X_te)))
                    fbs.append(model.feature_bound_)
                    ybs.append(model.y_bound_)
                cells.append((float(np.mean(scores)), float(np.mean(fbs)), float(np.mean(ybs))))
            (pub, _, _), (aut, fb, _), (both, _, yb), (default, _, _) = cells
            print(f"| {name} | {eps:g} | {pub:.4f} | {aut:.4f} | {aut - pub:+.4f} | "
                  f"{both:.4f} | {default:.4f} | {aut / lasso:.3f} | {fb:.3g} ({public_b:.3g}) "
                  f"| {yb:.3g} ({y_b:g}) |")
        print(f"| {name} | Lasso(alpha=1e-4), not private | | {lasso:.4f} | | | | | exact 98% "
              f"quantile of the L-inf norms {exact:.3g} | |")
    print(f"({time.perf_counter() - start:.1f} s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data/cal_housing.data.gz")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--igd", action="store_true",
                        help="only part 3: IGD data_norm='auto' on covertype")
    parser.add_argument("--covertype",
                        default="../shared/data/covtype_ramp_test_rawunits.data.gz")
    parser.add_argument("--md", action="store_true",
                        help="only part 4: mirror descent data_norm/y_bound='auto'")
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--fw", action="store_true",
                        help="only part 5: Frank-Wolfe feature_bound='auto'")
    parser.add_argument("--scale", type=float, default=20.0)
    parser.add_argument("--seeds-fw", type=int, default=5)
    args = parser.parse_args()
    if args.fw:
        part_fw(args.data_dir, seeds=args.seeds_fw, scale=args.scale)
        return
    if args.md:
        part_md(args.data_dir)
        return
    if args.igd:
        part_igd(args.covertype)
        return
    X, y, names = load(args.data)
    part_quantiles(X, names, args.seeds)
    part_pipeline(X, y, args.seeds)


if __name__ == "__main__":
    main()
