"""Continual release on a stream: known horizon against the anytime schedule.

Each ``partial_fit`` call releases a model. With a known horizon every sample
buys an equal share of the budget; with ``horizon=None`` the anytime schedule
keeps the guarantee for a stream of any length and pays for it with more noise
per release. Run: ``python examples/stream_with_horizon.py``.
"""

import argparse

from sklearn.datasets import make_classification

from sklearn_dpol import PrivateIGDClassifier


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=5_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args(argv)

    X, y = make_classification(n_samples=args.n_samples + 20_000, n_features=20,
                               n_informative=8, random_state=0)
    X_test, y_test = X[args.n_samples:], y[args.n_samples:]
    X, y = X[:args.n_samples], y[:args.n_samples]
    # The schedules this example shows are those of the seed's stream.
    common = dict(epsilon=args.epsilon, delta=1e-6, alpha=1e-2, data_norm=4.0, random_state=0,
                  stream="iterate_perturbation")
    known = PrivateIGDClassifier(horizon=args.n_samples, **common)
    anytime = PrivateIGDClassifier(horizon=None, **common)

    print("| samples seen | horizon known: accuracy | noise std | anytime: accuracy | noise std |")
    print("|---|---|---|---|---|")
    for start in range(0, args.n_samples, args.batch_size):
        batch = slice(start, start + args.batch_size)
        for model in (known, anytime):
            model.partial_fit(X[batch], y[batch], classes=[0, 1])
        print(f"| {start + args.batch_size} | {known.score(X_test, y_test):.3f} | "
              f"{known.noise_scale_:.4f} | {anytime.score(X_test, y_test):.3f} | "
              f"{anytime.noise_scale_:.4f} |")
    print(f"\nknown horizon: {known.privacy_}")
    print(f"anytime: {anytime.privacy_}")


if __name__ == "__main__":
    main()
