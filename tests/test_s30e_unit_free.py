"""IGD's and QFTL's defaults do not depend on the units of X (and of y for QFTL).

Fitting ``(c X, data_norm=c)`` (and ``(b y, y_bound=b)``) must give the model of
``(X, data_norm=1)`` (``(y, y_bound=1)``) in the other units: the same predictions
(times ``b``), noise of the same law (for QFTL the same draws: its statistics are
computed in the unit scale) and the same ``privacy_`` (``doc/privacy.md``,
"Unit-free defaults of IGD and QFTL"). Before, IGD's intercept column stayed at 1
while ``alpha="auto"`` grew as ``data_norm^2`` (the intercept was pinned near 0: 0.65
accuracy at c=100 against 0.79 at c=1, below the majority 0.76), and QFTL's one noise
scale for ``(V, u)`` was calibrated on ``R`` and ``B`` together (R^2 1.00 at c=1, -1.3
to -11.8 at c=100). Every test here fails on that code.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol.exceptions import DefaultBoundWarning

SCALES = (1e-3, 1.0, 100.0, 1e4)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DefaultBoundWarning)
        yield


def _classification(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, 5)) / np.sqrt(5)
    logit = 3 * Z @ [1, -1, 0.5, 0, 0.5] + 1.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return Z, y


def _regression(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, 5)) / np.sqrt(5)
    y = np.clip(Z @ [0.5, -0.5, 0.3, 0, 0.2] + 0.5 + 0.05 * rng.standard_normal(n), -1, 1)
    return Z, y


def _same_guarantee(a, b):
    """The numbers of two guarantees (texts quote unit-dependent noise in some mechanisms)."""
    for name in ("epsilon", "delta", "mu", "spent_mu", "n_releases", "n_records"):
        x, y = getattr(a, name), getattr(b, name)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-12), name
    assert a.released == b.released and a.neighbouring == b.neighbouring


# -- PrivateIGDClassifier ---------------------------------------------------------------

@pytest.mark.parametrize("solver", ["igd", "objective_perturbation"])
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
@pytest.mark.parametrize("c", SCALES)
def test_igd_fit_in_any_units_of_x_is_the_unit_fit(solver, epsilon, c):
    Z, y = _classification()
    kw = dict(epsilon=epsilon, classes=[0, 1], random_state=3, solver=solver)
    ref = PrivateIGDClassifier(data_norm=1.0, **kw).fit(Z, y)
    model = PrivateIGDClassifier(data_norm=c, **kw).fit(Z * c, y)
    # "auto": data_norm_ / sqrt(n_features) (doc/privacy.md 55.16; five features here).
    assert model.intercept_scaling_ == pytest.approx(c / math.sqrt(5), rel=1e-15)
    assert ref.intercept_scaling_ == 1 / math.sqrt(5)
    assert model.alpha_ == pytest.approx(ref.alpha_ * c * c, rel=1e-12)
    # Weights in the units of X; the intercept and every decision value unchanged. At
    # epsilon=1 the noise has the same law (the same seed draws nearly the same variates:
    # the noise grid's multiplier differs by rounding), so they agree to far below it.
    tol = 1e-12 if np.isinf(epsilon) else 1e-5
    np.testing.assert_allclose(model.coef_ * c, ref.coef_, rtol=0, atol=tol * 10)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=0, atol=tol * 10)
    np.testing.assert_allclose(model.decision_function(Z * c), ref.decision_function(Z),
                               rtol=0, atol=tol * 10)
    _same_guarantee(model.privacy_, ref.privacy_)
    if solver == "igd" and np.isfinite(epsilon):
        # The noise on the weights is in the units of 1 / X.
        assert model.noise_scale_ * c == pytest.approx(ref.noise_scale_, rel=1e-12)
        assert model.privacy_ == ref.privacy_


@pytest.mark.parametrize("stream", ["ftrl", "iterate_perturbation"])
@pytest.mark.parametrize("c", [1e-3, 100.0, 1e4])
def test_igd_streams_in_any_units_of_x_are_the_unit_stream(stream, c):
    Z, y = _classification(n=2000)
    for epsilon in (np.inf, 1.0):
        kw = dict(epsilon=epsilon, classes=[0, 1], random_state=5, stream=stream)
        ref = PrivateIGDClassifier(data_norm=1.0, **kw)
        model = PrivateIGDClassifier(data_norm=c, **kw)
        for lo in range(0, 2000, 500):
            ref.partial_fit(Z[lo:lo + 500], y[lo:lo + 500])
            model.partial_fit(Z[lo:lo + 500] * c, y[lo:lo + 500])
            tol = 1e-12 if np.isinf(epsilon) else 1e-6
            np.testing.assert_allclose(model.decision_function(Z * c),
                                       ref.decision_function(Z), rtol=0, atol=tol)
            _same_guarantee(model.privacy_, ref.privacy_)


def test_igd_default_at_unit_bound_is_the_intercept_of_one_over_root_d():
    """``intercept_scaling="auto"`` at ``data_norm=1`` is exactly ``1 / sqrt(n_features)``
    (doc/privacy.md 55.16; session 30's ``data_norm_`` was 1.0 here)."""
    Z, y = _classification()
    for solver in ("igd", "objective_perturbation"):
        kw = dict(epsilon=1.0, classes=[0, 1], random_state=1, solver=solver)
        auto = PrivateIGDClassifier(**kw).fit(Z, y)
        one = PrivateIGDClassifier(intercept_scaling=1 / math.sqrt(5), **kw).fit(Z, y)
        assert auto.intercept_scaling == "auto"
        assert auto.intercept_scaling_ == 1 / math.sqrt(5)
        np.testing.assert_array_equal(auto.coef_, one.coef_)
        np.testing.assert_array_equal(auto.intercept_, one.intercept_)
        assert auto.noise_scale_ == one.noise_scale_ and auto.privacy_ == one.privacy_


def test_igd_auto_intercept_follows_the_released_data_norm():
    Z, y = _classification()
    model = PrivateIGDClassifier(solver="igd", epsilon=2.0, data_norm="auto", classes=[0, 1],
                                 random_state=0).fit(Z * 100, y)
    assert model.intercept_scaling_ == pytest.approx(model.data_norm_ / math.sqrt(5),
                                                     rel=1e-15)
    assert model.data_norm_ > 10
    # The sensitivity is that of L = sqrt(1 + 1/5) data_norm_.
    lipschitz = math.sqrt(1.2) * model.data_norm_
    from sklearn_dpol._core import igd
    assert model.sensitivity_ == pytest.approx(igd.release_sensitivity(
        lipschitz, model.alpha_, "implicit", model.t_ - 1, model.max_iter,
        width=Z.shape[1] + 1, loss=model.loss), rel=1e-12)   # with 55.10's allowance
    # No intercept: nothing resolved but 0.
    flat = PrivateIGDClassifier(solver="igd", fit_intercept=False, classes=[0, 1], random_state=0).fit(Z, y)
    assert flat.intercept_scaling_ == 0.0 and np.all(flat.intercept_ == 0.0)


def test_igd_reviewers_scale_sweep_is_above_the_majority():
    """The review's t_scale_sweep task (smaller): c=100 no longer falls below the majority."""
    Z, y = _classification(n=12_000, seed=0)
    Xt, yt = Z[10_000:], y[10_000:]
    majority = max(yt.mean(), 1 - yt.mean())
    scores = [PrivateIGDClassifier(epsilon=np.inf, data_norm=c, classes=[0, 1], random_state=0)
              .fit(Z[:10_000] * c, y[:10_000]).score(Xt * c, yt) for c in (1.0, 100.0)]
    assert scores[0] == scores[1] > majority


# -- PrivateQFTLRegressor ---------------------------------------------------------------

UNITS = [(c, 1.0) for c in SCALES] + [(1.0, 100.0), (1.0, 1e-3), (100.0, 1e-3), (1e4, 1e3)]


@pytest.mark.parametrize("alpha", ["auto", 1e-3])
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
@pytest.mark.parametrize("c,b", UNITS)
def test_qftl_fit_in_any_units_is_the_unit_fit(alpha, epsilon, c, b):
    Z, y = _regression()
    kw = dict(epsilon=epsilon, random_state=3)
    ref = PrivateQFTLRegressor(alpha=alpha, **kw).fit(Z, y)
    # An explicit alpha is a penalty in the units of X: the same model takes alpha c^2.
    scaled_alpha = alpha if alpha == "auto" else alpha * c * c
    model = PrivateQFTLRegressor(data_norm=c, y_bound=b, alpha=scaled_alpha, **kw).fit(
        Z * c, y * b)
    # The statistics are computed in the unit scale: the same noise scale, the same
    # draws (the same seed), the same guarantee.
    assert model.noise_scale_ == ref.noise_scale_
    assert model.sensitivity_ == ref.sensitivity_
    assert model.eigenvalue_noise_scale_ == ref.eigenvalue_noise_scale_
    assert model.privacy_ == ref.privacy_
    assert model.alpha_ == pytest.approx(ref.alpha_ * c * c, rel=1e-12)
    assert model.intercept_scaling_ == ref.intercept_scaling_ * c   # unit-free (section 56)
    np.testing.assert_allclose(model.coef_ * c / b, ref.coef_, rtol=1e-9, atol=1e-12)
    assert model.intercept_ / b == pytest.approx(ref.intercept_, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(model.predict(Z * c) / b, ref.predict(Z), rtol=0, atol=1e-10)


@pytest.mark.parametrize("prefix_sums,horizon", [("auto", 3000), ("auto", None),
                                                 ("blt", None), ("tree", 3000)])
@pytest.mark.parametrize("c,b", [(1e-3, 1.0), (100.0, 1.0), (1e4, 1e3), (1.0, 100.0)])
def test_qftl_streams_in_any_units_are_the_unit_stream(prefix_sums, horizon, c, b):
    Z, y = _regression(n=1500)
    kw = dict(epsilon=1.0, random_state=4, prefix_sums=prefix_sums, horizon=horizon)
    ref = PrivateQFTLRegressor(**kw)
    model = PrivateQFTLRegressor(data_norm=c, y_bound=b, **kw)
    for lo in range(0, 1500, 500):
        ref.partial_fit(Z[lo:lo + 500], y[lo:lo + 500])
        model.partial_fit(Z[lo:lo + 500] * c, y[lo:lo + 500] * b)
        assert model.noise_scale_ == ref.noise_scale_
        assert model.prefix_sums_ == ref.prefix_sums_
        assert model.privacy_ == ref.privacy_
        assert model.alpha_ == pytest.approx(ref.alpha_ * c * c, rel=1e-12)
        np.testing.assert_allclose(model.predict(Z * c) / b, ref.predict(Z), rtol=0,
                                   atol=1e-9)


def test_qftl_stream_after_fit_in_any_units():
    Z, y = _regression(n=2000)
    kw = dict(epsilon=1.0, random_state=2)
    ref = PrivateQFTLRegressor(**kw).fit(Z[:1000], y[:1000])
    model = PrivateQFTLRegressor(data_norm=100.0, y_bound=0.5, **kw).fit(
        Z[:1000] * 100, y[:1000] * 0.5)
    for lo in range(1000, 2000, 500):
        ref.partial_fit(Z[lo:lo + 500], y[lo:lo + 500])
        model.partial_fit(Z[lo:lo + 500] * 100, y[lo:lo + 500] * 0.5)
    assert model.alpha_ == pytest.approx(ref.alpha_ * 1e4, rel=1e-12)
    np.testing.assert_allclose(model.predict(Z * 100) / 0.5, ref.predict(Z), atol=1e-9)


def test_qftl_default_at_unit_bounds_is_its_rule_as_an_explicit_value():
    """At ``data_norm = y_bound = 1`` "auto" is the explicit value its public rule gives
    (``doc/privacy.md`` 56: ``c^2 = clip(sqrt(K sqrt(2 (d+1)) sigma_1 / n), 0.1, 1)``), bit for bit."""
    from sklearn_dpol.linear_model._qftl import AUTO_INTERCEPT_C2_MIN, AUTO_INTERCEPT_K
    from sklearn_dpol.privacy._rounding import sum_rounding_factor

    Z, y = _regression()
    n, d = Z.shape
    for alpha in ("auto", 0.01):
        kw = dict(epsilon=1.0, random_state=1, alpha=alpha)
        auto = PrivateQFTLRegressor(**kw).fit(Z, y)
        sigma_1 = PrivateQFTLRegressor(intercept_scaling=1.0, **kw).fit(Z, y).noise_scale_
        c2 = min(max(math.sqrt(AUTO_INTERCEPT_K * math.sqrt(2 * (d + 1)) * sigma_1 / n),
                     AUTO_INTERCEPT_C2_MIN), 1.0)
        assert auto.intercept_scaling == "auto"
        assert auto.intercept_scaling_ == pytest.approx(math.sqrt(c2), rel=1e-14)
        assert auto.intercept_scaling_ < 1.0
        one = PrivateQFTLRegressor(intercept_scaling=auto.intercept_scaling_, **kw).fit(Z, y)
        np.testing.assert_array_equal(auto._released_statistics, one._released_statistics)
        np.testing.assert_array_equal(auto.coef_, one.coef_)
        assert auto.intercept_ == one.intercept_ and auto.alpha_ == one.alpha_
        # The joint sensitivity of R = sqrt(1 + c^2), B = 1 (sections 3.1, 54.14).
        assert auto.sensitivity_ == qftl.joint_sensitivity(
            norm_bound(1.0, auto.intercept_scaling_), 1.0) * (
            1 + 1e-9) * sum_rounding_factor(Z.shape[0], qftl.ATOM_NORM_FRACTION)  # 54.8


@pytest.mark.parametrize("data_norm,y_bound,scaling", [
    (100.0, 1e-3, "auto"), (1e-3, 50.0, "auto"), (3.0, 0.2, 0.7), (0.5, 7.0, None)])
def test_qftl_unit_scale_statistics_of_neighbours_stay_within_the_sensitivity(
        data_norm, y_bound, scaling):
    """Noise off: replacing one record moves the released statistics by at most ``sensitivity()``."""
    rng = np.random.default_rng(1)
    kw = dict(fit_intercept=scaling is not None)
    if scaling is not None:
        kw["intercept_scaling"] = scaling
    reg = PrivateQFTLRegressor(data_norm=data_norm, y_bound=y_bound, **kw)
    bound = reg.sensitivity()
    worst = 0.0
    for _ in range(300):
        X = rng.standard_normal((6, 4)) * data_norm * rng.choice([0.2, 1.0, 10.0])
        y = rng.standard_normal(6) * y_bound * rng.choice([0.2, 1.0, 10.0])
        X2, y2 = X.copy(), y.copy()
        X2[0] = rng.standard_normal(4) * data_norm * 10
        y2[0] = -np.sign(y[0]) * y_bound * 10
        a = reg._statistics(X, y).sum(0, 6)
        b = reg._statistics(X2, y2).sum(0, 6)
        distance = float(np.linalg.norm(a - b))
        assert distance <= bound
        worst = max(worst, distance / bound)
    assert worst > 0.5


def test_qftl_reviewers_tasks_no_longer_depend_on_units():
    """The review's u_qftl_scale and v_target_units tasks (smaller): the units change nothing."""
    Z, y = _regression(n=12_000, seed=0)
    Zt, yt = Z[10_000:], y[10_000:]
    scores = {}
    for c, b in ((1.0, 1.0), (100.0, 1.0), (1.0, 100.0)):
        model = PrivateQFTLRegressor(epsilon=1.0, data_norm=c, y_bound=b, random_state=0)
        model.fit(Z[:10_000] * c, y[:10_000] * b)
        scores[c, b] = model.score(Zt * c, yt * b)
    assert scores[1.0, 1.0] > 0.9
    assert scores[100.0, 1.0] == pytest.approx(scores[1.0, 1.0], abs=1e-9)
    assert scores[1.0, 100.0] == pytest.approx(scores[1.0, 1.0], abs=1e-9)


# -- PrivateIGDClassifier: label sets that cannot match (item 2 of the review) -------------

def _labels_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3)) / 2
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("y_type,classes", [(str, [0, 1]), (int, ["0", "1"]),
                                            (float, ["a", "b"]), (str, np.array([0.0, 1.0]))])
@pytest.mark.parametrize("solver", ["igd", "objective_perturbation"])
def test_igd_refuses_a_y_dtype_no_class_can_equal_before_reading(y_type, classes, solver):
    from sklearn_dpol.privacy import PrivacyAccountant

    X, y = _labels_data()
    with PrivacyAccountant(epsilon=5.0, delta=1e-5) as budget:
        model = PrivateIGDClassifier(classes=classes, solver=solver, accountant=budget,
                                     random_state=0)
        with pytest.raises(ValueError, match="dtype.*no label of y can equal a class"):
            model.fit(X, y.astype(y_type))
        assert budget.spent().epsilon == 0.0          # refused before reading: refunded
    assert not hasattr(model, "coef_") and not hasattr(model, "classes_")


def test_igd_stream_refuses_a_dtype_mismatch_with_its_released_classes():
    X, y = _labels_data()
    model = PrivateIGDClassifier(random_state=0).partial_fit(X[:100], y[:100], classes=[0, 1])
    coef = model.coef_.copy()
    with pytest.raises(ValueError, match="no label of y can equal"):
        model.partial_fit(X[100:200], y[100:200].astype(str))
    np.testing.assert_array_equal(model.coef_, coef)
    model.partial_fit(X[100:200], y[100:200])          # the stream goes on


def test_igd_matching_label_types_still_fit():
    X, y = _labels_data()
    for labels, classes in ((y.astype(str), ["0", "1"]), (y.astype(bool), [0, 1]),
                            (y, np.array([0, 1], dtype=np.int8)), (y.astype(float), [0, 1])):
        model = PrivateIGDClassifier(epsilon=np.inf, classes=classes).fit(X, labels)
        assert model.score(X, labels) > 0.9


def test_igd_partial_fit_classes_conflicting_with_the_constructor_are_refused():
    X, y = _labels_data()
    model = PrivateIGDClassifier(classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="built with classes=\\[0, 1\\]"):
        model.partial_fit(X, y, classes=range(10))
    assert not hasattr(model, "classes_")
    # The same set, in any order, is fine.
    model.partial_fit(X, y, classes=[1, 0])
    assert model.classes_.tolist() == [0, 1]
