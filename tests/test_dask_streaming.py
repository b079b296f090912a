"""Streaming beyond one process: dask-ml's Incremental drives ``partial_fit`` over
the blocks of a dask array on a real ``dask.distributed.LocalCluster``.

The model travels between worker processes by pickling, generator included,
so a stream on the cluster must be the stream run in-process block by block:
the same final ``privacy_`` (every field) and, with an integer seed, the same
released coefficients, bit for bit.
"""

import dataclasses
import math

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.utils import check_random_state

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)

da = pytest.importorskip("dask.array", reason="dask is not installed")
distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is not installed")
wrappers = pytest.importorskip("dask_ml.wrappers", reason="dask-ml is not installed")

N, D, BLOCK = 4000, 3, 500
_rng = np.random.default_rng(0)
X = _rng.uniform(-0.5, 0.5, size=(N, D))
Y = np.clip(X @ np.array([0.8, -0.6, 0.4]) + 0.05 * _rng.standard_normal(N), -1.0, 1.0)
LABELS = (Y > 0).astype(int)

STREAMS = {
    "qftl": PrivateQFTLRegressor(epsilon=1.0, horizon=N, random_state=0),
    "qftl_anytime": PrivateQFTLRegressor(epsilon=1.0, random_state=0),
    "igd": PrivateIGDClassifier(epsilon=1.0, alpha=1e-2, horizon=N, random_state=0),
    "parameter_free": ParameterFreeLocalDPRegressor(epsilon=2.0, random_state=0),
    "mi_ogd": MutualInformationPrivateOGDRegressor(epsilon=None, sigma=0.5, loss="squared", random_state=0),
    "frank_wolfe": PrivateFrankWolfeLasso(epsilon=1.0, max_iter=50, random_state=0),
    "mirror_descent": PrivateMirrorDescentRegressor(epsilon=1.0, random_state=0),
}


@pytest.fixture(scope="module")
def client():
    """One small cluster of worker processes for the module."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def targets(estimator):
    return LABELS if is_classifier(estimator) else Y


def stream_kwargs(estimator):
    return {"classes": [0, 1]} if is_classifier(estimator) else {}


def assert_same_guarantee(a, b):
    """Field by field; ``nan`` (a guarantee not accounted in GDP) equals ``nan``."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        both_nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
        assert x == y or both_nan, (field.name, x, y)


def in_process(estimator, order):
    model = clone(estimator)
    y = targets(estimator)
    for block in order:
        rows = slice(block * BLOCK, (block + 1) * BLOCK)
        model.partial_fit(X[rows], y[rows], **stream_kwargs(estimator))
    return model


def dask_arrays(estimator):
    return (da.from_array(X, chunks=(BLOCK, D)),
            da.from_array(targets(estimator), chunks=BLOCK))


@pytest.mark.parametrize("name", STREAMS)
def test_incremental_on_a_cluster_is_the_in_process_stream(client, name):
    estimator = STREAMS[name]
    dX, dy = dask_arrays(estimator)
    with distributed.get_task_stream(client) as tasks:
        incremental = wrappers.Incremental(estimator, shuffle_blocks=False)
        incremental.fit(dX, dy, **stream_kwargs(estimator))
    assert any(task["key"][0].startswith("fit-") for task in tasks.data), \
        "the blocks were not fitted on the cluster"
    remote = incremental.estimator_
    local = in_process(estimator, range(N // BLOCK))
    assert_same_guarantee(remote.privacy_, local.privacy_)
    assert remote.privacy_.n_releases == N // BLOCK
    assert remote.privacy_.n_records == N
    np.testing.assert_array_equal(remote.coef_, local.coef_)
    np.testing.assert_array_equal(remote.intercept_, local.intercept_)
    predictions = incremental.predict(dX).compute()
    np.testing.assert_array_equal(predictions, local.predict(X))


@pytest.mark.parametrize("name", ["qftl", "igd"])
def test_shuffled_blocks_follow_incrementals_seeded_order(client, name):
    """``shuffle_blocks=True`` visits the blocks in the order its random_state draws."""
    estimator = STREAMS[name]
    dX, dy = dask_arrays(estimator)
    incremental = wrappers.Incremental(estimator, shuffle_blocks=True, random_state=3)
    incremental.fit(dX, dy, **stream_kwargs(estimator))
    order = list(range(N // BLOCK))
    check_random_state(3).shuffle(order)
    assert order != sorted(order)
    local = in_process(estimator, order)
    assert_same_guarantee(incremental.estimator_.privacy_, local.privacy_)
    np.testing.assert_array_equal(incremental.estimator_.coef_, local.coef_)


def test_the_stream_guarantee_covers_every_block(client):
    """With a known horizon a tree stream's GDP budget is spent exactly at its end
    (a factorization, calibrated for up to horizon calls, reports what it spent)."""
    estimator = clone(STREAMS["qftl"]).set_params(prefix_sums="tree")
    dX, dy = dask_arrays(estimator)
    remote = wrappers.Incremental(estimator, shuffle_blocks=False).fit(dX, dy).estimator_
    guarantee = remote.privacy_
    assert guarantee.spent_mu == pytest.approx(guarantee.mu, rel=1e-12)
    blt = wrappers.Incremental(STREAMS["qftl"], shuffle_blocks=False).fit(dX, dy).estimator_
    assert 0 < blt.privacy_.spent_mu <= blt.privacy_.mu
    assert (guarantee.epsilon, guarantee.delta) == (1.0, estimator.delta)
    # The model learned (the tree's noise at eps = 1 on 4,000 rows leaves R^2 around 0.5;
    # the mean predictor scores 0).
    assert remote.score(X, Y) > 0.3 and blt.score(X, Y) > 0.3


@pytest.mark.parametrize("name", ["qftl", "igd", "parameter_free"])
def test_a_cluster_stream_charges_the_accountant_once(client, tmp_path, name):
    """The accountant travels to the worker processes with the estimator (its
    ledger is a locked file): the stream is one charge, equal to what it spent,
    and its call counter advanced once per block."""
    from sklearn_dpol.privacy import PrivacyAccountant

    with PrivacyAccountant(epsilon=20.0, delta=1e-5, path=tmp_path / "ledger") as budget:
        estimator = clone(STREAMS[name]).set_params(random_state=None, accountant=budget)
        dX, dy = dask_arrays(estimator)
        remote = wrappers.Incremental(estimator, shuffle_blocks=False).fit(
            dX, dy, **stream_kwargs(estimator)).estimator_
        charges = budget.charges
        assert [(c.label, c.kind, c.status) for c in charges] == \
            [(type(estimator).__name__, "stream", "spent")]
        assert charges[0].cost.epsilon == remote.privacy_.epsilon
        assert charges[0].cost.delta == remote.privacy_.delta
        assert remote.privacy_.n_releases == N // BLOCK
        # The model that came back from the workers still charges the same ledger.
        assert remote.accountant.path == budget.path
