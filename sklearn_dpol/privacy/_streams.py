"""The stream-mechanism layer: one protocol, its calibration and one factory.

A *stream mechanism* releases the prefix sums ``S_t = x_1 + ... + x_t`` of a
stream of vectors, one release per ``advance`` call, and all its releases
together are ``mu``-GDP for every record under replace-one neighbours when
one record changes one row's vector by at most ``sensitivity`` in L2. Every
stream of the library that releases prefix sums goes through
:func:`make_stream_mechanism`; the implementations live in
:mod:`sklearn_dpol._core.stream_mechanisms`.

Mechanisms (``doc/privacy.md``, sections 3 and "Matrix-factorization continual
release"):

``"dense"`` (the default of ``"auto"`` for a known horizon of at most 128 steps,
and for an unbounded stream that calibrates on steps with first batches of at least
128 rows and at most ``2^15`` coordinates: :func:`resolve_mechanism`)
    The lower-triangular factorization ``A = B C`` minimising
    ``sum_t w_t^2 Var_t`` with ``w = (1, ..., 1, sqrt(N - 1))`` over the ``N``
    steps: the last release (the model a stream ends with) weighs as much as
    all earlier ones together. Computed from public ``N`` on first use (a
    fixed point, cached); ``O(N * dim)`` memory. At 17 steps its last release
    has 0.54 times BLT's variance, its earlier ones at most 1.45 times
    (``doc/privacy.md``, "Final-weighted dense factorization for short streams").
    ``horizon=None``: a dense block of 128 steps whose weights minimise the
    largest ratio of its variance at ``t`` to the known-horizon default's for
    ``t`` steps, then an unbounded BLT (a block-diagonal ``C``; doc/privacy.md,
    "Unbounded streams: a minimax dense block, then BLT").
``"blt"`` (the default of ``"auto"`` otherwise)
    Buffered linear Toeplitz factorization ``A = B C`` with 4 buffers, fitted
    offline (data-free) to minimise the error of the last prefix, for each power
    of two from ``2^4`` to ``2^16`` steps (a table in the module). Memory and
    work per step ``O(4 * dim)``. ``horizon=None``: fitted for
    ``2^12`` steps with the column norm of the infinite stream, so the
    guarantee holds however long the stream runs.
``"sqrt"``
    The square-root factorization ``B = C = A^(1/2)``; ``O(t * dim)`` memory.
    ``horizon=None``: restarted on epochs of ``1, 2, 4, ...`` steps.
``"tree"``, ``"honaker"``
    Binary tree of noisy dyadic sums over *rows* (the seed's Algorithm 5),
    with the plain or Honaker estimator; epoch trees for ``horizon=None``.

A factorization mechanism takes one step per ``advance`` (the batch's vectors
summed); its ``horizon`` counts steps. Its noise is calibrated on
``(1 + ROUNDING_ALLOWANCE) * sensitivity`` (:func:`factorization_sigma`): the
allowance covers the floating-point rounding of its noised values, which
combine earlier steps, for every call that :func:`check_rounding` lets
through; a stream calls it before reading each batch (public shapes only).
A tree takes one position per row; its ``horizon`` counts rows. Its node
noise is calibrated on the same ``(1 + ROUNDING_ALLOWANCE) * sensitivity``
(``_core/prefix_sums.py``) and the same check refuses a call past it
(:func:`tree_rounding_ratio`: its node sums run over many calls' rows). An estimator
whose horizon counts rows can pass it to either: a batch has at least one row,
so a stream of ``H`` rows never takes more than ``H`` steps.
:func:`calibration_horizon` does better from the first batch's size (public):
``ceil(H / n_1)`` steps, a later call past them refused before its data is
read (what ``PrivateQFTLRegressor`` does).

The protocol (every mechanism has these)::

    dim, sensitivity, mu, horizon   # as constructed
    name                            # "blt", "sqrt", "tree" or "honaker"
    granularity                     # "step" (one per advance) or "row"
    sigma                           # noise standard deviation per noised value
    t, n_rows                       # positions (steps or rows) and rows so far
    advance(batch, rng) -> ndarray  # released prefix sum after the batch
    spent_fraction() -> float       # (spent mu / mu)^2 of what is released so far
    prefix_variance(t) -> float     # per-coordinate noise variance of the prefix at t
    current_variance() -> float     # the same at the last release
    describe() -> str               # what it is, for PrivacyGuarantee.mechanism
    snapshot()                      # a copy to advance (a failed call changes nothing)

``batch`` is an array of shape ``(m, dim)`` or a row-statistics object with
``n_rows``, ``dim``, ``sum(lo, hi)`` and ``atoms(lo, hi)``. ``rng`` is a numpy
``Generator``; all noise is drawn by
:func:`~sklearn_dpol._core.noise.gaussian_release`.
"""

import functools
import math
from numbers import Integral
from typing import Optional, Protocol, runtime_checkable

import numpy as np

from ._rounding import UNIT_ROUNDOFF, gamma, sum_rounding_factor
from ._schedules import AnytimeSchedule, KnownHorizonSchedule

__all__ = [
    "MECHANISMS",
    "ROUNDING_ALLOWANCE",
    "StreamMechanism",
    "budget_schedule",
    "calibration_horizon",
    "check_rounding",
    "factorization_sigma",
    "make_stream_mechanism",
    "resolve_mechanism",
    "rounding_growth",
    "stream_calls",
    "rounding_ratio",
    "tree_rounding_ratio",
]

MECHANISMS = ("blt", "sqrt", "dense", "tree", "honaker")

# Relative allowance on the sensitivity of every factorization mechanism for the
# floating-point rounding of its noised ``(C x)_t``, which combines earlier steps
# (doc/privacy.md, "Floating point: one rounding allowance for every factorization
# stream"): the factory calibrates the noise on ``(1 + ROUNDING_ALLOWANCE) Delta
# max_j ||C[:, j]||``, and :func:`check_rounding` refuses, from public shapes, a
# call whose worst-case rounding bound would pass the allowance. The trees' node noise
# carries the same allowance (_core/prefix_sums.py; bound: tree_rounding_ratio).
ROUNDING_ALLOWANCE = 1e-3
_UNIT_ROUNDOFF = UNIT_ROUNDOFF   # privacy/_rounding.py


@runtime_checkable
class StreamMechanism(Protocol):
    """The protocol every stream mechanism implements (see the module docstring).

    :func:`make_stream_mechanism` returns implementations from
    :mod:`sklearn_dpol._core.stream_mechanisms`; ``isinstance(m,
    StreamMechanism)`` checks that one has every member.
    """

    dim: int
    sensitivity: float
    mu: float
    horizon: Optional[int]
    name: str
    granularity: str
    sigma: float
    t: int
    n_rows: int

    def advance(self, batch, rng): ...

    def spent_fraction(self): ...

    def prefix_variance(self, t): ...

    def current_variance(self): ...

    def describe(self): ...

    def snapshot(self): ...


_NOT_ON_STEPS = object()
#: An unbounded stream takes the dense block by default only if its first batch has at
#: least this many rows: the block's step costs ``O(t dim)`` (``t <= 128``) against
#: BLT's ``O(dim)``, at most ``256 / rows`` times the batch's own statistics.
UNBOUNDED_DENSE_MIN_ROWS = 128
#: ... and only if the block's memory, ``2 * 128 * dim`` floats, stays within 64 MB.
UNBOUNDED_DENSE_MAX_DIM = 1 << 15


def resolve_mechanism(requested, steps=_NOT_ON_STEPS, *, first_rows=None, dim=None):
    """The mechanism ``"auto"`` stands for; others pass through after a check.

    ``steps`` is public: a stream's horizon in calls (:func:`calibration_horizon`),
    ``None`` for an unbounded stream; omitted when the caller does not calibrate
    on steps. ``"auto"`` is ``"dense"`` for a known horizon of ``steps <=
    DENSE_MAX_STEPS`` (128) steps, and for ``steps=None`` (the unbounded dense
    stream: a minimax block of 128 steps, then BLT) when the stream's first
    batch has at least :data:`UNBOUNDED_DENSE_MIN_ROWS` rows and its vectors at
    most :data:`UNBOUNDED_DENSE_MAX_DIM` coordinates (``first_rows`` and
    ``dim``, public shapes; per-row or very wide unbounded streams keep BLT's
    ``O(dim)`` steps and memory), else ``"blt"``.
    """
    if requested == "auto":
        from .._core.matrix_factorization import DENSE_MAX_STEPS

        if steps is None:
            batchy = first_rows is not None and int(first_rows) >= UNBOUNDED_DENSE_MIN_ROWS
            narrow = dim is not None and int(dim) <= UNBOUNDED_DENSE_MAX_DIM
            return "dense" if batchy and narrow else "blt"
        if steps is not _NOT_ON_STEPS and 1 <= int(steps) <= DENSE_MAX_STEPS:
            return "dense"
        return "blt"
    if requested not in MECHANISMS:
        raise ValueError(f"unknown stream mechanism {requested!r}; expected one of "
                         f"{('auto',) + MECHANISMS}.")
    return requested


def calibration_horizon(mechanism, horizon_rows, first_batch_rows, max_calls=None):
    """The ``horizon`` to build ``mechanism`` with, for a stream of at most ``horizon_rows`` rows.

    A tree counts rows: ``horizon_rows``. A factorization takes one step per
    call, so it is calibrated on calls: ``ceil(horizon_rows / first_batch_rows)``
    steps, the number of calls a stream of ``horizon_rows`` rows in batches of
    the first batch's size takes. Both arguments are public under replace-one
    neighbours (a horizon is a parameter, a batch size is a shape, the same in
    every neighbouring stream), so the calibration reads no data. A call past
    that many steps must be refused before any data is read (the estimator's
    check; the mechanism itself raises too, whatever the estimator), which is
    what keeps every stream within the column norm it was calibrated on
    (``doc/privacy.md``, "QFTL streams calibrated on calls").

    Parameters
    ----------
    mechanism : str
        A mechanism name (``"auto"``, ``"blt"``, ``"sqrt"``, ``"dense"``, ``"tree"``,
        ``"honaker"``): every one but the trees counts steps.
    horizon_rows : int or None
        Largest number of rows of the stream; ``None`` (unbounded) passes through.
    first_batch_rows : int
        Rows of the stream's first call, ``>= 1``.
    max_calls : int or None, default=None
        The number of calls the stream declared up front (the estimators'
        ``max_calls`` parameter, public): a factorization is then calibrated on
        ``max_calls`` steps whatever the first batch's size (``doc/privacy.md``,
        "A stream's number of calls, declared up front").

    Returns
    -------
    horizon : int or None
    """
    if horizon_rows is None or resolve_mechanism(mechanism) in ("tree", "honaker"):
        return horizon_rows
    return stream_calls(horizon_rows, first_batch_rows, max_calls)


def stream_calls(horizon_rows, first_batch_rows, max_calls=None):
    """The number of ``partial_fit`` calls a stream is calibrated for (public values only).

    ``max_calls`` when given; else ``ceil(horizon_rows / first_batch_rows)`` (the
    calls of a stream of ``horizon_rows`` rows in batches of the first one's size);
    ``None`` for ``horizon_rows=None`` without ``max_calls``.
    """
    if max_calls is not None:
        return int(max_calls)
    if horizon_rows is None:
        return None
    first = int(first_batch_rows)
    if first < 1:
        raise ValueError(f"first_batch_rows must be >= 1; got {first_batch_rows!r}.")
    return max(1, -(-int(horizon_rows) // first))


def factorization_sigma(column_norm, sensitivity, mu):
    """Noise on ``C x`` for ``mu``-GDP, rounding allowance included (0 if mu is inf).

    ``(1 + ROUNDING_ALLOWANCE) * sensitivity * max_j ||C[:, j]|| / mu``: the
    allowance covers the rounding of the computed ``(C x)_t`` for every call
    that :func:`check_rounding` lets through. Every factorization mechanism of
    :func:`make_stream_mechanism` is calibrated here (the epochs of an unbounded
    square root too).
    """
    if math.isinf(mu):
        return 0.0
    return (1.0 + ROUNDING_ALLOWANCE) * float(sensitivity) * float(column_norm) / float(mu)


def rounding_growth(mechanism, steps):
    """``kappa``: bound on the rounding error of one computed ``(C x)_t`` coordinate.

    In units of ``u * M`` (``u = 2^-53``, ``M`` a bound on every step vector's
    coordinates), for any ``t <= steps``, with a factor 2 of slack for the
    second-order terms. 0 for the trees, whose noised values are sums of their
    own positions. BLT (``X_i <- theta_i X_i + x``, then ``x + omega . X``):
    ``2 (2 sum_i omega_i / (1 - theta_i)^2 + (b + 1) sum_i omega_i / (1 - theta_i)
    + 1)``. Dense (a dot product with a row of ``C``): ``2 steps max_t
    sum_j |C[t, j]|``. Square root (a dot product of at most ``steps`` terms):
    ``2 steps sum_(k < steps) f_k`` (an epoch of an unbounded one has at most
    ``steps`` steps, so the bound covers it).

    Parameters
    ----------
    mechanism : object
        A mechanism built by :func:`make_stream_mechanism`.
    steps : int
        The largest step index the bound must cover.

    Returns
    -------
    kappa : float
    """
    from .._core.matrix_factorization import sqrt_coefficients

    if mechanism.granularity == "row":
        return 0.0
    if mechanism.name == "dense" and mechanism.horizon is None:
        # The dense block's rows, then (past its steps) an unbounded BLT epoch with its
        # own (C x)_t: a record's rounding stays in its block, so the block's bound up
        # to its last step, the larger of the two after, each in units of the column
        # norm its noise is calibrated on (see rounding_ratio), so that the epoch with
        # the smaller norm is not under-counted.
        epochs = mechanism.inner.make_epoch
        block = epochs(0)
        own = _dense_growth(block.C, steps) / max(mechanism.column_norm, 1.0)
        if int(steps) > len(block.C):
            tail = epochs(1)
            own = max(own, _blt_growth(tail.omega, tail.theta) / max(mechanism.tail_norm, 1.0))
        return own * max(mechanism.column_norm, 1.0)
    if mechanism.name == "dense":
        return _dense_growth(mechanism.inner.C, steps)
    if mechanism.name == "blt":
        return _blt_growth(mechanism.inner.omega, mechanism.inner.theta)
    steps = max(int(steps), 1)
    return 2.0 * steps * float(np.sum(sqrt_coefficients(steps)))


def _dense_growth(C, steps):
    """Rounding of a dot product of at most ``steps`` terms with a row ``C[t, :t+1]``."""
    steps = min(max(int(steps), 1), len(C))
    return 2.0 * steps * float(np.max(np.sum(np.abs(C[:steps]), axis=1)))


def _blt_growth(omega, theta):
    """Rounding of BLT's buffer recursion (see :func:`rounding_growth`)."""
    omega = np.asarray(omega, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    return 2.0 * (2.0 * float(np.sum(omega / (1.0 - theta) ** 2))
                  + (len(theta) + 1) * float(np.sum(omega / (1.0 - theta))) + 1.0)


def rounding_ratio(mechanism, steps, max_rows, coordinate_fraction, norm_fraction=0.5,
                   rows_per_position=1):
    """Public worst-case bound on the rounding part of the shift, relative to ``Delta ||C||``.

    Two parts. The step's own sum: the replaced record's step vector sums at
    most ``max_rows`` rows in floating point, and the two neighbours' computed
    sums differ from ``d`` by at most ``sum_rounding_factor(max_rows,
    norm_fraction) - 1`` of ``Delta`` (``doc/privacy.md`` section 54.13,
    ``privacy/_rounding.py``), which ``C`` carries to at most that fraction of
    ``Delta ||C||``. And the combination of the steps:

    Neighbouring streams' computed ``(C x)_t`` differ by ``C[t, p] d`` plus the
    two rounding errors, each at most ``u kappa M`` per coordinate
    (:func:`rounding_growth`), with ``M = max_rows * c * Delta`` a bound on the
    step vectors' coordinates (a step sums at most ``max_rows`` rows, each of
    whose coordinates is at most ``c * Delta`` in absolute value, ``Delta`` the
    mechanism's sensitivity). Over ``steps`` steps of ``dim`` coordinates they
    add at most ``2 u kappa M sqrt(steps dim)`` in L2, which is
    ``2 u kappa c max_rows sqrt(steps dim) / ||C||`` times ``Delta ||C||``
    (``||C|| >= 1``: ``c_0 = 1``; an unbounded square root uses 1).

    Parameters
    ----------
    mechanism : object
        A mechanism built by :func:`make_stream_mechanism`.
    steps : int
        Index of the call to check (``mechanism.t + 1`` before it is made).
    max_rows : int
        Largest number of rows in one step so far, this call included (public).
    coordinate_fraction : float
        ``c``: a bound on the absolute value of every coordinate of one row's
        vector, as a fraction of the sensitivity. DP-FTRL: ``1 / (2 sqrt(K))``
        (each of ``K`` problems' gradients has norm at most ``Delta / (2
        sqrt(K))``); QFTL: ``1 / sqrt(2)`` (``_core/qftl.py``,
        ``ATOM_COORDINATE_FRACTION``).
    norm_fraction : float, default=0.5
        A bound on one row's vector's norm, as a fraction of the sensitivity:
        DP-FTRL 1/2; QFTL ``1 / sqrt(2)`` (``ATOM_NORM_FRACTION``).

    A tree: ``steps`` is its position count before the call plus one,
    ``max_rows`` the most positions one call adds, ``rows_per_position`` the
    most records one position sums (1 when a position is a row; DP-FTRL gives a
    tree one position per call); see :func:`tree_rounding_ratio`.

    Returns
    -------
    ratio : float
    """
    if mechanism.granularity == "row":
        positions = int(steps) - 1 + int(max_rows)     # positions after the call, at most
        if mechanism.horizon is not None:
            positions = min(positions, int(mechanism.horizon))
            levels = int(mechanism.horizon).bit_length()
        else:
            levels = positions.bit_length()  # the epoch of the last one: <= 2^(levels-1) positions
        return tree_rounding_ratio(levels, positions, max_rows, norm_fraction,
                                   rows_per_position)
    kappa = rounding_growth(mechanism, steps)
    norm = float(mechanism.column_norm)
    norm = norm if math.isfinite(norm) else 1.0
    step_sum = sum_rounding_factor(max_rows, norm_fraction) - 1.0
    return step_sum + (2.0 * _UNIT_ROUNDOFF * kappa * float(coordinate_fraction)
                       * float(max_rows) * math.sqrt(float(steps) * mechanism.dim)
                       / max(norm, 1.0))


# The constants of tree_rounding_ratio (doc/privacy.md section 55.8): every draw's mean
# gives each row a coefficient of absolute value at most 1, and every intermediate value
# at most TREE_COEFFICIENT; at most levels (levels + 2) draws read a given row; every
# draw's variance is at least TREE_VARIANCE_FLOOR sigma^2; a call adds at most
# 6 (levels + 1) roundings to a row's path, over at most ``levels`` calls.
TREE_COEFFICIENT = 2.0
TREE_VARIANCE_FLOOR = 0.125


def tree_rounding_ratio(levels, positions, max_positions, norm_fraction=0.5,
                        rows_per_position=1):
    """Public worst-case bound on a tree's rounding, relative to ``sqrt(levels) Delta``.

    A tree (``_core/prefix_sums.py``) releases Gaussian draws whose means are
    linear in its positions' vectors (a position's data in its blocks' sums,
    conditional means of the lazy draws); a position sums at most ``m =
    rows_per_position`` records. Neighbouring streams' computed means differ
    from the exact ones only in the draws whose computation reads the replaced
    record's position (at most ``levels (levels + 2)``), each by at most twice
    ``gamma_D TREE_COEFFICIENT positions m f Delta`` (Higham's bound for a
    computation whose every term passes through at most ``D = m + 3 +
    max_positions + 6 levels (levels + 1)`` roundings, with intermediate
    coefficients at most ``TREE_COEFFICIENT`` on at most ``positions m``
    records' terms of norm at most ``f Delta``). By the chain rule
    of the draws' GDP and the triangle inequality in the noise-weighted norm,
    the rounding adds at most ``2 e sqrt(N / (v levels))`` to the exact
    ``sqrt(levels) Delta`` (``v`` the variance floor, in units of
    ``sigma^2``): this function returns that ratio (doc/privacy.md section
    55.8).

    Parameters
    ----------
    levels : int
        Levels of the tree (its noise is ``sqrt(levels) Delta (1 + a) / mu``).
    positions : int
        Positions the tree holds after the call (a bound).
    max_positions : int
        Most positions one call adds so far, this one included.
    norm_fraction : float, default=0.5
        A bound on one record's vector's norm over the sensitivity.
    rows_per_position : int, default=1
        Most records one position sums.

    Returns
    -------
    ratio : float
    """
    levels, rows = max(int(levels), 1), max(int(rows_per_position), 1)
    depth = rows + 3 + int(max_positions) + 6 * levels * (levels + 1)
    draws = levels * (levels + 2)
    error = (gamma(depth) * TREE_COEFFICIENT * max(int(positions), 1) * rows
             * float(norm_fraction))
    return 2.0 * error * math.sqrt(draws / (TREE_VARIANCE_FLOOR * levels))


def check_rounding(mechanism, steps, max_rows, coordinate_fraction, *, norm_fraction=0.5,
                   rows_per_position=1, advice=""):
    """Refuse a call whose worst-case rounding would pass the allowance (the layer's one check).

    Every stream that advances a factorization mechanism calls this before it
    reads the call's data, with public values only: the call's index, the
    largest batch of the stream so far (this one included), and the bound
    ``coordinate_fraction`` of its per-row vectors (see :func:`rounding_ratio`).

    Parameters
    ----------
    mechanism : object
        A mechanism built by :func:`make_stream_mechanism`.
    steps : int
        Index of the call about to be made (``mechanism.t + 1``; a tree's ``t``
        counts rows).
    max_rows : int
        Largest number of rows in one call of the stream, this one included.
    coordinate_fraction : float
        Bound on every coordinate of one row's vector, over the sensitivity.
    norm_fraction : float, default=0.5
        Bound on one row's vector's norm, over the sensitivity.
    rows_per_position : int, default=1
        A tree's most records in one position (see :func:`rounding_ratio`).
    advice : str, default=""
        What the caller can do instead, appended to the message.

    Returns
    -------
    ratio : float
        :func:`rounding_ratio`, at most ``ROUNDING_ALLOWANCE``.

    Raises
    ------
    ValueError
        If the ratio exceeds ``ROUNDING_ALLOWANCE``.
    """
    ratio = rounding_ratio(mechanism, steps, max_rows, coordinate_fraction, norm_fraction,
                           rows_per_position)
    if ratio > ROUNDING_ALLOWANCE:
        batches = (f"{int(rows_per_position)} samples summed in each position"
                   if mechanism.granularity == "row" and int(rows_per_position) > 1
                   else f"batches of up to {int(max_rows)} samples")
        raise ValueError(
            f"This call (step {int(steps)}, {batches}, "
            f"vectors of dimension {mechanism.dim}) would take the worst-case "
            f"floating-point rounding of the {mechanism.name!r} prefix sums to {ratio:.3g} "
            "of the sensitivity, past the allowance the noise was calibrated with "
            f"({ROUNDING_ALLOWANCE:g}). Use smaller batches or start a new stream"
            + (f"; {advice}" if advice else "") + ".")
    return ratio


def make_stream_mechanism(mechanism, *, dim, sensitivity, mu, horizon):
    """The one factory of stream mechanisms.

    Parameters
    ----------
    mechanism : {"auto", "blt", "sqrt", "dense", "tree", "honaker"}
        Which mechanism; ``"auto"`` is ``"blt"`` here (a caller that calibrates
        on steps resolves it first with :func:`resolve_mechanism`, which picks
        ``"dense"`` for at most 128 steps or an unbounded stream). ``"dense"``
        needs a horizon of at most 128 steps, or ``None`` (a minimax dense block
        of 128 steps, then an unbounded BLT).
    dim : int
        Length of the summed vectors.
    sensitivity : float
        Replace-one L2 sensitivity of one row's vector (a record is one row).
    mu : float
        GDP parameter of all the releases together (``inf``: no noise).
    horizon : int or None
        Largest number of rows (trees) or steps (factorizations), ``None`` for
        an unbounded stream.

    Returns
    -------
    mechanism : object
        A fresh mechanism implementing the protocol of this module.
    """
    from .._core import matrix_factorization as mf
    from .._core.stream_mechanisms import FactorizationMechanism, TreeMechanism

    name = resolve_mechanism(mechanism)
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, Integral)
                                or horizon < 1):
        raise ValueError(f"horizon must be an integer >= 1 or None; got {horizon!r}.")
    if not (isinstance(dim, Integral) and dim >= 1):
        raise ValueError(f"dim must be an integer >= 1; got {dim!r}.")
    sensitivity, mu = float(sensitivity), float(mu)
    if not (sensitivity >= 0 and math.isfinite(sensitivity)) or not mu > 0:
        raise ValueError(f"need a finite sensitivity >= 0 and mu > 0; got {sensitivity!r}, {mu!r}.")
    if name in ("tree", "honaker"):
        return TreeMechanism(name, dim, sensitivity, mu, horizon)
    if name == "dense" and horizon is None:
        C, B = mf.anytime_factorization()
        norm = mf.dense_column_norm(C)
        omega, theta = mf.blt_parameters(None)
        tail_norm = mf.blt_column_norm(omega, theta, None)
        epochs = _DenseThenBLT(dim, factorization_sigma(norm, sensitivity, mu), C, B,
                               factorization_sigma(tail_norm, sensitivity, mu), omega, theta)
        # spent: the block's first t rows (all of mu once it is complete: C's columns
        # are one block's or the other's, each calibrated on its own norm).
        stream = FactorizationMechanism(
            name, dim, sensitivity, mu, None, mf.StepEpochs(epochs), norm,
            functools.partial(mf.dense_column_norm, C),
            f"dense lower-triangular factorization over the first {len(C)} steps of an "
            "unbounded stream (one batch per step), weighted for the smallest largest "
            "ratio to a known horizon's error, then BLT for an unbounded stream (column "
            f"norms {norm:.4g} and {tail_norm:.4g}, each block calibrated on its own)")
        stream.tail_norm = tail_norm
        return stream
    if name == "dense":
        if horizon > mf.DENSE_MAX_STEPS:
            raise ValueError(
                f"prefix_sums='dense' needs a horizon of at most {mf.DENSE_MAX_STEPS} "
                f"steps (calls) or None; got {horizon!r}. Use 'blt' for longer streams.")
        C, B = mf.final_weighted_factorization(horizon)
        norm = mf.dense_column_norm(C)
        sigma = factorization_sigma(norm, sensitivity, mu)
        spent = functools.partial(mf.dense_column_norm, C)   # t -> norm of C's first t rows
        return FactorizationMechanism(
            name, dim, sensitivity, mu, horizon, mf.DensePrefixSums(dim, sigma, C, B), norm,
            spent,
            f"dense lower-triangular factorization over at most {horizon} steps (one batch per step), "
            "optimal for the prefix sums with the last weighted as all earlier ones together, "
            f"column norm {norm:.4g}, noise {sigma:.4g} per step")
    if name == "sqrt":
        if horizon is None:
            inner = mf.StepEpochs(_SqrtEpoch(dim, sensitivity, mu))
            return FactorizationMechanism(
                name, dim, sensitivity, mu, None, inner, math.nan, None,
                "square-root Toeplitz factorization A^(1/2) restarted on epochs of 2^k steps "
                "(one batch per step), each epoch calibrated at the full mu")
        norm = mf.sqrt_column_norm(horizon)
        sigma = factorization_sigma(norm, sensitivity, mu)
        return FactorizationMechanism(
            name, dim, sensitivity, mu, horizon,
            mf.SqrtToeplitzPrefixSums(dim, sigma, horizon), norm, mf.sqrt_column_norm,
            f"square-root Toeplitz factorization A^(1/2) over at most {horizon} steps "
            f"(one batch per step), column norm {norm:.4g}, noise {sigma:.4g} per step")
    # BLT
    if horizon is None:
        omega, theta = mf.blt_parameters(None)
        norm = mf.blt_column_norm(omega, theta, None)
        where = (f"an unbounded stream (fitted for {mf.UNBOUNDED_DESIGN_STEPS} steps, column "
                 "norm of the infinite stream)")
    else:
        omega, theta = mf.blt_parameters(horizon)
        norm = mf.blt_column_norm(omega, theta, int(horizon))
        where = f"at most {horizon} steps"
    spent = functools.partial(mf.blt_column_norm, omega, theta)   # picklable: t -> norm
    sigma = factorization_sigma(norm, sensitivity, mu)
    inner = mf.BLTPrefixSums(dim, sigma, omega, theta, horizon)
    return FactorizationMechanism(
        name, dim, sensitivity, mu, horizon, inner, norm, spent,
        f"BLT matrix factorization ({len(theta)} buffers) over {where} (one batch per step), "
        f"column norm {norm:.4g}, noise {sigma:.4g} per step")


class _DenseThenBLT:
    """Epochs of an unbounded ``"dense"`` stream: the dense block, then BLT forever.

    Each is calibrated at the full ``mu`` on its own column norm: a record lies
    in one block (``C`` block-diagonal), so the whole stream is ``mu``-GDP.
    """

    def __init__(self, dim, sigma, C, B, tail_sigma, omega, theta):
        self.dim, self.sigma, self.C, self.B = dim, sigma, C, B
        self.tail_sigma, self.omega, self.theta = tail_sigma, omega, theta

    def __call__(self, k):
        from .._core import matrix_factorization as mf

        if k == 0:
            return mf.DensePrefixSums(self.dim, self.sigma, self.C, self.B)
        if k == 1:
            return mf.BLTPrefixSums(self.dim, self.tail_sigma, self.omega, self.theta, None)
        raise AssertionError("an unbounded BLT epoch never closes")


class _SqrtEpoch:
    """Epoch ``k`` of an unbounded square-root stream: ``2^k`` steps at the full ``mu``."""

    def __init__(self, dim, sensitivity, mu):
        self.dim, self.sensitivity, self.mu = dim, sensitivity, mu

    def __call__(self, k):
        from .._core import matrix_factorization as mf

        steps = 1 << k
        sigma = factorization_sigma(mf.sqrt_column_norm(steps), self.sensitivity, self.mu)
        return mf.SqrtToeplitzPrefixSums(self.dim, sigma, steps)


def budget_schedule(horizon):
    """The budget schedule of a stream of per-release Gaussian mechanisms.

    Uniform over ``horizon`` samples (:class:`KnownHorizonSchedule`), or
    :class:`AnytimeSchedule` for ``horizon=None``. Used by the streams that
    perturb each released iterate with its own share of the budget (the
    seed's IGD calibration) instead of releasing prefix sums.
    """
    if horizon is None:
        return AnytimeSchedule()
    return KnownHorizonSchedule(horizon)
