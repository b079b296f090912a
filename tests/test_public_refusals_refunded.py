"""Refusals decided by public values are refunded (session 29 review).

A stream's batch that its calibration does not cover (more rows than the horizon left,
more calls than calibrated, past the rounding allowance) is refused from the batch's size
and the stream's counts alone. ``PrivateIGDClassifier`` made these checks after marking
the data read, so the refusal was charged the stream's whole cost, and the retry opened a
second charge; ``PrivateQFTLRegressor`` did the same on a stream's first call with
``data_norm="auto"``. They are now made before the data is read.
"""

import numpy as np
import pytest

from sklearn_dpol.linear_model import (PrivateFrankWolfeLasso, PrivateIGDClassifier,
                                       PrivateMirrorDescentRegressor, PrivateQFTLRegressor)
from sklearn_dpol.privacy import PrivacyAccountant


def _data(n=20):
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (n, 3))
    return X, (X[:, 0] > 0).astype(int), X[:, 0]


CASES = {
    "igd-ftrl": lambda acc: PrivateIGDClassifier(classes=[0, 1], horizon=10, accountant=acc),
    "igd-iterates": lambda acc: PrivateIGDClassifier(
        classes=[0, 1], horizon=10, stream="iterate_perturbation", accountant=acc),
    "igd-ftrl-auto": lambda acc: PrivateIGDClassifier(
        classes=[0, 1], horizon=10, data_norm="auto", accountant=acc),
    "qftl-auto": lambda acc: PrivateQFTLRegressor(
        data_norm="auto", y_bound=1.0, horizon=10, accountant=acc),
    "qftl": lambda acc: PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, horizon=10,
                                             accountant=acc),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_first_batch_past_the_horizon_is_refused_and_refunded(name):
    X, c, y = _data()
    target = y if name.startswith("qftl") else c
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = CASES[name](acc)
    with pytest.raises(ValueError, match="horizon"):
        est.partial_fit(X, target)                 # 20 rows > horizon = 10
    assert acc.spent().n_charges == 0 and acc.spent().epsilon == 0.0
    est.partial_fit(X[:5], target[:5])
    one_call = acc.spent()
    assert one_call.n_charges == 1
    # a later batch past what is left: refused, nothing more charged
    with pytest.raises(ValueError, match="horizon"):
        est.partial_fit(X[:6], target[:6])
    assert acc.spent() == one_call


def test_a_call_past_the_calibrated_count_is_refunded():
    """DP-FTRL calibrated for ceil(10 / 5) = 2 calls: a third (smaller batches) is refused
    from the count alone and charges nothing more."""
    X, c, _ = _data()
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateIGDClassifier(classes=[0, 1], horizon=10, prefix_sums="sqrt", accountant=acc)
    est.partial_fit(X[:5], c[:5])
    est.partial_fit(X[5:7], c[5:7])
    spent = acc.spent()
    with pytest.raises(ValueError, match="calls"):
        est.partial_fit(X[7:9], c[7:9])
    assert acc.spent() == spent


@pytest.mark.parametrize("params", [
    dict(alpha=1e307),                                        # alpha t overflowed: NaN coef_
    dict(alpha=1e308, solver="objective_perturbation"),       # SolverDidNotConverge, charged
    dict(alpha=1e290, stream="iterate_perturbation"),         # noise scale refused, charged
    dict(data_norm=1e-200, fit_intercept=False),              # alpha_ underflowed: ZeroDivision
])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_extreme_public_parameters_are_refused_before_the_data(params, method):
    X, c, _ = _data()
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateIGDClassifier(classes=[0, 1], accountant=acc, **params)
    with pytest.raises(ValueError, match="alpha"):
        getattr(est, method)(X, c)
    assert acc.spent().n_charges == 0
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize("data_norm", [1e52, 1e100])
def test_alpha_auto_at_a_huge_public_data_norm(data_norm):
    """public_alpha computed L^6 with **, an OverflowError from data_norm near 1e52."""
    X, c, _ = _data()
    est = PrivateIGDClassifier(classes=[0, 1], data_norm=data_norm, random_state=0).fit(X, c)
    assert np.isfinite(est.alpha_) and np.all(np.isfinite(est.coef_))


@pytest.mark.parametrize("make, match", [
    # the calibration's floating-point floor on the sensitivity
    (lambda acc: PrivateFrankWolfeLasso(radius=1e-320, accountant=acc), "too small"),
    # the certificate's floor on the tolerance of objective perturbation
    (lambda acc: PrivateMirrorDescentRegressor(solver="objective_perturbation", tol=1e-320,
                                               accountant=acc), "tol"),
    (lambda acc: PrivateMirrorDescentRegressor(solver="objective_perturbation", tol=1e-320,
                                               radius="auto", accountant=acc), "tol"),
])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_calibration_refusals_of_public_parameters_are_refunded(make, match, method):
    """Refused by a calibration that reads public values only: decided before the data is
    read, so the refusal charges nothing (they were charged before session 30)."""
    X, _, y = _data()
    acc = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = make(acc)
    with pytest.raises(ValueError, match=match):
        getattr(est, method)(X, y)
    assert acc.spent().n_charges == 0 and acc.spent().epsilon == 0.0
    assert not hasattr(est, "coef_")
