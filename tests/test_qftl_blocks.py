"""QFTL's dense statistics are clipped and summed block by block (issue 19: memory).

``PackedStatistics(X, y, ..., row_scale=s)`` never builds the clipped copy ``X * s``:
each block of rows is clipped as it is summed. One block is bit for bit the sum of the
clipped slice (every stream batch); more blocks add the same products in another order
(rounding only), and only the slice's own rows enter.
"""

import tracemalloc
import warnings

import numpy as np
import pytest

from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import qftl
from sklearn_dpol._core.qftl import PackedStatistics


def _data(n=5000, p=7, seed=0, order="C"):
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.standard_normal((n, p)), order=order)
    scale = np.minimum(1.0, 1.0 / np.linalg.norm(X, axis=1))
    y = np.clip(rng.standard_normal(n), -1, 1)
    w = rng.uniform(0, 1, n)
    return X, scale, y, w


@pytest.mark.parametrize("intercept", [None, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_blocks_sum_to_the_clipped_sum(monkeypatch, intercept, weighted, order):
    X, scale, y, w = _data(order=order)
    weights = w if weighted else None
    clipped = X * scale[:, np.newaxis]
    reference = PackedStatistics(clipped, y, intercept, weights)
    lazy = PackedStatistics(X, y, intercept, weights, row_scale=scale)
    # one block (the default block holds these rows): the same bits
    for lo, hi in [(0, 5000), (17, 4000), (3, 4), (9, 9)]:
        np.testing.assert_array_equal(lazy.sum(lo, hi), reference.sum(lo, hi))
        np.testing.assert_array_equal(lazy.atoms(lo, hi), reference.atoms(lo, hi))
    # many blocks (1,024 rows each): the same sums up to rounding
    monkeypatch.setattr(qftl, "BLOCK_BYTES", 8 * 7 * 1024)
    for lo, hi in [(0, 5000), (17, 4000), (1000, 3049)]:
        np.testing.assert_allclose(lazy.sum(lo, hi), reference.sum(lo, hi), rtol=1e-12,
                                   atol=1e-10)


def test_a_block_sum_reads_only_its_own_rows(monkeypatch):
    monkeypatch.setattr(qftl, "BLOCK_BYTES", 8 * 7 * 1024)
    X, scale, y, _ = _data()
    other = X.copy()
    other[:100] = 1e300          # rows outside the slice: huge, and clipped
    other[4500:] = np.nan
    a = PackedStatistics(X, y, 1.0, row_scale=scale).sum(100, 4500)
    b = PackedStatistics(other, y, 1.0, row_scale=scale).sum(100, 4500)
    np.testing.assert_array_equal(a, b)


def test_fit_keeps_no_clipped_copy_of_X(monkeypatch):
    """Peak memory of a dense fit stays well below X (the clipped copy was 1x X): the
    row scales and targets (0.2x here, with 10 columns) and one block of rows."""
    monkeypatch.setattr(qftl, "BLOCK_BYTES", 1 << 20)     # 1 MB blocks, 1/32 of X
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400_000, 10)) / 4
    y = X[:, 0]
    est = PrivateQFTLRegressor(random_state=0, data_norm=1.0, y_bound=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:1000], y[:1000])            # compile and warm up outside the trace
        tracemalloc.start()
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 0.5 * X.nbytes, peak / X.nbytes
