"""Numba kernel of the BLT stream's buffer update: one pass, no temporaries.

Imported lazily by :mod:`sklearn_dpol._core.matrix_factorization` (``import
sklearn_dpol`` does not load numba). Each entry is ``theta_i * X[i, j] + v_j``,
one multiplication then one addition rounded separately (no fast-math, so no
fused multiply-add): bit for bit what numpy's ``theta[:, None] * X + v`` gives,
and the operations :func:`~sklearn_dpol.privacy._streams.rounding_growth`
bounds.
"""

from numba import njit


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
