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


def fit_score(part, c, eps, seed, data):
    X_tr, y_tr, X_te, y_te, bounds = data
    if part == "fw":
        radius = c * bounds["y_bound"] / bounds["feature_bound"]
        reg = PrivateFrankWolfeLasso(epsilon=eps, delta=DELTA, radius=radius,
                                     feature_bound=bounds["feature_bound"],
                                     y_bound=bounds["y_bound"], random_state=seed)
    else:
        radius = c * bounds["y_bound"] / bounds["data_norm"]
        reg = PrivateMirrorDescentRegressor(epsilon=eps, delta=DELTA, radius=radius,
                                            data_norm=bounds["data_norm"],
                                            y_bound=bounds["y_bound"], random_state=seed)
    reg.fit(X_tr, y_tr)
    return r2_score(y_te, reg.predict(X_te))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--parts", nargs="+", default=["fw", "md"], choices=["fw", "md"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
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
