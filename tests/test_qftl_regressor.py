"""PrivateQFTLRegressor as an estimator: exactness without noise, streams, bad input."""

import math
import pickle

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol.privacy import gaussian_mu


def regression_data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    y = X @ rng.normal(size=d) * 0.5 + 0.1 + 0.05 * rng.standard_normal(n)
    return X, np.clip(y, -1, 1)


def exact_ridge(X, y, alpha, *, data_norm=1.0, y_bound=1.0, intercept=1.0):
    """Ridge with penalty n*alpha on clipped rows (and the constant column)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    rows = X * np.minimum(1.0, data_norm / np.maximum(norms, 1e-300))
    if intercept is not None:
        rows = np.hstack([rows, np.full((len(X), 1), intercept)])
    coef = Ridge(alpha=len(X) * alpha, fit_intercept=False, solver="cholesky").fit(
        rows, np.clip(y, -y_bound, y_bound)).coef_
    if intercept is None:
        return coef, 0.0
    return coef[:-1], coef[-1] * intercept


def model(reg):
    return np.append(reg.coef_, reg.intercept_)


# -- epsilon = inf is exact ridge / follow-the-leader ---------------------------

@pytest.mark.parametrize("fit_intercept,scaling", [(True, 1.0), (True, 2.5), (False, 1.0)])
def test_fit_without_noise_is_exact_ridge(fit_intercept, scaling):
    X, y = regression_data()
    X[:5] *= 8   # some rows and targets are clipped
    y[:5] = 3.0
    reg = PrivateQFTLRegressor(epsilon=np.inf, alpha=1e-3, data_norm=0.8, y_bound=0.9,
                               fit_intercept=fit_intercept, intercept_scaling=scaling).fit(X, y)
    coef, intercept = exact_ridge(X, y, 1e-3, data_norm=0.8, y_bound=0.9,
                                  intercept=scaling if fit_intercept else None)
    np.testing.assert_allclose(reg.coef_, coef, atol=1e-12)
    assert reg.intercept_ == pytest.approx(intercept, abs=1e-12)


@pytest.mark.parametrize("horizon", [None, 600])
@pytest.mark.parametrize("prefix_sums", ["tree", "honaker"])
def test_stream_without_noise_is_follow_the_leader(horizon, prefix_sums):
    X, y = regression_data()
    reg = PrivateQFTLRegressor(epsilon=np.inf, alpha=1e-2, horizon=horizon,
                               prefix_sums=prefix_sums)
    for end in (1, 2, 7, 64, 65, 300, 600):
        start = reg.t_ if hasattr(reg, "t_") else 0
        reg.partial_fit(X[start:end], y[start:end])
        coef, intercept = exact_ridge(X[:end], y[:end], 1e-2)
        np.testing.assert_allclose(model(reg), np.append(coef, intercept), atol=1e-10)
        assert reg.t_ == end


def test_stream_after_fit_adds_to_the_released_statistics():
    X, y = regression_data()
    reg = PrivateQFTLRegressor(epsilon=np.inf, alpha=1e-2).fit(X[:200], y[:200])
    reg.partial_fit(X[200:450], y[200:450])
    np.testing.assert_allclose(model(reg), np.append(*exact_ridge(X[:450], y[:450], 1e-2)),
                               atol=1e-10)
    assert reg.t_ == 450 and reg.privacy_.n_records == 250


def test_private_stream_after_fit_reuses_the_released_statistics():
    """The records of fit pay nothing more: the stream adds to fit's noisy
    statistics, which are never redrawn."""
    X, y = regression_data()
    reg = PrivateQFTLRegressor(epsilon=1.0, alpha=1e-2, random_state=0).fit(X[:300], y[:300])
    released = reg._base_statistics.copy()
    reg.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(reg._base_statistics, released)
    assert reg.privacy_.n_records == 300 and reg.privacy_.n_releases == 1
    assert "earlier fit" in reg.privacy_.records


# -- noise, seeds and the solve -------------------------------------------------

def test_fit_noise_scale_is_the_joint_sensitivity_over_mu():
    X, y = regression_data()
    reg = PrivateQFTLRegressor(epsilon=0.5, delta=1e-7, data_norm=2.0, y_bound=3.0,
                               intercept_scaling=0.5, alpha=1e-2, random_state=0).fit(X, y)
    # The unit scale: rows / data_norm (intercept 0.5 / 2), targets / y_bound (B = 1).
    R = norm_bound(1.0, 0.5 / 2.0)
    assert reg.sensitivity_ == pytest.approx(qftl.joint_sensitivity(R, 1.0))
    assert reg.noise_scale_ == pytest.approx(reg.sensitivity_ / gaussian_mu(0.5, 1e-7))
    assert reg.privacy_.spent_mu == pytest.approx(gaussian_mu(0.5, 1e-7))


def test_known_horizon_reports_the_budget_spent_so_far():
    X, y = regression_data(n=1000)
    mu = gaussian_mu(1.0, 1e-6)
    reg = PrivateQFTLRegressor(horizon=1000, random_state=0, prefix_sums="honaker")
    reg.partial_fit(X[:3], y[:3])      # records so far lie in at most 2 of 10 levels
    assert reg.privacy_.spent_mu == pytest.approx(mu * math.sqrt(2 / 10))
    reg.partial_fit(X[3:1000], y[3:1000])
    assert reg.privacy_.spent_mu == pytest.approx(mu)
    # the node noise carries the stream layer's rounding allowance (doc/privacy.md 55.8)
    assert reg.noise_scale_ == pytest.approx(math.sqrt(10) * 1.001 * reg.sensitivity_ / mu,
                                             rel=1e-12)
    with pytest.raises(ValueError, match="horizon"):
        reg.partial_fit(X[:1], y[:1])


def test_seeds_reproduce_and_every_release_draws_fresh_noise():
    X, y = regression_data()
    a = PrivateQFTLRegressor(random_state=3).fit(X, y)
    b = PrivateQFTLRegressor(random_state=3).fit(X, y)
    c = PrivateQFTLRegressor(random_state=4).fit(X, y)
    np.testing.assert_array_equal(model(a), model(b))
    assert not np.allclose(model(a), model(c))
    stream = PrivateQFTLRegressor(random_state=3, prefix_sums="tree", horizon=8)
    stats = stream._statistics(X[:2], y[:2])
    stream.partial_fit(X[:1], y[:1])
    first_noise = stream._stream.inner.tree.groups[0].known - stats.sum(0, 1)
    stream.partial_fit(X[1:2], y[1:2])   # the block (0, 2] gets its own noise
    (group,) = stream._stream.inner.tree.groups
    assert group.ends == [2]
    second_noise = group.known - stats.sum(0, 2)
    assert np.std(first_noise) > 0.5 * stream.noise_scale_
    assert abs(np.corrcoef(first_noise, second_noise)[0, 1]) < 0.5


def test_unseeded_estimator_does_not_keep_the_generator_of_its_noise():
    X, y = regression_data()
    reg = PrivateQFTLRegressor().fit(X, y)
    state = reg._rng.bit_generator.state
    reg2 = PrivateQFTLRegressor().fit(X, y)
    assert state != reg2._rng.bit_generator.state
    assert not np.allclose(model(reg), model(reg2))


def test_solve_is_finite_under_overwhelming_noise():
    X, y = regression_data(n=3)
    for seed in range(50):
        reg = PrivateQFTLRegressor(epsilon=1e-3, alpha=1e-9, random_state=seed).fit(X, y)
        assert np.all(np.isfinite(model(reg)))
        # |x| <= ||u|| / (n alpha) with ||u|| projected to n R B.
        assert np.linalg.norm(model(reg)) <= math.sqrt(2) * 1.0 / 1e-9 * (1 + 1e-9)


def test_eigenvalue_clipping_is_a_projection_towards_the_truth():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(30, 3))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    V = rows.T @ rows
    noise = rng.normal(size=(3, 3)) * 20
    V_hat = V + (noise + noise.T) / 2
    eigenvalues, vectors = np.linalg.eigh(V_hat)
    projected = vectors @ np.diag(np.clip(eigenvalues, 0, 30)) @ vectors.T
    assert np.linalg.norm(projected - V) <= np.linalg.norm(V_hat - V)
    weights = qftl.ridge_from_statistics(V_hat, np.zeros(3) + 1.0, 30, 0.1, 1.0, 1.0)
    np.testing.assert_allclose(weights, np.linalg.solve(projected + 3.0 * np.eye(3), np.ones(3)))


def test_directions_below_the_noise_level_are_raised_to_it():
    rng = np.random.default_rng(0)
    V_hat = np.diag([50.0, 3.0, -4.0])
    u_hat = rng.normal(size=3)
    floor = qftl.noise_spectral_norm(2.0, 3)          # sqrt(6) * 2 = 4.9
    weights = qftl.ridge_from_statistics(V_hat, u_hat, 100, 0.01, 1.0, 1.0, noise_std=2.0)
    np.testing.assert_allclose(weights, u_hat / (np.array([50.0, floor, floor]) + 1.0))


def test_stream_reports_the_noise_it_solved_with():
    """The floor uses the public variance of the released prefix: fit's release
    plus the stream's tree."""
    X, y = regression_data()
    reg = PrivateQFTLRegressor(alpha=1e-2, random_state=0, horizon=300, prefix_sums="honaker")
    reg.fit(X[:300], y[:300])
    reg.partial_fit(X[300:310], y[300:310])
    expected = reg._base_variance + reg._stream.prefix_variance(10)
    assert reg._base_variance == pytest.approx(
        (reg.sensitivity() / gaussian_mu(1.0, 1e-6)) ** 2)
    assert reg._stream.prefix_variance(10) == pytest.approx(
        reg.noise_scale_**2 * qftl_ratio_sum(10, 9))
    assert expected > reg._base_variance


def qftl_ratio_sum(t, levels):
    from sklearn_dpol._core.prefix_sums import honaker_relative_variances
    ratios = honaker_relative_variances(levels)
    return sum(ratios[h] for h in range(t.bit_length()) if t >> h & 1)


def test_private_fit_is_useful_on_enough_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50_000, 3)) / np.sqrt(3)
    y = np.clip(X @ [0.5, -0.3, 0.2] + 0.05 * rng.standard_normal(50_000), -1, 1)
    fit = PrivateQFTLRegressor(epsilon=1.0, alpha=1e-3, random_state=0).fit(X, y)
    assert fit.score(X, y) > 0.9
    stream = PrivateQFTLRegressor(epsilon=1.0, alpha=1e-3, horizon=50_000, random_state=0)
    for start in range(0, 50_000, 5_000):
        stream.partial_fit(X[start:start + 5_000], y[start:start + 5_000])
    assert stream.score(X, y) > 0.5


def test_auto_prefix_sums_is_resolved_and_never_written_back():
    X, y = regression_data(d=4)
    reg = PrivateQFTLRegressor().partial_fit(X, y)    # horizon=None: the unbounded dense stream
    assert len(y) >= 128 and reg.prefix_sums_ == "dense" and reg.prefix_sums == "auto"
    # a first batch of fewer than 128 rows, or very wide rows: BLT's O(dim) steps
    wide = np.random.default_rng(0).normal(size=(10, 30)) / 10
    assert PrivateQFTLRegressor().partial_fit(wide, y[:10]).prefix_sums_ == "blt"
    wider = np.random.default_rng(0).normal(size=(128, 260)) / 100
    assert PrivateQFTLRegressor().partial_fit(wider, y[:128]).prefix_sums_ == "blt"
    assert PrivateQFTLRegressor(horizon=10**6).partial_fit(X[:10], y[:10]).prefix_sums_ == "blt"
    assert PrivateQFTLRegressor(prefix_sums="tree").partial_fit(X, y).prefix_sums_ == "tree"
    assert PrivateQFTLRegressor().fit(X, y).prefix_sums_ is None


# -- bad input leaves the estimator exactly as it was ----------------------------

@pytest.mark.parametrize("bad", ["nan", "features", "horizon", "params", "y_shape"])
def test_failed_call_changes_nothing(bad):
    X, y = regression_data()
    reg = PrivateQFTLRegressor(horizon=500, random_state=0, prefix_sums="tree")
    reg.partial_fit(X[:100], y[:100])
    before = pickle.dumps(reg)
    Xb, yb = X[100:200].copy(), y[100:200].copy()
    if bad == "nan":
        Xb[3, 1] = np.nan
    elif bad == "features":
        Xb = Xb[:, :3]
    elif bad == "horizon":
        Xb, yb = X[100:], y[100:]
    elif bad == "params":
        reg.set_params(epsilon=2.0)
    else:
        yb = np.column_stack([yb, yb])
    with pytest.raises(ValueError):
        reg.partial_fit(Xb, yb)
    if bad == "params":
        reg.set_params(epsilon=1.0)
    assert pickle.dumps(reg) == before
    reg.partial_fit(X[100:200], y[100:200])   # and it goes on as if nothing happened
    twin = PrivateQFTLRegressor(horizon=500, random_state=0, prefix_sums="tree")
    twin.partial_fit(X[:100], y[:100]).partial_fit(X[100:200], y[100:200])
    np.testing.assert_array_equal(model(reg), model(twin))


def test_overflowing_bounds_are_refused_before_any_release():
    X, y = regression_data()
    with pytest.raises(ValueError, match="overflow"):
        PrivateQFTLRegressor(data_norm=1e200).fit(X, y)
    with pytest.raises(ValueError, match="overflow"):
        PrivateQFTLRegressor(alpha=1e-310).partial_fit(X, y)


def test_tiny_bounds_are_refused():
    X, y = regression_data()
    for params in (dict(data_norm=5e-323), dict(y_bound=1e-200)):
        with pytest.raises(ValueError, match="1e-100"):
            PrivateQFTLRegressor(**params).fit(X, y)


@pytest.mark.parametrize("seed", [7, np.random.RandomState(7)])
def test_public_export_drops_the_seed(seed):
    X, y = regression_data()
    public = PrivateQFTLRegressor(random_state=seed).fit(X, y).export_public()
    assert public.random_state is None and public.get_params()["random_state"] is None


def test_public_export_cannot_continue_the_stream():
    X, y = regression_data()
    reg = PrivateQFTLRegressor(random_state=0).partial_fit(X[:50], y[:50])
    public = reg.export_public()
    assert not hasattr(public, "_stream") and not hasattr(public, "_rng")
    np.testing.assert_array_equal(public.predict(X), reg.predict(X))
    with pytest.raises(ValueError, match="public export"):
        public.partial_fit(X[50:60], y[50:60])
