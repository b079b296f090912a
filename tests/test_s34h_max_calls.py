"""A stream's number of calls, declared up front (``max_calls``; review 128, item 7).

``doc/privacy.md``, "A stream's number of calls, declared up front": a factorization
stream of ``PrivateQFTLRegressor`` or of ``PrivateIGDClassifier``'s DP-FTRL is
calibrated on ``N = max_calls`` steps when ``max_calls`` is given (a public
parameter), else on ``ceil(horizon / first batch)``; ``max_calls_`` states ``N`` from
the first call, and call ``N + 1`` is refused before the data is read. Checked with
noise off on neighbouring streams of varying batch sizes at ``N = max_calls`` (the
recorded pre-noise values of every release move by at most ``mu`` in GDP terms,
exactly ``mu / (1 + a)`` for a record of the first call).
"""

import math
import pickle

import numpy as np
import pytest
from test_qftl_stream_calls import worst_case_pair  # the joint-sensitivity worst case

from sklearn_dpol import PrivateIGDClassifier, PrivateQFTLRegressor
from sklearn_dpol._core import matrix_factorization as mf
from sklearn_dpol._core.noise import recording_releases
from sklearn_dpol.privacy import gaussian_mu
from sklearn_dpol.privacy._streams import (
    ROUNDING_ALLOWANCE,
    calibration_horizon,
    stream_calls,
)

EPSILON, DELTA = 1.0, 1e-6
MU = gaussian_mu(EPSILON, DELTA)
TIGHT = dict(epsilon=EPSILON, delta=DELTA, fit_intercept=False, data_norm=1.0, y_bound=1.0,
             alpha=1e-2)
# 23 rows in 7 calls of varying size: ceil(23 / 5) = 5 calls would refuse call 6.
SIZES = (5, 3, 5, 2, 4, 1, 3)


def batches(sizes=SIZES):
    lo = 0
    for size in sizes:
        yield slice(lo, lo + size)
        lo += size


def classification(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 2
    return X, (X @ [1.0, -1.0, 0.5, 0.0] > 0).astype(int)


def test_stream_calls_is_max_calls_when_given():
    assert stream_calls(23, 5) == 5
    assert stream_calls(23, 5, 7) == 7
    assert stream_calls(None, 5) is None
    assert calibration_horizon("blt", 23, 5, max_calls=7) == 7
    assert calibration_horizon("dense", 23, 5, max_calls=7) == 7
    assert calibration_horizon("tree", 23, 5, max_calls=7) == 23      # trees count rows


@pytest.mark.parametrize("name", ["blt", "sqrt", "dense", "auto"])
def test_qftl_stream_of_varying_batches_is_calibrated_on_max_calls(name):
    (X, y), _ = worst_case_pair()
    reg = PrivateQFTLRegressor(random_state=0, horizon=23, max_calls=7, prefix_sums=name,
                               **TIGHT)
    for i, rows in enumerate(batches()):
        reg.partial_fit(X[rows], y[rows])
        assert reg.max_calls_ == 7          # stated from the first call on
        if i == 0:
            assert reg._stream.horizon == 7
    assert reg._stream.t == 7 and reg.t_ == 23
    norm = {"sqrt": lambda: mf.sqrt_column_norm(7),
            "blt": lambda: mf.blt_column_norm(*mf.blt_parameters(7), 7)}.get(
        name, lambda: mf.dense_column_norm(mf.final_weighted_factorization(7)[0]))()
    assert reg._stream.column_norm == pytest.approx(norm)
    assert reg.noise_scale_ == pytest.approx(
        (1 + ROUNDING_ALLOWANCE) * reg.sensitivity_ * norm / MU, rel=1e-12)
    assert reg.privacy_.spent_mu == pytest.approx(MU)
    assert "at most 7 steps" in reg.privacy_.mechanism
    # Without max_calls the first batch fixes 5 calls and call 6 is refused.
    reg = PrivateQFTLRegressor(random_state=0, horizon=23, prefix_sums=name, **TIGHT)
    with pytest.raises(ValueError, match=r"call 6 .* calibrated for 5 calls \(max_calls=None"):
        for rows in batches():
            reg.partial_fit(X[rows], y[rows])
    assert reg.max_calls_ == 5


@pytest.mark.parametrize("name", ["blt", "sqrt", "dense"])
@pytest.mark.parametrize("position", [0, 6, 14, 22])
def test_qftl_noise_off_neighbours_within_mu_at_max_calls(name, position):
    """Replace one record by the worst case in a stream of 7 calls of varying size,
    max_calls=7: the recorded pre-noise values of every release move by at most mu
    in GDP terms, exactly mu / (1 + a) for a record of the first call (column 0 of
    the 7-step C, all released)."""
    params = dict(TIGHT, horizon=23, max_calls=7, prefix_sums=name)
    logs = []
    for X, y in worst_case_pair(position=position):
        reg = PrivateQFTLRegressor(random_state=0, **params)
        with recording_releases() as log:
            for rows in batches():
                reg.partial_fit(X[rows], y[rows])
        logs.append(log)
    assert len(logs[0]) == len(logs[1]) == 7
    spent = math.sqrt(sum(np.sum((a[0] - b[0]) ** 2) / a[1] ** 2 for a, b in zip(*logs)))
    assert spent <= MU * (1 + 1e-9)
    if position < SIZES[0]:
        assert spent == pytest.approx(MU / (1 + ROUNDING_ALLOWANCE), rel=1e-8)


def test_qftl_call_past_max_calls_is_refused_before_reading(monkeypatch):
    (X, y), _ = worst_case_pair(n=30)
    reg = PrivateQFTLRegressor(random_state=0, horizon=30, max_calls=3, **TIGHT)
    for rows in batches((2, 2, 2)):
        reg.partial_fit(X[rows], y[rows])
    before = pickle.dumps(reg)

    def no_read():
        raise AssertionError("the refusal must come before the data is read")

    monkeypatch.setattr(reg, "_mark_data_read", no_read)
    with recording_releases() as log:
        with pytest.raises(ValueError, match=r"call 4 of a stream .* calibrated for 3 calls "
                                             r"\(max_calls=3"):
            reg.partial_fit(X[6:8], y[6:8])
    assert log == []
    monkeypatch.undo()
    assert pickle.dumps(reg) == before


def test_qftl_tree_counts_rows_and_max_calls_caps_its_calls():
    (X, y), _ = worst_case_pair(n=30)
    plain = PrivateQFTLRegressor(random_state=0, horizon=30, prefix_sums="tree", **TIGHT)
    capped = PrivateQFTLRegressor(random_state=0, horizon=30, prefix_sums="tree", max_calls=2,
                                  **TIGHT)
    for reg in (plain, capped):
        reg.partial_fit(X[:5], y[:5])
        reg.partial_fit(X[5:10], y[5:10])
    assert plain.max_calls_ is None and capped.max_calls_ == 2
    assert capped.noise_scale_ == plain.noise_scale_         # calibrated on rows either way
    plain.partial_fit(X[10:15], y[10:15])
    before = pickle.dumps(capped)
    with pytest.raises(ValueError, match=r"call 3 .* max_calls=2"):
        capped.partial_fit(X[10:15], y[10:15])
    assert pickle.dumps(capped) == before


@pytest.mark.parametrize("Est,extra", [(PrivateQFTLRegressor, dict(y_bound=1.0)),
                                       (PrivateIGDClassifier, dict(classes=[0, 1]))])
def test_max_calls_is_validated_before_anything_is_read(Est, extra):
    X, y = classification(n=20)
    for bad in (True, np.bool_(True), 0, -1, 2.5, "3"):
        est = Est(data_norm=1.0, horizon=20, max_calls=bad, **extra)
        with pytest.raises(ValueError, match="max_calls"):
            est.partial_fit(X[:5], y[:5])
        assert not hasattr(est, "coef_") and not hasattr(est, "max_calls_")
    for kwargs, message in ((dict(horizon=None, max_calls=3), "needs a horizon"),
                            (dict(horizon=10, max_calls=11), "larger than horizon")):
        est = Est(data_norm=1.0, **kwargs, **extra)
        for call in (est.partial_fit, est.fit):
            with pytest.raises(ValueError, match=message):
                call(X[:5], y[:5])
            assert not hasattr(est, "coef_") and not hasattr(est, "max_calls_")


@pytest.mark.parametrize("Est,extra", [(PrivateQFTLRegressor, dict(y_bound=1.0)),
                                       (PrivateIGDClassifier, dict(classes=[0, 1]))])
def test_max_calls_is_frozen_for_the_stream_and_none_after_fit(Est, extra):
    X, y = classification(n=40)
    est = Est(data_norm=1.0, horizon=40, max_calls=4, random_state=0, **extra)
    est.partial_fit(X[:5], y[:5])
    est.set_params(max_calls=8)
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="max_calls: 4 -> 8"):
        est.partial_fit(X[5:10], y[5:10])
    assert pickle.dumps(est) == before
    est.fit(X, y)
    assert est.max_calls_ is None
    est.partial_fit(X[:5], y[:5])           # a new stream after fit, at max_calls=8
    assert est.max_calls_ == 8


@pytest.mark.parametrize("prefix_sums", ["blt", "sqrt", "tree"])
def test_igd_ftrl_varying_batches_run_to_max_calls_then_are_refused(prefix_sums, monkeypatch):
    X, y = classification()
    sizes = (100, 50, 100, 20, 30)
    clf = PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=400, max_calls=6,
                               prefix_sums=prefix_sums, random_state=0)
    for rows in batches(sizes):
        clf.partial_fit(X[rows], y[rows])
        assert clf.max_calls_ == 6
    assert clf._ftrl_mechanism.horizon == 6 and "at most 6 calls" in clf.privacy_.mechanism
    clf.partial_fit(X[300:310], y[300:310])          # call 6
    assert clf.privacy_.spent_mu == pytest.approx(MU)
    before = pickle.dumps(clf)

    def no_read():
        raise AssertionError("the refusal must come before the data is read")

    monkeypatch.setattr(clf, "_mark_data_read", no_read)
    with recording_releases() as log:
        with pytest.raises(ValueError, match=r"call 7 .* calibrated for 6 .*max_calls=6"):
            clf.partial_fit(X[310:320], y[310:320])
    assert log == []
    monkeypatch.undo()
    assert pickle.dumps(clf) == before
    # Without max_calls: ceil(400 / 100) = 4 calls, the fifth refused.
    clf = PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=400,
                               prefix_sums=prefix_sums, random_state=0)
    with pytest.raises(ValueError, match=r"call 5 .* calibrated for 4 .*max_calls=None"):
        for rows in batches(sizes):
            clf.partial_fit(X[rows], y[rows])
    assert clf.max_calls_ == 4


@pytest.mark.parametrize("prefix_sums", ["blt", "sqrt"])
@pytest.mark.parametrize("index", [10, 120, 275, 399])
def test_igd_ftrl_neighbours_move_c_g_by_at_most_sigma_mu_at_max_calls(prefix_sums, index):
    """The pre-noise values of a DP-FTRL stream of 6 calls of varying size with
    max_calls=6 are C g, C the 6-step factor (not ceil(400 / 100) = 4 steps), g the
    gradient sums at the released transcript's lookahead points; the neighbour's C g',
    along the same transcript, differs by the record's column of C times its gradient
    change: at most sigma mu* (test_igd_ftrl.py's check at N = max_calls)."""
    from test_igd_ftrl import factor_coefficients, lookahead_points, signed, toeplitz_times

    from sklearn_dpol._core import ftrl
    from sklearn_dpol._core._clip import clip_row_scales

    X, y = classification()
    sizes = (100, 50, 100, 20, 30, 100)
    starts = np.cumsum((0,) + sizes[:-1])
    clf = PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=400, max_calls=6,
                               alpha=1e-2, prefix_sums=prefix_sums, random_state=0)
    X1, y1 = X.copy(), y.copy()
    X1[index], y1[index] = -10 * X[index], 1 - y[index]
    released = [np.zeros((1, X.shape[1] + 1))]
    with recording_releases() as log:
        for rows in batches(sizes):
            clf.partial_fit(X[rows], y[rows])
            released.append(np.c_[clf.coef_, clf.intercept_ / clf.intercept_scaling_])
    assert clf._ftrl_mechanism.horizon == 6 and len(log) == 6
    args = dict(loss="log_loss", intercept_value=clf.intercept_scaling_)
    G, G1 = [], []
    for W, rows in zip(lookahead_points(released), batches(sizes)):
        G.append(ftrl.gradient_sums(W, X[rows], clip_row_scales(X[rows], 1.0)[0],
                                    signed(y[rows], [0, 1]), **args).ravel())
        G1.append(ftrl.gradient_sums(W, X1[rows], clip_row_scales(X1[rows], 1.0)[0],
                                     signed(y1[rows], [0, 1]), **args).ravel())
    G, G1 = np.array(G), np.array(G1)
    c = factor_coefficients(clf._ftrl_mechanism, 6)
    np.testing.assert_allclose(np.array([entry[0] for entry in log]), toeplitz_times(c, G),
                               rtol=1e-10, atol=1e-9)
    shift = toeplitz_times(c, G) - toeplitz_times(c, G1)
    p = int(np.searchsorted(starts, index, side="right")) - 1
    assert np.all(shift[:p] == 0.0)
    d = np.linalg.norm(G[p] - G1[p])
    assert 0 < d <= clf.sensitivity_
    moved = np.linalg.norm(shift)
    assert moved == pytest.approx(np.linalg.norm(c[:6 - p]) * d, rel=1e-9)
    assert moved <= clf.noise_scale_ * MU
    assert clf.noise_scale_ == pytest.approx(
        (1 + ROUNDING_ALLOWANCE) * clf.sensitivity_ * clf._ftrl_mechanism.column_norm / MU,
        rel=1e-12)


def test_igd_iterate_perturbation_stream_is_capped_at_max_calls():
    """The seed's stream spends a per-row share of the budget: max_calls only caps its
    calls, refused before reading, the estimator unchanged."""
    X, y = classification()
    clf = PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=400, max_calls=2,
                               stream="iterate_perturbation", random_state=0)
    plain = PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=400,
                                 stream="iterate_perturbation", random_state=0)
    for est in (clf, plain):
        est.partial_fit(X[:100], y[:100])
        est.partial_fit(X[100:150], y[100:150])
    assert clf.max_calls_ == 2 and plain.max_calls_ is None
    assert clf.noise_scale_ == plain.noise_scale_
    np.testing.assert_array_equal(clf.coef_, plain.coef_)
    plain.partial_fit(X[150:200], y[150:200])
    before = pickle.dumps(clf)
    with recording_releases() as log:
        with pytest.raises(ValueError, match=r"call 3 of a stream declared with max_calls=2"):
            clf.partial_fit(X[150:200], y[150:200])
    assert log == [] and pickle.dumps(clf) == before


def test_verbose_states_the_calls_from_the_first_call(capsys):
    X, y = classification(n=100)
    PrivateIGDClassifier(data_norm=1.0, classes=[0, 1], horizon=100, verbose=1,
                         random_state=0).partial_fit(X[:30], y[:30])
    assert "max_calls_=4" in capsys.readouterr().out          # ceil(100 / 30)
    PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0, horizon=100, max_calls=9, verbose=1,
                         random_state=0).partial_fit(X[:30], X[:30, 0])
    assert "max_calls_=9" in capsys.readouterr().out


def test_qftl_auto_mechanism_resolves_from_max_calls():
    """"auto" is "dense" for at most 128 calls: ceil(1000 / 100) = 10 alone, but
    max_calls=129 declares more, and the stream takes BLT for 129 steps."""
    (X, y), _ = worst_case_pair(n=200)
    for max_calls, expected in ((None, "dense"), (128, "dense"), (129, "blt")):
        reg = PrivateQFTLRegressor(random_state=0, horizon=1000, max_calls=max_calls, **TIGHT)
        reg.partial_fit(X[:100], y[:100])
        assert reg.prefix_sums_ == expected
        assert reg._stream.horizon == reg.max_calls_ == (max_calls or 10)
