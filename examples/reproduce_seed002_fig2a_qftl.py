"""Reproduce seed 002, Figure 2(a): average regret of private FTL against epsilon.

Seed 002 (Jain, Kothari and Thakurta 2012), Appendix G.1 and Figure 2(a):
online ridge regression with PQFTL (Algorithms 4-5) on synthetic data, d = 10,
T = 100,000, alpha = 1, a model released after every sample; average regret
(regret / T) against epsilon, next to non-private follow-the-leader.

Setting. Features v_t ~ N(0, I/d), a fixed x* = (1, ..., 1)/sqrt(d), targets
y_t = v_t^T x* + N(0, 0.01^2) (the seed: "standard variance 0.01"); losses
f_t(x) = 1/2 (y_t - v_t^T x)^2 + alpha/2 ||x||^2. x_t is the model released
before sample t (x_1 = 0); the comparator is the exact ridge minimiser of
sum_t f_t. Clipping bounds come from the generating distribution, never from
the sample: data_norm = 2 (P(||v|| > 2) = P(chi2_10 > 40) = 1.7e-5) and
y_bound = 1.5 (4.7 standard deviations of y); the losses use the clipped
stream, which is exactly what every method sees.

Curves:

* ``PrivateQFTLRegressor`` streamed with ``partial_fit``, one row per call
  (a release after every sample), ``horizon=T``, ``prefix_sums="auto"``,
  delta = 1e-6: the library's joint (V, u) calibration with exact accounting.
* The seed's own calibration, coded here only: two binary trees at
  (epsilon/2, delta/2), node noise sigma = R_arg / (epsilon/2) * ln T *
  sqrt(ln(ln T / (delta/2))) (Alg. 5, line 3) with R_arg = R^2 for V and R for
  u, R = max(data_norm, y_bound) = 2, and the plain solve of Alg. 4, line 9
  ("as published"). NOTE: that calibration is *not* private: the u-tree's
  atoms y v have norm up to R^2, not R (doc/privacy.md lists the
  correction). It is plotted as the paper's curve, not as a competitor.
* The same as-published noise with the library's eigenvalue-clipped solve
  (``_core.qftl.ridge_from_statistics``), to separate calibration from solver.
* Non-private FTL, x_{t+1} = (t alpha I + V_t)^{-1} u_t.

Command (from the repository root)::

    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2a_qftl.py            # T = 5,000, ~1-2 min
    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2a_qftl.py --full     # T = 100,000, 2 seeds, ~25 min
    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2a_qftl.py --smoke    # T = 256, seconds

The default size is T = 5,000 (one seed) because the estimator is driven
through its public ``partial_fit``, about 1.2 ms per one-row call (20,000 calls
for the four epsilons, ~30 s of CPU); the average regret at T = 5,000 is
larger than at the paper's T = 100,000 (the early, noisy releases weigh more).
One seed at T = 100,000 took 8 min of CPU (12.7 min on the shared 2 cores).
Writes ``doc/images/seed002_fig2a_qftl_regret.png`` (always the synthetic
figure).

Real data (``--data DIR``). After the synthetic figure, the same four curves
on a real regression stream: California housing (``cal_housing.data.gz``),
the 8 derived features of ``reproduce_seed004_frank_wolfe_rate.cal_housing``
(longitude, latitude, median age, median income, log rooms and log persons
per household, bedrooms per room, log10 households) mapped to [-1, 1] with
public ranges (California's extent, the file's top codes, plausible household
sizes; values outside are clipped) and divided by sqrt(8), so every row has
norm at most 1 (``data_norm=1``, a bound, never a clip); target = value /
top-code (500,001) mapped to [-1, 1] (``y_bound=1``). No statistic of the data
is used for scaling. The rows are streamed in one fixed random order
(``numpy.random.default_rng(2).permutation``, public randomness), one row per
``partial_fit``, with alpha = 1, delta = 1e-6 and the seed's R =
max(data_norm, y_bound) = 1 for its own calibration; ``--seeds`` varies the
noise, not the order. The default streams all 20,640 rows (``--smoke``: the
first 256); its table is printed after the synthetic ones (with the average
loss of the zero model and of the comparator, for scale) and its figure is
written next to the default one as ``seed002_fig2a_qftl_regret_cal_housing.png``
(only with ``--data``). Command::

    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2a_qftl.py --data ../shared/data

The whole default ``--data`` run (synthetic T = 5,000, then the 20,640-row
stream) took 106 s of CPU (1.8 min wall, 0.4 GB peak) on the shared 2 cores;
the real stream alone about 85 s. With ``--full`` the real stream is the same
20,640 rows with 2 noise seeds. Reading of that run (one noise seed): as on
synthetic data, the seed's as-published calibration is unusable (average
regret 0.43 to 3.5e4), its noise with the library's solve is 1.2 to 3.1 times
the library's stream, and the library's stream goes from 0.10 (epsilon =
0.01) to 3.7e-4 (epsilon = 10), against 2.0e-5 for FTL. With the seed's
alpha = 1 on rows of norm <= 1 the ridge comparator is heavily shrunk: its
average loss (0.1194) is only 0.002 below the zero model's (0.1214), so only
at epsilon = 10 is the private stream's regret below that margin.
"""

import math
import sys

import numpy as np

from _repro import Stopwatch, make_parser, pick, print_table, save_figure
from reproduce_seed004_frank_wolfe_rate import cal_housing
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core.qftl import ridge_from_statistics

D = 10
ALPHA = 1.0
TARGET_NOISE = 0.01
DELTA = 1e-6
DATA_NORM = 2.0
Y_BOUND = 1.5
EPSILONS = (0.01, 0.1, 1.0, 10.0)
FIGURE = "seed002_fig2a_qftl_regret.png"
REAL_FIGURE = "seed002_fig2a_qftl_regret_cal_housing.png"   # only with --data
# cal_housing: cal_housing() maps 8 derived features to [-1, 1] with public ranges, so
# ||v|| <= sqrt(8); dividing by sqrt(8) makes data_norm = 1 a bound, not a clip.
REAL_DATA_NORM = 1.0
REAL_Y_BOUND = 1.0
REAL_ORDER_SEED = 2   # the stream's fixed random order (public randomness)


def synthetic_stream(T, seed):
    """The seed's synthetic stream, clipped to the public bounds."""
    rng = np.random.default_rng([2, seed])
    x_star = np.full(D, 1.0 / math.sqrt(D))
    X = rng.standard_normal((T, D)) / math.sqrt(D)
    y = X @ x_star + TARGET_NOISE * rng.standard_normal(T)
    norms = np.linalg.norm(X, axis=1)
    X *= np.minimum(1.0, DATA_NORM / norms)[:, None]
    return X, np.clip(y, -Y_BOUND, Y_BOUND)


def average_regret(models, X, y):
    """(sum_t f_t(x_t) - min_x sum_t f_t(x)) / T; ``models[t]`` is played on row t."""
    T, d = X.shape
    residual = y - np.einsum("ij,ij->i", X, models)
    played = 0.5 * residual @ residual + 0.5 * ALPHA * np.sum(models * models)
    best = np.linalg.solve(X.T @ X + T * ALPHA * np.eye(d), X.T @ y)
    best_residual = y - X @ best
    comparator = 0.5 * best_residual @ best_residual + 0.5 * T * ALPHA * best @ best
    return float(played - comparator) / T


def played_models(after_each_sample):
    """x_1 = 0, then the model released after sample t is played on sample t + 1."""
    models = np.zeros_like(after_each_sample)
    models[1:] = after_each_sample[:-1]
    return models


def library_stream(X, y, epsilon, seed, data_norm=DATA_NORM, y_bound=Y_BOUND):
    """Models released by one-row ``partial_fit`` calls, and the final estimator."""
    reg = PrivateQFTLRegressor(
        epsilon=epsilon, delta=DELTA, alpha=ALPHA, data_norm=data_norm, y_bound=y_bound,
        fit_intercept=False, horizon=len(y), random_state=seed,
    )
    released = np.empty_like(X)
    for t in range(len(y)):
        reg.partial_fit(X[t : t + 1], y[t : t + 1])
        released[t] = reg.coef_
    return released, reg


def exact_prefix_statistics(X, y):
    """V_t (flattened d x d) and u_t for t = 1..T."""
    d = X.shape[1]
    V = np.cumsum((X[:, :, None] * X[:, None, :]).reshape(len(y), d * d), axis=0)
    return V, np.cumsum(X * y[:, None], axis=0)


def ftl_models(X, y):
    """Non-private FTL: (t alpha I + V_t)^{-1} u_t after each sample t."""
    V, u = exact_prefix_statistics(X, y)
    d = X.shape[1]
    return plain_solve(V.reshape(-1, d, d), u)


def plain_solve(V, u):
    """Alg. 4, line 9, for every t at once: (t alpha I + V_t)^{-1} u_t."""
    t = np.arange(1, len(u) + 1, dtype=float)
    A = V + (t * ALPHA)[:, None, None] * np.eye(u.shape[1])
    try:
        return np.linalg.solve(A, u[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:   # an exactly singular noisy draw: least squares per t
        return np.array([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(A, u)])


def paper_sigma(T, epsilon, bound):
    """Alg. 5, line 3, for one tree at (epsilon/2, delta/2)."""
    eps, delta = epsilon / 2, DELTA / 2
    return bound / eps * math.log(T) * math.sqrt(math.log(math.log(T) / delta))


def tree_noise(T, width, sigma, rng):
    """Noise on the prefix sum at every t = 1..T of a tree that noises every node.

    The prefix [1, t] is the union of one dyadic block per set bit h of t, and
    the block of level h used at t is identified by ``t >> h`` (shared by every
    t with the same high bits, as in Alg. 5's tree).
    """
    t = np.arange(1, T + 1)
    total = np.zeros((T, width))
    for level in range(T.bit_length()):
        nodes = sigma * rng.standard_normal(((T >> level) + 1, width))
        uses = ((t >> level) & 1).astype(bool)
        total[uses] += nodes[t[uses] >> level]
    return total


def paper_releases(X, y, epsilon, seed, data_norm=DATA_NORM, y_bound=Y_BOUND):
    """The seed's PQFTL as published (plain solve) and with the library's solve."""
    T, d = X.shape
    paper_r = max(data_norm, y_bound)   # Alg. 4, line 2: one bound for ||v|| and |y|
    rng = np.random.default_rng([202, seed, round(epsilon * 1000)])
    sigma_V, sigma_u = paper_sigma(T, epsilon, paper_r**2), paper_sigma(T, epsilon, paper_r)
    V, u = exact_prefix_statistics(X, y)
    V_hat = (V + tree_noise(T, d * d, sigma_V, rng)).reshape(T, d, d)
    u_hat = u + tree_noise(T, d, sigma_u, rng)
    as_published = plain_solve(V_hat, u_hat)
    # The library's solve needs a symmetric V; symmetrising is post-processing, and
    # leaves std sigma_V * sqrt(nodes summed) on each diagonal entry.
    V_sym = 0.5 * (V_hat + V_hat.transpose(0, 2, 1))
    nodes_summed = np.array([bin(t).count("1") for t in range(1, T + 1)])
    robust = np.array([
        ridge_from_statistics(V_sym[i], u_hat[i], i + 1, ALPHA, data_norm, y_bound,
                              sigma_V * math.sqrt(nodes_summed[i]))
        for i in range(T)
    ])
    return as_published, robust, sigma_V, sigma_u


def compare(X, y, seed, epsilons, regret, noise, guarantees,
            data_norm=DATA_NORM, y_bound=Y_BOUND):
    """Every method on one stream; appends to ``regret`` and fills ``noise``, ``guarantees``."""
    regret.setdefault("FTL", []).append(average_regret(played_models(ftl_models(X, y)), X, y))
    for eps in epsilons:
        released, reg = library_stream(X, y, eps, seed, data_norm, y_bound)
        regret.setdefault(("PQFTL", eps), []).append(
            average_regret(played_models(released), X, y))
        as_published, robust, sigma_V, sigma_u = paper_releases(X, y, eps, seed,
                                                                data_norm, y_bound)
        regret.setdefault(("paper", eps), []).append(
            average_regret(played_models(as_published), X, y))
        regret.setdefault(("paper noise, library solve", eps), []).append(
            average_regret(played_models(robust), X, y))
        noise[eps] = (reg.noise_scale_, reg.sensitivity_, sigma_V, sigma_u)
        # The headline of the guarantee: "(eps, delta)-DP [mu-GDP]".
        headline = str(reg.privacy_).split(" under ")[0]
        guarantees[eps] = f"{headline}, {reg.privacy_.n_releases:,} releases"


def run(T, seeds, epsilons):
    """Average regret per method and epsilon (mean over seeds), plus noise levels."""
    regret, noise, guarantees = {}, {}, {}
    for seed in seeds:
        X, y = synthetic_stream(T, seed)
        compare(X, y, seed, epsilons, regret, noise, guarantees)
    return {key: float(np.mean(values)) for key, values in regret.items()}, noise, guarantees


def real_stream(data_dir, T):
    """The first ``T`` rows of cal_housing in a fixed random order, public scaling only."""
    X, y = cal_housing(data_dir)   # features and target in [-1, 1], clipped to public ranges
    X = X / math.sqrt(X.shape[1])
    order = np.random.default_rng(REAL_ORDER_SEED).permutation(len(y))[:T]
    return np.ascontiguousarray(X[order]), np.clip(y[order], -REAL_Y_BOUND, REAL_Y_BOUND)


def real_run(data_dir, T, seeds, epsilons):
    """``run`` on the cal_housing stream: one fixed order, ``seeds`` vary the noise."""
    X, y = real_stream(data_dir, T)
    regret, noise, guarantees = {}, {}, {}
    for seed in seeds:
        compare(X, y, seed, epsilons, regret, noise, guarantees,
                data_norm=REAL_DATA_NORM, y_bound=REAL_Y_BOUND)
    # For scale: the average loss of x = 0 and of the comparator (the ridge minimiser).
    T, d = X.shape
    best = np.linalg.solve(X.T @ X + T * ALPHA * np.eye(d), X.T @ y)
    residual = y - X @ best
    losses = (float(0.5 * np.mean(y * y)),
              float(0.5 * residual @ residual / T + 0.5 * ALPHA * best @ best))
    return ({key: float(np.mean(values)) for key, values in regret.items()}, noise, guarantees,
            T, d, losses)


def report(title, regret, noise, guarantees, epsilons):
    rows = [[f"{eps:g}", regret[("PQFTL", eps)], regret[("paper", eps)],
             regret[("paper noise, library solve", eps)], regret["FTL"]] for eps in epsilons]
    print_table(title,
                ["epsilon", "PrivateQFTLRegressor", "seed's calibration, as published",
                 "seed's noise, library solve", "non-private FTL"], rows)
    rows = [[f"{eps:g}", noise[eps][0], noise[eps][1], noise[eps][2], noise[eps][3],
             guarantees[eps]] for eps in epsilons]
    print_table("Noise per tree node (per coordinate)",
                ["epsilon", "library node std", "library joint sensitivity",
                 "seed sigma_V", "seed sigma_u", "library privacy_"], rows)


def plot(regret, epsilons, T, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.2))
    curves = (("PQFTL", "PrivateQFTLRegressor (partial_fit, horizon=T)", "o-"),
              ("paper", "seed's calibration, as published (not private)", "s--"),
              ("paper noise, library solve", "seed's noise, library's solve", "^:"))
    for key, label, style in curves:
        ax.plot(epsilons, [regret[(key, e)] for e in epsilons], style, label=label)
    ax.axhline(regret["FTL"], color="k", lw=1, label="non-private FTL")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon (delta = 1e-6)")
    ax.set_ylabel("average regret (regret / T)")
    ax.set_title(title or f"Seed 002, Fig. 2(a): d={D}, T={T:,}, alpha={ALPHA:g}")
    ax.legend(fontsize=8, loc="center right")
    return fig


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    watch = Stopwatch()
    T = pick(args, 5_000, 100_000, 256)
    seeds = list(range(args.seeds or pick(args, 1, 2, 1)))
    print(f"Seed 002, Figure 2(a): d={D}, T={T:,}, alpha={ALPHA:g}, delta={DELTA:g}, "
          f"seeds {seeds}; data_norm={DATA_NORM:g}, y_bound={Y_BOUND:g} (public bounds).")
    regret, noise, guarantees = run(T, seeds, EPSILONS)
    report(f"Average regret (mean over {len(seeds)} seed(s))", regret, noise, guarantees,
           EPSILONS)
    save_figure(plot(regret, EPSILONS, T), args.out, FIGURE)
    if args.data is not None:
        T_real = pick(args, None, None, 256)   # None: all 20,640 rows
        regret, noise, guarantees, T_real, d, losses = real_run(args.data, T_real, seeds,
                                                                EPSILONS)
        print(f"\nReal data: cal_housing, the first {T_real:,} rows of a fixed random order "
              f"(seed {REAL_ORDER_SEED}), d={d} features mapped to [-1, 1] by public ranges "
              f"and divided by sqrt({d}), target to [-1, 1] by its top-code; "
              f"data_norm={REAL_DATA_NORM:g}, y_bound={REAL_Y_BOUND:g}, alpha={ALPHA:g}. "
              f"Average loss f_t of the zero model {losses[0]:.4g}, of the comparator "
              f"{losses[1]:.4g}.")
        report(f"cal_housing: average regret (mean over {len(seeds)} noise seed(s))", regret,
               noise, guarantees, EPSILONS)
        title = f"Fig. 2(a) setting on cal_housing: d={d}, T={T_real:,}, alpha={ALPHA:g}"
        save_figure(plot(regret, EPSILONS, T_real, title), args.out, REAL_FIGURE)
    watch.report()


if __name__ == "__main__":
    sys.exit(main())
