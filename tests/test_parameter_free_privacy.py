"""The local Laplace randomiser's privacy (Lemma 1) and the learner/user separation."""

import ast
import inspect
import math

import numpy as np
import pytest

from sklearn_dpol import ParameterFreeLocalDPRegressor
from sklearn_dpol._core import _pf_kernels as kernels
from sklearn_dpol._core import parameter_free as pf
from sklearn_dpol._core._exact_kernels import workspace
from sklearn_dpol._core.local_randomizers import LocalLaplaceRandomizer
from sklearn_dpol._core.noise import sampler_state

WEIGHTS = np.array([0.5, 0.3, 0.2, 0.0])


def test_exact_privacy_loss_is_bounded_by_tau_and_attained():
    randomizer = LocalLaplaceRandomizer(WEIGHTS)
    epsilon = 2.0
    tau = randomizer.tau(epsilon)
    np.testing.assert_allclose(tau[:3], [1.0, 0.6, 0.4])
    assert tau[3] == np.inf and tau[:3].sum() == pytest.approx(epsilon)
    z = np.linspace(-25, 25, 5001)[:, None] * np.ones(4)
    grid = np.linspace(-1, 1, 9)
    for g in grid:
        for g_other in grid:
            llr = (randomizer.logpdf(z, np.full(4, g), epsilon)
                   - randomizer.logpdf(z, np.full(4, g_other), epsilon))
            bound = tau[:3] * abs(g - g_other) / 2
            assert np.all(llr[:, :3] <= bound + 1e-12)
            np.testing.assert_allclose(llr[:, :3].max(axis=0), bound, atol=1e-12)
    # Worst case g = 1, g' = -1 attains tau_j; inputs beyond [-1, 1] are clipped.
    llr = randomizer.logpdf(z, np.full(4, 7.0), epsilon) - randomizer.logpdf(z, np.full(4, -9.0),
                                                                             epsilon)
    np.testing.assert_allclose(llr[:, :3].max(axis=0), tau[:3], atol=1e-12)
    assert np.isnan(llr[:, 3]).all()  # the public coordinate has no density: no guarantee


def _kernel_reports(sign, n, tau, rng):
    """Reports of the production user kernel with gradient 5 * sign (clipped to +-1)."""
    weights = np.array([1.0])
    out, scales, ws = np.empty(1), np.empty(1), workspace()
    state = sampler_state(rng)
    reports = np.empty(n)
    x = np.array([5.0])
    for i in range(n):
        kernels.user_report(np.array([1.0]), x, -20.0 * sign, False, kernels.ABSOLUTE, 1.0,
                            tau, weights, scales, ws, state, out)
        reports[i] = out[0]
    assert scales[0] == 2.0 / tau
    return reports


def test_sampled_histogram_of_user_reports_matches_tau():
    rng = np.random.default_rng(0)
    tau, n = 1.0, 200_000
    plus, minus = _kernel_reports(1.0, n, tau, rng), _kernel_reports(-1.0, n, tau, rng)
    assert abs(np.median(plus) - 1.0) < 0.03 and abs(np.median(minus) + 1.0) < 0.03
    edges = np.linspace(-8, 8, 33)
    h_plus, _ = np.histogram(plus, edges)
    h_minus, _ = np.histogram(minus, edges)
    enough = (h_plus > 2000) & (h_minus > 2000)
    llr = np.log(h_plus[enough] / h_minus[enough])
    assert np.all(np.abs(llr) <= tau + 0.08)
    centres = (edges[:-1] + edges[1:])[enough] / 2
    np.testing.assert_allclose(llr[centres > 1.5], tau, atol=0.08)
    np.testing.assert_allclose(llr[centres < -1.5], -tau, atol=0.08)


def _data(seed, n=300, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("method", ["coordinate", "reduction"])
def test_all_users_at_inf_equal_the_noiseless_learner(method):
    X, y = _data(0)
    inf = np.full(X.shape[0], np.inf)
    a = ParameterFreeLocalDPRegressor(method=method, prior="conjugate",
                                      random_state=0).fit(X, y, sample_epsilon=inf)
    b = ParameterFreeLocalDPRegressor(method=method, prior="conjugate", random_state=7,
                                      epsilon=np.inf).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    # The noiseless learner, fed the exact clipped subgradients in plain Python.
    learner = pf.make_learner(method, 4, G=a._learner.G, prior="conjugate", b=1.0)
    pf.run_protocol_python(learner, X, y, inf, LocalLaplaceRandomizer(np.full(4, 0.25)),
                           np.random.default_rng(5), loss="absolute", huber_threshold=1.0,
                           intercept=True)
    np.testing.assert_allclose(a._learner.average(), learner.average(), rtol=1e-10, atol=1e-14)
    # And noise does change it (the comparison above can fail).
    c = ParameterFreeLocalDPRegressor(method=method, random_state=0).fit(X, y)
    assert not np.allclose(c.coef_, a.coef_)


@pytest.mark.parametrize("method", ["coordinate", "reduction"])
@pytest.mark.parametrize("prior", ["conjugate", "improper"])
def test_learner_state_depends_only_on_the_reports(method, prior):
    X1, y1 = _data(1, n=120)
    X2, y2 = _data(2, n=120)
    rng = np.random.default_rng(3)
    eps1 = rng.choice([0.5, 2.0, np.inf], size=120)
    eps2 = rng.choice([1.0, 4.0], size=120)
    w1, w2 = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.1, 0.1, 0.7])
    r1, r2 = LocalLaplaceRandomizer(w1), LocalLaplaceRandomizer(w2)
    kwargs = dict(loss="absolute", huber_threshold=1.0, intercept=True)

    first = pf.make_learner(method, 4, G=1.0, prior=prior, b=1.0)
    state = sampler_state(rng)
    start = state.copy()
    reports = pf.run_protocol_python(first, X1, y1, eps1, r1, state, **kwargs)
    # The production (numba) protocol fed the same sampler state draws the same
    # bits in the same order: the same learner, the same final state.
    fast = pf.make_learner(method, 4, G=1.0, prior=prior, b=1.0)
    fast_state = start.copy()
    pf.run_protocol(fast, X1, y1, eps1, w1, fast_state, **kwargs)
    np.testing.assert_array_equal(fast_state, state)
    for key, value in first.state().items():
        np.testing.assert_allclose(fast.state()[key], value, rtol=1e-10, atol=1e-13)
    # ... and another state another learner (the comparison above can fail).
    other = pf.make_learner(method, 4, G=1.0, prior=prior, b=1.0)
    pf.run_protocol(other, X1, y1, eps1, w1, np.random.default_rng(4), **kwargs)
    assert not np.allclose(other.average(), first.average())

    # Replaying the reports alone reproduces the state exactly.
    replayed = pf.make_learner(method, 4, G=1.0, prior=prior, b=1.0)
    replayed.replay(reports)
    for key, value in first.state().items():
        np.testing.assert_array_equal(replayed.state()[key], value)

    # Other users (data, budgets, split) whose noise happened to give the same
    # reports leave the learner in the same state: users that compute their
    # own gradients on other data and send the recorded reports.
    class SameReports:
        def __init__(self):
            self.t, self.gradients = 0, []

        def report(self, gradient, epsilon, rng):
            self.gradients.append(r2.clip(gradient))
            self.t += 1
            return reports[self.t - 1]

    users = SameReports()
    second = pf.make_learner(method, 4, G=1.0, prior=prior, b=1.0)
    pf.run_protocol_python(second, X2, y2, eps2, users, np.random.default_rng(9), **kwargs)
    assert users.t == 120
    assert not np.allclose(users.gradients, reports)     # the users did differ
    for key, value in first.state().items():
        np.testing.assert_array_equal(second.state()[key], value)


FORBIDDEN = ("epsilon", "tau", "noise", "randomi", "scale", "weights")


def test_learner_code_has_no_access_to_budgets_or_noise():
    sources = [inspect.getsource(cls) for cls in
               (pf._PotentialLearner, pf.CoordinateLearner, pf.ReductionLearner)]
    for fn in (kernels.learner_coordinate_predict, kernels.learner_coordinate_update,
               kernels.learner_reduction_predict, kernels.learner_reduction_update,
               kernels.learner_coordinate_replay, kernels.learner_reduction_replay,
               kernels.prediction, kernels.log_prediction, kernels.log_k):
        sources.append(inspect.getsource(fn.py_func))
    for source in sources:
        code = "\n".join(line.split("#")[0] for line in source.splitlines()
                         if not line.strip().startswith(('"""', "``")))
        # Docstrings may explain; the code may not touch.
        code_only = code.split('"""')[0::2]
        for forbidden in FORBIDDEN:
            assert not any(forbidden in part for part in code_only), forbidden
    # The learners' update takes the report and nothing else.
    for cls in (pf.CoordinateLearner, pf.ReductionLearner):
        assert list(inspect.signature(cls.update).parameters) == ["self", "report"]
    imported = [node for node in ast.walk(ast.parse(inspect.getsource(pf)))
                if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert imported and not any("local_randomizers" in ast.dump(node) for node in imported)
    # The protocol kernels hand the learner functions only the report.
    for driver in (kernels.run_coordinate_protocol, kernels.run_reduction_protocol):
        source = inspect.getsource(driver.py_func)
        update_calls = [line for line in source.splitlines() if "learner_" in line
                        and "update(" in line]
        assert update_calls and all("epsilon" not in c and "noise" not in c
                                    for c in update_calls)


def test_privacy_loss_constant_is_per_coordinate_sensitivity_two():
    # scale 2 / tau: a shift of the clipped input by 2 costs exactly tau.
    randomizer = LocalLaplaceRandomizer(np.array([1.0]))
    assert randomizer.scales(0.5)[0] == pytest.approx(4.0)
    assert randomizer.scales(np.inf)[0] == 0.0
    assert math.isinf(randomizer.tau(np.inf)[0])
