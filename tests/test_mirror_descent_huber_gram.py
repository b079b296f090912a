"""Mirror descent's Huber loss on the Gram matrix (issue 19, item 2).

The Huber gradient is the squared loss's (from the Gram statistics) minus a
correction over candidate rows; it must be the row kernel's gradient (same
function of the data, so the same sensitivity ``2L/n``), and the candidate
rule must never miss a row with ``|r| > h`` (``doc/privacy.md``, "Mirror
descent's Huber loss on the Gram matrix").
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateMirrorDescentRegressor
from sklearn_dpol._core import _md_kernels as kernels
from sklearn_dpol._core import mirror_descent as md

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_dpol.exceptions.DefaultBoundWarning")


def _data(n=400, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.choice([0.3, 1.5], size=(n, 1))
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    y = X @ rng.normal(size=p) * 0.4 + 0.5 * rng.standard_t(2, size=n)
    return X, y


def test_the_path_is_a_public_choice():
    assert md.use_huber_gram("huber", 10_000, 20, 2000, huber_threshold=1.0, radius=1.0,
                             data_norm=1.0, y_bound=1.0, intercept=True)
    kw = dict(huber_threshold=1.0, radius=1.0, data_norm=1.0, y_bound=1.0, intercept=True)
    assert not md.use_huber_gram("squared", 10_000, 20, 2000, **kw)
    assert not md.use_huber_gram("absolute", 10_000, 20, 2000, **kw)
    assert not md.use_huber_gram("huber", 10, 20, 1, **kw)          # the rows are cheaper
    # Bounds so large against h that a residual's rounding could reach the margin.
    assert not md.use_huber_gram("huber", 10_000, 20, 2000, huber_threshold=1e-7,
                                 radius=1.0, data_norm=1.0, y_bound=1.0, intercept=True)


@pytest.mark.parametrize("fmt", ["dense", "csr", "float32"])
@pytest.mark.parametrize("weighted", [False, True])
def test_gram_gradient_is_the_row_gradient(fmt, weighted):
    X, y = _data()
    X = {"dense": X, "csr": sp.csr_matrix(X), "float32": X.astype(np.float32)}[fmt]
    rng = np.random.default_rng(1)
    c = rng.uniform(size=len(y)) if weighted else None
    rows = md.clip_data(X, y, data_norm=1.1, y_bound=1.3, use_gram=False, sample_weight=c)
    gram = md.clip_data(X, y, data_norm=1.1, y_bound=1.3, use_gram=True, sample_weight=c)
    outliers = 0
    for _ in range(6):
        w, b = rng.normal(size=X.shape[1]), rng.uniform(-1, 1)
        expected = md.averaged_gradient(rows, w, b, "huber", 0.4)
        assert_allclose(md.averaged_gradient(gram, w, b, "huber", 0.4), expected,
                        rtol=1e-11, atol=1e-14)
        r = rows.scales * (np.asarray(X, dtype=np.float64) @ w) + b - rows.y \
            if fmt != "csr" else None
        outliers += 0 if r is None else int(np.sum(np.abs(r) > 0.4))
    assert fmt == "csr" or outliers > 100  # the correction is exercised


def test_candidates_found_at_a_reference_cover_every_outlier_nearby():
    """The lemma of the path: rows with ``|r(w0, b0)| <= h - m`` have ``|r(w, b)| <= h``
    whenever ``R ||w - w0|| + |b - b0| < m``."""
    X, y = _data(n=2000, p=5, seed=2)
    data_norm, h = 1.0, 0.6
    data = md.clip_data(X, y, data_norm=data_norm, y_bound=2.0, use_gram=False)
    rows = md._row_arrays(data)
    rng = np.random.default_rng(3)
    margin = md.HUBER_GRAM_MARGIN * h
    cand = np.empty(len(y), dtype=np.int64)
    for _ in range(30):
        w0, b0 = rng.normal(size=5), rng.uniform(-1, 1)
        count = kernels.huber_candidates(*rows, False, data.scales, data.y, w0, b0,
                                         h - margin, cand)
        direction = rng.normal(size=6)
        direction /= data_norm * np.linalg.norm(direction[:5]) + abs(direction[5])
        w, b = w0 + 0.989 * margin * direction[:5], b0 + 0.989 * margin * direction[5]
        assert kernels._drift(w, b, np.append(w0, b0), data_norm) < 0.99 * margin
        r = data.scales * (X @ w) + b - data.y
        outliers = np.flatnonzero(np.abs(r) > h)
        assert set(outliers) <= set(cand[:count])
        assert count < len(y)  # not vacuous: some rows are left out


def _fit(X, y, gram, monkeypatch, **kw):
    """A fit on the Gram path, or (``gram=False``) with the same calibration (the Gram
    path's, noise on ``(1 + a) 2L/n``) on the row kernel: only the kernel differs."""
    with monkeypatch.context() as m:
        if not gram:
            clip = md.clip_data
            m.setattr(md, "clip_data",
                      lambda *a, use_gram, **k: clip(*a, use_gram=False, **k))
        return PrivateMirrorDescentRegressor(loss="huber", solver="mirror_descent",
                                             random_state=0, **kw).fit(X, y)


@pytest.mark.parametrize("kw", [
    dict(epsilon=np.inf, max_iter=3000, epsilon_huber=0.3, radius=3.0, step_size=0.05),
    dict(epsilon=1.0, epsilon_huber=0.3, radius=3.0, y_bound=2.0),
    dict(epsilon=2.0, constraint="l1", radius=2.0, epsilon_huber=0.2, max_iter=4000),
    dict(epsilon=1.0, constraint="simplex", radius=2.0, max_iter=4000),
])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_fit_on_the_gram_matrix_is_the_fit_on_the_rows(kw, fmt, monkeypatch):
    """Noise on or off, the two paths release the same model (the gradients agree to
    rounding, and the noise grid absorbs it), while the iterate crosses the threshold."""
    X, y = _data(n=3000, p=6, seed=4)
    X = sp.csr_matrix(X) if fmt == "csr" else X
    rows = _fit(X, y, False, monkeypatch, **kw)
    gram = _fit(X, y, True, monkeypatch, **kw)
    assert md.use_huber_gram("huber", 3000, 6, gram.max_iter_,
                             huber_threshold=gram.epsilon_huber, radius=gram.radius,
                             data_norm=gram.data_norm_, y_bound=gram.y_bound_, intercept=True)
    assert (gram.max_iter_, gram.step_size_, gram.noise_scale_) == \
        (rows.max_iter_, rows.step_size_, rows.noise_scale_)
    assert_allclose(np.append(gram.coef_, gram.intercept_),
                    np.append(rows.coef_, rows.intercept_), rtol=0, atol=1e-9)


def test_noise_off_neighbours_move_the_gram_gradient_within_2L_over_n():
    rng = np.random.default_rng(7)
    n, p, radius, data_norm, y_bound, h = 12, 4, 1.5, 1.2, 0.8, 0.5
    derivative = md.derivative_bound("huber", h, radius, data_norm, y_bound, True)
    bound = md.gradient_sensitivity(md.lipschitz_constant(derivative, data_norm, True), n)
    potential = md.make_potential("l2", p)
    worst = 0.0
    for _ in range(60):
        X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
        y = rng.normal(size=n) * 2
        c = rng.uniform(size=n)
        X2, y2, c2 = X.copy(), y.copy(), c.copy()
        i = rng.integers(n)
        X2[i] = rng.choice([-1e3, 1e3], size=p) * rng.uniform(size=p)
        y2[i] = rng.choice([-1e3, 1e3])
        c2[i] = rng.choice([1.0, rng.uniform()])
        for _ in range(3):
            w = radius * potential.step(rng.normal(size=p) * 5)
            b = y_bound * rng.uniform(-1, 1)
            for weights in (None, (c, c2)):
                g = [md.averaged_gradient(
                    md.clip_data(data, target, data_norm=data_norm, y_bound=y_bound,
                                 use_gram=True,
                                 sample_weight=None if weights is None else weights[k]),
                    w, b, "huber", h)
                    for k, (data, target) in enumerate(((X, y), (X2, y2)))]
                moved = np.linalg.norm(g[1] - g[0])
                assert moved <= bound * (1 + 1e-12)
                worst = max(worst, moved / bound)
    assert worst > 0.25  # not vacuous
