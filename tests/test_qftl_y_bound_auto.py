"""PrivateQFTLRegressor(y_bound="auto"): a private quantile of |y| (doc/privacy.md,
"y_bound='auto' for QFTL")."""

import math
import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_dpol._auto_bounds as auto_bounds_module
import sklearn_dpol.linear_model._qftl as qftl_module
from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol.exceptions import DefaultBoundWarning
from sklearn_dpol.model_selection._candidates import (
    candidate_rho,
    check_released_guarantee,
    selection_spec,
)
from sklearn_dpol.privacy import PrivacyAccountant, PrivacyCost, gaussian_mu
from sklearn_dpol.privacy._quantile import quantile_probabilities

GRID = qftl_module._AUTO_GRID
DELTA = 1e-6


def _data(n=20000, seed=0, y_scale=4.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) / math.sqrt(3)   # rows within data_norm=1
    y = y_scale * (X @ [1.0, -0.8, 0.5] + 0.1 * rng.standard_normal(n))
    return X, y


def _fixed_quantile(value, calls):
    def fake(values, q, candidates, epsilon, state, slope=0.0):
        calls.append((np.array(values), q, epsilon, slope))
        return value
    return fake


def test_resolves_near_the_quantile_of_abs_y_and_is_charged():
    X, y = _data()
    true = np.quantile(np.abs(y), 0.98)
    with PrivacyAccountant(epsilon=1.0, delta=DELTA) as budget:
        model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", alpha=1e-3,
                                     random_state=0, accountant=budget).fit(X, y)
        assert budget.spent().epsilon == pytest.approx(1.0)
    assert model.y_bound == "auto"   # never written back
    assert model.y_bound_ in GRID
    assert true / 1.3 < model.y_bound_ < true * 1.3
    assert model.data_norm_ == 1.0
    assert (model.privacy_.epsilon, model.privacy_.delta) == (1.0, DELTA)
    assert math.isnan(model.privacy_.mu)
    assert "y_bound_" in model.privacy_.released
    assert "quantile of |y|" in model.privacy_.mechanism
    # The statistics get (0.9 epsilon, delta), calibrated on the resolved bound.
    # In the unit scale (targets / y_bound_): B = 1 whatever y_bound_ resolved to.
    # The constant feature is intercept_scaling="auto"'s public c (section 56).
    sensitivity = qftl.joint_sensitivity(
        norm_bound(1.0, model.intercept_scaling_ / model.data_norm_), 1.0) * (1 + 1e-9)
    assert model.sensitivity() == pytest.approx(sensitivity, rel=1e-15)
    # A fit's statistics carry section 54.8's rounding allowance for a sum of n atoms.
    from sklearn_dpol.privacy._rounding import sum_rounding_factor
    allowance = sum_rounding_factor(X.shape[0], qftl.ATOM_NORM_FRACTION)
    assert model.sensitivity_ == model.sensitivity() * allowance
    assert model.noise_scale_ == pytest.approx(sensitivity * allowance / gaussian_mu(0.9, DELTA))
    # The default y_bound=1.0 clips these targets (|y| up to about 6) hard.
    clipped = PrivateQFTLRegressor(data_norm=1.0, alpha=1e-3, random_state=0).fit(X, y)
    assert model.score(X, y) > 0.9 > clipped.score(X, y) + 0.1


def test_reads_y_only_through_the_quantile(monkeypatch):
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile", _fixed_quantile(2.0, calls))
    X, y = _data(n=2000)
    model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=2.0,
                                 random_state=0).fit(X, y)
    assert len(calls) == 1
    values, q, eps, slope = calls[0]
    np.testing.assert_array_equal(values, np.abs(y))
    assert q == PrivateQFTLRegressor.AUTO_Y_BOUND_QUANTILE == 0.98
    assert eps == pytest.approx(0.2) and slope == 0.25
    assert model.y_bound_ == 2.0
    # The release is the one of the public y_bound=2.0 at the statistics' budget
    # (with the constant feature "auto" resolved to at that budget, section 56).
    fixed = PrivateQFTLRegressor(data_norm=1.0, y_bound=2.0, epsilon=2.0, random_state=0,
                                 intercept_scaling=model.intercept_scaling_)
    np.testing.assert_array_equal(model._statistics(X, y).sum(0, 2000),
                                  fixed.fit(X, y)._statistics(X, y).sum(0, 2000))
    assert model.sensitivity_ == fixed.sensitivity_
    assert model.noise_scale_ == pytest.approx(
        fixed.noise_scale_ * gaussian_mu(2.0, DELTA) / gaussian_mu(1.8, DELTA), rel=1e-12)
    # Beyond the resolved bound the values do not matter: rescaling every |y| above
    # it changes nothing released (same seed, bit for bit).
    big = np.abs(y) > 2.0
    assert big.any()
    y_far = np.where(big, y * 1000.0, y)
    far = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=2.0,
                               random_state=0).fit(X, y_far)
    assert far.noise_scale_ == model.noise_scale_
    np.testing.assert_array_equal(far._released_statistics, model._released_statistics)
    # The statistics are those of y / y_bound_ (the unit scale): the noise scale on
    # them does not depend on y_bound_, only the clipping and the units do.
    calls.clear()
    monkeypatch.setattr(auto_bounds_module, "private_quantile", _fixed_quantile(8.0, calls))
    wider = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=2.0,
                                 random_state=0).fit(X, y)
    assert wider.y_bound_ == 8.0
    assert wider.noise_scale_ == model.noise_scale_
    from sklearn_dpol.privacy._rounding import sum_rounding_factor
    assert wider.intercept_scaling_ == model.intercept_scaling_ < 1.0   # public (section 56)
    assert wider.sensitivity_ == qftl.joint_sensitivity(
        norm_bound(1.0, wider.intercept_scaling_), 1.0) * (1 + 1e-9) \
        * sum_rounding_factor(X.shape[0], qftl.ATOM_NORM_FRACTION)   # section 54.8


def test_permuting_y_draws_the_same_bound_and_noise_scale():
    """The quantile's law depends on the multiset of |y| only."""
    X, y = _data(n=3000)
    perm = np.random.default_rng(1).permutation(y.size)
    a = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", random_state=3).fit(X, y)
    b = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", random_state=3).fit(X, y[perm])
    assert a.y_bound_ == b.y_bound_
    assert a.noise_scale_ == b.noise_scale_ and a.sensitivity_ == b.sensitivity_


def test_noise_off_takes_the_best_candidate():
    y = np.linspace(-3.0, 3.0, 101)
    X = np.zeros((101, 2))
    model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=np.inf).fit(X, y)
    counts = np.searchsorted(np.sort(np.abs(y)), GRID, side="right")
    distance = np.abs(counts - round(0.98 * 101))
    assert model.y_bound_ == GRID[np.flatnonzero(distance == distance.min())[0]]
    assert model.noise_scale_ == 0.0


def test_quantile_of_neighbours_within_its_share():
    """Replace-one neighbours: the law of y_bound_ moves by at most exp(0.1 epsilon)."""
    rng = np.random.default_rng(5)
    y = rng.normal(size=400)
    eps_y = PrivateQFTLRegressor.AUTO_Y_BOUND_SHARE * 1.0
    p = quantile_probabilities(np.abs(y), 0.98, GRID, eps_y, slope=0.25)
    worst = 0.0
    for replacement in (0.0, 1e6, np.abs(y).max() * 1.01):
        y2 = y.copy()
        y2[int(np.argmax(np.abs(y)))] = replacement   # the largest |y| moved
        q = quantile_probabilities(np.abs(y2), 0.98, GRID, eps_y, slope=0.25)
        worst = max(worst, np.max(np.abs(np.log(p) - np.log(q))))
    assert 0.0 < worst <= eps_y * (1 + 1e-9)


def test_noise_off_neighbours_move_the_statistics_within_the_sensitivity():
    X, y = _data(n=500)
    model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=1.0,
                                 random_state=0).fit(X, y)
    bound = model.y_bound_
    base = model._statistics(X, y).sum(0, 500)
    worst = 0.0
    rng = np.random.default_rng(2)
    for i in range(40):
        X2, y2 = X.copy(), y.copy()
        direction = rng.normal(size=3)
        X2[i] = 50.0 * direction / np.linalg.norm(direction)
        y2[i] = -1e3 * np.sign(y[i]) if i % 2 else 1e3
        moved = np.linalg.norm(model._statistics(X2, y2).sum(0, 500) - base)
        worst = max(worst, moved)
    assert worst <= model.sensitivity_
    assert worst > 0.5 * model.sensitivity_   # the bound is not vacuous
    assert bound == model.y_bound_   # the unit scale: targets / y_bound_, B = 1
    assert model.sensitivity_ == pytest.approx(qftl.joint_sensitivity(   # c of section 56
        norm_bound(1.0, model.intercept_scaling_ / model.data_norm_), 1.0) * (1 + 1e-9))


@pytest.mark.parametrize("alpha", ["auto", 0.1])
@pytest.mark.parametrize("data_norm", [1.0, "auto"])
def test_cost_privacy_and_selection_rho_compose_the_shares(alpha, data_norm):
    epsilon = 1.5
    prototype = PrivateQFTLRegressor(epsilon=epsilon, delta=DELTA, alpha=alpha,
                                     data_norm=data_norm, y_bound="auto", random_state=0)
    both = data_norm == "auto"
    eps_x = 0.1 * epsilon if both else 0.0
    eps_y = 0.1 * epsilon
    eps_main = epsilon - (eps_x + eps_y)
    # Manual composition: basic over the quantiles and the Gaussian statistics.
    parts_rho = (eps_x ** 2 + eps_y ** 2) / 8 + gaussian_mu(eps_main, DELTA) ** 2 / 2
    rho = max(gaussian_mu(epsilon, DELTA) ** 2 / 2, parts_rho)
    spec = selection_spec(prototype)
    assert spec.composition == "basic" and math.isnan(spec.mu)
    names = [part.name for part in spec.parts]
    assert ("data_norm_, a private quantile of the row norms" in names) == both
    assert "y_bound_, a private quantile of |y|" in names
    quantiles = [part.epsilon for part in spec.parts if not math.isnan(part.epsilon)
                 and math.isnan(part.mu)]
    assert sorted(quantiles) == pytest.approx(sorted([eps_y] + ([eps_x] if both else [])))
    assert spec.parts_rho() == pytest.approx(parts_rho, rel=1e-12)
    assert candidate_rho(prototype) == spec.rho == pytest.approx(rho, rel=1e-12)
    X, y = _data(n=3000)
    planned = PrivacyCost.of(prototype._planned_privacy(X, fitting=True))
    assert (planned.epsilon, planned.delta) == (epsilon, DELTA) and math.isnan(planned.mu)
    with PrivacyAccountant(epsilon=epsilon, delta=DELTA) as budget:
        model = prototype.set_params(accountant=budget).fit(X, y)
        assert budget.spent().epsilon == pytest.approx(epsilon)
    assert (model.privacy_.epsilon, model.privacy_.delta) == (epsilon, DELTA)
    assert f"at ({eps_main:.4g}, {DELTA:.3g})-DP" in model.privacy_.mechanism
    # The noise drawn is the statistics' share, and selection's check accepts it.
    mu_stats = gaussian_mu(eps_main, DELTA) * (math.sqrt(1 - qftl.EIGENVALUE_SHARE)
                                                if alpha == "auto" else 1.0)
    assert model.noise_scale_ == pytest.approx(model.sensitivity_ / mu_stats, rel=1e-12)
    check_released_guarantee(model, spec.rho)


def test_both_auto_resolve_both_bounds():
    rng = np.random.default_rng(4)
    X = 3.0 * rng.normal(size=(20000, 4))
    y = X @ [0.5, -0.5, 0.2, 0.0] + 0.2 * rng.normal(size=20000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DefaultBoundWarning)   # neither bound is a default
        model = PrivateQFTLRegressor(data_norm="auto", y_bound="auto", epsilon=2.0,
                                     random_state=0).fit(X, y)
    norm_q = np.quantile(np.linalg.norm(X, axis=1), 0.98)
    y_q = np.quantile(np.abs(y), 0.98)
    assert norm_q / 1.3 < model.data_norm_ < norm_q * 1.3
    assert y_q / 1.3 < model.y_bound_ < y_q * 1.3
    assert (model.data_norm, model.y_bound) == ("auto", "auto")
    assert "data_norm_" in model.privacy_.released and "y_bound_" in model.privacy_.released
    assert model.score(X, y) > 0.9


def test_default_bound_warning_no_longer_names_y_bound():
    X, y = _data(n=500)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PrivateQFTLRegressor(data_norm=2.0, y_bound="auto", random_state=0).fit(X, y)
        PrivateQFTLRegressor(y_bound="auto", random_state=0).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, DefaultBoundWarning)]
    assert len(messages) == 1   # only data_norm=1.0 of the second fit
    assert "data_norm=1.0" in messages[0] and "y_bound=1.0" not in messages[0]


def test_stream_resolves_from_its_first_batch_and_is_charged():
    X, y = _data(n=6000)
    with PrivacyAccountant(epsilon=1.0, delta=DELTA) as budget:
        model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", accountant=budget,
                                     random_state=0)
        model.partial_fit(X[:2000], y[:2000])
        first = model.y_bound_
        assert first == PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", random_state=0) \
            .partial_fit(X[:2000], y[:2000]).y_bound_
        model.partial_fit(10 * X[2000:4000], 100 * y[2000:4000])   # far beyond: clipped
        model.partial_fit(X[4000:], y[4000:])
        assert model.y_bound_ == first   # frozen for the stream
        assert budget.spent().epsilon == pytest.approx(1.0)
    assert model._stream.mu == gaussian_mu(0.9, DELTA)
    assert math.isnan(model.privacy_.mu) and model.privacy_.epsilon == 1.0
    assert "first batch's |y|" in model.privacy_.mechanism
    # The unit scale (targets / y_bound_): B = 1 whatever the first batch resolved, and
    # the rows' constant feature c of intercept_scaling="auto" (doc/privacy.md 56.9).
    c = model.intercept_scaling_ / model.data_norm_
    assert model.sensitivity_ == pytest.approx(
        qftl.joint_sensitivity(norm_bound(1.0, c), 1.0) * (1 + 1e-9))


def test_stream_after_fit_keeps_the_fits_bound(monkeypatch):
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile", _fixed_quantile(4.0, calls))
    X, y = _data(n=3000)
    model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", horizon=2000,
                                 random_state=0).fit(X[:1000], y[:1000])
    model.partial_fit(X[1000:2000], y[1000:2000])
    assert len(calls) == 1 and model.y_bound_ == 4.0


def test_refusals_are_free_and_leave_the_estimator_unchanged():
    X, y = _data(n=500)
    with pytest.raises(InvalidParameterError):
        PrivateQFTLRegressor(y_bound="something").fit(X, y)
    with PrivacyAccountant(epsilon=1.0, delta=DELTA) as budget:
        tiny = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", epsilon=2.0**-30,
                                    accountant=budget)
        with pytest.raises(ValueError, match="y_bound='auto' cannot spend"):
            tiny.fit(X, y)
        assert not hasattr(tiny, "y_bound_") and not hasattr(tiny, "coef_")
        assert budget.spent().epsilon == 0.0


def test_dask_fit_refuses_y_bound_auto():
    da = pytest.importorskip("dask.array")
    X, y = _data(n=1000)
    with PrivacyAccountant(epsilon=1.0, delta=DELTA) as budget:
        model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", accountant=budget)
        with pytest.raises(ValueError, match="y_bound='auto'"):
            model.fit(da.from_array(X, chunks=500), da.from_array(y, chunks=500))
        assert not hasattr(model, "y_bound_")
        assert budget.spent().epsilon == 0.0


def test_sample_weight_reads_every_abs_y(monkeypatch):
    calls = []
    monkeypatch.setattr(auto_bounds_module, "private_quantile", _fixed_quantile(2.0, calls))
    X, y = _data(n=400)
    w = np.linspace(0.0, 1.0, 400)
    model = PrivateQFTLRegressor(data_norm=1.0, y_bound="auto", random_state=0)
    model.fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(calls[0][0], np.abs(y))   # one value per record
    assert model.y_bound_ == 2.0
