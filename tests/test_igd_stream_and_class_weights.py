"""PrivateIGDClassifier: sample_weight in partial_fit (both streams) and public class_weight.

``doc/privacy.md``, "Sparse input and sample weights for mirror descent; weights
in the IGD streams; class weights": a weight in [0, 1] multiplies a record's
loss, the weight is part of the replaced record, and the sensitivities are
unchanged.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core import ftrl, igd

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn_dpol.exceptions.DefaultBoundWarning")

STREAMS = [dict(stream="ftrl"), dict(stream="iterate_perturbation", horizon=2000)]


def _data(n=240, p=6, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
    X[rng.uniform(size=X.shape) < 0.4] = 0.0
    score = X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _released(est):
    return np.append(np.ravel(est.coef_), est.intercept_)


@pytest.mark.parametrize("stream", STREAMS)
@pytest.mark.parametrize("epsilon", [np.inf, 1.5])
def test_partial_fit_unit_weights_are_unweighted_bitwise(stream, epsilon):
    X, y = _data()
    for data in (X, sp.csr_matrix(X)):
        kw = dict(epsilon=epsilon, random_state=0, classes=[0, 1], **stream)
        a, b = PrivateIGDClassifier(**kw), PrivateIGDClassifier(**kw)
        for lo in range(0, 240, 80):
            a.partial_fit(data[lo:lo + 80], y[lo:lo + 80])
            b.partial_fit(data[lo:lo + 80], y[lo:lo + 80], sample_weight=np.ones(80))
            assert np.array_equal(_released(a), _released(b))


@pytest.mark.parametrize("stream", STREAMS)
def test_partial_fit_weights_change_the_model_dense_equals_csr(stream):
    X, y = _data(seed=1)
    c = np.random.default_rng(0).uniform(size=len(y))
    kw = dict(epsilon=np.inf, random_state=0, classes=[0, 1], **stream)
    a, b, plain = (PrivateIGDClassifier(**kw) for _ in range(3))
    for lo in range(0, 240, 120):
        rows = slice(lo, lo + 120)
        a.partial_fit(X[rows], y[rows], sample_weight=c[rows])
        b.partial_fit(sp.csr_matrix(X[rows]), y[rows], sample_weight=c[rows])
        plain.partial_fit(X[rows], y[rows])
        assert_allclose(_released(b), _released(a), rtol=1e-9, atol=1e-12)
    assert not np.allclose(_released(a), _released(plain))


@pytest.mark.parametrize("bad", [np.r_[1.5, np.ones(79)], np.r_[-0.1, np.ones(79)],
                                 np.r_[np.nan, np.ones(79)], np.ones(5)])
@pytest.mark.parametrize("stream", STREAMS)
def test_partial_fit_bad_weights_raise_and_leave_the_stream(bad, stream):
    X, y = _data()
    clf = PrivateIGDClassifier(random_state=0, classes=[0, 1], **stream)
    clf.partial_fit(X[:80], y[:80])
    before = _released(clf)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.partial_fit(X[80:160], y[80:160], sample_weight=bad)
    assert np.array_equal(_released(clf), before)
    clf.partial_fit(X[80:160], y[80:160])  # the stream continues


def _neighbours(rng, n, p, count):
    for _ in range(count):
        X = rng.normal(size=(n, p)) * rng.choice([0.3, 3.0], size=(n, 1))
        X[rng.uniform(size=X.shape) < 0.4] = 0.0
        y = rng.integers(0, 3, n)
        c = rng.uniform(size=n)
        X2, y2, c2 = X.copy(), y.copy(), c.copy()
        i = rng.integers(n)
        X2[i] = rng.normal(size=p) * 5
        y2[i] = rng.integers(0, 3)
        c2[i] = rng.choice([0.0, 1.0, rng.uniform()])
        c[i] = rng.choice([1.0, c[i]])
        yield (X, y, c), (X2, y2, c2)


@pytest.mark.parametrize("gradient_norm", [None, 0.3])
@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2]])
def test_ftrl_weighted_gradient_sums_move_within_the_step_sensitivity(gradient_norm, classes):
    """Noise off: what the prefix-sum mechanism reads moves by at most its sensitivity."""
    rng = np.random.default_rng(3)
    n, p = 20, 4
    clf = PrivateIGDClassifier(classes=classes, data_norm=1.3, gradient_bound=gradient_norm)
    clf.n_features_in_ = p      # as fitted: intercept_scaling="auto" is 1.3 / sqrt(p)
    intercept_value, lipschitz = clf._geometry()
    assert intercept_value == 1.3 / np.sqrt(p)
    n_problems = 1 if len(classes) == 2 else len(classes)
    bound = ftrl.step_sensitivity(lipschitz, n_problems, gradient_norm)
    clf.classes_ = np.asarray(classes)
    worst = 0.0
    for first, second in _neighbours(rng, n, p, 40):
        W = rng.normal(size=(n_problems, p + 1)) * 2
        for sparse in (False, True):
            sums = []
            for X, y, c in (first, second):
                data = sp.csr_matrix(X) if sparse else X
                from sklearn_dpol._core._clip import clip_row_scales

                scale, _ = clip_row_scales(data, 1.3)
                sums.append(ftrl.gradient_sums(
                    W, data, scale, clf._signed_targets(y), loss="log_loss",
                    intercept_value=intercept_value, gradient_bound=gradient_norm,
                    sample_weight=c))
            moved = np.linalg.norm(sums[1] - sums[0])
            assert moved <= bound
            worst = max(worst, moved / bound)
    assert worst > 0.1


@pytest.mark.parametrize("update", ["implicit", "gradient"])
def test_iterate_perturbation_weighted_neighbours_within_sensitivity(update):
    rng = np.random.default_rng(11)
    n, p = 40, 5
    kw = dict(random_state=0, classes=[0, 1], alpha=0.5 if update == "gradient" else 1e-3,
              update=update, stream="iterate_perturbation", horizon=n)
    reference = PrivateIGDClassifier(epsilon=1.0, **kw)
    worst = 0.0
    for (X, y, c), (X2, y2, c2) in _neighbours(rng, n, p, 20):
        y, y2 = y % 2, y2 % 2
        reference.partial_fit(X, y, sample_weight=c)
        bound = reference.sensitivity_
        reference = PrivateIGDClassifier(epsilon=1.0, **kw)
        for data, data2 in ((X, X2), (sp.csr_matrix(X), sp.csr_matrix(X2))):
            a = PrivateIGDClassifier(epsilon=np.inf, **kw).partial_fit(data, y, sample_weight=c)
            b = PrivateIGDClassifier(epsilon=np.inf, **kw).partial_fit(data2, y2,
                                                                       sample_weight=c2)
            scale = a.intercept_scaling_
            moved = np.linalg.norm(np.append(a.coef_ - b.coef_,
                                             (a.intercept_ - b.intercept_) / scale))
            assert moved <= bound * (1 + 1e-9)
            worst = max(worst, moved / bound)
    assert worst > 0.01
    lipschitz = igd.loss_lipschitz(1.0, 1 / np.sqrt(p))   # "auto": data_norm / sqrt(p)
    assert bound == pytest.approx(igd.release_sensitivity(lipschitz, kw["alpha"], update,
                                                          n, 1))


# -- class_weight ------------------------------------------------------------------


def test_class_weight_is_scaled_per_record_weights():
    X, y = _data(n_classes=3, seed=2)
    kw = dict(epsilon=np.inf, random_state=0, classes=[0, 1, 2], max_iter=2)
    weights = {0: 2.0, 1: 0.5}          # class 2 left out: weight 1
    per_record = np.select([y == 0, y == 1], [1.0, 0.25], 0.5)
    c = np.random.default_rng(0).uniform(size=len(y))
    for data in (X, sp.csr_matrix(X)):
        a = PrivateIGDClassifier(class_weight=weights, **kw).fit(data, y, sample_weight=c)
        b = PrivateIGDClassifier(**kw).fit(data, y, sample_weight=per_record * c)
        assert np.array_equal(_released(a), _released(b))
    # Only the ratios matter: the weights are divided by their maximum.
    d = PrivateIGDClassifier(class_weight={0: 8.0, 1: 2.0, 2: 4.0}, **kw).fit(X, y)
    e = PrivateIGDClassifier(class_weight={0: 1.0, 1: 0.25, 2: 0.5}, **kw).fit(X, y)
    assert np.array_equal(_released(d), _released(e))
    assert not np.allclose(_released(d), _released(PrivateIGDClassifier(**kw).fit(X, y)))


def test_class_weight_equal_weights_is_unweighted_and_sensitivity_unchanged():
    X, y = _data()
    kw = dict(epsilon=1.0, random_state=0, classes=[0, 1], alpha=1e-2)
    a = PrivateIGDClassifier(**kw).fit(X, y)
    b = PrivateIGDClassifier(class_weight={0: 3.0, 1: 3.0}, **kw).fit(X, y)
    assert np.array_equal(_released(a), _released(b))
    c = PrivateIGDClassifier(class_weight={0: 1000.0, 1: 1e-4}, **kw).fit(X, y)
    assert c.sensitivity_ == a.sensitivity_ and c.noise_scale_ == a.noise_scale_
    for stream in STREAMS:
        s = PrivateIGDClassifier(class_weight={0: 0.2, 1: 0.6}, **{**kw, **stream})
        t = PrivateIGDClassifier(**{**kw, **stream})
        s.partial_fit(X[:100], y[:100])
        t.partial_fit(X[:100], y[:100], sample_weight=np.where(y[:100] == 0, 1 / 3, 1.0))
        assert_allclose(_released(s), _released(t), rtol=1e-12, atol=1e-15)


def test_class_weight_refusals_are_clear_and_before_reading_data():
    X, y = _data()
    for params, match in [
        (dict(class_weight="balanced"), "label counts of the private data|counted on the "
                                        "private data"),
        (dict(class_weight={0: -1.0}), "finite and >= 0"),
        (dict(class_weight={0: 0.0, 1: 0.0}), "positive weight"),
        (dict(class_weight={5: 1.0}), "not classes"),
        (dict(class_weight={0: 10**400, 1: 1.0}), "must be numbers"),   # was OverflowError
    ]:
        clf = PrivateIGDClassifier(classes=[0, 1], **params)
        with pytest.raises(ValueError, match=match):
            clf.fit(X, y)
        assert not hasattr(clf, "coef_")
