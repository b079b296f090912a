"""Private follow-the-leader ridge regression on released sufficient statistics.

After ``t`` samples the model is ``x = (t alpha I + V_t)^{-1} u_t`` with
``V_t = sum v v^T`` and ``u_t = sum y v`` (seed 002, eq. 4). Only ``(V, u)``
touch the data; they are released as one packed vector

    ``z = (V_11, .., V_dd, sqrt(2) V_ij for i < j, u)``,

whose Euclidean norm is ``sqrt(||V||_F^2 + ||u||^2)``. Gaussian noise
``N(0, sigma^2 I)`` on ``z`` is symmetric noise on ``V`` (variance
``sigma^2`` on the diagonal, ``sigma^2 / 2`` off it), and its sensitivity is
the joint Frobenius/Euclidean one of :func:`joint_sensitivity`. Everything
after the release, the model included, is post-processing.
"""

import math
import threading
from functools import lru_cache

import numpy as np
from scipy.sparse import issparse

from . import sets
from ._weights import sparse_gram

SQRT2 = math.sqrt(2.0)


def joint_sensitivity(feature_bound, target_bound):
    """Replace-one sensitivity of the packed ``(V, u)`` atom ``(v v^T, y v)``.

    The supremum over ``||v||, ||v'|| <= R`` and ``|y|, |y'| <= B`` of
    ``||v v^T - v' v'^T||_F^2 + ||y v - y' v'||^2`` is
    ``2 R^4 + 2 B^2 R^2 + B^4 / 2`` when ``B^2 <= 2 R^2`` (unit vectors at
    ``cos = B^2 / (2 R^2)`` with opposite targets), else ``4 B^2 R^2``
    (``v' = v``, ``y' = -y``); ``doc/privacy.md``, section 3.1.
    """
    R, B = float(feature_bound), float(target_bound)
    if B <= SQRT2 * R:
        q = (B / R) * (B / R)
        # Products, not **: they give inf for the caller's check instead of raising.
        return R * R * math.sqrt(2.0 + 2.0 * q + 0.5 * q * q)
    return 2.0 * B * R


#: Bound on the norm of one record's packed atom ``(v v^T, y v)`` as a fraction of
#: :func:`joint_sensitivity`: ``R^2 sqrt(1 + q)`` against ``R^2 sqrt(2 + 2q + q^2 / 2)``
#: (``q = B^2 / R^2 <= 2``), or against ``2 B R`` (``q > 2``: at most ``sqrt(1.5) / 2``);
#: the term ratio of the fit's rounding allowance (``doc/privacy.md`` section 54.8).
ATOM_NORM_FRACTION = 1.0 / SQRT2

#: Bound on every coordinate of one record's packed atom ``(v v^T, y v)``, as a
#: fraction of :func:`joint_sensitivity` (the ``coordinate_fraction`` of the stream
#: layer's rounding check, ``privacy/_streams.py``). A coordinate is ``v_i^2 <= R^2``,
#: ``sqrt(2) |v_i v_j| <= (v_i^2 + v_j^2) / sqrt(2) <= R^2 / sqrt(2)`` or
#: ``|y v_i| <= B R`` (times a weight in [0, 1]), so at most ``R max(R, B)``; with
#: ``q = B^2 / R^2`` the sensitivity is ``R^2 sqrt(2 + 2q + q^2 / 2) >= sqrt(2) R^2``
#: and ``>= 2 B R`` for ``q <= 2`` (``q^2 / 2 - 2q + 2 = (q - 2)^2 / 2 >= 0``), else
#: ``2 B R``. So the ratio is at most ``1 / sqrt(2)``, attained as ``B / R -> 0`` (a
#: single feature at the bound, ``y = 0``): NOT ``1 / 2`` (``doc/privacy.md``,
#: "Floating point: one rounding allowance for every factorization stream").
ATOM_COORDINATE_FRACTION = 1.0 / SQRT2


#: Largest number of augmented features (the intercept's included) QFTL takes: its
#: statistics are the packed ``d (d + 1) / 2 + d`` sums of ``(v v^T, y v)`` and every
#: release solves a ``d x d`` system, so the work and memory grow as ``d^2`` (here
#: 8.4 million packed values, 67 MB a copy; the stream mechanisms keep several). The
#: limit of the Gram paths of Frank-Wolfe and mirror descent, which take wider data
#: without a Gram matrix (so does IGD); checked on the shape before any data is read.
MAX_FEATURES = 4096


def check_dimension(n_augmented, estimator="PrivateQFTLRegressor"):
    """Refuse more than :data:`MAX_FEATURES` augmented features (public: a shape)."""
    if n_augmented > MAX_FEATURES:
        raise ValueError(
            f"{estimator} keeps d x d statistics and supports at most {MAX_FEATURES} "
            f"features (the intercept's included); got {n_augmented}. For wider data "
            "(for example sparse one-hot or text features) use PrivateFrankWolfeLasso, "
            "PrivateMirrorDescentRegressor or PrivateIGDClassifier, whose cost grows "
            "linearly in the features, or select fewer features with a public rule.")


@lru_cache(maxsize=8)
def _packing(n_features):
    """Upper-triangle indices and packing scales for ``n_features`` (fixed for a stream)."""
    upper = np.triu_indices(n_features)
    scale = np.where(upper[0] == upper[1], 1.0, SQRT2)
    for array in (*upper, scale):
        array.setflags(write=False)
    return upper, scale


@lru_cache(maxsize=8)
def _flat_upper(n_features):
    """The upper triangle of :func:`_packing` as flat indices into a C-ordered square.

    ``np.take`` / ``np.put`` with one flat index are an order of magnitude faster
    than indexing with the two index arrays (126k entries at ``d = 501``).
    """
    upper, _ = _packing(n_features)
    flat = upper[0] * n_features + upper[1]
    flat.setflags(write=False)
    return flat


_workspace = threading.local()
#: Largest work array kept per thread and name (16 MB: up to d = 1448).
_SCRATCH_MAX_ENTRIES = 1 << 21


def _scratch(name, shape):
    """A work array of this thread for ``name``, reused while its shape stays the same.

    A fresh multi-megabyte array costs its page faults on first touch (about a
    millisecond at ``d = 500``, as much as a Cholesky factorization of it). The
    callers use it only until they return (a batch's gram, a certificate's
    matrix) and never hand it out. Arrays past :data:`_SCRATCH_MAX_ENTRIES` are
    not kept (their O(d^3) work dwarfs the page faults, and a thread would hold
    them for good).
    """
    if math.prod(shape) > _SCRATCH_MAX_ENTRIES:
        return np.empty(shape)
    array = getattr(_workspace, name, None)
    if array is None or array.shape != shape:
        array = np.empty(shape)
        setattr(_workspace, name, array)
    return array


#: Rows a dense ``fit`` clips and multiplies at a time (about 8 MB of clipped rows), so that
#: ``fit`` never holds a clipped copy of ``X``: its sums are accumulated block by block.
BLOCK_BYTES = 1 << 23


class PackedStatistics:
    """Packed ``(V, u)`` sums of the rows of one batch, by slice or per row.

    Parameters
    ----------
    rows : ndarray or CSR matrix of shape (n, p)
        Feature rows, clipped (or clipped on the fly, see ``row_scale``). A
        CSR matrix is never densified: its sums are sparse products (only
        ``atoms``, per row for the tree mechanisms, densifies the rows of its
        slice, whose atoms are dense anyway).
    y : ndarray of shape (n,)
        Clipped targets.
    intercept : float or None
        Value of the constant feature appended to every row, or ``None``.
        It is handled blockwise, so the rows are never copied to append it.
    weights : ndarray of shape (n,) or None
        Sample weights in ``[0, 1]``: row ``i``'s atom is ``weights[i]``
        times ``(v v^T, y v)``. ``None`` weighs every row 1.
    row_scale : ndarray of shape (n,) or None
        For dense ``rows``: the clipping factor of each row, applied to blocks
        of rows as they are summed (the clipped row ``i`` is ``rows[i] *
        row_scale[i]``, the same products as clipping first), so no clipped
        copy of the whole batch is made. ``None``: ``rows`` are clipped.
    """

    def __init__(self, rows, y, intercept=None, weights=None, row_scale=None):
        self.rows, self.y, self.intercept, self.weights = rows, y, intercept, weights
        self.sparse = issparse(rows)
        if self.sparse and row_scale is not None:
            raise ValueError("row_scale is for dense rows; scale a CSR matrix's entries.")
        self.row_scale = row_scale
        self.n_rows = rows.shape[0]
        d = rows.shape[1] + (intercept is not None)
        self.dim_features = d
        self.upper, self.scale = _packing(d)
        self.dim = len(self.scale) + d

    def _clipped(self, lo, hi):
        """The clipped rows ``lo:hi`` (a view when ``rows`` are clipped already)."""
        if self.row_scale is None:
            return self.rows[lo:hi]
        return self.rows[lo:hi] * self.row_scale[lo:hi, np.newaxis]

    def sum(self, lo, hi):
        """Packed sum over rows ``lo:hi``: one BLAS product per block of rows.

        A slice of at most one block (every stream batch but the largest) is
        one product, bit for bit the sum of the clipped slice; a larger one is
        accumulated over blocks of its own rows.
        """
        from ._stream_kernels import pack_upper

        d = self.dim_features
        p = self.rows.shape[1]
        block = hi - lo if self.sparse else max(1024, BLOCK_BYTES // (8 * max(p, 1)))
        square = None
        cross = np.zeros(d)
        last = np.zeros(p) if self.intercept is not None else np.empty(0)
        total = 0.0
        for start in range(lo, hi, max(block, 1)):
            stop = min(hi, start + block)
            square, cross_part, column, count = self._block_sums(start, stop, square)
            if start == lo:
                cross[:] = cross_part
                if self.intercept is not None:
                    last[:] = column
                total = count
            else:
                cross += cross_part
                if self.intercept is not None:
                    last += column
                total += count
        if square is None:       # an empty slice
            square = np.zeros((p, p))
        corner = 0.0
        if self.intercept is not None:
            c = self.intercept
            last *= c                                   # the intercept's column
            corner = c * c * total
            cross[p] *= c
        # The packing (scale sqrt(2) off the diagonal) in one pass, the intercept's
        # column appended to each row: the values of packing the full d x d gram.
        n_upper = len(self.scale)
        packed = np.empty(self.dim)
        pack_upper(square, last, float(corner), self.intercept is not None, SQRT2,
                   packed[:n_upper])
        packed[n_upper:] = cross
        return packed

    def _block_sums(self, lo, hi, square):
        """``(gram, cross, column sums, weight total)`` of the clipped rows ``lo:hi``.

        ``square`` is ``None`` for the first block, whose gram goes into this
        thread's reused array (no fresh ``p x p`` array per batch); a later
        block adds its gram into ``square`` (BLAS ``beta = 1``: only the
        triangle that is packed is ever written). ``cross[p]`` holds the
        weighted targets' sum (the intercept's entry, before its factor).
        """
        rows, y = self._clipped(lo, hi), self.y[lo:hi]
        d = self.dim_features
        p = rows.shape[1]
        if self.weights is None:
            weighted, wy, total = rows, y, hi - lo
        else:
            w = self.weights[lo:hi]
            weighted = (rows.multiply(w[:, np.newaxis]).tocsr() if self.sparse
                        else rows * w[:, np.newaxis])
            wy, total = w * y, w.sum()
        # ``square``'s upper triangle holds the p x p gram (all that is packed).
        if self.sparse:
            gram = sparse_gram(weighted, rows)   # blocks of a public size (57.9)
            square = gram if square is None else square + gram
        elif self.weights is None and rows.flags.c_contiguous:
            # rows.T @ rows is what numpy computes by BLAS syrk (one triangle, then a
            # mirror copy): the same call, bit for bit, into this thread's reused
            # array, and no mirror (its Fortran lower triangle is our upper one).
            from scipy.linalg.blas import dsyrk

            first = square is None
            if first:
                square = _scratch("gram", (p, p))
            out = dsyrk(1.0, rows.T, beta=0.0 if first else 1.0, c=square.T, trans=0,
                        lower=1, overwrite_c=1)
            if not np.shares_memory(out, square):
                square = np.ascontiguousarray(out.T)
        elif square is None:
            # The product into a reused array (no fresh d x d array per batch).
            square = np.matmul(weighted.T, rows, out=_scratch("gram", (p, p)))
        else:
            square += weighted.T @ rows
        cross = np.empty(d)
        cross[:p] = rows.T @ wy
        column = None
        if self.intercept is not None:
            column = np.asarray(weighted.sum(axis=0)).ravel()
            cross[p] = wy.sum()
        return square, cross, column, total

    def atoms(self, lo, hi):
        """Packed atom of each row in ``lo:hi``, shape ``(hi - lo, dim)``."""
        rows = self._clipped(lo, hi)
        if self.sparse:
            rows = rows.toarray()  # this slice's atoms are dense (hi - lo, dim) anyway
        if self.intercept is not None:
            rows = np.hstack([rows, np.full((hi - lo, 1), self.intercept)])
        # Written in place into one array (no stacked copy): the same products,
        # (x_i x_j) * scale and x_i * y, in the same order.
        n_upper = len(self.scale)
        atoms = np.empty((hi - lo, self.dim))
        outer = atoms[:, :n_upper]
        np.multiply(rows[:, self.upper[0]], rows[:, self.upper[1]], out=outer)
        outer *= self.scale
        np.multiply(rows, self.y[lo:hi, np.newaxis], out=atoms[:, n_upper:])
        if self.weights is not None:
            atoms *= self.weights[lo:hi, np.newaxis]
        return atoms


def packed_dim(n_features):
    """Length of the packed ``(V, u)`` vector for ``n_features`` augmented features."""
    return n_features * (n_features + 1) // 2 + n_features


def unpack(z, n_features, scratch=False):
    """The symmetric ``V`` and the vector ``u`` of a packed vector.

    ``scratch=True`` writes ``V`` into this thread's reused work array (no
    fresh ``d x d`` array and its page faults): for a caller that is done with
    ``V`` before the next ``unpack(..., scratch=True)`` of its thread.

    Both triangles hold the packed entry divided by its scale (``sqrt(2)`` off
    the diagonal), filled in one pass by a numba kernel: the same values as
    mirroring the upper triangle into a zero lower one (``x + 0 = x`` exactly;
    only a ``-0.0`` could come out as ``+0.0`` there).
    """
    from ._stream_kernels import unpack_symmetric

    n_upper = n_features * (n_features + 1) // 2
    shape = (n_features, n_features)
    V = _scratch("unpacked", shape) if scratch else np.empty(shape)
    unpack_symmetric(np.ascontiguousarray(z[:n_upper], dtype=np.float64), 1.0, SQRT2, V)
    return V, np.array(z[n_upper:], dtype=float)


def noise_spectral_norm(noise_std, n_features):
    """Typical spectral norm of the symmetric noise on ``V``: ``sqrt(2 d) * std``.

    The noise is ``(G + G^T)/2`` with ``G`` of i.i.d. ``N(0, std^2)`` entries, a
    scaled Gaussian orthogonal ensemble whose largest eigenvalues sit near
    ``std * sqrt(2 d)``.
    """
    return math.sqrt(2.0 * n_features) * float(noise_std)


def ridge_from_statistics(V_hat, u_hat, n_samples, alpha, feature_bound, target_bound,
                          noise_std=0.0, warm=None):
    """``(n alpha I + V)^{-1} u`` from noisy statistics, always finite.

    The exact ``V`` is a sum of ``n`` rank-one terms ``v v^T`` with
    ``||v|| <= R``, so its eigenvalues lie in ``[0, n R^2]``, and
    ``||u|| <= n R B``. Noise can push ``V_hat`` outside that set and make
    ``n alpha I + V_hat`` indefinite. Clipping the eigenvalues into
    ``[0, n R^2]`` and scaling ``u_hat`` into its ball are Frobenius and
    Euclidean projections onto convex sets that contain the truth, so they can
    only move the estimates closer to it; they use public bounds only
    (post-processing). The system is then positive definite with smallest
    eigenvalue ``n alpha``.

    With ``noise_std`` (the public standard deviation of the noise on each
    coordinate of ``V_hat``), eigenvalues below the noise's spectral norm are
    raised to it: there the noisy ``V_hat`` carries no information about the
    direction, and dividing the noise in ``u_hat`` by a near-zero eigenvalue
    is what makes noisy ridge solutions explode (compare the adaptive
    regularisation of AdaSSP, Wang 2018). Directions above the noise level are
    untouched.

    ``warm`` (optional, a dict owned by the caller) carries the Ritz vectors
    of the previous solve from one call to the next: the Lanczos route starts
    from them and tries its certificate as soon as their count of converged
    pairs above the floor is back. They are post-processing of earlier
    released statistics (public); a wrong or stale hint costs time only (the
    certificate refuses it and Lanczos goes on), never the model.
    """
    ceiling = n_samples * feature_bound * feature_bound
    floor = min(noise_spectral_norm(noise_std, len(u_hat)), ceiling)
    u_hat = sets.project(sets.L2, u_hat, n_samples * feature_bound * target_bound)
    weights = _clipped_solve_without_eigh(V_hat, u_hat, floor, ceiling, n_samples * alpha,
                                          warm)
    if weights is not None:
        return weights
    eigenvalues, eigenvectors = np.linalg.eigh(V_hat)
    eigenvalues = np.clip(eigenvalues, floor, ceiling) + n_samples * alpha
    return eigenvectors @ ((eigenvectors.T @ u_hat) / eigenvalues)


# -- the same solve without a full eigendecomposition ---------------------------------
#
# The model is g(V) u with g(lambda) = 1 / (clip(lambda, floor, ceiling) + shift). A
# full ``eigh`` costs about 9 d^3 flops; a Cholesky d^3 / 3. Two cases are common and
# need no eigenvectors of the bulk: (A) no eigenvalue is clipped (a long stream, whose
# signal lifts every eigenvalue above the noise), where g(V) u = (V + shift I)^-1 u;
# (B) every eigenvalue but a few is below the floor (a short stream in many
# dimensions: the noise's bulk sits at the floor), where g(V) u = u / (floor + shift)
# plus a correction on the few eigenvectors above it. Each case is *certified* by a
# Cholesky factorization (it succeeds only on a positive definite matrix, up to the
# rounding of a backward-stable factorization, the same order as ``eigh``'s own
# backward error); anything else, or a failed certificate, falls back to ``eigh``.
# Post-processing of released values either way: the same model, to rounding.

#: Case (B) finds the eigenpairs above the floor by Lanczos (full
#: reorthogonalization) for at most this many steps, checking every few steps,
_LANCZOS_STEPS = 160
_LANCZOS_CHECK = 8
#: ... stopping when every Ritz pair above the floor has a residual below this
#: fraction of the largest Ritz value (a backward error of that size in ``V``).
_LANCZOS_TOLERANCE = 1e-13
#: Below this dimension a full ``eigh`` is cheaper than case (B)'s Python loop.
_LANCZOS_MIN_DIM = 96


def _cholesky_succeeds(matrix):
    """A Cholesky factor of the symmetric ``matrix``, or ``None`` if it is not positive definite.

    Reads the upper triangle of ``matrix`` (both are filled by every caller,
    equal up to the rounding of the deflation's update). ``matrix`` is a
    fresh C-ordered array of every caller (:func:`_shifted`, the deflated
    matrix), factored in place: its transpose is the Fortran-ordered array
    LAPACK wants, whose lower triangle is ``matrix``'s upper one, so no copy is
    made; LAPACK's lower variant is about 20% faster here than its upper one
    (1.2 against 1.5 ms at ``d = 501``, one thread). The factor is
    ``(L, True)`` with ``L L^T = matrix`` for ``cho_solve``.
    """
    from scipy.linalg import LinAlgError, cho_factor

    try:
        return cho_factor(matrix.T, lower=True, overwrite_a=True, check_finite=False)
    except LinAlgError:
        return None


def _shifted(V, diagonal_shift, sign=1.0):
    """``sign * V + diagonal_shift * I`` in this thread's work array (overwritten by the next)."""
    out = _scratch("square", (len(V), len(V)))
    if sign != 1.0:
        np.multiply(V, sign, out=out)
    else:
        np.copyto(out, V)
    out.flat[::len(V) + 1] += diagonal_shift
    return out


def _clipped_solve_without_eigh(V, u, floor, ceiling, shift, warm=None):
    """``g(V) u`` of :func:`ridge_from_statistics` by case (A) or (B), else ``None``."""
    if not (floor > 0.0 and np.all(np.isfinite(V))):
        return None   # no noise: eigh (its clipping at 0 of rounding-level negatives)
    if floor >= ceiling:
        # clip(lambda, c, c) = c for every eigenvalue: g(V) = I / (c + shift).
        return u / (ceiling + shift)
    d = len(u)
    trace = float(np.trace(V))
    if trace > d * floor:
        return _solve_unclipped(V, u, floor, ceiling, shift, trace)
    if d >= _LANCZOS_MIN_DIM:
        return _solve_few_above_floor(V, u, floor, ceiling, shift, warm)
    return None


def _solve_unclipped(V, u, floor, ceiling, shift, trace):
    """Case (A): ``(V + shift I)^-1 u`` once ``floor <= lambda_i <= ceiling`` is certified."""
    from scipy.linalg import cho_solve

    d = len(u)
    if _cholesky_succeeds(_shifted(V, -floor)) is None:        # lambda_min > floor
        return None
    # With every eigenvalue >= floor, lambda_max <= trace - (d - 1) floor.
    if (trace - (d - 1) * floor > ceiling
            and _cholesky_succeeds(_shifted(V, ceiling, sign=-1.0)) is None):
        return None
    factor = _cholesky_succeeds(_shifted(V, shift))
    if factor is None:
        return None
    return cho_solve(factor, u, check_finite=False)


def _solve_few_above_floor(V, u, floor, ceiling, shift, warm=None):
    """Case (B): Lanczos for the eigenpairs above the floor, the rest certified below it.

    Lanczos with full reorthogonalization from ``u`` plus a fixed,
    data-independent vector; every ``_LANCZOS_CHECK`` steps (or a few times
    that, when the residuals' rate of decay says they cannot converge sooner),
    Rayleigh-Ritz on the tridiagonal matrix with the standard residual estimates.

    With a ``warm`` hint (the previous solve's Ritz vectors, see
    :func:`ridge_from_statistics`) the start also holds their sum, and once
    at least as many Ritz pairs above the floor as the hint has are converged
    the certificate is tried before the slow test that the bulk's top is
    below the floor (at most :data:`_EARLY_CERTIFICATES` times per solve). The
    certificate alone proves the model (below), so stopping early changes
    nothing but the time; a refused certificate just lets Lanczos go on.
    """
    from scipy.linalg.blas import dsymv

    from ._stream_kernels import lanczos_orthogonalize as orthogonalize

    d = len(u)
    # V @ x by BLAS symv on V's upper triangle (the one the certificate reads; the
    # unpacked statistics have equal triangles): half the memory traffic of a
    # general product. V.T is the Fortran-ordered array symv wants (no copy for a
    # C-ordered V), whose lower triangle is V's upper one (LAPACK's lower variant
    # is the faster one here).
    lower_t = np.asfortranarray(V.T)
    steps = min(d - 1, _LANCZOS_STEPS)
    basis = np.empty((steps + 1, d))        # rows: the orthonormal Lanczos vectors
    diagonal, off = np.empty(steps), np.empty(steps)
    start = u + np.cos(np.arange(d) * 0.7548776662466927)   # fixed irrational step
    start /= np.linalg.norm(start)
    hint = None if warm is None else warm.get("ritz")
    if hint is not None and (hint.ndim != 2 or hint.shape[0] != d or not hint.shape[1]
                             or not np.all(np.isfinite(hint))):
        hint = None
    if hint is not None:
        start += hint.sum(axis=1) * (_WARM_WEIGHT / math.sqrt(hint.shape[1]))
        start /= np.linalg.norm(start)
    basis[0] = start
    early = 0 if hint is None else _EARLY_CERTIFICATES
    wanted = 2 if hint is None else hint.shape[1] + 2    # top Ritz pairs a check computes
    found = None
    next_check, last_residual = _LANCZOS_CHECK, None
    for j in range(steps):
        w = dsymv(1.0, lower_t, basis[j], lower=1)
        # Full reorthogonalization, diagonal[j], off[j] and basis[j + 1] (one numba call).
        breakdown = orthogonalize(basis, j, w, diagonal, off)
        m = j + 1
        if not (breakdown or m >= next_check or m == steps):
            continue
        # The top of T's spectrum only: every Ritz value above the floor and the
        # largest below it (what the tests below read), plus the smallest value.
        smallest, ritz, small = _top_of_tridiagonal(diagonal[:m], off[:m - 1], floor, wanted)
        residuals = off[j] * np.abs(small[-1])
        above = ritz > floor
        wanted = np.count_nonzero(above) + 2
        tolerance = _LANCZOS_TOLERANCE * max(abs(smallest), abs(ritz[-1]), floor)
        # The top of the spectrum is reached once the largest Ritz value is
        # converged, or known to sit below the floor (its eigenvalue is within its
        # residual of it), and so is the largest Ritz value below the floor
        # (Lanczos approaches the top eigenvalues from below: an eigenvalue just
        # above the floor first shows as an unconverged Ritz value under it).
        reached = residuals[-1] <= max(tolerance, 0.5 * (floor - ritz[-1]))
        below = np.flatnonzero(~above)
        if len(below):
            k = below[-1]
            reached = reached and residuals[k] <= 0.5 * (floor - ritz[k])
        converged = np.all(residuals[above] <= tolerance)
        # Next check: when the top Ritz pair's residual, falling at the rate seen
        # since the last check, would reach the tolerance (a check's tridiagonal
        # eigensolve costs a few Lanczos steps; an extra step costs little).
        top = residuals[-1]
        periods = 1
        if last_residual is not None and tolerance < top < 0.1 * last_residual:
            periods = min(4, max(1, int(math.log(top / tolerance)
                                        / math.log(last_residual / top))))
        next_check, last_residual = m + periods * _LANCZOS_CHECK, top
        if breakdown or (reached and converged):
            found = (ritz[above], (small[:, above].T @ basis[:m]).T)
            break
        if early and converged and np.count_nonzero(above) >= hint.shape[1]:
            early -= 1
            Y = (small[:, above].T @ basis[:m]).T
            if _deflation_certified(V, ritz[above], Y, floor):
                return _few_above_floor_model(u, ritz[above], Y, floor, ceiling, shift, warm)
    if found is None:
        return None
    theta, Y = found
    if not _deflation_certified(V, theta, Y, floor):
        return None
    return _few_above_floor_model(u, theta, Y, floor, ceiling, shift, warm)


def _top_of_tridiagonal(diagonal, off, floor, wanted):
    """``(smallest, values, vectors)``: the top eigenpairs of a symmetric tridiagonal matrix.

    ``values`` (ascending) are its ``q`` largest eigenvalues and ``vectors``
    (``m x q``) their unit eigenvectors, where ``q`` starts at ``wanted`` and
    doubles until ``values[0]`` is at or below ``floor`` (or ``q = m``): so
    every eigenvalue above the floor and the largest one below it are there.
    ``smallest`` is the smallest eigenvalue. LAPACK's MRRR (``stemr``, as
    ``eigh_tridiagonal``) on an index range: a Lanczos check needs these few
    pairs, not all ``m`` (an order of magnitude faster at ``m = 100``). Falls
    back to ``eigh_tridiagonal`` if LAPACK reports a failure.
    """
    from scipy.linalg.lapack import dstemr

    m = len(diagonal)
    e = np.empty(m)
    e[:m - 1] = off
    e[m - 1] = 0.0
    q = max(1, min(m, int(wanted)))
    while True:
        # stemr overwrites its e (scipy's wrapper does not copy it): a fresh copy per call.
        found, values, vectors, info = dstemr(diagonal, e.copy(), 3, 0.0, 0.0, m - q + 1, m,
                                              compute_v=1, lwork=18 * m, liwork=10 * m)
        if info or found != q:
            break
        values, vectors = values[:q], vectors[:, :q]
        if q == m:
            return values[0], values, vectors
        if values[0] <= floor:
            found, lowest, _, info = dstemr(diagonal, e.copy(), 3, 0.0, 0.0, 1, 1,
                                            compute_v=0, lwork=18 * m, liwork=10 * m)
            if info or found != 1:
                break
            return lowest[0], values, vectors
        q = min(m, 2 * q)
    from scipy.linalg import eigh_tridiagonal

    values, vectors = eigh_tridiagonal(diagonal, off)
    return values[0], values, vectors


#: A warm-started Lanczos tries its certificate early at most this many times.
_EARLY_CERTIFICATES = 2
#: Weight of the hint (unit Ritz vectors, summed over sqrt(k)) against the unit cold start.
_WARM_WEIGHT = 4.0


def _deflation_certified(V, theta, Y, floor):
    """Certificate: ``V`` without the Ritz pairs ``(theta, Y)`` is below the floor."""
    deflated = _shifted(V, floor, sign=-1.0)
    if len(theta):
        # deflated += Y diag(theta) Y^T in place (BLAS gemm on the Fortran view, whose
        # transpose is the same symmetric update): no d x d temporary.
        from scipy.linalg.blas import dgemm

        dgemm(1.0, Y * theta, Y, beta=1.0, c=deflated.T, trans_b=True, overwrite_c=True)
    return _cholesky_succeeds(deflated) is not None


def _few_above_floor_model(u, theta, Y, floor, ceiling, shift, warm):
    """``g(V) u`` from the certified eigenpairs above the floor; records them in ``warm``."""
    if warm is not None:
        warm["ritz"] = Y if len(theta) else None
    base = 1.0 / (floor + shift)
    gain = 1.0 / (np.minimum(theta, ceiling) + shift) - base
    return u * base + Y @ ((Y.T @ u) * gain)


# -- AdaSSP: the ridge strength from a private smallest eigenvalue (Wang 2018) --------

#: Share of ``mu*^2`` spent on the smallest eigenvalue. AdaSSP spends a third of
#: its budget on it (the other two thirds, its ``X^T X`` and ``X^T y`` releases,
#: are here the library's one joint release of the packed statistics); the rule
#: only needs the eigenvalue to within the noise level, so a twentieth suffices and
#: leaves the statistics ``sqrt(0.95)`` of ``mu*`` (``doc/privacy.md``, "QFTL fit:
#: AdaSSP"). Chosen with :data:`SPECTRAL_FRACTION` on synthetic tasks
#: (``benchmarks/bench_adassp_constants.py``), not on the benchmark data sets.
EIGENVALUE_SHARE = 0.05
#: Fraction of AdaSSP's spectral bound kept as the target of the ridge: the
#: solve (:func:`ridge_from_statistics`) already raises every noisy eigenvalue
#: below the noise's typical spectral norm to it, direction by direction, which
#: is the job AdaSSP's uniform ridge does; the ridge on top is a margin.
SPECTRAL_FRACTION = 0.03
#: AdaSSP's failure probability of its bound on the noise's spectral norm.
SPECTRAL_FAILURE = 0.05
#: Relative floor of the per-sample ridge strength (times ``R^2``): keeps the
#: solve finite when the rule gives 0 (no noise, well-conditioned data).
ALPHA_FLOOR = 1e-12


def min_eigenvalue_sensitivity(feature_bound, n_samples):
    """Replace-one sensitivity of ``lambda_min(V)`` for rows of norm at most ``R``.

    Weyl: ``V' = V - v v^T + v' v'^T`` and both rank-one terms are PSD of
    norm at most ``R^2``, so ``lambda_min`` moves by at most ``R^2`` either way
    (``doc/privacy.md``, "QFTL fit: AdaSSP"). The extra ``1e-12 n R^2`` covers
    the rounding of the computed eigenvalue (a backward-stable ``eigh`` errs by
    a modest multiple of ``2^-53 ||V||_2 <= 2^-53 n R^2``), with room to spare.
    """
    R2 = float(feature_bound) * float(feature_bound)
    return R2 * (1.0 + 1e-9) + 1e-12 * float(n_samples) * R2


def min_eigenvalue(packed, n_features):
    """``lambda_min`` of the exact ``V`` packed in ``packed`` (private: release it)."""
    V, _ = unpack(packed, n_features)
    return float(np.linalg.eigvalsh(V)[0])


def adassp_ridge(min_eigenvalue_hat, n_features, eigenvalue_noise, statistics_noise, delta):
    """AdaSSP's ridge ``lambda`` from the *released* smallest eigenvalue (public values only).

    Wang (2018), Algorithm 2, with the noise scales of GDP accounting in place
    of the ``(epsilon/3, delta/3)`` Gaussian mechanisms:

    * ``lambda_min_tilde = max(0, lambda_min_hat - sigma_1 sqrt(log(6/delta)))``,
      a lower confidence bound (the paper's shift: its noise standard deviation
      times ``sqrt(log(6/delta))``);
    * ``lambda = max(0, kappa sigma_V sqrt(d log(2 d^2 / rho)) - lambda_min_tilde)``,
      where ``sigma_V sqrt(d log(2 d^2/rho))`` is the paper's bound on the
      spectral norm of the symmetric noise on ``V`` (standard deviation
      ``sigma_V`` per entry; the library's packing has ``sigma_V`` on the
      diagonal and ``sigma_V / sqrt 2`` off it, so the bound holds a fortiori),
      ``rho = 0.05``, and ``kappa = SPECTRAL_FRACTION`` (AdaSSP has
      ``kappa = 1``; here the solve's eigenvalue floor already does most of
      that regularisation, see :data:`SPECTRAL_FRACTION`).

    Parameters
    ----------
    min_eigenvalue_hat : float
        The noisy release of ``lambda_min(V)``.
    n_features : int
        Dimension ``d`` of ``V`` (intercept column included).
    eigenvalue_noise, statistics_noise : float
        Standard deviations ``sigma_1`` of the eigenvalue's noise and
        ``sigma_V`` of the statistics' noise.
    delta : float
        The estimator's delta (AdaSSP's confidence level).

    Returns
    -------
    lam : float
        The total ridge strength, ``>= 0``.
    """
    d = int(n_features)
    shift = float(eigenvalue_noise) * math.sqrt(math.log(6.0 / float(delta)))
    lower = max(0.0, float(min_eigenvalue_hat) - shift)
    spectral = SPECTRAL_FRACTION * float(statistics_noise) * math.sqrt(
        d * math.log(2.0 * d * d / SPECTRAL_FAILURE))
    return max(0.0, spectral - lower)
