"""Findings of the second review of session 30's fixes (review 108)."""

import pickle
import warnings

import numpy as np
import pytest

from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor


def _data(n=60):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2)) * 0.3
    return X, (X[:, 0] > 0).astype(int), X @ [0.5, -0.2]


def test_a_list_of_labels_is_never_refused_by_its_inferred_dtype():
    """A list's dtype is inferred from its values: one string label makes a list of numbers
    '<U'. The label-type refusal (54.15) reads declared dtypes only, so a list with one
    odd label fits like its neighbour (that label is outside the classes: ignored)."""
    X, c, _ = _data()
    base = list(c)
    odd = list(c)
    odd[0] = "x"
    for y in (base, odd):
        PrivateIGDClassifier(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="strings"):     # a declared dtype is public
        PrivateIGDClassifier(epsilon=1.0, classes=[0, 1]).fit(X, np.array(odd))


def _as_older_version(model):
    """The state a pickle of a model fitted before the unit scale has (no format tag)."""
    state = pickle.loads(pickle.dumps(model))
    del state.__dict__["_statistics_format"]
    return state


def test_statistics_of_an_older_version_are_refused_before_anything_is_read():
    """An older pickle's stream was calibrated on the old scale's sensitivity, which the
    unit-scale rows can exceed (6,667 times at data_norm = 0.01, the review): continuing it,
    or solving its model, is refused; nothing is charged."""
    X, _, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stream = PrivateQFTLRegressor(data_norm=0.01, y_bound=1.0, horizon=120,
                                      random_state=0).partial_fit(X[:30], y[:30])
        fitted = PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, random_state=0).fit(X, y)
    for model in (stream, fitted):
        assert np.all(np.isfinite(model.coef_))            # this version: fine
        old = _as_older_version(model)
        with pytest.raises(ValueError, match="older version"):
            old.coef_
        before = pickle.dumps(old)
        with pytest.raises(ValueError, match="older version"):
            old.partial_fit(X[30:], y[30:])
        assert pickle.dumps(old) == before                   # nothing changed
        old.fit(X, y)                                       # a new fit starts afresh
        assert np.all(np.isfinite(old.coef_))


def test_huber_objective_perturbation_does_not_cycle_on_one_record(monkeypatch):
    """Review 108, high: where J's decrease was below its rounding the line search took the
    full Newton step unchecked; with the Huber loss two such steps could alternate for ever
    (6% of noise draws on D, 0% on its neighbour D' without record 0), running the public
    step budget (~4e6 steps) and then raising SolverDidNotConverge: a release decided by
    one record. The fallback now follows the sign of J's derivative along the step."""
    from sklearn_dpol import PrivateMirrorDescentRegressor
    from sklearn_dpol._core import objective_perturbation as op

    calls = [0]
    original = op._line_search

    def counted(*args, **kwargs):
        calls[0] += 1
        if calls[0] > 200:
            raise RuntimeError("the solve is cycling")
        return original(*args, **kwargs)

    monkeypatch.setattr(op, "_line_search", counted)
    h, n, k = 3e-10, 10, 3
    X = np.zeros((n, 1))
    X[:k] = 1.0
    y = np.full(n, 1.01 * h)
    neighbour = np.vstack([[0.0], X[1:]])
    for data in (X, neighbour):
        for seed in range(60):
            calls[0] = 0
            PrivateMirrorDescentRegressor(
                solver="objective_perturbation", loss="huber", epsilon_huber=h,
                alpha=2.01 / n, epsilon=1.0, delta=1e-6, data_norm=1.0, y_bound=1.0,
                fit_intercept=False, random_state=seed).fit(data, y)
