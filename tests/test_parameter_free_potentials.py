"""The 1-D potential's prediction (5): stable closed forms against direct quadrature."""

import math

import mpmath
import numpy as np
import pytest
from scipy import special
from scipy.special import erf

from sklearn_dpol._core import _pf_kernels as kernels
from sklearn_dpol._core import parameter_free as pf

L_GRID = [1e-9, 1e-3, 0.2, 1.0, 4.0, 9.0, 30.0, 100.0, 1e3, 1e5, 1e6]
B_GRID = [1.0, 2.0, 5.0, 30.0, 1e3, 1e4, 1e6, 1e8]


def rel_error_of_logs(log_a, log_b):
    return abs(math.expm1(log_a - log_b))


@pytest.mark.parametrize("prior", ["conjugate", "improper"])
@pytest.mark.parametrize("G, b", [(1.0, 1.0), (0.1, 5.0)])
def test_prediction_matches_quadrature_of_equation_5(prior, G, b):
    worst = 0.0
    for L in L_GRID:
        for B in B_GRID:
            B = B * b if B < 2 else B  # include B = b exactly
            for signed in (L, -L):
                sign_q, log_q = pf.log_prediction_quadrature(signed, B, G=G, prior=prior, b=b)
                sign_n, log_n = pf.log_prediction_numba(signed, B, G=G, prior=prior, b=b)
                sign_s, log_s = pf.log_prediction_scipy(signed, B, G=G, prior=prior, b=b)
                assert sign_q == sign_n == sign_s == math.copysign(1.0, signed)
                worst = max(worst, rel_error_of_logs(log_n, log_q),
                            rel_error_of_logs(log_s, log_q))
    assert worst <= 1e-8


def test_improper_prior_without_any_gradient_energy():
    # B = 0 (all reports 0 so far, then L != 0 cannot happen, but the formula
    # must still be right at B -> 0): w = 2 (cosh(CL) - 1) / L.
    for L in (0.5, 30.0, 400.0):
        sign, log_w = pf.log_prediction_numba(L, 0.0, prior="improper")
        C = 0.2
        expected = math.log(2.0) + C * L + 2 * math.log1p(-math.exp(-C * L)) - math.log(2 * L)
        assert sign == 1.0 and rel_error_of_logs(log_w, expected) < 1e-12
    assert pf.log_prediction_numba(0.0, 3.0)[0] == 0.0


def test_numba_matches_scipy_on_random_inputs():
    rng = np.random.default_rng(1)
    L = np.exp(rng.uniform(math.log(1e-8), math.log(1e6), 400)) * rng.choice([-1, 1], 400)
    B = np.exp(rng.uniform(0.0, math.log(1e8), 400))
    for prior in ("conjugate", "improper"):
        for Li, Bi in zip(L, B):
            _, log_n = pf.log_prediction_numba(Li, Bi, prior=prior)
            _, log_s = pf.log_prediction_scipy(Li, Bi, prior=prior)
            assert rel_error_of_logs(log_n, log_s) < 1e-12, (prior, Li, Bi)


def test_numba_erfcx_and_its_complement():
    mpmath.mp.dps = 50
    for x in [0.0, 0.3, 1.0, 2.99, 3.0, 3.01, 4.5, 8.0, 30.0, 1e3, 1e8]:
        assert kernels.erfcx(x) == pytest.approx(special.erfcx(x), rel=1e-14)
        mx = mpmath.mpf(x)
        exact = 1 - mpmath.sqrt(mpmath.pi) * mx * mpmath.exp(mx * mx) * mpmath.erfc(mx)
        assert kernels.one_minus_x_erfcx(x) == pytest.approx(float(exact), rel=1e-13)


def test_equation_7_as_printed_has_a_sign_and_a_factor_error():
    """The seed's (7) equals minus (5) with sqrt(pi / b) missing on its second term.

    We implement (5), the definition; this pins down the discrepancy.
    """
    b, C = 1.7, 0.2
    for L, B in [(1.0, 2.0), (-3.0, 5.0), (0.5, 1.8)]:
        s = math.sqrt(B)
        first = (math.sqrt(b) * L * math.exp((L + 2 * C * B) ** 2 / (4 * B))
                 * (erf((L - 2 * C * B) / (2 * s)) - erf((L + 2 * C * B) / (2 * s))))
        second = 2 * s * (math.exp(2 * C * L) - 1)
        denominator = erf(C * math.sqrt(b)) * math.exp(C * (L + C * B)) * 4 * B ** 1.5
        corrected = -(first + math.sqrt(b / math.pi) * second) / denominator
        printed = (first + second) / denominator
        sign, log_w = pf.log_prediction_numba(L, B, b=b)
        assert sign * math.exp(log_w) == pytest.approx(corrected, rel=1e-12)
        assert printed != pytest.approx(corrected, rel=1e-3)


@pytest.mark.parametrize("prior", ["conjugate", "improper"])
def test_learner_predictions_are_equation_5(prior):
    learner = pf.CoordinateLearner(3, G=1.0, prior=prior, b=1.0)
    rng = np.random.default_rng(0)
    learner.replay(rng.laplace(size=(40, 3)) * [0.1, 3.0, 30.0] + [0.3, -0.5, 0.0])
    w = learner.predict()
    offset = 1.0 if prior == "conjugate" else 0.0
    for j in range(3):
        sign, log_q = pf.log_prediction_quadrature(learner.L[j], offset + learner.S[j],
                                                   prior=prior)
        assert w[j] == pytest.approx(sign * math.exp(log_q), rel=1e-9)
    # The reduction's norm learner uses the same potential on <z_t, g~_t>.
    red = pf.ReductionLearner(3, G=2.0, prior=prior)
    red.replay(rng.laplace(size=(40, 3)) + 0.4)
    sign, log_q = pf.log_prediction_quadrature(red.scalars[0], offset + red.scalars[1],
                                               G=2.0, prior=prior)
    np.testing.assert_allclose(red.predict(), sign * math.exp(log_q) * red.z, rtol=1e-9)
    assert np.linalg.norm(red.z) <= 1.0 + 1e-12


def test_saturated_special_functions_are_exact_constants():
    """``log_k`` skips erf / erfc / exp(-x^2) from ``c - a >= _SATURATED`` on and, in the
    mode-beyond-C branch, the terms whose exponential factor is 0: the same bits only if
    the compiled functions return exactly 1.0 / 0.0 there (the brackets are then those of
    the full expressions, bit for bit)."""
    from numba import njit

    @njit
    def misses(xs):
        bad = 0
        for x in xs:
            bad += (math.erf(x) != 1.0) + (math.erfc(x) != 0.0) + (math.exp(-x * x) != 0.0)
        return bad

    t = kernels._SATURATED
    xs = np.concatenate([np.linspace(t, t + 20.0, 100_001), np.geomspace(t, 1e308, 10_000),
                         [np.inf]])
    assert misses(xs) == 0
    # the full-expression values in the saturated regime, both priors: still the scipy
    # reference's to 1e-12 (c - a from just below to far beyond the threshold)
    for c_minus_a in (t - 1e-9, t, t + 1e-9, 40.0, 1e4):
        for a in (1e-9, 0.3, 2.5, 50.0):
            c = a + c_minus_a
            C = 0.2
            B = (c / C) ** 2
            L = 2.0 * a * math.sqrt(B)
            for prior in ("conjugate", "improper"):
                _, log_n = pf.log_prediction_numba(L, B, prior=prior)
                _, log_s = pf.log_prediction_scipy(L, B, prior=prior)
                assert rel_error_of_logs(log_n, log_s) < 1e-12, (prior, a, c)
