"""Review 125 (doc/privacy.md 58.3): a y passed as a list is read element by element, so
one record's label never re-types the others' (a string among numbers made every label a
string; a float among large integer IDs rounded them all)."""

import warnings

import numpy as np
import pytest

from sklearn_dpol import (
    PrivateFrankWolfeLasso,
    PrivateHyperparameterSearch,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.privacy import PrivacyAccountant

N = 400


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3)) / 3
    labels = [int(v) for v in (X[:, 0] > 0)]
    return X, labels


def _fit(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make().fit(X, y)


@pytest.mark.parametrize("solver", ["objective_perturbation", "igd"])
def test_one_string_label_does_not_switch_off_every_record(solver):
    X, labels = _data()
    other = labels[:-1] + ["cat"]     # the last record's label, outside the classes

    def make():
        return PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, classes=[0, 1],
                                    solver=solver, random_state=0)

    # The same record outside the classes as an int: it contributes nothing, every
    # other record counts (before the fix, "cat" made every record a string: none counted).
    reference = _fit(make, X, labels[:-1] + [2]).coef_
    np.testing.assert_allclose(_fit(make, X, other).coef_, reference, rtol=1e-12)
    assert np.abs(reference).max() > 1.0


def test_one_float_label_does_not_round_large_integer_ids():
    X, labels = _data()
    a, b = 10**17, 10**17 + 1
    ids = [b if v else a for v in labels]

    def make():
        return PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, classes=[a, b],
                                    solver="igd", random_state=0)

    reference = _fit(make, X, ids[:-1] + [7]).coef_      # outside the classes, an int
    np.testing.assert_allclose(_fit(make, X, ids[:-1] + [0.5]).coef_, reference, rtol=1e-12)
    assert np.abs(reference).max() > 1.0


def test_a_stream_reads_list_labels_one_by_one():
    X, labels = _data()
    est = PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, classes=["0", "1"],
                               random_state=0)
    ref = PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, classes=["0", "1"],
                               random_state=0)
    strings = [str(v) for v in labels]
    est.partial_fit(X[:200], strings[:199] + [1])       # one int among strings
    ref.partial_fit(X[:200], strings[:199] + ["2"])     # the same record outside, a string
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    assert np.abs(ref.coef_).max() > 0.1


@pytest.mark.parametrize("form", ["list", "deque"])
def test_the_search_treats_both_neighbours_alike(form):
    """A list: raised (charged) on the neighbour before 58.3; a deque: refused for free on
    the neighbour before 58.8."""
    from collections import deque

    X, labels = _data()
    make_y = list if form == "list" else deque
    spent = []
    for y in (make_y(labels), make_y(labels[:-1] + ["cat"])):
        accountant = PrivacyAccountant(epsilon=100.0, delta=1e-3)
        search = PrivateHyperparameterSearch(
            PrivateIGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], solver="igd"),
            {"alpha": [1e-3, 1e-2]}, accountant=accountant, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y)
        spent.append(accountant.spent())
    assert spent[0] == spent[1] and spent[0].epsilon > 0


def test_the_search_refuses_a_dtype_no_class_can_match_before_the_read():
    X, labels = _data()
    accountant = PrivacyAccountant(epsilon=100.0, delta=1e-3)
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(epsilon=1.0, data_norm=1.0, classes=["a", "b"], solver="igd"),
        {"alpha": [1e-3, 1e-2]}, accountant=accountant)
    with pytest.raises(ValueError, match="nothing was read or charged"):
        search.fit(X, np.asarray(labels))
    assert accountant.spent().epsilon == 0      # was charged (2.15, 1e-6) before the fix


@pytest.mark.parametrize("cls", [PrivateQFTLRegressor, PrivateFrankWolfeLasso,
                                 PrivateMirrorDescentRegressor])
def test_a_dask_fit_converts_list_targets_like_an_in_memory_fit(cls):
    da = pytest.importorskip("dask.array")
    X, labels = _data()
    y = [0.25 * v for v in labels]
    y_text = y[:-1] + ["0.25"]       # one target given as a string
    params = dict(epsilon=np.inf, y_bound=1.0, random_state=0)
    params.update(feature_bound=1.0 if cls is PrivateFrankWolfeLasso else None)
    if cls is not PrivateFrankWolfeLasso:
        params.pop("feature_bound")
        params.update(data_norm=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        in_memory = cls(**params).fit(X, y_text).coef_
        on_dask = cls(**params).fit(da.from_array(X, chunks=100), y_text).coef_
    expected = cls(**params).fit(X, y[:-1] + [0.25]).coef_
    np.testing.assert_allclose(in_memory, expected, rtol=1e-12)
    np.testing.assert_allclose(on_dask, expected, rtol=1e-9, atol=1e-12)


# -- review 129: every list-like y, not only a flat list ---------------------------------

def _forms():
    from collections import UserList, deque

    return {
        "column list": lambda labels: [[v] for v in labels],
        "list of 0-d arrays": lambda labels: [np.array(v) for v in labels],
        "deque": deque,
        "UserList": UserList,
        "tuple": tuple,
    }


@pytest.mark.parametrize("form", list(_forms()))
def test_every_list_like_y_is_read_label_by_label(form):
    X, labels = _data()
    make_y = _forms()[form]

    def make():
        return PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, classes=[0, 1],
                                    solver="igd", random_state=0)

    reference = _fit(make, X, make_y(labels[:-1] + [2])).coef_
    np.testing.assert_allclose(_fit(make, X, make_y(labels[:-1] + ["abc"])).coef_,
                               reference, rtol=1e-12)
    assert np.abs(reference).max() > 1.0


def test_a_complex_label_is_refused_without_quoting_the_labels():
    X, labels = _data()
    est = PrivateIGDClassifier(epsilon=1.0, data_norm=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError) as info:
            est.fit(X, labels[:-1] + [1j])
    assert "Complex" in str(info.value) and "0.+0.j" not in str(info.value)
    assert not hasattr(est, "coef_")


def test_a_search_that_infers_its_labels_reads_them_as_typed():
    """With classes=None the label set is typed jointly; the candidates must read y the same
    way (a mixed list made every integer-labelled record miss the string classes)."""
    X, labels = _data()
    y = labels[:-1] + ["1"]
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(epsilon=np.inf, data_norm=1.0, solver="igd"),
        {"alpha": [1e-3, 1e-2]}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.best_score_ > 0.7


def test_a_dask_fit_takes_a_column_list_y():
    da = pytest.importorskip("dask.array")
    X, labels = _data()
    y = [[0.25 * v] for v in labels]
    params = dict(epsilon=np.inf, data_norm=1.0, y_bound=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_dask = PrivateQFTLRegressor(**params).fit(da.from_array(X, chunks=100), y).coef_
        in_memory = PrivateQFTLRegressor(**params).fit(X, [0.25 * v for v in labels]).coef_
    np.testing.assert_allclose(on_dask, in_memory, rtol=1e-9, atol=1e-12)
