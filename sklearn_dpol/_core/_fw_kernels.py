"""Numba kernels of private Frank-Wolfe: products with the clipped data, clipping on the fly.

Imported lazily by :mod:`sklearn_dpol._core.frank_wolfe` (``import sklearn_dpol``
does not load numba). ``X`` is read once per call, row by row, and never copied:
each entry is converted to float64 and clipped to ``[-bound, bound]`` as it is
read, exactly as :meth:`ClippedLeastSquares._clip_rows` clips a chunk (so a
float32 entry is compared with the float64 bound, never with ``float32(bound)``).
One pass over ``X`` costs what one matrix-vector product by BLAS costs (both are
limited by reading ``X`` from memory), and no clipped copy is ever made.
"""

import numpy as np
from numba import njit

from ._kernel_cache import refresh as _refresh_kernel_cache

_refresh_kernel_cache()  # before any kernel is compiled or loaded: see _kernel_cache


@njit(cache=True, nogil=True, inline="always")
def _clip(value, bound):
    return min(max(value, -bound), bound)


@njit(cache=True, nogil=True)
def clipped_transpose_dot(X, bound, weights, column, out, sums):
    """``out[m] = sum_i w_im clip(x_i)`` and ``sums[m] = sum_i w_im``, one pass over ``X``.

    ``w_im = weights[i, m]``, times ``clip(X[i, column])`` when ``column >= 0``
    (so that column ``j`` of ``Z^T Z`` needs no strided read of ``X[:, j]``).
    Every row costs the same whatever its values (no zero is skipped).
    ``out`` has shape ``(k, n_features)``, ``sums`` shape ``(k,)``; both are
    overwritten.
    """
    n_samples, n_features = X.shape
    n_vectors = weights.shape[1]
    out[:, :] = 0.0
    sums[:] = 0.0
    for i in range(n_samples):
        factor = 1.0
        if column >= 0:
            factor = _clip(np.float64(X[i, column]), bound)
        for m in range(n_vectors):
            w = weights[i, m] * factor
            sums[m] += w
            row = out[m]
            for f in range(n_features):
                row[f] += w * _clip(np.float64(X[i, f]), bound)


@njit(cache=True, nogil=True)
def clipped_dot(X, bound, theta, out):
    """``out[i] = <clip(x_i), theta>``, one pass over ``X``."""
    n_samples, n_features = X.shape
    for i in range(n_samples):
        total = 0.0
        for f in range(n_features):
            total += _clip(np.float64(X[i, f]), bound) * theta[f]
        out[i] = total
