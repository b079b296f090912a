"""Audit gates for the local randomisers of ParameterFreeLocalDPRegressor and
MutualInformationPrivateOGDRegressor: the user-side kernels the protocols run,
on worst-case pairs of users, scored with the exact likelihood ratio.

Each user's report is the whole release of that user (the learner's models are
post-processing of the reports), so auditing the report audits the estimator's
local guarantee. Tight side: the audited lower bound stays within the claim and
comes close to it. Power side: the same audit certifies a violation when the
noise is halved (positive control).
"""

import numpy as np
import pytest

from sklearn_dpol._core import _mi_kernels as mi_kernels
from sklearn_dpol._core import _pf_kernels as pf_kernels
from sklearn_dpol._core._exact_kernels import workspace
from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.audit import audit_samples
from sklearn_dpol.privacy import gaussian_epsilon

RUNS = 40_000


# -- the local Laplace randomiser (seed 001, Lemma 1) ---------------------------------

def laplace_reports(x, y, epsilon, seed, runs=RUNS):
    """Reports of one user at w = 0 (absolute loss, no intercept, one coordinate)."""
    state = sampler_state(np.random.default_rng(seed))
    out, scales, ws = np.empty(1), np.empty(1), workspace()
    reports = np.empty((runs, 1))
    w, weights = np.zeros(1), np.ones(1)
    for i in range(runs):
        pf_kernels.user_report(w, np.array([x]), y, False, pf_kernels.ABSOLUTE, 1.0,
                               epsilon, weights, scales, ws, state, out)
        reports[i] = out
    return reports


def laplace_audit(epsilon_used, replacement_x=1.0):
    """x = 1, y = -5 reports +1 (+ noise); the replacement's y = +5 reports -1,
    the two ends of the clipped range: the pair attains tau = epsilon."""
    out0 = laplace_reports(1.0, -5.0, epsilon_used, seed=0)
    out1 = laplace_reports(replacement_x, 5.0, epsilon_used, seed=1)
    # The likelihood ratio is a nonincreasing function of the report, so
    # thresholds on -z are the likelihood-ratio tests. (The reports lie on a
    # common grid, doc/privacy.md section 14, so their floating-point bits carry
    # nothing more: tests/test_local_parity_attack.py.)
    def statistic(out):
        return -out[:, 0]

    return audit_samples(out0, out1, delta=0.0, statistic=statistic, random_state=0)


def test_laplace_randomiser_is_tight_and_within_its_claim():
    result = laplace_audit(2.0)
    assert result.epsilon_lower_bound <= 2.0
    assert result.epsilon_lower_bound > 0.8 * 2.0


def test_clipping_keeps_an_out_of_range_user_within_the_claim():
    """x = 3 makes the gradient -3: clipped to -1, it is no more distinguishable."""
    result = laplace_audit(2.0, replacement_x=3.0)
    assert result.epsilon_lower_bound <= 2.0


def test_laplace_with_half_the_noise_is_caught():
    assert laplace_audit(4.0).epsilon_lower_bound > 2.0


# -- the local Gaussian randomiser (seed 003, Algorithm 1) --------------------------------

def gaussian_reports(y, sigma, seed, runs):
    """One user (x = e_1, absolute loss, no intercept) at w = 0: the clipped
    gradient is +-e_1, antipodal on the L-ball with L = 1."""
    state = sampler_state(np.random.default_rng(seed))
    w, x, out, ws = np.zeros(2), np.array([1.0, 0.0]), np.empty(2), workspace()
    reports = np.empty((runs, 2))
    for i in range(runs):
        mi_kernels.user_full_report(w, x, y, False, mi_kernels.ABSOLUTE, 1.0, 1.0, 1.0, 1.0,
                                    sigma, ws, state, out)
        reports[i] = out
    return reports


@pytest.mark.parametrize("sigma_factor,caught", [(1.0, False), (0.5, True)])
def test_gaussian_randomiser_against_its_claim(sigma_factor, caught):
    """Claim: mu = 2L/sigma = 0.8 at sigma = 2.5; the report is scored with the
    exact likelihood ratio, a linear statistic along e_1."""
    sigma, delta = 2.5, 1e-6
    claim = gaussian_epsilon(2.0 / sigma, delta)
    runs = 200_000
    out0 = gaussian_reports(-1.0, sigma * sigma_factor, 0, runs)   # reports +e_1 + noise
    out1 = gaussian_reports(1.0, sigma * sigma_factor, 1, runs)    # reports -e_1 + noise
    result = audit_samples(out0, out1, delta=delta, statistic=lambda out: -out[:, 0],
                           random_state=0)
    if caught:
        assert result.epsilon_lower_bound > claim
    else:
        assert result.epsilon_lower_bound <= claim
        assert result.epsilon_lower_bound > 0.3 * claim
