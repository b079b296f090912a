"""Benchmark ParameterFreeLocalDPRegressor (issue 7): seed 001's first scenario.

Setting (synthetic, no private data is read). A stream of ``T`` users, online
linear regression with the absolute loss ``l_t(w) = |<w, (x_t, 1)> - y_t|``:

* ``d = 5`` features uniform on ``[-1, 1]`` plus the intercept (6 gradient
  coordinates). The subgradient ``sign(r) (x_t, 1)`` has every coordinate in
  ``[-1, 1]``, so the users' clipping to ``[-1, 1]`` (Lemma 1) never changes it
  (the script checks this) and the reports are unbiased for the true subgradients;
* a fixed comparator ``u = (1, -2, 0.5, 0, 1.5; intercept 0.5)``
  (``||u||_2 = 2.78``, ``||u||_inf = 2``), ``y_t = <u, (x_t, 1)> + 0.1 N(0, 1)``;
* **user-chosen privacy** ("UC"): ``ceil(ln T)`` users, at positions drawn
  uniformly at random without replacement (fresh per seed), ask for
  ``epsilon = 1`` (local Laplace randomiser, uniform split over the 6
  coordinates: Laplace scale 12 per coordinate); all others choose
  ``sample_epsilon = inf`` (no noise);
* **all private** ("AP"): every user at ``epsilon = 1``. Both runs start from
  the same exact-sampler state (the one ``fit(random_state=seed)`` draws; the
  noise is exact Laplace on a grid, doc/privacy.md section 14); "none" (every
  user at ``inf``) is a reference.

Average regret ``(1/T) sum_t (l_t(w_t) - l_t(u))``, ``w_t`` the iterate
*played* in round ``t``, mean +- std over seeds.

Baselines (not parameter-free), each given a radius ``D`` misjudged by a factor
0.01 or 100 (and, as a reference only, the right one, factor 1):

* projected OGD on the L2 ball of radius ``D = factor * ||u||_2``,
  ``eta_t = 2 D / (G sqrt(t))`` (Zinkevich; ``2D`` is the diameter), with
  ``G = sqrt(6)``, the L2 bound of a clipped gradient -- the same ``G`` the
  parameter-free reduction uses by default; neither learner knows the noise;
* diagonal AdaGrad (Duchi et al. 2011) on the box ``[-D, D]^6``,
  ``D = factor * ||u||_inf`` (the L_inf radius its theory and the seed's
  section 4 use), ``w_{t+1,j} = clip(w_tj - eta g~_tj / sqrt(sum_{s<=t} g~_sj^2), -D, D)``
  with ``eta = sqrt(2) D`` (Duchi et al., Cor. 6, ``eta = D_inf / sqrt(2)`` with
  the box diameter ``D_inf = 2D``). The coordinate-wise clipping is the exact
  projection in AdaGrad's (diagonal) norm.

The baselines see **the same reports as the user-chosen-privacy run**: the same
users are private, with noise from the same starting sampler state, added by the
library's own user kernel to the clipped subgradient at the baseline's own iterate (a report
is always of the gradient at the iterate the learner plays). A second table
feeds them the all-private reports.

How the learner is driven. The estimator publishes only the average (or the
next) iterate, not the per-round played iterates, so the stream is run by a
numba loop here that calls the library's own kernels in the order of
``_pf_kernels.run_coordinate_protocol`` / ``run_reduction_protocol``
(``learner_*_predict`` -> ``user_report`` -> ``learner_*_update``) and also
records the loss at each played iterate. Two checks tie it to the estimator:
(1) after the loop the learner state and the averaged model equal, bit for bit,
``ParameterFreeLocalDPRegressor(random_state=seed).fit(X, y, sample_epsilon)``;
(2) on a prefix, the played iterates equal those of the public API:
``partial_fit`` one row at a time with ``average=False`` publishes ``w_{t+1}``.

Run from anywhere::

    python benchmarks/bench_parameter_free.py            # T = 1e3, 1e4, 1e5, 5 seeds, < 1 min
    python benchmarks/bench_parameter_free.py --full     # adds T = 1e6
    python benchmarks/bench_parameter_free.py --sizes 1e3 1e4 --seeds 0 1 2
"""

import argparse
import math
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Benchmark the working tree, whether or not the package is installed.
sys.path.insert(0, str(ROOT))

import sklearn
from numba import njit

import sklearn_dpol
from sklearn_dpol import ParameterFreeLocalDPRegressor
from sklearn_dpol._base import make_generator
from sklearn_dpol._core import _pf_kernels as pfk
from sklearn_dpol._core import parameter_free as pf
from sklearn_dpol._core._exact_kernels import WORKSPACE_DIGITS
from sklearn_dpol._core.local_randomizers import normalise_feature_weights
from sklearn_dpol._core.noise import sampler_state

U_COEF = np.array([1.0, -2.0, 0.5, 0.0, 1.5])
U_INTERCEPT = 0.5
U = np.append(U_COEF, U_INTERCEPT)  # comparator on the augmented (x, 1)
N_FEATURES = U_COEF.shape[0]
N_DIMS = N_FEATURES + 1
Y_NOISE = 0.1
EPSILON = 1.0
G_L2 = math.sqrt(N_DIMS)  # L2 bound of a clipped gradient (coordinates in [-1, 1])
FACTORS = (0.01, 1.0, 100.0)
ABSOLUTE = 0  # _pf_kernels loss code


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def fmt(x, digits=3):
    return f"{x:.{digits}g}" if np.isfinite(x) else str(x)


def mean_std(values):
    values = list(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{fmt(statistics.fmean(values))} +- {fmt(sd, 2)}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    print("\n".join(lines) + "\n", flush=True)


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

def placement_epsilons(T, how, rng):
    """``ceil(ln T)`` users at ``epsilon``, the rest ``inf``; positions by ``how``."""
    k = math.ceil(math.log(T))
    if how == "random":
        positions = np.sort(rng.choice(T, size=k, replace=False))
    elif how == "first":
        positions = np.arange(k)
    else:  # "spread": evenly spaced, the first at round 0
        positions = (np.arange(k) * T) // k
    eps = np.full(T, np.inf)
    eps[positions] = EPSILON
    return eps, positions


def make_stream(T, seed):
    """Features, targets, private positions (UC) and the users' sampler state.

    The state is exactly the one ``fit(random_state=seed)`` draws
    (``sampler_state(make_generator(seed, purpose=0))``); runs use copies of it.
    """
    rng = np.random.default_rng([1, seed, T])
    X = rng.uniform(-1.0, 1.0, size=(T, N_FEATURES))
    y = X @ U_COEF + U_INTERCEPT + Y_NOISE * rng.standard_normal(T)
    eps_uc, private = placement_epsilons(T, "random", rng)
    state = sampler_state(make_generator(seed, purpose=0))
    return X, y, eps_uc, state, private


# ---------------------------------------------------------------------------
# Runs (numba; the user side is always the library's own ``user_report``)
# ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _abs_loss(w, x, y):
    d = w.shape[0]
    r = w[d - 1] - y
    for j in range(x.shape[0]):
        r += w[j] * x[j]
    return abs(r)


@njit(cache=True)
def run_pf(method, X, y, u, state, epsilons, weights, L, S, scalars, z, w_sum,
           C, b, prior, log_z, played):
    """The library's protocol loop, recording sum_t l_t(w_t) - l_t(u).

    ``method`` 0: coordinate (state L, S); 1: reduction (state scalars, z).
    ``played`` (n_record, d): the first n_record played iterates are stored.
    ``state``: the users' exact-sampler state, advanced in place.
    Returns (cumulative regret, max |w_tj|, number of clipped gradient coordinates).
    """
    d = w_sum.shape[0]
    w = np.empty(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    regret = 0.0
    w_max = 0.0
    n_clipped = 0
    for i in range(X.shape[0]):
        if method == 0:
            pfk.learner_coordinate_predict(L, S, C, b, prior, log_z, w)
        else:
            pfk.learner_reduction_predict(scalars, z, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
            w_max = max(w_max, abs(w[j]))
        if i < played.shape[0]:
            played[i] = w
        loss_w = _abs_loss(w, X[i], y[i])
        regret += loss_w - _abs_loss(u, X[i], y[i])
        # |sign(r) x_j| <= 1 for this data, so clipping must be inactive; count otherwise.
        for j in range(X.shape[1]):
            if abs(X[i, j]) > 1.0:
                n_clipped += 1
        pfk.user_report(w, X[i], y[i], True, ABSOLUTE, 1.0, epsilons[i], weights, scales,
                        ws, state, report)
        if method == 0:
            pfk.learner_coordinate_update(L, S, report)
        else:
            pfk.learner_reduction_update(scalars, z, report)
    return regret, w_max, n_clipped


@njit(cache=True)
def run_ogd(X, y, u, state, epsilons, weights, radius, G):
    """Projected OGD on the L2 ball of ``radius``, eta_t = 2 radius / (G sqrt t)."""
    d = u.shape[0]
    w = np.zeros(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    regret = 0.0
    for i in range(X.shape[0]):
        regret += _abs_loss(w, X[i], y[i]) - _abs_loss(u, X[i], y[i])
        pfk.user_report(w, X[i], y[i], True, ABSOLUTE, 1.0, epsilons[i], weights, scales,
                        ws, state, report)
        eta = 2.0 * radius / (G * math.sqrt(i + 1.0))
        norm_sq = 0.0
        for j in range(d):
            w[j] -= eta * report[j]
            norm_sq += w[j] * w[j]
        if norm_sq > radius * radius:
            shrink = radius / math.sqrt(norm_sq)
            for j in range(d):
                w[j] *= shrink
    return regret


@njit(cache=True)
def run_adagrad(X, y, u, state, epsilons, weights, radius):
    """Diagonal AdaGrad on the box [-radius, radius]^d, eta = sqrt(2) radius."""
    d = u.shape[0]
    w = np.zeros(d)
    sq = np.zeros(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    eta = math.sqrt(2.0) * radius
    regret = 0.0
    for i in range(X.shape[0]):
        regret += _abs_loss(w, X[i], y[i]) - _abs_loss(u, X[i], y[i])
        pfk.user_report(w, X[i], y[i], True, ABSOLUTE, 1.0, epsilons[i], weights, scales,
                        ws, state, report)
        for j in range(d):
            sq[j] += report[j] * report[j]
            if sq[j] > 0.0:
                w[j] = min(max(w[j] - eta * report[j] / math.sqrt(sq[j]), -radius), radius)
    return regret


def pf_run(method, X, y, epsilons, state, n_record=0):
    """Average regret of the library's learner (default G, conjugate prior, b=1)."""
    G = 1.0 if method == pf.COORDINATE else G_L2  # the estimator's defaults
    learner = pf.make_learner(method, N_DIMS, G=G, prior=pf.CONJUGATE, b=1.0)
    weights = normalise_feature_weights(None, N_DIMS)
    is_coord = method == pf.COORDINATE
    dummy = np.zeros(N_DIMS)
    played = np.zeros((n_record, N_DIMS))
    regret, w_max, n_clipped = run_pf(
        0 if is_coord else 1, X, y, U, state.copy(), epsilons, weights,
        learner.L if is_coord else dummy, learner.S if is_coord else dummy,
        dummy if is_coord else learner.scalars, dummy if is_coord else learner.z,
        learner.w_sum, *learner._config(), played)
    learner.t += X.shape[0]
    return regret / X.shape[0], w_max, n_clipped, learner, played


# ---------------------------------------------------------------------------
# Checks against the estimator
# ---------------------------------------------------------------------------

def check_against_estimator(T, seed):
    """(1) fit bit for bit; (2) played iterates == partial_fit(average=False) on a prefix."""
    X, y, eps_uc, state, _ = make_stream(T, seed)
    for method in (pf.COORDINATE, pf.REDUCTION):
        _, _, _, learner, _ = pf_run(method, X, y, eps_uc, state)
        est = ParameterFreeLocalDPRegressor(method=method, prior="conjugate", random_state=seed)
        est.fit(X, y, sample_epsilon=eps_uc)
        fitted = est._learner.state()
        for key, value in learner.state().items():
            if not np.array_equal(value, fitted[key]):
                raise AssertionError(f"{method}: learner state {key} differs from fit")
        avg = learner.average()
        if not (np.array_equal(avg[:N_FEATURES], est.coef_) and avg[-1] == est.intercept_):
            raise AssertionError(f"{method}: averaged model differs from fit's coef_")
    # (2) public API, one row per partial_fit call; one sampler state from purpose=1,
    # drawn by the first call and advanced call after call (so one loop run equals it).
    n = min(T, 300)
    state_pf = sampler_state(make_generator(seed, purpose=1))
    for method in (pf.COORDINATE, pf.REDUCTION):
        _, _, _, _, played = pf_run(method, X[:n], y[:n], eps_uc[:n], state_pf, n_record=n)
        est = ParameterFreeLocalDPRegressor(method=method, prior="conjugate", average=False,
                                            random_state=seed)
        api = [np.zeros(N_DIMS)]  # w_1 = 0 (L = 0)
        for i in range(n - 1):
            est.partial_fit(X[i:i + 1], y[i:i + 1], sample_epsilon=eps_uc[i:i + 1])
            api.append(np.append(est.coef_, est.intercept_))
        if not np.array_equal(np.array(api), played):
            raise AssertionError(f"{method}: played iterates differ from partial_fit's")
    return n


# ---------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------

def run_size(T, seed):
    X, y, eps_uc, state, _ = make_stream(T, seed)
    eps_ap = np.full(T, EPSILON)
    eps_none = np.full(T, np.inf)
    weights = normalise_feature_weights(None, N_DIMS)
    out = {}
    for method in (pf.COORDINATE, pf.REDUCTION):
        for name, eps in (("UC", eps_uc), ("AP", eps_ap), ("none", eps_none)):
            avg_regret, w_max, n_clipped, learner, _ = pf_run(method, X, y, eps, state)
            if n_clipped:
                raise AssertionError("clipping was active; the data should prevent it")
            out[(method, name)] = avg_regret
            out[(method, name, "w_max")] = w_max
            out[(method, name, "w_final")] = learner.predict()
    norm2, norm_inf = np.linalg.norm(U), np.max(np.abs(U))
    for name, eps in (("UC", eps_uc), ("AP", eps_ap)):
        for f in FACTORS:
            out[("ogd", f, name)] = run_ogd(X, y, U, state.copy(), eps, weights,
                                            f * norm2, G_L2) / T
            out[("adagrad", f, name)] = run_adagrad(X, y, U, state.copy(), eps, weights,
                                                    f * norm_inf) / T
    for how in ("first", "spread"):
        eps, _ = placement_epsilons(T, how, None)
        for method in (pf.COORDINATE, pf.REDUCTION):
            out[(method, "UC-" + how)] = pf_run(method, X, y, eps, state)[0]
    out["zero"] = float(np.mean(np.abs(y) - np.abs(y - X @ U_COEF - U_INTERCEPT)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add T = 1e6")
    parser.add_argument("--sizes", type=float, nargs="+", default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--skip-check", action="store_true",
                        help="skip the bit-for-bit checks against the estimator")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ([1e3, 1e4, 1e5] + ([1e6] if args.full else [])))]
    seeds = args.seeds
    start = time.perf_counter()

    cli = sys.argv[1:] if argv is None else list(argv)
    print(f"Command: python {shlex.join(['benchmarks/bench_parameter_free.py'] + cli)}")
    print(f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}, sklearn_dpol {sklearn_dpol.__version__}\n")
    print(f"d = {N_FEATURES} features + intercept, u = {U.tolist()} (||u||_2 = "
          f"{np.linalg.norm(U):.3f}, ||u||_inf = {np.max(np.abs(U)):g}), y noise std "
          f"{Y_NOISE}, epsilon = {EPSILON} (uniform split: Laplace scale "
          f"{2 * N_DIMS / EPSILON:g} per coordinate), seeds {seeds}.")
    print("UC: ceil(ln T) users at uniformly random positions at epsilon=1, the rest inf; "
          "AP: all at epsilon=1; none: all inf. Every run starts from the same sampler state.\n")

    if not args.skip_check:
        t0 = time.perf_counter()
        log("checking the loop against the estimator")
        for T in (1000, 10_000):
            n = check_against_estimator(T, seeds[0])
        print(f"Check passed ({time.perf_counter() - t0:.1f} s): for T = 1e3 and 1e4 (seed "
              f"{seeds[0]}, UC, both methods) the loop's learner state and averaged model "
              f"equal `fit`'s bit for bit, and its first {n} played iterates equal those "
              "published by `partial_fit` one row at a time with `average=False`.\n")

    run_size(50, seeds[0])  # compile (or load) the numba kernels outside the timings
    results = {}
    timings = {}
    for T in sizes:
        t0 = time.perf_counter()
        for seed in seeds:
            results[(T, seed)] = run_size(T, seed)
        timings[T] = time.perf_counter() - t0
        log(f"T={T:.0e}: {timings[T]:.1f} s")

    def col(T, key):
        return [results[(T, s)][key] for s in seeds]

    # Table 1: criterion (a).
    rows = []
    for T in sizes:
        row = [f"{T:.0e}", math.ceil(math.log(T))]
        for method in (pf.COORDINATE, pf.REDUCTION):
            uc, ap = col(T, (method, "UC")), col(T, (method, "AP"))
            ratios = [a / c for a, c in zip(ap, uc)]
            row += [mean_std(uc), mean_std(ap),
                    (f"{fmt(statistics.fmean(ap) / statistics.fmean(uc))} "
                     f"(min {fmt(min(ratios))})"),
                    mean_std(col(T, (method, "none")))]
        row += [mean_std(col(T, "zero")), f"{timings[T]:.1f}"]
        rows.append(row)
    print("Table 1: average regret (1/T) sum_t l_t(w_t) - l_t(u) of the parameter-free "
          f"learner, mean +- std over {len(seeds)} seeds; ratio = mean(AP)/mean(UC) "
          "(min over seeds of the per-seed ratio)\n")
    table(["T", "# private (UC)",
           "coordinate UC", "coordinate AP", "AP/UC", "coordinate none",
           "reduction UC", "reduction AP", "AP/UC", "reduction none", "w = 0 (reference)",
           "time, all runs (s)"],
          rows)

    # Tables 2 and 3: criterion (b).
    titles = {"UC": "the user-chosen-privacy reports (ceil(ln T) users at epsilon=1)",
              "AP": "the all-private reports (for information)"}
    for noise, title in titles.items():
        rows = []
        for T in sizes:
            row = [f"{T:.0e}", mean_std(col(T, (pf.COORDINATE, noise))),
                   mean_std(col(T, (pf.REDUCTION, noise)))]
            for algo in ("ogd", "adagrad"):
                row += [mean_std(col(T, (algo, f, noise))) for f in FACTORS]
            rows.append(row)
        print(f"Table {2 if noise == 'UC' else 3}: average regret, every learner fed "
              f"{title}; D = factor x ||u|| (OGD: L2 ball, ||u||_2; AdaGrad: box, ||u||_inf). "
              "Factor 1 is the oracle radius, shown for reference only.\n")
        table(["T", "PF coordinate", "PF reduction",
               "OGD D/100", "OGD D (oracle)", "OGD 100D",
               "AdaGrad D/100", "AdaGrad D (oracle)", "AdaGrad 100D"], rows)

    # Placement sensitivity.
    rows = []
    for T in sizes:
        row = [f"{T:.0e}"]
        for method in (pf.COORDINATE, pf.REDUCTION):
            row += [mean_std(col(T, (method, key))) for key in ("UC", "UC-spread", "UC-first")]
        rows.append(row)
    print("Placement of the ceil(ln T) private users (UC): uniformly random (the "
          "benchmark's choice, Tables 1-2), evenly spread (first at round 1), or the first "
          "ceil(ln T) rounds; average regret, mean +- std\n")
    table(["T", "coordinate random", "coordinate spread", "coordinate first",
           "reduction random", "reduction spread", "reduction first"], rows)

    # Diagnostics: largest |w_tj| (the 1e100 cap) and final iterate.
    rows = []
    for T in sizes:
        for method in (pf.COORDINATE, pf.REDUCTION):
            for name in ("UC", "AP"):
                w_max = max(col(T, (method, name, "w_max")))
                err = [np.linalg.norm(w - U) for w in col(T, (method, name, "w_final"))]
                rows.append([f"{T:.0e}", method, name, fmt(w_max), mean_std(err)])
    print("Diagnostics: largest |w_tj| played (any seed) and ||w_{T+1} - u||_2 "
          "(mean +- std)\n")
    table(["T", "method", "reports", "max |w_tj|", "||w_{T+1} - u||"], rows)

    # Criteria.
    T_a = 100_000 if 100_000 in sizes else max(sizes)
    print(f"Criteria at T = {T_a:.0e}:")
    for method in (pf.COORDINATE, pf.REDUCTION):
        uc, ap = col(T_a, (method, "UC")), col(T_a, (method, "AP"))
        ratio = statistics.fmean(ap) / statistics.fmean(uc)
        per_seed = min(a / c for a, c in zip(ap, uc))
        print(f"* (a) {method}: mean AP / mean UC = {ratio:.3g} (per-seed min {per_seed:.3g}); "
              f"{'HOLDS' if ratio >= 3 else 'FAILS'} (needs >= 3)")
    for T in sizes:
        for method in (pf.COORDINATE, pf.REDUCTION):
            ours = statistics.fmean(col(T, (method, "UC")))
            others = {f"{algo} x{f:g}": statistics.fmean(col(T, (algo, f, "UC")))
                      for algo in ("ogd", "adagrad") for f in (0.01, 100.0)}
            beaten = [k for k, v in others.items() if ours < v]
            lost = [k for k, v in others.items() if ours >= v]
            print(f"* (b) T = {T:.0e}, {method} (UC reports): beats {len(beaten)}/4 "
                  f"misjudged baselines" + (f"; not {lost}" if lost else ""))
    print(f"\nTotal time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
