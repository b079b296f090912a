"""Benchmark PrivateMirrorDescentRegressor: excess risk per constraint set, protein R^2, speed.

Three parts, printed as Markdown tables:

1. Synthetic data where the set matters (dense truth for ``l2``, sparse truth
   for ``l1`` and ``simplex``, group-sparse truth for ``group_l1``): excess
   empirical risk ``L(theta_priv; D) - min_{theta in C} L(theta; D)`` against
   epsilon (delta = 1e-6), mean +- std over noise seeds, for the library's
   calibration ("ours") and for the SAME algorithm, same ``T`` and same step
   size rule, with the noise scale replaced by the seed's Algorithm 1 formula
   ``paper_noise_scale`` ("paper"; benchmark only, the paper's calibration,
   patched into the core module for those runs only). The ratio paper/ours of
   the mean excess risks is the figure of merit (issue target: >= 5). The
   constrained optimum is computed by FISTA with restarts on the exact
   objective (certified by its Frank-Wolfe duality gap) and cross-checked
   with scipy's SLSQP on a smooth reformulation of each set and with the
   estimator itself at epsilon=inf. Both the squared loss (all seeds, fast:
   the library uses the Gram matrix) and the Huber loss are reported.
2. UCI CASP protein (``trefor_protein.csv.gz``): test R^2 against epsilon for
   both solvers, next to non-private scikit-learn ``Ridge`` and
   ``HuberRegressor`` on the same (publicly scaled) features.
4. Scaling (issue 19): fit time at the defaults (``max_iter=None``) on synthetic
   rows in the unit ball (d = 10, epsilon = 1) at n in {1e4, 1e5, 1e6}, as a
   ratio to ``Ridge`` (squared loss) and ``HuberRegressor`` (Huber loss)
   measured in the same run, median of interleaved rounds, with the resolved
   step count ``max_iter_`` (targets: at most 3x).
5. Defaults (issue 17, ``--defaults``): test R^2 on cal_housing and protein at
   epsilon in {0.5, 1, 2} (delta = 1e-6) of mirror descent (``solver="mirror_descent"``
   by name since session 34, default loss), its objective perturbation and ``PrivateFrankWolfeLasso``, passing
   only the budget and public bounds, against the best of each over its main
   knob (``max_iter``; ``alpha`` for objective perturbation) on a grid: the
   target is a gap of at most 0.03. The grid's best reads the test data: it is
   an oracle for the comparison, not a private procedure.
3. Fit time against scikit-learn ``SGDRegressor(max_iter=T, tol=None)`` with
   ``T`` the number of full-gradient steps of the private run (one noisy
   full-batch gradient = one pass over the data = one SGD epoch), same loss,
   protein training split, measured in the same run.

Run from anywhere::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mirror_descent.py          # ~6.5 min, 2 cores
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mirror_descent.py --quick  # ~1.3 min
    python benchmarks/bench_mirror_descent.py --data PATH/trefor_protein.csv.gz
    # Tables 4 (scaling, ~3 min) and 5 (defaults, ~30 s) only:
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mirror_descent.py --data \
        PATH/trefor_protein.csv.gz --skip-synthetic --skip-protein --skip-speed --defaults
"""

import argparse
import contextlib
import math
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

import numba  # noqa: E402
import scipy  # noqa: E402
import sklearn  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import HuberRegressor, Ridge, SGDRegressor  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import sklearn_dpol  # noqa: E402
from sklearn_dpol import PrivateMirrorDescentRegressor  # noqa: E402
from sklearn_dpol._core import mirror_descent as md  # noqa: E402
from sklearn_dpol.privacy import gaussian_mu  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trefor_protein.csv.gz"
DELTA = 1e-6
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
CONSTRAINTS = ("l2", "l1", "simplex", "group_l1")
HUBER_THRESHOLD = 1.0

# -- synthetic data ---------------------------------------------------------------------------
# Rows uniform on [-1, 1]^p / sqrt(p): ||x||_2 <= 1 = data_norm, so clipping never
# acts. y = clip(<x, theta*> + b* + NOISE_STD N(0, 1), -1, 1), y_bound = 1, with an
# intercept. The signal <x, theta*> has standard deviation SIGNAL_STD, i.e.
# ||theta*||_2 = SIGNAL_STD sqrt(3p). The radius of each set is the set's gauge of
# theta* (the truth lies on the boundary; a public hyperparameter here).
N_SAMPLES, N_FEATURES, GROUP_SIZE = 20_000, 50, 5
N_SPARSE, N_ACTIVE_GROUPS = 5, 2
SIGNAL_STD, NOISE_STD, TRUE_INTERCEPT = 0.4, 0.2, 0.1
Y_BOUND, DATA_NORM = 1.0, 1.0


def make_truth(constraint, rng, p=N_FEATURES):
    """Coefficients whose structure matches the set; returns (theta*, radius)."""
    theta = np.zeros(p)
    if constraint == "l2":  # dense
        theta = rng.standard_normal(p)
    elif constraint == "l1":  # sparse, random signs
        theta[rng.choice(p, N_SPARSE, replace=False)] = rng.choice([-1.0, 1.0], N_SPARSE)
    elif constraint == "simplex":  # sparse, nonnegative, unequal weights
        theta[rng.choice(p, N_SPARSE, replace=False)] = rng.uniform(0.5, 1.5, N_SPARSE)
    else:  # group-sparse: N_ACTIVE_GROUPS dense groups of GROUP_SIZE
        groups = rng.choice(p // GROUP_SIZE, N_ACTIVE_GROUPS, replace=False)
        for g in groups:
            theta[g * GROUP_SIZE:(g + 1) * GROUP_SIZE] = rng.standard_normal(GROUP_SIZE)
    theta *= SIGNAL_STD * math.sqrt(3 * p) / np.linalg.norm(theta)
    return theta, gauge(constraint, theta)


def gauge(constraint, w, group_size=GROUP_SIZE):
    if constraint == "l2":
        return float(np.linalg.norm(w))
    if constraint in ("l1", "simplex"):
        return float(np.sum(np.abs(w)))
    return float(np.sum(np.sqrt(np.add.reduceat(w * w, np.arange(0, w.size, group_size)))))


def make_data(constraint, n=N_SAMPLES, p=N_FEATURES, seed=0):
    rng = np.random.default_rng([seed, CONSTRAINTS.index(constraint)])
    theta, radius = make_truth(constraint, rng, p)
    X = rng.uniform(-1.0, 1.0, size=(n, p)) / math.sqrt(p)
    y = np.clip(X @ theta + TRUE_INTERCEPT + NOISE_STD * rng.standard_normal(n),
                -Y_BOUND, Y_BOUND)
    return X, y, theta, radius


# -- the exact objective (independent of the library) -----------------------------------------

class Objective:
    """``L(w, b) = mean f(<z_i, w> + b - y_i)`` on rows clipped to DATA_NORM, y to Y_BOUND.

    Squared loss ``r^2/2`` from the Gram statistics; Huber ``r^2/2`` for
    ``|r| <= h``, ``h|r| - h^2/2`` beyond, from the data.
    """

    def __init__(self, X, y, loss, threshold=HUBER_THRESHOLD, y_bound=Y_BOUND):
        norms = np.linalg.norm(X, axis=1)
        scale = np.minimum(1.0, DATA_NORM / np.maximum(norms, 1e-300))
        self.Z = X * scale[:, None]
        self.y_bound = float(y_bound)
        self.y = np.clip(y, -self.y_bound, self.y_bound)
        self.loss, self.h, self.n = loss, threshold, X.shape[0]
        Z1 = np.c_[self.Z, np.ones(self.n)]
        self.G1 = Z1.T @ Z1 / self.n  # Gram of (z, 1)
        self.c1 = Z1.T @ self.y / self.n
        self.yy = float(self.y @ self.y) / self.n
        # f'' <= 1 for both losses: the gradient is Lipschitz with lambda_max(G1).
        self.smooth = float(np.linalg.eigvalsh(self.G1)[-1])

    def value(self, theta):
        """theta = (w, b)."""
        if self.loss == "squared":
            return 0.5 * (theta @ self.G1 @ theta - 2.0 * self.c1 @ theta + self.yy)
        r = np.abs(self.Z @ theta[:-1] + theta[-1] - self.y)
        h = self.h
        return float(np.mean(np.where(r <= h, 0.5 * r * r, h * r - 0.5 * h * h)))

    def gradient(self, theta):
        if self.loss == "squared":
            return self.G1 @ theta - self.c1
        d = np.clip(self.Z @ theta[:-1] + theta[-1] - self.y, -self.h, self.h)
        return np.r_[self.Z.T @ d, d.sum()] / self.n


def project(constraint, w, radius, group_size=GROUP_SIZE):
    """Euclidean projection onto the set (written here, not the library's)."""
    if constraint == "l2":
        norm = np.linalg.norm(w)
        return w * (radius / norm) if norm > radius else w
    if constraint == "l1":
        if np.sum(np.abs(w)) <= radius:
            return w
        return np.sign(w) * simplex_projection(np.abs(w), radius)
    if constraint == "simplex":
        return simplex_projection(w, radius)
    starts = np.arange(0, w.size, group_size)
    norms = np.sqrt(np.add.reduceat(w * w, starts))
    if norms.sum() <= radius:
        return w
    shrunk = simplex_projection(norms, radius)
    factor = np.divide(shrunk, norms, out=np.zeros_like(norms), where=norms > 0)
    return w * np.repeat(factor, np.diff(np.r_[starts, w.size]))


def simplex_projection(v, radius):
    """Projection onto {x >= 0, sum x = radius} (Held et al. / Duchi et al.)."""
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - radius
    k = np.nonzero(u - cumulative / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.maximum(v - cumulative[k] / (k + 1), 0.0)


def fw_gap(constraint, objective, theta, radius, group_size=GROUP_SIZE):
    """``max_{theta' in C x [-Y, Y]} <grad, theta - theta'>``: bounds L(theta) - L*."""
    g = objective.gradient(theta)
    gw, gb = g[:-1], g[-1]
    if constraint == "l2":
        support = radius * np.linalg.norm(gw)
    elif constraint == "l1":
        support = radius * np.max(np.abs(gw))
    elif constraint == "simplex":
        support = -radius * np.min(gw)
    else:
        support = radius * np.max(np.sqrt(np.add.reduceat(gw * gw, np.arange(0, gw.size,
                                                                             group_size))))
    return float(g @ theta + support + objective.y_bound * abs(gb))


def start_point(constraint, p):
    """The estimator's start: the origin, or the uniform point of the simplex (b = 0)."""
    return np.r_[np.full(p, 1.0 / p) if constraint == "simplex" else np.zeros(p), 0.0]


def fista(constraint, objective, radius, max_iter=50_000, gap_tol=1e-11):
    """Accelerated projected gradient with O'Donoghue-Candes restarts."""
    p = objective.Z.shape[1]
    step = 1.0 / objective.smooth

    def proj(theta):
        return np.r_[project(constraint, theta[:-1], radius),
                     np.clip(theta[-1], -objective.y_bound, objective.y_bound)]

    theta = momentum = proj(start_point(constraint, p))
    t, gap = 1.0, math.inf
    for iteration in range(max_iter):
        new = proj(momentum - step * objective.gradient(momentum))
        if (momentum - new) @ (new - theta) > 0:
            t = 1.0
        t_next = (1.0 + math.sqrt(1.0 + 4.0 * t * t)) / 2.0
        momentum = new + ((t - 1.0) / t_next) * (new - theta)
        theta, t = new, t_next
        if iteration % 25 == 0:
            gap = fw_gap(constraint, objective, theta, radius)
            if gap < gap_tol:
                break
    return theta, fw_gap(constraint, objective, theta, radius), iteration + 1


def slsqp(constraint, objective, radius, group_size=GROUP_SIZE):
    """scipy SLSQP on a smooth reformulation of the set (the cross-check)."""
    p = objective.Z.shape[1]
    yb = [(-objective.y_bound, objective.y_bound)]
    if constraint == "l2":
        x0, bounds = np.zeros(p + 1), [(None, None)] * p + yb

        def unpack(v):
            return v
        cons = [{"type": "ineq", "fun": lambda v: radius**2 - v[:p] @ v[:p],
                 "jac": lambda v: np.r_[-2.0 * v[:p], 0.0]}]
    elif constraint == "l1":  # w = w+ - w-, w+- >= 0, sum <= radius
        x0, bounds = np.zeros(2 * p + 1), [(0.0, radius)] * (2 * p) + yb

        def unpack(v):
            return np.r_[v[:p] - v[p:2 * p], v[-1]]
        cons = [{"type": "ineq", "fun": lambda v: radius - v[:2 * p].sum(),
                 "jac": lambda v: np.r_[-np.ones(2 * p), 0.0]}]
    elif constraint == "simplex":
        x0, bounds = np.r_[np.full(p, radius / p), 0.0], [(0.0, radius)] * p + yb

        def unpack(v):
            return v
        cons = [{"type": "eq", "fun": lambda v: v[:p].sum() - radius,
                 "jac": lambda v: np.r_[np.ones(p), 0.0]}]
    else:  # (w, t, b): t_j >= ||w_j||, sum t <= radius
        m = -(-p // group_size)
        owner = np.arange(p) // group_size
        x0 = np.r_[np.zeros(p), np.full(m, radius / (2 * m)), 0.0]
        bounds = [(None, None)] * p + [(0.0, radius)] * m + yb

        def unpack(v):
            return np.r_[v[:p], v[-1]]

        def cone(v):
            return v[p:p + m] ** 2 - np.bincount(owner, v[:p] ** 2, minlength=m)

        def cone_jac(v):
            jac = np.zeros((m, p + m + 1))
            jac[owner, np.arange(p)] = -2.0 * v[:p]
            jac[np.arange(m), p + np.arange(m)] = 2.0 * v[p:p + m]
            return jac
        cons = [{"type": "ineq", "fun": cone, "jac": cone_jac},
                {"type": "ineq", "fun": lambda v: radius - v[p:p + m].sum(),
                 "jac": lambda v: np.r_[np.zeros(p), -np.ones(m), 0.0]}]

    def fun(v):
        theta = unpack(v)
        g = objective.gradient(theta)
        if constraint == "l1":
            grad = np.r_[g[:-1], -g[:-1], g[-1]]
        elif constraint == "group_l1":
            grad = np.r_[g[:-1], np.zeros(len(v) - p - 1), g[-1]]
        else:
            grad = g
        return objective.value(theta), grad

    result = minimize(fun, x0, jac=True, bounds=bounds, constraints=cons, method="SLSQP",
                      options={"maxiter": 2000, "ftol": 1e-15})
    theta = unpack(result.x)
    # Report the objective at the feasible point nearest to SLSQP's answer.
    theta = np.r_[project(constraint, theta[:-1], radius), np.clip(theta[-1], -objective.y_bound, objective.y_bound)]
    return objective.value(theta), result


# -- the paper's calibration (benchmark only) ----------------------------------------------

@contextlib.contextmanager
def paper_calibration(n_samples):
    """Benchmark only, the paper's calibration.

    Replaces ``md.noise_scale`` (the exact GDP calibration) by the seed's
    Algorithm 1 ``sigma = sqrt(32) L sqrt(T) log(T/delta) / (epsilon n)``
    (``md.paper_noise_scale``) for the duration of the block. ``calibrate``
    keeps the same ``T`` (the theorem's count does not depend on sigma) and
    the same step-size rule, which it then evaluates at the paper's sigma.
    """
    original = md.noise_scale
    used = []

    def patched(sensitivity, n_steps, epsilon, delta):
        if math.isinf(epsilon):
            return original(sensitivity, n_steps, epsilon, delta)
        lipschitz = sensitivity * n_samples / 2.0  # sensitivity = 2 L / n
        sigma = md.paper_noise_scale(lipschitz, n_steps, n_samples, epsilon, delta)
        mu = math.sqrt(n_steps) * sensitivity / sigma  # what it actually spends (GDP)
        used.append((sigma, mu))
        return sigma, mu

    md.noise_scale = patched
    try:
        yield used
    finally:
        md.noise_scale = original


# -- table 1 ----------------------------------------------------------------------------------

def estimator(constraint, radius, loss, epsilon, seed, **extra):
    return PrivateMirrorDescentRegressor(
        solver="mirror_descent",
        epsilon=epsilon, delta=DELTA, loss=loss, epsilon_huber=HUBER_THRESHOLD,
        constraint=constraint, radius=radius,
        group_size=GROUP_SIZE if constraint == "group_l1" else None, data_norm=DATA_NORM,
        y_bound=Y_BOUND, fit_intercept=True, random_state=seed, **extra)


def excess(objective, model, best):
    return objective.value(np.r_[model.coef_, model.intercept_]) - best


def reference(constraint, loss):
    """Data, the certified optimum, and its cross-checks."""
    X, y, theta_true, radius = make_data(constraint)
    objective = Objective(X, y, loss)
    t0 = time.perf_counter()
    theta_hat, gap, iters = fista(constraint, objective, radius)
    fista_s = time.perf_counter() - t0
    best = objective.value(theta_hat)
    t0 = time.perf_counter()
    slsqp_value, slsqp_result = slsqp(constraint, objective, radius)
    slsqp_s = time.perf_counter() - t0
    noiseless = estimator(constraint, radius, loss, np.inf, 0).fit(X, y)
    p = X.shape[1]
    # The unconstrained least-squares fit: is the constraint active?
    Z1 = np.c_[objective.Z, np.ones(len(y))]
    ols = np.linalg.lstsq(Z1, objective.y, rcond=None)[0][:-1]
    return dict(
        X=X, y=y, objective=objective, radius=radius, best=best, gap=gap, iters=iters,
        fista_s=fista_s, slsqp_diff=slsqp_value - best, slsqp_s=slsqp_s,
        slsqp_ok=bool(slsqp_result.success), slsqp_msg=str(slsqp_result.message),
        inf_excess=excess(objective, noiseless, best), inf_steps=noiseless.max_iter_,
        trivial=objective.value(start_point(constraint, p)) - best,
        truth_excess=objective.value(np.r_[theta_true, TRUE_INTERCEPT]) - best,
        hat_gauge=gauge(constraint, theta_hat[:-1]) / radius,
        ols_gauge=gauge(constraint, ols) / radius,
        var_y=float(np.var(objective.y)),
    )


def fixed_step(radius):
    """A public step: 1 / (the worst-case smoothness in normalised coordinates).

    In ``(u, v) = (w / radius, b / Y)`` the Hessian is at most
    ``E[f''] diag(radius, Y) E[(z, 1)(z, 1)^T] diag(radius, Y)``, whose top
    eigenvalue is at most ``radius^2 R^2 + Y^2`` (``f'' <= 1``, ``||z|| <= R``).
    """
    return 1.0 / (radius**2 * DATA_NORM**2 + Y_BOUND**2)


def paper_as_written(constraint, loss, radius, n, p, epsilon):
    """The seed's own Theorem 3.2 choice of ``T`` and ``eta`` (benchmark only).

    ``T = ||Q||^2 eps^2 n^2 / (L^2 log^2(n/delta) (G^2 + ||Q||^2))`` and
    ``eta = sqrt(Psi_max) / (L ||Q||_2 sqrt(T))``, in the normalised units of
    ``md.geometry`` (``A / B (n eps / (L log(n/delta)))^2`` and
    ``sqrt(Psi_max / (T A))``), capped like ours by ``md.iteration_cap``.
    """
    potential = md.make_potential(constraint, p, GROUP_SIZE if constraint == "group_l1"
                                  else None)
    derivative = md.derivative_bound(loss, HUBER_THRESHOLD, radius, DATA_NORM, Y_BOUND, True)
    lipschitz = md.lipschitz_constant(derivative, DATA_NORM, True)
    geo = md.geometry(potential, derivative, radius, DATA_NORM, Y_BOUND, True)
    ratio = n * epsilon / (lipschitz * math.log(n / DELTA))
    steps = int(min(md.iteration_cap(loss, n, p),
                    max(1, round(geo.grad_sq / geo.noise_sq * ratio * ratio))))
    return steps, math.sqrt(geo.psi_max / (steps * geo.grad_sq))


def risk_rows(constraint, loss, epsilons, seeds, ref, step_rule="theorem"):
    X, y, objective, radius, best = (ref[k] for k in ("X", "y", "objective", "radius", "best"))
    n = X.shape[0]
    extra = {} if step_rule == "theorem" else {"step_size": fixed_step(radius)}
    rows = []
    for eps in epsilons:
        ours, paper, written = [], [], []
        T_w, eta_w = paper_as_written(constraint, loss, radius, n, X.shape[1], eps)
        for seed in seeds:
            model = estimator(constraint, radius, loss, eps, seed, **extra).fit(X, y)
            ours.append(excess(objective, model, best))
            T, eta, sigma = model.max_iter_, model.step_size_, model.noise_scale_
            with paper_calibration(n) as used:
                pmodel = estimator(constraint, radius, loss, eps, seed, **extra).fit(X, y)
            assert used and pmodel.noise_scale_ == used[-1][0], "patch not applied"
            assert pmodel.max_iter_ == T
            paper.append(excess(objective, pmodel, best))
            eta_p, sigma_p = pmodel.step_size_, pmodel.noise_scale_
            if step_rule == "theorem":
                with paper_calibration(n):
                    wmodel = estimator(constraint, radius, loss, eps, seed, max_iter=T_w,
                                       step_size=eta_w).fit(X, y)
                written.append(excess(objective, wmodel, best))
        # Optimisation error of each run's (T, eta) without noise (deterministic).
        floor = excess(objective, estimator(constraint, radius, loss, np.inf, 0, max_iter=T,
                                            step_size=eta).fit(X, y), best)
        floor_p = excess(objective, estimator(constraint, radius, loss, np.inf, 0, max_iter=T,
                                              step_size=eta_p).fit(X, y), best)
        rows.append(dict(eps=eps, T=T, sigma=sigma, sigma_p=sigma_p, eta=eta, eta_p=eta_p,
                         ours=ours, paper=paper, floor=floor, floor_p=floor_p,
                         written=written, T_w=T_w))
    return rows


def mean_std(values):
    return f"{np.mean(values):.3g} +- {np.std(values):.2g}"


def print_risk_table(constraint, loss, ref, rows, n_seeds, step_rule="theorem"):
    structure = {"l2": "dense truth", "l1": f"{N_SPARSE}-sparse truth",
                 "simplex": f"{N_SPARSE}-sparse nonnegative truth",
                 "group_l1": f"{N_ACTIVE_GROUPS} of {N_FEATURES // GROUP_SIZE} groups active "
                             f"(group_size={GROUP_SIZE})"}[constraint]
    print(f"\n### constraint='{constraint}', loss='{loss}'"
          + (f" (epsilon_huber={HUBER_THRESHOLD:g})" if loss == "huber" else "")
          + f": {structure}, radius={ref['radius']:.4g}"
          + ("" if step_rule == "theorem" else
             f", fixed step_size={fixed_step(ref['radius']):.4g} for both runs") + "\n")
    if step_rule != "theorem":
        print(f"L* = {ref['best']:.6g}, trivial model excess {ref['trivial']:.3g} (as in "
              "Table 1a).\n")
    else:
        print(f"L* = {ref['best']:.6g} (FISTA, {ref['iters']} iterations, FW gap "
          f"{ref['gap']:.1e}, {ref['fista_s']:.1f} s); SLSQP - FISTA = "
          f"{ref['slsqp_diff']:.1e} ({'ok' if ref['slsqp_ok'] else ref['slsqp_msg']}, "
          f"{ref['slsqp_s']:.1f} s); estimator at epsilon=inf (T={ref['inf_steps']}): excess "
          f"{ref['inf_excess']:.3g}. Trivial model (the start point): excess "
          f"{ref['trivial']:.3g}; truth: {ref['truth_excess']:.3g}. Gauge/radius of the "
          f"optimum {ref['hat_gauge']:.3f}, of unconstrained least squares "
          f"{ref['ols_gauge']:.2f} (> 1: the set is active). Var(y) = {ref['var_y']:.3f}.\n")
    print(f"| epsilon | T | sigma ours | sigma paper (x) | excess ours (mean +- std, "
          f"{n_seeds} seeds) | excess paper | ratio paper/ours | >= 5 | noiseless floor "
          "ours (same T, eta) | floor paper (same T, its eta) | noise part ratio | "
          "paper as written: T, excess, ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = np.mean(r["paper"]) / np.mean(r["ours"])
        noise_ours = np.mean(r["ours"]) - r["floor"]
        noise_paper = np.mean(r["paper"]) - r["floor_p"]
        noise_ratio = f"{noise_paper / noise_ours:.1f}" if noise_ours > 0 else "-"
        print(f"| {r['eps']:g} | {r['T']} | {r['sigma']:.3g} | {r['sigma_p']:.3g} "
              f"({r['sigma_p'] / r['sigma']:.1f}x) | {mean_std(r['ours'])} | "
              f"{mean_std(r['paper'])} | {ratio:.2f} | {'yes' if ratio >= 5 else 'NO'} | "
              f"{r['floor']:.3g} | {r['floor_p']:.3g} | {noise_ratio} | "
              + (f"{r['T_w']}, {mean_std(r['written'])}, "
                 f"{np.mean(r['written']) / np.mean(r['ours']):.2f} |" if r["written"]
                 else "- |"))


# -- table 2: protein -------------------------------------------------------------------------
# The file (treforevans/uci_datasets) holds the nine CASP features F1..F9 in this
# order, CENTRED (not scaled, despite the data README's "standardized") by the
# preparer, and a transformed RMSD target of unit order in the last column.
# UCI documents no ranges for them. The half-ranges below are round
# order-of-magnitude physical scales (F1 total surface area and F2 non-polar exposed
# area in A^2 for CASP-size proteins, F3 a fraction (range 1: truly a priori),
# F4/F6/F8 areas and penalties in the hundreds, F5 a mass-weighted area in the
# millions, F7 a distance in the thousands, F9 a count-like constraint in the tens).
# DISCLOSURE: they were written after printing this file's column standard
# deviations, so they are a benchmark convenience, not a private procedure.
# Choosing bounds from the data (its ranges, quantiles or std) is not private; a
# deployment must fix them from domain knowledge before seeing the data. They are
# used only to map each feature to [-1, 1] (values beyond are clipped, a per-record
# transformation); the row is then divided by sqrt(9) = 3, so ||x||_2 <= 1.
PROTEIN_HALF_RANGE = np.array([1e4, 5e3, 0.5, 200.0, 2e6, 200.0, 5e3, 200.0, 20.0])
# Targets are clipped to [-2, 2] (the file's transformed target is of unit order;
# same disclosure as above).
PROTEIN_Y_BOUND = 2.0
# Configuration fixed before looking at test scores: Huber loss (threshold 1, so
# L = sqrt(2), against L = radius + 4 for the squared loss), an L2 ball (dense
# problem, 9 features, no sparsity prior), radius 5 (|<x, w>| <= 5 for ||x|| <= 1,
# more than the target range: the ball is a loose, public guard).
PROTEIN_RADIUS = 5.0
PROTEIN_OP_ALPHA = 1e-3


def load_protein(path):
    data = np.loadtxt(path, delimiter=",", dtype=np.float64)
    if data.shape != (45_730, 10):
        raise ValueError(f"{path}: expected (45730, 10), got {data.shape}")
    return data[:, :9], data[:, 9]


def protein_scale(X_raw):
    return np.ascontiguousarray(np.clip(X_raw / PROTEIN_HALF_RANGE, -1.0, 1.0) / 3.0)


def protein_model(solver, loss, epsilon, seed, **extra):
    return PrivateMirrorDescentRegressor(
        epsilon=epsilon, delta=DELTA, loss=loss, epsilon_huber=HUBER_THRESHOLD,
        constraint="l2", radius=PROTEIN_RADIUS, data_norm=1.0, y_bound=PROTEIN_Y_BOUND,
        fit_intercept=True, solver=solver, alpha=PROTEIN_OP_ALPHA, random_state=seed,
        **extra)


def protein_table(X_tr, y_tr, X_te, y_te, epsilons, seeds):
    configs = [("mirror_descent", "huber"), ("mirror_descent", "squared"),
               ("objective_perturbation", "huber"), ("objective_perturbation", "squared")]
    rows = []
    for eps in list(epsilons) + [np.inf]:
        cells = {}
        for solver, loss in configs:
            scores, steps = [], 0
            for seed in (seeds if np.isfinite(eps) else seeds[:1]):
                try:
                    model = protein_model(solver, loss, eps, seed).fit(X_tr, y_tr)
                except Exception as exc:  # reported, not hidden
                    scores.append(math.nan)
                    cells[(solver, loss, "error")] = f"{type(exc).__name__}: {exc}"
                    continue
                scores.append(r2_score(y_te, model.predict(X_te)))
                steps = model.max_iter_
            cells[(solver, loss)] = (scores, steps)
        rows.append((eps, cells))
    return configs, rows


def print_protein(configs, rows, refs, n_seeds, info):
    print(f"\n## Table 2: UCI CASP protein, test R^2 against epsilon (delta={DELTA:g}, "
          f"{n_seeds} seeds; epsilon=inf one run)\n")
    print(info + "\n")
    header = ["epsilon", "mu"] + [f"{s}, {l} (T)" for s, l in configs]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    errors = {}
    for eps, cells in rows:
        out = ["inf" if np.isinf(eps) else f"{eps:g}", f"{gaussian_mu(eps, DELTA):.4g}"]
        for config in configs:
            scores, steps = cells[config]
            if (config + ("error",)) in cells:
                errors[config] = cells[config + ("error",)]
            std = f" +- {np.std(scores):.3f}" if len(scores) > 1 else ""
            out.append(f"{np.mean(scores):.4f}{std} ({steps})")
        print("| " + " | ".join(out) + " |")
    for config, message in errors.items():
        print(f"\nError in {config}: {message}")
    print("\nNon-private references (same train/test split):\n")
    print("| model | test R^2 |")
    print("|---|---|")
    for name, value in refs:
        print(f"| {name} | {value:.4f} |")


# -- table 3: speed ---------------------------------------------------------------------------

def time_fits(factories, X, y, repeats):
    """Wall times of ``factory().fit(X, y)``, interleaved.

    The private estimators are fitted once first (numba compilation, caches);
    SGDRegressor has nothing to compile and takes ~20 s a fit here, so it is not.
    """
    for name, make in factories.items():
        if not name.startswith("SGD"):
            make().fit(X, y)
    times = {name: [] for name in factories}
    for _ in range(repeats):
        for name, make in factories.items():
            model = make()
            start = time.perf_counter()
            model.fit(X, y)
            times[name].append(time.perf_counter() - start)
    return times


SPEED_STEPS = 2000


def speed_table(X_tr, y_tr, repeats, epsilon=1.0):
    blocks = []
    for loss, sgd_loss in (("huber", "huber"), ("squared", "squared_error")):
        # A fixed number of passes for both: the default T is capped by a compute
        # budget on the L1 ball, far more epochs than SGD can run here.
        T = SPEED_STEPS
        sgd_extra = {"epsilon": HUBER_THRESHOLD} if loss == "huber" else {}
        factories = {
            f"PrivateMirrorDescentRegressor(loss='{loss}', epsilon={epsilon:g}), T={T}":
                lambda loss=loss: protein_model("mirror_descent", loss, epsilon, 0,
                                                max_iter=SPEED_STEPS),
            f"SGDRegressor(loss='{sgd_loss}', max_iter={T}, tol=None)":
                lambda sgd_loss=sgd_loss, sgd_extra=sgd_extra, T=T: SGDRegressor(
                    loss=sgd_loss, max_iter=T, tol=None, random_state=0, **sgd_extra),
        }
        if loss in ("huber", "squared"):
            factories[f"PrivateMirrorDescentRegressor(loss='{loss}', "
                      "solver='objective_perturbation')"] = (
                lambda loss=loss: protein_model("objective_perturbation", loss, epsilon, 0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            blocks.append((loss, T, time_fits(factories, X_tr, y_tr, repeats)))
    return blocks


def print_speed(blocks, shape, repeats):
    print(f"\n## Table 3: fit time on the protein training split ({shape[0]:,} x {shape[1]}), "
          f"median of {repeats} interleaved runs (private fits after a warm-up fit)\n")
    print("One noisy full-batch gradient step = one pass over the data = one SGD epoch, so "
          "SGDRegressor gets max_iter = T (the private run's step count) and tol=None. The "
          "squared loss runs on the Gram matrix (O(p^2) per step after one O(n p^2) pass).\n")
    print("| loss | estimator | median (s) | min (s) | ratio to SGD (median) | "
          "ratio to SGD (min) |")
    print("|---|---|---|---|---|---|")
    for loss, T, times in blocks:
        names = list(times)
        sgd = next(name for name in names if name.startswith("SGD"))
        sgd_med, sgd_min = statistics.median(times[sgd]), min(times[sgd])
        for name in names:
            med, low = statistics.median(times[name]), min(times[name])
            print(f"| {loss} | {name} | {med:.3g} | {low:.3g} | {med / sgd_med:.3g} | "
                  f"{low / sgd_min:.3g} |")


# -- table 4: scaling at the defaults ---------------------------------------------------------

SCALING_NS = (10_000, 100_000, 1_000_000)
SCALING_DIM = 10


def scaling_data(n, d=SCALING_DIM, seed=0):
    """Rows uniform in the unit ball of R^d, ``y = clip(<x, w> + 0.1 N, -1, 1)``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= (rng.uniform(size=n) ** (1.0 / d) / np.linalg.norm(X, axis=1))[:, np.newaxis]
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    y = np.clip(X @ w + 0.1 * rng.normal(size=n), -1.0, 1.0)
    return np.ascontiguousarray(X), y


def scaling_table(ns, rounds, epsilon=1.0):
    """Median fit times (interleaved rounds) at the defaults against scikit-learn."""
    rows = []
    for n in ns:
        X, y = scaling_data(n)
        pairs = {
            "squared": (lambda: PrivateMirrorDescentRegressor(solver="mirror_descent",
                                                              epsilon=epsilon, loss="squared",
                                                              radius=1.0, random_state=0),
                        lambda: Ridge()),
            "huber": (lambda: PrivateMirrorDescentRegressor(
                solver="mirror_descent",
                epsilon=epsilon, loss="huber", epsilon_huber=HUBER_THRESHOLD, radius=1.0,
                random_state=0),
                lambda: HuberRegressor(epsilon=1.35)),
        }
        for loss, (ours, theirs) in pairs.items():
            ours().fit(X[:1000], y[:1000])  # numba compilation outside the timing
            times = {"ours": [], "theirs": []}
            steps, budget = None, rounds
            # Fits of a few ms are at the mercy of the machine's load: take as many
            # interleaved rounds as fit in about 2 s (at most 25), at least ``rounds``.
            while len(times["ours"]) < budget:
                for name, make in (("ours", ours), ("theirs", theirs)):
                    model = make()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        start = time.perf_counter()
                        model.fit(X, y)
                        times[name].append(time.perf_counter() - start)
                    if name == "ours":
                        steps = model.max_iter_
                if len(times["ours"]) == 1:
                    pair = times["ours"][0] + times["theirs"][0]
                    budget = max(rounds, min(25, int(2.0 / max(pair, 1e-3))))
            rows.append((n, loss, steps, statistics.median(times["ours"]),
                         statistics.median(times["theirs"]),
                         min(times["ours"]) / min(times["theirs"]), len(times["ours"])))
            print(f"  n={n:,} {loss}: T={steps}, {rows[-1][3]:.3g} s vs {rows[-1][4]:.3g} s",
                  file=sys.stderr, flush=True)
    return rows


def print_scaling(rows, rounds, epsilon=1.0):
    print(f"\n## Table 4: fit time at the defaults against scikit-learn, synthetic d="
          f"{SCALING_DIM}, epsilon={epsilon:g}, delta={DELTA:g} (median of at least {rounds} "
          "interleaved rounds, more for fast fits, after a warm-up fit)\n")
    print("Rows uniform in the unit ball, y = clip(<x, w> + 0.1 N(0, 1), -1, 1) with "
          "||w|| = 1; the private estimator at its defaults (l2 ball of radius 1, "
          "data_norm = y_bound = 1, max_iter=None), Ridge() and HuberRegressor(epsilon="
          "1.35) on the same data. Targets (issue 19): ratio <= 3; time never drops as n "
          "grows.\n")
    print("| loss | n | max_iter_ | rounds | ours (s) | scikit-learn (s) | ratio (median) | "
          "ratio (min) | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, loss, steps, ours, theirs, ratio_min, count in rows:
        ratio = ours / theirs
        name = "Ridge" if loss == "squared" else "HuberRegressor"
        print(f"| {loss} | {n:,} | {steps} | {count} | {ours:.3g} | {theirs:.3g} ({name}) | "
              f"{ratio:.2f} | {ratio_min:.2f} | {'met' if ratio <= 3 else 'MISSED'} |")


# -- table 5: defaults against the best over the main knob --------------------------------------

DEFAULT_EPSILONS = (0.5, 1.0, 2.0)
DEFAULT_RADIUS = 5.0
MD_STEP_GRID = (10, 30, 100, 300, 1000, 3000, 10_000, 30_000)
OP_ALPHA_GRID = tuple(10.0 ** (k / 2.0) for k in range(-12, 1))
FW_STEP_GRID = (5, 10, 20, 50, 100, 200, 500, 1000, 2000)


def defaults_datasets(data_dir):
    """(name, X for an L2 bound of 1, X for an entrywise bound, bounds) with public scaling.

    cal_housing: the derived features of ``examples/reproduce_seed004_frank_wolfe_rate``
    mapped to [-1, 1] by public ranges (entrywise bound 1; divided by sqrt(8) for the
    row bound 1), target value / top-code mapped to [-1, 1]. protein: ``protein_scale``
    (row norm <= 1; entries <= 1/3), target clipped to +-2 (see Table 2's disclosure).
    """
    sys.path.insert(0, str(ROOT / "examples"))
    from reproduce_seed004_frank_wolfe_rate import cal_housing  # noqa: PLC0415

    X, y = cal_housing(data_dir)
    cal = ("cal_housing", np.ascontiguousarray(X / math.sqrt(X.shape[1])),
           np.ascontiguousarray(X), y, dict(y_bound=1.0, feature_bound=1.0))
    X_raw, y_raw = load_protein(data_dir / "trefor_protein.csv.gz")
    X = protein_scale(X_raw)
    protein = ("protein", X, X, np.clip(y_raw, -PROTEIN_Y_BOUND, PROTEIN_Y_BOUND),
               dict(y_bound=PROTEIN_Y_BOUND, feature_bound=1.0 / 3.0))
    return [cal, protein]


DEFAULT_ESTIMATORS = {"md": "mirror descent (max_iter)", "op": "objective perturbation (alpha)",
                      "fw": "Frank-Wolfe (max_iter)"}


def defaults_table(data_dir, seeds, epsilons=DEFAULT_EPSILONS, estimators=("md", "op", "fw")):
    from sklearn_dpol import PrivateFrankWolfeLasso  # noqa: PLC0415

    rows = []
    for name, X_l2, X_inf, y, bounds in defaults_datasets(data_dir):
        split = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
        tr, te = split
        candidates = {
            "mirror descent (max_iter)": (
                lambda eps, seed, **k: PrivateMirrorDescentRegressor(
                    solver="mirror_descent",
                    epsilon=eps, delta=DELTA, radius=DEFAULT_RADIUS, data_norm=1.0,
                    y_bound=bounds["y_bound"], random_state=seed, **k),
                "max_iter", MD_STEP_GRID, X_l2),
            "objective perturbation (alpha)": (
                lambda eps, seed, **k: PrivateMirrorDescentRegressor(
                    epsilon=eps, delta=DELTA, radius=DEFAULT_RADIUS, data_norm=1.0,
                    y_bound=bounds["y_bound"], solver="objective_perturbation",
                    random_state=seed, **k),
                "alpha", OP_ALPHA_GRID, X_l2),
            "Frank-Wolfe (max_iter)": (
                lambda eps, seed, **k: PrivateFrankWolfeLasso(
                    epsilon=eps, delta=DELTA, radius=DEFAULT_RADIUS,
                    feature_bound=bounds["feature_bound"], y_bound=bounds["y_bound"],
                    random_state=seed, **k),
                "max_iter", FW_STEP_GRID, X_inf),
        }
        chosen = {DEFAULT_ESTIMATORS[key] for key in estimators}
        for label, (make, knob, grid, X) in candidates.items():
            if label not in chosen:
                continue
            X_tr, X_te = np.ascontiguousarray(X[tr]), np.ascontiguousarray(X[te])
            y_tr, y_te = y[tr], y[te]
            for eps in epsilons:
                def score(**k):
                    values, resolved = [], None
                    for seed in seeds:
                        model = make(eps, seed, **k).fit(X_tr, y_tr)
                        values.append(r2_score(y_te, model.predict(X_te)))
                        resolved = getattr(model, knob + "_", None)
                    return float(np.mean(values)), resolved

                default, resolved = score()
                grid_scores = {value: score(**{knob: value})[0] for value in grid}
                best_value = max(grid_scores, key=grid_scores.get)
                best = max(grid_scores[best_value], default)
                rows.append((name, label, eps, resolved, default, best_value,
                             grid_scores[best_value], best - default))
                print(f"  {name} {label} eps={eps:g}: default {default:.4f} ({knob}_="
                      f"{resolved:.3g}), best {grid_scores[best_value]:.4f} at "
                      f"{best_value:.3g}", file=sys.stderr, flush=True)
    return rows


def print_defaults(rows, n_seeds):
    print(f"\n## Table 5: defaults against the best over the main knob (test R^2, mean of "
          f"{n_seeds} seeds, delta={DELTA:g}, 80/20 split random_state=0)\n")
    print(f"Only the budget and public bounds are passed (radius={DEFAULT_RADIUS:g} as an a "
          "priori guard for all, data_norm=1 / feature_bound and y_bound from the public "
          "scaling); the grid's best reads the test data (an oracle, not private). Target "
          "(issue 17): gap <= 0.03. Grids: max_iter " + str(MD_STEP_GRID) + " (mirror "
          "descent), " + str(FW_STEP_GRID) + " (Frank-Wolfe); alpha 1e-6..1 in half "
          "decades.\n")
    print("| data | estimator (knob) | epsilon | resolved default | R^2 at default | "
          "best knob | best R^2 | gap | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, label, eps, resolved, default, best_value, best, gap in rows:
        print(f"| {name} | {label} | {eps:g} | {resolved:.3g} | {default:.4f} | "
              f"{best_value:.3g} | {best:.4f} | {gap:.4f} | "
              f"{'met' if gap <= 0.03 else 'MISSED'} |")


# -- main -------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="trefor_protein.csv.gz (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="2 seeds, epsilon in {0.1, 1, 10}, Huber on l1 only, 2 repeats")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds for the squared loss and protein (default 5; 2 quick)")
    parser.add_argument("--huber-seeds", type=int, default=None,
                        help="seeds for the Huber synthetic runs (default 2; 1 quick)")
    parser.add_argument("--huber-epsilons", type=float, nargs="+", default=[0.1, 1.0, 10.0],
                        help="epsilons of the Huber synthetic runs (O(n p) a step: slower)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timing repeats (default 2; 1 quick)")
    parser.add_argument("--skip-huber", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-protein", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--defaults", action="store_true",
                        help="also Table 5: defaults against the best over the main knob")
    parser.add_argument("--defaults-seeds", type=int, default=3)
    parser.add_argument("--defaults-estimators", nargs="+", default=["md", "op", "fw"],
                        choices=sorted(DEFAULT_ESTIMATORS),
                        help="Table 5 rows: mirror descent, objective perturbation, Frank-Wolfe")
    parser.add_argument("--scaling-ns", type=int, nargs="+", default=list(SCALING_NS),
                        help="n of Table 4 (default: %(default)s)")
    parser.add_argument("--scaling-rounds", type=int, default=None,
                        help="interleaved rounds of Table 4 (default 3; 1 quick)")
    parser.add_argument("--fixed-step", action="store_true",
                        help="also Table 1b: a fixed public step for both runs (slow: the "
                             "capped T is up to 780,000 steps)")
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds or (2 if args.quick else 5)))
    huber_seeds = list(range(args.huber_seeds or (1 if args.quick else 2)))
    epsilons = (0.1, 1.0, 10.0) if args.quick else EPSILONS
    huber_constraints = ("l1",) if args.quick else CONSTRAINTS
    repeats = args.repeats or (1 if args.quick else 2)
    huber_epsilons = (1.0,) if args.quick else tuple(args.huber_epsilons)
    started = time.perf_counter()

    print("# PrivateMirrorDescentRegressor benchmark\n")
    print("Command: `" + " ".join(f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS",)
                                  if k in os.environ)
          + (" " if "OPENBLAS_NUM_THREADS" in os.environ else "") + "python "
          + shlex.join([os.path.relpath(Path(__file__).resolve(), Path.cwd())] + sys.argv[1:])
          + "`\n")
    print(f"sklearn_dpol {sklearn_dpol.__version__}, scikit-learn {sklearn.__version__}, "
          f"numpy {np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}")

    if not args.skip_synthetic:
        t0 = time.perf_counter()
        references = {}
        print(f"\n## Table 1a: excess empirical risk against epsilon (delta={DELTA:g}), "
              f"synthetic n={N_SAMPLES:,}, p={N_FEATURES}\n")
        print(f"Rows uniform on [-1, 1]^p / sqrt(p) (||x||_2 <= 1 = data_norm), y = clip(<x, "
              f"theta*> + {TRUE_INTERCEPT} + {NOISE_STD} N(0,1), -1, 1), y_bound=1, "
              f"fit_intercept=True, std of the signal {SIGNAL_STD}; radius = the set's gauge "
              "of theta*. Data fixed per set; seeds vary the privacy noise only. 'ours': the "
              "estimator as shipped (T from the default rule, doc/privacy.md section 8.11: "
              "the smooth-loss bound's floor on the L2 ball and simplex, Theorem 3.2's count "
              "on the others, softly capped by the compute budget; the step of the better "
              "of Theorem 3.2's and the smooth-loss bound). "
              "'paper': benchmark only, the paper's calibration: the same estimator with "
              "md.noise_scale patched to md.paper_noise_scale (seed 004, Algorithm 1), same "
              "T, same step-size rule (evaluated at the paper's sigma). Ratio = mean excess "
              "paper / mean excess ours. The noiseless floors rerun each (T, eta) at "
              "epsilon=inf: the optimisation error of the step rule alone. 'paper as written': "
              "the seed's own T and eta (Theorem 3.2 with epsilon / log(n / delta)) and its "
              "noise, benchmark only.")
        runs = [("squared", CONSTRAINTS, seeds, epsilons)]
        if not args.skip_huber:
            runs.append(("huber", huber_constraints, huber_seeds, huber_epsilons))
        for loss, constraints, loss_seeds, loss_epsilons in runs:
            for constraint in constraints:
                t1 = time.perf_counter()
                ref = reference(constraint, loss)
                rows = risk_rows(constraint, loss, loss_epsilons, loss_seeds, ref)
                print_risk_table(constraint, loss, ref, rows, len(loss_seeds))
                print(f"\n({time.perf_counter() - t1:.1f} s)")
                if loss == "squared":
                    references[constraint] = ref
        if not args.fixed_step:
            print(f"\nTable 1 total: {time.perf_counter() - t0:.1f} s")
    if not args.skip_synthetic and args.fixed_step:
        t0 = time.perf_counter()
        print("\n## Table 1b: the same comparison with a fixed public step for both runs "
              "(squared loss)\n")
        print("Same T (the theorem's, capped by the compute budget), step_size = 1 / (radius^2 R^2 + Y^2), "
              "the worst-case smoothness bound in normalised coordinates, for ours and the "
              "paper's calibration alike: the optimisation error shrinks, so the noise "
              "dominates. A variant, not the shipped default.")
        for constraint in CONSTRAINTS:
            t1 = time.perf_counter()
            ref = references[constraint]
            rows = risk_rows(constraint, "squared", epsilons, seeds, ref, step_rule="fixed")
            print_risk_table(constraint, "squared", ref, rows, len(seeds), step_rule="fixed")
            print(f"\n({time.perf_counter() - t1:.1f} s)")
        print(f"\nTable 1 total: {time.perf_counter() - t0:.1f} s")

    if not (args.skip_protein and args.skip_speed):
        X_raw, y_raw = load_protein(args.data)
        X = protein_scale(X_raw)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y_raw, test_size=0.1, random_state=0)
        X_tr, X_te = np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te)

    if not args.skip_protein:
        t0 = time.perf_counter()
        clipped = int(np.sum(np.abs(X_raw) > PROTEIN_HALF_RANGE))
        info = (f"Data: {args.data.name}, {X.shape[0]:,} x {X.shape[1]}; train {X_tr.shape[0]:,}"
                f" / test {X_te.shape[0]:,} (random_state=0). Public scaling: each feature / "
                f"its half-range {PROTEIN_HALF_RANGE.tolist()}, clipped to [-1, 1] "
                f"({clipped} of {X_raw.size} entries clipped), / 3; y clipped to "
                f"+-{PROTEIN_Y_BOUND:g} ({int(np.sum(np.abs(y_raw) > PROTEIN_Y_BOUND))} "
                f"clipped). constraint='l2', radius={PROTEIN_RADIUS:g}, data_norm=1, "
                f"y_bound={PROTEIN_Y_BOUND:g}, epsilon_huber={HUBER_THRESHOLD:g}, "
                f"objective perturbation alpha={PROTEIN_OP_ALPHA:g}. The half-ranges were "
                "written after seeing the file's column std (see the script): choosing "
                "them from the data is not private.")
        configs, rows = protein_table(X_tr, y_tr, X_te, y_te, epsilons, seeds)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            refs = [
                ("Ridge(alpha=1.0), public scaling",
                 r2_score(y_te, Ridge().fit(X_tr, y_tr).predict(X_te))),
                ("HuberRegressor(epsilon=1.35, max_iter=1000), public scaling",
                 r2_score(y_te, HuberRegressor(max_iter=1000).fit(X_tr, y_tr).predict(X_te))),
            ]
        # Non-private only: the file's centred features standardised with train statistics.
        R_tr, R_te = train_test_split(X_raw, test_size=0.1, random_state=0)
        centre, spread = R_tr.mean(axis=0), R_tr.std(axis=0)
        refs.append(("Ridge(alpha=1.0), features standardised with train statistics "
                     "(not private, no clipping)",
                     r2_score(y_te, Ridge().fit((R_tr - centre) / spread, y_tr)
                              .predict((R_te - centre) / spread))))
        # The best the l2 ball of PROTEIN_RADIUS allows for the Huber objective, by FISTA.
        # Larger radii for information only (choosing the radius from this costs privacy).
        objective = Objective(X_tr, y_tr, "huber", y_bound=PROTEIN_Y_BOUND)
        for radius in (PROTEIN_RADIUS, 2 * PROTEIN_RADIUS, 4 * PROTEIN_RADIUS):
            theta, gap, _ = fista("l2", objective, radius)
            pred = X_te @ theta[:-1] + theta[-1]
            label = "the same problem" if radius == PROTEIN_RADIUS else "information only"
            refs.append((f"non-private optimum, Huber on the l2 ball of radius {radius:g} "
                         f"({label}; FISTA, FW gap {gap:.0e}, ||w||_2 = "
                         f"{np.linalg.norm(theta[:-1]):.3g})", r2_score(y_te, pred)))
        print_protein(configs, rows, refs, len(seeds), info)
        print(f"\n({time.perf_counter() - t0:.1f} s)")

    if not args.skip_speed:
        t0 = time.perf_counter()
        with threadpool_limits(1):
            blocks = speed_table(X_tr, y_tr, repeats)
        print_speed(blocks, X_tr.shape, repeats)
        print(f"\n({time.perf_counter() - t0:.1f} s)")

    if not args.skip_scaling:
        t0 = time.perf_counter()
        rounds = args.scaling_rounds or (1 if args.quick else 3)
        with threadpool_limits(1):
            rows = scaling_table(args.scaling_ns, rounds)
        print_scaling(rows, rounds)
        print(f"\n({time.perf_counter() - t0:.1f} s)")

    if args.defaults:
        t0 = time.perf_counter()
        seeds_d = list(range(args.defaults_seeds))
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            rows = defaults_table(args.data.parent, seeds_d,
                                  estimators=tuple(args.defaults_estimators))
        print_defaults(rows, len(seeds_d))
        print(f"\n({time.perf_counter() - t0:.1f} s)")

    print(f"\nTotal wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
