"""The warning for public bounds left at their defaults (issue 17, item 2)."""

import warnings

import numpy as np
import pytest

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol.exceptions import DefaultBoundWarning

CASES = [
    (PrivateIGDClassifier, dict(classes=[0, 1]), dict(data_norm=5.0)),
    (PrivateQFTLRegressor, {}, dict(data_norm=5.0, y_bound=3.0)),
    (PrivateMirrorDescentRegressor, {}, dict(data_norm=5.0, y_bound=3.0)),
    (MutualInformationPrivateOGDRegressor, {}, dict(data_norm=5.0, y_bound=3.0)),
    (PrivateFrankWolfeLasso, {}, dict(feature_bound=5.0, y_bound=3.0)),
]


def _data(seed, scale):
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def _bound_warnings(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, DefaultBoundWarning)]


@pytest.mark.parametrize("cls, fixed, bounds", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_default_bound_warns_once_with_data_independent_message(cls, fixed, bounds):
    first = _bound_warnings(cls(random_state=0, **fixed), *_data(0, 1.0))
    second = _bound_warnings(cls(random_state=1, **fixed), *_data(1, 50.0))
    assert len(first) == 1 and first == second  # once per fit, same text for any data
    for name in bounds:
        assert f"{name}=" in first[0]
    assert "Pass bounds" in first[0]
    # Passing the public bounds silences it.
    assert _bound_warnings(cls(random_state=0, **fixed, **bounds), *_data(0, 1.0)) == []


def test_partial_bound_names_only_the_default_one():
    messages = _bound_warnings(PrivateQFTLRegressor(data_norm=5.0, random_state=0), *_data(0, 1.0))
    assert len(messages) == 1
    assert "y_bound=None, the default (it stands for 1.0)" in messages[0]
    assert "data_norm" not in messages[0].split(", the default")[0]
    assert "passed equal" not in messages[0]
    assert "pass it explicitly (y_bound=1.0)" in messages[0]


def _stream_warnings(est, batches):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for X, y in batches:
            est.partial_fit(X, y)
    return [w for w in caught if issubclass(w.category, DefaultBoundWarning)]


@pytest.mark.parametrize("cls, fixed, bounds", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_stream_warns_on_its_first_call_only(cls, fixed, bounds):
    """Streams with default bounds never warned (only fit did: the seventh review). A
    stream's first call warns, from the caller's line, with fit's data-independent
    message; its later calls, and a stream that continues a fit (which warned), do not;
    passing the bounds silences it."""
    batches = [_data(seed, 1.0 + seed) for seed in range(3)]
    caught = _stream_warnings(cls(**fixed), batches)
    assert len(caught) == 1 and caught[0].filename == __file__
    fitted = cls(**fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(*batches[0])
    assert _stream_warnings(fitted, batches[1:]) == []
    assert _stream_warnings(cls(**fixed, **bounds), batches) == []
    messages = {str(w.message) for w in caught}
    other = _stream_warnings(cls(**fixed), [_data(9, 100.0)])
    assert {str(w.message) for w in other} == messages      # the data do not change it


def test_the_message_names_only_the_estimators_own_bounds_and_autos():
    """Review 112: the message was the same for every estimator (IGD was told about
    y_bound, Frank-Wolfe about data_norm). Now: its own parameters, and "auto" only
    where it is offered."""
    import warnings

    import numpy as np

    from sklearn_dpol import (MutualInformationPrivateOGDRegressor, PrivateFrankWolfeLasso,
                              PrivateIGDClassifier, PrivateQFTLRegressor)
    from sklearn_dpol.exceptions import DefaultBoundWarning

    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(200, 2))
    y = X[:, 0]
    cases = [
        (PrivateIGDClassifier(classes=[0, 1], random_state=0), (y > 0).astype(int),
         ["data_norm=<", "data_norm='auto'"], ["y_bound", "feature_bound"]),
        (PrivateQFTLRegressor(random_state=0), y,
         ["data_norm=<", "y_bound=<", "data_norm='auto'", "y_bound='auto'"], ["feature_bound"]),
        (PrivateFrankWolfeLasso(random_state=0), y,
         ["feature_bound=<", "y_bound=<", "feature_bound='auto'", "L-inf"], ["data_norm"]),
        (MutualInformationPrivateOGDRegressor(random_state=0), y,
         ["data_norm=<", "y_bound=<"], ["'auto'"]),
    ]
    for estimator, target, present, absent in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(X, target)
        messages = [str(w.message) for w in caught if issubclass(w.category, DefaultBoundWarning)]
        assert len(messages) == 1, type(estimator).__name__
        for word in present:
            assert word in messages[0], (type(estimator).__name__, word)
        for word in absent:
            assert word not in messages[0], (type(estimator).__name__, word)


# -- issue 17 item 2: an explicit bound (1.0 included) never warns; None stands for 1.0 --------

def _fitted(cls, fixed, values, X, y, stream=False):
    est = cls(random_state=7, **fixed, **values)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if stream:
            est.partial_fit(X, y)
            est.partial_fit(X, y)
        else:
            est.fit(X, y)
    return est, [w for w in caught if issubclass(w.category, DefaultBoundWarning)]


@pytest.mark.parametrize("stream", [False, True], ids=["fit", "stream"])
@pytest.mark.parametrize("cls, fixed, bounds", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_an_explicit_one_does_not_warn_and_none_is_one(cls, fixed, bounds, stream):
    """The old check compared the value with the default 1.0: a user whose public bound
    is 1.0 was warned though they had passed it. Now only ``None`` (unset) warns, once,
    and it computes exactly what 1.0 does: the same model, noise and ``privacy_``, with
    the resolved value as a fitted attribute and the parameter left at ``None``."""
    X, y = _data(0, 0.5)
    unset, warned = _fitted(cls, fixed, {}, X, y, stream)
    explicit, silent = _fitted(cls, fixed, {name: 1.0 for name in bounds}, X, y, stream)
    assert len(warned) == 1 and silent == []
    np.testing.assert_array_equal(unset.coef_, explicit.coef_)
    np.testing.assert_array_equal(unset.intercept_, explicit.intercept_)
    assert unset.privacy_ == explicit.privacy_
    for name in bounds:
        assert getattr(unset, name) is None                  # never written back
        assert getattr(unset, name + "_") == 1.0 == getattr(explicit, name + "_")
        assert type(getattr(unset, name + "_")) is float
    # One bound explicit, the other unset: only the unset one is named.
    if len(bounds) == 2:
        first, second = bounds
        _, one = _fitted(cls, fixed, {first: 1.0}, X, y, stream)
        assert len(one) == 1
        head = str(one[0].message).split(", the default")[0]
        assert f"{second}=None" in head and first not in head


@pytest.mark.parametrize("cls, fixed, bounds", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_none_is_the_default_and_survives_clone_and_set_params(cls, fixed, bounds):
    from sklearn.base import clone

    est = cls(**fixed)
    params = est.get_params()
    for name in bounds:
        assert params[name] is None
    copy = clone(est)
    assert all(copy.get_params()[name] is None for name in bounds)
    copy.set_params(**{name: 1.0 for name in bounds}).set_params(**{name: None for name in bounds})
    X, y = _data(1, 0.5)
    assert all(copy.get_params()[name] is None for name in bounds)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copy.fit(X, y)
    assert len([w for w in caught if issubclass(w.category, DefaultBoundWarning)]) == 1


def test_a_search_over_epsilon_with_bounds_unset():
    """Private selection with the bounds left unset: the score bound resolves ``y_bound``
    (``None``: 1.0), every candidate is the one with ``y_bound=1.0``, and the result is
    the same as with the bounds passed (bar the warning)."""
    from sklearn_dpol.model_selection import PrivateHyperparameterSearch

    X, y = _data(2, 0.3)
    y = X @ np.array([0.5, -0.3, 0.2])
    results = []
    for values in ({}, dict(data_norm=1.0, y_bound=1.0)):
        search = PrivateHyperparameterSearch(
            PrivateQFTLRegressor(**values), {"epsilon": [0.5, 1.0, 2.0]}, n_candidates=3.0,
            random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y)
        warned = [w for w in caught if issubclass(w.category, DefaultBoundWarning)]
        assert bool(warned) == (values == {})
        best = search.best_estimator_
        results.append((best.coef_, best.intercept_, search.best_params_, search.best_score_,
                        search.privacy_))
        assert best.y_bound_ == 1.0 and best.data_norm_ == 1.0
        assert best.get_params()["y_bound"] == values.get("y_bound")
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:]


def test_none_is_accepted_by_the_constraints_and_nothing_else_new():
    """``None`` passes the parameter validation; a string other than "auto" still fails."""
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = _data(3, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DefaultBoundWarning)
        MutualInformationPrivateOGDRegressor(data_norm=None, y_bound=None).fit(X, y)
    with pytest.raises(InvalidParameterError):
        MutualInformationPrivateOGDRegressor(data_norm="auto").fit(X, y)
    with pytest.raises(InvalidParameterError):
        PrivateQFTLRegressor(y_bound="none").fit(X, y)


def test_the_demo_passes_its_bounds_and_draws_no_default_bound_warning():
    """``python -m sklearn_dpol`` passes every public bound (some equal to 1.0); it used
    to hide the warning that an explicit 1.0 drew. Each task's private cell now runs
    with no DefaultBoundWarning and no filter."""
    from sklearn_dpol import _demo

    tasks = _demo.build_tasks(400)
    for task in tasks:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _demo.private_cell(task, 1.0, 1)
        assert not [w for w in caught if issubclass(w.category, DefaultBoundWarning)], task[0]


@pytest.mark.parametrize("cls, bounds, extra", [
    (PrivateQFTLRegressor, ("data_norm", "y_bound"), {}),
    (PrivateFrankWolfeLasso, ("feature_bound", "y_bound"), {}),
    (PrivateMirrorDescentRegressor, ("data_norm", "y_bound"), dict(loss="squared")),
], ids=lambda c: getattr(c, "__name__", ""))
def test_dask_fits_resolve_unset_bounds(cls, bounds, extra):
    """The statistics reduced on dask workers read the bounds in use: ``None`` is 1.0
    there too (``float(None)`` was the failure to avoid), the same model as ``1.0``."""
    da = pytest.importorskip("dask.array")
    X, y = _data(4, 0.4)
    y = X @ np.array([0.5, -0.3, 0.2])
    Xd, yd = da.from_array(X, chunks=30), da.from_array(y, chunks=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unset = cls(random_state=0, **extra).fit(Xd, yd)
        explicit = cls(random_state=0, **extra, **{name: 1.0 for name in bounds}).fit(Xd, yd)
    np.testing.assert_array_equal(unset.coef_, explicit.coef_)
    assert unset.intercept_ == explicit.intercept_
    assert all(getattr(unset, name + "_") == 1.0 for name in bounds)


def test_warnings_of_pipeline_steps_point_at_the_users_line():
    """A Pipeline runs its transformers through joblib.Memory: the scaler's warnings pointed
    at joblib/memory.py (review 128), not at the line that called fit."""
    from sklearn.pipeline import make_pipeline

    from sklearn_dpol.preprocessing import PrivateRangeScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 30))
    y = np.clip(X[:, 0], -1, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_pipeline(PrivateRangeScaler(), PrivateQFTLRegressor()).fit(X, y)
    ours = [w for w in caught if w.category.__module__.startswith("sklearn_dpol")]
    assert {w.category.__name__ for w in ours} >= {"SmallDataWarning", "DefaultBoundWarning"}
    assert all(w.filename == __file__ for w in ours), [(w.category, w.filename) for w in ours]
