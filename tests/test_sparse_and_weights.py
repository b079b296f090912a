"""Sparse CSR input and sample weights in [0, 1] (issue 18, items 1 and 2).

Sparse input must give the dense input's model (exactly the same arithmetic up
to the order of a row's additions), and weights the sensitivity derived in
``doc/privacy.md``, "Sparse input and sample weights".
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor
from sklearn_dpol._core import igd


def _data(n=200, p=30, density=0.15, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=seed, format="csr") * scale
    X.data -= scale / 2  # signed entries, some rows above the clipping norm
    dense = X.toarray()
    labels = (dense @ rng.standard_normal(p) > 0).astype(int)
    targets = np.clip(dense @ rng.standard_normal(p) * 0.3, -1.5, 1.5)
    return X, dense, labels, targets


def _released(est):
    return np.append(np.ravel(est.coef_), est.intercept_)


# solver="igd" by name: the default "auto" fits dense log-loss X by objective perturbation.
IGD_VARIANTS = [
    dict(solver="igd"),
    dict(loss="hinge", fit_intercept=False),
    dict(update="gradient", alpha=0.5),
]


@pytest.mark.parametrize("params", IGD_VARIANTS)
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_igd_csr_equals_dense(params, epsilon):
    X, dense, y, _ = _data()
    kwargs = dict(epsilon=epsilon, random_state=3, classes=[0, 1], max_iter=3, **params)
    a = PrivateIGDClassifier(**kwargs).fit(dense, y)
    b = PrivateIGDClassifier(**kwargs).fit(X, y)
    assert_allclose(_released(b), _released(a), rtol=1e-10, atol=1e-13)
    # The default partial_fit stream (DP-FTRL) from CSR, then iterate perturbation.
    a.partial_fit(dense[:50], y[:50])
    b.partial_fit(X[:50], y[:50])
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    assert_allclose(b.predict_proba(X) if params.get("loss") != "hinge" else
                    b.decision_function(X),
                    a.predict_proba(dense) if params.get("loss") != "hinge" else
                    a.decision_function(dense), rtol=1e-9, atol=1e-12)


def test_igd_csr_iterate_perturbation_stream_and_multiclass():
    X, dense, y, _ = _data(seed=1)
    y3 = y + (dense[:, 0] > 0.2)
    kwargs = dict(epsilon=2.0, random_state=0, stream="iterate_perturbation",
                  horizon=400)
    a, b = PrivateIGDClassifier(**kwargs), PrivateIGDClassifier(**kwargs)
    for lo in range(0, 200, 100):
        a.partial_fit(dense[lo:lo + 100], y3[lo:lo + 100], classes=[0, 1, 2])
        b.partial_fit(X[lo:lo + 100], y3[lo:lo + 100], classes=[0, 1, 2])
        assert_allclose(b.coef_, a.coef_, rtol=1e-10, atol=1e-13)


def test_other_sparse_formats_are_converted_and_input_not_modified():
    X, dense, y, _ = _data(seed=2)
    a = PrivateIGDClassifier(solver="igd", random_state=0, classes=[0, 1]).fit(dense, y)
    for matrix in (X.tocoo(), X.tocsc(), sp.csr_array(X)):
        b = PrivateIGDClassifier(solver="igd", random_state=0, classes=[0, 1]).fit(matrix, y)
        assert_allclose(b.coef_, a.coef_, rtol=1e-10, atol=1e-13)
    # Duplicate entries (non-canonical CSR) are summed, on a copy.
    dup = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 0]), np.array([0, 2])),
                        shape=(1, 3))
    assert not dup.has_canonical_format
    reg = PrivateQFTLRegressor(epsilon=np.inf, data_norm=2.0, fit_intercept=False)
    reg.fit(sp.vstack([dup, dup]).tocsr(), np.ones(2))
    ref = PrivateQFTLRegressor(epsilon=np.inf, data_norm=2.0, fit_intercept=False)
    ref.fit(np.array([[3.0, 0, 0], [3.0, 0, 0]]), np.ones(2))
    assert_allclose(reg.coef_, ref.coef_, rtol=1e-12)
    assert dup.data.tolist() == [1.0, 2.0]


def test_objective_perturbation_takes_sparse_x():
    """Session 33 (helper S): objective perturbation reads CSR through sparse products
    (it refused sparse X before); the model is the dense input's, weighted or not
    (tests/test_s33s_sparse_objective_perturbation.py has the full set)."""
    X, dense, y, _ = _data()
    for weights in (None, np.linspace(0.0, 1.0, len(y))):
        kwargs = dict(solver="objective_perturbation", classes=[0, 1], random_state=0)
        a = PrivateIGDClassifier(**kwargs).fit(dense, y, sample_weight=weights)
        b = PrivateIGDClassifier(**kwargs).fit(X, y, sample_weight=weights)
        assert b.solver_ == "objective_perturbation"
        assert_allclose(_released(b), _released(a), rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("params", [dict(), dict(fit_intercept=False),
                                    dict(prefix_sums="tree", horizon=1000)])
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_qftl_csr_equals_dense(params, epsilon):
    X, dense, _, y = _data(p=12)
    kwargs = dict(epsilon=epsilon, random_state=5, data_norm=1.5, y_bound=1.0, **params)
    a = PrivateQFTLRegressor(**kwargs).fit(dense, y)
    b = PrivateQFTLRegressor(**kwargs).fit(X, y)
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    for lo in (0, 60):
        a.partial_fit(dense[lo:lo + 60], y[lo:lo + 60])
        b.partial_fit(X[lo:lo + 60], y[lo:lo + 60])
        assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    assert_allclose(b.predict(X), a.predict(dense), rtol=1e-9, atol=1e-12)


def test_qftl_csr_never_densifies_x(monkeypatch):
    """fit on CSR never calls toarray/todense on the data matrix (tree atoms aside)."""
    X, dense, _, y = _data(p=12)
    called = []
    for cls in (sp.csr_matrix, sp.csc_matrix):
        for name in ("toarray", "todense"):
            original = getattr(cls, name)

            def spy(self, *args, _original=original, **kw):
                if self.shape[0] == X.shape[0]:  # the data, not the (p, p) gram
                    called.append(self.shape)
                return _original(self, *args, **kw)

            monkeypatch.setattr(cls, name, spy)
    PrivateQFTLRegressor(random_state=0).fit(X, y)
    PrivateIGDClassifier(random_state=0, classes=[0, 1]).fit(X, (y > 0).astype(int))
    assert called == []


def test_clipping_reads_stored_entries_only():
    from sklearn_dpol._core._clip import clip_row_scales

    X, dense, _, _ = _data(n=300, p=50, scale=5.0)
    huge = sp.csr_matrix(np.array([[1e300, 0.0, -1e300], [1e-300, 0.0, 0.0], [0, 0, 0.0]]))
    for sparse, full in ((X, dense), (huge, huge.toarray())):
        s1, q1 = clip_row_scales(sparse, 1.0)
        s2, q2 = clip_row_scales(full, 1.0)
        assert_allclose(s1, s2, rtol=1e-14)
        assert_allclose(q1, q2, rtol=1e-14)
        clipped = sparse.multiply(s1[:, None]).tocsr()
        assert np.all(np.sqrt(np.asarray(clipped.multiply(clipped).sum(1)).ravel()) <= 1.0)


# -- sample weights ---------------------------------------------------------------


def test_unit_weights_are_the_unweighted_fit_bitwise():
    X, dense, y, t = _data()
    ones = np.ones(len(y))
    for data in (dense, X):
        for params in IGD_VARIANTS:
            kw = dict(random_state=0, classes=[0, 1], max_iter=2, **params)
            a = PrivateIGDClassifier(**kw).fit(data, y)
            b = PrivateIGDClassifier(**kw).fit(data, y, sample_weight=ones)
            assert np.array_equal(_released(a), _released(b))
        a = PrivateQFTLRegressor(random_state=0).fit(data, t)
        b = PrivateQFTLRegressor(random_state=0).fit(data, t, sample_weight=ones)
        assert np.array_equal(_released(a), _released(b))
        a.partial_fit(data, t)
        b.partial_fit(data, t, sample_weight=ones)
        assert np.array_equal(_released(a), _released(b))


def test_weights_act_like_scaled_losses():
    """Weight 0 removes a record's loss (QFTL: its statistics), dense equals CSR."""
    X, dense, y, t = _data(seed=4)
    w = np.random.default_rng(0).uniform(size=len(y))
    w[:20] = 0.0
    a = PrivateQFTLRegressor(epsilon=np.inf, fit_intercept=True).fit(dense, t, sample_weight=w)
    b = PrivateQFTLRegressor(epsilon=np.inf, fit_intercept=True).fit(X, t, sample_weight=w)
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    # Exact weighted ridge: (n alpha I + sum w v v^T)^{-1} sum w y v on clipped rows.
    reg = PrivateQFTLRegressor(epsilon=np.inf, fit_intercept=False, data_norm=1e3,
                               y_bound=1e3, alpha=0.05)
    reg.fit(dense, t, sample_weight=w)
    V = (dense * w[:, None]).T @ dense
    u = dense.T @ (w * t)
    expected = np.linalg.solve(len(t) * 0.05 * np.eye(dense.shape[1]) + V, u)
    assert_allclose(reg.coef_, expected, rtol=1e-8, atol=1e-10)
    for params in IGD_VARIANTS:
        kw = dict(epsilon=np.inf, random_state=0, classes=[0, 1], max_iter=2, **params)
        c = PrivateIGDClassifier(**kw).fit(dense, y, sample_weight=w)
        d = PrivateIGDClassifier(**kw).fit(X, y, sample_weight=w)
        assert_allclose(_released(d), _released(c), rtol=1e-10, atol=1e-13)
        e = PrivateIGDClassifier(**kw).fit(dense, y)
        assert not np.allclose(_released(c), _released(e))


@pytest.mark.parametrize("bad", [np.r_[1.5, np.ones(199)], np.r_[-0.1, np.ones(199)],
                                 np.r_[np.nan, np.ones(199)], np.ones(5)])
def test_bad_weights_raise_before_any_work(bad):
    X, dense, y, t = _data()
    for est, target in ((PrivateIGDClassifier(classes=[0, 1]), y),
                        (PrivateQFTLRegressor(), t)):
        with pytest.raises(ValueError, match="sample_weight"):
            est.fit(X, target, sample_weight=bad)
        assert not hasattr(est, "coef_")
    reg = PrivateQFTLRegressor(random_state=0).partial_fit(dense, t)
    before = _released(reg)
    with pytest.raises(ValueError, match="sample_weight"):
        reg.partial_fit(dense, t, sample_weight=bad)
    assert np.array_equal(_released(reg), before)


def _neighbour_pairs(rng, n, p, count):
    """Data sets differing in one record, the record's weight included."""
    for _ in range(count):
        X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
        X[rng.uniform(size=X.shape) < 0.5] = 0.0
        y = rng.integers(0, 2, n)
        w = rng.uniform(size=n)
        X2, y2, w2 = X.copy(), y.copy(), w.copy()
        i = rng.integers(n)
        X2[i] = rng.normal(size=p) * 5
        y2[i] = 1 - y[i]
        w2[i] = rng.choice([0.0, 1.0, rng.uniform()])
        yield i, (X, y, w), (X2, y2, w2)


def test_qftl_weighted_neighbours_move_statistics_within_sensitivity():
    rng = np.random.default_rng(7)
    reg = PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, intercept_scaling=0.7)
    worst = 0.0
    for i, (X, _, w), (X2, _, w2) in _neighbour_pairs(rng, 30, 4, 60):
        t = rng.uniform(-3, 3, size=len(w))
        t2 = t.copy()
        t2[i] = rng.choice([-3.0, 3.0, rng.uniform(-3, 3)])
        for data, data2 in ((X, X2), (sp.csr_matrix(X), sp.csr_matrix(X2))):
            a = reg._statistics(data, t, w)
            b = reg._statistics(data2, t2, w2)
            distance = np.linalg.norm(a.sum(0, a.n_rows) - b.sum(0, b.n_rows))
            assert distance <= reg.sensitivity()
            worst = max(worst, distance / reg.sensitivity())
    # The weight's endpoints are the extreme points: a weight-1 pair can come close.
    assert worst > 0.3


@pytest.mark.parametrize("params", IGD_VARIANTS)
def test_igd_weighted_neighbours_move_iterates_within_sensitivity(params):
    rng = np.random.default_rng(11)
    n, p, passes = 40, 5, 2
    # a fixed alpha: alpha="auto" resolves differently at epsilon=1 and epsilon=inf
    kw = dict(random_state=0, classes=[0, 1], max_iter=passes, shuffle=False,
              **{"alpha": 1e-3, **params})
    reference = PrivateIGDClassifier(epsilon=1.0, **kw)
    worst = 0.0
    for _, (X, y, w), (X2, y2, w2) in _neighbour_pairs(rng, n, p, 25):
        reference.fit(X, y, sample_weight=w)
        bound = reference.sensitivity_
        for data, data2 in ((X, X2), (sp.csr_matrix(X), sp.csr_matrix(X2))):
            a = PrivateIGDClassifier(epsilon=np.inf, **kw).fit(data, y, sample_weight=w)
            b = PrivateIGDClassifier(epsilon=np.inf, **kw).fit(data2, y2, sample_weight=w2)
            scale = a.intercept_scaling_ if a.fit_intercept else 1.0
            moved = np.linalg.norm(np.append(a.coef_ - b.coef_,
                                             (a.intercept_ - b.intercept_) / scale))
            assert moved <= bound * (1 + 1e-9)
            worst = max(worst, moved / bound)
    assert worst > 0.01
    # intercept_scaling="auto": data_norm / sqrt(p) (doc/privacy.md 55.16).
    lipschitz = igd.loss_lipschitz(1.0, 1 / np.sqrt(p) if kw.get("fit_intercept", True) else 0.0)
    assert bound == pytest.approx(igd.release_sensitivity(
        lipschitz, reference.alpha_, reference.update, n * passes, passes))


# -- Frank-Wolfe -------------------------------------------------------------------


@pytest.mark.parametrize("params", [
    dict(),
    dict(selection="gaussian", positive=True, fit_intercept=False, step_size="constant"),
    dict(max_iter=20),   # p = 3000 and few steps: columns on demand, no Gram matrix
])
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_frank_wolfe_csr_equals_dense(params, epsilon):
    from sklearn_dpol import PrivateFrankWolfeLasso
    from sklearn_dpol._core import frank_wolfe as fw

    p = 3000 if params.get("max_iter") == 20 else 30
    X = sp.random(300, p, density=min(0.2, 30 / p), random_state=1, format="csr") * 4
    X.data -= 2.0   # entries above feature_bound=1 are clipped
    dense = X.toarray()
    y = np.clip(dense[:, 0] * 0.3 - dense[:, 1] * 0.2 + 0.1, -1, 1)
    assert fw.use_gram(p + 1, 20) is (p < 200)
    kwargs = dict(epsilon=epsilon, random_state=0, **params)
    a = PrivateFrankWolfeLasso(**kwargs).fit(dense, y)
    b = PrivateFrankWolfeLasso(**kwargs).fit(X, y)
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    assert_allclose(b.predict(X), a.predict(dense), rtol=1e-9, atol=1e-12)
    a.partial_fit(dense, y)
    b.partial_fit(X.tocoo(), y)
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    assert np.array_equal(X.data, sp.random(300, p, density=min(0.2, 30 / p), random_state=1,
                                            format="csr").data * 4 - 2.0)  # not modified


def test_csr_duplicates_that_overflow_when_summed_are_refused_and_refunded():
    """Two stored duplicates of 1e308 pass scikit-learn's finiteness check (it reads the
    stored entries) and sum to inf in canonical_csr: the row's clipping scale became NaN
    and the release moved by 2.3x the sensitivity (IGD), QFTL failed after reading the
    data (charged), mirror descent released NaN (the ninth review). Refused now, during
    validation; the caller's matrix is untouched."""
    from scipy.sparse import csr_matrix

    from sklearn_dpol import (PrivateFrankWolfeLasso, PrivateIGDClassifier,
                              PrivateMirrorDescentRegressor, PrivateQFTLRegressor)
    from sklearn_dpol.privacy import PrivacyAccountant

    rng = np.random.default_rng(0)
    dense = rng.uniform(-0.5, 0.5, (30, 3))
    data, indices, indptr = [1e308, 1e308], [0, 0], [0]   # (0, 0) stored twice
    for i in range(30):
        if i:
            data += list(dense[i])
            indices += [0, 1, 2]
        indptr.append(len(data))
    X = csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=(30, 3))
    assert not X.has_canonical_format
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = np.clip(dense[:, 0], -1, 1)
    c = (y > 0).astype(int)
    acc = PrivacyAccountant(epsilon=20.0, delta=1e-5)
    for est, t in ((PrivateIGDClassifier(classes=[0, 1], accountant=acc), c),
                   (PrivateQFTLRegressor(accountant=acc), y),
                   (PrivateMirrorDescentRegressor(accountant=acc), y),
                   (PrivateFrankWolfeLasso(max_iter=3, accountant=acc), y)):
        for method in ("fit", "partial_fit"):
            with pytest.raises(ValueError, match="duplicate"):
                getattr(est, method)(X, t)
    assert acc.spent().n_charges == 0
    for now, then in zip((X.data, X.indices, X.indptr), before):
        np.testing.assert_array_equal(now, then)


def test_a_stale_canonical_flag_is_not_trusted():
    """scipy caches has_canonical_format on the matrix; an in-place edit of indices left it
    stale and the duplicates unsummed (a row under-clipped by sqrt(k)); canonicity is now
    decided afresh."""
    from scipy.sparse import csr_matrix

    from sklearn_dpol._core._weights import canonical_csr

    X = csr_matrix(np.array([[0.3, 0.4, 0.0], [0.0, 0.0, 0.5]]))
    assert X.has_canonical_format                     # cached
    X.indices[1] = 0                                  # row 0 now stores column 0 twice
    out = canonical_csr(X)
    assert out is not X
    np.testing.assert_allclose(out.toarray(), [[0.7, 0.0, 0.0], [0.0, 0.0, 0.5]])


@pytest.mark.parametrize("weights", [np.full(30, 0.5 + 2j), np.array([10**400] * 30,
                                                                       dtype=object)])
def test_complex_or_overflowing_weights_are_refused(weights):
    from sklearn_dpol import PrivateQFTLRegressor

    X = np.random.default_rng(0).uniform(-0.5, 0.5, (30, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(ValueError, match="sample_weight must be numeric"):
            PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0).fit(X, X[:, 0],
                                                                 sample_weight=weights)
