"""PrivateMirrorDescentRegressor: sparse CSR input and sample weights in [0, 1] (issue 18).

CSR input runs the sparse gradient kernel (stored entries only) and must give
the dense model; weights multiply each record's loss and leave the sensitivity
``2L/n`` unchanged (``doc/privacy.md``, "Sparse input and sample weights for
mirror descent").
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateMirrorDescentRegressor
from sklearn_dpol._core import mirror_descent as md

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_dpol.exceptions.DefaultBoundWarning")


def _data(n=300, p=25, density=0.15, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr") * scale
    X.data -= scale / 2  # signed entries, some rows above the clipping norm
    dense = X.toarray()
    y = np.clip(dense @ rng.standard_normal(p) * 0.3 + 0.1, -1.5, 1.5)
    return X, dense, y


def _released(est):
    return np.append(est.coef_, est.intercept_)


# Mirror descent by name (the sparse kernels and the weights of mirror descent; "auto"
# would fit the dense twin of the squared-loss L2 variants by objective perturbation).
MD = dict(solver="mirror_descent")
VARIANTS = [
    dict(max_iter=20, **MD),                               # squared loss, rows
    dict(max_iter=5000, **MD),                             # squared loss, Gram statistics
    dict(loss="huber", constraint="l1", radius=3.0, max_iter=300, **MD),
    dict(constraint="simplex", fit_intercept=False, max_iter=300, **MD),
    dict(loss="absolute", constraint="group_l1", group_size=4, max_iter=300, **MD),
]


def test_variants_cover_both_gradient_paths():
    n, p = _data()[1].shape
    assert not md.use_gram("squared", n, p, 20)
    assert md.use_gram("squared", n, p, 5000)


@pytest.mark.parametrize("params", VARIANTS)
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_csr_equals_dense(params, epsilon):
    X, dense, y = _data()
    kwargs = dict(epsilon=epsilon, random_state=3, data_norm=1.2, **params)
    a = PrivateMirrorDescentRegressor(**kwargs).fit(dense, y)
    b = PrivateMirrorDescentRegressor(**kwargs).fit(X, y)
    # The gradients add the same nonzero terms in the same order; only the row
    # norms (a vectorised sum in the dense clipping kernel) round differently.
    assert_allclose(_released(b), _released(a), rtol=0, atol=1e-12)
    assert (b.max_iter_, b.step_size_, b.noise_scale_) == \
        (a.max_iter_, a.step_size_, a.noise_scale_)
    assert b.privacy_.epsilon == a.privacy_.epsilon and b.privacy_.mu == a.privacy_.mu
    for lo in (0, 150):
        a.partial_fit(dense[lo:lo + 150], y[lo:lo + 150])
        b.partial_fit(X[lo:lo + 150].tocoo(), y[lo:lo + 150])
        assert_allclose(_released(b), _released(a), rtol=0, atol=1e-12)
    assert_allclose(b.predict(X), a.predict(dense), rtol=0, atol=1e-12)


def test_float32_csr_and_other_formats():
    X, dense, y = _data(seed=1)
    kwargs = dict(epsilon=np.inf, random_state=0, loss="huber", max_iter=200, **MD)
    a = PrivateMirrorDescentRegressor(**kwargs).fit(dense, y)
    for matrix in (X.astype(np.float32), X.tocsc(), sp.csr_array(X)):
        b = PrivateMirrorDescentRegressor(**kwargs).fit(matrix, y)
        tol = 1e-6 if matrix.dtype == np.float32 else 1e-12
        assert_allclose(_released(b), _released(a), rtol=0, atol=tol)
    # float32 CSR is the float32 dense model (rows clipped in float64 in both).
    c = PrivateMirrorDescentRegressor(**kwargs).fit(dense.astype(np.float32), y)
    d = PrivateMirrorDescentRegressor(**kwargs).fit(X.astype(np.float32), y)
    assert_allclose(_released(d), _released(c), rtol=0, atol=1e-12)


def test_non_canonical_csr_is_summed_on_a_copy():
    dup = sp.csr_matrix((np.array([0.5, 0.25, 1.0]), np.array([0, 0, 2]),
                         np.array([0, 2, 3])), shape=(2, 3))
    assert not dup.has_canonical_format
    X = sp.vstack([dup] * 20).tocsr()
    X.has_canonical_format = False
    y = np.tile([0.5, -0.5], 20)
    kwargs = dict(epsilon=np.inf, max_iter=100, **MD)
    a = PrivateMirrorDescentRegressor(**kwargs).fit(X, y)
    b = PrivateMirrorDescentRegressor(**kwargs).fit(X.toarray(), y)
    assert_allclose(_released(a), _released(b), rtol=0, atol=1e-12)
    assert dup.data.tolist() == [0.5, 0.25, 1.0]


def test_csr_never_densified(monkeypatch):
    X, _, y = _data(n=400, p=40)
    called = []
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        for name in ("toarray", "todense"):
            original = getattr(cls, name)

            def spy(self, *args, _original=original, **kw):
                if self.shape[0] == X.shape[0]:  # the data, not the (p, p) Gram matrix
                    called.append(self.shape)
                return _original(self, *args, **kw)

            monkeypatch.setattr(cls, name, spy)
    for params in VARIANTS[:2]:
        model = PrivateMirrorDescentRegressor(random_state=0, **params).fit(X, y)
        model.partial_fit(X, y)
        model.predict(X)
    assert called == []


def test_clipping_reads_stored_entries_and_bounds_rows():
    X, dense, y = _data(n=200, p=30, scale=6.0)
    a = md.clip_data(X, y, data_norm=0.7, y_bound=1.0, use_gram=False)
    b = md.clip_data(dense, y, data_norm=0.7, y_bound=1.0, use_gram=False)
    assert_allclose(a.scales, b.scales, rtol=1e-14)
    clipped = X.multiply(a.scales[:, None]).tocsr()
    assert np.sqrt(np.asarray(clipped.multiply(clipped).sum(1)).ravel()).max() <= 0.7
    assert np.mean(a.scales < 1) > 0.2  # clipping is exercised


def test_objective_perturbation_takes_sparse_x():
    """Session 33 (helper S): objective perturbation reads CSR through sparse products
    (it refused sparse X before): the dense input's model, weighted or not, and both
    solvers declare sparse input."""
    X, dense, y = _data()
    for weights in (None, np.linspace(0.0, 1.0, len(y))):
        kwargs = dict(solver="objective_perturbation", random_state=0)
        a = PrivateMirrorDescentRegressor(**kwargs).fit(dense, y, sample_weight=weights)
        b = PrivateMirrorDescentRegressor(**kwargs).fit(X, y, sample_weight=weights)
        assert_allclose(_released(b), _released(a), rtol=1e-11, atol=1e-14)
    est = PrivateMirrorDescentRegressor(solver="objective_perturbation")
    assert est.__sklearn_tags__().input_tags.sparse
    assert PrivateMirrorDescentRegressor().__sklearn_tags__().input_tags.sparse


# -- sample weights ---------------------------------------------------------------


@pytest.mark.parametrize("params", VARIANTS)
def test_unit_weights_are_the_unweighted_fit_bitwise(params):
    X, dense, y = _data(seed=2)
    ones = np.ones(len(y))
    for data in (dense, X):
        for epsilon in (np.inf, 2.0):
            kw = dict(epsilon=epsilon, random_state=0, **params)
            a = PrivateMirrorDescentRegressor(**kw).fit(data, y)
            b = PrivateMirrorDescentRegressor(**kw).fit(data, y, sample_weight=ones)
            assert np.array_equal(_released(a), _released(b))
            a.partial_fit(data[:100], y[:100])
            b.partial_fit(data[:100], y[:100], sample_weight=ones[:100])
            assert np.array_equal(_released(a), _released(b))


def _explicit_gradient(Z, y, c, w, b, loss, h, intercept=True):
    """``(1/n) sum_i c_i f'(r_i) (z_i, 1)`` in plain numpy, on clipped rows."""
    r = Z @ w + b - y
    d = {"squared": r, "absolute": np.sign(r), "huber": np.clip(r, -h, h)}[loss] * c
    g = Z.T @ d / len(y)
    return np.append(g, d.sum() / len(y)) if intercept else g


@pytest.mark.parametrize("loss", ["squared", "absolute", "huber"])
def test_weighted_gradient_is_the_weighted_mean(loss):
    X, dense, y = _data(seed=3, scale=4.0)
    rng = np.random.default_rng(0)
    c = rng.uniform(size=len(y))
    c[:30] = 0.0
    data_norm, y_bound = 1.1, 0.9
    scales = md.clip_data(dense, y, data_norm=data_norm, y_bound=y_bound,
                          use_gram=False).scales
    Z = dense * scales[:, None]
    yc = np.clip(y, -y_bound, y_bound)
    for _ in range(4):
        w, b = rng.normal(size=dense.shape[1]) * 0.2, rng.uniform(-0.5, 0.5)
        expected = _explicit_gradient(Z, yc, c, w, b, loss, 0.4)
        paths = [False, True] if loss == "squared" else [False]
        for data in (dense, X):
            for gram in paths:
                clipped = md.clip_data(data, y, data_norm=data_norm, y_bound=y_bound,
                                       use_gram=gram, sample_weight=c)
                got = md.averaged_gradient(clipped, w, b, loss, 0.4)
                assert_allclose(got, expected, rtol=1e-10, atol=1e-14)


def test_weights_change_the_model_and_dense_equals_csr():
    X, dense, y = _data(seed=4)
    c = np.random.default_rng(1).uniform(size=len(y))
    for params in VARIANTS:
        kw = dict(epsilon=np.inf, random_state=0, **params)
        a = PrivateMirrorDescentRegressor(**kw).fit(dense, y, sample_weight=c)
        b = PrivateMirrorDescentRegressor(**kw).fit(X, y, sample_weight=c)
        assert_allclose(_released(b), _released(a), rtol=0, atol=1e-12)
        plain = PrivateMirrorDescentRegressor(**kw).fit(dense, y)
        assert not np.allclose(_released(a), _released(plain))


def test_weighted_fit_reaches_the_weighted_optimum():
    """Noiseless: the weighted least squares, not the unweighted one.

    Two halves follow different linear models; the weights (1 and 0.02)
    select the first."""
    rng = np.random.default_rng(5)
    n, p = 400, 5
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    first = np.arange(n) < n // 2
    y = np.where(first, X @ np.array([0.5, -0.3, 0.2, 0.0, 0.1]),
                 X @ np.array([-0.4, 0.3, 0.0, 0.2, 0.0]))
    c = np.where(first, 1.0, 0.02)
    model = PrivateMirrorDescentRegressor(epsilon=np.inf, radius=1.0, data_norm=1.0,
                                          y_bound=1.0, max_iter=20000, **MD)
    model.fit(X, y, sample_weight=c)
    A = np.column_stack([X, np.ones(n)])
    sw = np.sqrt(c)
    weighted = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)[0]
    unweighted = np.linalg.lstsq(A, y, rcond=None)[0]
    assert np.linalg.norm(_released(model) - weighted) < 0.01
    assert np.linalg.norm(_released(model) - unweighted) > 0.3


@pytest.mark.parametrize("bad", [np.r_[1.5, np.ones(299)], np.r_[-0.1, np.ones(299)],
                                 np.r_[np.nan, np.ones(299)], np.ones(5)])
def test_bad_weights_raise_before_any_work(bad):
    X, dense, y = _data()
    est = PrivateMirrorDescentRegressor()
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=bad)
    assert not hasattr(est, "coef_")
    reg = PrivateMirrorDescentRegressor(random_state=0, max_iter=50).partial_fit(dense, y)
    before = _released(reg)
    with pytest.raises(ValueError, match="sample_weight"):
        reg.partial_fit(dense, y, sample_weight=bad)
    assert np.array_equal(_released(reg), before)


@pytest.mark.parametrize("loss", ["squared", "absolute", "huber"])
@pytest.mark.parametrize("constraint", ["l2", "l1", "simplex"])
def test_weighted_neighbours_move_the_gradient_within_2L_over_n(loss, constraint):
    """Noise off: the released vector (the mean gradient) of neighbouring data sets,
    the replaced record's weight included, differs by at most the sensitivity."""
    rng = np.random.default_rng(7)
    n, p, radius, data_norm, y_bound, h = 12, 4, 1.5, 1.2, 0.8, 0.5
    derivative = md.derivative_bound(loss, h, radius, data_norm, y_bound, True)
    bound = md.gradient_sensitivity(md.lipschitz_constant(derivative, data_norm, True), n)
    potential = md.make_potential(constraint, p)
    worst = 0.0
    for _ in range(40):
        X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
        X[rng.uniform(size=X.shape) < 0.4] = 0.0
        y = rng.normal(size=n) * 2
        c = rng.uniform(size=n)
        X2, y2, c2 = X.copy(), y.copy(), c.copy()
        i = rng.integers(n)
        X2[i] = rng.choice([-1e3, 1e3], size=p) * rng.uniform(size=p)
        y2[i] = rng.choice([-1e3, 1e3])
        c2[i] = rng.choice([0.0, 1.0, rng.uniform()])
        c[i] = rng.choice([0.0, 1.0, c[i]])
        for _ in range(3):
            w = radius * potential.step(rng.normal(size=p) * 5)
            b = y_bound * rng.uniform(-1, 1)
            for first, second in ((X, X2), (sp.csr_matrix(X), sp.csr_matrix(X2))):
                for gram in ([False, True] if loss == "squared" else [False]):
                    g = [md.averaged_gradient(
                        md.clip_data(data, target, data_norm=data_norm, y_bound=y_bound,
                                     use_gram=gram, sample_weight=weights), w, b, loss, h)
                        for data, target, weights in ((first, y, c), (second, y2, c2))]
                    moved = np.linalg.norm(g[1] - g[0])
                    assert moved <= bound * (1 + 1e-12)
                    worst = max(worst, moved / bound)
    assert worst > 0.25  # not vacuous: weight-1 pairs with opposite residuals come close

