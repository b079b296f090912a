"""Input helpers shared by the estimators: CSR matrices and sample weights in [0, 1]."""

import numpy as np
from scipy.sparse import issparse


def canonical_csr(X):
    """``X`` itself if dense or canonical CSR; else a canonical copy (duplicates summed).

    Row norms read from the stored entries are the true norms only when no
    column is stored twice in a row; the caller's matrix is never modified.
    """
    if issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def check_unit_sample_weight(sample_weight, n_samples):
    """Sample weights as float64 of shape ``(n_samples,)`` in the public range [0, 1].

    ``None`` stays ``None`` (every record weighs 1). Called during validation,
    before any data-dependent work: the range is what the sensitivity analysis
    covers (``doc/privacy.md``, "Sparse input and sample weights").
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    dtype = w.dtype
    # numpy's conversion error quotes the weight it could not convert: it is
    # replaced, outside the except block, so that neither __cause__ nor
    # __context__ keeps it.
    try:
        w = np.asarray(w, dtype=np.float64)
        converted = True
    except (TypeError, ValueError):
        converted = False
    if not converted:
        raise ValueError(f"sample_weight must be numeric; got dtype {dtype}.")
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(
            f"sample_weight has shape {w.shape}; expected ({n_samples},), one weight per "
            "sample."
        )
    if not np.all((w >= 0.0) & (w <= 1.0)):  # also refuses nan
        raise ValueError(
            "sample_weight must lie in [0, 1], the public range the privacy analysis "
            "covers (a weight scales a record's contribution down, never up). Divide "
            "the weights by a public upper bound on them."
        )
    if not np.any(w > 0.0):
        raise ValueError(
            "sample_weight is zero for every sample: there is nothing to fit. Pass at "
            "least one non-zero weight."
        )
    return w
