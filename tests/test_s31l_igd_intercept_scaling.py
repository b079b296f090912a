"""IGD's ``intercept_scaling="auto"`` is ``data_norm_ / sqrt(n_features)`` (doc/privacy.md 55.20).

Session 30 resolved it to ``data_norm_``; under a loose public bound (rows far inside
it) the intercept's noise, which enters every decision value times the constant,
then dominated (outside review 112, U2). These tests fail on that rule.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core import igd
from sklearn_dpol.exceptions import DefaultBoundWarning
from sklearn_dpol.linear_model._igd import auto_unit_intercept


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DefaultBoundWarning)
        yield


def _data(n=2000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.5 > 0).astype(int)
    return X, y


def test_the_rule_is_one_over_root_d_and_one_for_a_single_feature():
    assert auto_unit_intercept(1) == 1.0
    assert auto_unit_intercept(4) == 0.5
    assert auto_unit_intercept(54) == 1 / math.sqrt(54)


@pytest.mark.parametrize("kw", [dict(solver="igd"), dict(solver="objective_perturbation"),
                                dict(solver="igd", data_norm="auto"),
                                dict(solver="igd", data_norm=7.0)])
def test_fit_resolves_data_norm_over_root_d_and_calibrates_to_it(kw):
    X, y = _data()
    clf = PrivateIGDClassifier(epsilon=1.0, classes=[0, 1], random_state=0, **kw).fit(3 * X, y)
    assert clf.intercept_scaling_ == pytest.approx(clf.data_norm_ / math.sqrt(6), rel=1e-15)
    if kw["solver"] == "igd":
        lipschitz = igd.loss_lipschitz(clf.data_norm_, clf.intercept_scaling_)
        assert lipschitz == pytest.approx(clf.data_norm_ * math.sqrt(1 + 1 / 6), rel=1e-15)
        # The exact bound times the iterate's rounding allowance (privacy.md 55.10, helper K).
        allowance = igd.iterate_rounding_factor(clf.t_ - 1, clf.max_iter, 7)
        assert clf.sensitivity_ == pytest.approx(igd.release_sensitivity(
            lipschitz, clf.alpha_, "implicit", clf.t_ - 1, clf.max_iter) * allowance, rel=1e-12)


def test_a_single_feature_keeps_data_norm_and_an_explicit_value_is_kept():
    X, y = _data(d=1)
    one = PrivateIGDClassifier(epsilon=1.0, data_norm=2.5, classes=[0, 1],
                               random_state=0).fit(X, y)
    assert one.intercept_scaling_ == 2.5
    X, y = _data()
    explicit = PrivateIGDClassifier(epsilon=1.0, data_norm=2.5, intercept_scaling=0.3,
                                    classes=[0, 1], random_state=0).fit(X, y)
    assert explicit.intercept_scaling_ == 0.3


@pytest.mark.parametrize("stream", ["ftrl", "iterate_perturbation"])
def test_a_stream_keeps_the_width_of_its_first_call(stream):
    X, y = _data(n=900)
    clf = PrivateIGDClassifier(epsilon=1.0, data_norm=3.0, classes=[0, 1], stream=stream,
                               horizon=900, random_state=0)
    for lo in range(0, 900, 300):
        clf.partial_fit(X[lo:lo + 300], y[lo:lo + 300])
        assert clf.intercept_scaling_ == 3.0 / math.sqrt(6)


def test_the_check_before_the_data_uses_the_largest_constant():
    """Refused before anything is read: L^2 / alpha overflows with s = data_norm."""
    X, y = _data()
    clf = PrivateIGDClassifier(data_norm=1e150, alpha=1e-5, classes=[0, 1])
    with pytest.raises(ValueError, match="infinite sensitivity"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_a_loose_bound_no_longer_drowns_the_model_in_the_intercepts_noise():
    """The user guide's example (rows of norm ~4.4, data_norm=32, epsilon=1): the
    session-30 constant ``data_norm`` gave chance (0.50); ``data_norm / sqrt(20)`` 0.58."""
    X, y = make_classification(n_samples=40_000, n_features=20, random_state=0)
    Xtr, ytr, Xte, yte = X[:30_000], y[:30_000], X[30_000:], y[30_000:]

    def score(**kw):
        return np.mean([PrivateIGDClassifier(epsilon=1.0, data_norm=32.0, alpha=1e-2,
                                             classes=[0, 1], random_state=s, solver="igd",
                                             **kw)
                        .fit(Xtr, ytr).score(Xte, yte) for s in range(5)])

    auto, session30 = score(), score(intercept_scaling=32.0)
    assert session30 < 0.53 and auto > session30 + 0.05
