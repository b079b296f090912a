"""Numba kernels of the streams' per-release arithmetic: one pass, no temporaries.

Imported lazily by :mod:`sklearn_dpol._core.matrix_factorization` and
:mod:`sklearn_dpol._core.qftl` (``import sklearn_dpol`` does not load numba).

:func:`blt_buffer_step`: Each entry is ``theta_i * X[i, j] + v_j``,
one multiplication then one addition rounded separately (no fast-math, so no
fused multiply-add): bit for bit what numpy's ``theta[:, None] * X + v`` gives,
and the operations :func:`~sklearn_dpol.privacy._streams.rounding_growth`
bounds.
"""

import math

import numpy as np
from numba import njit

from ._kernel_cache import refresh as _refresh_kernel_cache

_refresh_kernel_cache()  # before any kernel is compiled or loaded: see _kernel_cache


@njit(cache=True, nogil=True)
def blt_buffer_step(theta, exact, inverse, x, w, exact_out, inverse_out):
    """``exact_out = theta * exact + x`` and ``inverse_out = theta * inverse + w`` (rows ``i``)."""
    n_buffers, dim = exact.shape
    for i in range(n_buffers):
        t = theta[i]
        for j in range(dim):
            exact_out[i, j] = t * exact[i, j] + x[j]
        for j in range(dim):
            inverse_out[i, j] = t * inverse[i, j] + w[j]


@njit(cache=True, nogil=True)
def unpack_symmetric(upper, diagonal_scale, off_scale, out):
    """Fill the symmetric ``out`` from the packed upper triangle (row by row, ``i <= j``).

    Entry ``(i, j)`` and ``(j, i)`` are ``upper[k] / scale``, ``scale`` the
    packing's (1 on the diagonal, ``sqrt(2)`` off it): one IEEE division each,
    as ``upper / scale`` in numpy.
    """
    d = out.shape[0]
    k = 0
    for i in range(d):
        out[i, i] = upper[k] / diagonal_scale
        k += 1
        for j in range(i + 1, d):
            value = upper[k] / off_scale
            out[i, j] = value
            out[j, i] = value
            k += 1


@njit(cache=True, nogil=True)
def lanczos_orthogonalize(basis, j, w, diagonal, off):
    """One Lanczos step after ``w = V basis[j]``: full reorthogonalization, in place.

    ``diagonal[j]`` is ``w``'s coefficient on ``basis[j]``; ``w`` loses its
    components on ``basis[:j + 1]``, a second time when the first pass
    cancelled most of what the three-term recurrence leaves,
    ``||w||^2 - alpha_j^2 - beta_(j-1)^2`` (the Daniel-Gragg-Kaufman-Stewart
    test, "twice is enough"), or nearly all of ``w``; ``off[j] = ||w||`` and,
    unless that is a breakdown (``<= 1e-300``), ``basis[j + 1] = w / off[j]``.
    The products are BLAS calls (numba's ``np.dot``), the Python loop's
    arithmetic without its per-call overhead. Returns True on a breakdown.
    """
    head = basis[:j + 1]
    raw = np.dot(w, w)
    coefficients = np.dot(head, w)
    diagonal[j] = coefficients[j]
    w -= np.dot(coefficients, head)
    square = np.dot(w, w)
    previous = coefficients[j - 1] * coefficients[j - 1] if j else 0.0
    rest = raw - coefficients[j] * coefficients[j] - previous
    if square < 0.5 * rest or square < 1e-6 * raw:
        w -= np.dot(np.dot(head, w), head)
        square = np.dot(w, w)
    norm = math.sqrt(square)
    off[j] = norm
    if not norm > 1e-300:
        return True
    for i in range(w.shape[0]):
        basis[j + 1, i] = w[i] / norm
    return False


@njit(cache=True, nogil=True)
def pack_upper(square, last, corner, with_last, off_scale, out):
    """The packed upper triangle of a gram, row by row (``i <= j``), into ``out``.

    ``square``'s upper triangle is the ``p x p`` gram; with ``with_last`` the
    gram has one more row and column, ``last`` (its first ``p`` entries) and
    ``corner`` (its diagonal entry). Off the diagonal each entry is multiplied
    by ``off_scale``, on it it is copied (``x * 1.0 == x``): the values of
    ``take`` of the upper triangle times the packing's scales.
    """
    p = square.shape[0]
    k = 0
    for i in range(p):
        out[k] = square[i, i]
        k += 1
        for j in range(i + 1, p):
            out[k] = square[i, j] * off_scale
            k += 1
        if with_last:
            out[k] = last[i] * off_scale
            k += 1
    if with_last:
        out[k] = corner
