"""Numba kernels for one pass of implicit (IGD) or projected gradient (GIGA) descent.

Imported lazily by :mod:`sklearn_dpol._core.igd` so that ``import sklearn_dpol``
does not load numba. Every kernel works on one binary problem with labels in
{-1, +1} and margin losses ``phi(m)`` (:mod:`.losses`), ``m = y <w, z>``, where ``z`` is the row
scaled by ``row_scale`` (L2 clipping) with the constant ``intercept_value``
appended. The iterate is stored as ``w = scale * v`` so that the shrinkage by
the regulariser costs O(1) per sample instead of O(d), as in scikit-learn's SGD.
"""

import math

import numpy as np
from numba import njit

from ._loss_kernels import HINGE_CODE as HINGE
from ._loss_kernels import LOG_LOSS_CODE as LOG_LOSS
from ._loss_kernels import implicit_weight
from ._loss_kernels import sigmoid_neg as _sigmoid_neg

# Below this the scaled representation loses precision; fold the scale back.
_MIN_SCALE = 1e-9


# Reassociation lets LLVM vectorise the reduction; the result differs from the
# sequential sum only by rounding, within Higham's gamma_width bound in any order, which
# the release's rounding allowance pays for (doc/privacy.md 55.10).
@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot(v, X, i, row_scale, intercept_value):
    d = X.shape[1]
    acc = 0.0
    # Scale each element first: X may hold finite values near 1e308 whose
    # product with v would overflow before the clipping factor applies.
    for j in range(d):
        acc += v[j] * (row_scale * X[i, j])
    if v.shape[0] > d:
        acc += v[d] * intercept_value
    return acc


@njit(cache=True, nogil=True)
def implicit_pass(
    w, X, y, row_scale, row_sq, order, t_start, alpha, loss, intercept_value, weights=None
):
    """One pass of implicit gradient descent, updating ``w`` in place.

    Step ``t`` (counted from ``t_start + 1``) solves
    ``argmin_x 1/2 ||x - w||^2 + eta_t (phi(y <x, z>) + alpha/2 ||x||^2)`` with
    ``eta_t = 1 / (alpha t)``. Its minimiser is ``c (w + eta_t s y z)`` with
    ``c = t / (t + 1)`` and a scalar weight ``s`` solved exactly. A record of
    sample weight ``weights[i]`` (in [0, 1]) has the loss ``weights[i] phi``:
    its curvature and its step are multiplied by the weight (exactly the
    unweighted step when the weight is 1).

    Returns the step counter after the pass.
    """
    scale = 1.0
    v = w.copy()
    t = t_start
    for k in range(order.shape[0]):
        i = order[k]
        t += 1
        eta = 1.0 / (alpha * t)
        shrink = t / (t + 1.0)
        r = row_scale[i]
        z_sq = row_sq[i] + _intercept_sq(v, X, intercept_value)
        margin = y[i] * scale * _dot(v, X, i, r, intercept_value)
        weight = 1.0 if weights is None else weights[i]
        curvature = shrink * eta * z_sq * weight
        s = implicit_weight(shrink * margin, curvature, loss)
        scale *= shrink
        if s != 0.0 and weight != 0.0:
            _axpy_scaled(v, X, i, shrink * eta * s * weight * y[i] / scale, r,
                         intercept_value)
        if scale < _MIN_SCALE:
            v *= scale
            scale = 1.0
    w[:] = v * scale
    return t


@njit(cache=True, nogil=True)
def gradient_pass(
    w, X, y, row_scale, row_sq, order, t_start, alpha, intercept_value, burn_in, radius,
    weights=None
):
    """One pass of projected gradient descent (GIGA) on the log loss, in place.

    Step ``t`` maps ``w`` to ``Proj_radius(w - eta_t grad f_t(w))`` with
    ``eta_t = 2 / (alpha t)``; steps ``t < burn_in`` leave ``w`` unchanged, as in
    the seed's Algorithm 3, which is what makes the iteration a contraction.

    Returns the step counter after the pass.
    """
    scale = 1.0
    v = w.copy()
    sq_norm, slack = _exact_sq_norm(v, 1.0)
    t = t_start
    for k in range(order.shape[0]):
        i = order[k]
        t += 1
        if t < burn_in:
            continue
        eta = 2.0 / (alpha * t)
        r = row_scale[i]
        z_sq = row_sq[i] + _intercept_sq(v, X, intercept_value)
        inner = _dot(v, X, i, r, intercept_value)
        slope = _sigmoid_neg(y[i] * scale * inner)  # -phi'(m)
        shrink = 1.0 - eta * alpha
        # w <- shrink * w + eta * slope * y * z, tracked through (scale, v).
        step = eta * slope * y[i] * (1.0 if weights is None else weights[i])
        new_scale = scale * shrink
        if new_scale == 0.0:
            v[:] = 0.0
            new_scale = 1.0
            inner = 0.0
        coef = step / new_scale
        sq_norm, slack = _tracked_sq_norm(sq_norm, slack, shrink, step, scale, inner, z_sq,
                                          v.shape[0])
        scale = new_scale
        _axpy_scaled(v, X, i, coef, r, intercept_value)
        scale, sq_norm, slack = _project(v, scale, sq_norm, slack, radius)
        if abs(scale) < _MIN_SCALE or abs(scale) > 1.0 / _MIN_SCALE:
            v *= scale
            scale = 1.0
            sq_norm, slack = _exact_sq_norm(v, 1.0)
    w[:] = v * scale
    return t


@njit(cache=True, nogil=True)
def _exact_sq_norm(v, scale):
    """``(|scale v|^2, a bound on its rounding error)``."""
    norm = abs(scale) * math.sqrt(float(np.dot(v, v)))
    sq = norm * norm
    return sq, (v.shape[0] + 8) * 1.2e-16 * sq


@njit(cache=True, nogil=True)
def _tracked_sq_norm(sq_norm, slack, shrink, step, scale, inner, z_sq, width):
    """GIGA's squared norm after ``w <- shrink w + step z`` by the recurrence, with a bound.

    ``slack`` bounds ``|sq_norm - |w|^2|`` for the computed iterate ``w``: the old slack
    contracts by ``shrink^2`` and each step adds at most ``(4 width + 64) u A^2`` with
    ``A`` a bound on the new norm (doc/privacy.md 55.10.4: the recurrence's roundings,
    the margin's, the axpy's, the curvature's).
    """
    old = math.sqrt(max(sq_norm, 0.0) + slack)
    bound = abs(shrink) * old + abs(step) * math.sqrt(z_sq) * 1.001
    new = (sq_norm * shrink * shrink
           + 2.0 * step * shrink * scale * inner
           + step * step * z_sq)
    slack = (slack * shrink * shrink * 1.000001
             + (4.0 * width + 64.0) * 1.2e-16 * bound * bound)
    return new, slack


@njit(cache=True, nogil=True)
def _project(v, scale, sq_norm, slack, radius):
    """GIGA's projection onto the ball: ``(scale, sq_norm, slack)`` after it.

    The tracked norm decides only when its error bound keeps it inside the ball; else
    the norm is recomputed from ``v`` (O(d)) and the projection uses that value.
    """
    if sq_norm + slack <= radius * radius:
        return scale, sq_norm, slack
    sq_norm, slack = _exact_sq_norm(v, scale)
    norm = math.sqrt(sq_norm)
    if norm > radius:
        scale *= radius / norm
        sq_norm, slack = _exact_sq_norm(v, scale)
    return scale, sq_norm, slack


@njit(cache=True, nogil=True)
def _intercept_sq(v, X, intercept_value):
    if v.shape[0] > X.shape[1]:
        return intercept_value * intercept_value
    return 0.0


@njit(cache=True, nogil=True, fastmath={"contract"})
def _axpy_scaled(v, X, i, coef, row_scale, intercept_value):
    """v += coef * z_i with z_i = (row_scale * x_i, intercept_value)."""
    d = X.shape[1]
    for j in range(d):
        v[j] += coef * (row_scale * X[i, j])
    if v.shape[0] > d:
        v[d] += coef * intercept_value


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def clip_scales(X, max_norm):
    """Per-row factors that clip rows to L2 norm ``max_norm``, overflow-free.

    Returns ``(scale, clipped_sq)`` with ``scale[i] * X[i]`` of norm
    ``min(||X[i]||, max_norm)`` and ``clipped_sq[i]`` its square. Rows whose
    squared norm overflows or underflows are rescaled by their largest entry.
    """
    n = X.shape[0]
    scale = np.empty(n)
    clipped_sq = np.empty(n)
    for i in range(n):
        acc = 0.0
        for j in range(X.shape[1]):
            acc += X[i, j] * X[i, j]
        if acc > 1e-280 and acc < 1e280:
            norm = math.sqrt(acc)
            scale[i] = 1.0 if norm <= max_norm else max_norm / norm
            clipped_sq[i] = min(acc, max_norm * max_norm)
            continue
        largest = 0.0
        for j in range(X.shape[1]):
            largest = max(largest, abs(X[i, j]))
        if largest == 0.0:
            scale[i] = 1.0
            clipped_sq[i] = 0.0
            continue
        unit = 0.0
        for j in range(X.shape[1]):
            unit += (X[i, j] / largest) ** 2
        root = math.sqrt(unit)  # ||X[i]|| = largest * root, root in [1, sqrt(d)]
        if largest <= max_norm / root:
            scale[i] = 1.0
            clipped_sq[i] = (largest * root) ** 2
        else:
            scale[i] = (max_norm / largest) / root
            clipped_sq[i] = max_norm * max_norm
    return scale, clipped_sq


# ---------------------------------------------------------------------------
# CSR kernels: the same passes over a sparse matrix given by its ``data``,
# ``indices`` and ``indptr`` arrays. Only the stored entries of a row are read;
# the arithmetic is the dense kernels' one with the zero terms left out.


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot_csr(v, data, indices, lo, hi, n_features, row_scale, intercept_value):
    acc = 0.0
    for k in range(lo, hi):
        acc += v[indices[k]] * (row_scale * data[k])
    if v.shape[0] > n_features:
        acc += v[n_features] * intercept_value
    return acc


@njit(cache=True, nogil=True, fastmath={"contract"})
def _axpy_csr(v, data, indices, lo, hi, n_features, coef, row_scale, intercept_value):
    for k in range(lo, hi):
        v[indices[k]] += coef * (row_scale * data[k])
    if v.shape[0] > n_features:
        v[n_features] += coef * intercept_value


@njit(cache=True, nogil=True)
def implicit_pass_csr(
    w, data, indices, indptr, n_features, y, row_scale, row_sq, order, t_start, alpha,
    loss, intercept_value, weights=None
):
    """:func:`implicit_pass` over the rows of a CSR matrix (same step, same weights)."""
    scale = 1.0
    v = w.copy()
    t = t_start
    intercept_sq = intercept_value * intercept_value if v.shape[0] > n_features else 0.0
    for k in range(order.shape[0]):
        i = order[k]
        lo, hi = indptr[i], indptr[i + 1]
        t += 1
        eta = 1.0 / (alpha * t)
        shrink = t / (t + 1.0)
        r = row_scale[i]
        z_sq = row_sq[i] + intercept_sq
        margin = y[i] * scale * _dot_csr(v, data, indices, lo, hi, n_features, r,
                                         intercept_value)
        weight = 1.0 if weights is None else weights[i]
        curvature = shrink * eta * z_sq * weight
        s = implicit_weight(shrink * margin, curvature, loss)
        scale *= shrink
        if s != 0.0 and weight != 0.0:
            _axpy_csr(v, data, indices, lo, hi, n_features,
                      shrink * eta * s * weight * y[i] / scale, r, intercept_value)
        if scale < _MIN_SCALE:
            v *= scale
            scale = 1.0
    w[:] = v * scale
    return t


@njit(cache=True, nogil=True)
def gradient_pass_csr(
    w, data, indices, indptr, n_features, y, row_scale, row_sq, order, t_start, alpha,
    intercept_value, burn_in, radius, weights=None
):
    """:func:`gradient_pass` (GIGA) over the rows of a CSR matrix."""
    scale = 1.0
    v = w.copy()
    sq_norm, slack = _exact_sq_norm(v, 1.0)
    t = t_start
    intercept_sq = intercept_value * intercept_value if v.shape[0] > n_features else 0.0
    for k in range(order.shape[0]):
        i = order[k]
        lo, hi = indptr[i], indptr[i + 1]
        t += 1
        if t < burn_in:
            continue
        eta = 2.0 / (alpha * t)
        r = row_scale[i]
        z_sq = row_sq[i] + intercept_sq
        inner = _dot_csr(v, data, indices, lo, hi, n_features, r, intercept_value)
        slope = _sigmoid_neg(y[i] * scale * inner)
        shrink = 1.0 - eta * alpha
        step = eta * slope * y[i] * (1.0 if weights is None else weights[i])
        new_scale = scale * shrink
        if new_scale == 0.0:
            v[:] = 0.0
            new_scale = 1.0
            inner = 0.0
        coef = step / new_scale
        sq_norm, slack = _tracked_sq_norm(sq_norm, slack, shrink, step, scale, inner, z_sq,
                                          v.shape[0])
        scale = new_scale
        _axpy_csr(v, data, indices, lo, hi, n_features, coef, r, intercept_value)
        scale, sq_norm, slack = _project(v, scale, sq_norm, slack, radius)
        if abs(scale) < _MIN_SCALE or abs(scale) > 1.0 / _MIN_SCALE:
            v *= scale
            scale = 1.0
            sq_norm, slack = _exact_sq_norm(v, 1.0)
    w[:] = v * scale
    return t


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def clip_scales_csr(data, indptr, max_norm):
    """:func:`clip_scales` for a CSR matrix: reads each row's stored entries only."""
    n = indptr.shape[0] - 1
    scale = np.empty(n)
    clipped_sq = np.empty(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        acc = 0.0
        for k in range(lo, hi):
            acc += data[k] * data[k]
        if acc > 1e-280 and acc < 1e280:
            norm = math.sqrt(acc)
            scale[i] = 1.0 if norm <= max_norm else max_norm / norm
            clipped_sq[i] = min(acc, max_norm * max_norm)
            continue
        largest = 0.0
        for k in range(lo, hi):
            largest = max(largest, abs(data[k]))
        if largest == 0.0:
            scale[i] = 1.0
            clipped_sq[i] = 0.0
            continue
        unit = 0.0
        for k in range(lo, hi):
            unit += (data[k] / largest) ** 2
        root = math.sqrt(unit)
        if largest <= max_norm / root:
            scale[i] = 1.0
            clipped_sq[i] = (largest * root) ** 2
        else:
            scale[i] = (max_norm / largest) / root
            clipped_sq[i] = max_norm * max_norm
    return scale, clipped_sq
