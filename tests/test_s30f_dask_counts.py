"""Fits on dask arrays quote no row count in their failures (review 101, L2).

A lazily loaded block may return another number of rows than its declared
chunk (a source filtered on the values, declared at its unfiltered size): the
count it returns depends on the data. The old code raised "The reduction
counted 963 rows of 1000" (QFTL, Frank-Wolfe), or numpy's broadcast error
quoting the two sizes when ``y``'s blocks were shorter than ``X``'s (mirror
descent too). Now each block's ``X``, ``y`` and weights are compared with the
declared chunk shapes on the worker, and the failure (charged: the reading has
begun) says so without a number. The advice for unknown chunk sizes says that
the row count must not depend on private values.
"""

import re
import warnings

import numpy as np
import pytest

from sklearn_dpol import (
    PrivacyAccountant,
    PrivateFrankWolfeLasso,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)

dask = pytest.importorskip("dask", reason="dask is not installed")
da = pytest.importorskip("dask.array", reason="dask is not installed")
from dask import delayed  # noqa: E402

RNG = np.random.default_rng(0)
N, BLOCK = 1000, 250
X_FULL = RNG.normal(size=(N, 3))
X_FULL[:37, 0] = np.nan  # 37 records a data-dependent filter drops
Y_FULL = RNG.normal(size=N)

MAKERS = {
    "qftl": lambda a: PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0, alpha=1.0, epsilon=1.0,
                                           delta=1e-6, accountant=a, random_state=0),
    "fw": lambda a: PrivateFrankWolfeLasso(feature_bound=1.0, y_bound=1.0, radius=1.0,
                                           epsilon=1.0, delta=1e-6, accountant=a,
                                           random_state=0, max_iter=10),
    "md": lambda a: PrivateMirrorDescentRegressor(data_norm=2.0, y_bound=1.0, radius=1.0,
                                                  epsilon=1.0, delta=1e-6, accountant=a,
                                                  random_state=0, max_iter=3),
}


def _kept(lo):
    return np.isfinite(X_FULL[lo:lo + BLOCK]).all(axis=1)


def _filtered_source():
    """X and y filtered on the values, each block declared at its unfiltered size."""
    xs = [da.from_delayed(delayed(lambda lo: X_FULL[lo:lo + BLOCK][_kept(lo)])(lo),
                          shape=(BLOCK, 3), dtype=float) for lo in range(0, N, BLOCK)]
    ys = [da.from_delayed(delayed(lambda lo: Y_FULL[lo:lo + BLOCK][_kept(lo)])(lo),
                          shape=(BLOCK,), dtype=float) for lo in range(0, N, BLOCK)]
    return da.concatenate(xs), da.concatenate(ys)


def _short_y_blocks():
    """X's blocks hold their declared rows; y's blocks (same declared chunks) hold fewer."""
    X = da.from_array(np.nan_to_num(X_FULL), chunks=(BLOCK, 3))
    ys = [da.from_delayed(delayed(lambda lo: Y_FULL[lo:lo + BLOCK - 10])(lo),
                          shape=(BLOCK,), dtype=float) for lo in range(0, N, BLOCK)]
    return X, da.concatenate(ys)


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("source", [_filtered_source, _short_y_blocks])
def test_blocks_off_their_declared_size_fail_without_a_count(name, source):
    X, y = source()
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
        estimator = MAKERS[name](accountant)
        with pytest.raises(ValueError, match="declared chunk sizes") as info:
            estimator.fit(X, y)
    message = str(info.value)
    assert re.search(r"\d", message) is None, message  # no count, no size
    assert info.value.__cause__ is None
    assert not hasattr(estimator, "coef_")
    assert [c.status for c in accountant.charges] == ["spent"]  # the reading had begun


def test_declared_sizes_that_hold_still_fit():
    X = da.from_array(np.nan_to_num(X_FULL), chunks=(BLOCK, 3))
    y = da.from_array(Y_FULL, chunks=BLOCK)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy = PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0, epsilon=np.inf).fit(X, y)
        memory = PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0, epsilon=np.inf).fit(
            np.nan_to_num(X_FULL), Y_FULL)
    np.testing.assert_allclose(lazy.coef_, memory.coef_, rtol=1e-10, atol=1e-13)


def test_unknown_chunk_advice_says_the_count_must_not_depend_on_the_data():
    X = da.from_array(np.nan_to_num(X_FULL), chunks=BLOCK)
    unknown = X[da.from_array(Y_FULL, chunks=BLOCK) > 0]
    estimator = PrivateQFTLRegressor(data_norm=2.0, y_bound=1.0)
    with pytest.raises(ValueError, match="unknown chunk sizes") as info:
        estimator.fit(unknown, Y_FULL[:1])
    assert "must not depend on private values" in str(info.value)
    assert "is public" not in str(info.value).split("only if")[0]
