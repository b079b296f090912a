"""``radius="auto"`` of Frank-Wolfe and mirror descent: a public, scale-equivariant rule (issue 17).

Pinned here: ``radius_ = AUTO_RADIUS_FACTOR * y_bound_ / B`` with ``B`` the row
bound in the set's dual norm (``feature_bound_`` for Frank-Wolfe, ``data_norm_``
for mirror descent); it reads no private data (two data sets of the same shape
and bounds give the same ``radius_``), only the released bounds when those are
"auto" (post-processing: the guarantee is the same as with that radius passed);
it scales like the coefficients; the parameter keeps ``"auto"``; a stream keeps
the first call's radius; and on a task whose model is larger than the unit ball
it beats the old default ``radius=1``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor
from sklearn_dpol._auto_bounds import auto_radius

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


def expected(kind, model):
    if kind == "fw":
        return model.AUTO_RADIUS_FACTOR * model.y_bound_ / model.feature_bound_
    return model.AUTO_RADIUS_FACTOR * model.y_bound_ / model.data_norm_


def test_the_constants_and_the_default():
    assert PrivateFrankWolfeLasso.AUTO_RADIUS_FACTOR == 1.5
    assert PrivateMirrorDescentRegressor.AUTO_RADIUS_FACTOR == 3.0
    assert PrivateFrankWolfeLasso().radius == "auto"
    assert PrivateMirrorDescentRegressor().radius == "auto"
    assert auto_radius(1.5, 3.0, 0.5) == 9.0


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_rule_reads_no_private_data(kind):
    # Two unrelated data sets of the same shape and bounds: the same radius_.
    (X1, y1), (X2, y2) = data(1), data(2)
    X2 = X2[::-1] ** 3 * 7.0        # different values, some clipped
    y2 = -10 * y2[::-1]
    a = make(kind).fit(X1, y1)
    b = make(kind).fit(X2, y2)
    assert a.radius_ == b.radius_ == pytest.approx(expected(kind, a), rel=1e-15)
    assert a.radius == "auto" and b.radius == "auto"     # never written back
    assert clone(a).get_params()["radius"] == "auto"


@pytest.mark.parametrize("kind", ["fw", "md"])
def test_rule_values(kind):
    model = make(kind).fit(*data(0))
    if kind == "fw":
        assert model.radius_ == 1.5 * 3.0 / 0.5
    else:
        assert model.radius_ == 3.0 * 3.0 / 2.0
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
    assert model.radius_ == pytest.approx(expected(kind, model), rel=1e-15)
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
    assert first == pytest.approx(expected(kind, model), rel=1e-15)
    model.partial_fit(X[1500:] * 100, y[1500:] * 100)     # other values: bounds kept
    assert model.radius_ == first


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
