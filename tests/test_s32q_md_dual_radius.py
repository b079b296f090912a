"""Session 32 (helper Q, review 118 H2): mirror descent's radius="auto" on the L1 and
group-L1 balls and the simplex divides by a bound on a row's dual norm of the set,
``data_norm_ / k^a`` (``k = d`` or the number of groups; ``a = 1/2`` for the losses of
bounded derivative on the L1 and group-L1 balls, ``1/4`` for the squared loss and on the
simplex); the L2 ball keeps ``data_norm_``. The demo's mirror-descent and Frank-Wolfe rows
run radius="auto"."""

import math

import numpy as np
import pytest

from sklearn_dpol import PrivacyAccountant, PrivateMirrorDescentRegressor
from sklearn_dpol._auto_bounds import AUTO_GRID


def _data(n=400, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d)) / math.sqrt(d)
    y = np.clip(X @ rng.normal(size=d), -1.0, 1.0)
    return X, y


def _fit(X, y, **params):
    params = dict(dict(epsilon=1.0, data_norm=1.0, y_bound=1.0, random_state=0, max_iter=3),
                  **params)
    return PrivateMirrorDescentRegressor(**params).fit(X, y)


@pytest.mark.parametrize("constraint, loss, group_size, k, a", [
    ("l2", "huber", None, 12, 0.0),
    ("l2", "squared", None, 12, 0.0),
    ("l1", "huber", None, 12, 0.5),
    ("l1", "absolute", None, 12, 0.5),
    ("l1", "squared", None, 12, 0.25),
    ("group_l1", "huber", 5, 3, 0.5),      # groups of 5, 5, 2
    ("group_l1", "absolute", 4, 3, 0.5),
    ("group_l1", "huber", 50, 1, 0.5),     # one group: its L2 norm is the row's
    ("group_l1", "squared", 5, 3, 0.25),
    ("simplex", "huber", None, 12, 0.25),
    ("simplex", "squared", None, 12, 0.25),
])
def test_the_rule_per_set(constraint, loss, group_size, k, a):
    X, y = _data()
    est = _fit(X, y, constraint=constraint, loss=loss, group_size=group_size,
               data_norm=2.0, y_bound=1.5)
    c = est._radius_factor(*X.shape)
    expected = c * 1.5 / (2.0 / k ** a)
    assert est.radius_ == pytest.approx(expected, rel=1e-12)
    # The L1 ball of the rule is the smallest one holding the L2 ball of the rule.
    if constraint == "l1" and loss != "squared":
        l2 = _fit(X, y, constraint="l2", loss=loss, data_norm=2.0, y_bound=1.5)
        assert est.radius_ == pytest.approx(math.sqrt(X.shape[1]) * l2.radius_, rel=1e-12)


@pytest.mark.parametrize("constraint, group_size", [("l1", None), ("group_l1", 5)])
@pytest.mark.parametrize("kx, ky", [(10.0, 1.0), (1.0, 0.25), (1e-3, 7.0)])
def test_scale_equivariance(constraint, group_size, kx, ky):
    X, y = _data()
    base = _fit(X, y, constraint=constraint, group_size=group_size, loss="huber",
                epsilon_huber=0.5)
    scaled = _fit(kx * X, ky * y, constraint=constraint, group_size=group_size,
                  loss="huber", epsilon_huber=0.5 * ky, data_norm=kx, y_bound=ky)
    assert scaled.radius_ == pytest.approx(base.radius_ * ky / kx, rel=1e-12)
    assert base.radius_ > 1.7 * _fit(X, y, loss="huber", epsilon_huber=0.5).radius_


def test_the_pre_read_cases_hold_the_rule_at_both_ends():
    d = 16
    est = PrivateMirrorDescentRegressor(constraint="l1", loss="huber", data_norm="auto",
                                        y_bound="auto")
    radii = {case[0] for case in est._bound_cases(True, (1000, d))}
    lo, hi = float(AUTO_GRID[0]), float(AUTO_GRID[-1])
    low, high = est.AUTO_RADIUS_RANGE
    assert min(radii) == pytest.approx(low * lo / (hi / math.sqrt(d)), rel=1e-12)
    assert max(radii) == pytest.approx(high * hi / (lo / math.sqrt(d)), rel=1e-12)
    # Every radius the rule can give at this shape lies between the two ends.
    for n_rows in (10, 10_000):
        for norm in (lo, 1.0, hi):
            for yb in (lo, 1.0, hi):
                est._auto_data_norm, est._auto_y_bound = norm, yb
                r = est._radius(shape=(n_rows, d))
                assert min(radii) * (1 - 1e-12) <= r <= max(radii) * (1 + 1e-12)
    squared = PrivateMirrorDescentRegressor(constraint="l1", data_norm="auto", y_bound="auto")
    assert max(c[0] for c in squared._bound_cases(True, (1000, d))) == pytest.approx(
        high * hi / (lo / d ** 0.25), rel=1e-12)
    l2 = PrivateMirrorDescentRegressor(loss="huber", data_norm="auto", y_bound="auto")
    assert max(c[0] for c in l2._bound_cases(True, (1000, d))) == pytest.approx(
        high * hi / lo, rel=1e-12)


def test_a_radius_overflowing_only_through_the_dual_bound_is_refused_before_reading():
    # radius_ = c y_bound sqrt(d) / data_norm: the largest c and y_bound candidate over a
    # tiny public data_norm overflows radius^2 only with the factor sqrt(d) = 20.
    d, data_norm = 400, 5e-143
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50, d)) / math.sqrt(d) * data_norm
    y = rng.uniform(-1, 1, size=50)
    high = PrivateMirrorDescentRegressor.AUTO_RADIUS_RANGE[1]
    top = high * float(AUTO_GRID[-1]) / data_norm
    assert top ** 2 < 1e300 < (top * math.sqrt(d)) ** 2
    kwargs = dict(loss="huber", data_norm=data_norm, y_bound="auto", epsilon=2.0,
                  random_state=0, max_iter=2)
    PrivateMirrorDescentRegressor(constraint="l2", **kwargs).fit(X, y)   # no dual factor
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateMirrorDescentRegressor(constraint="l1", accountant=accountant, **kwargs)
    with pytest.raises(ValueError, match="overflows"):
        est.fit(X, y)
    assert accountant.spent().n_charges == 0 and not hasattr(est, "y_bound_")


def test_the_demo_runs_mirror_descent_on_radius_auto():
    from sklearn_dpol import _demo

    _, _, _, cls, params, _ = _demo.mirror_descent_task(1000)
    assert cls is PrivateMirrorDescentRegressor
    assert "radius" not in params and cls(**params).radius == "auto"
    assert params["constraint"] == "l1"
    _, _, _, fw, fw_params, _ = _demo.sparse_task(1000)
    assert "radius" not in fw_params and fw(**fw_params).radius == "auto"


@pytest.mark.parametrize("constraint, loss", [("l1", "huber"), ("group_l1", "absolute"),
                                              ("simplex", "squared")])
def test_the_rule_is_post_processing_a_public_radius_of_its_value_gives_the_same_release(
        constraint, loss):
    X, y = _data()
    extra = dict(group_size=5) if constraint == "group_l1" else {}
    auto = _fit(X, y, constraint=constraint, loss=loss, **extra)
    fixed = _fit(X, y, constraint=constraint, loss=loss, radius=auto.radius_, **extra)
    assert np.array_equal(auto.coef_, fixed.coef_) and auto.intercept_ == fixed.intercept_
    assert auto.privacy_ == fixed.privacy_
    assert auto._privacy_spec(X) == fixed._privacy_spec(X)
