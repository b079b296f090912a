"""Floating-point floors of Frank-Wolfe and mirror descent (session 30, doc/privacy.md 54.3).

1. Gram statistics in the subnormal range: ``fl(sum / n)`` rounds to whole steps of
   ``2^-1074`` and the iterate (up to the radius) multiplies that rounding, so one record
   moved the scores (gradients) by ~250 sensitivities while the sensitivity checks passed.
   Bounds with ``2 B^2 / n`` or ``2 B Y / n`` (``R`` for mirror descent) below ``1e-290``
   are now refused from public values, before the data is read (nothing charged).
2. Mirror descent's Huber loss on the Gram path rounds at the scale of the residual
   bound, not of ``h``: a pair attaining ``2L/n`` moved the computed gradient by
   ``1.0000076`` times it. The path is now taken only while its rounding bound is at most
   half the allowance ``a``, and the noise is calibrated on ``(1 + a) 2L/n``.
3. ``smooth_step_size`` squared a noise scale below ``1e-162`` to 0 (ZeroDivisionError).
"""

import math

import numpy as np
import pytest

from sklearn_dpol._core import frank_wolfe as fw
from sklearn_dpol._core import mirror_descent as md
from sklearn_dpol.linear_model import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor
from sklearn_dpol.privacy import PrivacyAccountant

# Rounding the sensitivity tests allow (doc/privacy.md 14.4: computed values against the
# bound with a relative margin of 1e-12).
RTOL = 1e-12


# -- 1. subnormal Gram statistics ----------------------------------------------------------

# The review's configurations (/tmp/review104): each was accepted, and moved the scores or
# the gradient by 247 times the sensitivity the noise is calibrated for.
FW_SUBNORMAL = [
    # (selection, n, feature_bound, y_bound, radius, rows set to B, varying: "y" or "X")
    (fw.EXPONENTIAL, 1_000_000, 1e-220, 1e-100, 1e42),
    (fw.GAUSSIAN, 10_000, 1e-161, 1e-20, 1e150),
]


@pytest.mark.parametrize("selection, n, B, Y, r", FW_SUBNORMAL)
def test_frank_wolfe_subnormal_gram_statistics_are_refused_by_the_calibration(
        selection, n, B, Y, r):
    with pytest.raises(ValueError, match="subnormal"):
        fw.calibrate(selection, n_samples=n, n_dims=1, n_steps=10, epsilon=1.0, delta=1e-6,
                     radius=r, feature_bound=B, y_bound=Y)


@pytest.mark.parametrize("selection, n, B, Y, r", FW_SUBNORMAL)
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_frank_wolfe_refuses_them_before_the_data_nothing_charged(selection, n, B, Y, r,
                                                                  method):
    X = np.full((n, 1), B)
    y = np.zeros(n)
    y[:247] = Y
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateFrankWolfeLasso(radius=r, feature_bound=B, y_bound=Y, epsilon=1.0,
                                 delta=1e-6, max_iter=10, fit_intercept=False,
                                 selection=selection, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="feature_bound and y_bound are near 1"):
        getattr(est, method)(X, y)
    assert acc.spent().n_charges == 0 and acc.spent().epsilon == 0.0
    assert not hasattr(est, "coef_")


def test_frank_wolfe_auto_bounds_check_the_floor_before_the_quantiles():
    """With "auto" bounds the floor is checked at the grid's smallest candidate, before any
    quantile is drawn (a public refusal: nothing charged)."""
    n = 100
    X = np.full((n, 1), 1e-150)
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateFrankWolfeLasso(radius=1.0, feature_bound="auto", y_bound=1e-300,
                                 accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="subnormal"):
        est.fit(X, np.zeros(n))
    assert acc.spent().n_charges == 0


def _fw_floor_bound(n, factor):
    """The feature bound with ``2 B^2 / n = factor * TINY``."""
    return math.sqrt(factor * fw.TINY * n / 2.0)


@pytest.mark.parametrize("selection", [fw.EXPONENTIAL, fw.GAUSSIAN])
def test_frank_wolfe_neighbours_just_above_the_floor_stay_within_the_sensitivity(selection):
    """Just below the floor the calibration refuses; just above it a neighbouring pair (one
    row replaced, noise off) moves every score (gradient coordinate) by at most the
    sensitivity, at a public iterate on the boundary of the ball of a huge radius."""
    n, Y, r = 10_000, 1.0, 1e250
    kw = dict(n_samples=n, n_dims=1, n_steps=10, epsilon=1.0, delta=1e-6, radius=r,
              y_bound=Y)
    with pytest.raises(ValueError, match="subnormal"):
        fw.calibrate(selection, feature_bound=_fw_floor_bound(n, 0.99), **kw)
    B = _fw_floor_bound(n, 1.01)
    cal = fw.calibrate(selection, feature_bound=B, **kw)
    X = np.zeros((n, 1))
    X[:250] = B
    X2 = X.copy()
    X2[250] = -B                          # the replaced row: 0 -> -B
    y = np.zeros(n)
    y2 = y.copy()
    y2[250] = Y
    vertices = fw.make_vertices(1, r, False, False)
    theta = np.array([r])                 # a public iterate (a vertex)
    scores = []
    for Xa, ya in ((X, y), (X2, y2)):
        problem = fw.ClippedLeastSquares(Xa, ya, feature_bound=B, y_bound=Y, intercept=False,
                                         precompute=True)
        gradient = problem.gradient(theta)
        scores.append(vertices.scores(gradient) if selection == fw.EXPONENTIAL else gradient)
    shift = np.max(np.abs(scores[0] - scores[1]))
    # (the calibrated sensitivity carries section 54.8's rounding allowance, ~1e-8 here)
    assert 0.5 * cal.sensitivity * (1 - 1e-6) < shift <= cal.sensitivity * (1 + RTOL)


MD_SUBNORMAL = dict(n=10_000, R=1e-161, Y=1e-20, r=1e150)


def test_mirror_descent_subnormal_gram_statistics_are_refused():
    c = MD_SUBNORMAL
    potential = md.make_potential("l2", 1)
    with pytest.raises(ValueError, match="subnormal"):
        md.calibrate(potential, n_samples=c["n"], loss="squared", huber_threshold=1.0,
                     radius=c["r"], data_norm=c["R"], y_bound=c["Y"], intercept=False,
                     epsilon=1.0, delta=1e-6, n_steps=100, step_size=0.1)


@pytest.mark.parametrize("loss", ["squared", "huber"])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_mirror_descent_refuses_them_before_the_data_nothing_charged(loss, method):
    c = MD_SUBNORMAL
    X = np.zeros((c["n"], 1))
    X[:250] = c["R"]
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateMirrorDescentRegressor(loss=loss, radius=c["r"], data_norm=c["R"],
                                        y_bound=c["Y"], fit_intercept=False, epsilon=1.0,
                                        delta=1e-6, max_iter=100, step_size=0.1,
                                        solver="mirror_descent", accountant=acc,
                                        random_state=0)
    with pytest.raises(ValueError, match="data_norm and y_bound are near 1"):
        getattr(est, method)(X, np.zeros(c["n"]))
    assert acc.spent().n_charges == 0 and acc.spent().epsilon == 0.0
    assert not hasattr(est, "coef_")


def test_mirror_descent_auto_bounds_check_the_floor_before_the_quantiles():
    n = 100
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateMirrorDescentRegressor(data_norm="auto", y_bound=1e-300, radius=1.0,
                                        accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="subnormal"):
        est.fit(np.ones((n, 2)), np.zeros(n))
    assert acc.spent().n_charges == 0


@pytest.mark.parametrize("intercept", [False, True])
def test_mirror_descent_neighbours_just_above_the_floor_stay_within_the_sensitivity(intercept):
    """Just below the floor ``check_bounds`` refuses; just above it a pair (one row
    replaced, noise off) moves the Gram-path gradient at a public iterate by at most 2L/n."""
    n, r = 10_000, 1e100
    low, R = math.sqrt(0.99 * md.TINY * n / 2), math.sqrt(1.01 * md.TINY * n / 2)
    Y = R                                  # the Gram term dominates the sensitivity
    kw = dict(radius=r, y_bound=Y, intercept=intercept)
    with pytest.raises(ValueError, match="subnormal"):
        md.check_bounds("squared", 1.0, data_norm=low, **kw, n_samples=n)
    md.check_bounds("squared", 1.0, data_norm=R, **kw, n_samples=n)
    derivative = md.derivative_bound("squared", 1.0, r, R, Y, intercept)
    bound = md.gradient_sensitivity(md.lipschitz_constant(derivative, R, intercept), n)
    X = np.zeros((n, 1))
    X[:250] = R
    X2 = X.copy()
    X2[250] = R
    y = np.zeros(n)
    w, b = np.array([r]), (0.5 * Y if intercept else 0.0)
    grads = [md.averaged_gradient(md.clip_data(Xa, y, data_norm=R, y_bound=Y, use_gram=True),
                                  w, b, "squared", 1.0)[:1 + int(intercept)]
             for Xa in (X, X2)]
    diff = np.abs(grads[0] - grads[1])
    shift = diff.max() * np.linalg.norm(diff / diff.max())   # (norm() squares: underflow)
    assert 0.25 * bound < shift <= bound * (1 + RTOL)


# -- 2. the Huber loss on the Gram path ------------------------------------------------------

def _huber_attaining_shift(n, p, R, h, Y, radius, seed=0):
    """The review's pair: one row ``z = e1`` with ``y = +Y`` against ``y = -Y`` (Huber
    derivatives ``-h`` and ``+h``: ``2L/n`` exactly in real arithmetic), the other rows in
    the unit ball with large residuals; the noiseless gradients at the public iterate
    ``(0, radius)`` on the path the library takes. Returns ``(shift / 2L/n, calibration)``."""
    potential = md.make_potential("l2", p)
    cal = md.calibrate(potential, n_samples=n, loss="huber", huber_threshold=h, radius=radius,
                       data_norm=R, y_bound=Y, intercept=False, epsilon=1.0, delta=1e-6,
                       n_steps=10**5, step_size=0.1)
    gram = md.use_huber_gram("huber", n, p, 10**5, huber_threshold=h, radius=radius,
                             data_norm=R, y_bound=Y, intercept=False)
    rng = np.random.default_rng(seed)
    ang = rng.uniform(0.3, 1.2, size=n)
    X = np.column_stack([np.cos(ang), np.sin(ang)]) * 0.999999
    y = rng.uniform(-Y, Y, size=n)
    X[0] = (1.0, 0.0)
    y[0] = Y
    y2 = y.copy()
    y2[0] = -Y
    w = np.array([0.0, radius])
    g = [md.averaged_gradient(md.clip_data(X, ya, data_norm=R, y_bound=Y, use_gram=gram),
                              w, 0.0, "huber", h) for ya in (y, y2)]
    return np.linalg.norm(g[0][:p] - g[1][:p]) / cal.sensitivity, cal, gram


def _calibrated_factor(cal):
    """The sensitivity the noise is calibrated on, in units of 2L/n (1 before session 30)."""
    return 1.0 + getattr(cal, "rounding_allowance", 0.0)


def test_huber_attaining_pair_of_the_review_moves_within_the_calibrated_sensitivity():
    """``R radius + 2Y = 0.99e6 h`` at ``n = 1e6``: the Gram path moved the gradient by
    1.0000076 times 2L/n; its rounding bound is now far above the allowance, so the rows
    are used (their gradient moves by exactly 2L/n)."""
    Y = 2.0
    ratio, cal, gram = _huber_attaining_shift(1_000_000, 2, 1.0, 1.0, Y, 0.99e6 - 2 * Y)
    assert ratio <= _calibrated_factor(cal) * (1 + RTOL)
    assert not gram and not cal.huber_gram


def test_huber_gram_path_near_its_new_limit_pays_for_its_rounding():
    """``R radius + Y = 400 h`` at ``n = 1e6``: the Gram path is taken (its bound is just
    below ``a / 2``), the noise is calibrated on ``(1 + a) 2L/n`` and the attaining pair
    moves the computed gradient by less than that."""
    n, p, R, h, Y = 1_000_000, 2, 1.0, 1.0, 2.0
    radius = 400.0 - Y
    rounding = md.huber_gram_rounding(n, p, huber_threshold=h, radius=radius, data_norm=R,
                                      y_bound=Y, intercept=False)
    assert 0.25 * md.HUBER_GRAM_ALLOWANCE < rounding <= 0.5 * md.HUBER_GRAM_ALLOWANCE
    ratio, cal, gram = _huber_attaining_shift(n, p, R, h, Y, radius)
    assert gram and cal.huber_gram and cal.rounding_allowance == md.HUBER_GRAM_ALLOWANCE
    sigma, mu = md.noise_scale(cal.sensitivity * (1 + md.HUBER_GRAM_ALLOWANCE), cal.n_steps,
                               1.0, 1e-6)
    assert cal.noise_scale == sigma and cal.mu == mu
    assert ratio <= 1 + rounding
    # twice the ratio: a larger residual bound leaves the Gram path
    assert not md.use_huber_gram("huber", n, p, 10**5, huber_threshold=h, radius=2 * radius,
                                 data_norm=R, y_bound=Y, intercept=False)


# -- 3. the smooth step with a tiny noise scale -----------------------------------------------

def test_a_noise_scale_below_1e_162_gives_a_step_not_a_zero_division():
    """``sigma ~ 1e-202``: ``sigma * sigma`` underflowed to 0 and ``fit`` raised
    ZeroDivisionError; the step is the same formula with ``sigma`` outside the root.

    Mirror descent computes in the unit scale (rows divided by ``data_norm``,
    doc/privacy.md section 55), where ``sigma`` is tiny only with a tiny derivative
    bound: a Huber threshold of 1e-200 (``Lf^2`` underflows too, and the theorem's
    step divided by zero; the rows' units do not matter)."""
    n, R, Y, r, h = 10_000, 1e-20, 1.0, 1e80, 1e-200
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2)) * R
    y = rng.normal(size=n) * Y
    est = PrivateMirrorDescentRegressor(loss="huber", epsilon_huber=h, radius=r, data_norm=R,
                                        y_bound=Y, fit_intercept=False, epsilon=1.0,
                                        delta=1e-6, max_iter=100, solver="mirror_descent",
                                        random_state=0).fit(X, y)
    assert 0 < est.noise_scale_ < 1e-200
    assert 0 < est.step_size_ < math.inf and np.all(np.isfinite(est.coef_))
    # the same value on both sides of the switch (sigma^2 = TINY), below the cap
    potential = md.make_potential("l2", 2)
    kw = dict(loss="squared", radius=1.0, data_norm=1e-100, y_bound=1.0, intercept=False)
    geo = md.geometry(potential, 1.0, 1.0, 1e-100, 1.0, False)
    cap = 1.0 / (2.0 * md.smoothness(1.0, 1e-100, 1.0, False))
    edge = math.sqrt(md.TINY)
    above, below = edge * (1 + 1e-9), edge * (1 - 1e-9)
    steps = [md.smooth_step_size(100, geo, s, potential, **kw) for s in (above, below)]
    assert all(0 < step < cap for step in steps)
    assert math.isclose(steps[0] * above, steps[1] * below, rel_tol=1e-14)
