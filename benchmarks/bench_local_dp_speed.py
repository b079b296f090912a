"""Local-DP fits against one SGDRegressor pass, interleaved in one run (issue 19, item 5).

For each (n, d): ``ParameterFreeLocalDPRegressor`` (defaults: the sampled-coordinate
randomiser at epsilon = 1; and ``randomizer="laplace"``, the seed's, column ``PF-Lap``) and
``MutualInformationPrivateOGDRegressor`` (defaults, epsilon = 1) and
``SGDRegressor(max_iter=1, tol=None)`` fitted in interleaved rounds; medians of
CPU time (``time.process_time``: all three are single-threaded, and CPU time is
less inflated than wall time by the other sessions on a shared machine; pass
``--wall`` for wall time), ratios ours / SGD, and nanoseconds per coordinate of a row
(``n (d + 1)`` coordinates). The last lines time the exact sampler alone
(``release_values``: one exact normal / Laplace release per value, nothing
else; ``release_values_chunked``: the same bits with the variates drawn ahead in
chunks, as ParameterFree's Laplace kernel does; ``gaussian_report_direct``: rows of
1,001 coordinates, the same bits as one sample per value, MI-OGD's path), the floor
of any local randomiser that adds exact noise per coordinate.

With ``--breakdown``, each cell also prints where a fit's time goes, in ns per
coordinate (medians of the same interleaved rounds): the whole fit; the fit with
the noise off (``sample_epsilon=inf`` for ParameterFree, ``sigma = 0`` in MI-OGD's
protocol kernel: users and learner only); the learner alone, replaying noisy reports
of the fit's own scale (exact Laplace / normal noise around 0); the exact release
alone of the same number of values at the fit's scale (the floor of any exact local
randomiser), and for the normal also as MI-OGD's reports (``gaussian_report_direct``
row by row: the same bits as MI-OGD's fused full-feedback round, which computes them
with fewer passes, doc/privacy.md 56.8); and a one-row fit (the per-call fixed cost, in microseconds: the
mean of 20 in a row).

    python benchmarks/bench_local_dp_speed.py [--grid 10000x50,100000x50,10000x1000] [--rounds 5]
        [--breakdown]
"""

import argparse
import sys
from pathlib import Path
import statistics
import time
import warnings

import numpy as np
from sklearn.linear_model import SGDRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scaling import data as _scaling_data  # noqa: E402

from sklearn_dpol.linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
)

warnings.filterwarnings("ignore")


def data(n, d, seed=0):
    """The rows and targets of ``bench_scaling.py`` (unit ball, targets in [-1, 1])."""
    return _scaling_data(n, d, seed)[:2]


MODELS = {
    "SGD(1 ep)": lambda: SGDRegressor(max_iter=1, tol=None, random_state=0),
    "ParameterFree": lambda: ParameterFreeLocalDPRegressor(random_state=0),
    "PF (Laplace)": lambda: ParameterFreeLocalDPRegressor(randomizer="laplace", random_state=0),
    "MI-OGD": lambda: MutualInformationPrivateOGDRegressor(random_state=0),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="10000x50,100000x50,10000x1000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the fit without noise, the learner alone and the "
                             "exact release alone (ns per coordinate)")
    args = parser.parse_args()
    global _clock
    _clock = time.perf_counter if args.wall else time.process_time
    X0, y0 = data(2000, 5)
    for make in MODELS.values():          # compile / load the kernels
        make().fit(X0, y0)
    if args.breakdown:
        for run in _breakdown_runs(X0, y0).values():
            run()
    print(f"{'n':>9s} {'d':>5s} {'SGD ns/coord':>13s} {'PF x SGD':>9s} {'PF ns':>7s}"
          f" {'PF-Lap x SGD':>13s} {'MI x SGD':>9s} {'MI ns':>7s}")
    for cell in args.grid.split(","):
        n, d = (int(v) for v in cell.split("x"))
        X, y = data(n, d)
        runs = dict(MODELS)
        if args.breakdown:
            runs.update(_breakdown_runs(X, y))
        times = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, make in runs.items():
                start = _clock()
                make().fit(X, y) if name in MODELS else make()
                times[name].append(_clock() - start)
        med = {name: statistics.median(t) for name, t in times.items()}
        per = 1e9 / (n * (d + 1))
        sgd = med["SGD(1 ep)"]
        print(f"{n:9d} {d:5d} {sgd * per:13.1f} {med['ParameterFree'] / sgd:9.2f}"
              f" {med['ParameterFree'] * per:7.1f} {med['PF (Laplace)'] / sgd:13.2f}"
              f" {med['MI-OGD'] / sgd:9.2f}"
              f" {med['MI-OGD'] * per:7.1f}", flush=True)
        if args.breakdown:
            print("    ns per coordinate: " + ", ".join(
                f"{name} {med[name] * per:.1f}" for name in runs
                if name not in MODELS and not name.endswith("one row")))
            print("    one-row fit (fixed cost per call, us): " + ", ".join(
                f"{name[:-8]} {med[name] / ONE_ROW_FITS * 1e6:.0f}" for name in runs
                if name.endswith("one row")))
            laplace, normal = med["exact Laplace release alone"], med["exact normal release alone"]
            reports = med["exact normal reports alone (MI's path)"]
            print(f"    exact release alone / SGD: Laplace {laplace / sgd:.2f}x, "
                  f"normal {normal / sgd:.2f}x, normal as MI's reports {reports / sgd:.2f}x "
                  f"(the floor of the ratios above)", flush=True)
    from sklearn_dpol._core import _exact_kernels as kernels

    m = 2_000_000
    values = np.random.default_rng(1).uniform(-1.0, 1.0, m)
    out = np.empty(m)
    state = kernels.generator_state(np.random.default_rng(0))
    gamma, multiplier = kernels.grid(0.7)
    for gaussian, name in ((True, "normal"), (False, "laplace")):
        for release, how in ((kernels.release_values, "one sample per value"),
                             (kernels.release_values_chunked, "variates drawn in chunks")):
            release(values[:10], gamma, multiplier, gaussian, state, out[:10])
            best = min(_timed(release, values, gamma, multiplier, gaussian, state, out)
                       for _ in range(args.rounds))
            print(f"exact {name} release alone ({how}): {best / m * 1e9:.1f} ns per value")
    # MI-OGD's users' reports: rows of 1,001 coordinates, gaussian_report_direct (the
    # same bits as gaussian_report, one sample per value)
    rows = values[:m - m % 1001].reshape(-1, 1001)
    rows_out = np.empty_like(rows)
    _direct_reports(rows[:2], 0.7, state, rows_out[:2])
    best = min(_timed(_direct_reports, rows, 0.7, state, rows_out) for _ in range(args.rounds))
    print(f"exact normal reports alone (gaussian_report_direct, MI-OGD's path): "
          f"{best / rows.size * 1e9:.1f} ns per value")


_clock = time.process_time


def _breakdown_runs(X, y):
    """Callables timing the pieces of the two fits on ``(X, y)`` (see the module docstring)."""
    from sklearn_dpol._core import _exact_kernels as kernels
    from sklearn_dpol._core import mi_ogd
    from sklearn_dpol._core import parameter_free as pf
    from sklearn_dpol._core.noise import sampler_state

    n, d = X.shape
    n_dims = d + 1
    infinite = np.full(n, np.inf)
    pf_fit = ParameterFreeLocalDPRegressor(random_state=0).fit(X[:10], y[:10])
    mi_fit = MutualInformationPrivateOGDRegressor(random_state=0).fit(X[:10], y[:10])
    # Reports of the fits' own scales: exact noise around 0 (the clipped gradients are
    # small against it), drawn once; the learners replay them.
    laplace_scale = 2.0 / (float(pf_fit.epsilon) * pf_fit.feature_weights_[0])
    zeros = np.zeros(n * n_dims)
    grids = {"laplace": kernels.grid(laplace_scale), "normal": kernels.grid(mi_fit.sigma_)}
    reports = {}
    for law, (gamma, multiplier) in grids.items():
        reports[law] = np.empty(n * n_dims)
        kernels.release_values_chunked(zeros, gamma, multiplier, law == "normal",
                                       sampler_state(np.random.default_rng(1)), reports[law])
        reports[law] = reports[law].reshape(n, n_dims)
    state = sampler_state(np.random.default_rng(2))
    out = np.empty(n * n_dims)
    mi_kw = dict(loss=mi_fit.loss, huber_threshold=float(mi_fit.epsilon_huber),
                 data_norm=mi_fit.data_norm_, y_bound=mi_fit.y_bound_,
                 intercept=True, feedback="full", clip_norm=float(mi_fit.gradient_bound),
                 exploration=1.0, loss_bound=0.0)

    def pf_learner():
        learner = pf.make_learner(pf_fit.method, n_dims, G=pf_fit.gradient_bound_,
                                  prior=pf_fit.prior, b=float(pf_fit.prior_strength))
        learner.replay(reports["laplace"])

    def mi_learner():
        learner = mi_ogd.LazyOGDLearner(n_dims, radius=float(mi_fit.radius_),
                                        eta=mi_fit.step_size_, anytime=True)
        learner.replay(reports["normal"])

    def mi_without_noise():
        learner = mi_ogd.LazyOGDLearner(n_dims, radius=float(mi_fit.radius_),
                                        eta=mi_fit.step_size_, anytime=True)
        mi_ogd.run_protocol(learner, X, y, state, np.zeros((0, n_dims)), sigma=0.0, **mi_kw)

    def release(law):
        gamma, multiplier = grids[law]
        return lambda: kernels.release_values_chunked(zeros, gamma, multiplier, law == "normal",
                                                      state, out)

    def normal_reports():
        # MI-OGD's users' noise: one report of n_dims coordinates per row (the path of
        # its protocol kernel, gaussian_report_direct), noise only
        _direct_reports(zeros.reshape(n, n_dims), float(mi_fit.sigma_), state,
                        out.reshape(n, n_dims))

    return {
        "PF without noise": lambda: ParameterFreeLocalDPRegressor(random_state=0).fit(
            X, y, sample_epsilon=infinite),
        "PF learner alone": pf_learner,
        "MI without noise": mi_without_noise,
        "MI learner alone": mi_learner,
        "exact Laplace release alone": release("laplace"),
        "exact normal release alone": release("normal"),
        "exact normal reports alone (MI's path)": normal_reports,
        "PF one row": _repeated(lambda: ParameterFreeLocalDPRegressor(random_state=0).fit(
            X[:1], y[:1])),
        "MI one row": _repeated(lambda: MutualInformationPrivateOGDRegressor(random_state=0).fit(
            X[:1], y[:1])),
        "SGD one row": _repeated(lambda: SGDRegressor(max_iter=1, tol=None, random_state=0).fit(
            X[:1], y[:1])),
    }


ONE_ROW_FITS = 20


def _direct_reports(means, sigma, state, out):
    """``gaussian_report_direct`` on every row of ``means`` (one user's report each)."""
    from numba import njit

    from sklearn_dpol._core import _exact_kernels as kernels

    global _direct_kernel
    if _direct_kernel is None:
        @njit
        def run(means, sigma, state, out, ws, scratch):
            for i in range(means.shape[0]):
                kernels.gaussian_report_direct(means[i], sigma, out[i], ws, state, scratch)

        _direct_kernel = run
    _direct_kernel(means, sigma, state, out, kernels.workspace(),
                   kernels.report_scratch(means.shape[1]))


_direct_kernel = None


def _repeated(fit):
    """``fit`` run ``ONE_ROW_FITS`` times (the printout divides by it)."""
    def run():
        for _ in range(ONE_ROW_FITS):
            fit()
    return run


def _timed(fn, *a):
    start = _clock()
    fn(*a)
    return _clock() - start


if __name__ == "__main__":
    main()
