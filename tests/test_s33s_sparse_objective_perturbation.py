"""Objective perturbation on sparse CSR input (issue 18, item 1; session 33, helper S).

``solver="objective_perturbation"`` of ``PrivateIGDClassifier`` and
``PrivateMirrorDescentRegressor`` reads CSR through
:class:`~sklearn_dpol._core.objective_perturbation.SparseClippedDesign` (SciPy sparse
products on the dense design's row chunks, clipping factors from the stored entries
only): the same model as the dense input, the same plan and guarantee, and a
certificate whose rounding bound still covers the exact gradient
(``doc/privacy.md``, "Sparse input for objective perturbation").
"""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpol import PrivateIGDClassifier, PrivateMirrorDescentRegressor
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.privacy import PrivacyAccountant

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_dpol.exceptions.DefaultBoundWarning")


def _data(n=400, p=30, density=0.15, seed=0, scale=3.0):
    """Signed CSR data with rows above the bound, an empty row and explicit zeros."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr") * scale
    X.data -= scale / 2
    X.data[::17] = 0.0                     # explicit stored zeros
    X = X.tolil()
    X[3, :] = 0.0                          # an empty row
    X = X.tocsr()
    X.data[X.indptr[5]:X.indptr[6]] = 0.0  # a row of stored zeros only
    dense = X.toarray()
    labels = (dense @ rng.standard_normal(p) > 0).astype(int)
    labels3 = labels + (dense[:, 0] > 0.3)
    targets = np.clip(dense @ rng.standard_normal(p) * 0.3, -1.5, 1.5)
    return X, dense, labels, labels3, targets


def _released(est):
    return np.append(np.ravel(est.coef_), est.intercept_)


def _close(b, a, rel=1e-12):
    """``||b - a|| <= rel ||a||`` (plus a hair for an all-zero model)."""
    gap, size = np.linalg.norm(b - a), np.linalg.norm(a)
    assert gap <= rel * size + 1e-300, (gap, size)


IGD_CASES = [
    dict(),
    dict(fit_intercept=False),
    dict(alpha=1e-4),
    dict(class_weight={0: 1.0, 1: 3.0}),
    dict(data_norm=0.5, intercept_scaling=2.0),
]


@pytest.mark.parametrize("params", IGD_CASES)
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_igd_objective_perturbation_csr_equals_dense(params, epsilon, weighted):
    X, dense, y, _, _ = _data()
    w = np.linspace(0.0, 1.0, len(y)) if weighted else None
    kwargs = dict(epsilon=epsilon, solver="objective_perturbation", classes=[0, 1],
                  random_state=3, **params)
    a = PrivateIGDClassifier(**kwargs).fit(dense, y, sample_weight=w)
    b = PrivateIGDClassifier(**kwargs).fit(X, y, sample_weight=w)
    assert b.solver_ == a.solver_ == "objective_perturbation"
    _close(_released(b), _released(a))
    assert b.alpha_ == a.alpha_ and b.noise_scale_ == a.noise_scale_
    assert str(b.privacy_) == str(a.privacy_)
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(dense), rtol=1e-11)


@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_igd_multiclass_and_the_stream_after_the_fit(epsilon):
    X, dense, _, y3, _ = _data(seed=1)
    kwargs = dict(epsilon=epsilon, solver="objective_perturbation", classes=[0, 1, 2],
                  random_state=0)
    a = PrivateIGDClassifier(**kwargs).fit(dense, y3)
    b = PrivateIGDClassifier(**kwargs).fit(X, y3)
    _close(_released(b), _released(a))
    # partial_fit after an objective-perturbation fit streams by IGD (section 7.5), from CSR.
    a.partial_fit(dense[:100], y3[:100])
    b.partial_fit(X[:100], y3[:100])
    _close(_released(b), _released(a), 1e-10)


@pytest.mark.parametrize("n, p", [(3000, 300), (25000, 10)])
def test_wide_and_subsampled_newton_paths(n, p):
    """p >= 256: conjugate gradients with sparse Hessian products and a strided Gram
    preconditioner; n >= 2048 p: the subsampled first Newton steps (strided Gram)."""
    rng = np.random.default_rng(7)
    X = sp.random(n, p, density=min(1.0, 8.0 / p), random_state=7, format="csr")
    X.data -= 0.5
    dense = X.toarray()
    y = (dense @ rng.standard_normal(p) + 0.1 * rng.standard_normal(n) > 0).astype(int)
    for epsilon in (np.inf, 1.0):
        kwargs = dict(epsilon=epsilon, solver="objective_perturbation", classes=[0, 1],
                      alpha=1e-4, random_state=0)
        a = PrivateIGDClassifier(**kwargs).fit(dense, y)
        b = PrivateIGDClassifier(**kwargs).fit(X, y)
        _close(_released(b), _released(a), 1e-10)


MD_CASES = [
    dict(loss="squared"),
    dict(loss="huber", epsilon_huber=0.3),
    dict(loss="squared", constraint="l1", radius=2.0),
    dict(loss="huber", constraint="simplex", fit_intercept=False),
    dict(loss="squared", constraint="group_l1", group_size=5, data_norm=0.7),
]


@pytest.mark.parametrize("params", MD_CASES)
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_mirror_descent_objective_perturbation_csr_equals_dense(params, epsilon, weighted):
    X, dense, _, _, t = _data(seed=2)
    w = np.linspace(1.0, 0.0, len(t)) if weighted else None
    kwargs = dict(epsilon=epsilon, solver="objective_perturbation", random_state=5, **params)
    a = PrivateMirrorDescentRegressor(**kwargs).fit(dense, t, sample_weight=w)
    b = PrivateMirrorDescentRegressor(**kwargs).fit(X, t, sample_weight=w)
    _close(_released(b), _released(a))
    assert b.alpha_ == a.alpha_ and b.noise_scale_ == a.noise_scale_
    np.testing.assert_allclose(b.predict(X), a.predict(dense), rtol=1e-11, atol=1e-14)
    # partial_fit solves each batch afresh, from CSR too.
    a.partial_fit(dense[:150], t[:150])
    b.partial_fit(X[:150], t[:150])
    _close(_released(b), _released(a))


def test_float32_and_other_sparse_formats():
    X, dense, y, _, t = _data(seed=4)
    ref = PrivateMirrorDescentRegressor(solver="objective_perturbation", random_state=0)
    ref.fit(dense.astype(np.float32), t)
    for matrix in (X.astype(np.float32), X.astype(np.float32).tocsc()):
        est = PrivateMirrorDescentRegressor(solver="objective_perturbation", random_state=0)
        _close(_released(est.fit(matrix, t)), _released(ref))
    ref = PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1], random_state=0)
    ref.fit(dense, y)
    for matrix in (X.tocoo(), X.tocsc(), sp.csr_array(X)):
        before = (matrix.copy(),)
        est = PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                                   random_state=0).fit(matrix, y)
        _close(_released(est), _released(ref))
        assert (abs(matrix - before[0])).nnz == 0     # the input is not modified


# -- the design: the stored entries only, clipped with the dense design's care ---------------

def _awkward_csr(seed=0):
    """Rows with 1e300 and 1.79e308 entries of mixed signs, subnormal entries, an empty
    row, explicit zeros, unsorted indices and duplicate indices (scipy sums them)."""
    rng = np.random.default_rng(seed)
    n, d = 60, 6
    dense = rng.uniform(-1, 1, size=(n, d)) * (rng.random((n, d)) < 0.5)
    dense[0] = [1.79e308, -1.79e308, 0, 1.79e308, 0, 0]
    dense[1] = [1e300, 0, -1e300, 0, 0, 1e-300]
    dense[2] = [5e-324, 0, -1e-310, 0, 2.0**-1022, 0]
    dense[3] = 0.0
    dense[4] = [0, 0, 0, 1e300, 0, 0]
    data, indices, indptr = [], [], [0]
    for i, row in enumerate(dense):
        cols = list(np.flatnonzero(row))
        vals = [row[j] for j in cols]
        if i == 5 and cols:                   # unsorted indices
            cols, vals = cols[::-1], vals[::-1]
        if i == 6 and cols:                   # a duplicate: the value split in two
            cols, vals = cols + [cols[0]], [vals[0] / 2] + vals[1:] + [vals[0] / 2]
        if i == 7:                            # explicit stored zeros
            cols, vals = cols + [j for j in range(d) if j not in cols][:2], vals + [0.0, 0.0]
        data += vals
        indices += cols
        indptr.append(len(data))
    X = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=(n, d))
    assert not X.has_canonical_format
    return X, dense


def _exact_clipped_norm(values):
    """The exact L2 norm of float values, as a comparison against a bound: the squared
    norm in rationals."""
    return sum(Fraction(float(v)) ** 2 for v in values)


@pytest.mark.parametrize("max_norm", [1.0, 1e-5, 2.0**600])
def test_sparse_design_clips_awkward_rows_like_the_dense_one(max_norm):
    X, dense = _awkward_csr()
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    s = op.clipped_design(X, max_norm, 0.5)
    d = op.clipped_design(dense, max_norm, 0.5)
    assert isinstance(s, op.SparseClippedDesign) and s.shape == d.shape == (60, 7)
    assert s.X.has_canonical_format and sp.issparse(s.X)
    # The caller's matrix is untouched (duplicates were summed on a copy).
    for now, then in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(now, then)
    rows_s = s.X.toarray() * (1.0 if s.scale is None else s.scale[:, None])
    rows_d = d.X * (1.0 if d.scale is None else d.scale[:, None])
    if d.intercept is None:     # a bound above 2^512: the dense copy holds the intercept
        assert np.all(rows_d[:, 6] == 0.5) and s.intercept == 0.5
        rows_d = rows_d[:, :6]
    assert np.all(np.isfinite(rows_s))
    np.testing.assert_allclose(rows_s, rows_d, rtol=4e-16 * 8, atol=0)
    bound = Fraction(max_norm) ** 2
    for i in range(60):   # each clipped row within the bound, exactly
        start, stop = s.X.indptr[i], s.X.indptr[i + 1]
        factor = 1.0 if s.scale is None else s.scale[i]
        row = [Fraction(float(factor)) * Fraction(float(v)) for v in s.X.data[start:stop]]
        assert sum(v * v for v in row) <= bound
    if max_norm <= 1.0:
        # Far rows replaced by their clipped values (factor 1); the others keep theirs.
        assert s.scale[0] == s.scale[1] == s.scale[4] == 1.0
        for i in range(8, 60):
            assert np.array_equal(s.X[i].toarray().ravel(), dense[i])


def test_far_row_leaves_every_other_sparse_row_unchanged():
    """As 54.16.5 for dense X: a record far above the bound changes only its own row."""
    rng = np.random.default_rng(0)
    X = sp.random(500, 8, density=0.4, random_state=0, format="csr") * 3.0
    X_far = X.tolil()
    X_far[-1, :] = 1e30
    designs = [op.clipped_design(A, 1.0, 1.0) for A in (X, X_far.tocsr())]
    assert designs[0].X.data is X.data or np.shares_memory(designs[0].X.data, X.data)
    for i in range(499):
        rows = [(Fraction(float(D.scale[i])), D.X[i].toarray().ravel()) for D in designs]
        assert [rows[0][0] * Fraction(float(v)) for v in rows[0][1]] == \
            [rows[1][0] * Fraction(float(v)) for v in rows[1][1]]
    assert rng is not None


def test_awkward_rows_fit_as_the_dense_input():
    X, dense = _awkward_csr(seed=1)
    y = (np.arange(60) % 2)
    t = np.where(y == 1, 0.5, -0.5)
    for epsilon in (np.inf, 1.0):
        a = PrivateIGDClassifier(epsilon=epsilon, solver="objective_perturbation",
                                 classes=[0, 1], alpha=1e-2, random_state=0).fit(dense, y)
        b = PrivateIGDClassifier(epsilon=epsilon, solver="objective_perturbation",
                                 classes=[0, 1], alpha=1e-2, random_state=0).fit(X, y)
        assert np.all(np.isfinite(_released(b)))
        _close(_released(b), _released(a), 1e-11)
        a = PrivateMirrorDescentRegressor(epsilon=epsilon, solver="objective_perturbation",
                                          loss="huber", random_state=0).fit(dense, t)
        b = PrivateMirrorDescentRegressor(epsilon=epsilon, solver="objective_perturbation",
                                          loss="huber", random_state=0).fit(X, t)
        _close(_released(b), _released(a), 1e-11)


def test_duplicates_that_overflow_when_summed_are_refused_before_the_read():
    X = sp.csr_matrix((np.array([1e308, 1e308, 0.5]), np.array([0, 0, 1]),
                       np.array([0, 2, 3])), shape=(2, 2))
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    for est, t in ((PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                                         accountant=acc), np.array([0, 1])),
                   (PrivateMirrorDescentRegressor(solver="objective_perturbation",
                                                  accountant=acc), np.array([0.1, -0.1]))):
        with pytest.raises(ValueError, match="duplicate"):
            est.fit(X, t)
        assert not hasattr(est, "coef_")
    assert acc.spent().n_charges == 0


def test_column_limit_is_public_and_comes_before_the_read():
    """More than 4096 columns (with the intercept's): refused from the shape, nothing
    charged, the estimator unchanged (as for dense X)."""
    X = sp.random(50, 4096, density=0.001, random_state=0, format="csr")
    y = np.arange(50) % 2
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    for est, t in ((PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                                         accountant=acc), y),
                   (PrivateMirrorDescentRegressor(solver="objective_perturbation",
                                                  accountant=acc), y - 0.5)):
        with pytest.raises(ValueError, match="at most 4096 columns"):
            est.fit(X, t)
        assert not hasattr(est, "coef_")
    assert acc.spent().n_charges == 0
    # Without the intercept, 4096 columns are within the limit (sparse: the Gram is dense).
    assert PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                                fit_intercept=False, alpha=1e-1).fit(X, y).coef_.shape == (1, 4096)


def test_solver_auto_keeps_igd_for_sparse_x():
    X, _, y, _, _ = _data()
    assert PrivateIGDClassifier(classes=[0, 1], random_state=0).fit(X, y).solver_ == "igd"


# -- noise off: a replaced record moves the solution within the plan's sensitivity -----------

def _noise_off(plan):
    """The plan's regularisation and tolerance, without either noise."""
    return dataclasses.replace(plan, noise_std=0.0, mu=np.inf)


def _neighbour_moves(loss, replacements, epsilon=0.01, n=40):
    """Noise off, the plan's Lambda: how far replacing CSR record 0 by each row moves the
    certified minimiser, and the bound ``(2 L R + 2 tol) / Lambda`` (the plan's gradient
    sensitivity over the strong convexity, plus twice the certified gap)."""
    rng = np.random.default_rng(3)
    p, R, h = 12, 1.0, 0.5
    X = sp.random(n, p, density=0.3, random_state=3, format="csr") * 2.0
    X.data -= 1.0
    L = 1.0 if loss == op.LOG_LOSS else h
    signal = X @ rng.normal(size=p)
    y = np.where(signal > 0, 1.0, -1.0) if loss == op.LOG_LOSS else np.clip(signal, -2, 2)
    # At small epsilon Lambda dominates the data's curvature: the bound is nearly tight.
    plan = op.plan(epsilon, 1e-6, n_samples=n, feature_norm=np.hypot(R, 1.0),
                   derivative_bound=L, curvature_bound=op.CURVATURE[loss], alpha=1e-3)
    quiet = _noise_off(plan)
    lam = op.solve_regularization(plan, (n, p + 1))
    tol = op.solve_tolerance(quiet, 1, n_columns=p + 1)
    assert plan.gradient_sensitivity == 2 * L * np.hypot(R, 1.0)

    def solve(A, targets):
        design = op.clipped_design(A, R, 1.0)
        return op.solve(design, targets[np.newaxis], loss=loss, plan=quiet, rng=None,
                        threshold=h)[0]

    base = solve(X, y)
    out = []
    for row in replacements(p, base):
        X1 = X.tolil()
        X1[0, :] = row
        y1 = y.copy()
        y1[0] = -y[0] if loss == op.LOG_LOSS else -3.0 * np.sign(y[0])
        out.append((np.linalg.norm(solve(X1.tocsr(), y1) - base),
                    (plan.gradient_sensitivity + 2 * tol) / lam))
    return out


@pytest.mark.parametrize("epsilon", [0.01, 1.0])
@pytest.mark.parametrize("loss", [op.LOG_LOSS, op.HUBER])
def test_replaced_record_moves_the_noise_off_solution_within_the_sensitivity(loss, epsilon):
    """Replacing one CSR record (by a far, a huge, a subnormal, an empty row, and one
    aligned against the solution) moves the noise-off solution within the plan's bound."""
    def rows(p, base):
        return [np.full(p, 50.0), np.full(p, 1e300), np.full(p, 5e-324), np.zeros(p),
                -np.sign(base[:p]) * 40.0]

    moves = _neighbour_moves(loss, rows, epsilon)
    assert all(moved <= bound for moved, bound in moves)
    if epsilon == 0.01:
        assert max(moved / bound for moved, bound in moves) > 0.3   # not vacuous


@pytest.mark.parametrize("loss", [op.LOG_LOSS, op.HUBER])
def test_the_neighbour_test_catches_rows_that_depend_on_other_records(loss, monkeypatch):
    """The neighbour test can fail: clipping factors taken from the whole matrix (every
    row scaled by the largest row's factor, so each z_i depends on other records) let
    one far record move the solution past the sensitivity bound."""
    original = op._row_scales

    def global_scale(X, max_norm):
        return np.full(X.shape[0], np.min(original(X, max_norm)))

    monkeypatch.setattr(op, "_row_scales", global_scale)
    ((moved, bound),) = _neighbour_moves(loss, lambda p, base: [np.full(p, 50.0)])
    assert moved > bound


# -- the certificate ---------------------------------------------------------------------------

def _exact_huber_gradient(rows, y, w, theta, b, lam, h):
    """``||grad J(theta)||`` of the weighted Huber objective, in rationals."""
    F = Fraction
    theta_f = [F(float(v)) for v in theta]
    gradient = [F(lam) * t + F(float(bj)) for t, bj in zip(theta_f, b)]
    for row, target, weight in zip(rows, y, w):
        r = sum(z * t for z, t in zip(row, theta_f)) - F(float(target))
        psi = max(-F(h), min(F(h), r))
        for j, z in enumerate(row):
            if z:
                gradient[j] += F(float(weight)) * psi * z
    return float(sum(g * g for g in gradient)) ** 0.5


def _exact_rows(design):
    """The rows ``(s_i x_i, c)`` of a sparse design, in rationals."""
    F = Fraction
    X = design.X
    rows = []
    for i in range(design.n_rows):
        s = F(1) if design.scale is None else F(float(design.scale[i]))
        row = [F(0)] * design.n_features
        for k in range(X.indptr[i], X.indptr[i + 1]):
            row[X.indices[k]] += s * F(float(X.data[k]))
        if design.intercept is not None:
            row.append(F(design.intercept))
        rows.append(row)
    return rows


@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_certificate_bounds_the_exact_gradient(weighted):
    """The certified bounds (per column, and through the row norms) computed with sparse
    products are at least the exact gradient norm, at points near the minimiser and at
    random points, with clipping factors and an intercept column."""
    rng = np.random.default_rng(5 + int(weighted))
    h, lam = 0.5, 0.75
    loss_fns = op._LossFunctions(op.HUBER, h, weighted=weighted)
    for trial in range(10):
        n, p = int(rng.integers(5, 40)), int(rng.integers(1, 6))
        X = sp.random(n, p, density=0.5, random_state=trial, format="csr") * 3.0
        X.data -= 1.0
        design = op.clipped_design(X, 1.0, 0.7)
        rows = _exact_rows(design)
        y = rng.normal(size=n)
        w = rng.uniform(size=n) if weighted else np.ones(n)
        yw = op._weighted_targets(y, w) if weighted else y
        b = rng.normal(size=design.shape[1])
        plan = _noise_off(op.plan(np.inf, 1e-6, n_samples=n, feature_norm=np.hypot(1, 0.7),
                                  derivative_bound=h, curvature_bound=1.0, alpha=lam / n))
        near = op._newton(design, yw, b, lam, loss_fns, 1e-9, np.hypot(1, 0.7) * (1 + 1e-12))
        for theta in (near, near + rng.normal(size=near.size) * 1e-6,
                      rng.normal(size=near.size) * 3.0):
            margins, chunk = design.matvec(theta), op._chunk_rows(design.shape[1])
            bound = op._certified_gradient_norm(design, yw, margins, theta, b, lam, loss_fns,
                                                chunk, 2 * op.UNIT_ROUNDOFF,
                                                (design.shape[1] + 2) * op.UNIT_ROUNDOFF)[0]
            coarse = op._norm_certificate(design, yw, margins, theta, b, lam, loss_fns, chunk,
                                          np.hypot(1, 0.7) * (1 + 1e-12))[0]
            exact = _exact_huber_gradient(rows, y, w, theta, b, lam, h)
            assert bound >= exact and coarse >= exact
        assert _exact_huber_gradient(rows, y, w, near, b, lam, h) <= 1e-9
        assert plan.regularization > 0


def _certified_sparse_solve(loss, seed=0):
    """A noise-off sparse solve and the exact gradient norm of its objective at the
    released point (rows and targets from the dense copy, margins in long double)."""
    rng = np.random.default_rng(seed)
    n, p = 600, 15
    X = sp.random(n, p, density=0.3, random_state=seed, format="csr") * 2.0
    X.data -= 1.0
    y = rng.choice([-1.0, 1.0], n) if loss == op.LOG_LOSS else rng.normal(size=n)
    plan = _noise_off(op.plan(1.0, 1e-6, n_samples=n, feature_norm=np.hypot(1.0, 1.0),
                              derivative_bound=1.0, curvature_bound=op.CURVATURE[loss],
                              alpha=1e-3))
    design = op.clipped_design(X, 1.0, 1.0)
    theta = op.solve(design, y[np.newaxis], loss=loss, plan=plan, rng=None)[0]
    lam = op.solve_regularization(plan, design.shape)
    # The exact objective's gradient, from the dense rows (long double throughout).
    Z = np.hstack([X.toarray() * design.scale[:, None], np.ones((n, 1))]).astype(np.longdouble)
    t = Z @ theta.astype(np.longdouble)
    if loss == op.LOG_LOSS:
        first = -y / (1 + np.exp(y * t))
    else:
        first = np.clip(t - y, -1.0, 1.0)
    gradient = Z.T @ first + np.longdouble(lam) * theta
    return float(np.linalg.norm(gradient.astype(np.float64))), op.solve_tolerance(
        plan, 1, n_columns=p + 1)


@pytest.mark.parametrize("loss", [op.LOG_LOSS, op.HUBER])
def test_the_sparse_solve_certifies_its_tolerance(loss):
    exact, tol = _certified_sparse_solve(loss)
    assert exact <= tol


def test_a_broken_sparse_product_is_caught(monkeypatch):
    """The check above can fail: a sparse gradient product that drops the last stored
    entry of every chunk makes the solver certify the wrong objective, and the exact
    gradient at its point is far above the tolerance."""
    original = op.SparseClippedDesign.rmatvec

    def broken(self, vector, start=0, stop=None):
        out = original(self, vector, start, stop)
        out[0] *= 1.0 + 1e-3
        return out

    monkeypatch.setattr(op.SparseClippedDesign, "rmatvec", broken)
    exact, tol = _certified_sparse_solve(op.LOG_LOSS)
    assert exact > 100 * tol


def test_export_and_replay_audit_on_sparse_x():
    from sklearn_dpol import export_public
    from sklearn_dpol.audit import audit_estimator

    X, dense, y, _, t = _data(n=200)
    clf = PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                               random_state=0).fit(X, y)
    public = export_public(clf)
    np.testing.assert_array_equal(public.predict(X), clf.predict(X))
    reg = PrivateMirrorDescentRegressor(solver="objective_perturbation", random_state=0)
    reg.fit(X, t)
    np.testing.assert_array_equal(export_public(reg).predict(X), reg.predict(X))
    # The replay refuses objective perturbation on the array its fits use (CSR here) ...
    with pytest.raises(ValueError, match="objective perturbation"):
        audit_estimator(PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1]),
                        X, y, 0, (np.ones(30) * 0.1, 1), 10)
    # ... and audits "auto", which takes IGD for sparse X, on CSR.
    result = audit_estimator(PrivateIGDClassifier(classes=[0, 1], epsilon=1.0), X, y, 0,
                             (np.ones(30) * 0.1, 1), 20, random_state=0)
    assert np.isfinite(result.instance_mu)


@pytest.mark.skipif(np.finfo(np.longdouble).eps >= np.finfo(np.float64).eps,
                    reason="long double is double on this platform")
def test_long_margins_accumulate_in_long_double():
    """SciPy's CSR product sums in the data's type: with long-double data the margins the
    certificate's last resort uses keep a term that float64 accumulation loses."""
    X = sp.csr_matrix(np.array([[1.0, 2.0**-60, -1.0], [0.5, 0.0, 0.25]]))
    design = op.clipped_design(X, 10.0, 0.5)
    theta = np.array([1.0, 1.0, 1.0, 0.0])
    assert design.matvec(theta)[0] == 0.0                       # 2^-60 lost in float64
    np.testing.assert_array_equal(design.long_margins(theta, 1), [2.0**-60, 0.75])
    theta[3] = 2.0                                              # the intercept's term too
    np.testing.assert_array_equal(design.long_margins(theta, 1), [1.0, 1.75])


def test_auto_bounds_on_csr_are_those_of_the_dense_input():
    """data_norm='auto' (and y_bound='auto'): the private quantiles read the stored
    entries, then objective perturbation fits as for dense input."""
    X, dense, y, _, t = _data(n=3000, p=20, density=0.2, seed=6)
    kwargs = dict(solver="objective_perturbation", data_norm="auto", random_state=0)
    a = PrivateIGDClassifier(classes=[0, 1], **kwargs).fit(dense, y)
    b = PrivateIGDClassifier(classes=[0, 1], **kwargs).fit(X, y)
    assert a.data_norm_ == b.data_norm_
    _close(_released(b), _released(a))
    a = PrivateMirrorDescentRegressor(y_bound="auto", **kwargs).fit(dense, t)
    b = PrivateMirrorDescentRegressor(y_bound="auto", **kwargs).fit(X, t)
    assert (a.data_norm_, a.y_bound_) == (b.data_norm_, b.y_bound_)
    _close(_released(b), _released(a))


def test_csr_is_never_densified(monkeypatch):
    """No toarray/todense of a matrix with the data's rows, in either estimator's
    objective-perturbation fit (the (p, p) Hessian products aside)."""
    X, dense, y, _, t = _data()
    called = []
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.csc_array):
        for name in ("toarray", "todense"):
            original = getattr(cls, name)

            def spy(self, *args, _original=original, **kw):
                if X.shape[0] in self.shape:
                    called.append(self.shape)
                return _original(self, *args, **kw)

            monkeypatch.setattr(cls, name, spy)
    for weights in (None, np.linspace(0, 1, X.shape[0])):
        PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                             random_state=0).fit(X, y, sample_weight=weights)
        PrivateMirrorDescentRegressor(solver="objective_perturbation", loss="huber",
                                      random_state=0).fit(X, t, sample_weight=weights)
    assert called == []


@pytest.mark.parametrize("intercept", [None, 0.7])
def test_sparse_design_operations_match_the_dense_design(intercept):
    """Every operation of the solver on the sparse design equals the dense design's to
    rounding; the Gram matrix is exactly symmetric (chunks, strides and weights)."""
    rng = np.random.default_rng(8)
    X = sp.random(3000, 50, density=0.1, random_state=8, format="csr") * 3.0
    X.data -= 1.0
    a, b = op.clipped_design(X.toarray(), 1.0, intercept), op.clipped_design(X, 1.0, intercept)
    assert b.shape == a.shape and np.array_equal(b.scale is None, a.scale is None)
    theta, v = rng.normal(size=a.shape[1]), rng.normal(size=3000)
    curvature = rng.uniform(size=3000)

    def close(x, y):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13 * np.max(np.abs(y)))

    close(b.matvec(theta), a.matvec(theta))
    close(b.long_margins(theta, 256), a.long_margins(theta, 256))
    close(b.rmatvec(v[256:512], 256, 512), a.rmatvec(v[256:512], 256, 512))
    close(b.rmatvec(v[2816:], 2816, 3072), a.rmatvec(v[2816:], 2816, 3072))  # the last chunk
    for x, y in zip(b.curvature_product(theta, curvature), a.curvature_product(theta, curvature)):
        close(x, y)

    def columns(r):
        return np.column_stack([r, 2.0 * r + 1.0])

    close(b.abs_products(0, 700, np.abs(theta), columns),
          a.abs_products(0, 700, np.abs(theta), columns))
    for stride in (1, 3):
        w = rng.uniform(size=len(range(0, 3000, stride)))
        gram = b.gram(w, 256, stride)
        close(gram, a.gram(w, 256, stride))
        assert np.array_equal(gram, gram.T)


# -- review 122, medium: the sparse Hessian's memory must not depend on one record ----------

def _gram_peak(X, monkeypatch, block_entries):
    import tracemalloc

    from sklearn_dpol._core import _weights

    monkeypatch.setattr(_weights, "SPARSE_PRODUCT_ENTRIES", block_entries)
    design = op.clipped_design(X, 1.0, 1.0)
    weights = np.full(X.shape[0], 0.5)
    tracemalloc.start()
    try:
        gram = design.gram(weights, X.shape[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return gram, peak


def test_the_sparse_gram_peak_memory_does_not_follow_one_record(monkeypatch):
    """One dense record among one-entry rows made the chunk's product hold d^2 entries
    (+244 MB at d = 4095; a MemoryError under a cap on one neighbour only). The product
    is now taken in blocks of at most SPARSE_PRODUCT_ENTRIES entries: the peak moves by a
    public amount at most, and the sums are the same bits as unblocked."""
    rng = np.random.default_rng(0)
    n, d = 400, 600
    sparse_rows = sp.csr_matrix((np.full(n, 0.5), (np.arange(n), rng.integers(0, d, n))),
                                shape=(n, d))
    dense_record = sparse_rows.tolil()
    dense_record[0, :] = rng.normal(size=d) * 0.01
    dense_record = dense_record.tocsr()
    block = 1 << 14
    _, peak_sparse = _gram_peak(sparse_rows, monkeypatch, block)
    gram, peak_dense = _gram_peak(dense_record, monkeypatch, block)
    # d^2 = 360,000 entries (about 5.8 MB as COO) unblocked; a block is 16,384.
    assert peak_dense - peak_sparse < 16 * 4 * block + 64 * d, (peak_sparse, peak_dense)
    unblocked, _ = _gram_peak(dense_record, monkeypatch, 1 << 40)
    np.testing.assert_array_equal(gram, unblocked)
    assert np.array_equal(gram, gram.T)


@pytest.mark.parametrize("to_input", [np.asarray, sp.csr_matrix])
@pytest.mark.parametrize("index", [-1, 60, 1.0])
def test_audit_index_outside_the_data_is_refused(to_input, index):
    """Review 122: index=-1 on CSR built a neighbour of 2n - 1 rows; refused for both formats."""
    from sklearn_dpol.audit import audit_estimator

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (60, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"index must be an integer in \[0, 60\)"):
        audit_estimator(PrivateIGDClassifier(classes=[0, 1], solver="igd"), to_input(X), y,
                        index, (np.ones(3), 1), 2)
