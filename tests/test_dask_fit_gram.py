"""``fit`` on a dask array for ``PrivateFrankWolfeLasso`` and the squared loss of
``PrivateMirrorDescentRegressor``: the Gram statistics of the clipped rows are
reduced on the workers and the private algorithm runs once on the driver.

Most tests use dask's threaded scheduler (the reduction is the same code on a
cluster); the last ones run on a real ``LocalCluster`` of two worker processes.
"""

import math
import tracemalloc

import numpy as np
import pytest

from sklearn_dpol import PrivacyAccountant, PrivateFrankWolfeLasso, PrivateMirrorDescentRegressor
from sklearn_dpol._core import frank_wolfe as fw
from sklearn_dpol._core import mirror_descent as md

dask = pytest.importorskip("dask", reason="dask is not installed")
da = pytest.importorskip("dask.array", reason="dask is not installed")

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_dpol.exceptions.DefaultBoundWarning")

N, D = 20_000, 6
_rng = np.random.default_rng(0)
X = _rng.uniform(-1.0, 1.0, size=(N, D)) * np.array([1, 1, 1, 3, 3, 3])  # many clipped
Y = np.clip(X @ np.linspace(-0.5, 0.5, D) + 0.1 * _rng.standard_normal(N), -3, 3)
W = _rng.uniform(0.0, 1.0, size=N)


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


def lazy(X_=X, Y_=Y, rows=3_000):
    return da.from_array(X_, chunks=(rows, 4)), da.from_array(Y_, chunks=5_000)


def frank_wolfe(**kwargs):
    params = dict(radius=1.0, feature_bound=1.0, y_bound=1.0, max_iter=200)
    return PrivateFrankWolfeLasso(**{**params, **kwargs})


def mirror_descent(**kwargs):
    # solver="mirror_descent" by name: the in-memory fit compared must be mirror descent
    # ("auto" takes objective perturbation for a dense in-memory fit on the L2 ball).
    params = dict(radius=1.0, data_norm=1.5, y_bound=1.0, constraint="l1", max_iter=500,
                  solver="mirror_descent")
    return PrivateMirrorDescentRegressor(**{**params, **kwargs})


def assert_same_model(lazy_fit, memory_fit):
    # The same clipped sums, added in another order: equal to rounding.
    np.testing.assert_allclose(lazy_fit.coef_, memory_fit.coef_, rtol=1e-9, atol=1e-12)
    assert lazy_fit.intercept_ == pytest.approx(memory_fit.intercept_, rel=1e-9, abs=1e-12)
    assert lazy_fit.n_features_in_ == memory_fit.n_features_in_ == D
    assert lazy_fit.max_iter_ == memory_fit.max_iter_
    assert lazy_fit.noise_scale_ == memory_fit.noise_scale_
    assert lazy_fit.sensitivity_ == memory_fit.sensitivity_
    assert lazy_fit.privacy_ == memory_fit.privacy_


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dask_fit_is_the_in_memory_fit_without_noise(make, fit_intercept):
    memory = make(epsilon=np.inf, fit_intercept=fit_intercept).fit(X, Y)
    fitted = make(epsilon=np.inf, fit_intercept=fit_intercept).fit(*lazy())
    assert_same_model(fitted, memory)
    # Clipping really happened (the test can tell): unclipped sums differ.
    loose = {"feature_bound": 10.0} if make is frank_wolfe else {"data_norm": 10.0}
    unclipped = make(epsilon=np.inf, fit_intercept=fit_intercept, **loose).fit(X, Y)
    assert not np.allclose(unclipped.coef_, memory.coef_, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("make, params", [
    (frank_wolfe, {}),
    (frank_wolfe, {"selection": "gaussian", "positive": True}),
    (frank_wolfe, {"max_iter": None, "fit_intercept": False}),
    (mirror_descent, {}),
    (mirror_descent, {"constraint": "l2", "max_iter": None}),
    (mirror_descent, {"constraint": "simplex", "fit_intercept": False}),
    (mirror_descent, {"constraint": "group_l1", "group_size": 2}),
    # so few steps that the in-memory fit steps on the rows, not on the Gram matrix
    (mirror_descent, {"max_iter": 3}),
])
def test_dask_fit_with_noise_is_the_in_memory_release(make, params):
    """Same seed, same statistics: the same noise draws, the same guarantee, one charge."""
    memory = make(epsilon=1.0, random_state=3, **params).fit(X, Y)
    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    fitted = make(epsilon=1.0, random_state=3, accountant=budget, **params).fit(
        da.from_array(X, chunks=(4_000, D)), Y)
    assert fitted.noise_scale_ > 0
    assert_same_model(fitted, memory)
    assert [c.status for c in budget.charges] == ["spent"]


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_other_dtypes_are_read_as_in_memory(make, dtype):
    X_typed = (X * 3).astype(dtype)
    memory = make(epsilon=1.0, random_state=4).fit(X_typed, Y)
    fitted = make(epsilon=1.0, random_state=4).fit(da.from_array(X_typed, chunks=7_000), Y)
    assert_same_model(fitted, memory)


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
def test_sample_weights_are_folded_in_per_block(make):
    memory = make(epsilon=1.0, random_state=5).fit(X, Y, sample_weight=W)
    fitted = make(epsilon=1.0, random_state=5).fit(*lazy(), sample_weight=W)
    assert_same_model(fitted, memory)
    unweighted = make(epsilon=1.0, random_state=5).fit(*lazy())
    assert not np.allclose(unweighted.coef_, fitted.coef_, rtol=1e-6)


def _exploding(shape, chunks):
    """A dask array whose blocks raise when computed: a refusal must come before."""
    def boom(block):
        raise AssertionError("a block was computed")
    return da.zeros(shape, chunks=chunks).map_blocks(boom, dtype=np.float64)


@pytest.mark.parametrize("make, params, message", [
    (mirror_descent, {"loss": "huber"}, "needs loss='squared'"),
    (mirror_descent, {"loss": "absolute"}, "needs loss='squared'"),
    (mirror_descent, {"solver": "objective_perturbation"}, "needs solver='mirror_descent'"),
])
def test_configurations_needing_the_rows_are_refused_before_reading(make, params, message):
    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    estimator = make(epsilon=1.0, accountant=budget, **params)
    with pytest.raises(ValueError, match=message):
        estimator.fit(_exploding((N, D), (5_000, D)), Y)
    assert not hasattr(estimator, "coef_")
    assert budget.charges == []   # refunded


@pytest.mark.parametrize("make, width", [(frank_wolfe, fw.GRAM_MAX_DIM),
                                         (mirror_descent, md.GRAM_MAX_DIM + 1)])
def test_too_many_features_for_a_gram_matrix_are_refused(make, width):
    estimator = make(epsilon=1.0)
    with pytest.raises(ValueError, match="Gram matrix"):
        estimator.fit(_exploding((100, width), (50, width)), np.zeros(100))
    assert not hasattr(estimator, "coef_")


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
def test_bad_dask_input_is_refused_before_anything_is_computed(make):
    import scipy.sparse as sp

    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    estimator = make(epsilon=1.0, accountant=budget)
    exploding = _exploding((N, D), (5_000, D))
    with pytest.raises(ValueError, match="X has 20000 rows and y has 10"):
        estimator.fit(exploding, Y[:10])
    with pytest.raises(ValueError, match="2D dask array"):
        estimator.fit(da.from_array(Y, chunks=5_000), Y)
    with pytest.raises(ValueError, match="not NumPy arrays"):
        estimator.fit(da.from_array(X, chunks=5_000).map_blocks(sp.csr_matrix), Y)
    with pytest.raises(ValueError, match="sample_weight as a dask array"):
        estimator.fit(exploding, Y, sample_weight=da.from_array(W, chunks=5_000))
    with pytest.raises(ValueError, match=r"sample_weight must lie in \[0, 1\]"):
        estimator.fit(exploding, Y, sample_weight=2 * W)
    unknown = da.from_array(X, chunks=5_000)[da.from_array(Y, chunks=5_000) > 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        estimator.fit(unknown, Y[:1])
    assert not hasattr(estimator, "coef_")
    assert budget.charges == []   # every refused call was refunded


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
@pytest.mark.parametrize("where", ["X", "y"])
def test_non_finite_values_found_on_the_workers_raise_and_are_charged(make, where):
    budget = PrivacyAccountant(epsilon=5.0, delta=1e-5)
    bad_X, bad_Y = X.copy(), Y.copy()
    if where == "X":
        bad_X[12_345, 2] = np.nan
    else:
        bad_Y[7] = np.inf
    with pytest.raises(ValueError, match=r"Input [Xy] contains"):   # in memory: free
        make(epsilon=1.0).fit(bad_X, bad_Y)
    estimator = make(epsilon=1.0, accountant=budget)
    with pytest.raises(ValueError, match="NaN or infinity"):
        estimator.fit(*lazy(bad_X, bad_Y))
    assert not hasattr(estimator, "coef_")
    assert [c.status for c in budget.charges] == ["spent"]   # found after reading began


@pytest.mark.parametrize("make", [frank_wolfe, mirror_descent])
def test_partial_fit_after_a_dask_fit_continues_from_it(make):
    batch = slice(0, 2_000)
    a = make(epsilon=1.0, random_state=0).fit(*lazy()).partial_fit(X[batch], Y[batch])
    b = make(epsilon=1.0, random_state=0).fit(X, Y).partial_fit(X[batch], Y[batch])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert a.privacy_ == b.privacy_


def _neighbours():
    """Replace one record (huge values, clipped) in each of several blocks."""
    for row in (0, 2_999, 3_000, 17_321):
        X2, Y2 = X.copy(), Y.copy()
        X2[row] = -X2[row] * 1e6
        Y2[row] = -1e6 * np.sign(Y2[row] or 1.0)
        yield X2, Y2


def test_neighbouring_dask_arrays_move_the_frank_wolfe_scores_by_at_most_the_bound():
    """Noise off: every vertex's score, at points of the ball, moves by at most 2 L1 r / n."""
    from sklearn_dpol.linear_model._dask_fit import check_frank_wolfe_dask_fit, \
        frank_wolfe_problem

    estimator = frank_wolfe(epsilon=1.0)
    radius = 1.0

    def problem(X_, Y_):
        return frank_wolfe_problem(estimator,
                                   check_frank_wolfe_dask_fit(estimator, *lazy(X_, Y_), None))

    vertices = fw.make_vertices(D + 1, radius, False, True)
    points = [v * np.eye(D + 1)[j] for v in (radius, -radius) for j in range(D + 1)]
    points += [fw.sets.into_set(fw.sets.L1, p, radius)
               for p in np.random.default_rng(1).laplace(size=(20, D + 1)) / 3]
    base = problem(X, Y)
    bound = fw.score_sensitivity(N, radius, 1.0, 1.0)
    worst = 0.0
    for X2, Y2 in _neighbours():
        moved = problem(X2, Y2)
        for theta in points:
            change = vertices.scores(moved.gradient(theta)) - vertices.scores(base.gradient(theta))
            worst = max(worst, float(np.max(np.abs(change))))
    assert 0.2 * bound < worst <= bound * (1 + 1e-9)   # attained at a vertex, to rounding


def test_neighbouring_dask_arrays_move_the_mirror_descent_gradient_by_at_most_the_bound():
    """Noise off: the mean gradient, at points of the set, moves by at most 2 L / n in L2."""
    from sklearn_dpol.linear_model._dask_fit import check_mirror_descent_dask_fit, \
        mirror_descent_data

    estimator = mirror_descent(epsilon=1.0, constraint="l2")
    radius, data_norm, y_bound = 1.0, 1.5, 1.0

    def data(X_, Y_):
        return mirror_descent_data(estimator,
                                   check_mirror_descent_dask_fit(estimator, *lazy(X_, Y_), None))

    rng = np.random.default_rng(2)
    points = [(radius * p / max(1.0, np.linalg.norm(p)), b)
              for p, b in zip(rng.standard_normal((20, D)), rng.uniform(-1, 1, 20))]
    base = data(X, Y)
    lipschitz = md.lipschitz_constant(
        md.derivative_bound("squared", 1.0, radius, data_norm, y_bound, True), data_norm, True)
    bound = md.gradient_sensitivity(lipschitz, N)
    worst = 0.0
    for X2, Y2 in _neighbours():
        moved = data(X2, Y2)
        for w, b in points:
            change = (md.averaged_gradient(moved, w, b, "squared", 1.0)
                      - md.averaged_gradient(base, w, b, "squared", 1.0))
            worst = max(worst, float(np.linalg.norm(change)))
    assert 0.1 * bound < worst <= bound


# -- on a LocalCluster of two worker processes -------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask.distributed is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="3GB", dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def test_on_a_local_cluster_the_models_are_the_in_memory_ones(client):
    with dask.config.set(scheduler=client.get):
        for make in (frank_wolfe, mirror_descent):
            memory = make(epsilon=1.0, random_state=7).fit(X, Y, sample_weight=W)
            fitted = make(epsilon=1.0, random_state=7).fit(*lazy(), sample_weight=W)
            assert_same_model(fitted, memory)


def test_lazily_generated_array_keeps_the_driver_small(client):
    """1e6 x 20 float64 (160 MB) generated on the workers; the driver stays far below."""
    n, d = 1_000_000, 20
    X_lazy = da.random.RandomState(0).uniform(-1.0, 1.0, size=(n, d), chunks=(125_000, d))
    y_lazy = X_lazy[:, :4].sum(axis=1) / 4.0
    truth = np.r_[[0.25] * 4, [0.0] * (d - 4)]
    with dask.config.set(scheduler=client.get):
        for make in (
            lambda: PrivateFrankWolfeLasso(epsilon=1.0, radius=1.0, feature_bound=1.0,
                                           y_bound=1.0, random_state=0),
            lambda: PrivateMirrorDescentRegressor(epsilon=1.0, radius=1.0,
                                                  data_norm=math.sqrt(d), y_bound=1.0,
                                                  constraint="l1", random_state=0),
        ):
            tracemalloc.start()
            try:
                fitted = make().fit(X_lazy, y_lazy)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 32e6, f"driver peak {peak / 1e6:.1f} MB"
            assert fitted.coef_.shape == (d,) and np.all(np.isfinite(fitted.coef_))
            np.testing.assert_allclose(fitted.coef_, truth, atol=0.08)
