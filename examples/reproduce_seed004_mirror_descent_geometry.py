"""Reproduce seed 004's Gaussian-width effect: private mirror descent on L1 vs L2 balls.

Seed 004 (Talwar, Thakurta and Zhang 2015), Section 3, Theorem 3.2 and its
instantiations (eq. 13 and 14): noisy mirror descent (Algorithm 1) has excess
empirical risk O(L sqrt((G_Q^2 + ||Q||_2^2) max Psi) log(n/delta) / (eps n)).
For two sets with the same L2 radius r (the seed's scaling: ||C||_2 = r in
both bounds), the L2 ball (Gaussian width r sqrt(p), Euclidean potential)
gives O(L r sqrt(p) ...), and the L1 ball (width r sqrt(2 ln 2p), q-norm
potential with max Psi = O(log p)) gives O(L r log(2p) ...): as p grows, the
excess risk should grow like sqrt(p) on the L2 ball and like log p on the L1
ball. The seed has no experiment for it; this script measures it.

Setting (synthetic, fixed before any run). n = 10,000 rows of norm exactly 1
(so ``data_norm=1`` is a public bound): x_1 = +-1/sqrt(2) and the other p - 1
coordinates uniform on the sphere of radius 1/sqrt(2), so the informative
direction carries the same signal at every p. y = 2 r x_1 + 0.1 N(0, 1),
clipped to ``y_bound=2`` (6 noise standard deviations above the largest
signal). Radius r = 1 for both sets, squared loss, no intercept, epsilon = 1,
delta = 1e-6. The unconstrained least-squares solution 2 r e_1 lies outside
both balls, and both constrained optima sit at (about) r e_1, a vertex of the
L1 ball on the boundary of the L2 ball: the same point, the same L2 radius,
the same Lipschitz constant; only the geometry (width and potential) differs.
The gradient at the optimum is nonzero, so noise that moves the model costs
excess risk at first order, as in the seed's Lipschitz analysis.

Both sets run ``PrivateMirrorDescentRegressor`` with the same public step
budget ``max_iter=10,000`` (the theorem's own count, ``max_iter=None``, takes up
to 450,000 L1 steps per fit, each with a bisection: ``--full`` uses it) and
the library's step rule for that budget, which minimises the theorem's bound
(so the step, too, shrinks with the width). The excess is split into the
noiseless floor (``epsilon=np.inf`` with the same steps and step size:
optimisation error) and the rest (the noise). Reference curves a sqrt(p) and
b ln(2p) are fitted by least squares through the origin to the L2 and L1
totals, and the growth ratios from the smallest to the largest p are printed
next to the predicted ones.

Real data (``--data DIR``). The same comparison on a real regression task,
California housing (``cal_housing.data.gz``, all 20,640 rows). Epsilon alone
would show little of the geometry: at cal_housing's 8 features the Gaussian
widths of the unit balls differ by a factor 1.5 (2.7 vs 1.8; 16 vs 3.0 at
p = 256), so the script instead grows p
with a public, data-independent feature expansion and keeps epsilon = 1. The
8 derived features of ``reproduce_seed004_frank_wolfe_rate.cal_housing``
(public ranges to [-1, 1], clipped; no statistic of the data) are each
one-hot encoded over k equal bins of [-1, 1] (bin edges fixed in advance), so
p = 8 k for k = 2, 4, 16, 32 (p = 16 to 256; ``--full`` adds k = 128, p =
1024); each row has exactly 8 ones and is divided by sqrt(8), so it has norm
exactly 1, as in the synthetic setting. Target: value / top-code (500,001)
mapped to [-1, 1], ``y_bound=1``. Radius 1 for both balls, squared loss, no
intercept, epsilon = 1, the same step budget and seeds. The excess is
measured against each ball's own non-private constrained optimum (certified
by its Frank-Wolfe gap, printed with the optimum's risk and the zero model's);
the tables, growth ratios and a second figure
``seed004_mirror_descent_geometry_cal_housing.png`` (written next to the
default one, only with ``--data``) follow the synthetic ones, plus the growth
of the noise part alone. Here the two optima are different points (the L1
ball of radius 1 reaches predictions of at most 1/sqrt(8)), so only each
ball's excess over its own optimum is comparable, not the risks themselves.
The whole default ``--data`` run (synthetic part included) took 38 s of CPU
(40 s wall, 0.4 GB peak) on the shared 2 cores. Reading of that run: from
p = 16 to 256 the L2 ball's noise part grows 5.0-fold (sqrt(p) predicts 4)
while the L1 ball's stays at 1e-4 or below, within its seed spread (1.5e-4),
and the L1 ball's total excess falls below the L2 ball's at p = 128 and 256
(6.2e-3 vs 8.5e-3 at p = 256). At 10,000 steps both totals are dominated by
the noiseless floor (79% of the L2 excess, 99% of the L1 excess at p = 256),
so the totals grow faster than the theorem's noise terms. The real part of
``--full`` (theorem's step count, capped by the library, 5 seeds, k up to 128)
measured alone took 250 s of CPU (209 s for k <= 32, 40 s for k = 128, where
the library caps the count at 2,000 steps), so ``--full --data`` takes about
12 min; there the L1 ball's mean excess is below the L2 ball's at every p
(8.3e-4 vs 1.8e-3 at p = 16, 4.2e-3 vs 1.6e-2 at p = 1024), still mostly
the noiseless floor.

Command (from the repository root)::

    PYTHONPATH=$PWD python examples/reproduce_seed004_mirror_descent_geometry.py          # ~1 min
    PYTHONPATH=$PWD python examples/reproduce_seed004_mirror_descent_geometry.py --full   # theorem's T, p <= 1024, ~8 min
    PYTHONPATH=$PWD python examples/reproduce_seed004_mirror_descent_geometry.py --smoke  # seconds
    PYTHONPATH=$PWD python examples/reproduce_seed004_mirror_descent_geometry.py --data ../shared/data

The default takes about 25 s of CPU (1 min on the shared machine); ``--full
--seeds 1`` took 95 s of CPU (2.3 min), so the default ``--full`` (5 seeds)
takes roughly 8 min. Writes ``doc/images/seed004_mirror_descent_geometry.png``.
"""

import math
import sys

import numpy as np

from _repro import Stopwatch, make_parser, pick, print_table, save_figure
from reproduce_seed004_frank_wolfe_rate import (cal_housing, constrained_optimum, project_l1,
                                                quadratic_form)
from sklearn_dpol import PrivateMirrorDescentRegressor

N_SAMPLES = 10_000
RADIUS = 1.0
SIGNAL_SHARE = 1.0 / math.sqrt(2.0)   # |x_1|; the rest of the unit norm is spread over p - 1
TARGET_NOISE = 0.1
Y_BOUND = 2.0
EPSILON = 1.0
DELTA = 1e-6
STEP_BUDGET = 10_000
CONSTRAINTS = ("l2", "l1")
FIGURE = "seed004_mirror_descent_geometry.png"
REAL_FIGURE = "seed004_mirror_descent_geometry_cal_housing.png"   # only with --data
REAL_Y_BOUND = 1.0   # cal_housing()'s target is value / top-code mapped to [-1, 1]


def unit_rows(n, p, seed):
    """Rows of norm 1: x_1 = +-SIGNAL_SHARE, the rest uniform on a sphere; targets."""
    rng = np.random.default_rng([44, p, seed])
    rest = rng.standard_normal((n, p - 1))
    rest *= math.sqrt(1.0 - SIGNAL_SHARE**2) / np.linalg.norm(rest, axis=1, keepdims=True)
    first = SIGNAL_SHARE * rng.choice([-1.0, 1.0], n)
    X = np.column_stack([first, rest])
    y = 2.0 * RADIUS * first + TARGET_NOISE * rng.standard_normal(n)
    return X, np.clip(y, -Y_BOUND, Y_BOUND)


def project_l2(v, radius):
    norm = np.linalg.norm(v)
    return v if norm <= radius else v * (radius / norm)


def l2_gap(G, b, theta, radius):
    gradient = G @ theta - b
    return float(gradient @ theta + radius * np.linalg.norm(gradient))


def l1_gap(G, b, theta, radius):
    gradient = G @ theta - b
    return float(gradient @ theta + radius * np.abs(gradient).max())


def optimum(G, b, constraint):
    """Minimum of the quadratic on the ball, with its Frank-Wolfe gap."""
    project = project_l2 if constraint == "l2" else project_l1
    gap = l2_gap if constraint == "l2" else l1_gap
    theta, certified = constrained_optimum(G, b, lambda v: project(v, RADIUS),
                                           lambda t: gap(G, b, t, RADIUS))
    return 0.5 * theta @ G @ theta - b @ theta, certified


def binned_cal_housing(data_dir, n_bins):
    """cal_housing's 8 features, each one-hot over ``n_bins`` equal bins of [-1, 1].

    ``cal_housing`` maps every feature to [-1, 1] with public ranges (and clips),
    so the bin edges are fixed before any data is seen: a public,
    data-independent expansion to p = 8 * n_bins features. Each row has exactly
    8 ones; dividing by sqrt(8) gives every row norm exactly 1 (``data_norm=1``
    is a bound, never a clip), at every p, as in the synthetic setting.
    """
    X, y = cal_housing(data_dir)
    n, d = X.shape
    index = np.minimum(((X + 1.0) / 2.0 * n_bins).astype(int), n_bins - 1)
    expanded = np.zeros((n, d * n_bins))
    expanded[np.arange(n)[:, None], np.arange(d) * n_bins + index] = 1.0 / math.sqrt(d)
    return expanded, np.clip(y, -REAL_Y_BOUND, REAL_Y_BOUND)


def estimator(constraint, epsilon, seed, max_iter, step_size=None, y_bound=Y_BOUND):
    return PrivateMirrorDescentRegressor(
        solver="mirror_descent",   # the seed's algorithm ("auto" may take objective perturbation)
        epsilon=epsilon, delta=DELTA, loss="squared", constraint=constraint, radius=RADIUS,
        data_norm=1.0, y_bound=y_bound, fit_intercept=False, max_iter=max_iter,
        step_size=step_size, random_state=seed,
    )


def measure(X, y, constraint, seeds, max_iter, y_bound=Y_BOUND):
    """Excess risks over seeds, the noiseless floor at the same steps, and the estimator."""
    G, b = quadratic_form(X, y)
    best, gap = optimum(G, b, constraint)

    def excess(model):
        return float(0.5 * model.coef_ @ G @ model.coef_ - b @ model.coef_ - best)

    models = [estimator(constraint, EPSILON, s, max_iter, y_bound=y_bound).fit(X, y)
              for s in seeds]
    risks = [excess(m) for m in models]
    # Noiseless run with the private run's step count and step size (seed-independent).
    last = models[-1]
    floor = excess(estimator(constraint, np.inf, 0, last.max_iter_, last.step_size_,
                             y_bound=y_bound).fit(X, y))
    return dict(excess=risks, floor=floor, steps=last.max_iter_, step=last.step_size_,
                width=last.gaussian_width_, gap=gap, best=best)


def run(dims, seeds, max_iter):
    results = {}
    for p in dims:
        X, y = unit_rows(N_SAMPLES, p, seed=0)
        for constraint in CONSTRAINTS:
            results[(constraint, p)] = measure(X, y, constraint, seeds, max_iter)
    return results


def real_run(data_dir, bin_counts, seeds, max_iter):
    """``run`` on binned cal_housing, keyed by p = 8 * bins; also n and the zero model's risk."""
    results, n = {}, 0
    for n_bins in bin_counts:
        X, y = binned_cal_housing(data_dir, n_bins)
        n, p = X.shape
        for constraint in CONSTRAINTS:
            results[(constraint, p)] = measure(X, y, constraint, seeds, max_iter,
                                               y_bound=REAL_Y_BOUND)
            # The risk itself (quadratic_form drops the constant mean(y^2) / 2).
            results[(constraint, p)]["best"] += 0.5 * float(np.mean(y * y))
    return results, n, 0.5 * float(np.mean(y * y))


def fitted_scale(dims, values, shape):
    """Least-squares a in values ~ a * shape(p)."""
    basis = np.array([shape(p) for p in dims])
    return float(basis @ values / (basis @ basis))


SHAPES = {"l2": ("sqrt(p)", math.sqrt), "l1": ("ln(2p)", lambda p: math.log(2 * p))}


def table_rows(results, dims):
    rows = []
    for p in dims:
        for constraint in CONSTRAINTS:
            r = results[(constraint, p)]
            mean = float(np.mean(r["excess"]))
            rows.append([p, constraint, r["width"], r["steps"], r["step"], mean,
                         float(np.std(r["excess"])), r["floor"], mean - r["floor"]])
    return rows


def growth_rows(results, dims):
    rows = []
    for constraint in CONSTRAINTS:
        totals = [np.mean(results[(constraint, p)]["excess"]) for p in dims]
        name, shape = SHAPES[constraint]
        slope = float(np.polyfit(np.log(dims), np.log(totals), 1)[0])
        rows.append([constraint, float(totals[-1] / totals[0]),
                     f"{shape(dims[-1]) / shape(dims[0]):.3g} ({name})", slope])
    return rows


def print_reading(results, dims):
    """What the numbers say, computed from them: noise shares and where L1 beats L2."""
    largest = dims[-1]
    for constraint in CONSTRAINTS:
        r = results[(constraint, largest)]
        total = float(np.mean(r["excess"]))
        noise, spread = total - r["floor"], float(np.std(r["excess"]))
        print(f"p={largest}, {constraint}: noise part {noise:.3g} = {100 * noise / total:.0f}% "
              f"of the excess (seed std {spread:.2g}); the rest is the noiseless floor.")
    below = [p for p in dims if np.mean(results[("l1", p)]["excess"])
             < np.mean(results[("l2", p)]["excess"])]
    print("L1 ball below the L2 ball at p = " + (", ".join(map(str, below)) if below else
                                                 "none of the measured dimensions") + ".")


def print_noise_growth(results, dims):
    """Growth of the noise part alone (total minus floor), the term the geometry drives."""
    for constraint in CONSTRAINTS:
        first, last = (results[(constraint, p)] for p in (dims[0], dims[-1]))
        parts = [float(np.mean(r["excess"])) - r["floor"] for r in (first, last)]
        name, shape = SHAPES[constraint]
        print(f"{constraint}: noise part {parts[0]:.3g} at p={dims[0]} -> {parts[1]:.3g} at "
              f"p={dims[-1]} (ratio {parts[1] / parts[0]:.3g}; {name} predicts "
              f"{shape(dims[-1]) / shape(dims[0]):.3g}); seed std at p={dims[-1]}: "
              f"{float(np.std(last['excess'])):.2g}.")


def plot(results, dims, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.2, 4.4))
    grid = np.geomspace(dims[0], dims[-1], 100)
    for constraint, color in zip(CONSTRAINTS, ("C0", "C1")):
        totals = np.array([np.mean(results[(constraint, p)]["excess"]) for p in dims])
        floors = np.array([results[(constraint, p)]["floor"] for p in dims])
        name, shape = SHAPES[constraint]
        ax.plot(dims, totals, "o-", color=color, label=f"{constraint} ball, epsilon=1")
        ax.plot(dims, floors, "x:", color=color, label=f"{constraint} ball, noiseless floor")
        scale = fitted_scale(dims, totals, shape)
        ax.plot(grid, [scale * shape(p) for p in grid], "--", color=color, alpha=0.6,
                label=f"fit a * {name}")
    ax.set_xscale("log")
    ax.set_xlabel("dimension p")
    ax.set_ylabel("excess empirical risk")
    ax.set_title(title or f"Seed 004, Thm 3.2: L1 vs L2 ball, same radius (n={N_SAMPLES:,})")
    ax.legend(fontsize=7)
    return fig


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    watch = Stopwatch()
    dims = pick(args, [4, 16, 64, 256], [4, 16, 64, 256, 1024], [4, 16])
    seeds = list(range(args.seeds or pick(args, 2, 5, 1)))
    max_iter = pick(args, STEP_BUDGET, None, 500)
    budget = "theorem's count" if max_iter is None else f"{max_iter:,}"
    print(f"Seed 004, Theorem 3.2 (eq. 13 vs 14): n={N_SAMPLES:,}, radius={RADIUS:g}, "
          f"epsilon={EPSILON:g}, delta={DELTA:g}, squared loss, steps: {budget}, "
          f"{len(seeds)} noise seeds.")
    results = run(dims, seeds, max_iter)
    print_table("Excess empirical risk against p",
                ["p", "set", "Gaussian width (unit set)", "T", "step", "excess (mean)", "std",
                 "noiseless floor", "noise part"], table_rows(results, dims))
    print_table(f"Growth from p={dims[0]} to p={dims[-1]}",
                ["set", "total excess ratio", "predicted ratio", "log-log slope of total"],
                growth_rows(results, dims))
    print_reading(results, dims)
    save_figure(plot(results, dims), args.out, FIGURE)
    if args.data is not None:
        bin_counts = pick(args, [2, 4, 16, 32], [2, 4, 16, 32, 128], [2, 4])
        results, n, zero_risk = real_run(args.data, bin_counts, seeds, max_iter)
        dims = [8 * k for k in bin_counts]
        print(f"\nReal data: cal_housing, all n={n:,} rows; the 8 features of "
              "reproduce_seed004_frank_wolfe_rate.cal_housing (public ranges to [-1, 1]), each "
              f"one-hot over {', '.join(map(str, bin_counts))} equal bins of [-1, 1] "
              "(p = 8 x bins), rows divided by sqrt(8) (norm exactly 1); target "
              f"value / top-code to [-1, 1], y_bound={REAL_Y_BOUND:g}; radius={RADIUS:g}, "
              f"epsilon={EPSILON:g}, delta={DELTA:g}, steps: {budget}, {len(seeds)} noise seeds.")
        print_table("cal_housing: excess empirical risk against p (binned features)",
                    ["p", "set", "Gaussian width (unit set)", "T", "step", "excess (mean)",
                     "std", "noiseless floor", "noise part"], table_rows(results, dims))
        print_table("cal_housing: constrained optimum (non-private) per ball; the zero "
                    f"model's risk is {zero_risk:.4g}",
                    ["p", "set", "optimal risk", "optimum's FW gap"],
                    [[p, c, results[(c, p)]["best"], results[(c, p)]["gap"]]
                     for p in dims for c in CONSTRAINTS])
        print_table(f"cal_housing: growth from p={dims[0]} to p={dims[-1]}",
                    ["set", "total excess ratio", "predicted ratio", "log-log slope of total"],
                    growth_rows(results, dims))
        print_reading(results, dims)
        print_noise_growth(results, dims)
        title = f"cal_housing, binned features: L1 vs L2 ball, radius {RADIUS:g} (n={n:,})"
        save_figure(plot(results, dims, title), args.out, REAL_FIGURE)
    watch.report()


if __name__ == "__main__":
    sys.exit(main())
