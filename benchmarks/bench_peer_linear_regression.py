"""Private linear regression on real data against the main peer (diffprivlib).

Compares, at each epsilon, the test R^2 of

* ``PrivateQFTLRegressor.fit`` (ours): one Gaussian release of the sufficient
  statistics ``(X^T X, X^T y)``, ``(epsilon, delta)``-DP with delta = 1e-6 under
  replace-one neighbours, ridge penalty ``n * alpha``;
* diffprivlib 0.6.6's ``LinearRegression`` (the peer): the functional mechanism
  of Zhang et al. (2012), Laplace noise on the coefficients of the quadratic
  objective, **pure** epsilon-DP as the peer documents it (delta = 0). It is not
  a dependency: run this script in an environment that has it (see below);
  without it the peer rows are skipped;
* non-private scikit-learn ``LinearRegression`` and ``Ridge(alpha=1)`` on the
  same scaled data.

Data: ``cal_housing`` and ``trefor_protein`` from ``../shared/data`` (pass
``--data DIR``), loaded, scaled and bounded exactly as in ``bench_qftl.py``
(public ranges, never statistics of the data), random 80/20 split
(``random_state=0``). Both libraries get the same public bounds: ours as
``data_norm`` (row norm) and ``y_bound``, the peer as per-feature
``bounds_X`` (the interval each scaled feature lies in) and ``bounds_y``;
both clip to them. Ours uses ``alpha=1e-3`` (``bench_qftl.py``'s headline
value, picked there after looking at test R^2: that choice is not private);
the peer has no regularisation to choose. Each cell is the median test R^2
over noise seeds, then the mean and standard deviation in parentheses (a
single unstable fit can dominate the mean).

diffprivlib 0.6.6 does not import with scikit-learn >= 1.8; the environment
used for the published numbers has scikit-learn 1.7.2 and numpy 2.0. Like
``bench_objective_perturbation.py`` the script aliases ``DOUBLE``/``DTYPE`` in
``sklearn.tree._tree`` if they are missing (a shim that touches none of the
peer's regression code). Commands::

    python benchmarks/bench_peer_linear_regression.py --data ../shared/data
    /tmp/peer2/bin/python benchmarks/bench_peer_linear_regression.py --data ../shared/data
"""

import argparse
import math
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_qftl import CAL_FEATURES, load_cal_housing, load_protein  # noqa: E402
from sklearn.linear_model import LinearRegression, Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sklearn_dpol import PrivateQFTLRegressor  # noqa: E402

DELTA = 1e-6
ALPHA = 1e-3
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)

# The interval every scaled feature lies in, from the loaders' public scaling:
# cal_housing maps each of its 8 features to [-0.5, 0.5] and divides by
# sqrt(8 / 4); protein clips each of its 9 features to [-1, 1] and divides by 3.
FEATURE_HALF_WIDTH = {
    "cal_housing": 0.5 / math.sqrt(len(CAL_FEATURES) / 4.0),
    "trefor_protein": 1.0 / 3.0,
}
LOADERS = {"cal_housing": ("cal_housing.data.gz", load_cal_housing),
           "trefor_protein": ("trefor_protein.csv.gz", load_protein)}


def import_peer():
    """diffprivlib's LinearRegression, or None when it is not installed."""
    try:
        import sklearn.tree._tree as tree_module

        for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
            if not hasattr(tree_module, name):
                setattr(tree_module, name, value)
        from diffprivlib.models import LinearRegression as PeerLinearRegression
    except ImportError:
        return None
    return PeerLinearRegression


def ours(epsilon, seed, bounds, half_width):
    return PrivateQFTLRegressor(epsilon=epsilon, delta=DELTA, alpha=ALPHA, random_state=seed,
                                **bounds)


def make_peer(peer_class):
    def build(epsilon, seed, bounds, half_width):
        y_bound = bounds["y_bound"]
        return peer_class(epsilon=epsilon, bounds_X=(-half_width, half_width),
                          bounds_y=(-y_bound, y_bound), random_state=seed)
    return build


def r2_over_seeds(factory, epsilon, seeds, split, bounds, half_width):
    X_tr, X_te, y_tr, y_te = split
    scores = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = factory(epsilon, seed, bounds, half_width).fit(X_tr, y_tr)
        scores.append(model.score(X_te, y_te))
    return statistics.median(scores), statistics.mean(scores), statistics.pstdev(scores)


def run_dataset(name, data_dir, methods, seeds):
    file_name, loader = LOADERS[name]
    path = data_dir / file_name
    if not path.exists():
        print(f"skipped {name}: {path} not found (pass --data DIR)\n")
        return
    X, y, bounds, _ = loader(path)
    split = train_test_split(X, y, test_size=0.2, random_state=0)
    X_tr, X_te, y_tr, y_te = split
    half_width = FEATURE_HALF_WIDTH[name]
    assert np.all(np.abs(X) <= half_width + 1e-12), "the public feature bound must hold"
    ols = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    ridge = Ridge(alpha=1.0).fit(X_tr, y_tr).score(X_te, y_te)
    print(f"### {name}: {len(y_tr):,} train / {len(y_te):,} test rows, {X.shape[1]} features; "
          f"data_norm={bounds['data_norm']:g}, y_bound={bounds['y_bound']:g}, "
          f"feature bound +-{half_width:.4g}; {len(seeds)} noise seeds\n")
    print(f"Non-private: LinearRegression {ols:.4f}, Ridge(alpha=1) {ridge:.4f}\n")
    print("| method | " + " | ".join(f"eps={e:g}" for e in EPSILONS) + " |")
    print("|---|" + "---|" * len(EPSILONS))
    for label, factory in methods:
        cells = [r2_over_seeds(factory, e, seeds, split, bounds, half_width) for e in EPSILONS]
        print(f"| {label} | " + " | ".join(f"{med:.3g} ({mean:.3g} ± {sd:.2g})"
                                          for med, mean, sd in cells) + " |")
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data",
                        help="directory holding cal_housing.data.gz and trefor_protein.csv.gz")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    import sklearn

    methods = [(f"PrivateQFTLRegressor.fit (ours, delta={DELTA:g}, alpha={ALPHA:g})", ours)]
    peer = import_peer()
    if peer is not None:
        methods.append(("diffprivlib LinearRegression (pure eps-DP)", make_peer(peer)))
    peer_name = ("diffprivlib " + __import__("diffprivlib").__version__
                 if peer is not None else "not installed")
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}; peer: {peer_name}\n")
    for name in LOADERS:
        run_dataset(name, args.data, methods, range(args.seeds))


if __name__ == "__main__":
    main()
