"""Implementations of the stream-mechanism protocol of :mod:`sklearn_dpol.privacy._streams`.

Two families, built by :func:`sklearn_dpol.privacy._streams.make_stream_mechanism`
(which owns their calibration):

* :class:`TreeMechanism`: today's binary trees of :mod:`.prefix_sums` (plain
  dyadic, Honaker, epoch tree for an unbounded stream). Positions are *rows*: a
  batch of ``m`` rows takes ``m`` positions and releases the prefix after its
  last one.
* :class:`FactorizationMechanism`: the matrix-factorization mechanisms of
  :mod:`.matrix_factorization` (square-root Toeplitz, BLT). Positions are
  *steps*: one batch is one step, whose vector is the sum of the batch's rows.

A batch is either an array of shape ``(m, dim)`` (one vector per row) or a row
statistics object with ``n_rows``, ``dim``, ``sum(lo, hi)`` and ``atoms(lo, hi)``
(such as :class:`~sklearn_dpol._core.qftl.PackedStatistics`, which never
materialises the rows' vectors for a sum).
"""

import copy

import numpy as np

from .prefix_sums import EpochTree, KnownHorizonPrefixSums


class RowVectors:
    """One vector per row, as the row statistics the mechanisms read."""

    def __init__(self, rows):
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2:
            raise ValueError(f"a batch must be a 2-D array (rows, dim); got shape {rows.shape}.")
        self.rows = rows
        self.n_rows, self.dim = rows.shape

    def sum(self, lo, hi):
        return self.rows[lo:hi].sum(axis=0)

    def atoms(self, lo, hi):
        return self.rows[lo:hi]


def as_row_batch(batch):
    """A batch as row statistics (arrays are wrapped, statistics objects pass through)."""
    return batch if hasattr(batch, "atoms") else RowVectors(batch)


class _Mechanism:
    def __init__(self, name, dim, sensitivity, mu, horizon):
        self.name, self.dim = name, int(dim)
        self.sensitivity, self.mu = float(sensitivity), float(mu)
        self.horizon = None if horizon is None else int(horizon)

    def _batch(self, batch):
        batch = as_row_batch(batch)
        if batch.dim != self.dim:
            raise ValueError(f"batch vectors have dimension {batch.dim}, the stream {self.dim}.")
        if batch.n_rows < 1:
            raise ValueError("a batch must hold at least one row.")
        return batch

    def current_variance(self):
        """Per-coordinate noise variance of the last released prefix."""
        return self.prefix_variance(self.t)

    def __repr__(self):
        return f"<{type(self).__name__}: {self.describe()}>"


class TreeMechanism(_Mechanism):
    """Binary tree over row positions (``"tree"`` or ``"honaker"``), epoch tree for ``horizon=None``."""

    granularity = "row"

    def __init__(self, name, dim, sensitivity, mu, horizon):
        super().__init__(name, dim, sensitivity, mu, horizon)
        if horizon is None:
            self.inner = EpochTree(self.dim, self.sensitivity, self.mu, name)
        else:
            self.inner = KnownHorizonPrefixSums(self.dim, self.sensitivity, self.mu,
                                                self.horizon, name)

    def advance(self, batch, rng):
        """Append the batch's rows and return the released prefix sum after the last."""
        return self.inner.advance(self._batch(batch), rng)

    @property
    def t(self):
        return self.inner.t

    @property
    def n_rows(self):
        return self.inner.t

    @property
    def sigma(self):
        return self.inner.sigma

    def spent_fraction(self):
        return self.inner.spent_fraction()

    def prefix_variance(self, t):
        return self.inner.prefix_variance(t) if t else 0.0

    def current_variance(self):
        return self.inner.current_variance()

    def snapshot(self):
        twin = copy.copy(self)
        twin.inner = self.inner.snapshot()
        return twin

    def describe(self):
        estimator = "Honaker's estimator" if self.name == "honaker" else "dyadic blocks"
        if self.horizon is None:
            return (f"epoch binary trees over rows ({estimator}), epoch k of 2^k rows with "
                    "noise sqrt(k + 1) * (1 + 1e-3) * sensitivity / mu per node")
        return (f"binary tree over at most {self.horizon} rows ({estimator}), "
                f"{self.inner.levels} levels, noise {self.sigma:.4g} per node")


class FactorizationMechanism(_Mechanism):
    """A matrix-factorization mechanism over steps (one batch = one step)."""

    granularity = "step"

    def __init__(self, name, dim, sensitivity, mu, horizon, inner, column_norm,
                 spent_norm, description):
        super().__init__(name, dim, sensitivity, mu, horizon)
        self.inner = inner
        self.column_norm = column_norm      # max column norm of C that sigma is calibrated on
        self._spent_norm = spent_norm       # t -> max column norm of C's first t rows
        self._description = description

    def advance(self, batch, rng):
        """Take the batch as one step (the sum of its rows); return the released prefix sum."""
        batch = self._batch(batch)
        return self.inner.advance_step(batch.sum(0, batch.n_rows), batch.n_rows, rng)

    @property
    def t(self):
        return self.inner.t

    @property
    def n_rows(self):
        return self.inner.n_rows

    @property
    def sigma(self):
        return self.inner.sigma

    def spent_fraction(self):
        """``(spent mu / mu)^2``: the column norm of the rows released so far over the calibrated one."""
        if not self.t:
            return 0.0
        if self._spent_norm is None:      # epochs: a completed epoch may have spent it all
            return 1.0
        return min(1.0, (self._spent_norm(self.t) / self.column_norm) ** 2)

    def prefix_variance(self, t):
        return self.inner.prefix_variance(t)

    def current_variance(self):
        current = getattr(self.inner, "current_variance", None)
        return current() if current is not None else self.inner.prefix_variance(self.t)

    def snapshot(self):
        twin = copy.copy(self)
        twin.inner = self.inner.snapshot()
        return twin

    def describe(self):
        return self._description
