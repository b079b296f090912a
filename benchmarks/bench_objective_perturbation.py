"""Objective perturbation on Forest Covertype (class 2 vs rest) against the main peer.

Compares, at each epsilon (delta = 1e-6 for ours):

* ``PrivateIGDClassifier(solver="objective_perturbation")``: Gaussian objective
  perturbation with the exact profile of ``doc/privacy.md`` section 7;
* ``PrivateIGDClassifier()`` (IGD, output perturbation), the library's default;
* the main peer, diffprivlib's ``LogisticRegression`` (objective perturbation of
  Chaudhuri et al., pure epsilon-DP), when it can be imported (it is not a
  dependency: install it in a separate environment, see below);
* non-private scikit-learn ``LogisticRegression`` with the same regularisation.

Same task, split and public scaling as ``bench_igd_covertype.py`` (90/10
stratified split, UCI ranges, rows of norm at most 1). Mean and standard
deviation of the test accuracy over seeds; fit times in the same run.

Hyperparameters are fixed a priori (not tuned on this data): ``alpha = 1 / n``
(scikit-learn's default ``C = 1`` in mean form) for objective perturbation and
for the peer (``C = 1``), the default of ``bench_igd_covertype.py`` for IGD.

diffprivlib 0.6.6 imports ``DOUBLE`` from ``sklearn.tree._tree``, which
scikit-learn 1.9 no longer defines; the benchmark adds that alias before
importing it (a benchmark-only shim that touches none of the peer's logistic
regression code). Run with the peer::

    python -m venv /tmp/peer --system-site-packages
    /tmp/peer/bin/pip install --no-deps diffprivlib==0.6.6
    /tmp/peer/bin/python benchmarks/bench_objective_perturbation.py

or without it: ``python benchmarks/bench_objective_perturbation.py`` (~1 min).
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_igd_covertype import ALPHA as IGD_ALPHA  # noqa: E402
from bench_igd_covertype import DEFAULT_DATA, load_covertype, public_scale  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sklearn_dpol import PrivateIGDClassifier  # noqa: E402

DELTA = 1e-6
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, np.inf)


def import_peer():
    """diffprivlib's LogisticRegression, or None when it is not installed."""
    try:
        import sklearn.tree._tree as tree_module

        for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
            if not hasattr(tree_module, name):
                setattr(tree_module, name, value)
        from diffprivlib.models import LogisticRegression as PeerLogisticRegression
    except ImportError:
        return None
    return PeerLogisticRegression


def ours_op(epsilon, seed, n):
    return PrivateIGDClassifier(epsilon=epsilon, delta=DELTA, alpha=1.0 / n,
                                solver="objective_perturbation", classes=[0, 1],
                                random_state=seed)


def ours_igd(epsilon, seed, n):
    return PrivateIGDClassifier(epsilon=epsilon, delta=DELTA, alpha=IGD_ALPHA, classes=[0, 1],
                                random_state=seed)


def make_peer(peer_class):
    def build(epsilon, seed, n):
        if np.isinf(epsilon):
            return None
        return peer_class(epsilon=epsilon, data_norm=1.0, C=1.0, random_state=seed,
                          max_iter=1000)
    return build


def evaluate(factory, epsilon, seeds, data):
    X_tr, X_te, y_tr, y_te = data
    accuracies, times = [], []
    for seed in seeds:
        model = factory(epsilon, seed, len(y_tr))
        if model is None:
            return None
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_tr, y_tr)
        times.append(time.perf_counter() - start)
        accuracies.append(model.score(X_te, y_te))
    return statistics.mean(accuracies), statistics.pstdev(accuracies), statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    X_raw, y = load_covertype(args.data)
    X, _ = public_scale(X_raw)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.1, stratify=y, random_state=0)
    data = (np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te), y_tr, y_te)
    seeds = range(args.seeds)
    n = len(y_tr)
    reference = LogisticRegression(C=1.0, max_iter=5000).fit(X_tr, y_tr).score(X_te, y_te)
    methods = [("objective perturbation (ours, delta=1e-6)", ours_op),
               ("IGD output perturbation (ours, delta=1e-6)", ours_igd)]
    peer = import_peer()
    if peer is not None:
        methods.append(("diffprivlib LogisticRegression (pure eps-DP)", make_peer(peer)))
    print(f"Covertype class 2 vs rest: n_train={n}, n_test={len(y_te)}, "
          f"{args.seeds} seeds; non-private LogisticRegression(C=1): {reference:.4f}")
    print("peer: " + ("diffprivlib " + __import__("diffprivlib").__version__
                      if peer is not None else "not installed"))
    print()
    print("| method | epsilon | test accuracy | std | fit time (s) |")
    print("|---|---|---|---|---|")
    for name, factory in methods:
        for epsilon in EPSILONS:
            result = evaluate(factory, epsilon, seeds, data)
            if result is None:
                continue
            mean, std, fit_time = result
            label = "inf" if np.isinf(epsilon) else f"{epsilon:g}"
            print(f"| {name} | {label} | {mean:.4f} | {std:.4f} | {fit_time:.2f} |", flush=True)


if __name__ == "__main__":
    main()
