"""``verbose``: scikit-learn style progress that prints public information only.

Three properties: the format (epoch lines, step lines, a release summary with a
closing line), results bit-identical with verbose on and off, and no private
value in the output. The last is tested by its consequence: two data sets of the
same shape give the same output, byte for byte (no elapsed time is printed: a
solver's running time can depend on the data), so nothing printed depends on the
data beyond public counts.
"""

import re

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)

N, D = 400, 4

ESTIMATORS = {
    "igd": PrivateIGDClassifier(classes=[0, 1], max_iter=3, random_state=0),
    "igd_ovr": PrivateIGDClassifier(classes=[0, 1, 2], max_iter=2, n_jobs=2, random_state=0),
    "objective_perturbation": PrivateIGDClassifier(
        solver="objective_perturbation", alpha=1e-2, classes=[0, 1], random_state=0),
    "qftl": PrivateQFTLRegressor(random_state=0),
    "frank_wolfe": PrivateFrankWolfeLasso(max_iter=40, random_state=0),
    "mirror_descent": PrivateMirrorDescentRegressor(solver="mirror_descent", random_state=0),
    "mirror_descent_auto": PrivateMirrorDescentRegressor(random_state=0),
    "mirror_descent_l1": PrivateMirrorDescentRegressor(constraint="l1", loss="huber",
                                                       random_state=0),
    "md_objective_perturbation": PrivateMirrorDescentRegressor(
        solver="objective_perturbation", random_state=0),
    "parameter_free": ParameterFreeLocalDPRegressor(random_state=0),
    "mi_ogd": MutualInformationPrivateOGDRegressor(random_state=0),
}


def data(seed, estimator):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(N, D))
    y = np.clip(X @ rng.normal(size=D) + 0.1 * rng.standard_normal(N), -1, 1)
    if isinstance(estimator, PrivateIGDClassifier):
        n_classes = len(estimator.classes)
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def stream_kwargs(estimator):
    return {"classes": estimator.classes} if isinstance(estimator, PrivateIGDClassifier) else {}


def run(estimator, X, y, verbose):
    """``fit``, then a two-batch stream; the released vectors of all three calls."""
    model = clone(estimator).set_params(verbose=verbose)
    released = []
    model.fit(X, y)
    released.append(np.append(model.coef_, model.intercept_))
    stream = clone(estimator).set_params(verbose=verbose)
    for batch in (slice(0, N // 2), slice(N // 2, N)):
        stream.partial_fit(X[batch], y[batch], **stream_kwargs(estimator))
        released.append(np.append(stream.coef_, stream.intercept_))
    return released


@pytest.mark.parametrize("name", ESTIMATORS)
def test_verbose_is_bit_identical_and_prints_only_public_values(name, capsys):
    estimator = ESTIMATORS[name]
    X, y = data(0, estimator)
    quiet = run(estimator, X, y, verbose=0)
    assert capsys.readouterr().out == ""
    loud = run(estimator, X, y, verbose=1)
    output = capsys.readouterr().out
    for a, b in zip(quiet, loud):
        np.testing.assert_array_equal(a, b)
    # A summary per call (fit + two partial_fit), in scikit-learn's closing style.
    assert output.count("Training done (no time printed: it can depend on the data).") == 3
    assert "second" not in output
    assert output.count(f"-- {type(estimator).__name__}.fit: {N} rows") == 1
    assert output.count(f"-- {type(estimator).__name__}.partial_fit: {N // 2} rows") == 2
    assert "Released: (" in output
    # Other data of the same shape: the same output, so nothing printed is a
    # function of the data (a loss or a norm of an iterate would differ).
    X2, y2 = data(1, estimator)
    run(estimator, X2, y2, verbose=1)
    assert capsys.readouterr().out == output


def test_igd_prints_one_epoch_line_per_pass(capsys):
    X, y = data(0, ESTIMATORS["igd"])
    PrivateIGDClassifier(solver="igd", classes=[0, 1], max_iter=3, verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("-- Epoch")] == [
        "-- Epoch 1", "-- Epoch 2", "-- Epoch 3"]
    steps = [int(m.group(1)) for line in lines if (m := re.fullmatch(r"T: (\d+)", line))]
    assert steps == [N, 2 * N, 3 * N]


@pytest.mark.parametrize("estimator", [
    PrivateFrankWolfeLasso(max_iter=57, verbose=1, random_state=0),
    PrivateMirrorDescentRegressor(max_iter=123, verbose=1, solver="mirror_descent",
                                  random_state=0),
])
def test_step_progress_ends_at_the_step_count(estimator, capsys):
    X, y = data(0, estimator)
    estimator.fit(X, y)
    counts = [tuple(map(int, m.groups())) for m in
              re.finditer(r"^-- Steps (\d+) / (\d+)$", capsys.readouterr().out, re.M)]
    total = estimator.n_iter_
    assert counts[-1] == (total, total)
    assert 2 <= len(counts) <= 11
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)


def test_a_failed_call_prints_no_summary(capsys):
    X, y = data(0, ESTIMATORS["qftl"])
    model = PrivateQFTLRegressor(verbose=1, horizon=N, random_state=0)
    model.partial_fit(X, y)
    capsys.readouterr()
    with pytest.raises(ValueError, match="past horizon"):
        model.partial_fit(X[:10], y[:10])
    assert capsys.readouterr().out == ""


def test_verbose_is_validated():
    X, y = data(0, ESTIMATORS["qftl"])
    with pytest.raises(ValueError, match="'verbose' parameter"):
        PrivateQFTLRegressor(verbose="loud").fit(X, y)
