"""The losses of the library: one table of names and codes, their constants, their maths.

Every estimator and every numba kernel takes its loss from here, in the spirit
of skglm's datafits:

* **names and codes**: one integer code per loss, the same in every kernel
  (:data:`CODES`, :func:`code`);
* **constants** as functions of the public bounds: :func:`derivative_bound`
  (``sup |f'|``, the Lipschitz constant in the residual or the margin),
  :func:`smoothness` (``sup f''``, ``inf`` for a non-smooth loss),
  :func:`augmented_norm` and :func:`lipschitz` (the Lipschitz constant in the
  weights, ``sup |f'| * ||(z, intercept)||``);
* **scalar primitives** (:func:`loss_value`, :func:`loss_derivative`,
  :func:`margin_derivative` and the implicit-step weights of IGD), written in
  the subset of Python that numba compiles: :mod:`._loss_kernels` compiles
  these very functions (``cache=True``), and every kernel calls the compiled
  ones, so the maths exists once. This module itself does not import numba:
  ``import sklearn_dpol`` stays numba-free;
* **vectorised numpy versions** (:func:`values`, :func:`derivatives`,
  :func:`margin_values`, :func:`margin_derivatives`) for the solvers that work
  on whole arrays (objective perturbation, FTRL) and for reference tests.

Two kinds of losses:

* residual losses ``f(r)``, ``r = <w, z> + b - y`` (regression):
  ``"squared"`` ``r^2 / 2``, ``"absolute"`` ``|r|``, ``"huber"``
  ``r^2 / 2`` for ``|r| <= h`` and ``h (|r| - h / 2)`` beyond, with ``h`` the
  Huber threshold (public parameter ``epsilon_huber``; ``huber_threshold`` in
  the core);
* margin losses ``phi(m)``, ``m = y <w, z>``, ``y = +-1`` (classification):
  ``"log_loss"`` ``ln(1 + e^-m)``, ``"hinge"`` ``max(0, 1 - m)``.
"""

import math

import numpy as np
from scipy.special import expit

SQUARED = "squared"
ABSOLUTE = "absolute"
HUBER = "huber"
LOG_LOSS = "log_loss"
HINGE = "hinge"

# One integer code per loss, the same in every kernel.
SQUARED_CODE = 0
ABSOLUTE_CODE = 1
HUBER_CODE = 2
LOG_LOSS_CODE = 3
HINGE_CODE = 4
CODES = {
    SQUARED: SQUARED_CODE,
    ABSOLUTE: ABSOLUTE_CODE,
    HUBER: HUBER_CODE,
    LOG_LOSS: LOG_LOSS_CODE,
    HINGE: HINGE_CODE,
}
RESIDUAL_LOSSES = (SQUARED, ABSOLUTE, HUBER)
MARGIN_LOSSES = (LOG_LOSS, HINGE)

# sup f'' (in the residual or the margin); inf: not smooth.
_SMOOTHNESS = {SQUARED: 1.0, ABSOLUTE: math.inf, HUBER: 1.0, LOG_LOSS: 0.25,
               HINGE: math.inf}


def code(loss):
    """The integer code of ``loss`` (a name of :data:`CODES`) for the kernels."""
    try:
        return CODES[loss]
    except KeyError:
        raise ValueError(f"loss must be one of {sorted(CODES)}; got {loss!r}.") from None


# ---------------------------------------------------------------------------
# Constants from the public bounds.
# ---------------------------------------------------------------------------

def smoothness(loss):
    """``sup f''`` of ``loss``: 1 (squared, Huber), 1/4 (log loss), ``inf`` otherwise."""
    code(loss)
    return _SMOOTHNESS[loss]


def is_smooth(loss):
    """Whether ``loss`` has a bounded second derivative."""
    return math.isfinite(smoothness(loss))


def derivative_bound(loss, *, huber_threshold=None, residual_bound=None):
    """``sup |f'|`` over the residuals (margins) the data and the set allow.

    Absolute, log and hinge losses: 1. Huber: its threshold ``h``. Squared:
    the largest residual ``residual_bound`` (a public bound, ``sup |r|``).
    """
    code(loss)
    if loss == HUBER:
        if huber_threshold is None:
            raise ValueError("the Huber loss needs its threshold.")
        return float(huber_threshold)
    if loss == SQUARED:
        if residual_bound is None:
            raise ValueError("the squared loss needs a bound on the residual.")
        return residual_bound
    return 1.0


def augmented_norm(data_norm, intercept_value):
    """``||(z, c)||_2`` for a row clipped to ``data_norm`` and the intercept column ``c``.

    ``c`` is 0 (or ``False``) without an intercept, 1 (``True``) for a plain
    intercept, or the public ``intercept_scaling``.
    """
    if not intercept_value:
        return float(data_norm)
    return norm_bound(data_norm, float(intercept_value))


def norm_bound(a, b):
    """An upper bound on ``sqrt(a^2 + b^2)``: ``math.hypot``'s value one ulp up.

    ``math.hypot`` is within one ulp of the exact norm (Python >= 3.10) but may round
    down, and a row ``(z, c)`` with ``||z|| <= a`` clipped a few ulps below ``a`` can
    still exceed the rounded-down value when ``|c| >> a`` (review 122: by 3e-18
    relative): every sensitivity built on the bound takes the value one ulp up.
    """
    return math.nextafter(math.hypot(a, b), math.inf)


def lipschitz(derivative, data_norm, intercept_value):
    """Lipschitz constant in the weights: ``sup |f'| * ||(z, c)||_2``."""
    return derivative * augmented_norm(data_norm, intercept_value)


# ---------------------------------------------------------------------------
# Scalar primitives. Compiled by numba in ._loss_kernels (keep them in the
# subset numba supports: floats, ints, math, no Python objects).
# ---------------------------------------------------------------------------

def loss_value(r, loss, huber_threshold):
    """``f(r)`` of a residual loss (``loss`` a code)."""
    if loss == SQUARED_CODE:
        return 0.5 * r * r
    a = abs(r)
    if loss == ABSOLUTE_CODE:
        return a
    if a <= huber_threshold:
        return 0.5 * r * r
    return huber_threshold * (a - 0.5 * huber_threshold)


def loss_derivative(r, loss, huber_threshold):
    """``f'(r)`` of a residual loss (``loss`` a code); 0 for a NaN residual.

    A NaN is unreachable with clipped rows, clipped targets and a bounded
    iterate; it is mapped to a data-independent value so that no NaN can
    reach a release.
    """
    if r != r:
        return 0.0
    if loss == SQUARED_CODE:
        return r
    if loss == ABSOLUTE_CODE:
        if r > 0.0:
            return 1.0
        if r < 0.0:
            return -1.0
        return 0.0
    if r > huber_threshold:
        return huber_threshold
    if r < -huber_threshold:
        return -huber_threshold
    return r


def sigmoid_neg(m):
    """``1 / (1 + exp(m)) = -phi'(m)`` of the log loss, without overflow."""
    if m >= 0:
        e = math.exp(-m)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(m))


def softplus(x):
    """``log(1 + exp(x))`` without overflow (the log loss is ``softplus(-m)``)."""
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def log_softplus(x):
    """``log(log(1 + exp(x)))``, finite where softplus underflows (x < -30: ~x)."""
    if x < -30.0:
        return x
    return math.log(softplus(x))


def margin_derivative(m, loss):
    """``phi'(m)`` of a margin loss (``loss`` a code): ``-sigmoid(-m)`` or ``-[m < 1]``."""
    if loss == LOG_LOSS_CODE:
        return -sigmoid_neg(m)
    return -1.0 if m < 1.0 else 0.0


def implicit_log_loss_weight(shrunk_margin, curvature):
    """Solve ``s = 1 / (1 + exp(shrunk_margin + curvature * s))`` for s in (0, 1).

    The implicit (proximal) step of the log loss. In ``l = log s`` the
    equation is ``f(l) = l + softplus(a + k e^l) = 0`` with ``f`` increasing
    and convex, so Newton started at the upper bound ``l = -softplus(a)``
    decreases monotonically to the root without overshooting: about four
    iterations, accurate to a few ulps even when ``s`` underflows towards
    1e-300.
    """
    if curvature > _BISECT_CURVATURE:
        return _implicit_log_loss_weight_bisect(shrunk_margin, curvature)
    log_s = -softplus(shrunk_margin)
    if curvature > 1.0:
        # u = curvature * s solves u = k sigmoid(-a - u) <= k exp(-a - u), so
        # u <= W(k e^-a) <= log(1 + k e^-a): a tighter upper start when the
        # curvature is huge, still on the right of the root.
        log_k = math.log(curvature)
        log_s = min(log_s, log_softplus(log_k - shrunk_margin) - log_k)
    for _ in range(200):
        s = math.exp(log_s)
        margin = shrunk_margin + curvature * s
        value = log_s + softplus(margin)
        step = value / (1.0 + curvature * s * sigmoid_neg(-margin))
        log_s -= step
        if step <= 1e-14 * max(1.0, abs(log_s)):
            break
    return math.exp(log_s)


# Above this curvature Newton's steps in log s lose the root to the cancellation in
# ``a + k s`` (review 114: errors up to 0.38 at k = 1e17, 2^-47.8 at 1e14..1e16): the
# weight is found by bisection on u = k s instead (doc/privacy.md 55.17).
_BISECT_CURVATURE = 1e12


def _implicit_log_loss_weight_bisect(shrunk_margin, curvature):
    """The root of ``g(u) = u - k sigmoid(-(a + u))`` on ``[0, k]``, ``s = u / k``.

    ``g`` is increasing (``g' = 1 + k sigmoid (1 - sigmoid) > 0``), ``g(0) < 0 <= g(k)``;
    bisection keeps the root bracketed, stopping when the bracket is down to the spacing
    of the doubles at its top (or 1e-300), so ``s`` is within ``u``'s rounding of the root
    over ``k`` whatever the cancellation in ``a + u``.
    """
    lo, hi = 0.0, curvature
    for _ in range(2200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if mid - curvature * sigmoid_neg(shrunk_margin + mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return min(max(0.5 * (lo + hi) / curvature, 0.0), 1.0)


def implicit_hinge_weight(shrunk_margin, curvature):
    """Closed-form implicit step of the hinge loss: the weight s in [0, 1]."""
    if shrunk_margin >= 1.0:
        return 0.0
    if shrunk_margin + curvature <= 1.0:
        return 1.0
    return (1.0 - shrunk_margin) / curvature


def implicit_weight(shrunk_margin, curvature, loss):
    """The implicit step's weight of a margin loss (``loss`` a code)."""
    if loss == LOG_LOSS_CODE:
        return implicit_log_loss_weight(shrunk_margin, curvature)
    return implicit_hinge_weight(shrunk_margin, curvature)


# ---------------------------------------------------------------------------
# Vectorised numpy versions (same formulas as the scalar primitives).
# ---------------------------------------------------------------------------

def values(loss, r, huber_threshold=1.0):
    """``f(r)`` of a residual loss (a name) on an array of residuals."""
    r = np.asarray(r, dtype=np.float64)
    if loss == SQUARED:
        return 0.5 * r * r
    a = np.abs(r)
    if loss == ABSOLUTE:
        return a
    if loss != HUBER:
        raise ValueError(f"loss must be one of {list(RESIDUAL_LOSSES)}; got {loss!r}.")
    h = huber_threshold
    with np.errstate(over="ignore"):  # the branch not taken may overflow
        return np.where(a <= h, 0.5 * r * r, h * (a - 0.5 * h))


def derivatives(loss, r, huber_threshold=1.0):
    """``f'(r)`` of a residual loss (a name) on an array of residuals."""
    r = np.asarray(r, dtype=np.float64)
    if loss == SQUARED:
        return r
    if loss == ABSOLUTE:
        return np.sign(r)
    if loss != HUBER:
        raise ValueError(f"loss must be one of {list(RESIDUAL_LOSSES)}; got {loss!r}.")
    return np.clip(r, -huber_threshold, huber_threshold)


def second_derivatives(loss, r, huber_threshold=1.0):
    """``f''(r)`` of a smooth residual loss: 1, or ``[|r| < h]`` for Huber."""
    r = np.asarray(r, dtype=np.float64)
    if loss == SQUARED:
        return np.ones_like(r)
    if loss != HUBER:
        raise ValueError(f"{loss!r} has no bounded second derivative.")
    return (np.abs(r) < huber_threshold).astype(np.float64)


def margin_values(loss, m):
    """``phi(m)`` of a margin loss (a name) on an array of margins."""
    m = np.asarray(m, dtype=np.float64)
    if loss == LOG_LOSS:
        return np.logaddexp(0.0, -m)
    if loss != HINGE:
        raise ValueError(f"loss must be one of {list(MARGIN_LOSSES)}; got {loss!r}.")
    return np.maximum(0.0, 1.0 - m)


def margin_derivatives(loss, m):
    """``phi'(m)``: ``-sigmoid(-m)`` (log loss) or the subgradient ``-[m < 1]`` (hinge)."""
    m = np.asarray(m, dtype=np.float64)
    if loss == LOG_LOSS:
        return -expit(-m)
    if loss != HINGE:
        raise ValueError(f"loss must be one of {list(MARGIN_LOSSES)}; got {loss!r}.")
    return -(m < 1.0).astype(np.float64)
