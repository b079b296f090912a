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
    assert "y_bound=1.0" in messages[0]
    assert "data_norm" not in messages[0].split(", the default value")[0]
    assert ", the default value (left unset or passed equal to it" in messages[0]


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
