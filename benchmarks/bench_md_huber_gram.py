"""Mirror descent's Huber loss on the Gram matrix (doc/privacy.md section 31; issue 19, item 2).

1. Speed: ``PrivateMirrorDescentRegressor(loss="huber")`` against ``HuberRegressor()``
   (and the squared loss against ``Ridge``) on ``bench_scaling``'s synthetic rows in the
   unit ball, ``d = 50``, ``epsilon = 1``; ratios of medians over interleaved rounds in
   the same run (3 rounds at ``n <= 1e5``, 1 above).
2. Utility (``--utility``): test R^2 of the Huber loss at its defaults on cal_housing and
   protein (``bench_mirror_descent``'s public scaling, 80/20 split, ``radius = 5``,
   ``epsilon_huber = 1``, 3 seeds) with the row kernel (the former path, forced) and the
   Gram path, and the time per fit of each.

Usage::

    python benchmarks/bench_md_huber_gram.py [--sizes 1e4,1e5,1e6] [--utility]
        [--data-dir /work/shared/data]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scaling import data, ratio_cell  # noqa: E402
from sklearn.linear_model import HuberRegressor, Ridge  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sklearn_dpol import PrivateMirrorDescentRegressor  # noqa: E402
from sklearn_dpol._core import mirror_descent as md  # noqa: E402

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def speed(sizes, d=50):
    print(f"## fit time, d = {d}, epsilon = 1: ours / scikit-learn (same run)")
    print("| n | T | MD huber s | HuberRegressor s | ratio | MD squared s | Ridge s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        X, y, _ = data(n, d)
        rounds = 3 if n <= 100_000 else 1
        ours, theirs = ratio_cell(
            lambda: PrivateMirrorDescentRegressor(solver="mirror_descent",
                                                  loss="huber", radius=1.0, random_state=0),
            HuberRegressor, X, y, rounds)
        sq, ridge = ratio_cell(lambda: PrivateMirrorDescentRegressor(solver="mirror_descent",
                                                                     radius=1.0, random_state=0),
                               lambda: Ridge(alpha=1.0), X, y, rounds)
        steps = PrivateMirrorDescentRegressor(solver="mirror_descent", loss="huber", radius=1.0,
                                              random_state=0).fit(X, y).max_iter_
        print(f"| {n:g} | {steps} | {ours:.3g} | {theirs:.3g} | {ours / theirs:.2f}x "
              f"| {sq:.3g} | {ridge:.3g} | {sq / ridge:.2f}x |", flush=True)


def utility(data_dir, seeds=(0, 1, 2)):
    import bench_mirror_descent as bmd  # noqa: PLC0415

    original = md.use_huber_gram
    print("\n## Huber at its defaults: test R^2, row kernel (forced) against the Gram path")
    print("| data set | epsilon | T | R^2 rows | R^2 Gram | max seed diff | s/fit rows "
          "| s/fit Gram |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for name, X, _, y, bounds in bmd.defaults_datasets(Path(data_dir)):
            tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
            X_tr, X_te = np.ascontiguousarray(X[tr]), np.ascontiguousarray(X[te])
            for eps in (0.5, 1.0, 2.0):
                out = {}
                for path in ("rows", "gram"):
                    md.use_huber_gram = original if path == "gram" else (
                        lambda *a, **k: False)
                    scores, start = [], time.perf_counter()
                    for seed in seeds:
                        model = PrivateMirrorDescentRegressor(
                            solver="mirror_descent",
                            epsilon=eps, delta=1e-6, loss="huber", epsilon_huber=1.0,
                            radius=5.0, data_norm=1.0, y_bound=bounds["y_bound"],
                            random_state=seed).fit(X_tr, y[tr])
                        scores.append(r2_score(y[te], model.predict(X_te)))
                    out[path] = (scores, (time.perf_counter() - start) / len(seeds),
                                 model.max_iter_)
                md.use_huber_gram = original
                diff = max(abs(a - b) for a, b in zip(out["rows"][0], out["gram"][0]))
                print(f"| {name} | {eps:g} | {out['gram'][2]} | {np.mean(out['rows'][0]):.4f} "
                      f"| {np.mean(out['gram'][0]):.4f} | {diff:.1e} | {out['rows'][1]:.3g} "
                      f"| {out['gram'][1]:.3g} |", flush=True)
    finally:
        md.use_huber_gram = original


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--utility", action="store_true")
    parser.add_argument("--data-dir", default=str(DATA_DIR),
                        help="folder of cal_housing.data.gz and trefor_protein.csv.gz")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    speed([int(float(s)) for s in args.sizes.split(",") if s])
    if args.utility:
        utility(args.data_dir)


if __name__ == "__main__":
    main()
