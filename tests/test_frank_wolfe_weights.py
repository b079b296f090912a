"""PrivateFrankWolfeLasso: sample_weight in [0, 1] in fit and partial_fit (issue 18, item 2).

A weight multiplies the record's squared loss (rows and targets by its square
root); the score and gradient sensitivities are unchanged, the weight being
part of the replaced record (``doc/privacy.md``, "Sparse input and sample
weights for mirror descent; ...").
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateFrankWolfeLasso
from sklearn_dpol._core import frank_wolfe as fw

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn_dpol.exceptions.DefaultBoundWarning")

VARIANTS = [
    dict(),
    dict(selection="gaussian", positive=True, fit_intercept=False, step_size="constant"),
    dict(max_iter=20),   # p = 3000, few steps: columns on demand, no Gram matrix
]


def _data(p=30, seed=1):
    X = sp.random(300, p, density=min(0.2, 30 / p), random_state=seed, format="csr") * 4
    X.data -= 2.0
    dense = X.toarray()
    y = np.clip(dense[:, 0] * 0.3 - dense[:, 1] * 0.2 + 0.1, -1, 1)
    return X, dense, y


def _released(est):
    return np.append(est.coef_, est.intercept_)


@pytest.mark.parametrize("params", VARIANTS)
@pytest.mark.parametrize("epsilon", [np.inf, 1.0])
def test_unit_weights_are_the_unweighted_fit_bitwise(params, epsilon):
    X, dense, y = _data(p=3000 if params.get("max_iter") == 20 else 30)
    ones = np.ones(len(y))
    for data in (dense, X):
        kw = dict(epsilon=epsilon, random_state=0, **params)
        a = PrivateFrankWolfeLasso(**kw).fit(data, y)
        b = PrivateFrankWolfeLasso(**kw).fit(data, y, sample_weight=ones)
        assert np.array_equal(_released(a), _released(b))
        a.partial_fit(data, y)
        b.partial_fit(data, y, sample_weight=ones)
        assert np.array_equal(_released(a), _released(b))


@pytest.mark.parametrize("params", VARIANTS)
def test_weighted_problem_is_the_weighted_least_squares(params):
    """The weighted objective and gradient in numpy; dense equals CSR; weights matter."""
    p = 3000 if params.get("max_iter") == 20 else 30
    X, dense, y = _data(p=p, seed=2)
    rng = np.random.default_rng(0)
    c = rng.uniform(size=len(y))
    c[:40] = 0.0
    intercept = params.get("fit_intercept", True)
    Z = np.clip(dense, -1.0, 1.0)
    if intercept:
        Z = np.column_stack([Z, np.ones(len(y))])
    yc = np.clip(y, -1, 1)
    for precompute in (False, True) if p == 30 else (False,):
        problems = [cls(data, y, feature_bound=1.0, y_bound=1.0, intercept=intercept,
                        precompute=precompute, sample_weight=c)
                    for cls, data in ((fw.ClippedLeastSquares, dense),
                                      (fw.SparseClippedLeastSquares, X))]
        for _ in range(3):
            theta = rng.normal(size=Z.shape[1]) * (rng.uniform(size=Z.shape[1]) < 0.05)
            r = Z @ theta - yc
            for problem in problems:
                assert_allclose(problem.gradient(theta), Z.T @ (c * r) / len(y),
                                rtol=1e-9, atol=1e-13)
                assert problem.loss(theta) == pytest.approx(0.5 * np.sum(c * r * r) / len(y),
                                                            rel=1e-10)
                j = int(rng.integers(Z.shape[1]))
                assert_allclose(problem.column(j), Z.T @ (c * Z[:, j]) / len(y),
                                rtol=1e-9, atol=1e-13)
    kw = dict(epsilon=np.inf, random_state=0, **params)
    a = PrivateFrankWolfeLasso(**kw).fit(dense, y, sample_weight=c)
    b = PrivateFrankWolfeLasso(**kw).fit(X, y, sample_weight=c)
    assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)


def test_weights_select_the_weighted_solution():
    """Two halves with different supports: the weights pick the first half's feature."""
    rng = np.random.default_rng(3)
    n, p = 600, 20
    X = rng.uniform(-1, 1, size=(n, p))
    first = np.arange(n) < n // 2
    y = np.where(first, 0.8 * X[:, 0], 0.8 * X[:, 1])
    kw = dict(epsilon=np.inf, radius=1.0, max_iter=300, fit_intercept=False)
    heavy_first = PrivateFrankWolfeLasso(**kw).fit(X, y, sample_weight=np.where(first, 1, 0.01))
    heavy_second = PrivateFrankWolfeLasso(**kw).fit(X, y, sample_weight=np.where(first, 0.01, 1))
    assert heavy_first.coef_[0] > 0.6 and abs(heavy_first.coef_[1]) < 0.1
    assert heavy_second.coef_[1] > 0.6 and abs(heavy_second.coef_[0]) < 0.1


@pytest.mark.parametrize("bad", [np.r_[1.5, np.ones(299)], np.r_[-0.1, np.ones(299)],
                                 np.r_[np.nan, np.ones(299)], np.ones(5)])
def test_bad_weights_raise_before_any_work(bad):
    X, dense, y = _data()
    est = PrivateFrankWolfeLasso()
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=bad)
    assert not hasattr(est, "coef_")
    reg = PrivateFrankWolfeLasso(random_state=0).partial_fit(dense, y)
    before = _released(reg)
    with pytest.raises(ValueError, match="sample_weight"):
        reg.partial_fit(dense, y, sample_weight=bad)
    assert np.array_equal(_released(reg), before)


@pytest.mark.parametrize("intercept", [True, False])
def test_weighted_neighbours_move_scores_and_gradient_within_sensitivity(intercept):
    """Noise off: every score (exponential selection) and the gradient (Gaussian
    selection) of neighbouring data sets, the weight included, within the bounds."""
    rng = np.random.default_rng(5)
    n, p, radius, B, Y = 15, 5, 2.0, 0.7, 0.9
    d = p + int(intercept)
    vertices = fw.make_vertices(d, radius, False, intercept)
    score_bound = fw.score_sensitivity(n, radius, B, Y)
    l2_bound = fw.gradient_sensitivity_l2(n, radius, B, Y, d)
    worst = 0.0
    for _ in range(40):
        X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
        X[rng.uniform(size=X.shape) < 0.4] = 0.0
        y = rng.normal(size=n) * 2
        c = rng.uniform(size=n)
        X2, y2, c2 = X.copy(), y.copy(), c.copy()
        i = rng.integers(n)
        X2[i] = rng.choice([-10.0, 10.0], size=p)
        y2[i] = rng.choice([-10.0, 10.0])
        c2[i] = rng.choice([0.0, 1.0, rng.uniform()])
        c[i] = rng.choice([1.0, c[i]])
        for _ in range(3):
            theta = rng.normal(size=d)
            theta *= radius / np.abs(theta).sum()
            for cls, first, second in ((fw.ClippedLeastSquares, X, X2),
                                       (fw.SparseClippedLeastSquares, sp.csr_matrix(X),
                                        sp.csr_matrix(X2))):
                for precompute in (False, True):
                    g = [cls(data, target, feature_bound=B, y_bound=Y, intercept=intercept,
                             precompute=precompute, sample_weight=weights).gradient(theta)
                         for data, target, weights in ((first, y, c), (second, y2, c2))]
                    scores = np.abs(vertices.scores(g[1]) - vertices.scores(g[0]))
                    assert scores.max() <= score_bound * (1 + 1e-12)
                    assert np.linalg.norm(g[1] - g[0]) <= l2_bound * (1 + 1e-12)
                    worst = max(worst, scores.max() / score_bound)
    assert worst > 0.3  # not vacuous
