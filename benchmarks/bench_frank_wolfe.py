"""Benchmark PrivateFrankWolfeLasso on synthetic sparse regression (issue 5).

Data (synthetic, no private data is read): ``p = 1000`` features uniform on
``[-1, 1]`` (so ``||x||_inf <= 1``), 10 nonzero coefficients ``+-0.1`` at random
positions (``||theta*||_1 = 1``), ``y = clip(<x, theta*> + 0.1 N(0, 1), -1, 1)``.
The estimator runs at ``radius = 1``, ``feature_bound = y_bound = 1``,
``fit_intercept=False`` (the seed's setting), ``epsilon = 1``, ``delta = 1e-6``,
with the default iteration count (``max_iter=None``, doc/privacy.md section 20).

Tables, printed in Markdown:

1. excess empirical risk ``L(theta_priv) - L(theta_hat)`` against ``n`` for both
   step sizes (and Gaussian selection for comparison), with the fitted log-log
   slope, the support recovered among the 10 largest coefficients, and the
   non-private optimum ``theta_hat`` (accelerated projected gradient on the Gram
   matrix, certified by its Frank-Wolfe gap);
2. fit time against scikit-learn ``Lasso`` at the matched constraint (its
   ``alpha`` is the Lagrange multiplier of ``||theta||_1 <= 1`` at ``theta_hat``,
   so both solve the same problem), same data, same run, as a ratio.

3. (``--sweep T1 T2 ...``) the same excess risk at fixed step counts, next to the
   default's: the noise-against-progress trade-off the default rule resolves
   from public constants (choosing ``T`` from this table would read the data).

The issue-17 setting (p = 500, n = 2e3..3.2e4, slope target <= -0.6)::

    python benchmarks/bench_frank_wolfe.py --n-features 500 --sizes 2000 4000 8000 16000 32000 \
        --skip-timing --sweep 20 1600

``--estimator-defaults``: the same tables for ``PrivateFrankWolfeLasso`` as a user gets it,
passing only the budget and the public bounds (``epsilon``, ``delta``, ``feature_bound = y_bound
= 1``): ``radius="auto"`` (``radius_ = 1.5``), ``fit_intercept=True``, ``max_iter=None``. The
excess risk is then against the optimum over the estimator's own set (the L1 ball of radius
``radius_`` in the coefficients and the intercept's coordinate ``intercept_ / feature_bound``),
and the fits go through the estimator (``fit``, its Gram route), one per seed::

    python benchmarks/bench_frank_wolfe.py --n-features 500 --sizes 2000 4000 8000 16000 32000 \
        --skip-timing --estimator-defaults --seeds 5 --sweep 20 20000

Run from anywhere::

    python benchmarks/bench_frank_wolfe.py            # n up to 1e6, ~4 minutes, 5 GB
    python benchmarks/bench_frank_wolfe.py --quick    # n up to 1e5, 3 seeds, ~1 minute
"""

import argparse
import os
import platform
import shlex
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Benchmark the working tree, whether or not the package is installed.
sys.path.insert(0, str(ROOT))

import scipy  # noqa: E402
import sklearn  # noqa: E402
from sklearn.linear_model import Lasso  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sklearn_dpol import PrivateFrankWolfeLasso  # noqa: E402
from sklearn_dpol._core import frank_wolfe as fw  # noqa: E402
from sklearn_dpol.exceptions import DefaultBoundWarning  # noqa: E402

N_FEATURES, N_NONZERO, COEF, NOISE = 1000, 10, 0.1, 0.1
EPSILON, DELTA, RADIUS = 1.0, 1e-6, 1.0
GENERATION_CHUNK = 50_000


def make_data(n, seed=None, design="uniform"):
    """Float32 features (4 GB at n = 1e6), generated in chunks.

    ``design="uniform"``: entries uniform on [-1, 1]; ``"rademacher"``: entries
    +-1, the compressed-sensing design, whose gradient signal ``E[x_j^2] = 1``
    is three times that of uniform entries (1/3).
    """
    rng = np.random.default_rng(DATA_SEED if seed is None else seed)
    support = np.sort(rng.choice(N_FEATURES, N_NONZERO, replace=False))
    theta = np.zeros(N_FEATURES)
    theta[support] = COEF * rng.choice([-1.0, 1.0], N_NONZERO)
    X = np.empty((n, N_FEATURES), dtype=np.float32)
    y = np.empty(n)
    for start in range(0, n, GENERATION_CHUNK):
        stop = min(start + GENERATION_CHUNK, n)
        block = rng.random((stop - start, N_FEATURES), dtype=np.float32)
        X[start:stop] = 2.0 * block - 1.0 if design == "uniform" else np.sign(block - 0.5)
        y[start:stop] = X[start:stop] @ theta + NOISE * rng.standard_normal(stop - start)
    return X, np.clip(y, -1.0, 1.0), support


# -- the non-private optimum ------------------------------------------------------------

def project_l1_ball(v, radius):
    """Euclidean projection onto the L1 ball (Duchi et al. 2008)."""
    if np.sum(np.abs(v)) <= radius:
        return v
    u = np.sort(np.abs(v))[::-1]
    cumulative = np.cumsum(u)
    k = np.nonzero(u * np.arange(1, u.size + 1) > cumulative - radius)[0][-1]
    tau = (cumulative[k] - radius) / (k + 1)
    return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)


def quadratic_part(G, b, theta):
    """``L(theta)`` up to the constant ``mean(y^2) / 2``."""
    return 0.5 * theta @ G @ theta - b @ theta


def fw_gap(G, b, theta, radius):
    gradient = G @ theta - b
    return float(gradient @ theta + radius * np.max(np.abs(gradient)))


def constrained_optimum(G, b, radius, max_iter=20_000, gap_tol=1e-10):
    """FISTA with gradient restarts on the L1 ball; returns (theta_hat, certified gap).

    One matrix-vector product per iteration, single-threaded: on a loaded
    machine a two-thread BLAS is 30 times slower for these small products.
    """
    with threadpool_limits(1):
        lipschitz = np.linalg.eigvalsh(G)[-1]
        theta = momentum = np.zeros(b.size)
        t = 1.0
        for iteration in range(max_iter):
            new = project_l1_ball(momentum - (G @ momentum - b) / lipschitz, radius)
            if (momentum - new) @ (new - theta) > 0:
                t = 1.0  # O'Donoghue-Candes restart: the momentum points uphill
            t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
            momentum = new + ((t - 1) / t_next) * (new - theta)
            theta, t = new, t_next
            if iteration % 100 == 0 and fw_gap(G, b, theta, radius) < gap_tol:
                break
        return theta, fw_gap(G, b, theta, radius)


# -- table 1: excess risk against n -----------------------------------------------------------

VARIANTS = [
    ("exponential", "decreasing"),
    ("exponential", "constant"),
    ("gaussian", "decreasing"),
]


# --estimator-defaults: fit PrivateFrankWolfeLasso with only the budget and these bounds.
ESTIMATOR_DEFAULTS = False
# --data-seed: the draw of the synthetic data (support, signs, X and the noise of y).
DATA_SEED = 0
BOUNDS = dict(feature_bound=1.0, y_bound=1.0)


def estimator_radius(n, p):
    """``radius_`` of ``radius="auto"`` for ``n`` rows and ``p`` features at the public
    bounds and the budget (public: the rule reads the shape, never the data)."""
    return PrivateFrankWolfeLasso(epsilon=EPSILON, delta=DELTA, **BOUNDS)._radius(shape=(n, p))


def reference_problem(X, y):
    """The clipped problem whose optimum the private iterates are compared with."""
    return fw.ClippedLeastSquares(X, y, **BOUNDS, intercept=ESTIMATOR_DEFAULTS, precompute=True)


def reference_radius(n):
    return estimator_radius(n, N_FEATURES) if ESTIMATOR_DEFAULTS else RADIUS


def estimator_run(X, y, selection, step_size, seed, max_iter=None):
    """One fit of the estimator at its defaults; ``theta`` in the reference problem's coordinates."""
    model = PrivateFrankWolfeLasso(epsilon=EPSILON, delta=DELTA, **BOUNDS, selection=selection,
                                   step_size=step_size, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DefaultBoundWarning)   # the bounds are public here
        model.fit(X, y)
    theta = np.append(model.coef_, model.intercept_ / model.feature_bound_)
    return theta, model.max_iter_


def private_run(problem, selection, step_size, seed, X=None, y=None):
    if ESTIMATOR_DEFAULTS:
        return estimator_run(X, y, selection, step_size, seed)
    n_steps = fw.default_iterations(
        selection, n_samples=problem.n_samples, n_dims=problem.n_dims, epsilon=EPSILON,
        delta=DELTA, radius=RADIUS, feature_bound=1.0, y_bound=1.0, positive=False, intercept=False)
    theta, _, _ = fw.frank_wolfe_on(
        problem, np.zeros(problem.n_dims), selection=selection, epsilon=EPSILON, delta=DELTA,
        radius=RADIUS, feature_bound=1.0, y_bound=1.0, intercept=False, positive=False,
        n_steps=n_steps, step_size=step_size, t_start=0, rng=np.random.default_rng(seed))
    return theta, n_steps


def support_recovered(theta, support):
    top = np.argsort(-np.abs(theta[:N_FEATURES]), kind="stable")[:N_NONZERO]
    return len(set(top.tolist()) & set(support.tolist())) / N_NONZERO


def risk_for_size(n, seeds, design):
    X, y, support = make_data(n, design=design)
    start = time.perf_counter()
    problem = reference_problem(X, y)
    gram_seconds = time.perf_counter() - start
    G, b = problem.gram, problem.linear
    theta_hat, gap = constrained_optimum(G, b, reference_radius(n))
    best = quadratic_part(G, b, theta_hat)
    row = dict(n=n, radius=reference_radius(n), gram_seconds=gram_seconds, gap=gap,
               trivial=-best,
               optimum=best + 0.5 * float(np.mean(y**2)),
               optimum_l1=float(np.sum(np.abs(theta_hat))),
               optimum_support=support_recovered(theta_hat, support))
    for selection, step_size in VARIANTS:
        excess, recovered, nonzero = [], [], []
        for seed in range(seeds):
            theta, n_steps = private_run(problem, selection, step_size, seed, X, y)
            excess.append(quadratic_part(G, b, theta) - best)
            recovered.append(support_recovered(theta, support))
            nonzero.append(np.count_nonzero(theta))
        row[(selection, step_size)] = dict(steps=n_steps, excess=excess, support=recovered,
                                           nonzero=nonzero)
    return row


def slope(sizes, values):
    return float(np.polyfit(np.log10(sizes), np.log10(values), 1)[0])


def print_risk_tables(rows, seeds, design):
    radii = ", ".join(f"{row['radius']:.3g}" for row in rows)
    setting = (f"PrivateFrankWolfeLasso at its defaults (radius_ {radii} by n, "
               "fit_intercept=True, max_iter=None)" if ESTIMATOR_DEFAULTS
               else f"radius={RADIUS}, fit_intercept=False")
    print(f"\nTable 1 ({design} features): excess empirical risk, epsilon={EPSILON}, "
          f"delta={DELTA}, {setting}, p={N_FEATURES}, mean +- std over {seeds} "
          "seeds\n")
    header = ["n", "T (exp.)"] + [f"{s}, {t}" for s, t in VARIANTS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        cells = [f"{row['n']:.0e}", str(row[VARIANTS[0]]["steps"])]
        for variant in VARIANTS:
            values = row[variant]["excess"]
            cells.append(f"{np.mean(values):.3g} +- {np.std(values):.2g}")
        print("| " + " | ".join(cells) + " |")
    sizes = np.array([row["n"] for row in rows])
    for label, chosen in (("all sizes", slice(None)), ("two largest", slice(-2, None))):
        if len(sizes[chosen]) < 2:
            continue
        cells = [f"log-log slope, {label}", ""]
        for variant in VARIANTS:
            means = [np.mean(row[variant]["excess"]) for row in rows][chosen]
            cells.append(f"{slope(sizes[chosen], means):.3f}")
        print("| " + " | ".join(cells) + " |")
    trivial = ", ".join(f"{row['trivial']:.4g}" for row in rows)
    print(f"\nExcess risk of theta = 0 (the trivial model), by n: {trivial}")

    print("\nTable 1b: support (share of the 10 true coordinates among the 10 largest "
          "|coef|), nonzeros, and the non-private optimum\n")
    print("| n | support, exp. decreasing | nonzeros, exp. decreasing | support, gaussian | "
          "T (gaussian) | non-private L(theta_hat) | ||theta_hat||_1 | support of theta_hat "
          "| its FW gap | Gram time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        exp_, gauss = row[("exponential", "decreasing")], row[("gaussian", "decreasing")]
        print(f"| {row['n']:.0e} | {np.mean(exp_['support']):.2f} | "
              f"{np.mean(exp_['nonzero']):.0f} | {np.mean(gauss['support']):.2f} | "
              f"{gauss['steps']} | {row['optimum']:.6f} | {row['optimum_l1']:.4f} | "
              f"{row['optimum_support']:.2f} | {row['gap']:.1e} | {row['gram_seconds']:.2f} |")


def sweep_rows(sizes, steps, seeds, design):
    """Excess risk (exponential selection, decreasing steps) at fixed ``T``, per ``n``."""
    rows = []
    for n in sizes:
        X, y, _ = make_data(n, design=design)
        problem = reference_problem(X, y)
        G, b = problem.gram, problem.linear
        best = quadratic_part(G, b, constrained_optimum(G, b, reference_radius(n))[0])
        cells = {}
        for n_steps in steps:
            excess = []
            for seed in range(seeds):
                if ESTIMATOR_DEFAULTS:
                    theta, _ = estimator_run(X, y, "exponential", "decreasing", seed,
                                             max_iter=int(n_steps))
                    excess.append(quadratic_part(G, b, theta) - best)
                    continue
                theta, _, _ = fw.frank_wolfe_on(
                    problem, np.zeros(problem.n_dims), selection="exponential",
                    epsilon=EPSILON, delta=DELTA, radius=RADIUS, feature_bound=1.0,
                    y_bound=1.0, intercept=False, positive=False, n_steps=int(n_steps),
                    step_size="decreasing", t_start=0, rng=np.random.default_rng(seed))
                excess.append(quadratic_part(G, b, theta) - best)
            cells[int(n_steps)] = float(np.mean(excess))
        rows.append((n, cells, -best))
    return rows


def print_sweep(rows, default_rows, seeds):
    steps = sorted(rows[0][1])
    print(f"\nTable 3: excess risk (exponential, decreasing) at fixed T against the default "
          f"rule, p={N_FEATURES}, epsilon={EPSILON}, mean over {seeds} seeds\n")
    header = ["n", "default T", "default"] + [f"T={t}" for t in steps] + ["theta = 0"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for (n, cells, trivial), row in zip(rows, default_rows):
        default = row[("exponential", "decreasing")]
        print("| " + " | ".join([f"{n:.0e}", str(default["steps"]),
                                 f"{np.mean(default['excess']):.4g}"]
                                + [f"{cells[t]:.4g}" for t in steps] + [f"{trivial:.4g}"]) + " |")
    sizes = np.array([n for n, _, _ in rows])
    defaults = [np.mean(r[("exponential", "decreasing")]["excess"]) for r in default_rows]
    cells = ["log-log slope", "", f"{slope(sizes, defaults):.3f}"]
    cells += [f"{slope(sizes, [c[t] for _, c, _ in rows]):.3f}" for t in steps] + [""]
    print("| " + " | ".join(cells) + " |")


# -- table 2: time against Lasso ----------------------------------------------------------------

def matched_alpha(X, y):
    """The Lagrange multiplier of ||theta||_1 <= RADIUS: Lasso(alpha) has the same solution."""
    problem = fw.ClippedLeastSquares(X, y, feature_bound=1.0, y_bound=1.0, intercept=False,
                                     precompute=True)
    theta_hat, _ = constrained_optimum(problem.gram, problem.linear, RADIUS)
    gradient = problem.gram @ theta_hat - problem.linear
    return float(np.max(np.abs(gradient)))


def time_against_lasso(n, repeats, design):
    X, y, _ = make_data(n, design=design)
    alpha = matched_alpha(X, y)
    ours = PrivateFrankWolfeLasso(epsilon=EPSILON, delta=DELTA, radius=RADIUS,
                                  fit_intercept=False, random_state=0)
    lasso = Lasso(alpha=alpha, fit_intercept=False)
    ours.fit(X, y)  # warm-up
    times = {"ours": [], "lasso": []}
    for _ in range(repeats):  # interleaved, so load changes hit both alike
        for name, model in (("ours", ours), ("lasso", lasso)):
            start = time.perf_counter()
            model.fit(X, y)
            times[name].append(time.perf_counter() - start)
    return dict(n=n, alpha=alpha, times=times, steps=ours.max_iter_,
                lasso_l1=float(np.sum(np.abs(lasso.coef_))), lasso_iter=lasso.n_iter_)


def print_timing(results, repeats):
    print(f"\nTable 2: fit time, same data, median of {repeats} interleaved runs (the "
          "private fit includes clipping and the Gram matrix)\n")
    print("| n | PrivateFrankWolfeLasso (s) | T | Lasso(alpha matched) (s) | Lasso alpha | "
          "Lasso ||coef||_1 | ratio ours / Lasso (median) | ratio (min) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        ours, lasso = r["times"]["ours"], r["times"]["lasso"]
        print(f"| {r['n']:.0e} | {statistics.median(ours):.2f} | {r['steps']} | "
              f"{statistics.median(lasso):.2f} | {r['alpha']:.3g} | {r['lasso_l1']:.4f} | "
              f"{statistics.median(ours) / statistics.median(lasso):.2f} | "
              f"{min(ours) / min(lasso):.2f} |")


def main(argv=None):
    global N_FEATURES, ESTIMATOR_DEFAULTS, DATA_SEED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="n up to 1e5, 3 seeds, 2 timing repeats")
    parser.add_argument("--sizes", type=float, nargs="+", default=None,
                        help="sample sizes for table 1 (default 1e3 1e4 1e5 1e6)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per size (default 5)")
    parser.add_argument("--timing-sizes", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--repeats", type=int, default=None, help="timing repeats (default 3)")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--design", choices=["uniform", "rademacher"], default="uniform",
                        help="feature distribution (both have ||x||_inf <= 1)")
    parser.add_argument("--n-features", type=int, default=N_FEATURES,
                        help="p (default %(default)s; issue 17's slope target is at 500)")
    parser.add_argument("--sweep", type=int, nargs="*", default=None,
                        help="also Table 3: excess risk at these fixed step counts")
    parser.add_argument("--estimator-defaults", action="store_true",
                        help="fit PrivateFrankWolfeLasso at its defaults (radius='auto', an "
                             "intercept, max_iter=None) with only the budget and the bounds 1")
    parser.add_argument("--data-seed", type=int, default=0,
                        help="seed of the synthetic data (default 0); the noise seeds are "
                             "0..seeds-1 whatever it is")
    args = parser.parse_args(argv)
    N_FEATURES = args.n_features
    DATA_SEED = args.data_seed
    ESTIMATOR_DEFAULTS = args.estimator_defaults
    sizes = args.sizes or ([1e3, 1e4, 1e5] if args.quick else [1e3, 1e4, 1e5, 1e6])
    seeds = args.seeds or (3 if args.quick else 5)
    repeats = args.repeats or (2 if args.quick else 3)

    print(f"Command: python {shlex.join(['benchmarks/bench_frank_wolfe.py'] + sys.argv[1:])}")
    print(f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"scikit-learn {sklearn.__version__}")
    start = time.perf_counter()
    rows = [risk_for_size(int(n), seeds, args.design) for n in sizes]
    print_risk_tables(rows, seeds, args.design)
    if args.sweep:
        print_sweep(sweep_rows([int(n) for n in sizes], args.sweep, seeds, args.design),
                    rows, seeds)
    if not args.skip_timing:
        print_timing([time_against_lasso(int(n), repeats, args.design)
                      for n in args.timing_sizes], repeats)
    print(f"\nTotal time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
