"""Sample weights in objective perturbation (doc/privacy.md, "Sample weights in
objective perturbation"): the weighted objective is solved and certified, the plan
is the unweighted one, and both estimators take ``sample_weight`` (and IGD's
``class_weight``) with that solver.

The privacy-loss bound with weighted records, the replaced record's weight
included, is checked pointwise in tests/test_objective_perturbation.py
(``test_privacy_loss_never_exceeds_the_bound[...-True]``).
"""

from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateIGDClassifier, PrivateMirrorDescentRegressor
from sklearn_dpol._core import objective_perturbation as op


def _problem(n=400, p=4, seed=0, loss=op.LOG_LOSS):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1, keepdims=True))
    if loss == op.LOG_LOSS:
        y = np.where(Z @ rng.normal(size=p) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    else:
        y = np.clip(Z @ rng.normal(size=p) + 0.2 * rng.normal(size=n), -1, 1)
    return Z, y, rng


def _plan(n, epsilon=np.inf, derivative_bound=1.0, curvature=0.25, alpha=1e-2):
    return op.plan(epsilon, 1e-6, n_samples=n, feature_norm=1.0,
                   derivative_bound=derivative_bound, curvature_bound=curvature,
                   alpha=alpha, n_problems=1)


def _solve(Z, y, plan, loss, weights=None, seed=0, threshold=1.0):
    return op.solve(op.clipped_design(Z, 1.0), y[np.newaxis], loss=loss, plan=plan,
                    rng=np.random.default_rng(seed), threshold=threshold,
                    sample_weight=weights)[0]


def _gap(plan, n_columns=None):
    """The certified distance to the exact minimiser: ``||grad J|| / Lambda``."""
    tol = op.DEFAULT_RELATIVE_TOL * max(plan.n_samples * plan.derivative_bound
                                        * plan.feature_norm, 1.0)
    return tol / plan.regularization


@pytest.mark.parametrize("loss", [op.LOG_LOSS, op.HUBER])
def test_zero_weights_remove_records_and_halves_split_them(loss):
    """Noise off, one plan (n public): a record of weight 0 is a removed record,
    and two copies of weight 1/2 are one record of weight 1 (the objectives are
    equal, so the certified minimisers agree within twice the certified gap)."""
    Z, y, rng = _problem(loss=loss)
    n = Z.shape[0]
    plan = _plan(n, curvature=op.CURVATURE[loss])
    weights = rng.uniform(size=n)
    weights[:50] = 0.0
    full = _solve(Z, y, plan, loss, weights)
    kept = _solve(Z[50:], y[50:], plan, loss, weights[50:])
    assert np.linalg.norm(full - kept) <= 2 * _gap(plan)
    doubled = _solve(np.vstack([Z, Z]), np.concatenate([y, y]), plan, loss,
                     np.concatenate([weights, weights]) / 2)
    assert np.linalg.norm(full - doubled) <= 2 * _gap(plan)
    # The weights matter: the unweighted minimiser is far from the weighted one.
    assert np.linalg.norm(full - _solve(Z, y, plan, loss)) > 100 * _gap(plan)


@pytest.mark.parametrize("loss", [op.LOG_LOSS, op.HUBER])
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_unit_weights_are_the_unweighted_solve(loss, epsilon):
    """Weights of 1 multiply every derivative by 1 exactly; only the certificate's
    allowance grows by one rounding, so the releases agree to the certified gap
    (bit-for-bit unless a step certifies at a different iteration)."""
    Z, y, _ = _problem(loss=loss, seed=3)
    plan = _plan(Z.shape[0], epsilon=epsilon, curvature=op.CURVATURE[loss])
    a = _solve(Z, y, plan, loss)
    b = _solve(Z, y, plan, loss, np.ones(Z.shape[0]))
    assert np.linalg.norm(a - b) <= 2 * _gap(plan) + 1e-12 * np.linalg.norm(a)


@pytest.mark.parametrize("clipped", [False, True])
def test_weighted_certificate_bounds_the_exact_gradient(clipped):
    """The certified bound with weights is at least the exact gradient norm, computed in
    rational arithmetic (weighted Huber: piecewise-linear derivative), at points near the
    weighted minimiser, at the unweighted minimiser and at random points; with weights of 0,
    1, subnormal and in between; with rows clipped by factors and an intercept column
    (``clipped``). At the weighted minimiser the certificate must also be small: a
    certificate of the unweighted gradient would be far above the weighted one there."""
    rng = np.random.default_rng(11 + int(clipped))
    h, lam = 0.5, 0.75
    loss_fns = op._LossFunctions(op.HUBER, h, weighted=True)
    tight = 0
    for trial in range(12):
        n, p = int(rng.integers(5, 40)), int(rng.integers(1, 5))
        X = rng.normal(size=(n, p)) * rng.uniform(0.1, 2.0 if clipped else 1.0, size=(n, 1))
        if clipped:
            scale, intercept = op._row_scales(X, 1.0), 0.7
        else:
            X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
            scale, intercept = None, None
        design = op.ClippedDesign(X, scale, intercept)
        Z = _exact_rows(X, scale, intercept)          # rationals: s_i x_i and c
        Zf = np.array([[float(v) for v in row] for row in Z])
        row_norm = np.hypot(1.0, intercept) if clipped else 1.0
        y = rng.normal(size=n)
        w = rng.uniform(size=n)
        w[rng.random(n) < 0.2] = 0.0
        w[rng.random(n) < 0.2] = 1.0
        w[rng.random(n) < 0.1] = rng.choice([5e-324, 1e-310, 2.0**-1022])
        b = rng.normal(size=design.shape[1])
        yw = op._weighted_targets(y, w)
        near = _solve_weighted_huber(Zf, y, w, b, lam, h)
        points = [near + rng.normal(size=near.size) * 10.0 ** -(trial % 6 + 4),
                  _solve_weighted_huber(Zf, y, np.ones(n), b, lam, h),
                  rng.normal(size=near.size) * 3.0]
        for k, theta in enumerate(points):
            margins, chunk = design.matvec(theta), op._chunk_rows(design.shape[1])
            bound = op._certified_gradient_norm(design, yw, margins, theta, b, lam, loss_fns,
                                                chunk, 2 * op.UNIT_ROUNDOFF,
                                                (design.shape[1] + 2) * op.UNIT_ROUNDOFF)[0]
            coarse = op._norm_certificate(design, yw, margins, theta, b, lam, loss_fns, chunk,
                                          row_norm * (1 + 1e-12))[0]
            exact = _exact_weighted_huber_gradient(Z, y, w, theta, b, lam, h)
            assert bound >= exact and coarse >= exact
            if k == 0 and trial % 6 == 5:   # 1e-9 from the weighted minimiser
                unweighted = _exact_weighted_huber_gradient(Z, y, np.ones(n), theta, b, lam, h)
                assert bound < 1e-6 < unweighted
                tight += 1
    assert tight == 2


def _exact_rows(X, scale, intercept):
    F = Fraction
    rows = []
    for i, x in enumerate(X):
        s = F(1) if scale is None else F(float(scale[i]))
        row = [s * F(float(v)) for v in x]
        if intercept is not None:
            row.append(F(intercept))
        rows.append(row)
    return rows


def _exact_weighted_huber_gradient(Z, y, w, theta, b, lam, h):
    F = Fraction
    theta_f = [F(float(v)) for v in theta]
    h_f = F(h)
    gradient = [F(lam) * t + F(float(bj)) for t, bj in zip(theta_f, b)]
    for row, target, weight in zip(Z, y, w):
        r = sum(z * t for z, t in zip(row, theta_f)) - F(float(target))
        psi = max(-h_f, min(h_f, r))
        for j, z in enumerate(row):
            gradient[j] += F(float(weight)) * psi * z
    return float(sum(g * g for g in gradient)) ** 0.5


def _solve_weighted_huber(Z, y, w, b, lam, h):
    """The weighted Huber minimiser by damped Newton steps (a reference point only)."""
    def objective(theta):
        r = Z @ theta - y
        a = np.abs(r)
        losses = np.where(a <= h, 0.5 * r * r, h * (a - 0.5 * h))
        return float(w @ losses + 0.5 * lam * theta @ theta + b @ theta)

    theta = np.zeros(Z.shape[1])
    for _ in range(200):
        r = Z @ theta - y
        g = Z.T @ (w * np.clip(r, -h, h)) + lam * theta + b
        H = Z.T @ ((w * (np.abs(r) < h))[:, None] * Z) + lam * np.eye(Z.shape[1])
        step, size = -np.linalg.solve(H, g), 1.0
        while objective(theta + size * step) > objective(theta) and size > 1e-12:
            size /= 2
        theta = theta + size * step
    return theta


def test_weighted_solve_runs_the_summation_allowance_of_one_more_rounding():
    assert op._summation_factor(1000, 5, True) - op._summation_factor(1000, 5) == \
        pytest.approx(2 * op.UNIT_ROUNDOFF)


# -- the estimators --------------------------------------------------------------


def _classification(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) / 3
    y = (X @ rng.normal(size=5) + 0.2 * rng.normal(size=n) > 0).astype(int)
    return X, y, rng


@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_classifier_takes_sample_and_class_weights(epsilon):
    X, y, rng = _classification()
    kw = dict(solver="objective_perturbation", classes=[0, 1], epsilon=epsilon,
              alpha=1e-2, random_state=0)
    plain = PrivateIGDClassifier(**kw).fit(X, y)
    ones = PrivateIGDClassifier(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    assert_allclose(ones.coef_, plain.coef_, rtol=1e-7, atol=1e-9)
    # class_weight {0: 1, 1: 0.5} is the same as those per-record weights.
    by_class = PrivateIGDClassifier(class_weight={0: 2.0, 1: 1.0}, **kw).fit(X, y)
    by_record = PrivateIGDClassifier(**kw).fit(X, y, sample_weight=np.where(y == 0, 1.0, 0.5))
    assert np.array_equal(by_class.coef_, by_record.coef_)
    assert np.array_equal(by_class.intercept_, by_record.intercept_)
    # The weights change the model (noise off: clearly; with noise: a different release).
    assert not np.allclose(by_class.coef_, plain.coef_, rtol=1e-3)
    assert by_class.privacy_.epsilon == plain.privacy_.epsilon


def test_weighted_classifier_is_weighted_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    X, y, rng = _classification(seed=4)
    w = rng.uniform(size=len(y))
    clf = PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1],
                               epsilon=np.inf, alpha=1e-2, data_norm=10.0,
                               fit_intercept=False).fit(X, y, sample_weight=w)
    ref = LogisticRegression(C=1 / (len(y) * 1e-2), fit_intercept=False, tol=1e-12,
                             max_iter=10_000).fit(X, y, sample_weight=w)
    assert_allclose(clf.coef_, ref.coef_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_mirror_descent_objective_perturbation_takes_weights(epsilon):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 4)) / 3
    y = np.clip(X @ np.array([1.0, -0.5, 0.2, 0.0]) + 0.1 * rng.normal(size=500), -1, 1)
    kw = dict(solver="objective_perturbation", epsilon=epsilon, alpha=1e-2, radius=2.0,
              random_state=0)
    plain = PrivateMirrorDescentRegressor(**kw).fit(X, y)
    ones = PrivateMirrorDescentRegressor(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    assert_allclose(ones.coef_, plain.coef_, rtol=1e-7, atol=1e-9)
    w = np.where(np.arange(len(y)) < 250, 1.0, 0.0)
    half = PrivateMirrorDescentRegressor(**kw).fit(X, y, sample_weight=w)
    assert not np.allclose(half.coef_, plain.coef_, rtol=1e-3)
    assert half.privacy_.epsilon == plain.privacy_.epsilon


@pytest.mark.parametrize("make", [
    lambda: PrivateIGDClassifier(solver="objective_perturbation", classes=[0, 1]),
    lambda: PrivateMirrorDescentRegressor(solver="objective_perturbation"),
])
@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan])
def test_weights_outside_the_range_are_refused_before_reading(make, bad):
    X, y, _ = _classification()
    w = np.ones(len(y))
    w[3] = bad
    est = make()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        est.fit(X, y, sample_weight=w)
    assert not hasattr(est, "coef_") and not hasattr(est, "privacy_")
