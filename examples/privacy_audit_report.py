"""Audit every estimator and print the table of lower bounds for doc/audit.md.

For each configuration: the exact epsilon of the audited neighbouring pair
(what a perfect audit approaches), the audited lower bound at alpha=0.05, and
the same audit with the calibration broken on purpose (noise halved, noise
removed). Run: ``python examples/privacy_audit_report.py [--runs N]``.
"""

import argparse
from unittest import mock

import numpy as np

import sklearn_dpol.linear_model._igd as igd_module
from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol.audit import audit_estimator
from sklearn_dpol.privacy import gaussian_mu

EPSILON, DELTA = 1.0, 1e-6


def worst_case(n=12, d=3):
    """The pair that attains the IGD bound (doc/privacy.md, section 2)."""
    X = np.zeros((n, d))
    X[0, 0] = 1.0
    y = np.array([1] + [0, 1] * ((n - 1) // 2) + [0] * ((n - 1) % 2))
    return X, y, (-X[0], 1)


def default_case(n=12, d=3):
    """Generic rows; the canary flips the first row's direction and label."""
    X, y, _ = worst_case(n, d)
    X[1:] = np.random.default_rng(0).normal(size=X[1:].shape)
    return X, y, (-X[0] * 10.0, 0)


ATTAINED = dict(loss="hinge", alpha=1.0, data_norm=1.0, fit_intercept=False, max_iter=1)
CONFIGS = [
    ("IGD hinge, bound attained", ATTAINED, worst_case, "final", None),
    ("IGD hinge, bound attained, stream (horizon 12)", dict(ATTAINED, horizon=12),
     worst_case, "stream", 4),
    ("IGD hinge, bound attained, stream (anytime)", ATTAINED, worst_case, "stream", 4),
    ("IGD defaults (log loss)", {}, default_case, "final", None),
    ("IGD defaults, stream", {}, default_case, "stream", 3),
    ("IGD hinge defaults", dict(loss="hinge"), default_case, "final", None),
    ("GIGA defaults (burn-in longer than the data)", dict(update="gradient"),
     default_case, "final", None),
    ("GIGA alpha=0.5 (past burn-in)", dict(update="gradient", alpha=0.5), default_case,
     "final", None),
    ("GIGA alpha=0.5, stream", dict(update="gradient", alpha=0.5), default_case, "stream", 3),
]


def audit(params, case, release, batch_size, runs, factor=1.0):
    X, y, canary = case()
    estimator = PrivateIGDClassifier(epsilon=EPSILON, delta=DELTA, classes=[0, 1], **params)
    with mock.patch.object(igd_module, "gaussian_mu",
                           lambda e, d: factor * gaussian_mu(e, d)):
        return audit_estimator(estimator, X, y, 0, canary, runs, release=release,
                               batch_size=batch_size, random_state=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000, help="releases per data set")
    args = parser.parse_args(argv)
    print(f"Claimed ({EPSILON:g}, {DELTA:g})-DP; audits at alpha=0.05 with {args.runs:,} "
          "replayed releases per data set (half choose the threshold, half are counted).\n")
    print("| estimator and release | exact epsilon of the pair | audited lower bound | "
          "noise halved: lower bound | noise removed: lower bound |")
    print("|---|---|---|---|---|")
    warnings_off = np.errstate(all="ignore")
    with warnings_off:
        for name, params, case, release, batch_size in CONFIGS:
            tight = audit(params, case, release, batch_size, args.runs)
            halved = audit(params, case, release, batch_size, args.runs, factor=2.0)
            removed = audit(params, case, release, batch_size, 1000, factor=np.inf)
            print(f"| {name} | {tight.instance_epsilon:.3f} | {tight.epsilon_lower_bound:.3f} | "
                  f"{halved.epsilon_lower_bound:.3f} (pair: {halved.instance_epsilon:.3f}) | "
                  f"{removed.epsilon_lower_bound:.2f} |", flush=True)


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main()
