"""Sparse Gram products whose memory does not follow one record (reviews 122 and 123;
privacy.md 57.7 and 57.9).

One sparse product ``W^T W`` holds an entry per pair of columns stored together in some
row, so one dense record among one-entry rows raised Frank-Wolfe's, mirror descent's and
QFTL's Gram products (and objective perturbation's) to ``d^2`` entries: under a memory cap
a fit failed on one neighbour only (a charged MemoryError quoting the count). Every sparse
Gram product now goes through ``_weights.sparse_gram``, in blocks of a public size.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpol import PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor, PrivateQFTLRegressor
from sklearn_dpol._core import _weights

N, D, BLOCK = 400, 600, 1 << 14


def _neighbours():
    rng = np.random.default_rng(0)
    rows = sp.csr_matrix((np.full(N, 0.5), (np.arange(N), rng.integers(0, D, N))), shape=(N, D))
    dense_record = rows.tolil()
    dense_record[0, :] = rng.uniform(-1, 1, D) / np.sqrt(D)
    return rows, dense_record.tocsr(), rng.uniform(-1, 1, N)


ESTIMATORS = {
    "frank_wolfe": lambda: PrivateFrankWolfeLasso(epsilon=1.0, feature_bound=1.0, y_bound=1.0,
                                                  max_iter=5, random_state=0),
    "mirror_descent": lambda: PrivateMirrorDescentRegressor(epsilon=1.0, data_norm=1.0,
                                                            y_bound=1.0, max_iter=5,
                                                            solver="mirror_descent",
                                                            random_state=0),
    "qftl": lambda: PrivateQFTLRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0,
                                         random_state=0),
}


def _peak(make, X, y):
    estimator = make()
    tracemalloc.start()
    try:
        estimator.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_one_dense_record_moves_the_peak_by_a_public_amount_at_most(name, monkeypatch):
    monkeypatch.setattr(_weights, "SPARSE_PRODUCT_ENTRIES", BLOCK)
    sparse_rows, dense_record, y = _neighbours()
    make = ESTIMATORS[name]
    _peak(make, sparse_rows, y)                # warm-up (compiles, caches)
    first, second = _peak(make, sparse_rows, y), _peak(make, dense_record, y)
    # Unblocked, the dense record adds d^2 = 360,000 entries (about 5.8 MB as COO, more
    # with SciPy's work arrays); a block holds 16,384 (plus O(d) for the record itself).
    assert second - first < 16 * 6 * BLOCK + 256 * D, (name, first, second)


def test_the_blocks_give_the_whole_products_bits():
    rng = np.random.default_rng(1)
    A = sp.random(200, 40, density=0.2, format="csr", random_state=2)
    A.data -= 0.5
    A.data[::5] = -0.0
    B = sp.random(200, 43, density=0.2, format="csr", random_state=3)
    whole, cross = (A.T @ A).toarray(), (A.T @ B).toarray()
    for entries in (1, 7, 1 << 21):
        _weights.SPARSE_PRODUCT_ENTRIES, saved = entries, _weights.SPARSE_PRODUCT_ENTRIES
        try:
            assert _weights.sparse_gram(A).tobytes() == whole.tobytes()
            assert _weights.sparse_gram(A, B).tobytes() == cross.tobytes()
            start = rng.normal(size=(40, 40))
            added = start.copy()
            _weights.sparse_gram(A, out=added)
            assert added.tobytes() == (start + whole).tobytes()
        finally:
            _weights.SPARSE_PRODUCT_ENTRIES = saved
