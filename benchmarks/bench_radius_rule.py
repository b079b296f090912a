"""The constant of ``radius="auto"`` chosen on synthetic data (issue 17: none tuned on real data).

``PrivateFrankWolfeLasso`` and ``PrivateMirrorDescentRegressor`` resolve
``radius="auto"`` by a public, scale-equivariant rule (``doc/privacy.md``,
"radius='auto' for Frank-Wolfe and mirror descent"): ``radius_ = c * y_bound /
B`` with ``B`` the row bound in the set's dual norm (``feature_bound`` for
Frank-Wolfe's L1 ball, ``data_norm`` for mirror descent). This script measures
the test R^2 at defaults (``max_iter=None``, only the budget and the public
bounds passed) for each ``c`` of a grid, on synthetic tasks that share nothing
with cal_housing and protein: ``d`` features from a latent-factor Gaussian
(correlation ``rho``), clipped at 2.5 or 5 standard deviations (a tight or a
loose public bound: the features fill their range or not) and scaled into
``[-1/sqrt(d), 1/sqrt(d)]`` (so rows have L2 norm <= 1 = ``data_norm``,
``feature_bound = 1/sqrt(d)``), ``y = offset + X beta + noise`` with a dense or
3-sparse ``beta``, a signal share of the variance 0.3 or 0.7, and ``y_bound``
2.5 times the population RMS of ``y`` (targets clipped to it). All bounds are
public properties of the generator, never read off the sample.

It prints, for every ``c``, the mean R^2 over tasks, seeds and epsilons
{0.5, 1, 2}, and the mean gap to the best ``c`` of each (task, epsilon) (an
oracle picked on the test score)::

    python benchmarks/bench_radius_rule.py [--seeds 0 1 2 3] [--parts fw md]

Two checks on the real sets (``../shared/data``, ``bench_defaults.py``'s loaders and
bounds; never used to choose ``c``)::

    python benchmarks/bench_radius_rule.py --parts grid --seeds $(seq 0 9)
    python benchmarks/bench_radius_rule.py --parts private --seeds $(seq 0 9)

``grid``: the test R^2 at defaults for fixed radii (an oracle's choice, for
reference). ``private``: option (b) of ``doc/privacy.md`` section 41, simulated
(the radius from the norm of QFTL's AdaSSP ridge at 10% of ``epsilon`` and
``delta``, times a factor, rounded up on ``2^(k/4)``; the estimator at the other
90%), against the rule at the full budget on the same draws.
"""

import argparse
import itertools
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor  # noqa: E402

DELTA = 1e-6
EPSILONS = (0.5, 1.0, 2.0)
N_TRAIN, N_TEST = 20_000, 5_000
FW_CS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
MD_CS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


def task(d, rho, sparse, signal_share, offset, rng, looseness=2.5):
    """One synthetic task: train and test sets and their public bounds."""
    n = N_TRAIN + N_TEST
    latent = rng.normal(size=(n, 1))
    Z = np.sqrt(rho) * latent + np.sqrt(1 - rho) * rng.normal(size=(n, d))
    b = 1.0 / np.sqrt(d)
    X = np.clip(Z, -looseness, looseness) / looseness * b
    beta = rng.normal(size=d)
    if sparse:
        beta[3:] = 0.0
    signal = X @ beta
    scale = signal.std()      # a property of the generator (n = 25,000 draws)
    signal = signal / scale * np.sqrt(signal_share)
    y = offset + signal + np.sqrt(1 - signal_share) * rng.normal(size=n)
    y_bound = 2.5 * np.sqrt(offset ** 2 + 1.0)   # 2.5 times the population RMS of y
    y = np.clip(y, -y_bound, y_bound)
    bounds = dict(feature_bound=b, data_norm=1.0, y_bound=y_bound)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:], bounds


def fit_score(part, c, eps, seed, data, radius=None, delta=DELTA):
    """Test R^2 at defaults with ``radius = c * y_bound / B`` (or ``radius`` when given)."""
    X_tr, y_tr, X_te, y_te, bounds = data
    if part == "fw":
        if radius is None:
            radius = c * bounds["y_bound"] / bounds["feature_bound"]
        reg = PrivateFrankWolfeLasso(epsilon=eps, delta=delta, radius=radius,
                                     feature_bound=bounds["feature_bound"],
                                     y_bound=bounds["y_bound"], random_state=seed)
    else:
        if radius is None:
            radius = c * bounds["y_bound"] / bounds["data_norm"]
        reg = PrivateMirrorDescentRegressor(epsilon=eps, delta=delta, radius=radius,
                                            data_norm=bounds["data_norm"],
                                            y_bound=bounds["y_bound"], random_state=seed)
    reg.fit(X_tr, y_tr)
    return r2_score(y_te, reg.predict(X_te))


def real_sets(data_dir):
    import argparse as _argparse

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_defaults

    return list(bench_defaults.real_regression_sets(_argparse.Namespace(data_dir=data_dir)))


def run_grid(args):
    """Default test R^2 at fixed radii on the real sets (a reference, not a choice)."""
    grids = {"fw": (1, 2, 3, 5, 8, 12, 20, 30), "md": (0.5, 1, 2, 3, 5, 8, 12, 20)}
    print("\n| data | estimator | radius | R^2 eps=0.5 | eps=1 | eps=2 |")
    print("|---|---|---|---|---|---|")
    for name, (X_tr, X_te, y_tr, y_te), bounds in real_sets(args.data_dir):
        data = (X_tr, y_tr, X_te, y_te, bounds)
        for part, grid in grids.items():
            for radius in grid:
                row = [statistics.mean(fit_score(part, None, eps, s, data, radius=radius)
                                       for s in args.seeds) for eps in EPSILONS]
                print(f"| {name} | {part} | {radius:g} | "
                      + " | ".join(f"{v:.4f}" for v in row) + " |", flush=True)


def run_private(args):
    """Option (b), simulated: a private ridge's norm sets the radius, against the rule."""
    import math

    from sklearn_dpol import PrivateQFTLRegressor

    factors = (1.0, 2.0, 4.0)
    print("\n| data | eps | FW rule | " + " | ".join(f"FW (b) x{f:g}" for f in factors)
          + " | MD rule | " + " | ".join(f"MD (b) x{f:g}" for f in factors) + " |")
    print("|---|---|" + "---|" * (2 + 2 * len(factors)))
    for name, (X_tr, X_te, y_tr, y_te), bounds in real_sets(args.data_dir):
        data = (X_tr, y_tr, X_te, y_te, bounds)
        fb, yb, R = bounds["feature_bound"], bounds["y_bound"], bounds["data_norm"]
        for eps in EPSILONS:
            fw_b = {f: [] for f in factors}
            md_b = {f: [] for f in factors}
            fw_a, md_a = [], []
            for s in args.seeds:
                ridge = PrivateQFTLRegressor(epsilon=0.1 * eps, delta=0.1 * DELTA, data_norm=R,
                                             y_bound=yb, random_state=1000 + s).fit(X_tr, y_tr)
                norm1 = np.abs(ridge.coef_).sum() + abs(ridge.intercept_) / fb
                norm2 = np.linalg.norm(ridge.coef_)
                for f in factors:
                    up = [2.0 ** (math.ceil(4 * math.log2(f * v)) / 4) for v in (norm1, norm2)]
                    fw_b[f].append(fit_score("fw", None, 0.9 * eps, s, data, radius=up[0],
                                             delta=0.9 * DELTA))
                    md_b[f].append(fit_score("md", None, 0.9 * eps, s, data, radius=up[1],
                                             delta=0.9 * DELTA))
                fw_a.append(fit_score("fw", None, eps, s, data, radius="auto"))
                md_a.append(fit_score("md", None, eps, s, data, radius="auto"))
            cells = ([statistics.mean(fw_a)] + [statistics.mean(fw_b[f]) for f in factors]
                     + [statistics.mean(md_a)] + [statistics.mean(md_b[f]) for f in factors])
            print(f"| {name} | {eps:g} | " + " | ".join(f"{v:.4f}" for v in cells) + " |",
                  flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--parts", nargs="+", default=["fw", "md"],
                        choices=["fw", "md", "grid", "private"])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if "grid" in args.parts:
        run_grid(args)
    if "private" in args.parts:
        run_private(args)
    args.parts = [part for part in args.parts if part in ("fw", "md")]
    if not args.parts:
        return
    specs = list(itertools.product((8, 30), (0.0, 0.6), (False, True), (0.3, 0.7), (2.5, 5.0)))
    tasks = []
    for k, (d, rho, sparse, share, loose) in enumerate(specs):
        offset = 0.5 if (k // 2) % 2 else 0.0     # half the tasks have an uncentred target
        tasks.append(((d, rho, sparse, share, offset, loose),
                      task(d, rho, sparse, share, offset, np.random.default_rng(1000 + k),
                           looseness=loose)))
    for part in args.parts:
        cs = FW_CS if part == "fw" else MD_CS
        start = time.time()
        # scores[c][(task, eps)] = mean over seeds
        scores = {c: {} for c in cs}
        for (ti, (spec, data)), eps in itertools.product(enumerate(tasks), EPSILONS):
            for c in cs:
                scores[c][(ti, eps)] = statistics.mean(
                    fit_score(part, c, eps, s, data) for s in args.seeds)
        name = "PrivateFrankWolfeLasso" if part == "fw" else "PrivateMirrorDescentRegressor"
        print(f"\n{name}, radius = c * y_bound / "
              f"{'feature_bound' if part == 'fw' else 'data_norm'}; {len(tasks)} tasks, "
              f"seeds {args.seeds}, eps {EPSILONS}, delta {DELTA:g} "
              f"({time.time() - start:.0f} s)\n")
        keys = list(scores[cs[0]])
        best = {key: max(scores[c][key] for c in cs) for key in keys}
        print("| c | mean R^2 | mean gap to best c | worst gap | "
              + " | ".join(f"gap eps={e:g}" for e in EPSILONS) + " |")
        print("|---|---|---|---|" + "---|" * len(EPSILONS))
        for c in cs:
            gaps = [best[key] - scores[c][key] for key in keys]
            by_eps = [statistics.mean(best[key] - scores[c][key] for key in keys if key[1] == e)
                      for e in EPSILONS]
            print(f"| {c:g} | {statistics.mean(scores[c].values()):.4f} | "
                  f"{statistics.mean(gaps):.4f} | {max(gaps):.4f} | "
                  + " | ".join(f"{g:.4f}" for g in by_eps) + " |")
        print("\nper task (eps=1): best c and its R^2")
        for ti, (spec, _) in enumerate(tasks):
            key = (ti, 1.0)
            c_best = max(cs, key=lambda c: scores[c][key])
            print(f"  d={spec[0]} rho={spec[1]} sparse={spec[2]} share={spec[3]} "
                  f"offset={spec[4]} bound={spec[5]:g} sd: best c {c_best:g} "
                  f"({scores[c_best][key]:.3f}); "
                  + ", ".join(f"{c:g}: {scores[c][key]:.3f}" for c in cs))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
