"""Numba kernels of the streams' per-release arithmetic: one pass, no temporaries.

Imported lazily by :mod:`sklearn_dpol._core.matrix_factorization` and
:mod:`sklearn_dpol._core.qftl` (``import sklearn_dpol`` does not load numba).

:func:`blt_buffer_step`: Each entry is ``theta_i * X[i, j] + v_j``,
one multiplication then one addition rounded separately (no fast-math, so no
fused multiply-add): bit for bit what numpy's ``theta[:, None] * X + v`` gives,
and the operations :func:`~sklearn_dpol.privacy._streams.rounding_growth`
bounds.
"""

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
