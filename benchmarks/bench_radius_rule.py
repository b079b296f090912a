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

The rule that tracks the noise (``doc/privacy.md``, "radius='auto' that tracks the
noise"): the same 32 tasks at ``n`` in {2e3, 5e3, 2e4, 1e5} and epsilon in {0.5, 1, 2,
4}, ``c`` on a grid ``2^(k/4)`` in [0.5, 16]; it prints the best constant of each
(n, epsilon) cell, fits ``c = c_ref (nu / nu_ref)^-gamma`` (``nu = sqrt(d) / (n mu)``,
with and without ``sqrt(d)``) by the mean gap, and compares the classes' rule with the
old constants; ``check-*`` fits ``radius="auto"`` for real on the saved tasks::

    python benchmarks/bench_radius_rule.py --parts sweep-fw sweep-md --seeds 0 1 2 3 --save /tmp/sweep
    python benchmarks/bench_radius_rule.py --parts sweep-fw sweep-md --load /tmp/sweep
    python benchmarks/bench_radius_rule.py --parts check-fw check-md --load /tmp/sweep

Mirror descent's dual-norm bound on the L1, group-L1 and simplex sets (``doc/privacy.md``,
"radius='auto' on the L1 and group-L1 balls"): ``B = data_norm k^-a`` for ``a`` in {0, 1/4,
1/2, 3/4}, ``k = d`` or the number of groups, on synthetic tasks with rows spread or
concentrated (``dual_task``), per loss::

    python benchmarks/bench_radius_rule.py --parts dual-md --seeds 0 1
    python benchmarks/bench_radius_rule.py --parts dual-md --seeds 0 1 --dual-loss huber

Two checks on the real sets (``../shared/data``, ``bench_defaults.py``'s loaders and
bounds; never used to choose ``c``)::

    python benchmarks/bench_radius_rule.py --parts grid --seeds $(seq 0 9)
    python benchmarks/bench_radius_rule.py --parts private --seeds $(seq 0 9)

``grid``: the test R^2 at defaults for fixed radii (an oracle's choice, for
reference), then ``radius="auto"`` on the same draws and its gap to the best radius. ``private``: option (b) of ``doc/privacy.md`` section 41, simulated
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


def task(d, rho, sparse, signal_share, offset, rng, looseness=2.5, n_train=None):
    """One synthetic task: train and test sets and their public bounds."""
    n_train = N_TRAIN if n_train is None else n_train
    n = n_train + N_TEST
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
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], bounds


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
        reg = PrivateMirrorDescentRegressor(solver="mirror_descent",
                                            epsilon=eps, delta=delta, radius=radius,
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
    gaps = []
    for name, (X_tr, X_te, y_tr, y_te), bounds in real_sets(args.data_dir):
        data = (X_tr, y_tr, X_te, y_te, bounds)
        for part, grid in grids.items():
            rows = []
            for radius in grid:
                row = [statistics.mean(fit_score(part, None, eps, s, data, radius=radius)
                                       for s in args.seeds) for eps in EPSILONS]
                rows.append(row)
                print(f"| {name} | {part} | {radius:g} | "
                      + " | ".join(f"{v:.4f}" for v in row) + " |", flush=True)
            # The default (radius="auto", the rule in use) on the same draws.
            auto = [statistics.mean(fit_score(part, None, eps, s, data, radius="auto")
                                    for s in args.seeds) for eps in EPSILONS]
            radii = [_fitted_radius(part, eps, data) for eps in EPSILONS]
            print(f"| {name} | {part} | 'auto' (radius_ " + " / ".join(f"{r:.3g}" for r in radii)
                  + ") | " + " | ".join(f"{v:.4f}" for v in auto) + " |", flush=True)
            best = [max(col) for col in zip(*rows)]
            gaps.append((name, part, [b - a for b, a in zip(best, auto)]))
    print("\n| data | estimator | gap of 'auto' to the best radius: eps=0.5 | eps=1 | eps=2 |")
    print("|---|---|---|---|---|")
    for name, part, gap in gaps:
        print(f"| {name} | {part} | " + " | ".join(f"{g:+.4f}" for g in gap) + " |")


def _fitted_radius(part, eps, data):
    """``radius_`` of the default at ``eps`` on ``data`` (one step: the rule reads no values)."""
    X_tr, y_tr, _, _, bounds = data
    if part == "fw":
        reg = PrivateFrankWolfeLasso(epsilon=eps, delta=DELTA, max_iter=1,
                                     feature_bound=bounds["feature_bound"],
                                     y_bound=bounds["y_bound"], random_state=0)
    else:
        reg = PrivateMirrorDescentRegressor(solver="mirror_descent",
                                            epsilon=eps, delta=DELTA, max_iter=1,
                                            data_norm=bounds["data_norm"],
                                            y_bound=bounds["y_bound"], random_state=0)
    return reg.fit(X_tr, y_tr).radius_


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


# -- the n axis: how the best c moves with the noise (the rule of radius="auto") -------------
SWEEP_NS = (2_000, 5_000, 20_000, 100_000)
SWEEP_EPSILONS = (0.5, 1.0, 2.0, 4.0)
SWEEP_CS = tuple(2.0 ** (k / 4) for k in range(-4, 17))      # 0.5 .. 16, 4 per octave
SWEEP_GAMMAS = tuple(sorted({k / 40 for k in range(0, 25)} | {1 / 3}))   # 0 .. 0.6 and 1/3


def synthetic_specs():
    """The 32 synthetic task specs: (d, rho, sparse, share, offset, looseness)."""
    specs = []
    for k, (d, rho, sparse, share, loose) in enumerate(
            itertools.product((8, 30), (0.0, 0.6), (False, True), (0.3, 0.7), (2.5, 5.0))):
        offset = 0.5 if (k // 2) % 2 else 0.0     # half the tasks have an uncentred target
        specs.append((d, rho, sparse, share, offset, loose))
    return specs


def _interp_gap(curve, best, c):
    """The gap to ``best`` at ``c``, interpolating ``curve`` (scores on SWEEP_CS) in log2 c."""
    x = np.log2(SWEEP_CS)
    return best - np.interp(np.log2(c), x, curve)


def _rule_c(kind, c_ref, gamma, n, d, eps, c_lo, c_hi):
    from sklearn_dpol._auto_bounds import noise_ratio

    if kind == "log d":   # Frank-Wolfe's selection term, ln(2 d)
        ratio = (noise_ratio(n, d, eps, DELTA, "log")
                 / noise_ratio(REF_N, REF_D, REF_EPS, DELTA, "log"))
        return float(np.clip(c_ref * ratio ** -gamma, c_lo, c_hi))
    ratio = noise_ratio(n, d, eps, DELTA) / noise_ratio(REF_N, REF_D, REF_EPS, DELTA)
    if kind != "d":   # the same without d
        ratio *= np.sqrt(REF_D / d)
    return float(np.clip(c_ref * ratio ** -gamma, c_lo, c_hi))


REF_N, REF_D, REF_EPS = 20_000, 10, 1.0


def run_sweep(part, args):
    """Test R^2 at defaults over the grid of c, for n x epsilon x 32 tasks (synthetic only)."""
    import json

    specs = synthetic_specs()
    start = time.time()
    table = {}   # (ti, n, eps) -> list of mean R^2 over SWEEP_CS
    for n in SWEEP_NS:
        for ti, spec in enumerate(specs):
            d, rho, sparse, share, offset, loose = spec
            data = task(d, rho, sparse, share, offset, np.random.default_rng(1000 + ti),
                        looseness=loose, n_train=n)
            for eps in SWEEP_EPSILONS:
                table[(ti, n, eps)] = [statistics.mean(fit_score(part, c, eps, s, data)
                                                       for s in args.seeds) for c in SWEEP_CS]
        print(f"  {part}: n = {n} done ({time.time() - start:.0f} s)", flush=True)
    if args.save:
        with open(f"{args.save}.{part}.json", "w") as fh:
            json.dump({"seeds": args.seeds, "rows": [[*key, row] for key, row in table.items()]},
                      fh)
    analyse_sweep(part, table, specs)


def check_sweep(part, table, specs, seeds):
    """The class's rule fitted for real (``radius="auto"``) on the sweep's tasks and seeds.

    The gap to each task's best ``c`` of the saved table (same draws), per (n, epsilon)
    cell, against the old constant's (interpolated in the table).
    """
    name = "PrivateFrankWolfeLasso" if part == "fw" else "PrivateMirrorDescentRegressor"
    const = 1.5 if part == "fw" else 3.0
    start = time.time()
    print(f"\n{name}, radius='auto' fitted (the class's rule) against the best c of each "
          f"task, seeds {seeds}\n")
    print("| n | eps | radius_ / (y_bound / B) | gap, rule (fitted) | gap, constant "
          f"{const:g} |")
    print("|---|---|---|---|---|")
    all_rule, all_const = [], []
    for n in SWEEP_NS:
        datas = []
        for ti, spec in enumerate(specs):
            d, rho, sparse, share, offset, loose = spec
            datas.append(task(d, rho, sparse, share, offset, np.random.default_rng(1000 + ti),
                              looseness=loose, n_train=n))
        for eps in SWEEP_EPSILONS:
            rule_gaps, const_gaps, factors = [], [], []
            for ti, data in enumerate(datas):
                curve = np.asarray(table[(ti, n, eps)])
                best = curve.max()
                rule_gaps.append(best - statistics.mean(
                    fit_score(part, None, eps, s, data, radius="auto") for s in seeds))
                const_gaps.append(_interp_gap(curve, best, const))
                cls = PrivateFrankWolfeLasso if part == "fw" else PrivateMirrorDescentRegressor
                factors.append(cls(epsilon=eps)._radius_factor(n, specs[ti][0]))
            all_rule.append(statistics.mean(rule_gaps))
            all_const.append(statistics.mean(const_gaps))
            print(f"| {n} | {eps:g} | {min(factors):.3g}..{max(factors):.3g} | "
                  f"{all_rule[-1]:.4f} | {all_const[-1]:.4f} |", flush=True)
    print(f"| all | mean | | {statistics.mean(all_rule):.4f} | {statistics.mean(all_const):.4f} |")
    print(f"| all | worst | | {max(all_rule):.4f} | {max(all_const):.4f} |")
    print(f"({time.time() - start:.0f} s)")


def analyse_sweep(part, table, specs):
    from sklearn_dpol._auto_bounds import noise_ratio

    name = "PrivateFrankWolfeLasso" if part == "fw" else "PrivateMirrorDescentRegressor"
    const = 1.5 if part == "fw" else 3.0
    keys = list(table)
    curves = {key: np.asarray(table[key]) for key in keys}
    best = {key: curves[key].max() for key in keys}
    print(f"\n{name}: the best constant c of each (n, epsilon) cell (32 synthetic tasks; "
          "gap = mean over tasks of the task's best c's R^2 minus c's)\n")
    print("| n | eps | noise ratio (d=10) | best c of the cell | its mean gap | "
          f"gap of c={const:g} |")
    print("|---|---|---|---|---|---|")
    cells = sorted({(n, eps) for _, n, eps in keys})
    for n, eps in cells:
        ck = [key for key in keys if key[1:] == (n, eps)]
        gaps = [statistics.mean(_interp_gap(curves[k], best[k], c) for k in ck)
                for c in SWEEP_CS]
        i = int(np.argmin(gaps))
        g_const = statistics.mean(_interp_gap(curves[k], best[k], const) for k in ck)
        print(f"| {n} | {eps:g} | {noise_ratio(n, REF_D, eps, DELTA):.3g} | "
              f"{SWEEP_CS[i]:.3g} | {gaps[i]:.4f} | {g_const:.4f} |")

    def evaluate(kind, c_ref, gamma, c_lo=SWEEP_CS[0], c_hi=SWEEP_CS[-1]):
        per_cell = {}
        for key in keys:
            ti, n, eps = key
            c = _rule_c(kind, c_ref, gamma, n, specs[ti][0], eps, c_lo, c_hi)
            per_cell.setdefault((n, eps), []).append(_interp_gap(curves[key], best[key], c))
        cell_means = {cell: statistics.mean(v) for cell, v in per_cell.items()}
        return statistics.mean(cell_means.values()), max(cell_means.values()), cell_means

    c_refs = tuple(2.0 ** (k / 16) for k in range(-16, 65))
    print(f"\n{name}: c = c_ref * (ratio / ratio_ref)^-gamma, ratio = noise_ratio(n, d, eps, "
          f"delta) (ratio_ref at n={REF_N}, d={REF_D}, eps={REF_EPS:g}); fitted by the mean "
          "gap over the 16 cells\n")
    print("| form | gamma | c_ref | mean gap | worst cell |")
    print("|---|---|---|---|---|")
    results = {}
    for kind in ("d", "log d", "no d"):
        for gamma in SWEEP_GAMMAS:
            if kind != "d" and gamma == 0:
                continue
            (mean, worst, _), c_ref = min(((evaluate(kind, c, gamma), c) for c in c_refs),
                                          key=lambda r: r[0][0])
            results[(kind, gamma)] = (mean, worst, c_ref)
            print(f"| {kind} | {gamma:.4g} | {c_ref:.3g} | {mean:.4f} | {worst:.4f} |")
    cls = PrivateFrankWolfeLasso if part == "fw" else PrivateMirrorDescentRegressor
    c_ref, gamma = cls.AUTO_RADIUS_FACTOR, cls.AUTO_RADIUS_SLOPE
    c_lo, c_hi = cls.AUTO_RADIUS_RANGE
    mean_c, worst_c, cells_c = evaluate("d", const, 0.0)
    form = "log d" if cls.AUTO_RADIUS_DIMENSION == "log" else "d"
    mean_r, worst_r, cells_r = evaluate(form, c_ref, gamma, c_lo, c_hi)
    print(f"\n{name}: the class's rule (c_ref {c_ref:g}, slope {gamma:.4g}, range "
          f"{c_lo:g}..{c_hi:g}) against the constant {const:g}, mean gap per cell\n")
    print("| n | eps | gap, constant | gap, rule |")
    print("|---|---|---|---|")
    for cell in cells:
        print(f"| {cell[0]} | {cell[1]:g} | {cells_c[cell]:.4f} | {cells_r[cell]:.4f} |")
    print(f"| all | mean | {mean_c:.4f} | {mean_r:.4f} |")
    print(f"| all | worst | {worst_c:.4f} | {worst_r:.4f} |")
    return results


# -- the dual-norm bound of mirror descent's L1 / group-L1 / simplex sets (session 32) --------
DUAL_EXPONENTS = (0.0, 0.25, 0.5, 0.75)
DUAL_EPSILONS = (0.5, 2.0)
DUAL_GROUP_SIZE = 5


def dual_task(d, rows, sparse, nonneg, rng, n_train=N_TRAIN):
    """A synthetic task for the dual-norm bound, rows "spread" or "concentrated".

    ``data_norm = 1`` (an L2 bound) either way. "spread": the latent-factor Gaussian
    features of :func:`task` (``rho = 0``, clipped at 2.5 sd) scaled into
    ``[-1/sqrt(d), 1/sqrt(d)]`` (``||x||_inf`` about ``data_norm / sqrt(d)``).
    "concentrated": two nonzero features per row, each in ``[-1/sqrt(2), 1/sqrt(2)]``
    (``||x||_inf`` about ``data_norm``). ``beta`` dense or 3-sparse, nonnegative for the
    simplex; signal share 0.7; ``y_bound`` 2.5 times the population RMS of ``y``.
    """
    n = n_train + N_TEST
    if rows == "spread":
        X = np.clip(rng.normal(size=(n, d)), -2.5, 2.5) / 2.5 / np.sqrt(d)
    else:
        X = np.zeros((n, d))
        cols = np.argsort(rng.random((n, d)), axis=1)[:, :2]
        vals = np.clip(rng.normal(size=(n, 2)), -2.5, 2.5) / 2.5 / np.sqrt(2.0)
        np.put_along_axis(X, cols, vals, axis=1)
    beta = rng.normal(size=d)
    if nonneg:
        beta = np.abs(beta)
    if sparse:
        beta[3:] = 0.0
    signal = X @ beta
    signal = signal / signal.std() * np.sqrt(0.7)
    y = signal + np.sqrt(0.3) * rng.normal(size=n)
    y_bound = 2.5
    y = np.clip(y, -y_bound, y_bound)
    bounds = dict(data_norm=1.0, y_bound=y_bound)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], bounds


def run_dual(args):
    """Mirror descent's radius for the L1 / group-L1 / simplex sets: ``B = data_norm k^-a``.

    ``radius = c y_bound / B`` with the class's ``c`` (``_radius_factor``) and the
    dual-norm bound ``B = data_norm * k^(-a)``, ``k = d`` (L1, simplex) or the number of
    groups (group-L1, groups of ``DUAL_GROUP_SIZE``), for ``a`` in ``DUAL_EXPONENTS``
    (``a = 0``: the L2 bound itself, the rule before session 32; ``a = 1/2``: the dual
    norm of a row of L2 norm ``data_norm`` spread evenly). Test R^2 at defaults
    (only the budget, the bounds, the set and the radius passed), mean over seeds.
    """
    start = time.time()
    specs = [(d, rows, sparse) for d in args.dual_d for rows in ("spread", "concentrated")
             for sparse in (False, True)]
    constraints = args.dual_constraints
    print(f"\nPrivateMirrorDescentRegressor (loss={args.dual_loss!r}): radius = c y_bound / "
          f"(data_norm k^-a), n = {args.dual_n}, seeds {args.seeds}, eps {DUAL_EPSILONS}\n")
    print("| set | d | rows | beta | eps | " + " | ".join(f"a={a:g}" for a in DUAL_EXPONENTS)
          + " |")
    print("|---|---|---|---|---|" + "---|" * len(DUAL_EXPONENTS))
    means = {(con, a): [] for con in constraints for a in DUAL_EXPONENTS}
    gaps = {(con, a): [] for con in constraints for a in DUAL_EXPONENTS}
    by_rows = {(con, rows, a): [] for con in constraints for rows in ("spread", "concentrated")
               for a in DUAL_EXPONENTS}
    for ti, (d, rows, sparse) in enumerate(specs):
        for con in constraints:
            data = dual_task(d, rows, sparse, con == "simplex",
                             np.random.default_rng(2000 + ti), n_train=args.dual_n)
            X_tr, y_tr, X_te, y_te, bounds = data
            k = -(-d // DUAL_GROUP_SIZE) if con == "group_l1" else d
            for eps in DUAL_EPSILONS:
                c = PrivateMirrorDescentRegressor(epsilon=eps)._radius_factor(len(y_tr), d)
                row = []
                for a in DUAL_EXPONENTS:
                    radius = c * bounds["y_bound"] / (bounds["data_norm"] * k ** -a)
                    extra = dict(group_size=DUAL_GROUP_SIZE) if con == "group_l1" else {}
                    scores = []
                    for s in args.seeds:
                        reg = PrivateMirrorDescentRegressor(
                            solver="mirror_descent",
                            epsilon=eps, delta=DELTA, constraint=con, radius=radius,
                            data_norm=bounds["data_norm"], y_bound=bounds["y_bound"],
                            loss=args.dual_loss, random_state=s, **extra).fit(X_tr, y_tr)
                        scores.append(r2_score(y_te, reg.predict(X_te)))
                    row.append(statistics.mean(scores))
                best = max(row)
                for a, score in zip(DUAL_EXPONENTS, row):
                    means[(con, a)].append(score)
                    gaps[(con, a)].append(best - score)
                    by_rows[(con, rows, a)].append(best - score)
                print(f"| {con} | {d} | {rows} | {'sparse' if sparse else 'dense'} | {eps:g} | "
                      + " | ".join(f"{v:.3f}" for v in row) + " |", flush=True)
    print(f"\nmean R^2 / mean gap to the best a / worst gap ({time.time() - start:.0f} s)\n")
    print("| set | a | mean R^2 | mean gap | worst gap | gap, spread rows | gap, concentrated |")
    print("|---|---|---|---|---|---|---|")
    for con in constraints:
        for a in DUAL_EXPONENTS:
            print(f"| {con} | {a:g} | {statistics.mean(means[(con, a)]):.4f} | "
                  f"{statistics.mean(gaps[(con, a)]):.4f} | {max(gaps[(con, a)]):.4f} | "
                  f"{statistics.mean(by_rows[(con, 'spread', a)]):.4f} | "
                  f"{statistics.mean(by_rows[(con, 'concentrated', a)]):.4f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--parts", nargs="+", default=["fw", "md"],
                        choices=["fw", "md", "grid", "private", "sweep-fw", "sweep-md",
                                 "check-fw", "check-md", "dual-md"])
    parser.add_argument("--dual-constraints", nargs="+", default=["l1", "group_l1", "simplex"],
                        help="dual-md: the sets measured")
    parser.add_argument("--dual-d", nargs="+", type=int, default=[10, 50],
                        help="dual-md: the feature counts")
    parser.add_argument("--dual-loss", default="squared", help="dual-md: the loss")
    parser.add_argument("--dual-n", type=int, default=N_TRAIN, help="dual-md: training rows")
    parser.add_argument("--save", default=None,
                        help="sweep: write the table of R^2 to SAVE.<part>.json")
    parser.add_argument("--load", default=None,
                        help="sweep: analyse a table written by --save instead of fitting")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if "grid" in args.parts:
        run_grid(args)
    if "private" in args.parts:
        run_private(args)
    if "dual-md" in args.parts:
        run_dual(args)
    for part in ("fw", "md"):
        if f"sweep-{part}" in args.parts:
            if args.load:
                import json

                with open(f"{args.load}.{part}.json") as fh:
                    rows = json.load(fh)["rows"]
                analyse_sweep(part, {tuple(r[:3]): r[3] for r in rows}, synthetic_specs())
            else:
                run_sweep(part, args)
        if f"check-{part}" in args.parts:
            import json

            with open(f"{args.load or args.save}.{part}.json") as fh:
                saved = json.load(fh)
            check_sweep(part, {tuple(r[:3]): r[3] for r in saved["rows"]}, synthetic_specs(),
                        saved["seeds"])
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
