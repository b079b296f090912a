"""sample_weight in [0, 1] for the two local-DP regressors (issue 18, item 2; doc/privacy.md
57.5): each user multiplies its clipped gradient (MI-OGD bandit: its clipped loss value) by its
weight before its randomiser, so every randomiser's bound holds unchanged.

* unweighted fits are those of the code before the change, bit for bit (ParameterFree digests
  recorded at 316e15a; MI-OGD's are tests/test_s32n_protocol_digests.py), and all-ones
  weights give the unweighted fit (model, learner state, generator state, a second call);
* noise off, the weighted step is the hand-computed one (weights 0, 0.5, random);
* a user of weight 0 still draws its noise: the generator ends where the unweighted fit's does;
* a noise-off neighbour whose replaced record includes its weight moves the user's report by
  at most the randomiser's sensitivity;
* bad weights raise ValueError before the data is read, the estimator unchanged.
"""

import hashlib
import pickle

import numpy as np
import pytest

from sklearn_dpol import MutualInformationPrivateOGDRegressor, ParameterFreeLocalDPRegressor
from sklearn_dpol._core import mi_ogd
from sklearn_dpol._core import parameter_free as pf
from sklearn_dpol._core.local_randomizers import sphere_directions
from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.privacy import PrivacyAccountant

LATTICE = 2.0 ** -12          # _exact_kernels.LAPLACE_REPORT_LATTICE (noise-off rounding)


def _data(n, d, seed, spread=1.5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) * spread
    X[1] *= 40.0                                  # a row whose gradient is clipped
    y = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
    return X, y


def _weights(n, seed):
    w = np.random.default_rng(seed).uniform(0, 1, n)
    w[::7] = 0.0
    w[3::7] = 0.5
    w[5::7] = 1.0
    return w


# ---------------------------------------------------------------------------
# Unweighted fits unchanged: ParameterFree digests recorded before the change.
# ---------------------------------------------------------------------------

def _pf_cases():
    out = []
    k = 0
    for randomizer in ("laplace", "sampled_coordinate", "auto"):
        for method in ("coordinate", "reduction"):
            for loss in ("absolute", "huber"):
                for budgets in ("scalar", "per_user"):
                    out.append(dict(randomizer=randomizer, method=method, loss=loss,
                                    budgets=budgets, d=(1, 3, 6, 9)[k % 4], seed=k,
                                    intercept=k % 3 != 2, epsilon=(0.5, 2.0, 8.0)[k % 3]))
                    k += 1
    return out


def _pf_fit(case, sample_weight=None):
    X, y = _data(300, case["d"], case["seed"])
    eps = None
    if case["budgets"] == "per_user":
        eps = np.where(np.random.default_rng(case["seed"]).random(300) < 0.3, np.inf,
                       np.random.default_rng(case["seed"] + 1).uniform(0.2, 3.0, 300))
    reg = ParameterFreeLocalDPRegressor(epsilon=case["epsilon"], randomizer=case["randomizer"],
                                        method=case["method"], loss=case["loss"],
                                        fit_intercept=case["intercept"],
                                        random_state=case["seed"])
    for part in (slice(0, 200), slice(200, 300)):
        kw = {} if eps is None else {"sample_epsilon": eps[part]}
        if sample_weight is not None:
            kw["sample_weight"] = sample_weight[part]
        if part.start == 0:
            reg.fit(X[part], y[part], **kw)
        else:
            reg.partial_fit(X[part], y[part], **kw)
    return reg


def _pf_digest(reg):
    h = hashlib.sha256()
    for a in (reg.coef_, np.array([reg.intercept_]), *reg._learner.state().values(),
              np.asarray(reg._sampler)):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr(reg._rng.bit_generator.state).encode())
    return h.hexdigest()[:16]


# Recorded at 316e15a (before sample_weight): coef_, intercept_, the learner's state, the exact
# sampler's state and the numpy generator's state after fit then partial_fit.
PF_DIGESTS = (
    "7493081402cbe602 c6bb9504c8afee3b 7e1366b78f8156ed a2dd620124138c43 eca82b606607e1d8 "
    "54df50de9f04f11d 8656ba01a3ca4696 a50196666f9822a2 f4ef69d67fb019b8 551b9673e736357d "
    "8d83d78ec0f2f5ff ea840414a68dc213 f065c7168bcc1540 da10138ad8482efa 5cd37004b260e9f7 "
    "2f51d378f70ec813 a6c2cff074fd2252 0c330f1e79aa2324 57006f4e2f643d99 cbfe5328c5ca8b4c "
    "202074f89704eb9a 67cee09126557537 8744ba79eb74f96f 73872ec0e21426dc"
).split()


@pytest.mark.parametrize("i", range(len(PF_DIGESTS)))
def test_parameter_free_unweighted_and_all_ones_fits_are_the_recorded_ones(i):
    case = _pf_cases()[i]
    assert _pf_digest(_pf_fit(case)) == PF_DIGESTS[i]
    assert _pf_digest(_pf_fit(case, sample_weight=np.ones(300))) == PF_DIGESTS[i]


def _mi_state(reg):
    return (reg.coef_.copy(), reg.intercept_, reg._learner.theta.copy(),
            reg._learner.w_sum.copy(), np.asarray(reg._sampler).copy(),
            repr(reg._rng.bit_generator.state))


def _assert_same_state(a, b):
    for u, v in zip(a, b):
        if isinstance(u, np.ndarray):
            np.testing.assert_array_equal(u, v)
        else:
            assert u == v


MI_PARAMS = [
    {},                                                        # fused full-feedback rounds
    dict(loss="huber", fit_intercept=False, gradient_bound=0.3),
    dict(loss="squared", epsilon=None, sigma=1e-3),
    dict(feedback="bandit", epsilon=2.0),
    dict(feedback="bandit", loss="huber", epsilon=None, sigma=0.2, step_size=0.05),
]


@pytest.mark.parametrize("params", MI_PARAMS)
def test_mi_ogd_all_ones_weights_are_the_unweighted_fit_bit_for_bit(params):
    X, y = _data(400, 5, 3)
    fits = []
    for weights in (None, np.ones(400)):
        reg = MutualInformationPrivateOGDRegressor(random_state=5, data_norm=1.5, y_bound=2.0,
                                                   **params)
        kw = lambda part: {} if weights is None else {"sample_weight": weights[part]}  # noqa: E731
        reg.fit(X[:250], y[:250], **kw(slice(0, 250)))
        first = _mi_state(reg)
        reg.partial_fit(X[250:], y[250:], **kw(slice(250, 400)))
        fits.append((first, _mi_state(reg)))
    for a, b in zip(*fits):
        _assert_same_state(a, b)


# ---------------------------------------------------------------------------
# Noise off: the weighted step is the hand-computed one.
# ---------------------------------------------------------------------------

def _round_to_lattice(v):
    return np.floor(v / LATTICE + 0.5) * LATTICE


@pytest.mark.parametrize("randomizer", ["laplace", "sampled_coordinate"])
@pytest.mark.parametrize("method", ["coordinate", "reduction"])
@pytest.mark.parametrize("loss", ["absolute", "huber"])
def test_parameter_free_noise_off_weighted_step_is_the_hand_computed_one(randomizer, method,
                                                                         loss):
    X, y = _data(300, 3, 1)
    weights = _weights(300, 2)
    reg = ParameterFreeLocalDPRegressor(epsilon=np.inf, randomizer=randomizer, method=method,
                                        loss=loss, epsilon_huber=0.7, random_state=0)
    reg.fit(X, y, sample_weight=weights)
    learner = pf.make_learner(method, 4, G=reg.gradient_bound_, prior="improper", b=1.0)
    for i in range(300):
        g = pf.user_gradient(learner.predict(), X[i], y[i], loss=loss, huber_threshold=0.7)
        report = _round_to_lattice(weights[i] * np.clip(g, -1.0, 1.0))
        if weights[i] == 0.0:
            assert not np.any(report)              # a weight-0 user's report is noise only
        learner.update(report)
    expected = learner.average()
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], expected, rtol=1e-9,
                               atol=1e-12)
    # the weights matter: half weights and unit weights give other models
    for other in (np.full(300, 0.5), np.ones(300)):
        moved = reg.__class__(**reg.get_params()).fit(X, y, sample_weight=other)
        assert np.abs(np.r_[moved.coef_, moved.intercept_] - expected).max() > 1e-3


def _numpy_mi(X, y, weights, *, loss, L, B, eta, data_norm, y_bound, directions=None,
              exploration=None, F=None):
    """The seed's lazy projected OGD (anytime steps), each user's report times its weight."""
    n, p = X.shape
    d = p + 1
    theta = np.zeros(d)
    played = []
    for t in range(n):
        w = np.zeros(d)
        if t:
            w = eta / np.sqrt(t) * theta
            if np.linalg.norm(w) > B:
                w = w * B / np.linalg.norm(w)
        played.append(w)
        x = X[t] * min(1.0, data_norm / np.linalg.norm(X[t]))
        xa = np.r_[x, 1.0]
        yt = np.clip(y[t], -y_bound, y_bound)
        if directions is None:
            r = xa @ w - yt
            psi = {"squared": r, "absolute": np.sign(r), "huber": np.clip(r, -1.0, 1.0)}[loss]
            g = psi * xa
            if np.linalg.norm(g) > L:
                g = g * (L / np.linalg.norm(g))
            g = weights[t] * g
        else:
            r = xa @ (w + exploration * directions[t]) - yt
            phi = {"squared": r * r / 2, "absolute": abs(r)}[loss]
            g = d / exploration * (weights[t] * min(phi, F)) * directions[t]
        theta = theta - g
    return np.array(played).mean(axis=0)


@pytest.mark.parametrize("loss", ["squared", "absolute", "huber"])
def test_mi_ogd_noise_off_weighted_full_feedback_is_the_hand_computed_one(loss):
    X, y = _data(300, 3, 4, spread=0.8)
    weights = _weights(300, 5)
    L, B = 0.7, 1.3
    reg = MutualInformationPrivateOGDRegressor(epsilon=np.inf, gradient_bound=L, radius=B,
                                               loss=loss, data_norm=1.2, y_bound=1.5,
                                               random_state=0)
    reg.fit(X, y, sample_weight=weights)
    assert reg.sigma_ == 0.0
    expected = _numpy_mi(X, y, weights, loss=loss, L=L, B=B, eta=B / L, data_norm=1.2,
                         y_bound=1.5)
    np.testing.assert_allclose(np.r_[reg.coef_, reg.intercept_], expected, rtol=1e-9,
                               atol=1e-12)
    unweighted = _numpy_mi(X, y, np.ones(300), loss=loss, L=L, B=B, eta=B / L, data_norm=1.2,
                           y_bound=1.5)
    assert np.abs(unweighted - expected).max() > 1e-3


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_mi_ogd_noise_off_weighted_bandit_is_the_hand_computed_one(loss):
    X, y = _data(300, 3, 6, spread=0.8)
    weights = _weights(300, 7)
    B, delta = 1.0, 0.3
    directions = sphere_directions(np.random.default_rng(8), 300, 4)
    F = mi_ogd.loss_bound(loss, 1.0, B + delta, 1.0, 1.0, True)
    eta = B / (4 * F / delta)
    learner = mi_ogd.LazyOGDLearner(4, radius=B, eta=eta, anytime=True)
    mi_ogd.run_protocol(learner, X, y, sampler_state(np.random.default_rng(9)), directions,
                        loss=loss, huber_threshold=1.0, data_norm=1.0, y_bound=1.0,
                        intercept=True, feedback="bandit", clip_norm=1.0, exploration=delta,
                        loss_bound=F, sigma=0.0, sample_weight=weights)
    expected = _numpy_mi(X, y, weights, loss=loss, L=None, B=B, eta=eta, data_norm=1.0,
                         y_bound=1.0, directions=directions, exploration=delta, F=F)
    np.testing.assert_allclose(learner.average(), expected, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------
# A weight-0 user still draws its noise: the generator does not depend on the weights.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: ParameterFreeLocalDPRegressor(randomizer="laplace", random_state=3),
    lambda: ParameterFreeLocalDPRegressor(randomizer="sampled_coordinate", random_state=3),
    lambda: MutualInformationPrivateOGDRegressor(random_state=3),
    lambda: MutualInformationPrivateOGDRegressor(feedback="bandit", random_state=3),
], ids=["pf-laplace", "pf-sampled", "mi-full", "mi-bandit"])
def test_zero_weight_users_draw_their_noise(make):
    """The sampled-coordinate randomiser draws two words a user whatever its data; the exact
    Laplace and normal releases draw one variate a coordinate, and more words only when a
    variate's first two digits leave a floor undecided (below 2^-34 a value): on this seed,
    the generator ends where the unweighted fit leaves it, and a zero-weight user's report
    is pure noise (the model moves)."""
    X, y = _data(300, 4, 11, spread=0.5)
    states, models = [], []
    for weights in (None, _weights(300, 12), np.r_[np.zeros(299), 1.0]):
        reg = make()
        reg.fit(X, y, sample_weight=weights)
        states.append((np.asarray(reg._sampler).copy(), repr(reg._rng.bit_generator.state)))
        models.append(np.r_[reg.coef_, reg.intercept_])
    for state in states[1:]:
        np.testing.assert_array_equal(state[0], states[0][0])
        assert state[1] == states[0][1]
    assert np.abs(models[0] - models[1]).max() > 0
    assert np.abs(models[2]).max() > 0            # 299 noise-only reports still move it


# ---------------------------------------------------------------------------
# Noise-off neighbours: the replaced record includes its weight.
# ---------------------------------------------------------------------------

NEIGHBOURS = [  # (x, y, weight) of the replaced user, before and after
    ((0.3, -0.2, 0.1), 0.4, 1.0, (50.0, -80.0, 30.0), -40.0, 1.0),
    ((50.0, -80.0, 30.0), 40.0, 1.0, (-50.0, 80.0, -30.0), -40.0, 1.0),
    ((50.0, -80.0, 30.0), 40.0, 0.0, (-50.0, 80.0, -30.0), -40.0, 1.0),
    ((50.0, -80.0, 30.0), 40.0, 1.0, (50.0, -80.0, 30.0), 40.0, 0.0),
    ((50.0, -80.0, 30.0), 40.0, 0.5, (-50.0, 80.0, -30.0), -40.0, 1.0),
    ((0.0, 0.0, 0.0), 0.0, 0.25, (9.0, 9.0, 9.0), -9.0, 0.75),
]


def _neighbour_sets(pair, n=60):
    X, y = _data(n, 3, 21)
    w = _weights(n, 22)
    x0, y0, w0, x1, y1, w1 = pair
    out = []
    for xr, yr, wr in ((x0, y0, w0), (x1, y1, w1)):
        Xa, ya, wa = X.copy(), y.copy(), w.copy()
        Xa[-1], ya[-1], wa[-1] = xr, yr, wr
        out.append((Xa, ya, wa))
    return out


@pytest.mark.parametrize("pair", NEIGHBOURS)
@pytest.mark.parametrize("randomizer", ["laplace", "sampled_coordinate"])
def test_parameter_free_neighbour_reports_move_within_the_sensitivity(pair, randomizer):
    """The last user's report is the only difference (the same prefix plays the same iterate):
    L_j = -sum g_j, so L's difference is the reports' difference, at most 2 per coordinate
    (Laplace: scale 2 / tau_j; sampled: |g_j| <= 1 fixes the sign's probabilities), and every
    pre-randomisation coordinate lies in [-1, 1]."""
    fits = []
    for Xa, ya, wa in _neighbour_sets(pair):
        reg = ParameterFreeLocalDPRegressor(epsilon=np.inf, randomizer=randomizer,
                                            method="coordinate", random_state=0)
        L = reg.fit(Xa, ya, sample_weight=wa)._learner.L.copy()
        before = reg.fit(Xa[:-1], ya[:-1], sample_weight=wa[:-1])._learner.L.copy()
        fits.append((before, before - L))      # (L before the last user, its report)
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    for _, report in fits:
        assert np.abs(report).max() <= 1.0
    moved = np.abs(fits[0][1] - fits[1][1]).max()
    assert moved <= 2.0
    if pair[2] != pair[5] and pair[0] == pair[3]:
        assert moved > 0                          # the weight alone moves the report


@pytest.mark.parametrize("pair", NEIGHBOURS)
@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_mi_ogd_neighbour_reports_move_within_the_sensitivity(pair, feedback):
    """theta = -sum z: the last user's report moves by at most sensitivity_ (2 L; bandit d F /
    delta given the user's direction, the same in both runs) in L2."""
    fits = []
    for Xa, ya, wa in _neighbour_sets(pair):
        reg = MutualInformationPrivateOGDRegressor(epsilon=np.inf, feedback=feedback,
                                                   gradient_bound=0.8, data_norm=2.0,
                                                   y_bound=3.0, random_state=0)
        reg.fit(Xa, ya, sample_weight=wa)
        theta = reg._learner.theta.copy()
        reg.fit(Xa[:-1], ya[:-1], sample_weight=wa[:-1])
        fits.append((reg._learner.theta.copy(), reg._learner.theta - theta, reg.sensitivity_))
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    sensitivity = fits[0][2]
    if feedback == "full":                        # each report within the ball of L
        for _, report, _ in fits:
            assert np.linalg.norm(report) <= 0.8 * (1 + 1e-12)
    moved = np.linalg.norm(fits[0][1] - fits[1][1])
    assert moved <= sensitivity * (1 + 1e-12)
    if pair[2] != pair[5] and pair[0] == pair[3]:
        assert moved > 0                          # the weight alone moves the report


# ---------------------------------------------------------------------------
# Bad weights: ValueError before the data is read, the estimator unchanged.
# ---------------------------------------------------------------------------

def _bad_weights(n):
    nan = np.full(n, 0.5)
    nan[4] = np.nan
    inf = np.full(n, 0.5)
    inf[4] = np.inf
    return {"negative": np.r_[-0.1, np.ones(n - 1)], "above one": np.r_[1.5, np.ones(n - 1)],
            "nan": nan, "inf": inf, "wrong length": np.ones(n + 1),
            "2-D": np.ones((n, 1))}


MAKERS = {
    "pf": lambda **kw: ParameterFreeLocalDPRegressor(**kw),
    "pf-laplace": lambda **kw: ParameterFreeLocalDPRegressor(randomizer="laplace", **kw),
    "mi": lambda **kw: MutualInformationPrivateOGDRegressor(**kw),
    "mi-bandit": lambda **kw: MutualInformationPrivateOGDRegressor(feedback="bandit", **kw),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("bad", list(_bad_weights(10)))
def test_bad_weights_raise_before_the_data_is_read_and_change_nothing(name, bad, monkeypatch):
    X, y = _data(80, 3, 31)
    weights = _bad_weights(40)[bad]
    acc = PrivacyAccountant(epsilon=100.0, delta=1e-3)
    cls = type(MAKERS[name]())
    read = []
    original = cls._mark_data_read
    monkeypatch.setattr(cls, "_mark_data_read", lambda self: (read.append(1), original(self)))
    # unfitted: refused, nothing charged, still unfitted
    reg = MAKERS[name](accountant=acc)
    for method in ("fit", "partial_fit"):
        with pytest.raises(ValueError, match="sample_weight"):
            getattr(reg, method)(X[:40], y[:40], sample_weight=weights)
    assert not read and not hasattr(reg, "coef_") and acc.spent().n_charges == 0
    # a fitted stream: fit and partial_fit refused, nothing charged
    reg.fit(X[:40], y[:40]).partial_fit(X[40:60], y[40:60])
    charges = acc.spent().n_charges
    read.clear()
    for method in ("partial_fit", "fit"):
        with pytest.raises(ValueError, match="sample_weight"):
            getattr(reg, method)(X[40:80], y[40:80], sample_weight=weights)
    assert not read and acc.spent().n_charges == charges
    # a seeded fitted stream: the model, the learner and both generators unchanged
    reg = MAKERS[name](random_state=0).fit(X[:40], y[:40]).partial_fit(X[40:60], y[40:60])
    before = pickle.dumps(reg)
    read.clear()
    for method in ("partial_fit", "fit"):
        with pytest.raises(ValueError, match="sample_weight"):
            getattr(reg, method)(X[40:80], y[40:80], sample_weight=weights)
        assert pickle.dumps(reg) == before
    assert not read


# ---------------------------------------------------------------------------
# With noise: the protocol kernels against the per-user path, weighted, bit for bit.
# ---------------------------------------------------------------------------

class _WeightedUsers:
    """The public randomiser, each user reporting ``weight * clip(g, -1, 1)`` (the
    randomiser's own clip is then a no-op): ``run_protocol_python``'s users, weighted."""

    def __init__(self, randomizer, sample_weight):
        self.randomizer = randomizer
        self.sample_weight = sample_weight
        self.i = 0

    def report(self, gradient, epsilon, state):
        weighted = self.sample_weight[self.i] * np.clip(gradient, -1.0, 1.0)
        self.i += 1
        return self.randomizer.report(weighted, epsilon, state)


@pytest.mark.parametrize("randomizer", ["laplace", "sampled_coordinate"])
@pytest.mark.parametrize("method", ["coordinate", "reduction"])
def test_parameter_free_weighted_kernel_is_the_per_user_path(randomizer, method):
    from sklearn_dpol._core.local_randomizers import (LocalLaplaceRandomizer,
                                                      LocalSampledCoordinateRandomizer)

    X, y = _data(300, 4, 41)
    weights = _weights(300, 42)
    split = np.array([0.3, 0.2, 0.2, 0.2, 0.1])
    eps = np.random.default_rng(43).choice([0.5, 1.0, 4.0, np.inf], 300)
    kw = dict(loss="huber", huber_threshold=0.8, intercept=True)
    users = (LocalLaplaceRandomizer(split) if randomizer == "laplace"
             else LocalSampledCoordinateRandomizer(split))
    fast = pf.make_learner(method, 5, G=1.0, prior="improper", b=1.0)
    state = sampler_state(np.random.default_rng(44))
    pf.run_protocol(fast, X, y, eps, split, state, sampled=None if randomizer == "laplace"
                    else users, sample_weight=weights, **kw)
    slow = pf.make_learner(method, 5, G=1.0, prior="improper", b=1.0)
    other = sampler_state(np.random.default_rng(44))
    pf.run_protocol_python(slow, X, y, eps, _WeightedUsers(users, weights), other, **kw)
    for name, value in fast.state().items():
        np.testing.assert_array_equal(value, slow.state()[name], err_msg=name)
    np.testing.assert_array_equal(state, other)


@pytest.mark.parametrize("sigma", [1e-9, 0.05, 3.0, 1e9])
@pytest.mark.parametrize("d", [1, 2, 9, 64])
def test_mi_ogd_weighted_fused_round_is_the_per_user_report(sigma, d):
    """The fused full-feedback round (doc/privacy.md 56.8) with weights: the same bits and
    words as the per-user pieces (the clipped gradient times the weight, ``_scaled_gradient``,
    then the public ``gaussian_report``)."""
    from sklearn_dpol._core import _exact_kernels, _mi_kernels

    X, y = _data(80, d, 50 + d, spread=2.0)
    weights = _weights(80, 51)
    seed = 52 + d
    fast = mi_ogd.LazyOGDLearner(d + 1, radius=1.5, eta=0.7, anytime=True)
    state = sampler_state(np.random.default_rng(seed))
    mi_ogd.run_protocol(fast, X, y, state, np.zeros((0, d + 1)), loss="huber",
                        huber_threshold=1.3, data_norm=1.0, y_bound=2.0, intercept=True,
                        feedback="full", clip_norm=0.8, exploration=1.0, loss_bound=0.0,
                        sigma=sigma, sample_weight=weights)
    slow = mi_ogd.LazyOGDLearner(d + 1, radius=1.5, eta=0.7, anytime=True)
    other = sampler_state(np.random.default_rng(seed))
    ws = _exact_kernels.workspace()
    report = np.empty(d + 1)
    for i in range(80):
        scale = _mi_kernels._row_scale(X[i], 1.0)
        _mi_kernels._scaled_gradient(slow.predict(), X[i], y[i], True,
                                     mi_ogd._LOSS_CODES["huber"], 1.3, scale, 2.0, 0.8,
                                     weights[i], report)
        assert np.linalg.norm(report) <= 0.8 * (1 + 1e-12)
        _exact_kernels.gaussian_report(report, sigma, report, ws, other)
        slow.update(report)
    for name, value in fast.state().items():
        np.testing.assert_array_equal(value, slow.state()[name], err_msg=name)
    np.testing.assert_array_equal(state, other)
