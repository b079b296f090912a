"""``radius="auto"`` of Frank-Wolfe and mirror descent: a public, scale-equivariant rule (issue 17).

Pinned here: ``radius_ = c * y_bound_ / B`` with ``B`` the row bound in the
set's dual norm (``feature_bound_`` for Frank-Wolfe, ``data_norm_`` for mirror
descent) and ``c = AUTO_RADIUS_FACTOR * (noise / noise_ref) ** -AUTO_RADIUS_SLOPE``
clipped to ``AUTO_RADIUS_RANGE``, ``noise = sqrt(d) / (n mu*(epsilon, delta))``
(public: the shape and the budget); its values at given public inputs; it grows
with ``epsilon`` and ``n``; it reads no private data (two data sets of the same
shape and bounds give the same ``radius_``), only the released bounds when those
are "auto" (post-processing: the guarantee is the same as with that radius
passed); it scales like the coefficients; the parameter keeps ``"auto"``; a
stream keeps the first call's radius; and on a task whose model is larger than
the unit ball it beats the old default ``radius=1``.
"""

import math


import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor
from sklearn_dpol._auto_bounds import (AUTO_RADIUS_REFERENCE, auto_radius, auto_radius_factor,
                                      noise_ratio)
from sklearn_dpol.privacy import gaussian_mu

FW_BOUNDS = dict(feature_bound=0.5, y_bound=3.0)
MD_BOUNDS = dict(data_norm=2.0, y_bound=3.0)


def data(seed, n=400, p=6, scale_x=1.0, scale_y=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, p))
    y = X @ rng.normal(size=p) * 4 + 0.3 * rng.normal(size=n)
    return X * scale_x, y * scale_y


def make(kind, **params):
    if kind == "fw":
        return PrivateFrankWolfeLasso(**{**FW_BOUNDS, "max_iter": 5, "random_state": 0, **params})
    return PrivateMirrorDescentRegressor(**{**MD_BOUNDS, "max_iter": 5, "random_state": 0,
                                            **params})


def factor(model, n, d, epsilon):
    """The rule's ``c``, written out from its definition (independent of the mixin):
    the dimension term is ``sqrt(d)`` for mirror descent's Gaussian gradients and
    ``ln(2 d)`` for Frank-Wolfe's selection among ``2 d`` vertices."""
    term = ((lambda k: math.log(2 * k)) if isinstance(model, PrivateFrankWolfeLasso)
            else math.sqrt)
    noise = term(d) / (n * gaussian_mu(epsilon, model.delta))
    n0, d0, eps0, delta0 = AUTO_RADIUS_REFERENCE
    noise_ref = term(d0) / (n0 * gaussian_mu(eps0, delta0))
    low, high = model.AUTO_RADIUS_RANGE
    return min(max(model.AUTO_RADIUS_FACTOR * (noise / noise_ref) ** -model.AUTO_RADIUS_SLOPE,
                   low), high)


def expected(kind, model, n, d, epsilon):
    """``radius_`` of a model fitted on ``n`` rows, ``d`` features at main budget ``epsilon``."""
    row_bound = model.feature_bound_ if kind == "fw" else model.data_norm_
    return factor(model, n, d, epsilon) * model.y_bound_ / row_bound


def main_epsilon(model):
    return model._budget_split()[1]


def test_the_constants_and_the_default():
    for cls, c, term in ((PrivateFrankWolfeLasso, 1.5, "log"),
                         (PrivateMirrorDescentRegressor, 3.4, "sqrt")):
        assert cls.AUTO_RADIUS_FACTOR == c
        assert cls.AUTO_RADIUS_DIMENSION == term
        assert cls.AUTO_RADIUS_SLOPE == 1 / 3
        assert cls.AUTO_RADIUS_RANGE == (0.5, 16.0)
        assert cls().radius == "auto"
    assert auto_radius(1.5, 3.0, 0.5) == 9.0
    # The factor is c_ref at the reference shape, the constant at slope 0, the top at eps=inf.
    ref = noise_ratio(*AUTO_RADIUS_REFERENCE)
    assert auto_radius_factor(1.6, 1 / 3, (0.5, 16.0), ref) == pytest.approx(1.6, rel=1e-14)
    assert auto_radius_factor(1.6, 0.0, (0.5, 16.0), 123.0) == 1.6
    assert auto_radius_factor(1.6, 1 / 3, (0.5, 16.0), 0.0) == 16.0
    assert noise_ratio(100, 4, np.inf, 1e-6) == 0.0
    assert noise_ratio(100, 4, np.inf, 1e-6, "log") == 0.0
    log_ref = noise_ratio(*AUTO_RADIUS_REFERENCE, dimension="log")
    assert log_ref == pytest.approx(ref * math.log(20.0) / math.sqrt(10.0), rel=1e-14)
    assert auto_radius_factor(1.5, 1 / 3, (0.5, 16.0), log_ref, "log") == pytest.approx(
        1.5, rel=1e-14)
    # Clipped at both ends.
    assert auto_radius_factor(1.6, 1 / 3, (0.5, 16.0), ref * 1e6) == 0.5
    assert auto_radius_factor(1.6, 1 / 3, (0.5, 16.0), ref * 1e-6) == 16.0


def test_rule_values_at_public_inputs():
    # Pinned numbers: (n, d, epsilon, delta) -> c, for each class.
    fw, md = PrivateFrankWolfeLasso(), PrivateMirrorDescentRegressor()
    pinned = {
        (20_000, 10, 1.0): (1.5, 3.4),
        (2_000, 10, 0.5): (0.5614, 1.2725),
        (100_000, 10, 4.0): (3.9090, 8.8605),
        (16_512, 8, 2.0): (1.7866, 4.0959),
    }
    for (n, d, eps), (c_fw, c_md) in pinned.items():
        for model, c in ((fw, c_fw), (md, c_md)):
            model.set_params(epsilon=eps)
            assert model._radius_factor(n, d) == pytest.approx(c, abs=1e-4)
            assert model._radius_factor(n, d) == pytest.approx(factor(model, n, d, eps),
                                                               rel=1e-12)
    # Many features: Frank-Wolfe's selection pays ln(2 d), not sqrt(d) (bench_sparse.py's
    # 1e5 x 1e5 task keeps a ball near the reference's instead of the floor's).
    fw.set_params(epsilon=1.0)
    assert fw._radius_factor(100_000, 100_000) == pytest.approx(1.6059, abs=1e-4)


@pytest.mark.parametrize("cls", [PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor])
def test_rule_grows_with_epsilon_and_n_and_falls_with_d(cls):
    model = cls()
    epsilons = (0.05, 0.1, 0.5, 1.0, 2.0, 4.0, 16.0)
    by_eps = [model.set_params(epsilon=e)._radius_factor(20_000, 10) for e in epsilons]
    assert all(a < b for a, b in zip(by_eps, by_eps[1:])), by_eps
    model.set_params(epsilon=1.0)
    ns = (500, 2_000, 20_000, 100_000, 1_000_000)
    by_n = [model._radius_factor(n, 10) for n in ns]
    assert all(a < b for a, b in zip(by_n, by_n[1:])), by_n
    by_d = [model._radius_factor(20_000, d) for d in (1, 10, 100, 1000)]
    assert all(a > b for a, b in zip(by_d, by_d[1:])), by_d
    # Clipped: never below or above the range, whatever the noise.
    low, high = cls.AUTO_RADIUS_RANGE
    assert model.set_params(epsilon=1e-3)._radius_factor(10, 10_000) == low
    assert model.set_params(epsilon=np.inf)._radius_factor(10, 10) == high


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_worst_case_bounds_every_radius_the_rule_gives(kind):
    norm = "feature_bound" if kind == "fw" else "data_norm"
    model = make(kind, epsilon=np.inf, **{norm: "auto"}, y_bound="auto")
    worst = model._radius(worst=True)
    X, y = data(6, n=3000)
    fitted = make(kind, epsilon=50.0, **{norm: "auto"}, y_bound="auto").fit(X, y)
    assert fitted.radius_ <= worst
    public = make(kind, epsilon=np.inf)
    assert public._radius(worst=True) == pytest.approx(
        16.0 * 3.0 / (0.5 if kind == "fw" else 2.0))
    assert public.fit(X, y).radius_ <= public._radius(worst=True)


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_rule_reads_no_private_data(kind):
    # Two unrelated data sets of the same shape and bounds: the same radius_.
    (X1, y1), (X2, y2) = data(1), data(2)
    X2 = X2[::-1] ** 3 * 7.0        # different values, some clipped
    y2 = -10 * y2[::-1]
    a = make(kind).fit(X1, y1)
    b = make(kind).fit(X2, y2)
    assert a.radius_ == b.radius_ == pytest.approx(expected(kind, a, 400, 6, 1.0), rel=1e-12)
    assert a.radius == "auto" and b.radius == "auto"     # never written back
    assert clone(a).get_params()["radius"] == "auto"


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_rule_values(kind):
    model = make(kind).fit(*data(0))
    c = factor(model, 400, 6, 1.0)
    if kind == "fw":
        assert model.radius_ == pytest.approx(c * 3.0 / 0.5, rel=1e-12)
    else:
        assert model.radius_ == pytest.approx(c * 3.0 / 2.0, rel=1e-12)
    # More rows or more epsilon: a larger ball (the same bounds).
    assert make(kind).fit(*data(0, n=4000)).radius_ > model.radius_
    assert make(kind, epsilon=4.0).fit(*data(0)).radius_ > model.radius_
    # A public radius is used as it is.
    assert make(kind, radius=0.7).fit(*data(0)).radius_ == 0.7


@pytest.mark.parametrize("kind", ["fw", "md"])
@pytest.mark.parametrize("k", [0.01, 3.0, 250.0])
def test_scale_equivariance(kind, k):
    norm = "feature_bound" if kind == "fw" else "data_norm"
    bounds = FW_BOUNDS if kind == "fw" else MD_BOUNDS
    base = make(kind).fit(*data(0)).radius_
    # X scaled by k (and its public bound with it): the radius by 1/k.
    scaled_x = make(kind, **{norm: bounds[norm] * k}).fit(*data(0, scale_x=k)).radius_
    assert scaled_x == pytest.approx(base / k, rel=1e-14)
    # y scaled by k (and y_bound): the radius by k.
    scaled_y = make(kind, y_bound=bounds["y_bound"] * k).fit(*data(0, scale_y=k)).radius_
    assert scaled_y == pytest.approx(base * k, rel=1e-14)


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_scale_equivariance_of_the_noiseless_model(kind):
    # epsilon=inf: the whole fit is equivariant, not only the radius.
    k = 4.0
    norm = "feature_bound" if kind == "fw" else "data_norm"
    bounds = FW_BOUNDS if kind == "fw" else MD_BOUNDS
    X, y = data(3)
    base = make(kind, epsilon=np.inf, max_iter=30).fit(X, y)
    scaled = make(kind, epsilon=np.inf, max_iter=30, **{norm: bounds[norm] * k},
                  y_bound=bounds["y_bound"] * k).fit(X * k, y * k)
    np.testing.assert_allclose(scaled.predict(X * k), k * base.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_auto_bounds_then_auto_radius_is_post_processing(kind):
    norm = "feature_bound" if kind == "fw" else "data_norm"
    X, y = data(4, n=3000)
    model = make(kind, epsilon=1.0, **{norm: "auto"}, y_bound="auto").fit(X, y)
    assert model.radius_ == pytest.approx(expected(kind, model, 3000, 6, main_epsilon(model)),
                                          rel=1e-12)
    # The same guarantee as with that radius passed as a public value: no budget spent.
    public = make(kind, epsilon=1.0, **{norm: "auto"}, y_bound="auto",
                  radius=model.radius_).fit(X, y)
    assert model.privacy_.epsilon == public.privacy_.epsilon
    assert model.privacy_.delta == public.privacy_.delta
    assert model._privacy_spec() == public._privacy_spec()
    # Same seed, same bounds drawn, same radius: the same release.
    np.testing.assert_array_equal(model.coef_, public.coef_)


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_stream_keeps_the_first_radius(kind):
    norm = "feature_bound" if kind == "fw" else "data_norm"
    X, y = data(5, n=3000)
    model = make(kind, epsilon=1.0, **{norm: "auto"}, y_bound="auto")
    model.partial_fit(X[:1500], y[:1500])
    first = model.radius_
    assert first == pytest.approx(expected(kind, model, 1500, 6, main_epsilon(model)),
                                  rel=1e-12)
    # Other values and another batch size: the first call's bounds and shape are kept.
    model.partial_fit(X[1500:2000] * 100, y[1500:2000] * 100)
    assert model.radius_ == first
    # A new fit reads its own shape.
    model.fit(X, y)
    assert model.radius_ == pytest.approx(expected(kind, model, 3000, 6, main_epsilon(model)),
                                          rel=1e-12)


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_stream_without_a_recorded_shape_is_refused_before_reading(kind, monkeypatch):
    """A model with coef_ but no recorded first call (set by hand, or pickled by a version
    before the shape-dependent rule): its radius is unknown, so a continued stream is
    refused before any data is read, rather than checking its warm start against one
    radius and running with another (found in review: a start of L1 norm 40 passed the
    check at radius 96 and ran at radius 3)."""
    X, y = data(5, n=600)
    model = make(kind, epsilon=1.0).fit(X, y)
    del model.__dict__["_auto_radius_shape"]
    model.coef_ = model.coef_ * 0 + 40.0 / model.coef_.size   # L1 norm 40
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v)
              for k, v in model.__dict__.items()}
    read = []
    monkeypatch.setattr(type(model), "_mark_data_read",
                        lambda self: read.append(1) or None)
    with pytest.raises(ValueError, match="first call's radius"):
        model.partial_fit(X[:50], y[:50])
    assert not read
    assert set(model.__dict__) == set(before)
    assert all(np.array_equal(model.__dict__[k], v) if isinstance(v, np.ndarray)
               else model.__dict__[k] is v or model.__dict__[k] == v
               for k, v in before.items() if k != "_rng")


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_bad_radius_refused_before_reading(kind):
    model = make(kind, radius="big")
    with pytest.raises(InvalidParameterError):
        model.fit(*data(0))
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_auto_beats_the_unit_radius_when_the_model_is_large(kind):
    # Targets ten times the features' scale: the unit ball cannot hold the model.
    rng = np.random.default_rng(7)
    n, p = 20_000, 8
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.clip(X @ np.array([3.0, -2.0, 2.0, 1.0, 0, 0, 0, 0]) + 0.5 * rng.normal(size=n),
                -10, 10)
    if kind == "fw":
        bounds = dict(feature_bound=1.0, y_bound=10.0)
        cls = PrivateFrankWolfeLasso
    else:
        bounds = dict(data_norm=float(np.sqrt(p)), y_bound=10.0)
        cls = PrivateMirrorDescentRegressor
    auto = cls(epsilon=1.0, random_state=0, **bounds).fit(X, y)
    unit = cls(epsilon=1.0, radius=1.0, random_state=0, **bounds).fit(X, y)
    assert r2_score(y, auto.predict(X)) > r2_score(y, unit.predict(X)) + 0.2


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_a_refused_fit_keeps_the_shape_the_rule_read(kind):
    # The shape is recorded only after the data are read: a fit refused before (here a
    # non-finite target) leaves the radius of the model in place for a stream continuing it.
    model = make(kind).fit(*data(0))
    radius = model.radius_
    X, y = data(1, n=4000)
    y[3] = np.nan
    with pytest.raises(ValueError):
        model.fit(X, y)
    assert model.radius_ == radius and model._radius() == radius
    model.partial_fit(*data(2, n=50))
    assert model.radius_ == radius
