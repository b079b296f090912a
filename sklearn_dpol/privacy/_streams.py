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

``"blt"`` (the default of ``"auto"``)
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
summed); its ``horizon`` counts steps. A tree takes one position per row; its
``horizon`` counts rows. An estimator whose horizon counts rows can pass it to
either: a batch has at least one row, so a stream of ``H`` rows never takes
more than ``H`` steps. :func:`calibration_horizon` does better from the first
batch's size (public): ``ceil(H / n_1)`` steps, a later call past them refused
before its data is read (what ``PrivateQFTLRegressor`` does).

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

from ._schedules import AnytimeSchedule, KnownHorizonSchedule

__all__ = [
    "MECHANISMS",
    "StreamMechanism",
    "budget_schedule",
    "calibration_horizon",
    "factorization_sigma",
    "make_stream_mechanism",
    "resolve_mechanism",
]

MECHANISMS = ("blt", "sqrt", "tree", "honaker")


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


def resolve_mechanism(requested):
    """The mechanism ``"auto"`` stands for (``"blt"``); others pass through after a check."""
    if requested == "auto":
        return "blt"
    if requested not in MECHANISMS:
        raise ValueError(f"unknown stream mechanism {requested!r}; expected one of "
                         f"{('auto',) + MECHANISMS}.")
    return requested


def calibration_horizon(mechanism, horizon_rows, first_batch_rows):
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
        A resolved mechanism name (``"blt"``, ``"sqrt"``, ``"tree"``, ``"honaker"``).
    horizon_rows : int or None
        Largest number of rows of the stream; ``None`` (unbounded) passes through.
    first_batch_rows : int
        Rows of the stream's first call, ``>= 1``.

    Returns
    -------
    horizon : int or None
    """
    if horizon_rows is None or resolve_mechanism(mechanism) in ("tree", "honaker"):
        return horizon_rows
    first = int(first_batch_rows)
    if first < 1:
        raise ValueError(f"first_batch_rows must be >= 1; got {first_batch_rows!r}.")
    return max(1, -(-int(horizon_rows) // first))


def factorization_sigma(column_norm, sensitivity, mu):
    """Noise on ``C x`` for ``mu``-GDP: ``sensitivity * max_j ||C[:, j]|| / mu`` (0 if mu is inf)."""
    if math.isinf(mu):
        return 0.0
    return float(sensitivity) * float(column_norm) / float(mu)


def make_stream_mechanism(mechanism, *, dim, sensitivity, mu, horizon):
    """The one factory of stream mechanisms.

    Parameters
    ----------
    mechanism : {"auto", "blt", "sqrt", "tree", "honaker"}
        Which mechanism; ``"auto"`` is ``"blt"``.
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
