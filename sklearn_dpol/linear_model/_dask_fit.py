"""``fit`` on a dask array: the clipped sufficient statistics are reduced on the workers.

``PrivateQFTLRegressor.fit`` needs only the packed sums ``(X^T X, X^T y)`` of
the clipped rows (and the row count). On a dask array each block is clipped
and summed where it lives, by the estimator's own ``_statistics`` (the code of
the in-memory fit, so the clipping is the same), the per-block sums are added
up by a tree reduction on the workers, and only the packed vector (length
``d(d+1)/2 + d`` for ``d`` augmented features) reaches the driver, which adds
the noise once through the ordinary release. The sum of the blocks' sums is the
sum over all rows, so the sensitivity, the noise and the guarantee are those of
the in-memory fit; the model differs from it only by the rounding of a sum
taken in another order.

Dask is imported only when the input is already a dask array.
"""

import sys
from types import SimpleNamespace

import numpy as np

from .._core import qftl

# What ``_statistics`` reads from the estimator: public hyperparameters only,
# so that neither the generator nor the accountant travels to the workers.
_STATISTICS_PARAMS = ("data_norm", "y_bound", "intercept_scaling", "fit_intercept")


class _PublicParams(SimpleNamespace):
    """The public hyperparameters ``_statistics`` reads, shipped to the workers."""

    def _data_norm(self):
        return float(self.data_norm)

    def _y_bound(self):
        return float(self.y_bound)


def is_dask_array(obj):
    """True for a ``dask.array.Array`` (without importing dask)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(obj, module.Array)


class ReducedStatistics:
    """The packed sum of every row, as the in-memory ``PackedStatistics`` exposes it."""

    def __init__(self, total, n_rows, dim_features):
        self.total, self.n_rows, self.dim_features = total, n_rows, dim_features
        self.dim = total.shape[0]

    def sum(self, lo, hi):
        if (lo, hi) != (0, self.n_rows):
            raise ValueError("Reduced statistics hold the sum of all rows only.")
        return self.total


def _block_sums(X_block, y_block, *, statistics, params, dim):
    """One block's packed clipped sum, its row count and its count of non-finite values."""
    X_block = np.asarray(X_block, dtype=np.float64)
    y_block = np.asarray(y_block, dtype=np.float64).reshape(-1)
    out = np.zeros((1, dim + 2))
    n_rows = X_block.shape[0]
    out[0, dim] = n_rows
    bad = np.count_nonzero(~np.isfinite(X_block)) + np.count_nonzero(~np.isfinite(y_block))
    if bad:
        out[0, dim + 1] = bad
    elif n_rows:
        out[0, :dim] = statistics(params, X_block, y_block).sum(0, n_rows)
    return out


def check_dask_input(estimator, X, y):
    """Shapes and dtypes (public), checked before anything is computed: ``(X, y)`` aligned.

    ``X`` becomes one block wide (row blocks only) and ``y`` a dask array with
    the same row blocks.
    """
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array for X; got {X.ndim} dimension(s).")
    if any(np.isnan(n) for n in X.shape):
        raise ValueError(
            "The dask array X has unknown chunk sizes; call X.compute_chunk_sizes() "
            "first (its row count is public, its values are not read).")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold real numbers; got dtype {X.dtype}.")
    n_rows, n_features = X.shape
    if n_rows < 1 or n_features < 1:
        raise ValueError(f"Found array with {n_rows} sample(s) and {n_features} feature(s), "
                         "while at least 1 of each is required.")
    if not is_dask_array(y):
        y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    if y.dtype.kind not in "biuf":
        raise ValueError(f"y must hold real numbers; got dtype {y.dtype}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows and y has {y.shape[0]} values.")
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],)) if is_dask_array(y) else da.from_array(
        y, chunks=(X.chunks[0],))
    return X, y


def dask_statistics(estimator, X, y):
    """``fit``'s statistics of dask arrays, reduced on the workers (see the module)."""
    X, y = check_dask_input(estimator, X, y)
    n_rows, n_features = X.shape
    # validate_data(reset=True) would set these: the shape and nothing else.
    estimator.n_features_in_ = int(n_features)
    estimator.__dict__.pop("feature_names_in_", None)
    intercept = 1 if estimator.fit_intercept else 0
    dim = qftl.packed_dim(n_features + intercept)
    params = _PublicParams(**{name: getattr(estimator, name) for name in _STATISTICS_PARAMS})
    parts = X.map_blocks(
        _block_sums, y[:, np.newaxis], statistics=type(estimator)._statistics,
        params=params, dim=dim, dtype=np.float64,
        chunks=((1,) * X.numblocks[0], (dim + 2,)),
    )
    # A non-finite value is found only while the blocks are summed: the reading
    # has begun, so this failure is charged (in memory it is found before).
    estimator._mark_data_read()
    total = parts.sum(axis=0).compute()
    if total[dim + 1] > 0:
        raise ValueError("Input contains NaN or infinity (found while reducing the blocks).")
    if int(total[dim]) != n_rows:
        raise RuntimeError(
            f"The reduction counted {int(total[dim])} rows of {n_rows}: a block was lost.")
    return ReducedStatistics(total[:dim].copy(), n_rows, n_features + intercept)
