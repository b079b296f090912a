"""QFTL streams calibrated on calls, and the public per-release ridge of a stream.

``doc/privacy.md``, "QFTL streams calibrated on calls": a factorization mechanism
(``"blt"``, ``"sqrt"``) takes one step per ``partial_fit`` call, so a stream of at
most ``horizon`` rows whose first batch has ``m`` rows is calibrated for
``ceil(horizon / m)`` steps (public: a parameter and a shape); a call past that is
refused before any data is read. Checked with noise off on neighbouring streams
(the recorded pre-noise values of every release move by at most ``mu`` in GDP
terms, attained by a record in the first call), and by the refusal leaving the
estimator untouched without reading the batch.
"""

import math

import numpy as np
import pytest

from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._core import matrix_factorization as mf
from sklearn_dpol._core import qftl
from sklearn_dpol._core.noise import recording_releases
from sklearn_dpol.privacy import gaussian_mu
from sklearn_dpol.privacy import _streams as streams
from sklearn_dpol.privacy._streams import ROUNDING_ALLOWANCE, calibration_horizon

EPSILON, DELTA = 1.0, 1e-6
MU = gaussian_mu(EPSILON, DELTA)
# The worst case of the joint sensitivity: unit rows, targets in [-1, 1], no intercept.
TIGHT = dict(epsilon=EPSILON, delta=DELTA, fit_intercept=False, data_norm=1.0, y_bound=1.0,
             alpha=1e-2)


def worst_case_pair(n=23, position=0, seed=0):
    """Unit rows; row ``position`` is e_1 with y=1 in one set and the unit vector at
    60 degrees with y=-1 in the other (the supremum of the joint sensitivity)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.uniform(-1, 1, size=n)
    X[position], y[position] = [1.0, 0.0], 1.0
    X2, y2 = X.copy(), y.copy()
    X2[position], y2[position] = [0.5, math.sqrt(3) / 2], -1.0
    return (X, y), (X2, y2)


def stream_log(params, X, y, batch):
    reg = PrivateQFTLRegressor(random_state=0, **params)
    with recording_releases() as log:
        for lo in range(0, len(y), batch):
            reg.partial_fit(X[lo:lo + batch], y[lo:lo + batch])
    return reg, log


def test_calibration_horizon_counts_calls_for_factorizations_rows_for_trees():
    assert calibration_horizon("blt", 16_512, 1_000) == 17
    assert calibration_horizon("sqrt", 16_000, 1_000) == 16
    assert calibration_horizon("auto", 5, 7) == 1
    assert calibration_horizon("tree", 16_512, 1_000) == 16_512
    assert calibration_horizon("honaker", 100, 3) == 100
    assert calibration_horizon("blt", None, 1_000) is None
    with pytest.raises(ValueError, match="first_batch_rows"):
        calibration_horizon("blt", 10, 0)


@pytest.mark.parametrize("name", ["blt", "sqrt", "dense"])
def test_stream_is_calibrated_for_its_calls_and_spends_mu_at_the_last(name):
    (X, y), _ = worst_case_pair(n=23)
    reg, _ = stream_log(dict(TIGHT, horizon=23, prefix_sums=name), X, y, 5)
    assert reg._stream.horizon == 5 and reg._stream.t == 5     # ceil(23 / 5)
    norm = {"sqrt": lambda: mf.sqrt_column_norm(5),
            "blt": lambda: mf.blt_column_norm(*mf.blt_parameters(5), 5),
            "dense": lambda: mf.dense_column_norm(mf.final_weighted_factorization(5)[0])}[name]()
    assert reg._stream.column_norm == pytest.approx(norm)
    assert reg.noise_scale_ == pytest.approx(
        (1 + ROUNDING_ALLOWANCE) * reg.sensitivity_ * norm / MU, rel=1e-12)
    assert reg.privacy_.spent_mu == pytest.approx(MU)
    assert "at most 5 steps" in reg.privacy_.mechanism
    # Fewer calls than calibrated (a first batch smaller than the rest) is fine.
    reg, _ = stream_log(dict(TIGHT, horizon=23, prefix_sums=name), X, y, 23)
    assert reg._stream.horizon == 1 and reg.privacy_.spent_mu == pytest.approx(MU)


@pytest.mark.parametrize("name", ["blt", "sqrt", "dense", "auto"])
@pytest.mark.parametrize("position", [0, 4, 7, 22])
def test_noise_off_neighbours_stay_within_mu(name, position):
    """Replace one record by the worst case: the recorded pre-noise values of every
    release move by at most mu in GDP terms, exactly mu / (1 + a) for a record of the
    first call (column 0 of C over all the calibrated steps is released; the noise
    carries the rounding allowance a)."""
    params = dict(TIGHT, horizon=23, prefix_sums=name)
    logs = []
    for X, y in worst_case_pair(n=23, position=position):
        _, log = stream_log(params, X, y, 5)
        logs.append(log)
    assert len(logs[0]) == len(logs[1]) == 5
    spent = math.sqrt(sum(np.sum((a[0] - b[0]) ** 2) / a[1] ** 2 for a, b in zip(*logs)))
    assert spent <= MU * (1 + 1e-9)
    if position < 5:
        assert spent == pytest.approx(MU / (1 + ROUNDING_ALLOWANCE), rel=1e-8)


def test_a_call_past_the_calibrated_calls_is_refused_before_reading_data(monkeypatch):
    (X, y), _ = worst_case_pair(n=30)
    reg = PrivateQFTLRegressor(random_state=0, horizon=30, **{k: v for k, v in TIGHT.items()})
    reg.partial_fit(X[:10], y[:10])          # 3 calls calibrated
    reg.partial_fit(X[10:15], y[10:15])
    reg.partial_fit(X[15:20], y[15:20])
    before = (reg.coef_.copy(), reg.t_, reg._stream.t, reg.privacy_)

    def no_read():
        raise AssertionError("the refusal must come before the data is read")

    monkeypatch.setattr(reg, "_mark_data_read", no_read)
    with recording_releases() as log:
        with pytest.raises(ValueError, match=r"call 4 of a stream .* calibrated for 3 calls"):
            reg.partial_fit(X[20:25], y[20:25])
    assert log == []
    np.testing.assert_array_equal(reg.coef_, before[0])
    assert (reg.t_, reg._stream.t, reg.privacy_) == before[1:]
    # The tree counts rows, not calls: the same batches are fine.
    tree = PrivateQFTLRegressor(random_state=0, horizon=30, prefix_sums="tree", **TIGHT)
    for lo, hi in ((0, 10), (10, 15), (15, 20), (20, 25), (25, 30)):
        tree.partial_fit(X[lo:hi], y[lo:hi])
    assert tree.t_ == 30


def test_a_call_past_the_rounding_allowance_is_refused_before_reading_data(monkeypatch):
    """The stream layer's one rounding check (privacy/_streams.py, check_rounding), from
    public shapes only: a call whose worst-case rounding ratio passes the allowance is
    refused before any data is read, and the estimator is unchanged."""
    import pickle

    (X, y), _ = worst_case_pair(n=40)
    for name in ("blt", "sqrt"):
        reg = PrivateQFTLRegressor(random_state=0, horizon=None, prefix_sums=name, **TIGHT)
        reg.partial_fit(X[:5], y[:5])
        dim = qftl.packed_dim(2)
        assert reg._stream.dim == dim and reg._stream_max_rows == 5
        fraction = qftl.ATOM_COORDINATE_FRACTION
        ratio = streams.rounding_ratio(reg._stream, 2, 5, fraction)
        assert 0 < ratio < 1e-9       # far below the allowance at this size
        assert streams.rounding_ratio(reg._stream, 2, 10, fraction) == pytest.approx(2 * ratio)
        monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", 1.5 * ratio)
        reg.partial_fit(X[5:10], y[5:10])                  # 5 rows at step 2: within
        before = pickle.dumps(reg)
        calls = []
        monkeypatch.setattr(reg, "_mark_data_read", lambda: calls.append(1))
        with recording_releases() as log:
            with pytest.raises(ValueError, match="rounding"):
                reg.partial_fit(X[10:30], y[10:30])        # 20 rows at step 3: past it
        assert log == [] and calls == []
        monkeypatch.undo()
        assert pickle.dumps(reg) == before
        # The tree's own bound (doc/privacy.md 55.8): positions are rows, 30 after the
        # third call (5 levels of the epoch holding row 30), batches of up to 20.
        tree_ratio = streams.tree_rounding_ratio(5, 30, 20, qftl.ATOM_NORM_FRACTION)
        monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", 1.01 * tree_ratio)
        tree = PrivateQFTLRegressor(random_state=0, horizon=None, prefix_sums="tree", **TIGHT)
        for lo, hi in ((0, 5), (5, 10), (10, 30)):
            tree.partial_fit(X[lo:hi], y[lo:hi])
        monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", 0.99 * tree_ratio)
        tree = PrivateQFTLRegressor(random_state=0, horizon=None, prefix_sums="tree", **TIGHT)
        for lo, hi in ((0, 5), (5, 10)):
            tree.partial_fit(X[lo:hi], y[lo:hi])
        before = pickle.dumps(tree)
        with pytest.raises(ValueError, match="rounding"):
            tree.partial_fit(X[10:30], y[10:30])
        assert pickle.dumps(tree) == before
        monkeypatch.undo()


def test_a_first_call_past_the_allowance_is_refused_before_the_auto_norm(monkeypatch):
    """data_norm="auto" draws a private quantile from a stream's first batch: the
    rounding check comes before it (it reads neither the sensitivity nor mu)."""
    (X, y), _ = worst_case_pair(n=40)
    params = {k: v for k, v in TIGHT.items() if k != "data_norm"}
    reg = PrivateQFTLRegressor(random_state=0, horizon=40, data_norm="auto", **params)
    monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", 0.0)
    calls = []
    monkeypatch.setattr(reg, "_mark_data_read", lambda: calls.append(1))
    with recording_releases() as log:
        with pytest.raises(ValueError, match="rounding"):
            reg.partial_fit(X[:10], y[:10])
    assert log == [] and calls == []
    assert not hasattr(reg, "coef_") and not hasattr(reg, "data_norm_")


def test_a_tree_stream_carries_the_rounding_allowance():
    (X, y), _ = worst_case_pair(n=23)
    reg, _ = stream_log(dict(TIGHT, horizon=16, prefix_sums="tree"), X[:16], y[:16], 4)
    assert reg.noise_scale_ == pytest.approx(       # 5 levels over 16 rows (section 55.8)
        math.sqrt(5) * (1 + streams.ROUNDING_ALLOWANCE) * reg.sensitivity_ / MU, rel=1e-12)


def test_a_packed_atom_coordinate_is_at_most_sensitivity_over_sqrt_2():
    """The coordinate bound of the rounding check for QFTL (doc/privacy.md): every
    coordinate of a record's packed (v v^T, y v) is at most Delta / sqrt(2), attained as
    y_bound / data_norm -> 0 (so not Delta / 2)."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for R, B in ((1.0, 0.0), (1.0, 1e-3), (1.0, 0.5), (1.0, 1.0), (1.0, math.sqrt(2)),
                 (1.0, 3.0), (2.0, 0.1), (0.5, 7.0)):
        bound = qftl.joint_sensitivity(R, B)
        V = rng.normal(size=(2000, 3))
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        V *= R * rng.uniform(0.5, 1.0, size=(2000, 1))
        V[0] = [R, 0.0, 0.0]                                  # a feature at the bound
        V[1] = [R / math.sqrt(2), R / math.sqrt(2), 0.0]      # the off-diagonal's worst
        t = np.concatenate([[B, B], rng.uniform(-B, B, size=1998)])
        atoms = qftl.PackedStatistics(V, t).atoms(0, 2000)
        ratio = np.abs(atoms).max() / bound
        assert ratio <= qftl.ATOM_COORDINATE_FRACTION * (1 + 1e-12)
        worst = max(worst, ratio)
    assert worst == pytest.approx(qftl.ATOM_COORDINATE_FRACTION, rel=1e-12)   # R=1, B=0


def test_auto_alpha_of_a_stream_is_public_per_release():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 3)) / 2
    y = np.clip(X @ [0.5, -0.3, 0.2], -1, 1)
    reg = PrivateQFTLRegressor(random_state=0, horizon=3000)
    alphas = []
    with recording_releases() as log:
        for lo in range(0, 3000, 1000):
            reg.partial_fit(X[lo:lo + 1000], y[lo:lo + 1000])
            noise_std = reg._released_solve[2]
            lam = qftl.SPECTRAL_FRACTION * noise_std * math.sqrt(
                4 * math.log(2 * 16 / qftl.SPECTRAL_FAILURE))
            assert reg.alpha_ == pytest.approx(lam / (lo + 1000))
            assert reg._released_solve[3] == reg.alpha_
            alphas.append(reg.alpha_)
    assert len(log) == 3          # one release per call: nothing spent on the ridge
    assert alphas[0] > alphas[1] > alphas[2]
    # No noise: the floor (ridge-free follow-the-leader).
    exact = PrivateQFTLRegressor(epsilon=np.inf, horizon=3000).partial_fit(X, y)
    assert exact.alpha_ == pytest.approx(qftl.ALPHA_FLOOR * 2.0)


def test_auto_is_dense_for_at_most_128_calls_then_blt():
    """``"auto"`` resolves from the public horizon in calls: ``ceil(horizon / first batch)``;
    an unbounded stream is the unbounded dense one (a minimax block, then BLT)."""
    (X, y), _ = worst_case_pair(n=30)
    for horizon, batch, expected in ((30, 5, "dense"), (128 * 5, 5, "dense"),
                                     (128 * 5 + 1, 5, "blt"), (None, 5, "blt")):
        reg = PrivateQFTLRegressor(random_state=0, horizon=horizon, **TIGHT)
        reg.partial_fit(X[:batch], y[:batch])
        assert reg.prefix_sums == "auto" and reg.prefix_sums_ == expected
        assert reg._stream.horizon == (None if horizon is None else -(-horizon // batch))
