"""``intercept_scaling="auto"`` of ``PrivateQFTLRegressor``: a public noise-to-signal rule
(``doc/privacy.md`` 56.4, issue 17).

The constant feature of the unit-scale rows is ``c = intercept_scaling_ / data_norm_`` with
``c^2 = clip(sqrt(K sqrt(2 (d + 1)) sigma_1 / n), C2_MIN, 1)``: ``sigma_1`` the statistics' noise
at ``c = 1``, ``n`` the rows of ``fit`` (a stream's ``horizon``). Public values only; the
privacy analysis is that of any constant feature, ``R = sqrt(1 + c^2)`` (sections 3.1, 54.14).
"""

import math

import numpy as np
import pytest

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol.linear_model import _qftl as qftl_module
from sklearn_dpol.linear_model._qftl import AUTO_INTERCEPT_C2_MIN, AUTO_INTERCEPT_K


def _data(n=3000, d=20, seed=0, offset=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, d))
    y = 0.5 * X @ (rng.standard_normal(d) / math.sqrt(d)) + offset + 0.1 * rng.standard_normal(n)
    return X, y


def _rule(sigma_1, n, d):
    c2 = math.sqrt(AUTO_INTERCEPT_K * math.sqrt(2.0 * (d + 1)) * sigma_1 / n)
    return math.sqrt(min(max(c2, AUTO_INTERCEPT_C2_MIN), 1.0))


def _kw(d, **extra):
    return dict(data_norm=math.sqrt(d), y_bound=3.0, **extra)


@pytest.mark.parametrize("alpha", ["auto", 1e-3])
def test_fit_resolves_the_rule_from_the_noise_at_c_one(alpha):
    X, y = _data()
    n, d = X.shape
    model = PrivateQFTLRegressor(epsilon=1.0, alpha=alpha, random_state=0, **_kw(d)).fit(X, y)
    at_one = PrivateQFTLRegressor(epsilon=1.0, alpha=alpha, random_state=0,
                                  intercept_scaling=math.sqrt(d), **_kw(d)).fit(X, y)
    c = model.intercept_scaling_ / model.data_norm_
    assert c == pytest.approx(_rule(at_one.noise_scale_, n, d), rel=1e-14)
    assert 0.2 < c < 1.0                       # the rule moved it off the bound
    assert model.intercept_scaling == "auto"   # never written back
    # Everything else is the explicit value's release, bit for bit (same seed).
    explicit = PrivateQFTLRegressor(epsilon=1.0, alpha=alpha, random_state=0,
                                    intercept_scaling=model.intercept_scaling_,
                                    **_kw(d)).fit(X, y)
    np.testing.assert_array_equal(model._released_statistics, explicit._released_statistics)
    assert model.noise_scale_ == explicit.noise_scale_ < at_one.noise_scale_
    assert model.sensitivity() == pytest.approx(
        qftl.joint_sensitivity(math.hypot(1.0, c), 1.0) * (1 + 1e-9), rel=1e-15)


def test_the_rule_reads_no_private_data(monkeypatch):
    """Two data sets of the same shape (one of them far outside the bounds) resolve the
    same constant feature, and the rule is called with public values only."""
    seen = []
    rule = qftl_module.auto_unit_intercept

    def spy(noise_std, n_rows, n_features):
        seen.append((noise_std, n_rows, n_features))
        return rule(noise_std, n_rows, n_features)

    monkeypatch.setattr(qftl_module, "auto_unit_intercept", spy)
    X, y = _data(seed=1)
    X2, y2 = _data(seed=2, offset=-2.0)
    X2 = X2 * 1e3
    fits = [PrivateQFTLRegressor(epsilon=1.0, random_state=s, **_kw(20)).fit(A, b)
            for s, (A, b) in enumerate([(X, y), (X2, y2)])]
    assert fits[0].intercept_scaling_ == fits[1].intercept_scaling_
    assert fits[0].intercept_scaling_ / fits[0].data_norm_ < 1.0
    assert len(seen) == 2 and seen[0] == seen[1]
    noise, n_rows, n_features = seen[0]
    assert (n_rows, n_features) == X.shape
    # sigma_1 is the fit's public calibration at R = sqrt(2) (no data in it).
    sensitivity, sigma = fits[0]._fit_noise(n_rows, math.sqrt(2.0))
    assert noise == sigma
    # A stream with a horizon: the same, from the horizon and the mechanism.
    seen.clear()
    streams = [PrivateQFTLRegressor(epsilon=1.0, random_state=0, horizon=6000, **_kw(20))
               .partial_fit(A[:1000], b[:1000]) for A, b in [(X, y), (X2, y2)]]
    assert streams[0].intercept_scaling_ == streams[1].intercept_scaling_
    assert len(seen) == 2 and seen[0] == seen[1] and seen[0][1:] == (6000, 20)


@pytest.mark.parametrize("scaled", [False, True])
def test_noise_off_neighbours_move_the_statistics_by_at_most_the_sensitivity(scaled):
    """Noise off, at the rule's ``c < 1``: replacing one record (far outside the bounds)
    moves the exact statistics by at most ``sensitivity()`` (section 3.1 with
    ``R = sqrt(1 + c^2)``)."""
    rng = np.random.default_rng(3)
    d, data_norm = 20, (math.sqrt(20) * (1e3 if scaled else 1.0))
    X, y = _data(n=3000, d=d, seed=4)
    X = X * data_norm / math.sqrt(d)
    reg = PrivateQFTLRegressor(epsilon=1.0, data_norm=data_norm, y_bound=3.0,
                               random_state=0).fit(X, y)
    c = reg.intercept_scaling_ / reg.data_norm_
    assert 0.2 < c < 1.0
    bound = reg.sensitivity()
    base = reg._statistics(X, y).sum(0, X.shape[0])
    worst = 0.0
    for row in rng.choice(X.shape[0], 25, replace=False):
        X2, y2 = X.copy(), y.copy()
        X2[row] = rng.standard_normal(d) * data_norm * 10.0
        y2[row] = -np.sign(y[row] or 1.0) * 300.0
        moved = reg._statistics(X2, y2).sum(0, X.shape[0])
        distance = float(np.linalg.norm(moved - base))
        assert distance <= bound
        worst = max(worst, distance / bound)
    assert worst > 0.5


def test_the_noise_is_calibrated_on_the_resolved_feature():
    X, y = _data()
    model = PrivateQFTLRegressor(epsilon=1.0, random_state=0, **_kw(20)).fit(X, y)
    c = model.intercept_scaling_ / model.data_norm_
    # The row bound sqrt(1 + c^2) one ulp up (losses.norm_bound, privacy.md 57.7).
    sensitivity, sigma = model._fit_noise(X.shape[0], norm_bound(1.0, c))
    assert model.sensitivity_ == sensitivity and model.noise_scale_ == sigma
    # The rows the statistics sum carry the feature c.
    stats = model._statistics(X[:1], y[:1]).sum(0, 1)
    V, _ = qftl.unpack(stats, X.shape[1] + 1)
    assert V[-1, -1] == pytest.approx(c * c, rel=1e-15)


def test_the_rule_is_clipped_and_no_noise_keeps_the_bound():
    X, y = _data()
    assert PrivateQFTLRegressor(epsilon=np.inf, **_kw(20)).fit(X, y).intercept_scaling_ == \
        math.sqrt(20)
    assert PrivateQFTLRegressor(epsilon=1.0, fit_intercept=False, **_kw(20)).fit(
        X, y).intercept_scaling_ is None
    assert qftl_module.auto_unit_intercept(0.0, 10, 5) == 1.0
    assert qftl_module.auto_unit_intercept(1e9, 10, 5) == 1.0
    assert qftl_module.auto_unit_intercept(1e-9, 10**9, 5) == math.sqrt(AUTO_INTERCEPT_C2_MIN)
    assert qftl_module.auto_unit_intercept(1e-9, 10**9, 1) == math.sqrt(AUTO_INTERCEPT_C2_MIN)


@pytest.mark.parametrize("prefix_sums,epsilon", [("auto", 1.0), ("tree", 4.0)])
def test_a_stream_with_a_horizon_fixes_the_feature_from_the_horizon(prefix_sums, epsilon):
    X, y = _data(n=6000)
    stream = PrivateQFTLRegressor(epsilon=epsilon, horizon=6000, prefix_sums=prefix_sums,
                                  random_state=0, **_kw(20))
    values = []
    for lo in range(0, 6000, 1500):
        stream.partial_fit(X[lo:lo + 1500], y[lo:lo + 1500])
        values.append(stream.intercept_scaling_)
    assert len(set(values)) == 1                   # fixed for the whole stream
    c = values[0] / stream.data_norm_
    assert c < 1.0
    # The mechanism's last release at c = 1 (its variance scales with the sensitivity^2).
    variance = stream._stream.prefix_variance(stream._stream.horizon)
    sigma_1 = math.sqrt(variance) * stream._sensitivity_at(math.sqrt(2.0)) / stream.sensitivity()
    assert c == pytest.approx(_rule(sigma_1, 6000, 20), rel=1e-9)
    assert stream.sensitivity() == pytest.approx(
        qftl.joint_sensitivity(math.hypot(1.0, c), 1.0) * (1 + 1e-9), rel=1e-15)
    assert stream.noise_scale_ == stream._stream.sigma


def test_a_stream_without_a_horizon_takes_the_minimax_c_and_a_continued_fit_keeps_its_own():
    X, y = _data(n=6000)
    open_ended = PrivateQFTLRegressor(epsilon=1.0, random_state=0, **_kw(20))
    open_ended.partial_fit(X[:1000], y[:1000])
    c = open_ended.intercept_scaling_ / open_ended.data_norm_
    open_ended.partial_fit(X[1000:2000], y[1000:2000])
    assert open_ended.intercept_scaling_ / open_ended.data_norm_ == c    # fixed for the stream
    # 56.9: c^2 is the geometric mean of 56.4's rule at 1 and at 128 calls of the first
    # batch's size, each at the unbounded mechanism's own release noise (c = 1).
    from sklearn_dpol._core import qftl as core
    from sklearn_dpol.linear_model._qftl import auto_unit_intercept
    from sklearn_dpol.privacy._streams import make_stream_mechanism, resolve_mechanism
    probe = PrivateQFTLRegressor(epsilon=1.0, random_state=0, **_kw(20))
    probe.n_features_in_ = X.shape[1]
    dim = core.packed_dim(X.shape[1] + 1)
    mechanism = make_stream_mechanism(
        resolve_mechanism("auto", None, first_rows=1000, dim=dim), dim=dim,
        sensitivity=probe._sensitivity_at(math.sqrt(2.0)), mu=probe._budget_split()[2],
        horizon=None)
    ends = [auto_unit_intercept(math.sqrt(mechanism.prefix_variance(k)), 1000 * k, X.shape[1])
            for k in (1, 128)]
    assert c == pytest.approx(math.sqrt(ends[0] * ends[1]), rel=1e-12)
    assert ends[1] <= c <= ends[0] and c < 1.0
    model = PrivateQFTLRegressor(epsilon=1.0, random_state=0, **_kw(20)).fit(X[:3000], y[:3000])
    fitted = model.intercept_scaling_
    assert fitted < model.data_norm_
    for lo in range(3000, 6000, 1000):
        model.partial_fit(X[lo:lo + 1000], y[lo:lo + 1000])
        assert model.intercept_scaling_ == fitted
    # The stream's statistics are added to the fit's: the same rows, so the same R.
    assert model.sensitivity() == pytest.approx(
        qftl.joint_sensitivity(math.hypot(1.0, fitted / model.data_norm_), 1.0) * (1 + 1e-9),
        rel=1e-15)
    # A new fit resolves afresh (from its own row count).
    refit = model.fit(X[:600], y[:600])
    assert refit.intercept_scaling_ > fitted


def test_bad_parameters_are_refused_before_the_rule_whatever_it_resolved():
    """The overflow check uses the rule's largest value (c = 1) before anything is read."""
    X, y = _data()
    model = PrivateQFTLRegressor(epsilon=1.0, random_state=0, **_kw(20)).fit(X, y)
    before = model.intercept_scaling_
    assert before < model.data_norm_           # the rule's value, not the bound
    with pytest.raises(ValueError, match="overflow"):
        model.set_params(data_norm=1e200).fit(X, y)
    assert model.intercept_scaling_ == before


def test_a_dask_fit_resolves_the_same_feature_and_its_workers_use_it():
    """The workers' copy of the parameters carries the resolved ``c`` (a dask array's
    declared row count is public): the same release as in memory, bit for bit."""
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    X, y = _data(n=6000)
    kw = dict(epsilon=1.0, random_state=5, alpha=1e-3, **_kw(20))
    memory = PrivateQFTLRegressor(**kw).fit(X, y)
    lazy = PrivateQFTLRegressor(**kw).fit(da.from_array(X, chunks=(1500, 20)),
                                          da.from_array(y, chunks=1500))
    assert lazy.intercept_scaling_ == memory.intercept_scaling_ < memory.data_norm_
    assert lazy.sensitivity_ == memory.sensitivity_
    np.testing.assert_allclose(lazy._released_statistics, memory._released_statistics,
                               rtol=1e-9, atol=1e-6)
    # Noise off: the reduced sums are the in-memory sums of rows carrying c.
    exact = PrivateQFTLRegressor(**dict(kw, epsilon=np.inf))
    exact_lazy = exact.fit(da.from_array(X, chunks=(1500, 20)), da.from_array(y, chunks=1500))
    assert exact_lazy.intercept_scaling_ == exact_lazy.data_norm_    # epsilon=inf: c = 1
    from sklearn_dpol.linear_model._dask_fit import dask_statistics
    total = dask_statistics(memory, da.from_array(X, chunks=(1500, 20)),
                             da.from_array(y, chunks=1500)).sum(0, 6000)
    np.testing.assert_allclose(total, memory._statistics(X, y).sum(0, 6000), rtol=1e-12,
                               atol=1e-9)
