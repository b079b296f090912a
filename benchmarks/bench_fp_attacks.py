"""Floating-point attacks on the released bits, before (naive float release) and after (grid).

For each release path the attacker knows every record but the last and its two candidates,
computes the noiseless release of each hypothesis (the estimator at epsilon=inf) and fires
the event E = "the neighbour D' is ruled out by representability and D is not" (no double t
with fl(W_b + t) == z). At the claimed (1, 1e-6), DP requires P(E|D) <= e P(E|D') + 1e-6;
the table prints both rates and the implied lower bound on delta, delta_lb = p(E|D) -
e p(E|D') (Clopper-Pearson 95% bounds: lower for the first rate, upper for the second).

    python benchmarks/bench_fp_attacks.py --runs 300
"""

import argparse
import math
import warnings

import numpy as np
from scipy import stats

from sklearn_dpol._core import noise
from sklearn_dpol.audit import float_release, representable
from sklearn_dpol.exceptions import DefaultBoundWarning
from sklearn_dpol.linear_model import PrivateIGDClassifier

# data_norm=1 is the public bound of these synthetic rows (they are normalised by design).
warnings.filterwarnings("ignore", category=DefaultBoundWarning)


def neighbours(n=500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X @ np.arange(1, d + 1) > 0).astype(int)
    X2, y2 = X.copy(), y.copy()
    X2[-1], y2[-1] = -X[-1], 1 - y[-1]
    return (X, y), (X2, y2)


def release(params, data, seed, how):
    X, y = data
    # A fixed alpha: the attack compares with the epsilon=inf release of the same
    # model, and alpha="auto" resolves differently for each epsilon.
    est = PrivateIGDClassifier(classes=[0, 1], random_state=seed, **{"alpha": 1e-3, "solver": "igd", **params})
    if how == "fit":
        est.fit(X, y)
    else:
        for chunk in np.array_split(np.arange(len(y)), 5):
            est.partial_fit(X[chunk], y[chunk])
    return np.append(est.coef_.ravel(), est.intercept_)


SETTINGS = [
    ("IGD fit, shuffle=False", "fit", dict(shuffle=False)),
    ("IGD fit, hinge, max_iter=1", "fit", dict(shuffle=False, max_iter=1, loss="hinge")),
    ("IGD stream (5 releases), last", "stream", dict(horizon=500, stream="iterate_perturbation")),
]


def counts(params, how, runs):
    right, wrong = neighbours()
    W = [release({**params, "epsilon": np.inf}, data, 0, how) for data in (right, wrong)]
    out = []
    for truth in (right, wrong):
        c = 0
        for seed in range(runs):
            z = release(params, truth, seed + 1, how)
            c += representable(W[0], z) and not representable(W[1], z)
        out.append(c)
    return out


def delta_lower_bound(c_right, c_wrong, runs, eps=1.0):
    lo = stats.beta.ppf(0.025, c_right, runs - c_right + 1) if c_right else 0.0
    hi = stats.beta.ppf(0.975, c_wrong + 1, runs - c_wrong) if c_wrong < runs else 1.0
    return max(0.0, lo - math.exp(eps) * hi)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    exact = noise._exact_release
    print(f"runs per hypothesis: {args.runs}; claimed (epsilon, delta) = (1, 1e-6)")
    print(f"{'release path':34s} {'release':6s} {'E|D':>6s} {'E|D`':>6s} {'delta >=':>9s}")
    for name, how, params in SETTINGS:
        for label, fn in (("float", float_release), ("grid", exact)):
            noise._exact_release = fn
            try:
                c_right, c_wrong = counts(params, how, args.runs)
            finally:
                noise._exact_release = exact
            print(f"{name:34s} {label:6s} {c_right:6d} {c_wrong:6d} "
                  f"{delta_lower_bound(c_right, c_wrong, args.runs):9.3f}")


if __name__ == "__main__":
    main()
