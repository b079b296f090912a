"""Behaviour of PrivateIGDClassifier: correctness without noise, calibration of
the noise, randomness, streams, and bad input."""

import pickle

import numpy as np
import pytest
from scipy.special import expit
from scipy.optimize import brentq, minimize, minimize_scalar
from sklearn.base import clone
from sklearn.datasets import make_classification

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core import _igd_kernels as kernels
from sklearn_dpol._core import igd
from sklearn_dpol.privacy import gaussian_mu


def data(n=400, d=5, n_classes=2, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=3,
                               n_redundant=0, n_classes=n_classes, random_state=seed)
    return X, y


# -- the implicit step and non-private IGD -------------------------------------

@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
@pytest.mark.parametrize("seed", range(6))
def test_implicit_step_matches_scipy(loss, seed):
    rng = np.random.default_rng(seed)
    d, alpha, t = 4, 10.0 ** rng.uniform(-3, 0), int(rng.integers(1, 50))
    w0 = rng.normal(scale=3, size=d + 1)
    x = rng.normal(size=(1, d))
    label = float(rng.choice([-1.0, 1.0]))
    w = w0.copy()
    kernels.implicit_pass(w, x, np.array([label]), np.ones(1), np.sum(x**2, axis=1),
                          np.zeros(1, dtype=np.intp), t - 1, alpha,
                          kernels.LOG_LOSS if loss == "log_loss" else kernels.HINGE, 1.0)
    z = np.append(x[0], 1.0)
    eta = 1.0 / (alpha * t)

    def phi(m):
        return np.logaddexp(0.0, -m) if loss == "log_loss" else max(0.0, 1.0 - m)

    def objective(v):
        return 0.5 * np.sum((v - w0) ** 2) + eta * (phi(label * v @ z) + 0.5 * alpha * v @ v)

    # Reference: the minimiser lies on the segment c (w0 + a y z), a in [0, eta]
    # (first-order condition); minimise along it with scipy's bounded search,
    # and for the smooth loss solve the optimality condition with brentq.
    c = t / (t + 1.0)
    line = minimize_scalar(lambda a: objective(c * (w0 + a * label * z)),
                           bounds=(0.0, eta), method="bounded",
                           options={"xatol": 1e-13 * eta})
    reference = c * (w0 + line.x * label * z)
    if loss == "hinge":
        # The kink makes 1-D searches imprecise; solve the equivalent smooth QP
        # min 1/2||v - w0||^2 + eta (xi + alpha/2 ||v||^2), xi >= 0, xi >= 1 - y v.z.
        def qp(u):
            return 0.5 * np.sum((u[:-1] - w0) ** 2) + eta * (u[-1] + 0.5 * alpha * u[:-1] @ u[:-1])
        constraints = [{"type": "ineq", "fun": lambda u: u[-1]},
                       {"type": "ineq", "fun": lambda u: u[-1] - 1 + label * u[:-1] @ z}]
        start = np.append(reference, max(0.0, 1 - label * reference @ z))
        solution = minimize(qp, start, constraints=constraints, method="SLSQP",
                            options={"ftol": 1e-16, "maxiter": 500})
        reference = solution.x[:-1]
    if loss == "log_loss":
        def grad_along(a):
            m = label * c * (w0 + a * label * z) @ z
            return a - eta * expit(-m)
        a_star = brentq(grad_along, 0.0, eta, xtol=1e-16)
        reference = c * (w0 + a_star * label * z)
    # Our step is never worse than scipy's optimum. For the smooth loss they
    # agree to 1e-8; SLSQP stops about 1e-8 short at the hinge's kink, while
    # the closed form is exact, so there the distance is checked to 1e-6.
    assert objective(w) <= objective(reference) + 1e-12
    np.testing.assert_allclose(w, reference, atol=1e-8 if loss == "log_loss" else 1e-6, rtol=0)


def reference_igd(X, y, alpha, data_norm, passes, loss="log_loss"):
    """Plain-Python IGD with the implicit step solved by brentq."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    Z = np.hstack([X * np.minimum(1.0, data_norm / norms), np.ones((len(X), 1))])
    signs = np.where(y == 1, 1.0, -1.0)
    w, t = np.zeros(Z.shape[1]), 0
    for _ in range(passes):
        for z, s in zip(Z, signs):
            t += 1
            eta, c = 1.0 / (alpha * t), t / (t + 1.0)
            m0, k = c * s * (w @ z), c * eta * (z @ z)
            if loss == "log_loss":
                weight = brentq(lambda a: a - 1 / (1 + np.exp(m0 + k * a)), 0, 1, xtol=1e-15)
            else:
                weight = 0.0 if m0 >= 1 else 1.0 if m0 + k <= 1 else (1 - m0) / k
            w = c * (w + eta * weight * s * z)
    return w


@pytest.mark.parametrize("loss", ["log_loss", "hinge"])
def test_infinite_epsilon_is_exactly_non_private_igd(loss):
    X, y = data(n=150)
    # The reference's constant feature is 1 (intercept_scaling="auto" would be 1.5).
    clf = PrivateIGDClassifier(solver="igd", epsilon=np.inf, alpha=0.01, data_norm=1.5, loss=loss,
                               intercept_scaling=1.0, max_iter=2, shuffle=False).fit(X, y)
    expected = reference_igd(X, y, 0.01, 1.5, passes=2, loss=loss)
    np.testing.assert_allclose(clf.coef_[0], expected[:-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_[0], expected[-1], rtol=1e-9, atol=1e-12)
    assert clf.noise_scale_ == 0.0
    assert np.isinf(clf.privacy_.epsilon) and not clf.privacy_.is_private


def test_iterates_stay_in_the_ball():
    X, y = data(n=500)
    clf = PrivateIGDClassifier(epsilon=np.inf, alpha=1e-3, data_norm=1.0, max_iter=3).fit(X, y)
    scaling = clf.intercept_scaling_          # "auto": 1 / sqrt(n_features) at data_norm=1
    radius = igd.iterate_radius(np.hypot(1.0, scaling), 1e-3)
    iterate = np.append(clf.coef_, clf.intercept_ / scaling)
    assert np.linalg.norm(iterate) <= radius * (1 + 1e-12)


@pytest.mark.parametrize("update", ["implicit", "gradient"])
def test_without_noise_converges_to_the_regularised_minimiser(update):
    """Both updates approach argmin (1/n) sum log-loss + alpha/2 ||w||^2."""
    from sklearn.linear_model import LogisticRegression

    X, y = data(n=5000)
    alpha, data_norm = 0.05, 3.0
    clf = PrivateIGDClassifier(epsilon=np.inf, update=update, alpha=alpha,
                               data_norm=data_norm, fit_intercept=False, max_iter=5,
                               random_state=0).fit(X, y)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    clipped = X * np.minimum(1.0, data_norm / norms)
    exact = LogisticRegression(C=1 / (alpha * len(X)), fit_intercept=False, tol=1e-10)
    exact.fit(clipped, y)
    assert np.linalg.norm(clf.coef_ - exact.coef_) < 0.05 * np.linalg.norm(exact.coef_)


# -- the noise -----------------------------------------------------------------

def test_noise_scale_is_the_analytic_gaussian_calibration():
    X, y = data()
    clf = PrivateIGDClassifier(solver="igd", epsilon=0.7, delta=1e-7, alpha=0.02, max_iter=3,
                               random_state=0).fit(X, y)
    # intercept_scaling="auto": data_norm / sqrt(n_features) (doc/privacy.md 55.16).
    assert clf.intercept_scaling_ == 1 / np.sqrt(X.shape[1])
    L = np.hypot(1.0, clf.intercept_scaling_)
    # The exact bound times the computed iterate's rounding allowance (privacy.md 55.10).
    from sklearn_dpol._core import igd

    expected_sensitivity = 3 * 2 * L / (0.02 * (3 * len(X) + 1)) * igd.iterate_rounding_factor(
        3 * len(X), 3, X.shape[1] + 1, "implicit", "log_loss")
    assert clf.sensitivity_ == pytest.approx(expected_sensitivity, rel=1e-12)
    assert clf.noise_scale_ == pytest.approx(expected_sensitivity / gaussian_mu(0.7, 1e-7),
                                             rel=1e-12)


def test_empirical_noise_matches_the_calibration():
    """The released weights vary across seeds with exactly noise_scale_ std."""
    X, y = data(n=200)
    fits = [PrivateIGDClassifier(solver="igd", epsilon=1.0, alpha=0.5, random_state=s).fit(X, y)
            for s in range(400)]
    # The intercept is the noisy weight of the constant feature times its value.
    released = np.array([np.append(f.coef_, f.intercept_ / f.intercept_scaling_) for f in fits])
    # Far inside the ball, projection never triggers: the spread is pure noise.
    std = released.std(axis=0, ddof=1)
    np.testing.assert_allclose(std, fits[0].noise_scale_, rtol=0.15)


def test_seeds_reproduce_and_differ():
    X, y = data()
    a = PrivateIGDClassifier(random_state=3).fit(X, y)
    b = PrivateIGDClassifier(random_state=3).fit(X, y)
    c = PrivateIGDClassifier(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, c.coef_)
    assert not np.allclose(PrivateIGDClassifier().fit(X, y).coef_,
                           PrivateIGDClassifier().fit(X, y).coef_)


def test_refit_reseeds():
    X, y = data()
    clf = PrivateIGDClassifier(random_state=5)
    first = clf.fit(X, y).coef_.copy()
    clf.partial_fit(X, y)
    np.testing.assert_array_equal(clf.fit(X, y).coef_, first)


def test_stream_noise_never_repeats(noise_draws):
    """Each release draws fresh noise, even with an integer seed."""
    draws = noise_draws
    X, y = data()
    clf = PrivateIGDClassifier(stream="iterate_perturbation", random_state=0)
    for _ in range(3):
        clf.partial_fit(X[:100], y[:100], classes=[0, 1])
    assert len(draws) == 3
    for i in range(3):
        for j in range(i):
            assert not np.allclose(draws[i], draws[j])


# -- streams -------------------------------------------------------------------

def test_stream_accounting_and_guarantee():
    X, y = data(n=600)
    clf = PrivateIGDClassifier(stream="iterate_perturbation", epsilon=2.0, random_state=0)
    spent = []
    for start in range(0, 600, 200):
        clf.partial_fit(X[start:start + 200], y[start:start + 200], classes=[0, 1])
        spent.append(clf.privacy_.spent_mu)
    g = clf.privacy_
    assert (g.n_releases, g.n_records) == (3, 600)
    assert g.mu == pytest.approx(gaussian_mu(2.0, 1e-6))
    assert np.all(np.diff(spent) > 0) and spent[-1] < g.mu
    assert clf.t_ == 601 and clf.n_iter_ == 1


def test_horizon_uniform_shares_spend_exactly_the_budget():
    X, y = data(n=300)
    clf = PrivateIGDClassifier(stream="iterate_perturbation", horizon=300, random_state=0)
    for start in range(0, 300, 100):
        clf.partial_fit(X[start:start + 100], y[start:start + 100], classes=[0, 1])
    assert clf.privacy_.spent_mu == pytest.approx(clf.privacy_.mu, rel=1e-12)
    # Each release: sensitivity / (mu * sqrt(100/300)).
    expected_sigma = clf.sensitivity_ / (clf.privacy_.mu * np.sqrt(1 / 3))
    assert clf.noise_scale_ == pytest.approx(expected_sigma, rel=1e-12)


def test_stream_past_horizon_raises_and_changes_nothing():
    X, y = data(n=300)
    clf = PrivateIGDClassifier(horizon=250, random_state=0)
    clf.partial_fit(X[:200], y[:200], classes=[0, 1])
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match="horizon"):
        clf.partial_fit(X[200:], y[200:])
    assert pickle.dumps(clf) == before


def test_batches_need_less_noise_than_rows():
    """Privacy is spent per release: one release of 100 rows is much less noisy
    than the last of 100 row-by-row releases."""
    X, y = data(n=100)
    batch = PrivateIGDClassifier(stream="iterate_perturbation", horizon=100, random_state=0)
    batch.partial_fit(X, y, classes=[0, 1])
    rows = PrivateIGDClassifier(stream="iterate_perturbation", horizon=100, random_state=0)
    for i in range(100):
        rows.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
    assert rows.noise_scale_ == pytest.approx(10 * batch.noise_scale_, rel=1e-9)


def test_partial_fit_after_fit_continues_from_the_released_model(monkeypatch):
    X, y = data(n=400)
    clf = PrivateIGDClassifier(solver="igd", stream="iterate_perturbation", random_state=0).fit(X[:300], y[:300])
    # The iterate's last weight is that of the constant feature intercept_scaling_.
    released = np.append(clf.coef_[0], clf.intercept_[0] / clf.intercept_scaling_)
    fit_guarantee = clf.privacy_
    starts = []
    original = igd.run_pass

    def spy(W, *args, **kwargs):
        starts.append(W.copy())
        return original(W, *args, **kwargs)

    monkeypatch.setattr(igd, "run_pass", spy)
    clf.partial_fit(X[300:], y[300:])
    np.testing.assert_allclose(starts[0][0], released, rtol=1e-12)
    assert fit_guarantee.n_records == 300 and fit_guarantee.budget == "this release"
    assert clf.privacy_.n_records == 100 and clf.privacy_.n_releases == 1
    assert clf.t_ == 5 * 300 + 100 + 1


def test_privacy_params_frozen_during_stream():
    X, y = data()
    clf = PrivateIGDClassifier(random_state=0).partial_fit(X, y, classes=[0, 1])
    clf.set_params(epsilon=5.0)
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match="changed since the stream started"):
        clf.partial_fit(X, y)
    assert pickle.dumps(clf) == before
    clf.fit(X, y)  # fit starts a new stream with the new value
    assert clf.privacy_.epsilon == 5.0


# -- multiclass and API --------------------------------------------------------

def test_multiclass_one_vs_rest_and_probabilities():
    X, y = data(n=3000, n_classes=3)
    clf = PrivateIGDClassifier(epsilon=np.inf, alpha=1e-3, data_norm=3, n_jobs=2,
                               random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 5) and clf.intercept_.shape == (3,)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    assert clf.score(X, y) > 0.6
    serial = PrivateIGDClassifier(epsilon=np.inf, alpha=1e-3, data_norm=3,
                                  random_state=0).fit(X, y)
    np.testing.assert_array_equal(serial.coef_, clf.coef_)


def test_hinge_has_no_predict_proba():
    assert not hasattr(PrivateIGDClassifier(loss="hinge"), "predict_proba")


def test_gradient_update_needs_log_loss():
    X, y = data()
    with pytest.raises(ValueError, match="smooth loss"):
        PrivateIGDClassifier(update="gradient", loss="hinge").fit(X, y)


def test_private_model_is_useful():
    X, y = data(n=20000, d=10)
    params = dict(alpha=1e-2, data_norm=1.0, random_state=0)
    clf = PrivateIGDClassifier(epsilon=1.0, **params).fit(X, y)
    reference = PrivateIGDClassifier(epsilon=np.inf, **params).fit(X, y)
    assert clf.score(X, y) > reference.score(X, y) - 0.03


# -- bad input leaves the estimator exactly as it was --------------------------

BAD_INPUTS = {
    "nan": lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y),
    "inf": lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.inf, X), y),
    "1-D X": lambda X, y: (X[:, 0], y),
    "empty": lambda X, y: (X[:0], y[:0]),
    "length": lambda X, y: (X, y[:-1]),
}


# A new feature count is an error in a stream, not in a new fit. (A new label
# is not an error: the record contributes nothing, tests/test_failures_and_copies.py.)
STREAM_ONLY = {
    "features": lambda X, y: (X[:, :-1], y),
}
CASES = [(case, method) for case in BAD_INPUTS for method in ("fit", "partial_fit")]
CASES += [(case, "partial_fit") for case in STREAM_ONLY]


@pytest.mark.parametrize("case,method", CASES)
def test_bad_input_raises_and_leaves_state_unchanged(case, method):
    X, y = data()
    clf = PrivateIGDClassifier(random_state=0).fit(X, y)
    clf.partial_fit(X[:50], y[:50])
    before = pickle.dumps(clf)
    bad_X, bad_y = {**BAD_INPUTS, **STREAM_ONLY}[case](X, y)
    with pytest.raises(ValueError):
        getattr(clf, method)(bad_X, bad_y)
    assert pickle.dumps(clf) == before
    # The generator state was restored too: the next release is unchanged.
    twin = pickle.loads(before)
    np.testing.assert_array_equal(clf.partial_fit(X[:50], y[:50]).coef_,
                                  twin.partial_fit(X[:50], y[:50]).coef_)


def test_unfitted_estimator_stays_unfitted_after_bad_input():
    X, y = data()
    clf = PrivateIGDClassifier()
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X, y)  # no `classes` on the first call
    assert pickle.dumps(clf) == before
    with pytest.raises(ValueError, match="two classes"):
        clf.fit(X, np.zeros(len(X)))
    assert pickle.dumps(clf) == before


@pytest.mark.parametrize("params,match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(alpha=0.0), "alpha"),
    (dict(data_norm=-1.0), "data_norm"),
    (dict(loss="squared"), "loss"),
    (dict(horizon=0), "horizon"),
])
def test_out_of_range_hyperparameters(params, match):
    X, y = data()
    with pytest.raises(ValueError, match=match):
        PrivateIGDClassifier(**params).fit(X, y)


def test_clone_and_pickle_keep_predictions():
    X, y = data()
    clf = PrivateIGDClassifier(random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.decision_function(X), clf.decision_function(X))
    assert not hasattr(clone(clf), "coef_")
