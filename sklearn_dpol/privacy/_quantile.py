"""A private quantile: the exponential mechanism over a public grid of candidates.

Derivation in ``doc/privacy.md``, section "Private quantiles and private
scaling". Under replace-one neighbours (``n`` public), for a public sorted grid
``c_0 < ... < c_{m-1}`` and the public target rank ``k = round(q n)``, the
score of ``c_j`` is ``-d_j``, the distance from ``k`` to the interval of
ranks ``[N_(j-1) + 1, N_j]`` that ``c_j`` covers (``N_j = #{i : v_i <= c_j}``;
mirrored for ``q < 1/2``): an integer with sensitivity 1 (replacing one value
moves every count, hence both ends, by at most one). The release is
``c_J`` with ``P(J = j)`` proportional to ``exp(-s d_j)`` for
``2 s + 2**-62 <= epsilon``: pure ``epsilon``-DP, and ``epsilon**2 / 8``-zCDP
(bounded range, Cesar and Rogers 2021). It is drawn exactly with
:func:`sklearn_dpol._core._exact_kernels.exponential_choice`: ``s`` is
``epsilon (1 - 2**-30) / 2`` rounded down to 21 significant bits, so that every exponent
``s * (d_j - min d)`` (an integer below ``2**31`` times ``s``) is computed
without rounding.
"""

import math

import numpy as np

__all__ = ["geometric_grid", "private_quantile", "quantile_probabilities", "quantile_scale"]

_MAX_RECORDS = 2**31 - 1
_MAX_EXPONENT = 2.0**39
_MAX_PRIOR = 2**30
_MIN_EPSILON = 2.0**-30


def geometric_grid(low_exponent=-20, high_exponent=20, *, signed=True, per_octave=1):
    """The public grid ``2**(k / per_octave)`` for ``k / per_octave`` in
    ``[low_exponent, high_exponent]``.

    Parameters
    ----------
    low_exponent, high_exponent : int
        The range of the exponents (public).
    per_octave : int, default=1
        Candidates per factor of two.
    signed : bool, default=True
        Add ``0`` and the negated powers, for values of either sign.

    Returns
    -------
    grid : ndarray
        The sorted candidates.
    """
    if int(low_exponent) > int(high_exponent):
        raise ValueError("low_exponent must not exceed high_exponent.")
    per_octave = int(per_octave)
    k = np.arange(int(low_exponent) * per_octave, int(high_exponent) * per_octave + 1)
    powers = np.ldexp(np.exp2((k % per_octave) / per_octave), k // per_octave)
    if not signed:
        return powers
    return np.concatenate([-powers[::-1], [0.0], powers])


def quantile_scale(epsilon):
    """The exponential mechanism's scale ``s``: ``epsilon (1 - 2**-30) / 2``
    rounded down to 21 significant bits, so that ``2 s + 2**-62 <= epsilon``
    for ``epsilon >= 2**-30`` (the sampler's truncation of exponents to
    ``2**-64`` is covered; ``doc/privacy.md``)."""
    if math.isinf(epsilon):
        return math.inf
    mantissa, exponent = math.frexp(epsilon / 2.0 * (1.0 - 2.0**-30))
    return math.ldexp(math.floor(mantissa * 2**21), exponent - 21)


def _check(values, q, candidates, epsilon, slope=0.0):
    if not (math.isfinite(float(slope)) and float(slope) >= 0):
        raise ValueError(f"slope must be finite and nonnegative; got {slope!r}.")
    values = np.asarray(values, dtype=np.float64).ravel()
    candidates = np.asarray(candidates, dtype=np.float64).ravel()
    if not 0.0 <= float(q) <= 1.0:
        raise ValueError(f"q must be in [0, 1]; got {q!r}.")
    if candidates.size == 0 or not np.all(np.isfinite(candidates)) or np.any(
            np.diff(candidates) <= 0):
        raise ValueError("candidates must be finite, nonempty and strictly increasing.")
    if not (epsilon >= _MIN_EPSILON):
        raise ValueError(f"epsilon must be at least 2**-30; got {epsilon!r}.")
    n = values.size
    if n > _MAX_RECORDS:
        raise ValueError(f"at most {_MAX_RECORDS} values.")
    if math.isfinite(epsilon) and quantile_scale(epsilon) * n >= _MAX_EXPONENT:
        raise ValueError(
            f"epsilon={epsilon!r} is too large for n={n} values (epsilon * n must be "
            "below 2**40); pass epsilon=np.inf for no privacy.")
    if not np.all(np.isfinite(values)):
        raise ValueError("values must be finite.")
    return values, candidates


def _distances(values, q, candidates):
    """Each candidate's distance, in records, from covering the target rank (integers).

    The target rank is ``k = round(q n)`` held to ``[1, n]``. For ``q >= 1/2``
    candidate ``j`` covers the ranks ``r`` whose value lies in
    ``(c_(j-1), c_j]``: the interval ``[N_(j-1) + 1, N_j]`` with
    ``N_j = #{v <= c_j}`` (``N_(-1) = 0``), and ``d_j`` is the distance from
    ``k`` to it, ``max(0, N_(j-1) + 1 - k, k - N_j)``: ``0`` for the smallest
    candidate at or above the ``k``-th smallest value only, and a candidate
    whose interval holds no value never scores ``0``; the last candidate's
    interval is open above (a value above the grid counts as the top). Both ends are counts
    that move by at most one when one value is replaced, so ``d_j`` moves by
    at most one (``doc/privacy.md``, section 18.1). For ``q < 1/2`` the
    mirror image (values and candidates negated, rank ``n + 1 - k``): ``0``
    for the largest candidate at or below the ``k``-th smallest value, so
    that a range of a low and a high quantile is rounded outward.
    """
    n = values.size
    k = min(max(int(round(float(q) * n)), 1), n)
    if float(q) < 0.5:
        return _interval_distances(-values, n + 1 - k, -candidates[::-1])[::-1]
    return _interval_distances(values, k, candidates)


def _interval_distances(values, k, candidates):
    """``max(0, N_(j-1) + 1 - k, k - N_j)`` with ``N_j = #{v <= c_j}``, ``N_(-1) = 0``,
    and the last candidate covering every rank above ``N_(m-2)`` (``N_(m-1) = n``).

    The last candidate's interval is open above: the values are clipped to the grid's
    top, record by record, so a value above it counts for the top candidate instead of
    for none (before, values all above the grid tied every candidate and the public
    prior released the far end; ``doc/privacy.md`` section 55.9). The counts still move
    by at most one when one value is replaced (``N_(m-1) = n`` never moves).
    """
    upper = np.searchsorted(np.sort(values), candidates, side="right").astype(np.int64)
    upper[-1] = values.size
    lower = np.concatenate(([0], upper[:-1])) + 1
    return np.maximum(0, np.maximum(lower - k, k - upper))


def _positions(q, m):
    """Each candidate's distance, in grid steps, from the preferred end: the
    public tie-break (toward the data: low for ``q > 1/2``, high for ``q < 1/2``)."""
    j = np.arange(m, dtype=np.int64)
    if q > 0.5:
        return j
    if q < 0.5:
        return m - 1 - j
    return np.zeros(m, dtype=np.int64)


def _prior(q, m, epsilon, slope):
    """The public prior in score units: ``floor(slope * position / s)``, capped."""
    if slope == 0 or math.isinf(epsilon):
        return np.zeros(m, dtype=np.int64)
    s = quantile_scale(epsilon)
    cap = min(_MAX_PRIOR, int(_MAX_EXPONENT / s))
    return np.minimum(np.floor(slope * _positions(q, m) / s), cap).astype(np.int64)


def _totals(values, q, candidates, epsilon, slope):
    """Integer exponents in units of ``s``: ``d_j + prior_j`` minus their minimum."""
    t = _distances(values, q, candidates) + _prior(q, candidates.size, epsilon, slope)
    return t - t.min()


def _noise_off(values, q, candidates, slope):
    d = _distances(values, q, candidates)
    best = np.flatnonzero(d == d.min())
    if slope == 0:
        return int(best[0])
    return int(best[np.argmin(_positions(q, candidates.size)[best])])


def quantile_probabilities(values, q, candidates, epsilon, slope=0.0):
    """The law of :func:`private_quantile`'s index (floating point; for checks).

    Parameters
    ----------
    values : array-like
        The private values.
    q : float
        The quantile, in ``[0, 1]``.
    candidates : array-like
        The public sorted grid.
    epsilon : float
        The mechanism's budget.
    slope : float, default=0.0
        The public prior's slope (see :func:`private_quantile`).

    Returns
    -------
    probabilities : ndarray
        ``P(J = j)`` for each candidate.
    """
    values, candidates = _check(values, q, candidates, epsilon, slope)
    if math.isinf(epsilon):
        p = np.zeros(candidates.size)
        p[_noise_off(values, q, candidates, slope)] = 1.0
        return p
    w = np.exp(-quantile_scale(epsilon) * _totals(values, q, candidates, epsilon, slope))
    return w / w.sum()


def private_quantile(values, q, candidates, epsilon, rng, slope=0.0):
    """An ``epsilon``-DP ``q``-quantile of ``values``, one of the public ``candidates``.

    The exponential mechanism with score ``-d_j``, the distance in records
    from the target rank ``round(q n)`` to the ranks candidate ``j`` covers
    (:func:`_distances`; sensitivity 1 under replace-one neighbours, ``n``
    public), drawn exactly.
    Pure ``epsilon``-DP; ``epsilon**2 / 8``-zCDP for composition
    (:func:`~sklearn_dpol.privacy.exponential_mechanism_zcdp`). With
    ``epsilon=np.inf`` the best candidate, without noise.

    ``slope > 0`` adds a public prior (a base measure), ``exp(-slope * p_j)``
    up to the rounding of ``slope * p_j / s`` down to an integer, where ``p_j``
    counts grid steps from the end nearer the data's bulk (the low end for
    ``q > 1/2``, the high end for ``q < 1/2``): candidates beyond the data's
    extreme all have the same score, and the prior concentrates the mass of
    such ties next to the data. It does not depend on the data, so the
    guarantee is unchanged. Noise off, ties go the same way.

    Parameters
    ----------
    values : array-like
        The private values (finite), one per record.
    q : float
        The quantile, in ``[0, 1]``.
    candidates : array-like
        The public grid, strictly increasing (e.g. :func:`geometric_grid`).
    epsilon : float
        The budget of this release.
    rng : numpy.random.Generator, int, None or sampler state
        The randomness (see :func:`sklearn_dpol._core.noise.sampler_state`).
    slope : float, default=0.0
        The public prior's slope, in nats per grid step.

    Returns
    -------
    quantile : float
        The released candidate.
    """
    values, candidates = _check(values, q, candidates, epsilon, slope)
    if math.isinf(epsilon):
        return float(candidates[_noise_off(values, q, candidates, slope)])
    from .._core import _exact_kernels
    from .._core.noise import sampler_state

    # Exact: an integer below 2**32 times a 21-bit mantissa.
    x = _totals(values, q, candidates, epsilon, slope).astype(np.float64) * quantile_scale(epsilon)
    index = _exact_kernels.exponential_choice(x, sampler_state(rng))
    return float(candidates[int(index)])
