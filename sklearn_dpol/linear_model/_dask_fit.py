"""``fit`` on a dask array: the clipped sufficient statistics are reduced on the workers.

Three fits need only sums over the clipped rows:

* ``PrivateQFTLRegressor``: the packed ``(X^T X, X^T y)`` of the clipped rows
  (length ``d(d+1)/2 + d`` for ``d`` augmented features; sample weights included);
* ``PrivateFrankWolfeLasso``: ``Z^T Z`` and ``Z^T y`` of the entrywise clipped
  rows ``Z`` (intercept column and sample weights included), the Gram matrix
  and linear term of its objective (``_core/frank_wolfe.py``);
* ``PrivateMirrorDescentRegressor`` with the squared loss: the Gram statistics
  of its Gram path, ``sum z z^T``, ``sum z``, ``sum z y``, ``sum y`` and the
  sum of the weights (``_core/mirror_descent.py``, ``clip_data``).

On a dask array each block is clipped and summed where it lives by the code
of the in-memory fit (``_statistics``, ``ClippedLeastSquares``, ``clip_data``:
the clipping is the same, never re-derived here), the per-block sums are added
up by a tree reduction on the workers, and only one vector reaches the driver.
There the private algorithm runs once on the reduced statistics, with its noise
(one Gaussian release for QFTL; the noisy selections or gradients of every
step for Frank-Wolfe and mirror descent), drawn as in memory. The sum of the
blocks' sums is the sum over all rows, so the sensitivity, the noise and the
guarantee are those of the in-memory fit; the model differs from it only by
the rounding of sums taken in another order.

Each block also reports its row count and its count of non-finite values, and
whether its ``X``, ``y`` and weights have the shape of their declared chunk: a
NaN or an infinity, or a block that returned another number of rows than
declared, is found only while the blocks are summed, so the ``ValueError`` it
raises comes after the reading has begun and the failure is charged (in memory
it is found by validation, before). These messages quote no count: a block's
true row count may depend on the data (a lazily filtered source declared at its
unfiltered size). Everything else (shapes,
dtypes, block types, the configuration) is checked before anything is computed.

Dask is imported only when the input is already a dask array.
"""

import sys
from types import SimpleNamespace

import numpy as np

from .._base import bound_in_use
from .._core import frank_wolfe as fw
from .._core import mirror_descent as md
from .._core import qftl
from .._core._weights import check_unit_sample_weight
from .._validate import _float_targets, labels_as_given

# What ``_statistics`` reads from the estimator: public hyperparameters only,
# so that neither the generator nor the accountant travels to the workers.
_STATISTICS_PARAMS = ("data_norm", "y_bound", "intercept_scaling", "fit_intercept")


class _PublicParams(SimpleNamespace):
    """The public hyperparameters ``_statistics`` reads, shipped to the workers."""

    def _data_norm(self):
        return float(bound_in_use(self.data_norm))

    def _y_bound(self):
        return float(bound_in_use(self.y_bound))


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


# -- what each block computes (on a worker) ---------------------------------------------

def _block_part(X_block, y_block, w_block=None, *, block_sums, params, width,
                block_info=None):
    """One block's sums (``width`` values), its row count, its count of non-finite
    values and whether its arrays hold the shape their declared chunks say.

    A block whose ``X``, ``y`` or weights do not have the declared chunk's shape
    (a lazily loaded block that returned another number of rows, for example
    after filtering on the values) is flagged and not summed: summing it would
    raise numpy's broadcast error, whose message quotes the sizes.
    """
    out = np.zeros((1, width + 3))
    if not _declared_shapes(block_info, X_block, y_block, w_block):
        out[0, width + 2] = 1
        return out
    X_block = np.asarray(X_block, dtype=np.float64)
    y_block = np.asarray(y_block, dtype=np.float64).reshape(-1)
    n_rows = X_block.shape[0]
    out[0, width] = n_rows
    bad = np.count_nonzero(~np.isfinite(X_block)) + np.count_nonzero(~np.isfinite(y_block))
    if bad:
        out[0, width + 1] = bad
    elif n_rows:
        weights = None if w_block is None else np.asarray(w_block, np.float64).reshape(-1)
        out[0, :width] = block_sums(X_block, y_block, weights, **params)
    return out


def _declared_shapes(block_info, *blocks):
    """True when every block (``None`` for absent ones) has its declared chunk's shape."""
    if block_info is None:
        return True
    for index, block in enumerate(blocks):
        if block is None:
            continue
        info = block_info.get(index)
        if info is None:
            continue
        declared = tuple(stop - start for start, stop in info["array-location"])
        if np.shape(block) != declared:
            return False
    return True


def _qftl_sums(X, y, weights, *, statistics, estimator_params):
    """QFTL: the packed ``(V, u)`` sum of the block (sample weights included), by the
    estimator's ``_statistics``."""
    return statistics(estimator_params, X, y, weights).sum(0, X.shape[0])


def _frank_wolfe_sums(X, y, weights, *, feature_bound, y_bound, intercept):
    """Frank-Wolfe: ``Z^T Z`` and ``Z^T y`` of the block, by ``ClippedLeastSquares``."""
    problem = fw.ClippedLeastSquares(X, y, feature_bound=feature_bound, y_bound=y_bound,
                                     intercept=intercept, precompute=True,
                                     sample_weight=weights)
    n = X.shape[0]
    return np.concatenate([(problem.gram * n).ravel(), problem.linear * n])


def _mirror_descent_sums(X, y, weights, *, data_norm, y_bound):
    """Mirror descent: the block's Gram statistics, by ``clip_data`` (means times ``n``),
    in the unit scale of the in-memory fit (rows divided by ``data_norm``)."""
    data = md.clip_data(X, y, data_norm=data_norm, y_bound=y_bound, use_gram=True,
                        sample_weight=weights, unit_scale=True)
    n = X.shape[0]
    return np.concatenate([(data.gram * n).ravel(), data.z_mean * n, data.zy_mean * n,
                           [data.y_mean * n, data.w_mean * n]])


# -- on the driver -----------------------------------------------------------------------

class DaskInput:
    """``(X, y, weights)`` checked (public: shapes, dtypes, block types), aligned in row blocks."""

    def __init__(self, X, y, weights):
        self.X, self.y, self.weights = X, y, weights
        self.n_rows, self.n_features = (int(n) for n in X.shape)


def _check_blocks_are_numpy(name, array):
    meta = getattr(array, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        raise ValueError(
            f"The blocks of the dask array {name} are {type(meta).__module__}."
            f"{type(meta).__name__}, not NumPy arrays: fit on a dask array reduces dense "
            "blocks only. Make the blocks dense (e.g. X.map_blocks(lambda b: b.toarray())) "
            "if they fit in the workers' memory, or fit in memory on a scipy CSR matrix "
            "(sparse kernels)."
        )


def check_dask_input(estimator, X, y, sample_weight=None):
    """Shapes, dtypes and block types (public), checked before anything is computed.

    Returns a :class:`DaskInput`: ``X`` one block wide (row blocks only), ``y``
    and the weights dask arrays with the same row blocks. ``sample_weight``
    must be in memory (a NumPy array or ``None``): it is validated here like in
    memory (:func:`check_unit_sample_weight`), before any data is read. Sets
    ``n_features_in_`` as ``validate_data(reset=True)`` would.
    """
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array for X; got {X.ndim} dimension(s).")
    if any(np.isnan(n) for n in X.shape):
        raise ValueError(
            "The dask array X has unknown chunk sizes. Its row count must not depend on "
            "private values (filtering rows with a boolean mask of the data makes it "
            "data-dependent): declare the chunk sizes from public information, or call "
            "X.compute_chunk_sizes() only if the row count is public.")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold real numbers; got dtype {X.dtype}.")
    _check_blocks_are_numpy("X", X)
    n_rows, n_features = X.shape
    if n_rows < 1 or n_features < 1:
        raise ValueError(f"Found array with {n_rows} sample(s) and {n_features} feature(s), "
                         "while at least 1 of each is required.")
    if not is_dask_array(y):
        # As the in-memory fit converts y: element by element (a string target of one
        # record neither re-types the others nor refuses the fit on one neighbour only).
        y = np.asarray(labels_as_given(y))
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.reshape(-1)
        if y.dtype.kind not in "biuf":
            targets = _float_targets(y) if y.ndim == 1 else None
            if targets is None:
                raise ValueError("y must hold real numbers: could not convert a value of y "
                                 f"(dtype {y.dtype}) to a number. Nothing was computed or "
                                 "charged.")
            y = targets
    else:
        _check_blocks_are_numpy("y", y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    if y.dtype.kind not in "biuf":
        raise ValueError(f"y must hold real numbers; got dtype {y.dtype}.")
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows and y has {y.shape[0]} values.")
    if is_dask_array(sample_weight):
        raise ValueError(
            "sample_weight as a dask array is not supported by fit on a dask array: pass "
            "the weights as a NumPy array (n floats on the driver, validated before any "
            "data is read), or weigh the rows yourself before fitting.")
    weights = check_unit_sample_weight(sample_weight, n_rows)
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],)) if is_dask_array(y) else da.from_array(
        y, chunks=(X.chunks[0],))
    if weights is not None:
        weights = da.from_array(weights, chunks=(X.chunks[0],))
    # validate_data(reset=True) would set these: the shape and nothing else.
    estimator.n_features_in_ = int(n_features)
    estimator.__dict__.pop("feature_names_in_", None)
    return DaskInput(X, y, weights)


def _reduce(estimator, data, block_sums, width, params):
    """The sum over every block of ``block_sums`` (``width`` values), reduced on the workers."""
    import dask.array as da

    X = data.X
    arrays = [X, data.y[:, np.newaxis]]
    if data.weights is not None:
        arrays.append(data.weights[:, np.newaxis])
    parts = da.map_blocks(
        _block_part, *arrays, block_sums=block_sums, params=params, width=width,
        dtype=np.float64, chunks=((1,) * X.numblocks[0], (width + 3,)),
    )
    # A non-finite value is found only while the blocks are summed: the reading
    # has begun, so this failure is charged (in memory it is found before).
    estimator._mark_data_read()
    total = parts.sum(axis=0).compute()
    # The messages quote no count: a block's row count may depend on the data (a
    # lazily filtered source declared at its unfiltered size).
    if total[width + 2] > 0:
        raise ValueError(
            "A block of the dask arrays X, y or sample_weight does not hold the number of "
            "rows (or columns) its declared chunk sizes say. The declared sizes must be the "
            "true ones, and they must not depend on private values (filtering rows on the "
            "data makes them data-dependent). This failure came after the reading began, "
            "so it is charged.")
    if total[width + 1] > 0:
        raise ValueError("Input contains NaN or infinity (found while reducing the blocks).")
    if total[width] != data.n_rows:
        raise RuntimeError("The reduction did not count the declared number of rows: a block "
                           "was lost.")
    return total[:width].copy()


def dask_statistics(estimator, X, y, sample_weight=None):
    """``PrivateQFTLRegressor.fit``'s statistics of dask arrays, reduced on the workers.

    ``sample_weight`` (a NumPy array of weights in ``[0, 1]``, or ``None``) is
    validated by :func:`check_dask_input` before anything is computed, cut into
    ``X``'s row blocks and folded into each block's sums as in memory (each
    clipped row's outer product and target term times its weight).

    The workers' copy of the public parameters carries the resolved constant
    feature of ``intercept_scaling="auto"`` (``_resolve_intercept``: from the row
    count, a shape, before anything is read), so the workers' rows are the rows
    the driver's sensitivity bounds (``doc/privacy.md`` 56.4).
    """
    from ._qftl import _unit_intercept

    data = check_dask_input(estimator, X, y, sample_weight)
    estimator._resolve_intercept(data.n_rows, True)
    intercept = 1 if estimator.fit_intercept else 0
    dim = qftl.packed_dim(data.n_features + intercept)
    params = _PublicParams(**{name: getattr(estimator, name) for name in _STATISTICS_PARAMS},
                           _intercept_unit=_unit_intercept(estimator))
    total = _reduce(estimator, data, _qftl_sums, dim,
                    {"statistics": type(estimator)._statistics, "estimator_params": params})
    return ReducedStatistics(total, data.n_rows, data.n_features + intercept)


# -- Frank-Wolfe and mirror descent ---------------------------------------------------------

def check_frank_wolfe_dask_fit(estimator, X, y, sample_weight):
    """Refuse, before any data is read, what the Gram path cannot do; check the input."""
    n_dims = int(X.shape[1]) + int(estimator.fit_intercept) if X.ndim == 2 else 0
    if n_dims > fw.GRAM_MAX_DIM:
        raise ValueError(
            f"fit on a dask array reduces the {n_dims} x {n_dims} Gram matrix on the "
            f"workers, which is offered up to {fw.GRAM_MAX_DIM} columns (intercept "
            "included): select fewer features, or fit in memory (on a scipy CSR matrix "
            "for sparse high-dimensional data).")
    return check_dask_input(estimator, X, y, sample_weight)


def frank_wolfe_problem(estimator, data):
    """The Frank-Wolfe objective of a checked :class:`DaskInput`, reduced on the workers."""
    n_dims = data.n_features + int(estimator.fit_intercept)
    params = {"feature_bound": estimator._feature_bound(),
              "y_bound": estimator._y_bound(), "intercept": bool(estimator.fit_intercept)}
    total = _reduce(estimator, data, _frank_wolfe_sums, n_dims * n_dims + n_dims, params)
    gram = total[:n_dims * n_dims].reshape(n_dims, n_dims)
    return fw.ClippedLeastSquares.from_sums(gram, total[n_dims * n_dims:], data.n_rows)


def check_mirror_descent_dask_fit(estimator, X, y, sample_weight):
    """Refuse, before any data is read, what the Gram path cannot do; check the input."""
    if estimator.solver not in ("auto", "mirror_descent"):   # "auto": mirror descent here
        raise ValueError(
            f"fit on a dask array needs solver='mirror_descent' or 'auto' (got "
            f"{estimator.solver!r}: objective perturbation solves on the rows). Use "
            "solver='mirror_descent' with loss='squared', or compute X first.")
    if estimator.loss != md.SQUARED:
        raise ValueError(
            f"fit on a dask array needs loss='squared' (got {estimator.loss!r}): only the "
            "squared loss's gradient is a function of the Gram statistics reduced on the "
            "workers; the absolute and Huber losses read every row at every step. Use "
            "loss='squared', or compute X first.")
    n_features = int(X.shape[1]) if X.ndim == 2 else 0
    if n_features > md.GRAM_MAX_DIM:
        raise ValueError(
            f"fit on a dask array reduces the {n_features} x {n_features} Gram matrix on "
            f"the workers, which is offered up to {md.GRAM_MAX_DIM} features: select fewer "
            "features, or fit in memory.")
    return check_dask_input(estimator, X, y, sample_weight)


def mirror_descent_data(estimator, data):
    """The Gram statistics of a checked :class:`DaskInput`, reduced on the workers."""
    p = data.n_features
    params = {"data_norm": estimator._data_norm(), "y_bound": estimator._y_bound()}
    total = _reduce(estimator, data, _mirror_descent_sums, p * p + 2 * p + 2, params)
    return md.gram_data_from_sums(
        total[:p * p].reshape(p, p), total[p * p:p * p + p], total[p * p + p:p * p + 2 * p],
        total[-2], total[-1], data.n_rows, weighted=data.weights is not None)
