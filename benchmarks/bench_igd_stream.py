"""Benchmark the DP-FTRL stream of PrivateIGDClassifier on Forest Covertype (class 2 vs rest).

One pass over the training rows in batches of 1,000 (``partial_fit``), against
``fit`` (IGD, 5 passes) and objective perturbation (``solver=
"objective_perturbation"``) on the same rows, and against scikit-learn's
``SGDClassifier.partial_fit`` on the same stream. Each private method takes the
best alpha of the same small public grid, by mean test accuracy over the seeds
(a benchmark choice: choosing on private data would itself cost privacy).

Printed per epsilon (delta = 1e-6), in Markdown:

* final test accuracy of the released model: DP-FTRL with ``horizon=n`` and
  with ``horizon=None``, the seed's per-release iterate perturbation
  (``stream="iterate_perturbation"``, ``horizon=n``), ``fit`` and objective
  perturbation; the gap to the better of the last two (target: <= 0.03), the
  worst seed against the majority class, and ``horizon=None`` against ``horizon=n``
  (target: within 0.01);
* prequential accuracy (each batch scored by the model released before it, as
  river's progressive validation does) of the DP-FTRL stream and of
  ``SGDClassifier.partial_fit`` (log loss, its default alpha), and their ratio;
* the stream's time per row against ``SGDClassifier.partial_fit``'s.

Data: ``covtype_ramp_test_rawunits.data.gz`` from ``../shared/data/`` relative
to the repository root (or ``--data``), scaled with the public UCI ranges only
(as ``bench_igd_covertype.py``: [-0.5, 0.5], then / sqrt(4.5), rows of norm <= 1).

Run::

    python benchmarks/bench_igd_stream.py           # eps = 1, 2 seeds, 2 alphas (~1 minute)
    python benchmarks/bench_igd_stream.py --full    # eps in {0.5, 1, 2}, 3 seeds, 3 alphas (~8 min)
    python benchmarks/bench_igd_stream.py --full --seeds 6 \
        --figure doc/images/igd_stream_accuracy.png
    python benchmarks/bench_igd_stream.py --full --targets-only --prefix-sums honaker

``--prefix-sums`` picks the DP-FTRL stream's mechanism (default: the BLT matrix
factorization; ``honaker`` is the binary tree it replaced); ``--targets-only``
skips the clipped and seed's-stream columns; ``--epsilons`` overrides the list.
"""

import argparse
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import sklearn  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import sklearn_dpol  # noqa: E402
from bench_igd_covertype import load_covertype, public_scale  # noqa: E402
from sklearn_dpol import PrivateIGDClassifier  # noqa: E402

DATA_NAME = "covtype_ramp_test_rawunits.data.gz"
DELTA = 1e-6
BATCH = 1_000
CLASSES = [0, 1]


def default_data():
    """``../shared/data`` of the repository root; from a worktree, of its parent."""
    for base in (ROOT.parent, ROOT.parent.parent):
        path = base / "shared" / "data" / DATA_NAME
        if path.exists():
            return path
    return ROOT.parent / "shared" / "data" / DATA_NAME


def covertype_split(path):
    """Covertype (class 2 vs rest) scaled by its public ranges, the stratified 90/10 split of
    every stream benchmark (random_state=0), and the test set's majority rate."""
    X_raw, y = load_covertype(path)
    X, _ = public_scale(X_raw)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    X_tr, X_te = np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te)
    return X_tr, X_te, y_tr, y_te, max(y_te.mean(), 1 - y_te.mean())


def run_stream(make, X_tr, y_tr, X_te, y_te):
    """One pass in batches; (final test accuracy, prequential accuracy, seconds)."""
    model, correct, elapsed = make(), 0, 0.0
    for start in range(0, len(y_tr), BATCH):
        Xb, yb = X_tr[start:start + BATCH], y_tr[start:start + BATCH]
        if hasattr(model, "coef_"):
            correct += int(np.sum(model.predict(Xb) == yb))
        else:  # no model yet: the zero model's prediction, classes[0]
            correct += int(np.sum(yb == CLASSES[0]))
        began = time.perf_counter()
        model.partial_fit(Xb, yb, classes=CLASSES)
        elapsed += time.perf_counter() - began
    return model.score(X_te, y_te), correct / len(y_tr), elapsed


# The clipping bound of the "clipped" column. NOT a public choice: it was picked from
# prototype runs on this data (0.25, 0.5, 0.1 and none tried); the default column
# (no clipping below L) is the one that needs no such choice.
GRADIENT_NORM = 0.5


def private_stream(eps, alpha, seed, horizon, stream="ftrl", gradient_norm=None,
                   prefix_sums="auto"):
    return lambda: PrivateIGDClassifier(
        epsilon=eps, delta=DELTA, alpha=alpha, data_norm=1.0, horizon=horizon, stream=stream,
        gradient_bound=gradient_norm, prefix_sums=prefix_sums, classes=CLASSES,
        random_state=seed)


def best_over_alphas(results):
    """``results[alpha] = list over seeds``: the alpha with the best mean, and its list."""
    alpha = max(results, key=lambda a: np.mean([r[0] for r in results[a]]))
    return alpha, results[alpha]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="the covtype split (gzip CSV)")
    parser.add_argument("--full", action="store_true",
                        help="eps in {0.5, 1, 2}, 3 seeds, alpha in {1e-3, 3e-4, 1e-4}")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                        help="override the epsilons (default: 1; --full: 0.5 1 2)")
    parser.add_argument("--prefix-sums", default="auto",
                        choices=("auto", "blt", "sqrt", "tree", "honaker"),
                        help="the DP-FTRL stream's prefix-sum mechanism (default: auto = blt)")
    parser.add_argument("--targets-only", action="store_true",
                        help="skip the clipped and seed's-stream columns (only what the "
                             "targets need; faster on a loaded machine)")
    parser.add_argument("--figure", type=Path, default=None,
                        help="also save the accuracy-against-epsilon figure (PNG) here")
    args = parser.parse_args(argv)
    epsilons = tuple(args.epsilons or ((0.5, 1.0, 2.0) if args.full else (1.0,)))
    alphas = (1e-3, 3e-4, 1e-4) if args.full else (1e-3, 1e-4)
    seeds = range(args.seeds or (3 if args.full else 2))
    path = args.data or default_data()

    print("# DP-FTRL stream of PrivateIGDClassifier, Forest Covertype (class 2 vs rest)\n")
    print("Command: `python " + shlex.join(
        [os.path.relpath(Path(__file__).resolve(), Path.cwd())] + sys.argv[1:]) + "`")
    print(f"\nsklearn_dpol {sklearn_dpol.__version__}, scikit-learn {sklearn.__version__}, "
          f"numpy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs (shared)")
    X_tr, X_te, y_tr, y_te, majority = covertype_split(path)
    n = len(y_tr)
    print(f"\nData: {path.name}, train {n:,} / test {len(y_te):,} (stratified 90/10, "
          f"random_state=0), majority class {majority:.4f}; one pass in batches of {BATCH:,} "
          f"({-(-n // BATCH)} calls); alpha grid {list(alphas)}; seeds {list(seeds)}; "
          f"delta {DELTA:g}; data_norm 1, intercept_scaling 'auto' (data_norm / sqrt(54); "
          f"L = sqrt(1 + 1/54)); DP-FTRL "
          f"prefix_sums={args.prefix_sums!r}.\n")

    sgd = [run_stream(lambda s=s: SGDClassifier(loss="log_loss", random_state=s),
                      X_tr, y_tr, X_te, y_te) for s in seeds]
    sgd_final, sgd_preq = np.mean([r[0] for r in sgd]), np.mean([r[1] for r in sgd])
    sgd_rate = n * len(sgd) / sum(r[2] for r in sgd)

    rows, timing = [], []
    for eps in epsilons:
        found = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, horizon, stream, clip in (
                    ("ftrl", n, "ftrl", None), ("ftrl_none", None, "ftrl", None),
                    ("clipped", n, "ftrl", GRADIENT_NORM),
                    ("seed", n, "iterate_perturbation", None)):
                if args.targets_only and name in ("clipped", "seed"):
                    found[name] = (float("nan"), [(float("nan"),) * 3])
                    continue
                found[name] = best_over_alphas({
                    alpha: [run_stream(private_stream(eps, alpha, s, horizon, stream, clip,
                                                      args.prefix_sums),
                                       X_tr, y_tr, X_te, y_te) for s in seeds]
                    for alpha in alphas})
            for solver in ("igd", "objective_perturbation"):
                found[solver] = best_over_alphas({
                    alpha: [(PrivateIGDClassifier(
                        epsilon=eps, delta=DELTA, alpha=alpha, data_norm=1.0, solver=solver,
                        classes=CLASSES, random_state=s).fit(X_tr, y_tr).score(X_te, y_te),)
                        for s in seeds]
                    for alpha in alphas})
        mean = {k: np.mean([r[0] for r in v[1]]) for k, v in found.items()}
        best_fit = max(mean["igd"], mean["objective_perturbation"])
        ftrl_runs = found["ftrl"][1]
        timing += [n / r[2] for r in ftrl_runs]
        rows.append(dict(
            eps=eps, mean=mean, alpha={k: v[0] for k, v in found.items()},
            worst=min(r[0] for r in ftrl_runs),
            worst_none=min(r[0] for r in found["ftrl_none"][1]),
            preq=np.mean([r[1] for r in ftrl_runs]),
            preq_none=np.mean([r[1] for r in found["ftrl_none"][1]]),
            preq_seed=np.mean([r[1] for r in found["seed"][1]]),
            gap=best_fit - mean["ftrl"], best_fit=best_fit,
            worst_clipped=min(r[0] for r in found["clipped"][1]),
            preq_clipped=np.mean([r[1] for r in found["clipped"][1]])))

    print("## Final released model (test accuracy, mean over seeds, best alpha in brackets)\n")
    print("| eps | DP-FTRL horizon=n | DP-FTRL horizon=None | seed's stream | fit (IGD) "
          "| objective pert. | gap to best fit (<= 0.03) | worst seed / None's (> majority) "
          "| None - n (within 0.01) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m, a = r["mean"], r["alpha"]
        print(f"| {r['eps']:g} | {m['ftrl']:.4f} ({a['ftrl']:g}) | {m['ftrl_none']:.4f} "
              f"({a['ftrl_none']:g}) | {m['seed']:.4f} ({a['seed']:g}) | {m['igd']:.4f} "
              f"({a['igd']:g}) | {m['objective_perturbation']:.4f} "
              f"({a['objective_perturbation']:g}) | {r['gap']:+.4f} "
              f"{'ok' if r['gap'] <= 0.03 else 'MISSED'} | {r['worst']:.4f} / "
              f"{r['worst_none']:.4f} "
              f"{'ok' if min(r['worst'], r['worst_none']) > majority else 'MISSED'} | "
              f"{m['ftrl_none'] - m['ftrl']:+.4f} "
              f"{'ok' if abs(m['ftrl_none'] - m['ftrl']) <= 0.01 else 'MISSED'} |")
    print(f"\nWith gradient_bound={GRADIENT_NORM} (clipping chosen on this data, see the "
          "script), horizon=n:\n")
    print("| eps | DP-FTRL clipped | gap to best fit | worst seed | prequential |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['eps']:g} | {r['mean']['clipped']:.4f} ({r['alpha']['clipped']:g}) | "
              f"{r['best_fit'] - r['mean']['clipped']:+.4f} | {r['worst_clipped']:.4f} | "
              f"{r['preq_clipped']:.4f} |")
    print(f"\nSGDClassifier.partial_fit (non-private, same stream): final {sgd_final:.4f}; "
          f"majority class {majority:.4f}.\n")
    print("## Prequential accuracy (each batch scored by the model released before it)\n")
    print("| eps | DP-FTRL horizon=n | DP-FTRL horizon=None | seed's stream | SGDClassifier "
          "| DP-FTRL / SGD |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['eps']:g} | {r['preq']:.4f} | {r['preq_none']:.4f} | {r['preq_seed']:.4f} "
              f"| {sgd_preq:.4f} | {r['preq'] / sgd_preq:.3f} |")
    if args.figure is not None:
        save_figure(args.figure, rows, sgd_final, sgd_preq, majority, len(seeds))
    ftrl_rate = float(np.median(timing))
    print(f"\nSpeed (partial_fit time only): DP-FTRL {ftrl_rate:,.0f} rows/s, "
          f"SGDClassifier {sgd_rate:,.0f} rows/s, ratio {ftrl_rate / sgd_rate:.2f} "
          "(shared machine: indicative only).")


def save_figure(path, rows, sgd_final, sgd_preq, majority, n_seeds):
    """Final and prequential accuracy against epsilon."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = [r["eps"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    curves = [("ftrl", "DP-FTRL stream, horizon=n (final)", "C0", "o-"),
              ("clipped", f"DP-FTRL stream, gradient_bound={GRADIENT_NORM} (final)", "C4", "x-"),
              ("ftrl_none", "DP-FTRL stream, horizon=None (final)", "C0", "s:"),
              ("seed", "seed's iterate-perturbation stream (final)", "C3", "v-"),
              ("igd", "fit, IGD 5 passes", "C2", "^-"),
              ("objective_perturbation", "fit, objective perturbation", "C1", "D-")]
    for key, label, colour, style in curves:
        ax.plot(eps, [r["mean"][key] for r in rows], style, color=colour, label=label)
    ax.plot(eps, [r["preq"] for r in rows], "o--", color="C0", alpha=0.6,
            label="DP-FTRL stream, horizon=n (prequential)")
    ax.axhline(sgd_final, color="k", lw=1, label="SGDClassifier.partial_fit (final)")
    ax.axhline(sgd_preq, color="k", lw=1, ls="--", label="SGDClassifier.partial_fit (prequential)")
    ax.axhline(majority, color="grey", lw=1, ls=":", label="majority class")
    ax.set_xscale("log", base=2)
    ax.set_xticks(eps, [f"{e:g}" for e in eps])
    ax.set_xlabel("epsilon (delta = 1e-6)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"Covertype class 2 vs rest, one pass in batches of {BATCH:,} "
                 f"(mean of {n_seeds} seeds, best alpha)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nFigure: {path}")


if __name__ == "__main__":
    main()
