"""MutualInformationPrivateOGDRegressor (seed 003): the users' Gaussian randomisers,
the learner, their separation, and the estimator."""

import inspect
import math
import pickle

import numpy as np
import pytest

import sklearn_dpol._core.mi_ogd as mi_ogd
from sklearn_dpol import MutualInformationPrivateOGDRegressor
from sklearn_dpol._base import make_generator
from sklearn_dpol._core.local_randomizers import (
    LocalBanditGaussianRandomizer,
    LocalGaussianRandomizer,
    sphere_directions,
)
from sklearn_dpol._core import _exact_kernels
from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.privacy import gaussian_epsilon, local_gaussian_report

LOSSES = ["absolute", "squared", "huber"]


def data(seed=0, n=400, d=3, scale=1.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.uniform(-1, 1, size=(n, d))
    y = X @ np.linspace(-0.5, 0.5, d) + 0.2 + 0.05 * rng.normal(size=n)
    return X, y


# ---------------------------------------------------------------------------
# The users' randomisers.
# ---------------------------------------------------------------------------

def test_gaussian_randomiser_clips_and_has_the_right_moments():
    rng = np.random.default_rng(1)
    sigma, L = 0.7, 1.5
    rand = LocalGaussianRandomizer(sigma, L)
    g = np.array([3.0, -4.0, 0.0])  # norm 5 > L: clipped to L g / 5
    np.testing.assert_allclose(rand.clip(g), L * g / 5.0)
    small = np.array([0.3, 0.1, -0.2])
    np.testing.assert_array_equal(rand.clip(small), small)  # inside the ball: unchanged
    # the report, from one sampler state shared by the calls (as in the protocol)
    state = sampler_state(rng)
    n = 40_000
    z = np.array([rand.report(g, state) for _ in range(n)])
    np.testing.assert_allclose(z.mean(axis=0), L * g / 5.0, atol=5 * sigma / math.sqrt(n))
    cov = np.cov(z.T)
    np.testing.assert_allclose(cov, sigma**2 * np.eye(3), atol=0.04 * sigma**2)
    # higher moments on more draws of the same kernel (report = clip, then this kernel)
    m = 200_000
    mean = np.tile(rand.clip(g), m)
    z = np.empty_like(mean)
    _exact_kernels.gaussian_report(mean, sigma, z, _exact_kernels.workspace(), state)
    z = z.reshape(m, 3)
    np.testing.assert_allclose(z.mean(axis=0), L * g / 5.0, atol=5 * sigma / math.sqrt(m))
    s = (z - z.mean(axis=0)) / z.std(axis=0)
    np.testing.assert_allclose((s**3).mean(axis=0), 0.0, atol=0.03)
    np.testing.assert_allclose((s**4).mean(axis=0), 3.0, atol=0.06)
    # the report lies on the noise grid gamma Z (doc/privacy.md section 14)
    gamma = _exact_kernels.grid(sigma)[0]
    np.testing.assert_array_equal(np.mod(z, gamma), 0.0)
    # a state is used and advanced in place; a copy of it replays the same report
    copy = state.copy()
    first = rand.report(g, state)
    assert not np.array_equal(copy, state)
    np.testing.assert_array_equal(rand.report(g, copy), first)
    np.testing.assert_array_equal(copy, state)
    # a seed gives a reproducible report
    np.testing.assert_array_equal(rand.report(g, np.random.default_rng(5)),
                                  rand.report(g, np.random.default_rng(5)))


def test_gaussian_randomiser_logpdf_is_the_normal_density():
    from scipy.stats import multivariate_normal

    rand = LocalGaussianRandomizer(0.3, 1.0)
    g = np.array([2.0, 0.5])
    z = np.array([[0.1, 0.2], [1.0, -1.0]])
    expected = multivariate_normal(rand.clip(g), 0.09 * np.eye(2)).logpdf(z)
    np.testing.assert_allclose(rand.logpdf(z, g), expected, rtol=1e-12)


@pytest.mark.parametrize("sigma,L", [(1.0, 1.0), (0.25, 2.0), (3.0, 0.5)])
def test_replace_one_privacy_loss_is_bounded_by_2L_over_sigma_and_attained(sigma, L):
    """The log-likelihood ratio of two users' reports, under z ~ p(.|g), is
    N(m^2/2, m^2) with m = ||clip(g) - clip(g')|| / sigma <= 2L/sigma: the
    report is (2L/sigma)-GDP, and antipodal gradients attain it."""
    rng = np.random.default_rng(2)
    rand = LocalGaussianRandomizer(sigma, L)
    assert rand.mu == pytest.approx(2 * L / sigma)
    d = 4
    # random pairs, many outside the clipping ball: the privacy loss's std never exceeds mu
    for _ in range(200):
        g, h = rng.normal(scale=3 * L, size=(2, d))
        m = np.linalg.norm(rand.clip(g) - rand.clip(h)) / sigma
        assert m <= rand.mu * (1 + 1e-12)
    # antipodal gradients of any norm >= L attain mu: sampled privacy loss ~ N(mu^2/2, mu^2)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    g, h = 5 * L * u, -1.5 * L * u
    z = rand.clip(g) + sigma * rng.standard_normal((100_000, d))
    llr = rand.logpdf(z, g) - rand.logpdf(z, h)
    mu = rand.mu
    assert llr.std() == pytest.approx(mu, rel=0.01)
    assert llr.mean() == pytest.approx(mu**2 / 2, abs=5 * mu / math.sqrt(z.shape[0]))
    # the privacy loss is linear in z: exactly <z - (a+b)/2, a-b> / sigma^2
    a, b = rand.clip(g), rand.clip(h)
    np.testing.assert_allclose(llr, (z - (a + b) / 2) @ (a - b) / sigma**2, rtol=1e-9,
                               atol=1e-9)


def test_bandit_randomiser_sensitivity_and_clipping():
    rng = np.random.default_rng(3)
    d, F, delta, sigma = 3, 2.0, 0.5, 1.5
    rand = LocalBanditGaussianRandomizer(sigma, F, delta, d)
    assert rand.sensitivity == pytest.approx(d * F / delta)
    assert rand.mu == pytest.approx(d * F / (delta * sigma))
    e = sphere_directions(rng, 1, d)[0]
    np.testing.assert_allclose(rand.mean(1.0, e), d / delta * e)
    np.testing.assert_allclose(rand.mean(10.0, e), d * F / delta * e)  # clipped to F
    np.testing.assert_allclose(rand.mean(-1.0, e), 0.0)                # clipped to 0
    for _ in range(100):
        phi, psi = rng.uniform(-5, 5, size=2)
        assert np.linalg.norm(rand.mean(phi, e) - rand.mean(psi, e)) / sigma <= rand.mu * (
            1 + 1e-12)
    state = sampler_state(rng)
    z = np.array([rand.report(F, e, state) for _ in range(20_000)])
    np.testing.assert_allclose(z.mean(axis=0), rand.mean(F, e), atol=5 * sigma / math.sqrt(2e4))
    llr = rand.logpdf(z, F, e) - rand.logpdf(z, 0.0, e)
    assert llr.std() == pytest.approx(rand.mu, rel=0.02)


def test_sphere_directions_are_uniform_unit_vectors():
    u = sphere_directions(np.random.default_rng(4), 100_000, 3)
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(u.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(np.cov(u.T), np.eye(3) / 3, atol=0.01)


# ---------------------------------------------------------------------------
# The learner.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("anytime", [True, False])
def test_iterates_stay_in_the_ball(anytime):
    rng = np.random.default_rng(5)
    B = 0.7
    learner = mi_ogd.LazyOGDLearner(4, radius=B, eta=3.0, anytime=anytime)
    for _ in range(300):
        w = learner.predict()
        assert np.linalg.norm(w) <= B * (1 + 1e-12)
        learner.update(rng.normal(scale=50.0, size=4))
    assert np.linalg.norm(learner.average()) <= B * (1 + 1e-12)
    X, y = data(scale=30.0)
    for feedback in ("full", "bandit"):
        reg = MutualInformationPrivateOGDRegressor(
            radius=B, feedback=feedback, average=False, random_state=0, data_norm=50.0,
            y_bound=50.0, gradient_bound=10.0)
        for batch in np.array_split(np.arange(X.shape[0]), 20):
            reg.partial_fit(X[batch], y[batch])
            assert math.hypot(np.linalg.norm(reg.coef_), reg.intercept_) <= B * (1 + 1e-12)


def _numpy_lazy_ogd(X, y, *, loss, huber_threshold, L, B, eta, anytime, data_norm, y_bound,
                    intercept,
                    release=None, directions=None, exploration=None, F=None):
    """Independent numpy implementation of the seed's lazy projected OGD.

    ``release(g)`` adds the users' noise to the (clipped) report mean.
    """
    n, p = X.shape
    d = p + int(intercept)
    theta = np.zeros(d)
    played = []
    for t in range(n):
        if t == 0:
            w = np.zeros(d)
        else:
            w = (eta / np.sqrt(t) if anytime else eta) * theta
            norm = np.linalg.norm(w)
            if norm > B:
                w = w * B / norm
        played.append(w)
        x = X[t] * min(1.0, data_norm / np.linalg.norm(X[t]))
        xa = np.r_[x, 1.0] if intercept else x
        yt = np.clip(y[t], -y_bound, y_bound)
        if directions is None:
            r = xa @ w - yt
            psi = {"squared": r, "absolute": np.sign(r),
                   "huber": np.clip(r, -huber_threshold, huber_threshold)}[loss]
            g = psi * xa
            g = g * min(1.0, L / np.linalg.norm(g)) if np.linalg.norm(g) > 0 else g
        else:
            r = xa @ (w + exploration * directions[t]) - yt
            a = abs(r)
            phi = {"squared": r * r / 2, "absolute": a,
                   "huber": (r * r / 2 if a <= huber_threshold
                            else huber_threshold * (a - huber_threshold / 2))}[loss]
            g = d / exploration * min(phi, F) * directions[t]
        if release is not None:
            g = release(g)
        theta = theta - g
    return np.array(played)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("step_size", [None, 0.05])
@pytest.mark.parametrize("intercept", [True, False])
def test_tiny_sigma_equals_noiseless_projected_ogd(loss, step_size, intercept):
    X, y = data(n=300, scale=1.5)
    B, L = 0.8, 0.9
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, 
        sigma=1e-9, gradient_bound=L, radius=B, loss=loss, epsilon_huber=0.3,
        step_size=step_size, fit_intercept=intercept, data_norm=1.2, y_bound=0.6,
        random_state=0).fit(X, y)
    # (the grid release clamps |v| / gamma to 2^62, i.e. |v| to about 2^33 sigma:
    # sigma = 1e-9 leaves every clipped gradient coordinate, |g_j| <= L, untouched)
    d = X.shape[1] + int(intercept)
    eta = B / math.sqrt(L**2 + d * 1e-18) if step_size is None else step_size
    played = _numpy_lazy_ogd(X, y, loss=loss, huber_threshold=0.3, L=L, B=B, eta=eta,
                             anytime=step_size is None, data_norm=1.2, y_bound=0.6,
                             intercept=intercept)
    avg = played.mean(axis=0)
    np.testing.assert_allclose(reg.coef_, avg[:X.shape[1]], atol=1e-7)
    assert reg.intercept_ == pytest.approx(avg[-1] if intercept else 0.0, abs=1e-7)
    assert reg.step_size_ == pytest.approx(eta)


@pytest.mark.parametrize("loss", LOSSES)
def test_bandit_matches_numpy_with_the_same_draws(loss):
    """Algorithm 2, noise included, against numpy fed the same draws: the
    estimator's sampler state (drawn first) feeding the public Gaussian report
    kernel, then the directions."""
    X, y = data(n=300)
    sigma, B, delta = 0.5, 1.0, 0.3
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, 
        sigma=sigma, radius=B, loss=loss, feedback="bandit", exploration_radius=delta,
        random_state=7).fit(X, y)
    rng = make_generator(7, purpose=0)
    d = X.shape[1] + 1
    state = sampler_state(rng)
    directions = sphere_directions(rng, X.shape[0], d)
    F = mi_ogd.loss_bound(loss, 1.0, B + delta, 1.0, 1.0, True)
    assert reg.loss_bound_ == pytest.approx(F)
    G2 = (d * F / delta) ** 2 + d * sigma**2
    ws = _exact_kernels.workspace()

    def release(g):
        out = np.empty_like(g)
        _exact_kernels.gaussian_report(g, sigma, out, ws, state)
        return out

    played = _numpy_lazy_ogd(X, y, loss=loss, huber_threshold=1.0, L=None, B=B,
                             eta=B / math.sqrt(G2),
                             anytime=True, data_norm=1.0, y_bound=1.0, intercept=True,
                             release=release, directions=directions,
                             exploration=delta, F=F)
    avg = played.mean(axis=0)
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], avg, rtol=1e-9, atol=1e-12)
    # the noise matters: another state gives another model
    state = sampler_state(np.random.default_rng(8))
    other = _numpy_lazy_ogd(X, y, loss=loss, huber_threshold=1.0, L=None, B=B,
                             eta=B / math.sqrt(G2),
                            anytime=True, data_norm=1.0, y_bound=1.0, intercept=True,
                            release=release, directions=directions,
                            exploration=delta, F=F).mean(axis=0)
    assert np.abs(other - avg).max() > 1e-3


def test_full_matches_numpy_with_the_public_report():
    """Algorithm 1, noise included, against numpy whose users call
    ``local_gaussian_report`` on the estimator's sampler state."""
    X, y = data(n=300, scale=1.5)
    sigma, B, L = 0.6, 0.9, 0.8
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, 
        sigma=sigma, radius=B, gradient_bound=L, loss="huber", epsilon_huber=0.4,
        random_state=11).fit(X, y)
    state = sampler_state(make_generator(11, purpose=0))
    d = X.shape[1] + 1

    def release(g):
        return local_gaussian_report(g, sigma, clip_norm=L, random_state=state)

    played = _numpy_lazy_ogd(X, y, loss="huber", huber_threshold=0.4, L=L, B=B,
                             eta=B / math.sqrt(L**2 + d * sigma**2), anytime=True,
                             data_norm=1.0, y_bound=1.0, intercept=True, release=release)
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], played.mean(axis=0),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_learner_state_depends_only_on_the_noisy_reports(feedback):
    """The numba protocol equals separate user objects + learner; replaying the
    reports alone into a fresh learner reproduces its whole state."""
    X, y = data(n=250)
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=0.8, feedback=feedback, loss="huber",
                                               random_state=3).fit(X, y)
    d = X.shape[1] + 1
    rng = make_generator(3, purpose=0)
    state = sampler_state(rng)          # the estimator draws its sampler state first
    learner = mi_ogd.LazyOGDLearner(d, radius=1.0, eta=reg.step_size_, anytime=True)
    kw = dict(loss="huber", huber_threshold=1.0, data_norm=1.0, y_bound=1.0, intercept=True)
    if feedback == "full":
        user = LocalGaussianRandomizer(0.8, 1.0)
        reports = mi_ogd.run_protocol_python(learner, X, y, user, state, **kw)
    else:
        directions = sphere_directions(rng, X.shape[0], d)
        user = LocalBanditGaussianRandomizer(0.8, reg.loss_bound_, reg.exploration_radius_, d)
        reports = mi_ogd.run_protocol_python(learner, X, y, user, state, directions, **kw)
    assert user.mu == pytest.approx(reg.privacy_.mu)
    expected = reg._learner.state()
    for name, value in learner.state().items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-10, atol=1e-12)
    fresh = mi_ogd.LazyOGDLearner(d, radius=1.0, eta=reg.step_size_, anytime=True)
    fresh.replay(reports)
    for name, value in fresh.state().items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-10, atol=1e-12)
    # other data producing the same reports leaves the learner in the same state
    other = mi_ogd.LazyOGDLearner(d, radius=1.0, eta=reg.step_size_, anytime=True)
    for report in reports:
        other.update(report)
    for name, value in other.state().items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-10, atol=1e-12)


def test_learner_side_never_sees_the_users_side():
    source = inspect.getsource(mi_ogd.LazyOGDLearner)
    for word in ("sigma", "noise", "local_randomizers", "clip", "direction"):
        assert word not in source
    from sklearn_dpol._core import _mi_kernels as kernels

    assert list(inspect.signature(kernels.learner_update.py_func).parameters) == [
        "theta", "report"]
    params = inspect.signature(kernels.learner_predict.py_func).parameters
    assert not {"sigma", "x", "y", "unit_noise"} & set(params)


# ---------------------------------------------------------------------------
# The estimator.
# ---------------------------------------------------------------------------

def test_privacy_report_full():
    X, y = data()
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=0.5, gradient_bound=2.0, delta=1e-5,
                                               random_state=0).fit(X, y)
    mu = 2 * 2.0 / 0.5
    assert reg.privacy_.mu == pytest.approx(mu)
    assert reg.privacy_.epsilon == pytest.approx(gaussian_epsilon(mu, 1e-5))
    assert reg.privacy_.delta == 1e-5
    d = 4
    C = d / 2 * math.log(1 + 2.0**2 / (d * 0.5**2))
    assert reg.mutual_information_bound_ == pytest.approx(C)
    assert f"{C:.4g} nats" in reg.privacy_.mechanism
    assert reg.sensitivity_ == pytest.approx(4.0)
    assert reg.exploration_radius_ is None and reg.loss_bound_ is None
    # the seed's Figure 3 setting d = L = B = sigma^2 = 1: (1/2) ln 2 nats, but mu = 2
    X1 = X[:, :1]
    fig3 = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=1.0,
                                                fit_intercept=False).fit(X1, y)
    assert fig3.mutual_information_bound_ == pytest.approx(0.5 * math.log(2))
    assert fig3.privacy_.mu == 2.0
    assert 10.5 < fig3.privacy_.epsilon < 11.5


def test_privacy_report_bandit():
    X, y = data()
    reg = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=2.0, feedback="bandit",
                                               random_state=0).fit(X, y)
    d, delta = 4, 0.5
    F = 1.5 * math.sqrt(2) + 1.0  # |r| <= (B + delta) ||(x, 1)|| + y_bound, absolute loss
    assert reg.exploration_radius_ == delta
    assert reg.loss_bound_ == pytest.approx(F)
    assert reg.privacy_.mu == pytest.approx(d * F / (delta * 2.0))
    assert reg.mutual_information_bound_ == pytest.approx(
        d / 2 * math.log(1 + d * F**2 / (delta**2 * 4.0)))
    assert reg.privacy_.epsilon == pytest.approx(gaussian_epsilon(reg.privacy_.mu, 1e-6))


BAD_CALLS = [
    ("nan X", lambda X, y: (np.where(X == X[0, 0], np.nan, X), y), {}),
    ("inf y", lambda X, y: (X, np.r_[y[:-1], np.inf]), {}),
    ("wrong features", lambda X, y: (X[:, :2], y), {}),
    ("sigma", lambda X, y: (X, y), {"epsilon": None, "sigma": -1.0}),
    ("tiny sigma", lambda X, y: (X, y), {"epsilon": None, "sigma": 1e-200}),
    ("epsilon", lambda X, y: (X, y), {"epsilon": -1.0}),
    ("zero epsilon", lambda X, y: (X, y), {"epsilon": 0.0}),
    ("epsilon and sigma", lambda X, y: (X, y), {"sigma": 1.0}),
    ("neither epsilon nor sigma", lambda X, y: (X, y), {"epsilon": None}),
    ("step", lambda X, y: (X, y), {"step_size": 0.0}),
    ("feedback", lambda X, y: (X, y), {"feedback": "partial"}),
    ("changed epsilon", lambda X, y: (X, y), {"epsilon": 2.0}),
]


@pytest.mark.parametrize("name,make,params", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_raises_and_leaves_the_estimator_unchanged(name, make, params):
    X, y = data()
    reg = MutualInformationPrivateOGDRegressor(random_state=0).fit(X, y)
    reg.partial_fit(X[:50], y[:50])
    before = pickle.dumps(reg)
    reg.set_params(**params)
    Xb, yb = make(X[:60], y[:60])
    with pytest.raises(ValueError):
        reg.partial_fit(Xb, yb)
    reg.set_params(**{k: MutualInformationPrivateOGDRegressor().get_params()[k]
                      for k in params})
    assert pickle.dumps(reg) == before
    if name not in ("wrong features", "changed epsilon"):
        reg.set_params(**params)
        with pytest.raises(ValueError):
            reg.fit(Xb, yb)
        reg.set_params(**{k: MutualInformationPrivateOGDRegressor().get_params()[k]
                          for k in params})
        assert pickle.dumps(reg) == before


def test_partial_fit_continues_the_stream():
    X, y = data(n=600)
    whole = MutualInformationPrivateOGDRegressor(random_state=4).fit(X, y)
    split = MutualInformationPrivateOGDRegressor(random_state=4).fit(X[:200], y[:200])
    split.partial_fit(X[200:450], y[200:450]).partial_fit(X[450:], y[450:])
    # the same generator, drawn in sequence: the same noise, the same recursion
    np.testing.assert_allclose(split.coef_, whole.coef_, rtol=1e-12)
    assert split.intercept_ == pytest.approx(whole.intercept_, rel=1e-12)
    assert split.t_ == whole.t_ == 600
    assert split.privacy_.n_releases == 3 and split.privacy_.n_records == 600
    assert split.privacy_.mu == whole.privacy_.mu
    # a fresh estimator's partial_fit stream starts at w_1 = 0 too
    stream = MutualInformationPrivateOGDRegressor(epsilon=None, random_state=4, sigma=1e-9)
    ref = MutualInformationPrivateOGDRegressor(epsilon=None, random_state=4, sigma=1e-9).fit(X, y)
    for batch in np.array_split(np.arange(600), 7):
        stream.partial_fit(X[batch], y[batch])
    np.testing.assert_allclose(stream.coef_, ref.coef_, atol=1e-7)


def test_bandit_partial_fit_continues_the_stream():
    """One sampler state per stream, drawn before the directions: a bandit stream
    cut into calls equals one call, noise and directions included."""
    X, y = data(n=500)
    kw = dict(feedback="bandit", epsilon=None, sigma=0.7, random_state=5)
    whole = MutualInformationPrivateOGDRegressor(**kw).fit(X, y)
    split = MutualInformationPrivateOGDRegressor(**kw).fit(X[:150], y[:150])
    split.partial_fit(X[150:400], y[150:400]).partial_fit(X[400:], y[400:])
    np.testing.assert_allclose(split.coef_, whole.coef_, rtol=1e-12)
    assert split.intercept_ == pytest.approx(whole.intercept_, rel=1e-12)
    other = MutualInformationPrivateOGDRegressor(**dict(kw, random_state=6)).fit(X, y)
    assert not np.allclose(other.coef_, whole.coef_)


def test_learns_and_exports():
    X, y = data(n=20_000, d=2)
    for feedback in ("full", "bandit"):
        reg = MutualInformationPrivateOGDRegressor(epsilon=None, 
            sigma=1.0, feedback=feedback, random_state=0).fit(X, y)
        assert reg.score(X, y) > (0.8 if feedback == "full" else 0.3)
        public = reg.export_public()
        np.testing.assert_array_equal(public.predict(X), reg.predict(X))
        assert not hasattr(public, "_rng")
        with pytest.raises(ValueError, match="public export"):
            public.partial_fit(X, y)


def test_exported_from_the_package():
    import sklearn_dpol
    import sklearn_dpol.linear_model as lm

    assert (sklearn_dpol.MutualInformationPrivateOGDRegressor
            is lm.MutualInformationPrivateOGDRegressor)
    assert "MutualInformationPrivateOGDRegressor" in sklearn_dpol.__all__
    assert "MutualInformationPrivateOGDRegressor" in lm.__all__


@pytest.mark.parametrize("loss", LOSSES)
def test_user_kernels_equal_the_randomiser_objects(loss):
    """The numba user side equals the Python randomisers, including where the
    clipping binds (iterates far outside the ball, huge rows)."""
    from sklearn_dpol._core import _mi_kernels as kernels

    rng = np.random.default_rng(6)
    code = mi_ogd._LOSS_CODES[loss]
    kw = dict(loss=loss, huber_threshold=0.5, data_norm=2.0, y_bound=1.0, intercept=True)
    full = LocalGaussianRandomizer(0.4, 0.7)
    ws = _exact_kernels.workspace()
    for _ in range(50):
        x, y, w = rng.normal(scale=3, size=3), rng.normal(scale=3), rng.normal(scale=5, size=4)
        start, out = sampler_state(rng), np.empty(4)
        state, reference = start.copy(), start.copy()
        kernels.user_full_report(w, x, y, True, code, 0.5, 2.0, 1.0, 0.7, 0.4, ws, state, out)
        gradient = mi_ogd.user_gradient(w, x, y, **kw)
        np.testing.assert_array_equal(out, full.report(gradient, reference))
        np.testing.assert_array_equal(state, reference)   # the same bits consumed
        # the public function, fed the same state, gives the same report
        np.testing.assert_array_equal(
            out, local_gaussian_report(gradient, 0.4, clip_norm=0.7,
                                       random_state=start.copy()))
        e = sphere_directions(rng, 1, 4)[0]
        bandit = LocalBanditGaussianRandomizer(0.4, 1.3, 0.2, 4)  # F = 1.3 binds often
        state = sampler_state(rng)
        reference = state.copy()
        kernels.user_bandit_report(w, x, y, True, code, 0.5, 2.0, 1.0, 0.2, 1.3, 0.4, e,
                                   ws, state, np.empty(4), out)
        phi = mi_ogd.user_loss(w + 0.2 * e, x, y, **kw)
        np.testing.assert_array_equal(out, bandit.report(phi, e, reference))
        np.testing.assert_array_equal(state, reference)
        # the noise-free mean is within the sensitivity of 0, up to the noise
        assert np.linalg.norm(bandit.mean(phi, e)) <= bandit.sensitivity * (1 + 1e-12)


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_epsilon_calibrates_sigma_exactly_and_equals_the_sigma_fit(feedback):
    """Issue 17 item 3: ``epsilon`` (with ``delta``) sets ``sigma_ = sensitivity_ /
    gaussian_mu(epsilon, delta)`` (rounded up); the fit is bit for bit the fit
    with that ``sigma``, and the guarantee is at most ``epsilon``, tight."""
    from sklearn_dpol.privacy import gaussian_mu

    X, y = data(n=300)
    kw = dict(feedback=feedback, loss="squared", random_state=3, delta=1e-5)
    reg = MutualInformationPrivateOGDRegressor(epsilon=2.0, **kw).fit(X, y)
    mu = gaussian_mu(2.0, 1e-5)
    assert reg.sigma_ == pytest.approx(reg.sensitivity_ / mu, rel=1e-15)
    assert reg.sigma_ >= reg.sensitivity_ / mu
    assert reg.privacy_.mu <= mu
    assert 2.0 - 1e-9 < reg.privacy_.epsilon <= 2.0
    assert reg.privacy_.delta == 1e-5
    same = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=reg.sigma_, **kw).fit(X, y)
    np.testing.assert_array_equal(same.coef_, reg.coef_)
    assert same.intercept_ == reg.intercept_
    assert same.privacy_.mu == reg.privacy_.mu
    # planned before any data is read: the same guarantee
    planned = MutualInformationPrivateOGDRegressor(epsilon=2.0, **kw)._planned_privacy(
        X, fitting=True)
    assert planned.mu == reg.privacy_.mu
    # smaller epsilon, more noise
    tighter = MutualInformationPrivateOGDRegressor(epsilon=0.5, **kw).fit(X, y)
    assert tighter.sigma_ > reg.sigma_


def test_epsilon_inf_adds_no_noise():
    X, y = data(n=300)
    reg = MutualInformationPrivateOGDRegressor(epsilon=np.inf, random_state=0).fit(X, y)
    assert reg.sigma_ == 0.0 and reg.privacy_.epsilon == np.inf
    other = MutualInformationPrivateOGDRegressor(epsilon=np.inf, random_state=1).fit(X, y)
    np.testing.assert_array_equal(reg.coef_, other.coef_)


def test_sigma_and_epsilon_are_exclusive_and_checked_before_the_data():
    X, y = data(n=50)
    for params in ({"sigma": 1.0}, {"epsilon": None}):
        reg = MutualInformationPrivateOGDRegressor(**params)
        with pytest.raises(ValueError, match="exactly one of epsilon and sigma"):
            reg.fit(X, y)
        assert not hasattr(reg, "coef_")


def test_radius_auto_holds_a_model_in_the_targets_units():
    """Review 112 U3: radius=1 pinned the model near zero with targets in their own units
    (load_diabetes, y_bound=346: R^2 -4.64 at epsilon=inf, the zero model -4.70); "auto"
    takes y_bound / min(data_norm, 1), which is 1 at the bounds 1 (the seed's setting)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = X * 10.0                                     # rows of norm at most sqrt(10)
    params = dict(data_norm=float(np.sqrt(10.0)), y_bound=346.0, epsilon=np.inf,
                  loss="squared", random_state=0)
    reg = MutualInformationPrivateOGDRegressor(**params).fit(X, y)
    assert reg.radius_ == 346.0
    assert reg.score(X, y) > 0.05
    pinned = MutualInformationPrivateOGDRegressor(radius=1.0, **params).fit(X, y)
    assert pinned.radius_ == 1.0 and pinned.score(X, y) < -3.5     # about the zero model
    unit = MutualInformationPrivateOGDRegressor(random_state=0).fit(X[:50] / 10.0, y[:50] / 346.0)
    assert unit.radius_ == 1.0
    assert MutualInformationPrivateOGDRegressor(fit_intercept=False, data_norm=4.0, y_bound=2.0,
                                                random_state=0).fit(X[:50], y[:50]).radius_ == 0.5
