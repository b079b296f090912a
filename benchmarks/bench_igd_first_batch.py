"""A DP-FTRL stream's first batch: small first batches against a 1,000-row one (covertype).

``PrivateIGDClassifier.partial_fit`` (DP-FTRL, ``alpha="auto"``) on Forest Covertype
(class 2 against the rest), one pass: a first batch of 37, 100 or 1,000 rows, then
batches of ``--later`` rows. Prints the final test accuracy (mean +- standard
deviation over the seeds, the worst seed, and the difference to the largest first
batch) for each epsilon and horizon (``None`` and the training set's size). Target
(review 128, item 1): every small first batch within about 0.01 of the largest.

DP-FTRL's regularisation counts at least ``NOISE_FLOOR`` (32) times the released
prefix sum's noise in records (``doc/privacy.md`` 58.7); ``--noise-floor 0`` runs
the rule before it (``lam_k = alpha t_k``), for comparison only.

Data: ``covtype_ramp_test_rawunits.data.gz`` from ``../shared/data/`` relative to
the repository root (or ``--data``), scaled with the public UCI ranges only (as
``bench_igd_stream.py``: rows of norm <= 1, ``data_norm=1``), the same stratified
90/10 split.

Run::

    python benchmarks/bench_igd_first_batch.py                      # eps 0.5 1 2, 6 seeds (~1 min)
    python benchmarks/bench_igd_first_batch.py --noise-floor 0      # the rule before
    python benchmarks/bench_igd_first_batch.py --later 1000 --epsilons 1
"""

import argparse
import os
import shlex
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


from bench_igd_stream import covertype_split, default_data  # noqa: E402
from sklearn_dpol import PrivateIGDClassifier  # noqa: E402
from sklearn_dpol._core import ftrl  # noqa: E402

CLASSES = [0, 1]


def run(X_tr, y_tr, X_te, y_te, *, eps, first, later, horizon, seed):
    clf = PrivateIGDClassifier(epsilon=eps, data_norm=1.0, horizon=horizon, classes=CLASSES,
                               random_state=seed)
    clf.partial_fit(X_tr[:first], y_tr[:first])
    for start in range(first, len(y_tr), later):
        clf.partial_fit(X_tr[start:start + later], y_tr[start:start + later])
    return clf.score(X_te, y_te)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="the covtype split (gzip CSV)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--firsts", type=int, nargs="+", default=[37, 100, 1000],
                        help="first batch sizes (the largest is the reference)")
    parser.add_argument("--later", type=int, default=2000, help="size of the later batches")
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--noise-floor", type=float, default=None,
                        help="override ftrl.NOISE_FLOOR (0: the rule before; comparison only)")
    args = parser.parse_args(argv)
    if args.noise_floor is not None:
        ftrl.NOISE_FLOOR = args.noise_floor
    path = args.data or default_data()
    X_tr, X_te, y_tr, y_te, majority = covertype_split(path)
    n = len(y_tr)
    print("# DP-FTRL stream, small first batches (Forest Covertype, class 2 vs rest)\n")
    print("Command: `python " + shlex.join(
        [os.path.relpath(Path(__file__).resolve(), Path.cwd())] + sys.argv[1:]) + "`\n")
    print(f"Train {n:,} / test {len(y_te):,}, majority class {majority:.4f}; alpha='auto', "
          f"data_norm 1, delta 1e-6 (default); later batches of {args.later:,}; "
          f"NOISE_FLOOR {ftrl.NOISE_FLOOR:g}; seeds 0-{args.seeds - 1}.\n")
    reference = max(args.firsts)
    print("| eps | horizon | " + " | ".join(f"first {f:,}" for f in args.firsts) + " |")
    print("|---|---|" + "---|" * len(args.firsts))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in args.epsilons:
            for horizon in (None, n):
                scores = {first: [run(X_tr, y_tr, X_te, y_te, eps=eps, first=first,
                                      later=args.later, horizon=horizon, seed=seed)
                                  for seed in range(args.seeds)]
                          for first in args.firsts}
                ref = np.mean(scores[reference])
                cells = [f"{np.mean(v):.4f} +- {np.std(v):.4f} (worst {np.min(v):.4f}"
                         + ("" if f == reference else f", {np.mean(v) - ref:+.4f}") + ")"
                         for f, v in scores.items()]
                print(f"| {eps:g} | {'None' if horizon is None else 'n'} | "
                      + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
