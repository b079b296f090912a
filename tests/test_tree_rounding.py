"""Section 55.8: the prefix-sum trees' rounding allowance.

A tree's node sums run over many rows, so the binade attack of section 54.8 moves a
released prefix by more than the sensitivity: the replaced record puts the running sum
in two different binades, and ``2^J`` tiny rows then round up in one data set and not in
the other. Noise off, the move is compared with the sensitivity the node noise is now
calibrated on (``(1 + a) Delta``, the rounding bound of the call at most ``a``). The
constants of :func:`tree_rounding_ratio` (a draw's coefficient on a row at most 1, the
number of draws reading a row, the variance floor) are checked on the lazy trees
themselves, by probing their draws with one-hot data.
"""

import math

import numpy as np
import pytest

from sklearn_dpol._core import prefix_sums as ps
from sklearn_dpol._core.stream_mechanisms import RowVectors
from sklearn_dpol.privacy import _streams as streams
from sklearn_dpol.privacy._rounding import UNIT_ROUNDOFF

J = 16
N = 2 ** (J + 1)
TAU = 1.2 * 2.0 ** (J - 53)


def _rows(record):
    rows = np.zeros((N, 2))
    rows[0, 0] = record
    rows[1:2 ** J, 0] = 1.0         # the running sum ends at 2^J or 2^J - 2
    rows[2 ** J:, 0] = TAU          # 0.6 ulp above 2^J, 1.2 ulp below it
    return rows


@pytest.mark.parametrize("name", ["tree", "honaker"])
def test_the_binade_attack_moves_a_prefix_past_delta_and_within_the_allowance(name):
    released = []
    for record in (1.0, -1.0):                        # |x - x'| = 2 = Delta
        stream = streams.make_stream_mechanism(name, dim=2, sensitivity=2.0, mu=math.inf,
                                               horizon=N)
        released.append(stream.advance(_rows(record), np.random.default_rng(0)))
    move = float(np.linalg.norm(released[0] - released[1]))
    assert move > 2.0 * (1 + 2e-7)                    # past the exact sensitivity
    calibrated = streams.make_stream_mechanism(name, dim=2, sensitivity=2.0, mu=1.0,
                                               horizon=N)
    ratio = streams.check_rounding(calibrated, 1, N, 0.5)   # the call is let through
    assert move <= 2.0 * (1 + ratio) <= 2.0 * (1 + streams.ROUNDING_ALLOWANCE)
    levels = N.bit_length()
    assert calibrated.sigma == pytest.approx(
        math.sqrt(levels) * (1 + streams.ROUNDING_ALLOWANCE) * 2.0, rel=1e-14)


def _independent(levels, positions, max_positions, fraction, per_position):
    depth = per_position + 3 + max_positions + 6 * levels * (levels + 1)
    gamma = depth * UNIT_ROUNDOFF / (1 - depth * UNIT_ROUNDOFF)
    error = gamma * 2.0 * positions * per_position * fraction
    return 2 * error * math.sqrt(levels * (levels + 2) / (levels / 8.0))


@pytest.mark.parametrize("args", [(7, 100, 10, 0.5, 1), (21, 10**6, 1000, 2 ** -0.5, 1),
                                  (12, 3000, 1, 0.5, 500)])
def test_the_tree_bound_is_the_derived_formula(args):
    ratio = streams.tree_rounding_ratio(*args)
    assert ratio == pytest.approx(_independent(*args), rel=1e-12)
    levels, positions, max_positions, fraction, per_position = args
    for wrong in (_independent(levels, 2 * positions, max_positions, fraction, per_position),
                  _independent(levels, positions, max_positions, fraction / 2, per_position)):
        assert ratio != pytest.approx(wrong, rel=0.1)


def test_the_check_reads_the_tree_shape_and_refuses_from_public_values():
    known = streams.make_stream_mechanism("tree", dim=3, sensitivity=1.0, mu=1.0,
                                          horizon=1000)
    # positions after the call (capped at the horizon), the horizon's levels
    assert streams.rounding_ratio(known, 101, 50, 0.5) == streams.tree_rounding_ratio(
        10, 150, 50, 0.5)
    assert streams.rounding_ratio(known, 990, 50, 0.5) == streams.tree_rounding_ratio(
        10, 1000, 50, 0.5)
    unbounded = streams.make_stream_mechanism("honaker", dim=3, sensitivity=1.0, mu=1.0,
                                              horizon=None)
    assert streams.rounding_ratio(unbounded, 101, 50, 0.5) == streams.tree_rounding_ratio(
        150 .bit_length(), 150, 50, 0.5)
    # a stream of ten million rows in batches of a million is past the allowance
    with pytest.raises(ValueError, match="rounding"):
        streams.check_rounding(unbounded, 9 * 10**6 + 1, 10**6, 0.5)


def _probe(estimator, batches, row, epoch):
    """The draws' data coefficients on one row (one-hot data) and their variances."""
    recorded = []
    original = ps.HonakerTree._release

    def release(self, centre, variance, rng):
        recorded.append((float(centre[0]), float(variance)))
        return original(self, centre, variance, rng)

    ps.HonakerTree._release = release
    try:
        total = sum(batches)
        tree = (ps.EpochTree(1, 1.0, 1.0, estimator) if epoch
                else ps.KnownHorizonPrefixSums(1, 1.0, 1.0, total, estimator))
        rng, lo = np.random.default_rng(0), 0
        for size in batches:
            data = np.zeros((size, 1))
            if lo <= row < lo + size:
                data[row - lo, 0] = 1.0
            tree.advance(RowVectors(data), rng)
            lo += size
    finally:
        ps.HonakerTree._release = original
    return np.array(recorded).reshape(-1, 2)


@pytest.mark.parametrize("estimator", ["tree", "honaker"])
@pytest.mark.parametrize("epoch", [False, True])
def test_the_constants_hold_on_the_lazy_trees(estimator, epoch):
    """Every draw's coefficient on a row is at most 1 in absolute value (the bound uses
    TREE_COEFFICIENT = 2 for intermediate values), at most levels (levels + 2) draws read a
    row, every draw's variance is at least 1/8 sigma^2, and the exact part of the chain
    rule is at most levels (the calibration)."""
    generator = np.random.default_rng(7)
    for _ in range(6):
        total = int(generator.integers(9, 90))
        batches, left = [], total
        while left:
            size = min(left, int(generator.integers(1, 12)))
            batches.append(size)
            left -= size
        for row in range(total):
            draws = _probe(estimator, batches, row, epoch)
            lam, variance = draws[:, 0], draws[:, 1]
            levels = (row + 1).bit_length() if epoch else total.bit_length()
            reads = lam != 0
            assert np.abs(lam).max() <= 1.0 + 1e-12
            assert reads.sum() <= levels * (levels + 2)
            assert variance[variance > 0].min() >= streams.TREE_VARIANCE_FLOOR
            assert (lam[reads] ** 2 / variance[reads]).sum() <= levels * (1 + 1e-9)


def test_a_first_igd_stream_call_past_the_allowance_is_refused_before_reading(monkeypatch):
    """Review 113 F1: the first DP-FTRL call (and the first after fit) was checked only
    after the data was read (charged); it is now checked on the mechanism it would build,
    refunded, and the message counts the rows a tree position sums, without advising a
    tree to use a tree."""
    from sklearn_dpol import PrivacyAccountant, PrivateIGDClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE",
                        0.5 * streams.tree_rounding_ratio(1, 1, 1, 0.5, 200))
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    clf = PrivateIGDClassifier(classes=[0, 1], prefix_sums="tree", random_state=0,
                               accountant=accountant)
    read = []
    monkeypatch.setattr(clf, "_mark_data_read", lambda: read.append(1))
    with pytest.raises(ValueError, match="200 samples summed in each position") as info:
        clf.partial_fit(X[:200], y[:200])
    assert "prefix_sums='tree'" not in str(info.value)
    assert read == [] and accountant.spent().n_charges == 0 and not hasattr(clf, "coef_")
