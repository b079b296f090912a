"""Reproduce seed 002, Figure 2(c): test accuracy of private IGD against epsilon.

Seed 002 (Jain, Kothari and Thakurta 2012), Appendix G.2 and Figure 2(c):
online logistic regression with private implicit gradient descent (PIGD,
Algorithm 2) on Forest Covertype (10% of the rows held out for testing),
accuracy averaged over 10 runs, next to non-private IGD.

Curves (``PrivateIGDClassifier``, log loss, delta = 1e-6, alpha = 1e-3 fixed a
priori as in ``benchmarks/bench_igd_covertype.py``, intercept fitted):

* ``fit`` with ``max_iter=1``: one online pass of IGD over the training rows,
  one noisy release of the final model;
* a ``partial_fit`` stream in batches of 1,000 with ``horizon=n_train`` and
  the seed's per-release iterate perturbation (``stream="iterate_perturbation"``;
  the library's default DP-FTRL stream is in ``benchmarks/bench_igd_stream.py``): a
  model released after every batch, all releases jointly (epsilon, delta)-DP,
  the closest to the seed's setting where every iterate is public (it pays
  for the continual release with about sqrt(number of releases) more noise);
* non-private IGD (``epsilon=np.inf``, one pass), the seed's reference.

Default data (no files): a generated logistic task, d = 20 features uniform on
[-1, 1]^d / sqrt(d) (row norm <= 1 by construction, so ``data_norm=1`` is a
public bound), P(y = 1 | x) = sigmoid(x^T w*) with ||w*|| = 3 sqrt(3 d)
(margins of standard deviation about 3), 100,000 rows of which 10% are the test
set; the Bayes classifier's test accuracy is printed as the ceiling. With
``--data DIR``: ``covtype_ramp_test_rawunits.data.gz`` (92,962 rows, class 2
against the rest, stratified 90/10 split), scaled with the documented UCI
ranges of columns 1-10 to [-0.5, 0.5] and divided by sqrt(4.5), so rows have
norm <= 1 (public ranges only, never statistics of the data). The seed used
all 581,012 rows; only this 16% split is available offline.

Command (from the repository root)::

    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2c_igd.py              # ~1-2 min
    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2c_igd.py --data ../shared/data
    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2c_igd.py --full       # 581,012 rows, ~2 min
    PYTHONPATH=$PWD python examples/reproduce_seed002_fig2c_igd.py --smoke      # seconds

Default: 100,000 rows, 10 runs per epsilon; ``--full`` generates the seed's
581,012 rows. Writes ``doc/images/seed002_fig2c_igd_accuracy.png``.
"""

import gzip
import math
import sys

import numpy as np
from scipy.special import expit
from sklearn.model_selection import train_test_split

from _repro import Stopwatch, make_parser, pick, print_table, save_figure
from sklearn_dpol import PrivateIGDClassifier

DELTA = 1e-6
ALPHA = 1e-3
DATA_NORM = 1.0
BATCH = 1_000
EPSILONS = (0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
FIGURE = "seed002_fig2c_igd_accuracy.png"

N_FEATURES = 20
MARGIN_STD = 3.0

COVTYPE_FILE = "covtype_ramp_test_rawunits.data.gz"
# Documented UCI ranges of the 10 quantitative covertype columns: public facts.
UCI_LOW = np.array([1859, 0, 0, 0, -173, 0, 0, 0, 0, 0], dtype=float)
UCI_HIGH = np.array([3858, 360, 66, 1397, 601, 7117, 254, 254, 254, 7173], dtype=float)
# 10 values in [-0.5, 0.5] plus one wilderness and one soil indicator: norm <= sqrt(4.5).
COVTYPE_ROW_BOUND = math.sqrt(4.5)


def generated_task(n_rows):
    """Logistic task with public feature bounds; returns the split and Bayes accuracy."""
    rng = np.random.default_rng(2002)
    w_star = rng.standard_normal(N_FEATURES)
    # x_j uniform on [-1, 1]/sqrt(d) has variance 1/(3d): this norm gives x^T w* std MARGIN_STD.
    w_star *= MARGIN_STD * math.sqrt(3 * N_FEATURES) / np.linalg.norm(w_star)
    X = rng.uniform(-1.0, 1.0, (n_rows, N_FEATURES)) / math.sqrt(N_FEATURES)
    y = (rng.random(n_rows) < expit(X @ w_star)).astype(int)
    n_test = n_rows // 10
    X_tr, y_tr, X_te, y_te = X[n_test:], y[n_test:], X[:n_test], y[:n_test]
    bayes = float(np.mean((X_te @ w_star > 0) == y_te))
    return X_tr, y_tr, X_te, y_te, f"Bayes classifier {bayes:.4f}"


def covertype_task(data_dir):
    """Covertype class 2 vs rest, public UCI-range scaling, stratified 90/10 split."""
    with gzip.open(data_dir / COVTYPE_FILE, "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    X, labels = data[:, :54], data[:, 54].astype(int)
    X[:, :10] = np.clip((X[:, :10] - UCI_LOW) / (UCI_HIGH - UCI_LOW), 0.0, 1.0) - 0.5
    X /= COVTYPE_ROW_BOUND
    y = (labels == 2).astype(int)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    majority = max(y_te.mean(), 1 - y_te.mean())
    return X_tr, y_tr, X_te, y_te, f"majority class {majority:.4f}"


def one_pass_fit(X, y, epsilon, seed):
    clf = PrivateIGDClassifier(epsilon=epsilon, delta=DELTA, alpha=ALPHA, data_norm=DATA_NORM,
                               max_iter=1, classes=[0, 1], random_state=seed)
    return clf.fit(X, y)


def stream(X, y, epsilon, seed):
    clf = PrivateIGDClassifier(epsilon=epsilon, delta=DELTA, alpha=ALPHA, data_norm=DATA_NORM,
                               horizon=len(y), stream="iterate_perturbation", classes=[0, 1],
                               random_state=seed)
    for start in range(0, len(y), BATCH):
        clf.partial_fit(X[start : start + BATCH], y[start : start + BATCH])
    return clf


def accuracies(X_tr, y_tr, X_te, y_te, epsilons, seeds):
    """Per epsilon: test accuracies (fit, stream) over seeds, and the noise stds."""
    results = {}
    for eps in epsilons:
        fits = [one_pass_fit(X_tr, y_tr, eps, s) for s in seeds]
        streams = [stream(X_tr, y_tr, eps, s) for s in seeds]
        results[eps] = dict(
            fit=[c.score(X_te, y_te) for c in fits],
            stream=[c.score(X_te, y_te) for c in streams],
            fit_sigma=fits[0].noise_scale_, stream_sigma=streams[0].noise_scale_,
        )
    return results


def mean_std(values):
    return f"{np.mean(values):.4f} ± {np.std(values):.4f}"


def plot(results, epsilons, reference, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.2))
    for key, label, style in (("fit", "PrivateIGDClassifier fit (one pass, one release)", "o-"),
                              ("stream", f"partial_fit stream (a release every {BATCH:,} rows)",
                               "s--")):
        means = [np.mean(results[e][key]) for e in epsilons]
        stds = [np.std(results[e][key]) for e in epsilons]
        ax.errorbar(epsilons, means, yerr=stds, fmt=style, capsize=3, label=label)
    ax.axhline(reference, color="k", lw=1, label="non-private IGD (epsilon = inf)")
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (delta = 1e-6)")
    ax.set_ylabel("test accuracy")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    watch = Stopwatch()
    seeds = list(range(args.seeds or pick(args, 10, 10, 2)))
    epsilons = pick(args, EPSILONS, EPSILONS, (0.1, 1.0))
    if args.data is not None:
        X_tr, y_tr, X_te, y_te, ceiling = covertype_task(args.data)
        if args.smoke:
            X_tr, y_tr = X_tr[:5_000], y_tr[:5_000]
        name = "Covertype (class 2 vs rest)"
    else:
        X_tr, y_tr, X_te, y_te, ceiling = generated_task(pick(args, 100_000, 581_012, 5_000))
        name = f"generated logistic task, d={N_FEATURES}"
    print(f"Seed 002, Figure 2(c): {name}, {len(y_tr):,} train / {len(y_te):,} test rows; "
          f"alpha={ALPHA:g}, delta={DELTA:g}, data_norm={DATA_NORM:g}, {len(seeds)} runs; "
          f"reference: {ceiling}.")
    results = accuracies(X_tr, y_tr, X_te, y_te, (*epsilons, np.inf), seeds)
    rows = [[f"{eps:g}", mean_std(r["fit"]), r["fit_sigma"], mean_std(r["stream"]),
             r["stream_sigma"]] for eps, r in results.items()]
    print_table(f"Test accuracy, mean ± std over {len(seeds)} runs",
                ["epsilon", "fit, one pass", "fit noise std", f"stream, batches of {BATCH:,}",
                 "stream noise std (last release)"], rows)
    reference = float(np.mean(results[np.inf]["fit"]))
    title = f"Seed 002, Fig. 2(c): {name}"
    save_figure(plot(results, list(epsilons), reference, title), args.out, FIGURE)
    watch.report()


if __name__ == "__main__":
    sys.exit(main())
