"""Row clipping: the data bound every sensitivity analysis relies on."""

import numpy as np
from scipy.sparse import issparse


def clip_row_scales(X, max_norm):
    """Scale factors that clip each row of ``X`` to L2 norm ``max_norm``.

    Returns ``(scale, clipped_sq_norm)``: row ``i`` of the clipped data is
    ``scale[i] * X[i]`` and has squared norm ``clipped_sq_norm[i]``. Kernels
    apply the scale on the fly, so ``X`` is never copied or modified. Finite
    rows of any magnitude (up to 1.8e308) are clipped correctly.
    """
    from ._igd_kernels import clip_scales, clip_scales_csr

    sparse = issparse(X)
    # Scaling a row to the bound and recomputing its norm can round one ulp
    # above it; aim a few ulps below, so the clipped rows provably respect it.
    shrink = 1.0 - 4.0 * (X.shape[1] + 2) * np.finfo(np.float64).eps
    if sparse:  # a CSR matrix: only the stored entries of each row are read
        scale, clipped_sq = clip_scales_csr(X.data, X.indptr, float(max_norm) * shrink)
    else:
        scale, clipped_sq = clip_scales(X, float(max_norm) * shrink)
    # A huge row (entries near 1.8e308) and a small bound give a subnormal
    # factor, whose rounding error (up to a subnormal ulp, 5e-324) is not
    # relative: times an entry of 1e308 it can push the clipped norm past the
    # bound (by 6e-11 relative at max_norm=1e-5, 50% at 1e-15). Round such
    # factors down by two ulps (the error of the two divisions that form them
    # is below one), so the clipped row stays inside the ball, and recompute
    # their squared norms.
    tiny = scale < np.finfo(np.float64).tiny
    if np.any(tiny):
        rows = np.flatnonzero(tiny)
        scale[rows] = np.maximum(scale[rows] - 2 * 5e-324, 0.0)
        if sparse:
            Z = X[rows].multiply(scale[rows, np.newaxis]).tocsr()
            clipped_sq[rows] = np.asarray(Z.multiply(Z).sum(axis=1)).ravel()
        else:
            Z = scale[rows, np.newaxis] * np.asarray(X[rows], dtype=np.float64)
            clipped_sq[rows] = np.einsum("ij,ij->i", Z, Z)
    return scale, clipped_sq
