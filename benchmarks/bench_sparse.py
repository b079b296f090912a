"""Sparse CSR input: private estimators against scikit-learn on the same CSR data.

* ``PrivateIGDClassifier`` (CSR numba kernels) against ``SGDClassifier`` (log
  loss, the same number of passes, ``tol=None``) at ``n = 100,000``,
  ``p = 100,000``, 0.1% density (100 stored entries per row, 1e7 in all).
* ``PrivateFrankWolfeLasso`` (``--fw-steps`` steps, sparse products, columns
  of the Gram matrix on demand) against ``Lasso`` on the same CSR data, with a
  sparse linear target.
* ``PrivateMirrorDescentRegressor`` (Huber loss on the L1 ball, ``--md-steps``
  full-batch steps through the CSR gradient kernel, O(nnz) each) against
  ``Lasso`` on the same CSR data and target as Frank-Wolfe.
* ``PrivateQFTLRegressor`` against ``Ridge`` at ``p = 1,000`` (its statistics
  are ``p x p``, so ``p = 1e5`` is not meaningful) and 1% density (10 entries
  per row), ``n = 100,000``.

Each pair is timed in the same run (best of ``--repeat``), after a warm-up
on a small matrix that compiles the numba kernels; the ratio is private time
over scikit-learn time. Accuracy (R^2) on the training data is printed so that
the comparison is between models that learn something.

    python benchmarks/bench_sparse.py                 # the sizes above
    python benchmarks/bench_sparse.py --n 20000 --p 20000   # smaller, quicker
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import Lasso, Ridge, SGDClassifier

from sklearn_dpol import (
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)


def sparse_design(n, p, per_row, rng):
    """CSR ``n x p`` with ``per_row`` stored entries per row (before duplicates merge)."""
    indices = rng.integers(0, p, size=n * per_row)
    indptr = np.arange(0, n * per_row + 1, per_row)
    data = rng.standard_normal(n * per_row) / np.sqrt(per_row)
    X = sp.csr_matrix((data, indices, indptr), shape=(n, p))
    X.sum_duplicates()
    return X


def best(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=100_000)
    parser.add_argument("--density", type=float, default=0.001)
    parser.add_argument("--qftl-p", type=int, default=1_000)
    parser.add_argument("--qftl-density", type=float, default=0.01)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--fw-steps", type=int, default=200)
    parser.add_argument("--md-steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    # Warm-up: compile the CSR kernels outside the timings.
    small = sparse_design(500, 50, 5, rng)
    PrivateIGDClassifier(random_state=0, classes=[0, 1]).fit(small, rng.integers(0, 2, 500))
    PrivateQFTLRegressor(random_state=0).fit(small, rng.uniform(-1, 1, 500))
    PrivateFrankWolfeLasso(random_state=0, max_iter=5).fit(small, rng.uniform(-1, 1, 500))
    PrivateMirrorDescentRegressor(random_state=0, max_iter=5, loss="huber", constraint="l1",
                                  ).fit(small, rng.uniform(-1, 1, 500))

    rows = []
    per_row = max(1, round(args.density * args.p))
    X = sparse_design(args.n, args.p, per_row, rng)
    w_true = np.zeros(args.p)
    support = rng.choice(args.p, size=min(args.p, 2_000), replace=False)
    w_true[support] = rng.standard_normal(support.size) * 3
    margin = X @ w_true
    y = (margin + 0.1 * rng.standard_normal(args.n) > 0).astype(int)
    print(f"IGD data: n={args.n}, p={args.p}, stored entries={X.nnz} "
          f"({X.nnz / (args.n * args.p):.4%}), passes={args.passes}")
    private = PrivateIGDClassifier(epsilon=1.0, alpha=1e-4, max_iter=args.passes,
                                   classes=[0, 1], random_state=0)
    baseline = SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=args.passes, tol=None,
                             random_state=0)
    t_private, _ = best(lambda: private.fit(X, y), args.repeat)
    t_baseline, _ = best(lambda: baseline.fit(X, y), args.repeat)
    rows.append(("PrivateIGDClassifier (eps=1)", "SGDClassifier(log_loss)", t_private,
                 t_baseline, private.score(X, y), baseline.score(X, y), "accuracy"))
    exact = PrivateIGDClassifier(epsilon=np.inf, alpha=1e-4, max_iter=args.passes,
                                 classes=[0, 1], random_state=0)
    t_exact, _ = best(lambda: exact.fit(X, y), 1)
    rows.append(("PrivateIGDClassifier (eps=inf)", "SGDClassifier(log_loss)", t_exact,
                 t_baseline, exact.score(X, y), baseline.score(X, y), "accuracy"))

    # Frank-Wolfe on the same CSR design, a sparse target (5 active features).
    active = rng.choice(args.p, size=5, replace=False)
    target = np.clip(X[:, active] @ np.array([2.0, -2.0, 1.5, -1.0, 1.0]) * 0.3
                     + 0.01 * rng.standard_normal(args.n), -1, 1)
    lasso_fw = PrivateFrankWolfeLasso(epsilon=1.0, radius=3.0, max_iter=args.fw_steps,
                                      random_state=0)
    lasso = Lasso(alpha=1e-5)
    t_private, _ = best(lambda: lasso_fw.fit(X, target), args.repeat)
    t_baseline, _ = best(lambda: lasso.fit(X, target), args.repeat)
    rows.append((f"PrivateFrankWolfeLasso (eps=1, {args.fw_steps} steps)", "Lasso(alpha=1e-5)",
                 t_private, t_baseline, lasso_fw.score(X, target), lasso.score(X, target),
                 "R^2"))
    mirror = PrivateMirrorDescentRegressor(epsilon=1.0, loss="huber", constraint="l1",
                                           radius=3.0, data_norm=1.0, y_bound=1.0,
                                           max_iter=args.md_steps, random_state=0)
    t_private, _ = best(lambda: mirror.fit(X, target), args.repeat)
    rows.append((f"PrivateMirrorDescentRegressor (eps=1, {args.md_steps} steps)",
                 "Lasso(alpha=1e-5)", t_private, t_baseline, mirror.score(X, target),
                 lasso.score(X, target), "R^2"))
    del X, margin

    per_row = max(1, round(args.qftl_density * args.qftl_p))
    Xq = sparse_design(args.n, args.qftl_p, per_row, rng)
    coef = rng.standard_normal(args.qftl_p) * 0.5
    target = np.clip(Xq @ coef + 0.05 * rng.standard_normal(args.n), -1, 1)
    print(f"QFTL data: n={args.n}, p={args.qftl_p}, stored entries={Xq.nnz} "
          f"({Xq.nnz / (args.n * args.qftl_p):.2%})")
    reg = PrivateQFTLRegressor(epsilon=1.0, alpha=1e-4, data_norm=3.0, random_state=0)
    ridge = Ridge(alpha=1e-4 * args.n)
    t_private, _ = best(lambda: reg.fit(Xq, target), args.repeat)
    t_baseline, _ = best(lambda: ridge.fit(Xq, target), args.repeat)
    rows.append(("PrivateQFTLRegressor (eps=1)", f"Ridge(solver={ridge.solver!r})", t_private,
                 t_baseline, reg.score(Xq, target), ridge.score(Xq, target), "R^2"))

    print()
    print(f"{'private':44s} {'baseline':26s} {'private s':>10s} {'sklearn s':>10s} "
          f"{'ratio':>7s} {'score (private / sklearn)':>28s}")
    for name, base, tp, tb, sp_, sb, metric in rows:
        print(f"{name:44s} {base:26s} {tp:10.3f} {tb:10.3f} {tp / tb:7.2f} "
              f"{metric:>10s} {sp_:.3f} / {sb:.3f}")


if __name__ == "__main__":
    main()
