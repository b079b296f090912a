"""Input helpers shared by the estimators: CSR matrices and sample weights in [0, 1]."""

import numpy as np
from scipy.sparse import csr_matrix, issparse


def canonical_csr(X):
    """``X`` itself if dense or canonical CSR; else a canonical copy (duplicates summed).

    Row norms read from the stored entries are the true norms only when no
    column is stored twice in a row; the caller's matrix is never modified.
    Canonicity is decided afresh (scipy caches the flag on the matrix, which
    an in-place edit of ``indices`` leaves stale). Summed duplicates can
    overflow (``1e308 + 1e308``) after scikit-learn checked the stored entries:
    such a matrix is refused like any non-finite input, during validation.
    """
    if not issparse(X):
        return X
    fresh = type(X)((X.data, X.indices, X.indptr), shape=X.shape, copy=False)
    if fresh.has_canonical_format:
        return X
    X = X.copy()
    X.sum_duplicates()
    with np.errstate(over="ignore", invalid="ignore"):
        finite = bool(np.isfinite(X.data).all())
    if not finite:
        raise ValueError(
            "Input X contains infinity or a value too large for its dtype once its "
            "duplicate entries are summed: pass finite values (summing stored duplicates "
            "overflowed).")
    return X


def float64_csr(X):
    """A SciPy sparse ``X`` as canonical float64 CSR: CSC and COO converted, float32
    values converted exactly, duplicate entries summed (:func:`canonical_csr`, which
    refuses a sum that overflows); never densified, the caller's matrix never modified."""
    X = X.tocsr()
    if X.dtype != np.float64:
        X = csr_matrix((np.asarray(X.data, dtype=np.float64), X.indices, X.indptr),
                       shape=X.shape)
    return canonical_csr(X)


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
    # Complex weights would lose their imaginary part with only a ComplexWarning.
    # Strings, bytes, dates and durations convert to floats too, but are not weights.
    converted = dtype.kind in "biuf" or (
        dtype.kind == "O" and not any(isinstance(v, (str, bytes)) for v in w.ravel()))
    if converted:
        try:
            w = np.asarray(w, dtype=np.float64)
        except (TypeError, ValueError, ArithmeticError):
            converted = False
    if not converted:
        raise ValueError(f"sample_weight must be numeric (real); got dtype {dtype}.")
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
    # Weights that are all zero are accepted (the release is noise only). Refusing them
    # released whether every weight is 0, a property of the data set, not of one record:
    # for neighbours whose other weights are 0 (a stream's batch of one user, a private
    # search's training part) the refusal told the one record's weight (review 123;
    # doc/privacy.md 57.9). The range above is a per-record domain, which neighbours share.
    return w


#: Entries of a sparse product's temporaries in :func:`sparse_gram` (about 50 MB across
#: a block's product and its dense copy): a public constant, never a function of the
#: stored entries.
SPARSE_PRODUCT_ENTRIES = 1 << 21


def sparse_gram(left, right=None, out=None):
    """``left.T @ right`` of CSR matrices (``right`` defaults to ``left``), as a dense array.

    One sparse product holds an entry per pair of columns stored together in some row,
    so one dense record among sparse ones raises it to ``d^2`` entries: the memory, and a
    ``MemoryError`` under a cap, followed one record (reviews 122 and 123). The product
    is taken in blocks of rows of ``left.T`` holding at most
    :data:`SPARSE_PRODUCT_ENTRIES` entries each, whatever the pattern. Each entry is the
    same sum in the same order as in the whole product (row ``j`` of ``left.T`` times
    ``right``), so the result has the same bits as ``(left.T @ right).toarray()``.
    ``out`` given: the blocks are *added* into it (``out += ...``); else written into a
    new array (assigned, so a stored ``-0.0`` stays ``-0.0`` as in ``toarray``).
    """
    right = left if right is None else right
    d_left, d_right = left.shape[1], right.shape[1]
    transposed = left.T.tocsr()
    rows = max(1, SPARSE_PRODUCT_ENTRIES // max(d_right, 1))   # public: the shape only
    fresh = out is None
    if fresh:
        out = np.empty((d_left, d_right))
    for j0 in range(0, d_left, rows):
        block = (transposed[j0:j0 + rows] @ right).toarray()
        if fresh:
            out[j0:j0 + rows] = block
        else:
            out[j0:j0 + rows] += block
    return out
