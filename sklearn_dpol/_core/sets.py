"""The constraint sets of the library: names, gauges, projections, warm-start checks.

Every estimator that keeps its model in a public set takes the set from here,
in the spirit of skglm's penalties:

* ``"l2"``: the L2 ball ``{w : ||w||_2 <= r}`` (mirror descent, the iterates of
  GIGA, FTRL and MI-OGD, the released IGD model);
* ``"l1"``: the L1 ball ``{w : ||w||_1 <= r}`` (mirror descent, Frank-Wolfe);
* ``"simplex"``: ``{w >= 0 : sum w = r}`` (mirror descent);
* ``"group_l1"``: ``{w : sum_g ||w_g||_2 <= r}`` over consecutive groups of
  ``group_size`` coordinates (mirror descent);
* ``"box"``: ``{w : |w_j| <= r}`` (an intercept in ``[-y_bound, y_bound]``).

The *gauge* of a set is the smallest ``s >= 0`` with ``w`` in ``s`` times the
unit set (``inf`` off the simplex's affine hull or its sign), so ``w`` lies in
the set of radius ``r`` exactly when ``gauge(w) <= r``. A warm start is a
model the estimator released earlier (public); it must lie in the set up to
rounding (:data:`START_RTOL`), since the sensitivity analyses start inside it:
:func:`check_start` refuses anything further out, before any data is read.

All functions are numpy (no numba) and act on public values only; the
projections are post-processing.
"""

import math

import numpy as np

L2 = "l2"
L1 = "l1"
SIMPLEX = "simplex"
GROUP_L1 = "group_l1"
BOX = "box"
SETS = (L2, L1, SIMPLEX, GROUP_L1, BOX)

# A warm start (or an average of iterates) outside the set by more than this
# relative amount was not produced by rounding: it was not released here.
START_RTOL = 1e-9


def _check(constraint, group_size=None):
    if constraint not in SETS:
        raise ValueError(f"constraint must be one of {list(SETS)}; got {constraint!r}.")
    if constraint == GROUP_L1 and (group_size is None or int(group_size) < 1):
        raise ValueError("constraint='group_l1' needs group_size, an integer >= 1.")


def group_starts(n_dims, group_size):
    """First index of each group of ``group_size`` consecutive coordinates, then ``n_dims``."""
    return np.append(np.arange(0, n_dims, int(group_size)), n_dims)


def gauge(constraint, w, group_size=None, *, rtol=START_RTOL, starts=None):
    """The gauge of the unit set at ``w``: ``w`` is in the set of radius ``r`` iff ``<= r``.

    For the simplex, ``sum w`` when ``w >= 0`` and ``|sum w - 1| <= rtol``,
    else ``inf`` (``w`` is compared with the unit simplex; rescale first).
    ``starts`` (the groups' first indices, then ``w.size``) may replace
    ``group_size``.
    """
    _check(constraint, group_size if starts is None else 1)
    w = np.asarray(w, dtype=np.float64)
    if constraint == L2:
        return float(np.linalg.norm(w))
    if constraint == L1:
        return float(np.sum(np.abs(w)))
    if constraint == BOX:
        return float(np.max(np.abs(w))) if w.size else 0.0
    if constraint == SIMPLEX:
        ok = np.all(w >= 0) and abs(np.sum(w) - 1.0) <= rtol
        return float(np.sum(w)) if ok else math.inf
    if starts is None:
        starts = group_starts(w.size, group_size)
    return float(np.sum(np.sqrt(np.add.reduceat(w * w, starts[:-1]))))


def contains(constraint, w, radius, group_size=None, *, rtol=START_RTOL, starts=None):
    """Whether ``w`` lies in the set of ``radius`` up to the relative rounding ``rtol``."""
    if constraint == SIMPLEX:
        return gauge(SIMPLEX, np.asarray(w, dtype=np.float64) / radius, rtol=rtol) <= 1.0
    return gauge(constraint, w, group_size, starts=starts) <= radius * (1.0 + rtol)


def into_set(constraint, w, radius, group_size=None, *, starts=None):
    """Undo rounding that left ``w`` a few ulps outside the set (a rescaling, no copy if inside).

    Balls: ``w * (radius / gauge)`` when ``gauge > radius``. Box: clipping.
    Simplex: the negative parts dropped and the sum rescaled to ``radius``.
    """
    _check(constraint, group_size if starts is None else 1)
    w = np.asarray(w, dtype=np.float64)
    if constraint == BOX:
        return np.clip(w, -radius, radius)
    if constraint == SIMPLEX:
        w = np.maximum(w, 0.0)
        return w * (radius / np.sum(w))
    size = gauge(constraint, w, group_size, starts=starts)
    return w * (radius / size) if size > radius else w


def check_start(constraint, w, radius, group_size=None, *, what="the start (coef_)",
                rtol=START_RTOL, starts=None):
    """Refuse a warm start outside the set beyond rounding; return it inside the set.

    Raises ``ValueError`` (before any data is read: ``w`` is a released,
    public model) when ``w`` is not in the set of ``radius`` up to ``rtol``.
    """
    if not contains(constraint, w, radius, group_size, rtol=rtol, starts=starts):
        raise ValueError(
            f"{what} is outside the {constraint} constraint set of radius {radius:.6g}, "
            "so it was not released by this estimator; the analysis needs a start inside "
            "the set. Call fit to start afresh."
        )
    return into_set(constraint, w, radius, group_size, starts=starts)


# ---------------------------------------------------------------------------
# Euclidean projections (public post-processing).
# ---------------------------------------------------------------------------

def project(constraint, w, radius, group_size=None):
    """The Euclidean projection of ``w`` onto the set of ``radius`` (a copy)."""
    _check(constraint, group_size)
    w = np.asarray(w, dtype=np.float64)
    if constraint == L2:
        norm = np.linalg.norm(w)
        return w * (radius / norm) if norm > radius else w.copy()
    if constraint == BOX:
        return np.clip(w, -radius, radius)
    if constraint == L1:
        if np.sum(np.abs(w)) <= radius:
            return w.copy()
        return np.sign(w) * project_nonnegative_to_simplex(np.abs(w), radius, inside=True)
    if constraint == SIMPLEX:
        return project_nonnegative_to_simplex(w, radius, inside=False)
    starts = np.arange(0, w.size, int(group_size))
    norms = np.sqrt(np.add.reduceat(w * w, starts))
    if np.sum(norms) <= radius:
        return w.copy()
    shrunk = project_nonnegative_to_simplex(norms, radius, inside=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(norms > 0, shrunk / norms, 0.0)
    return w * np.repeat(factor, np.diff(np.append(starts, w.size)))


def project_rows_l2(W, radius):
    """Project each row of ``W`` onto the L2 ball of ``radius`` (a copy)."""
    norms = np.linalg.norm(W, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(norms > radius, radius / norms, 1.0)
    return W * factor


def project_nonnegative_to_simplex(a, radius, inside):
    """``max(a - tau, 0)`` with ``tau`` making the sum ``radius`` (sort-based, exact).

    ``inside=True`` projects nonnegative ``a`` onto ``{x >= 0, sum x <= radius}``
    (only called when ``sum a > radius``); otherwise onto the simplex
    ``{x >= 0, sum x = radius}`` for any real ``a``.
    """
    ordered = np.sort(a)[::-1]
    cumulative = np.cumsum(ordered) - radius
    index = np.arange(1, a.size + 1)
    active = ordered - cumulative / index > 0
    k = index[active][-1]
    tau = cumulative[k - 1] / k
    if inside:
        tau = max(tau, 0.0)
    return np.maximum(a - tau, 0.0)
