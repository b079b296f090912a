"""The constants of objective perturbation's ``alpha="auto"``, chosen on synthetic data (issue 17).

``PrivateMirrorDescentRegressor(solver="objective_perturbation")`` resolves
``alpha="auto"`` by a public rule (``doc/privacy.md``, "Objective perturbation's
alpha='auto' at its own noise"): ``Lambda = n alpha = max(Lambda_w, sqrt(Lambda_w
Lambda_f))`` with the worst-spectrum balance ``Lambda_w = sqrt(k) sigma / T``, the
flat-spectrum balance ``Lambda_f = k sigma^2 / (n (y_bound / 4)^2)`` and ``sigma``
the noise the plan calibrates at that very ``Lambda`` (a fixed point). This script
fits the estimator at ``alpha = c * alpha_auto`` for ``c`` on a grid of half octaves
(``alpha_auto`` the default of the installed rule: ``c = 1``) on synthetic tasks that
share nothing with cal_housing and protein: the generator of ``bench_radius_rule.py``
(``d`` in {8, 30}, correlated or not, dense or 3-sparse ``beta``, signal share 0.3 or
0.7, centred or offset targets, tight or loose feature bounds) and, with
``--spectral``, 16 generators with decaying spectra (:func:`spectral_task`), each at
``n`` in {5,000, 20,000} training rows. It prints for every ``c`` the mean test R^2
gap to the best ``c`` of each (task, epsilon, n) (an oracle picked on the test
score), overall, by epsilon and by ``n``::

    python benchmarks/bench_op_alpha.py --seeds 6 7 8 9 10 11 --former --spectral

``--former`` adds the rule before as a last row (``sigma`` taken at the curvature
floor, ``Lambda = sqrt(k) sigma_0 / T``); ``--dump FILE`` writes every (task, epsilon,
n) row as JSON, from which the exponent and the prior were fitted (draws 0-5).
"""

import argparse
import itertools
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_radius_rule import N_TEST, N_TRAIN, task  # noqa: E402

from sklearn_dpol import PrivateMirrorDescentRegressor  # noqa: E402

DELTA = 1e-6
EPSILONS = (0.5, 1.0, 2.0)
N_SIZES = (5_000, 20_000)
CS = tuple(2.0 ** (k / 2.0) for k in range(-5, 6))     # 0.18 .. 5.7


def spectral_task(d, decay, tilt, signal_share, offset, rng, looseness=2.5):
    """A task with a decaying spectrum: feature covariance ``U diag(lambda_j) U^T``,
    ``lambda_j = j^-decay`` (``U`` a random rotation), and coefficients of size
    ``lambda_j^-tilt`` in the eigendirections (``tilt = 0``: equal coefficients;
    ``1/2``: equal signal per direction, large coefficients where the eigenvalue is
    small, the worst case of the ``alpha`` analysis); bounds, clipping and targets as
    in :func:`task`."""
    n = N_TRAIN + N_TEST
    U, _ = np.linalg.qr(rng.normal(size=(d, d)))
    scales = np.arange(1, d + 1) ** (-decay / 2.0)
    Z = (rng.normal(size=(n, d)) * scales) @ U.T
    Z /= np.sqrt(np.mean(scales ** 2))       # average feature variance 1 (generator's)
    b = 1.0 / np.sqrt(d)
    X = np.clip(Z, -looseness, looseness) / looseness * b
    beta = U @ (rng.choice([-1.0, 1.0], d) * scales ** (-2.0 * tilt))
    signal = X @ beta
    signal = signal / signal.std() * np.sqrt(signal_share)
    y = offset + signal + np.sqrt(1 - signal_share) * rng.normal(size=n)
    y_bound = 2.5 * np.sqrt(offset ** 2 + 1.0)
    y = np.clip(y, -y_bound, y_bound)
    bounds = dict(feature_bound=b, data_norm=1.0, y_bound=y_bound)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:], bounds


def fit_score(eps, seed, data, alpha):
    X_tr, y_tr, X_te, y_te, bounds = data
    reg = PrivateMirrorDescentRegressor(
        epsilon=eps, delta=DELTA, data_norm=bounds["data_norm"], y_bound=bounds["y_bound"],
        solver="objective_perturbation", alpha=alpha, random_state=seed).fit(X_tr, y_tr)
    return r2_score(y_te, reg.predict(X_te)), reg


def former_alpha(reg, n, d):
    """The rule before: ``sqrt(k) sigma_0 / T`` with ``sigma_0`` at the curvature floor."""
    from sklearn_dpol._core import mirror_descent as md
    from sklearn_dpol._core import objective_perturbation as op

    derivative = md.derivative_bound("squared", float(reg.epsilon_huber), reg.radius_,
                                     reg.data_norm_, reg.y_bound_, True)
    floor = op.plan(reg.epsilon, DELTA, n_samples=n, feature_norm=math.hypot(reg.data_norm_, 1),
                    derivative_bound=derivative, curvature_bound=1.0, alpha=0.0)
    extent = math.hypot(reg.radius_, reg.y_bound_)
    return max(floor.regularization, math.sqrt(d + 1) * floor.noise_std / extent) / n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--former", action="store_true")
    parser.add_argument("--spectral", action="store_true",
                        help="add 32 tasks with decaying spectra (spectral_task)")
    parser.add_argument("--dump", help="write every (task, eps, n) row as JSON lines here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print("command: python " + " ".join(sys.argv))
    specs = list(itertools.product((8, 30), (0.0, 0.6), (False, True), (0.3, 0.7), (2.5, 5.0)))
    tasks = []
    for k, (d, rho, sparse, share, loose) in enumerate(specs):
        offset = 0.5 if (k // 2) % 2 else 0.0     # as in bench_radius_rule.py
        X_tr, y_tr, X_te, y_te, bounds = task(d, rho, sparse, share, offset,
                                              np.random.default_rng(1000 + k), looseness=loose)
        for n in N_SIZES:
            tasks.append(((d, n), (X_tr[:n], y_tr[:n], X_te, y_te, bounds)))
    if args.spectral:
        specs = list(itertools.product((8, 30), (1.0, 2.0), (0.0, 0.5), (0.3, 0.7)))
        for k, (d, decay, tilt, share) in enumerate(specs):
            offset = 0.5 if k % 2 else 0.0
            X_tr, y_tr, X_te, y_te, bounds = spectral_task(
                d, decay, tilt, share, offset, np.random.default_rng(2000 + k))
            for n in N_SIZES:
                tasks.append(((d, n), (X_tr[:n], y_tr[:n], X_te, y_te, bounds)))
    start = time.time()
    rows = list(CS) + (["former"] if args.former else [])
    scores = {c: {} for c in rows}
    auto = {}
    for (ti, ((d, n), data)), eps in itertools.product(enumerate(tasks), EPSILONS):
        per_seed = {c: [] for c in rows}
        for s in args.seeds:
            _, reg = fit_score(eps, s, data, "auto")
            auto[(ti, eps)] = reg.alpha_
            for c in CS:
                per_seed[c].append(fit_score(eps, s, data, c * reg.alpha_)[0])
            if args.former:
                per_seed["former"].append(fit_score(eps, s, data, former_alpha(reg, n, d))[0])
        for c in rows:
            scores[c][(ti, eps, n)] = statistics.mean(per_seed[c])
    keys = list(scores[CS[0]])
    if args.dump:
        import json

        with open(args.dump, "w") as out:
            for key in keys:
                ti, eps, n = key
                d = tasks[ti][0][0]
                row = dict(task=ti, spectral=ti >= 64, eps=eps, n=n, d=d,
                           alpha_auto=auto[(ti, eps)], y_bound=tasks[ti][1][4]["y_bound"],
                           scores={str(c): scores[c][key] for c in rows})
                out.write(json.dumps(row) + "\n")
    best = {key: max(scores[c][key] for c in CS) for key in keys}
    print(f"\n{len(tasks)} tasks (generators x n in {N_SIZES}), seeds {args.seeds}, "
          f"eps {EPSILONS}, delta {DELTA:g}; alpha = c * alpha_auto "
          f"({time.time() - start:.0f} s)\n")
    groups = [("all", lambda key: True)]
    groups += [(f"eps={e:g}", lambda key, e=e: key[1] == e) for e in EPSILONS]
    groups += [(f"n={n:,}", lambda key, n=n: key[2] == n) for n in N_SIZES]
    print("| c | mean R^2 | " + " | ".join(f"gap {g}" for g, _ in groups) + " | worst gap |")
    print("|---|---|" + "---|" * (len(groups) + 1))
    for c in rows:
        gaps = {g: statistics.mean(best[k] - scores[c][k] for k in keys if keep(k))
                for g, keep in groups}
        worst = max(best[k] - scores[c][k] for k in keys)
        label = c if isinstance(c, str) else f"{c:.3g}"
        print(f"| {label} | {statistics.mean(scores[c].values()):.4f} | "
              + " | ".join(f"{gaps[g]:.4f}" for g, _ in groups) + f" | {worst:.4f} |")
    print("\nbest c of each (task, eps, n), counts:")
    counts = {c: 0 for c in CS}
    for key in keys:
        counts[max(CS, key=lambda c: scores[c][key])] += 1
    print(", ".join(f"{c:.3g}: {m}" for c, m in counts.items()))
    print(f"alpha_auto: min {min(auto.values()):.3g}, max {max(auto.values()):.3g}")


if __name__ == "__main__":
    main()
