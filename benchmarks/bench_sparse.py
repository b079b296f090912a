"""Sparse CSR input: private estimators against scikit-learn on the same CSR data.

* ``PrivateIGDClassifier`` (CSR numba kernels) against ``SGDClassifier`` (log
  loss, the same number of passes, ``tol=None``) at ``n = 100,000``,
  ``p = 100,000``, 0.1% density (100 stored entries per row, 1e7 in all).
* ``PrivateFrankWolfeLasso`` (sparse products, columns of the Gram matrix on
  demand) against ``Lasso`` on the same CSR data, with a sparse linear target:
  at its defaults (the budget only), with both bounds ``"auto"``, the same
  without noise, with public bounds near the data's scale, and at a fixed
  count of ``--fw-steps`` steps (what the default step count costs).
* ``PrivateMirrorDescentRegressor`` (Huber loss on the L1 ball, ``--md-steps``
  full-batch steps through the CSR gradient kernel, O(nnz) each) against
  ``Lasso`` on the same CSR data and target as Frank-Wolfe.
* ``PrivateQFTLRegressor`` against ``Ridge`` at ``p = 1,000`` (its statistics
  are ``p x p``, so ``p = 1e5`` is not meaningful) and 1% density (10 entries
  per row), ``n = 100,000``.
* ``solver="objective_perturbation"`` on CSR (sparse products; its Newton
  solver holds a ``p x p`` Hessian, so also at ``p = 1,000``, 1% density):
  ``PrivateIGDClassifier`` against ``LogisticRegression`` (the same ridge,
  ``C = 1 / (n alpha)``) on a learnable skewed design, with IGD's output
  perturbation on the same data for comparison, and
  ``PrivateMirrorDescentRegressor`` (squared loss) against ``Ridge`` on QFTL's
  data (session 33).

Each pair is timed in the same run (best of ``--repeat``), after a warm-up
on a small matrix that compiles the numba kernels; the ratio is private time
over scikit-learn time. The classifiers' accuracy is on held-out rows of a
learnable design (text-like column frequencies, the signal on the frequent
columns); the regressions' R^2 is on the training data.

    python benchmarks/bench_sparse.py                 # the sizes above
    python benchmarks/bench_sparse.py --n 20000 --p 20000   # smaller, quicker
    python benchmarks/bench_sparse.py --fw-only       # only the Frank-Wolfe rows
    python benchmarks/bench_sparse.py --op-only       # only the objective-perturbation rows

The Frank-Wolfe rows print the resolved entry bound ``B``, target bound ``Y``,
radius ``r`` and step count; ``"auto"`` bounds are private 98% quantiles (10% of
epsilon each; the entries' from the stored entries only).
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import Lasso, LogisticRegression, Ridge, SGDClassifier

from sklearn_dpol import (
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.exceptions import DefaultBoundWarning


def sparse_design(n, p, per_row, rng, skew=1):
    """CSR ``n x p`` with ``per_row`` stored entries per row (before duplicates merge).

    ``skew=1``: columns uniform. ``skew=k > 1``: column ``floor(p u^k)`` for
    uniform ``u``, so low-numbered columns are frequent and the tail is rare,
    as words are in text (the classification design below puts its signal on
    the frequent columns, so that a linear model can learn it from n rows).
    """
    if skew == 1:
        indices = rng.integers(0, p, size=n * per_row)
    else:
        indices = np.minimum((p * rng.random(n * per_row) ** skew).astype(np.int64), p - 1)
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
    parser.add_argument("--fw-steps", type=int, default=10,
                        help="the fixed step count of the row that shows what the default "
                             "count costs (read off this data: not a private choice)")
    parser.add_argument("--md-steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--fw-only", action="store_true",
                        help="only the Frank-Wolfe rows (same data as the full run)")
    parser.add_argument("--op-only", action="store_true",
                        help="only the objective-perturbation rows (same data as the full run)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    # Warm-up: compile the CSR kernels outside the timings.
    small = sparse_design(500, 50, 5, rng)
    PrivateIGDClassifier(random_state=0, classes=[0, 1]).fit(small, rng.integers(0, 2, 500))
    PrivateQFTLRegressor(random_state=0).fit(small, rng.uniform(-1, 1, 500))
    PrivateFrankWolfeLasso(random_state=0, max_iter=5).fit(small, rng.uniform(-1, 1, 500))
    PrivateMirrorDescentRegressor(solver="mirror_descent",
                                  random_state=0, max_iter=5, loss="huber", constraint="l1",
                                  ).fit(small, rng.uniform(-1, 1, 500))

    rows = []
    if args.op_only:
        op_rows(args, rng, rows)
        report(rows)
        return
    per_row = max(1, round(args.density * args.p))
    # Classification: columns drawn with a text-like skew (u^3), the signal on the 2,000
    # most frequent ones (about 25 of a row's 100 entries); scored on held-out rows.
    X = sparse_design(args.n, args.p, per_row, rng, skew=3)
    X_test = sparse_design(args.n // 5, args.p, per_row, rng, skew=3)
    w_true = np.zeros(args.p)
    w_true[:min(args.p, 2_000)] = rng.standard_normal(min(args.p, 2_000)) * 3
    y = (X @ w_true + 0.1 * rng.standard_normal(args.n) > 0).astype(int)
    if args.fw_only:
        fw_rows(args, rng, per_row, rows)
        report(rows)
        return
    y_test = (X_test @ w_true + 0.1 * rng.standard_normal(X_test.shape[0]) > 0).astype(int)
    print(f"IGD data: n={args.n}, p={args.p}, stored entries={X.nnz} "
          f"({X.nnz / (args.n * args.p):.4%}), passes={args.passes}; accuracy on "
          f"{X_test.shape[0]} held-out rows")
    private = PrivateIGDClassifier(epsilon=1.0, alpha=1e-4, max_iter=args.passes,
                                   classes=[0, 1], random_state=0)
    baseline = SGDClassifier(loss="log_loss", alpha=1e-4, max_iter=args.passes, tol=None,
                             random_state=0)
    t_private, _ = best(lambda: private.fit(X, y), args.repeat)
    t_baseline, _ = best(lambda: baseline.fit(X, y), args.repeat)
    reference = baseline.score(X_test, y_test)
    rows.append(("PrivateIGDClassifier (eps=1, alpha=1e-4)", "SGDClassifier(log_loss)",
                 t_private, t_baseline, private.score(X_test, y_test), reference, "accuracy"))
    default = PrivateIGDClassifier(epsilon=1.0, max_iter=args.passes, classes=[0, 1],
                                   random_state=0)
    t_default, _ = best(lambda: default.fit(X, y), 1)
    rows.append(("PrivateIGDClassifier (eps=1, alpha='auto')", "SGDClassifier(log_loss)",
                 t_default, t_baseline, default.score(X_test, y_test), reference, "accuracy"))
    exact = PrivateIGDClassifier(epsilon=np.inf, alpha=1e-4, max_iter=args.passes,
                                 classes=[0, 1], random_state=0)
    t_exact, _ = best(lambda: exact.fit(X, y), 1)
    rows.append(("PrivateIGDClassifier (eps=inf, alpha=1e-4)", "SGDClassifier(log_loss)",
                 t_exact, t_baseline, exact.score(X_test, y_test), reference, "accuracy"))
    fw_rows(args, rng, per_row, rows, md=True)

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
    op_rows(args, rng, rows)
    report(rows)


def op_rows(args, rng, rows):
    """Objective perturbation on CSR at ``p = --qftl-p`` against scikit-learn's solvers."""
    p = args.qftl_p
    per_row = max(1, round(args.qftl_density * p))
    X = sparse_design(args.n, p, per_row, rng, skew=3)
    X_test = sparse_design(args.n // 5, p, per_row, rng, skew=3)
    w_true = np.zeros(p)
    w_true[:min(p, 200)] = rng.standard_normal(min(p, 200)) * 3
    y = (X @ w_true + 0.1 * rng.standard_normal(args.n) > 0).astype(int)
    y_test = (X_test @ w_true + 0.1 * rng.standard_normal(X_test.shape[0]) > 0).astype(int)
    # Rows of norm about 1 (entries N(0, 1/10)): data_norm=1 is the public bound here.
    warnings.simplefilter("ignore", DefaultBoundWarning)
    print(f"objective perturbation data: n={args.n}, p={p}, stored entries={X.nnz} "
          f"({X.nnz / (args.n * p):.2%}); accuracy on {X_test.shape[0]} held-out rows")
    alpha = 1e-4
    logistic = LogisticRegression(C=1.0 / (args.n * alpha), max_iter=1000)
    t_baseline, _ = best(lambda: logistic.fit(X, y), args.repeat)
    reference = logistic.score(X_test, y_test)
    for epsilon in (1.0, np.inf):
        model = PrivateIGDClassifier(epsilon=epsilon, alpha=alpha, classes=[0, 1],
                                     solver="objective_perturbation", random_state=0)
        t_private, _ = best(lambda: model.fit(X, y), args.repeat)
        rows.append((f"PrivateIGDClassifier (OP, eps={epsilon:g}, alpha={alpha:g})",
                     "LogisticRegression", t_private, t_baseline,
                     model.score(X_test, y_test), reference, "accuracy"))
    igd_model = PrivateIGDClassifier(epsilon=1.0, alpha=alpha, classes=[0, 1], solver="igd",
                                     max_iter=args.passes, random_state=0)
    t_private, _ = best(lambda: igd_model.fit(X, y), args.repeat)
    rows.append((f"PrivateIGDClassifier (igd, eps=1, {args.passes} passes)",
                 "LogisticRegression", t_private, t_baseline,
                 igd_model.score(X_test, y_test), reference, "accuracy"))
    Xq = sparse_design(args.n, p, per_row, rng)
    coef = rng.standard_normal(p) * 0.5
    target = np.clip(Xq @ coef + 0.05 * rng.standard_normal(args.n), -1, 1)
    ridge = Ridge(alpha=alpha * args.n)
    t_baseline, _ = best(lambda: ridge.fit(Xq, target), args.repeat)
    for epsilon in (1.0, np.inf):
        # The defaults (alpha and radius "auto") with public bounds data_norm=1.5, y_bound=1.
        reg = PrivateMirrorDescentRegressor(epsilon=epsilon, solver="objective_perturbation",
                                            data_norm=1.5, random_state=0)
        t_private, _ = best(lambda: reg.fit(Xq, target), args.repeat)
        rows.append((f"PrivateMirrorDescentRegressor (OP, eps={epsilon:g}, defaults)",
                     f"Ridge(solver={ridge.solver!r})", t_private, t_baseline,
                     reg.score(Xq, target), ridge.score(Xq, target), "R^2"))


def fw_rows(args, rng, per_row, rows, md=False):
    """The regressions on the sparse design: Frank-Wolfe (and mirror descent) against Lasso."""
    # The regressions: the same skewed design, a sparse target on 5 frequent columns (with
    # uniform columns each would be stored in ~100 of the 1e5 rows, and no model, Lasso
    # included, could learn it: R^2 0.000 in the earlier version of this table).
    X = sparse_design(args.n, args.p, per_row, rng, skew=3)
    active = np.array([0, 1, 2, 3, 4])
    target = np.clip(X[:, active] @ np.array([2.0, -2.0, 1.5, -1.0, 1.0]) * 0.3
                     + 0.01 * rng.standard_normal(args.n), -1, 1)
    lasso = Lasso(alpha=1e-5)
    t_baseline, _ = best(lambda: lasso.fit(X, target), args.repeat)
    reference = lasso.score(X, target)

    def fw_row(label, repeat=args.repeat, **params):
        model = PrivateFrankWolfeLasso(random_state=0, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DefaultBoundWarning)
            t_private, _ = best(lambda: model.fit(X, target), repeat)
        resolved = (f"B={model.feature_bound_:.3g}, Y={model.y_bound_:.3g}, "
                    f"r={model.radius_:.3g}, {model.max_iter_} steps")
        rows.append((f"PrivateFrankWolfeLasso ({label}; {resolved})", "Lasso(alpha=1e-5)",
                     t_private, t_baseline, model.score(X, target), reference, "R^2"))

    # What a user gets (doc/privacy.md, "Frank-Wolfe at its defaults: ..."): the defaults with
    # the budget only (bounds 1, radius="auto", the default step count); both bounds "auto"
    # (private quantiles, 10% of epsilon each; the target's scale, ~0.1, is far below the
    # default y_bound=1); the same without noise (epsilon=inf, 20,000 steps); public bounds
    # near the data's scale (entries N(0, 1/100), |y| <= 0.67).
    fw_row("eps=1, defaults", epsilon=1.0)
    fw_row("eps=1, feature_bound='auto', y_bound='auto'", epsilon=1.0,
           feature_bound="auto", y_bound="auto")
    fw_row("eps=inf, feature_bound='auto', y_bound='auto'", repeat=1, epsilon=np.inf,
           feature_bound="auto", y_bound="auto")
    fw_row("eps=1, feature_bound=0.3, y_bound=0.3", epsilon=1.0, feature_bound=0.3,
           y_bound=0.3)
    # What the default step count costs here: a fixed count read off this data (so not a
    # private choice), with both bounds "auto".
    fw_row(f"eps=1, both 'auto', max_iter={args.fw_steps} fixed", epsilon=1.0,
           feature_bound="auto", y_bound="auto", max_iter=args.fw_steps)
    # The rows of the earlier table (radius 3, y_bound 1), kept for comparison.
    fw_row("eps=1, radius=3, feature_bound=0.3", epsilon=1.0, radius=3.0, feature_bound=0.3)
    fw_row("eps=1, radius=3, feature_bound='auto'", epsilon=1.0, radius=3.0,
           feature_bound="auto")
    if not md:
        return
    mirror = PrivateMirrorDescentRegressor(solver="mirror_descent",
                                           epsilon=1.0, loss="huber", constraint="l1",
                                           radius=3.0, data_norm=1.0, y_bound=1.0,
                                           max_iter=args.md_steps, random_state=0)
    t_private, _ = best(lambda: mirror.fit(X, target), args.repeat)
    rows.append((f"PrivateMirrorDescentRegressor (eps=1, {args.md_steps} steps)",
                 "Lasso(alpha=1e-5)", t_private, t_baseline, mirror.score(X, target),
                 lasso.score(X, target), "R^2"))


def report(rows):
    print()
    print(f"{'private':44s} {'baseline':26s} {'private s':>10s} {'sklearn s':>10s} "
          f"{'ratio':>7s} {'score (private / sklearn)':>28s}")
    for name, base, tp, tb, sp_, sb, metric in rows:
        print(f"{name:44s} {base:26s} {tp:10.3f} {tb:10.3f} {tp / tb:7.2f} "
              f"{metric:>10s} {sp_:.3f} / {sb:.3f}")


if __name__ == "__main__":
    main()
