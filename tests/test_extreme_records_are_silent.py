"""A finite but extreme record changes no warning (independent review, session 28).

The attacker who knows every other record compares the warnings of two
neighbouring fits: a warning raised only when one record is huge is a release
outside the guarantee. Each test fits neighbouring data sets, the second with one
record replaced by a finite value whose square (or scaled value) overflows, and
requires the same (empty) set of RuntimeWarnings. A positive control checks that
the record does overflow the unguarded computation.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline

from sklearn_dpol import (
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
)


def _runtime_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _neighbours(dtype, huge):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 4)).astype(dtype)
    y = rng.uniform(-1, 1, 200)
    X_prime = X.copy()
    X_prime[7] = [huge, huge, 0.0, 0.0]
    return X, X_prime, y


ESTIMATORS = {
    "qftl": lambda: PrivateQFTLRegressor(data_norm="auto", y_bound=1.0, random_state=0),
    "igd": lambda: PrivateIGDClassifier(classes=[0, 1], data_norm="auto", random_state=0),
    "mirror-descent": lambda: PrivateMirrorDescentRegressor(data_norm="auto", y_bound=1.0,
                                                            solver="mirror_descent",
                                                            random_state=0),
    # the default solver="auto": objective perturbation for these dense fits
    "mirror-descent-auto": lambda: PrivateMirrorDescentRegressor(data_norm="auto", y_bound=1.0,
                                                                 random_state=0),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("dtype, huge", [(np.float64, 1e154), (np.float32, 1.4e19)])
def test_auto_data_norm_on_csr_does_not_warn_about_one_huge_record(name, dtype, huge):
    X, X_prime, y = _neighbours(dtype, huge)
    rows = sp.csr_matrix(X_prime)
    with np.errstate(over="raise"):                        # positive control: unguarded, it overflows
        with pytest.raises(FloatingPointError):
            rows.multiply(rows).sum(axis=1)
    target = (y > 0).astype(int) if name == "igd" else y
    for data in (X, X_prime):
        assert _runtime_warnings(lambda: ESTIMATORS[name]().fit(sp.csr_matrix(data), target)) \
            == []


def test_auto_data_norm_of_a_float32_csr_row_is_its_float64_norm():
    from sklearn_dpol._auto_bounds import row_norms

    X = sp.csr_matrix(np.array([[1.4e19, 1.4e19, 0.0], [3.0, 4.0, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(row_norms(X), [np.hypot(1.4e19, 1.4e19), 5.0], rtol=1e-6)


def test_range_scaler_in_a_pipeline_does_not_warn_about_one_huge_record():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.01, 0.01, (2000, 2))
    y = rng.uniform(-1, 1, 2000)
    X_prime = X.copy()
    X_prime[7] = [1e307, 0.0]

    def fit(data):
        return make_pipeline(PrivateRangeScaler(epsilon=1.0, random_state=0),
                             PrivateQFTLRegressor(data_norm=1.5, y_bound=1.0, random_state=0)
                             ).fit(data, y)

    pipe = fit(X)
    with np.errstate(over="raise"):                        # positive control
        with pytest.raises(FloatingPointError):
            (X_prime - pipe[0].center_) / pipe[0].scale_
    assert _runtime_warnings(lambda: fit(X)) == []
    assert _runtime_warnings(lambda: fit(X_prime)) == []


MIXED = np.array([1.797e308, 1.797e308, -1.797e308, -1.797e308])


_MAKERS = {
    "qftl": lambda: PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, random_state=0),
    "mirror-descent": lambda: PrivateMirrorDescentRegressor(data_norm=1.0, y_bound=1.0,
                                                            solver="mirror_descent",
                                                            random_state=0),
    "mirror-descent-auto": lambda: PrivateMirrorDescentRegressor(data_norm=1.0, y_bound=1.0,
                                                                 random_state=0),
    "igd": lambda: PrivateIGDClassifier(classes=[0, 1], data_norm=1.0, random_state=0),
    "range-scaler": lambda: PrivateRangeScaler(epsilon=1.0, random_state=0),
}


@pytest.mark.parametrize("name, stream", [(name, False) for name in _MAKERS]
                         + [(name, True) for name in ("qftl", "mirror-descent", "igd")])
def test_a_finite_row_of_mixed_huge_signs_does_not_warn(name, stream):
    """scikit-learn's finiteness check sums the rows: a finite row [M, M, -M, -M]
    (M near 1.8e308) gives inf - inf, a NaN and "invalid value encountered in reduce"
    (fourth review, session 28); the fits and streams run with numpy's warnings off."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 4))
    y = rng.uniform(-1, 1, 200)
    X_prime = X.copy()
    X_prime[7] = MIXED
    with np.errstate(all="raise"):                         # positive control
        with pytest.raises(FloatingPointError):
            np.sum(X_prime)
    make = _MAKERS[name]
    target = (y > 0).astype(int) if name == "igd" else y
    for data in (X, X_prime):
        fit = ((lambda: make().partial_fit(data, target)) if stream
               else (lambda: make().fit(data, target)))
        assert _runtime_warnings(fit) == []


def test_a_pipelines_private_scaler_transforms_a_mixed_huge_row_silently():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (500, 4))
    scaler = PrivateRangeScaler(epsilon=1.0, random_state=0).fit(X)
    assert _runtime_warnings(lambda: scaler.transform(MIXED[None, :])) == []
    assert np.all(np.abs(scaler.transform(MIXED[None, :])) <= 1.0)
