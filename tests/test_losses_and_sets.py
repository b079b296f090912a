"""Issue 17 item 3: one vocabulary of losses (``_core/losses.py``) and sets (``_core/sets.py``).

* one integer code per loss, the same in every kernel and core module;
* the compiled primitives are the Python ones (bit for bit), the numpy
  versions agree with them, and the constants bound what they claim to bound;
* the sets' gauges, projections and warm-start checks;
* ``import sklearn_dpol`` loads neither numba nor the compiled losses.
"""

import math
import subprocess
import sys

import numpy as np
import pytest

from sklearn_dpol._core.losses import norm_bound
from sklearn_dpol._core import losses, sets

RESIDUALS = np.r_[np.linspace(-5.0, 5.0, 201), [0.0, -0.0, 1e-300, -1e300, 1e300, 0.5, -0.5]]


def test_one_code_per_loss_shared_by_every_module():
    from sklearn_dpol._core import _igd_kernels, _loss_kernels, _md_kernels, _mi_kernels
    from sklearn_dpol._core import _pf_kernels, mi_ogd, mirror_descent, parameter_free

    codes = losses.CODES
    assert len(set(codes.values())) == len(codes)
    assert _igd_kernels.LOG_LOSS == codes["log_loss"]
    assert _igd_kernels.HINGE == codes["hinge"]
    for module in (_mi_kernels, _md_kernels):
        assert (module.SQUARED, module.ABSOLUTE, module.HUBER) == (
            codes["squared"], codes["absolute"], codes["huber"])
    assert (_pf_kernels.ABSOLUTE, _pf_kernels.HUBER) == (codes["absolute"], codes["huber"])
    for table in (mi_ogd._LOSS_CODES, mirror_descent._LOSS_CODES, parameter_free._LOSS_CODES):
        assert all(codes[name] == value for name, value in table.items())
    # the kernels use the compiled primitives of .losses, not copies
    assert _md_kernels.loss_derivative is _loss_kernels.loss_derivative
    assert _mi_kernels.loss_value is _loss_kernels.loss_value
    with pytest.raises(ValueError, match="loss must be one of"):
        losses.code("squared_error")


@pytest.mark.parametrize("name", losses.RESIDUAL_LOSSES)
def test_residual_primitives_compiled_numpy_and_python_agree(name):
    from sklearn_dpol._core import _loss_kernels as k

    code, h = losses.code(name), 0.7
    for r in RESIDUALS:
        value = losses.loss_value(float(r), code, h)
        slope = losses.loss_derivative(float(r), code, h)
        assert k.loss_value(float(r), code, h) == value
        assert k.loss_derivative(float(r), code, h) == slope
        assert losses.values(name, r, h) == value
        assert losses.derivatives(name, r, h) == slope
    # NaN never reaches a report
    assert k.loss_derivative(math.nan, code, h) == 0.0


@pytest.mark.parametrize("name", losses.RESIDUAL_LOSSES)
def test_residual_constants_bound_the_derivatives(name):
    h, bound = 0.7, 3.0
    r = np.linspace(-bound, bound, 2001)
    slopes = np.abs(losses.derivatives(name, r, h))
    assert slopes.max() <= losses.derivative_bound(name, huber_threshold=h,
                                                   residual_bound=bound)
    # tight: the bound is attained on the residuals allowed
    assert slopes.max() == pytest.approx(
        losses.derivative_bound(name, huber_threshold=h, residual_bound=bound))
    if losses.is_smooth(name):
        second = np.diff(losses.derivatives(name, r, h)) / np.diff(r)
        assert second.max() <= losses.smoothness(name) * (1 + 1e-9)
    else:
        assert name == "absolute" and losses.smoothness(name) == math.inf


def test_margin_losses_primitives_and_constants():
    from sklearn_dpol._core import _loss_kernels as k

    m = np.linspace(-30.0, 30.0, 601)
    for name in losses.MARGIN_LOSSES:
        code = losses.code(name)
        slopes = losses.margin_derivatives(name, m)
        assert np.abs(slopes).max() <= losses.derivative_bound(name) == 1.0
        for t in m[::37]:
            assert k.margin_derivative(float(t), code) == losses.margin_derivative(float(t), code)
    # log loss: derivative of the values, curvature <= 1/4 (attained at 0)
    values = losses.margin_values("log_loss", m)
    np.testing.assert_allclose(np.gradient(values, m), losses.margin_derivatives("log_loss", m),
                               atol=2e-3)
    second = np.diff(losses.margin_derivatives("log_loss", m)) / np.diff(m)
    assert second.max() <= losses.smoothness("log_loss")
    assert losses.smoothness("hinge") == math.inf


@pytest.mark.parametrize("a", [-40.0, -3.0, 0.0, 0.4, 2.0, 40.0])
@pytest.mark.parametrize("k", [1e-6, 0.3, 5.0, 1e6])
def test_implicit_weights_solve_their_equations(a, k):
    from sklearn_dpol._core import _loss_kernels as kernels

    s = kernels.implicit_weight(a, k, losses.LOG_LOSS_CODE)
    assert s == losses.implicit_weight(a, k, losses.LOG_LOSS_CODE)
    assert s == pytest.approx(1.0 / (1.0 + math.exp(min(a + k * s, 700.0))), rel=1e-10)
    hinge = kernels.implicit_weight(a, k, losses.HINGE_CODE)
    # the proximal step of max(0, 1 - m): s in [0, 1] minimises s-dependent objective
    assert 0.0 <= hinge <= 1.0
    if 0.0 < hinge < 1.0:
        assert a + k * hinge == pytest.approx(1.0)


def test_lipschitz_from_the_public_bounds():
    assert losses.augmented_norm(3.0, 0.0) == 3.0
    # An upper bound: hypot one ulp up, even where hypot is exact (privacy.md 57.7).
    assert losses.augmented_norm(3.0, 4.0) == math.nextafter(5.0, math.inf)
    assert losses.lipschitz(2.0, 3.0, True) == 2.0 * norm_bound(3.0, 1.0)
    with pytest.raises(ValueError, match="threshold"):
        losses.derivative_bound("huber")
    with pytest.raises(ValueError, match="residual"):
        losses.derivative_bound("squared")


def test_import_loads_neither_numba_nor_the_compiled_losses():
    code = ("import sys, sklearn_dpol, sklearn_dpol._core.losses, sklearn_dpol._core.sets; "
            "assert 'numba' not in sys.modules; "
            "assert 'sklearn_dpol._core._loss_kernels' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- sets -------------------------------------------------------------------------------


@pytest.mark.parametrize("constraint", ["l2", "l1", "group_l1", "box"])
def test_projection_lands_in_the_set_and_is_nearest(constraint):
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.normal(size=6) * 3
        p = sets.project(constraint, w, 1.5, group_size=2)
        assert sets.gauge(constraint, p, 2) <= 1.5 * (1 + 1e-12)
        # nearest: no random point of the set is closer
        for _ in range(50):
            q = sets.project(constraint, rng.normal(size=6) * 3, 1.5, group_size=2)
            assert np.linalg.norm(w - p) <= np.linalg.norm(w - q) + 1e-12
        inside = p * 0.5
        np.testing.assert_array_equal(sets.project(constraint, inside, 1.5, 2), inside)


def test_simplex_projection_and_gauge():
    p = sets.project("simplex", np.array([3.0, -1.0, 0.5]), 2.0)
    assert np.all(p >= 0) and p.sum() == pytest.approx(2.0)
    assert sets.gauge("simplex", p / 2.0) == pytest.approx(1.0)
    assert sets.gauge("simplex", np.array([0.5, 0.6])) == math.inf


def test_warm_start_check_refuses_beyond_rounding_and_repairs_rounding():
    w = np.array([0.6, -0.4])                      # ||w||_1 = 1
    np.testing.assert_array_equal(sets.check_start("l1", w, 1.0), w)
    nudged = w * (1 + 1e-12)                       # rounding: pulled back in
    back = sets.check_start("l1", nudged, 1.0)
    assert sets.gauge("l1", back) <= 1.0
    with pytest.raises(ValueError, match="outside the l1 constraint set"):
        sets.check_start("l1", w * 1.01, 1.0)
    with pytest.raises(ValueError, match="outside the l2 constraint set"):
        sets.check_start("l2", np.array([np.nan, 0.0]), 1.0)
    with pytest.raises(ValueError, match="constraint must be one of"):
        sets.gauge("l3", w)
    with pytest.raises(ValueError, match="group_size"):
        sets.project("group_l1", w, 1.0)


def test_row_projection_matches_the_vector_projection():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(5, 4)) * 2
    rows = sets.project_rows_l2(W, 1.0)
    for i in range(5):
        np.testing.assert_allclose(rows[i], sets.project("l2", W[i], 1.0), rtol=1e-15)
