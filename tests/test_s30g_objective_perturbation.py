"""Objective perturbation: review 102's findings (helper s30g).

Whether the solve converges, and what it costs and reports, must not depend on
one record; public refusals come before the data is read.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.linear_model import PrivateIGDClassifier
from sklearn_dpol.privacy import PrivacyAccountant


def _neighbours(n=20_000):
    """Review 102's pair (flip_estimator.py): d=1, every 9th row (the rows of the
    first, subsampled Hessians) weighs 0; record 0 weighs 1 in one data set, 0 in
    the other."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=n) * 0.1
    y = (x > 0).astype(int)
    flip = rng.random(n) < 0.2
    y[flip] = 1 - y[flip]
    X = x[:, None].copy()
    X[0, 0], y[0] = 0.0, 1
    sampled = np.arange(n) % 9 == 0
    weights = []
    for target_in in (True, False):
        w = np.where(sampled, 0.0, 1.0)
        w[0] = 1.0 if target_in else 0.0
        weights.append(w)
    return X, y, weights


def test_convergence_does_not_hinge_on_the_subsampled_rows():
    """Old code: record 0 out raised SolverDidNotConverge in 29/40 draws, record
    0 in in 0/40 (its curvature was the only one the first Hessians saw)."""
    X, y, weights = _neighbours()
    for w in weights:
        for seed in range(40):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                PrivateIGDClassifier(solver="objective_perturbation", epsilon=1.0, delta=1e-6,
                                     classes=[0, 1], data_norm=1.0, alpha="auto",
                                     random_state=seed).fit(X, y, sample_weight=w)


def test_subsampled_phase_is_short_and_exact_phase_converges(monkeypatch):
    """The subsampled steps end after at most EARLY_MAX_STEPS, at the first
    that does not halve the gradient norm; both neighbours then certify in a few
    exact steps."""
    X, y, weights = _neighbours()
    plan = op.plan(1.0, 1e-6, n_samples=len(y), feature_norm=math.sqrt(2.0), derivative_bound=1.0,
                   curvature_bound=0.25, alpha=1e-9)
    Z = op.clipped_design(X, 1.0, 1.0)
    strides = []
    original = op._hessian
    monkeypatch.setattr(op, "_hessian",
                        lambda *a, **k: strides.append(a[-1]) or original(*a, **k))
    for w in weights:
        for seed in range(5):
            strides.clear()
            op.solve(Z, np.where(y == 1, 1.0, -1.0)[None], loss=op.LOG_LOSS, plan=plan,
                     rng=np.random.default_rng(seed), sample_weight=w)
            subsampled = [s for s in strides if s > 1]
            assert len(subsampled) <= op.EARLY_MAX_STEPS
            assert strides[len(subsampled):] == [1] * (len(strides) - len(subsampled))
            assert len(strides) <= 12


def test_newton_budget_is_public_and_covers_the_worst_case():
    """The exact phase's step bound is a function of public values only, and at
    least the linear-rate bound (kappa^2 / (2 c (1 - c))) ln(...)."""
    plan = op.plan(1.0, 1e-6, n_samples=20_000, feature_norm=math.sqrt(2.0),
                   derivative_bound=1.0, curvature_bound=0.25, alpha=1e-9)
    tol = op.solve_tolerance(plan, n_columns=2)
    lam = op.certifiable_regularization(plan, (20_000, 2), tol)
    budget = op.newton_step_budget(plan, (20_000, 2), lam, tol, op.LOG_LOSS)
    kappa = (0.25 * 2.0 * 20_000 + lam) / lam
    assert budget >= kappa**2 / (2 * op.ARMIJO * (1 - op.ARMIJO))
    # epsilon=inf at Lambda=0 (no guarantee to keep): the fixed cap.
    free = op.plan(math.inf, 1e-6, n_samples=100, feature_norm=1.0, derivative_bound=1.0,
                   curvature_bound=0.25, alpha=0.0)
    assert op.newton_step_budget(free, (100, 2), 0.0, 1e-8, op.LOG_LOSS) == op.MAX_NEWTON_STEPS


# -- item 2: the default tolerance at small epsilon; public refusals before the data -------

def _spent(accountant):
    spent = accountant.spent()
    return spent.epsilon, spent.delta


@pytest.mark.parametrize("n,d,eps", [(100, 400, 0.01), (2000, 1000, 0.01), (500, 4000, 0.1)])
def test_default_tolerance_fits_at_small_epsilon(n, d, eps):
    """Review 102 (tol_refusal.py): old code refused the default tolerance here (the
    absolute tolerance scaled with n L R, the rounding allowance with n L R + B, B
    the noise-norm bound) after the data was read, and charged it."""
    from sklearn_dpol.linear_model import PrivateMirrorDescentRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for alpha in (1e-3, "auto"):
            PrivateIGDClassifier(solver="objective_perturbation", epsilon=eps, delta=1e-6,
                                 classes=[0, 1], data_norm=1.0, alpha=alpha,
                                 random_state=0).fit(X, y)
        PrivateMirrorDescentRegressor(solver="objective_perturbation", epsilon=eps, delta=1e-6,
                                      random_state=0).fit(X, y.astype(float))


def test_tolerance_is_relative_to_the_noise_bound_and_the_output_noise_covers_it():
    plan = op.plan(0.01, 1e-6, n_samples=100, feature_norm=math.sqrt(2.0), derivative_bound=1.0,
                   curvature_bound=0.25, alpha=1e-3)
    p = 401
    scale = 100 * math.sqrt(2.0) + op.noise_norm_bound(plan, p)
    assert op.noise_norm_bound(plan, p) > 100 * 100 * math.sqrt(2.0)   # B dominates here
    assert op.tolerance_scale(plan, p) == scale
    assert op.solve_tolerance(plan, n_columns=p) == op.DEFAULT_RELATIVE_TOL * scale
    lam = op.solve_regularization(plan, (100, p))
    # The output noise is calibrated to twice the certified gap tol * scale / Lambda.
    from sklearn_dpol._core.noise import noise_grid

    rounding = math.sqrt(p) * noise_grid(plan.noise_std)[0] / 2
    assert op.output_noise_std(plan, p, None, lam) == pytest.approx(
        2 * (op.DEFAULT_RELATIVE_TOL * scale + rounding) / lam / plan.output_mu, rel=1e-12)


@pytest.mark.parametrize("make,case", [
    (make, case) for make in ("igd", "md")
    for case in ("columns", "tol", "delta_subnormal", "delta_min")
    if (make, case) != ("igd", "tol")])   # IGD has no tol: the many-classes case below
def test_public_refusals_come_before_the_data(make, case):
    """More than MAX_COLUMNS columns, a tolerance no solve can certify, and delta
    below 1e-300 are refused from public values before the data is read:
    nothing is charged."""
    from sklearn_dpol.linear_model import PrivateMirrorDescentRegressor

    d = 4096 if case == "columns" else 3
    delta = {"delta_subnormal": 1e-320, "delta_min": 5e-324}.get(case, 1e-6)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, d)) * 0.1
    y = (X[:, 0] > 0).astype(int)
    acc = PrivacyAccountant(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if make == "igd":
            est = PrivateIGDClassifier(solver="objective_perturbation", epsilon=1.0, delta=delta,
                                       classes=[0, 1], data_norm=1.0, accountant=acc,
                                       random_state=0)
            target = y
        else:
            est = PrivateMirrorDescentRegressor(
                solver="objective_perturbation", epsilon=1.0, delta=delta, accountant=acc,
                random_state=0, tol=1e-16 if case == "tol" else None)
            target = y.astype(float)
        with pytest.raises(ValueError, match="columns|delta >=|increase tol"):
            est.fit(X, target)
    assert _spent(acc) == (0.0, 0.0)


def test_igd_uncertifiable_tolerance_refused_before_the_data():
    """Many classes (K problems share the tolerance: tol / sqrt(K)) make the default
    tolerance uncertifiable: refused before the data, not charged."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3)) * 0.1
    y = rng.integers(0, 150, size=5000)
    acc = PrivacyAccountant(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PrivateIGDClassifier(solver="objective_perturbation", epsilon=1.0, delta=1e-6,
                                   classes=list(range(150)), data_norm=1.0, accountant=acc,
                                   random_state=0)
        with pytest.raises(ValueError, match="increase tol"):
            est.fit(X, y)
    assert _spent(acc) == (0.0, 0.0)


# -- item 3: subnormal delta ---------------------------------------------------------------

def test_subnormal_delta_is_refused():
    for delta in (1e-320, 5e-324, 0.5e-300):
        with pytest.raises(ValueError, match="delta >="):
            op.plan(1.0, delta, n_samples=100, feature_norm=1.0, derivative_bound=1.0,
                    curvature_bound=0.25, alpha=1e-3)
    from sklearn_dpol.privacy._objective_perturbation import objective_perturbation_mu

    with pytest.raises(ValueError, match="delta >="):
        objective_perturbation_mu(1.0, 1e-320)
    plan = op.plan(1.0, 1e-300, n_samples=100, feature_norm=1.0, derivative_bound=1.0,
                   curvature_bound=0.25, alpha=1e-3)
    assert plan.mu > 0


# -- item 4: alpha_ is the ridge the solve used ----------------------------------------------

def test_alpha_is_the_ridge_the_solve_used(monkeypatch):
    """Review 102 (alpha_report.py): alpha_ reported the planned ridge (IGD 1e-7,
    MD 1.87e-6) while the solve used certifiable_regularization's (8.9e-6, 3.57e-5)."""
    from sklearn_dpol.linear_model import PrivateMirrorDescentRegressor

    used = []
    original = op.output_noise_std

    def spy(plan, n_columns, tol=None, regularization=None):
        used.append(regularization / plan.n_samples)
        return original(plan, n_columns, tol, regularization)

    monkeypatch.setattr(op, "output_noise_std", spy)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 5))
    y = X[:, 0] * 0.3 + rng.normal(size=20000) * 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = PrivateMirrorDescentRegressor(solver="objective_perturbation", epsilon=8.0,
                                           delta=1e-6, alpha=1e-7, random_state=0).fit(X, y)
        igd = PrivateIGDClassifier(solver="objective_perturbation", epsilon=8.0, delta=1e-6,
                                   alpha=1e-7, classes=[0, 1], data_norm=1.0,
                                   random_state=0).fit(X, (y > 0).astype(int))
    assert md.alpha_ == used[0] and md.alpha_ > 1e-6
    assert igd.alpha_ == used[1] and igd.alpha_ > 1e-6
    assert f"regularisation {igd.alpha_ * 20000:.4g}" in str(igd.privacy_)


# -- item 5: one row far above the bound no longer changes the other rows --------------------

def test_far_row_leaves_every_other_row_unchanged():
    """Review 102 (path_switch.py): a record of norm above 2^64 R switched every row to
    the clipped copy, whose stored rows differed from the in-place rows by up to 1.3
    ulp: neighbouring data sets differed in every row. Now only that row is copied."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 8)) * 3.0
    X_far = X.copy()
    X_far[-1] = 1e30
    for dtype in (np.float64, np.float32):
        data = [np.ascontiguousarray(A, dtype=dtype) for A in (X, X_far)]
        designs = [op.clipped_design(A, 1.0, 1.0) for A in data]
        if dtype == np.float64:
            assert designs[0].X is data[0] and designs[1].X is not data[1]
        for i in range(0, 1999, 7):
            rows = [[Fraction(float(D.scale[i])) * Fraction(float(v)) for v in D.X[i]]
                    for D in designs]
            assert rows[0] == rows[1]
        far = designs[1].X[-1] * designs[1].scale[-1]
        assert np.linalg.norm(far) <= 1.0


def test_newton_systems_factorise_at_the_public_floor():
    """certifiable_regularization includes a public floor at which every Newton system
    factorises (Demmel's condition), so a Cholesky failure is not a way to fail."""
    from scipy.linalg import cho_factor

    n, p = 10**6, 300
    plan = op.plan(30.0, 1e-6, n_samples=n, feature_norm=1.0, derivative_bound=1.0,
                   curvature_bound=0.25, alpha=1e-15)
    floor = op.factorisable_regularization(plan, (n, p))
    assert op.solve_regularization(plan, (n, p)) >= floor > plan.regularization
    rng = np.random.default_rng(0)
    top = 2 * 0.25 * n
    for rank in (1, 50, p - 1):
        basis = np.linalg.qr(rng.normal(size=(p, rank)))[0]
        G = top * (basis @ basis.T)
        cho_factor(G + floor * np.eye(p), check_finite=False)
