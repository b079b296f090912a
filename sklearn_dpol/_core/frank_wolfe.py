"""Private Frank-Wolfe for least squares over the L1 ball (seed 004, Alg. 4 and 5, corrected).

Objective ``L(theta) = (1/2n) ||Z theta - y||^2`` where ``Z`` is ``X`` clipped
entrywise to ``[-B, B]`` (``B = feature_bound``), optionally with the constant
column ``B`` appended for the intercept, and ``y`` is clipped to ``[-Y, Y]``.
The constraint set is the polytope ``conv(S)`` of the vertices ``S``:
``{+-r e_j}`` (the L1 ball of radius ``r``), or ``{r e_j}`` plus the origin for
``positive=True`` (the intercept coordinate keeps both signs).

Every step picks a vertex privately, from the scores ``u_s = <s, grad L>``,
and moves towards it. The bounds below are derived in
``doc/privacy.md``, section 4; for ``theta`` in the ball
``|<z, theta>| <= B r``, so each record's gradient ``z (<z, theta> - y)`` has

* max norm at most ``L1 = B (B r + Y)`` (seed: the L1-Lipschitz constant),
* L2 norm at most ``L2 = sqrt(d) B (B r + Y)``,

and replacing one record moves the scores by at most ``2 L1 r / n`` and the
gradient by at most ``2 L2 / n`` in L2. The selected vertices are the whole
transcript; the released model is a function of them (post-processing).
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..privacy._rounding import sum_rounding_factor
from . import _floors
from ..privacy import (
    compose_gdp,
    exponential_mechanism_zcdp,
    gaussian_delta,
    gaussian_mu,
    zcdp_delta,
    zcdp_rho,
)
from . import sets
from ._weights import sparse_gram
from .noise import gaussian_release

EXPONENTIAL = "exponential"
GAUSSIAN = "gaussian"
DECREASING = "decreasing"
CONSTANT = "constant"

# max_iter=None: the default rule's count, but never more steps than this (and exactly
# this many for epsilon=inf, where the count has nothing to balance).
AUTO_ITER_CAP = 20_000
# Precompute the Gram matrix only up to this dimension (128 MB of float64).
GRAM_MAX_DIM = 4096
# How much faster per column the whole Gram matrix is than one column at a time:
# one chunked Z^T Z (single-threaded BLAS syrk) against one pass of the column
# kernel, both single-threaded, measured 14 to 33 at n = 1e4 and d = 300 to 3,000
# on this project's 2-core machine (issue 19).
GRAM_SPEEDUP = 20
# The same for sparse X (a sparse Z^T Z against CSC columns), not re-measured.
SPARSE_GRAM_SPEEDUP = 10
# Rows clipped at a time for the Gram matrix, so clipping never copies all of X:
# at most CHUNK_ROWS rows and CHUNK_ENTRIES entries (8 MB) in one reused buffer.
CHUNK_ROWS = 8192
CHUNK_ENTRIES = 2**20


# -- bounds -------------------------------------------------------------------

def residual_bound(radius, feature_bound, y_bound):
    """``|<z, theta> - y| <= B r + Y`` for clipped data and ``||theta||_1 <= r``."""
    return feature_bound * radius + y_bound


def gradient_bound_max_norm(radius, feature_bound, y_bound):
    """``L1 = B (B r + Y)``: max norm of one record's gradient ``z (<z, theta> - y)``."""
    return feature_bound * residual_bound(radius, feature_bound, y_bound)


def gradient_bound_l2(radius, feature_bound, y_bound, n_dims):
    """``L2 = sqrt(d) B (B r + Y)``: L2 norm of one record's gradient."""
    return math.sqrt(n_dims) * gradient_bound_max_norm(radius, feature_bound, y_bound)


def _rounding_terms(n_samples, n_dims, n_steps):
    """The terms section 54.8's allowance counts for Frank-Wolfe's gradient: the ``n``
    records, the ``n_dims`` columns of ``G theta``, and three roundings per step of the
    in-place update ``g <- (1 - mu) g - mu b + mu v G[:, c]`` (each at most ``u L1`` per
    coordinate and data set, section 54.8)."""
    return n_samples + n_dims + 3 * n_steps


def score_sensitivity(n_samples, radius, feature_bound, y_bound, n_dims=0, n_steps=0):
    """Replace-one sensitivity of every score ``<s, grad L>``: ``2 L1 ||C||_1 / n``.

    The mean gradient changes by at most ``2 L1 / n`` in max norm and
    ``||s||_1 <= r`` for every vertex (Hoelder); times the rounding allowance of
    the computed gradient: sums over ``n`` records and ``n_dims`` columns and
    ``n_steps`` in-place updates (``doc/privacy.md`` section 54.8).
    """
    return (2.0 * gradient_bound_max_norm(radius, feature_bound, y_bound) * radius / n_samples
            * sum_rounding_factor(_rounding_terms(n_samples, n_dims, n_steps)))


def gradient_sensitivity_l2(n_samples, radius, feature_bound, y_bound, n_dims, n_steps=0):
    """Replace-one L2 sensitivity of the mean gradient: ``2 L2 / n`` (times the rounding
    allowance of section 54.8, in-place updates included)."""
    return (2.0 * gradient_bound_l2(radius, feature_bound, y_bound, n_dims) / n_samples
            * sum_rounding_factor(_rounding_terms(n_samples, n_dims, n_steps)))


def curvature_bound(radius, feature_bound):
    """``Gamma <= 4 B^2 r^2``, the curvature constant for every data set.

    For a quadratic, ``Gamma = sup (1/n) ||Z (theta2 - theta1)||^2`` over the
    set, and ``|<z, theta2 - theta1>| <= B ||theta2 - theta1||_1 <= 2 B r``.
    """
    extent = feature_bound * radius
    return 4.0 * extent * extent  # a product: float ** raises OverflowError


def gaussian_width_bound(radius, n_vertices):
    """``E max_s <b, s> <= r sqrt(2 ln |S|)`` for ``b ~ N(0, I)``, ``||s||_2 <= r``."""
    return radius * math.sqrt(2.0 * math.log(max(n_vertices, 2)))


def check_bounds(radius, feature_bound, y_bound, n_dims):
    """Raise ``ValueError`` when the bounds overflow in floating point."""
    values = (
        gradient_bound_l2(radius, feature_bound, y_bound, n_dims),
        curvature_bound(radius, feature_bound),
        radius * gradient_bound_max_norm(radius, feature_bound, y_bound),
    )
    if not all(v < 1e300 for v in values):  # also catches inf and nan
        raise ValueError(
            f"radius={radius:.3g}, feature_bound={feature_bound:.3g} and "
            f"y_bound={y_bound:.3g} give an infinite sensitivity. Rescale X and y "
            "by public bounds so that these are at most about 1e100."
        )


# -- the constraint set ---------------------------------------------------------

@dataclass(frozen=True)
class Vertices:
    """The vertices ``values[k] * e_{coords[k]}`` (``values[k] = 0``: the origin)."""

    coords: np.ndarray
    values: np.ndarray

    @property
    def size(self):
        return self.values.size

    def scores(self, gradient):
        """``<s, gradient>`` for every vertex ``s``."""
        return self.values * gradient[self.coords]

    def best(self, gradient):
        """The linear minimisation oracle: index of the vertex minimising the score."""
        return int(np.argmin(self.scores(gradient)))


def make_vertices(n_dims, radius, positive, intercept):
    """Vertices of the L1 ball, or of its nonnegative part for ``positive``.

    With ``positive`` every coordinate but the intercept (the last one, when
    ``intercept``) is nonnegative. The set ``{theta >= 0, ||theta||_1 <= r}``
    needs the origin as a vertex: without it Frank-Wolfe could never shrink
    ``||theta||_1`` below ``r`` when every gradient coordinate is positive.
    With a two-signed intercept the origin is already in the hull.
    """
    two_signed = np.arange(n_dims) if not positive else np.arange(n_dims - int(intercept),
                                                                   n_dims)
    coords = [np.arange(n_dims), two_signed]
    values = [np.full(n_dims, float(radius)), np.full(two_signed.size, -float(radius))]
    if two_signed.size == 0:
        coords.append(np.zeros(1, dtype=np.intp))
        values.append(np.zeros(1))
    return Vertices(np.concatenate(coords).astype(np.intp), np.concatenate(values))


# -- iteration count and step sizes ---------------------------------------------------

def paper_iterations(n_samples, epsilon, curvature, lipschitz_width):
    """The seed's ``T = (Gamma n eps / (L W))^(2/3)``, rounded up, capped.

    ``L W`` is ``L1 ||C||_1`` for the exponential mechanism (Thm. 5.5) and
    ``L2 G_C`` with ``G_C`` the Gaussian width for Gaussian noise (Thm. B.2).
    ``epsilon=inf`` gives the cap.
    """
    if math.isinf(epsilon):
        return AUTO_ITER_CAP
    ratio = curvature * n_samples * epsilon / lipschitz_width
    return int(min(AUTO_ITER_CAP, max(1, math.ceil(ratio ** (2.0 / 3.0)))))


def step_sizes(kind, n_steps, t_start):
    """Step sizes ``mu_t`` of ``n_steps`` steps.

    ``"decreasing"``: ``2 / (t + 2)`` with ``t`` counted from ``t_start``
    (Jaggi 2013); ``"constant"``: ``1 / (n_steps + 2)``, the seed's Alg. 4.
    """
    if kind == CONSTANT:
        return np.full(n_steps, 1.0 / (n_steps + 2))
    return 2.0 / (np.arange(t_start, t_start + n_steps, dtype=float) + 2.0)


# -- calibration --------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    """The noise of every step and the guarantee of all of them together.

    ``sensitivity`` is the replace-one sensitivity of the scores (exponential)
    or the L2 sensitivity of the gradient (Gaussian); ``noise_scale`` is the
    Gumbel scale ``2 sensitivity / (epsilon0 - EXPONENT_ROUNDING)`` (the exponents'
    rounding paid from the step's budget ``epsilon_step = epsilon0``) or the Gaussian standard
    deviation (0 for ``epsilon=inf``). ``rho`` (zCDP) and ``mu`` (GDP) describe
    all ``n_steps`` selections; the one that does not apply is ``nan``.
    """

    selection: str
    n_steps: int
    sensitivity: float
    noise_scale: float
    epsilon: float
    delta: float
    epsilon_step: float = math.nan
    rho: float = math.nan
    mu: float = math.nan


def calibrate(selection, *, n_samples, n_dims, n_steps, epsilon, delta, radius,
              feature_bound, y_bound):
    """The calibration that makes ``n_steps`` selections ``(epsilon, delta)``-DP."""
    _check_sums_fit_in_floating_point(n_samples, radius, feature_bound, y_bound)
    check_gram_statistics(n_samples, feature_bound, y_bound)
    if selection == EXPONENTIAL:
        sensitivity = score_sensitivity(n_samples, radius, feature_bound, y_bound, n_dims,
                                        n_steps)
        calibration = _calibrate_exponential(sensitivity, n_steps, epsilon, delta)
    else:
        sensitivity = gradient_sensitivity_l2(n_samples, radius, feature_bound, y_bound,
                                              n_dims, n_steps)
        calibration = (_calibrate_gaussian(sensitivity, n_steps, epsilon, delta)
                       if sensitivity >= TINY else None)
    if not math.isinf(epsilon) and not (
        calibration is not None and calibration.sensitivity >= TINY
        and TINY <= calibration.noise_scale < math.inf
    ):
        raise ValueError(
            f"radius={radius:.3g}, feature_bound={feature_bound:.3g} and y_bound="
            f"{y_bound:.3g} with n={n_samples} give a sensitivity or noise scale too small "
            "for floating point (it would round to zero and the noise with it). Rescale "
            "X and y by public constants so that the bounds are near 1."
        )
    return calibration


# Sensitivities and noise scales below this lose their precision (or vanish) in
# double precision; the data's effect on the scores would be rounded, not bounded.
TINY = _floors.TINY


def _check_sums_fit_in_floating_point(n_samples, radius, feature_bound, y_bound):
    """Sums over ``n`` rows (the Gram matrix, scores) must not overflow: an inf or nan
    score would make the selection depend on the data outside the mechanism."""
    largest = n_samples * feature_bound * max(feature_bound, y_bound) * max(1.0, radius)
    if not largest < 1e300:
        raise ValueError(
            f"n={n_samples} rows with feature_bound={feature_bound:.3g}, y_bound="
            f"{y_bound:.3g} and radius={radius:.3g} overflow floating point in the Gram "
            "matrix. Rescale X and y by public constants so that the bounds are near 1."
        )


def gram_statistic_sensitivities(n_samples, feature_bound, y_bound):
    """``(2 B^2 / n, 2 B Y / n)``: what one record can move an entry of ``G`` and of ``b``
    (``_floors.py``). ``2 B Y / n`` is also at most the gradient's max-norm sensitivity
    ``2 L1 / n = 2 B (B r + Y) / n``."""
    return _floors.gram_statistic_sensitivities(n_samples, feature_bound, y_bound)


def check_gram_statistics(n_samples, feature_bound, y_bound):
    """Refuse bounds whose ``G`` or ``b`` would be rounded to whole subnormal steps
    (``_floors.py``, ``doc/privacy.md`` section 54.3; public values only)."""
    _floors.check_gram_statistics(n_samples, feature_bound, y_bound, "feature_bound")


def _calibrate_exponential(sensitivity, n_steps, epsilon, delta):
    """Split the zCDP budget of ``(epsilon, delta)`` evenly over the steps.

    Step ``t`` samples ``P(s) ~ exp(-epsilon0 u_s / (2 sensitivity))``: its
    privacy loss has range ``epsilon0`` (bounded range), so it is
    ``epsilon0^2 / 8``-zCDP, and ``n_steps`` of them are ``rho``-zCDP with
    ``rho = n_steps epsilon0^2 / 8`` (adaptive composition).
    """
    if math.isinf(epsilon):
        return Calibration(EXPONENTIAL, n_steps, sensitivity, 0.0, math.inf, delta,
                           math.inf, math.inf)
    epsilon0 = _bounded_range_per_step(n_steps, float(epsilon), float(delta))
    rho = n_steps * exponential_mechanism_zcdp(epsilon0)
    # The scale pays for the floating-point exponents: below epsilon0 by EXPONENT_ROUNDING
    # (a budget too small for that gets no finite scale, and calibrate refuses it).
    scale = (2.0 * sensitivity / (epsilon0 - EXPONENT_ROUNDING)
             if epsilon0 > EXPONENT_ROUNDING else math.inf)
    return Calibration(EXPONENTIAL, n_steps, sensitivity, scale,
                       float(epsilon), delta, epsilon0, rho=rho)


@functools.lru_cache(maxsize=256)
def _bounded_range_per_step(n_steps, epsilon, delta):
    """The largest ``epsilon0`` with ``n_steps epsilon0^2 / 8``-zCDP within ``(epsilon, delta)``.

    Cached: it depends on public constants only and costs a root search, which
    would dominate a ``partial_fit`` on a small batch.
    """
    epsilon0 = math.sqrt(8.0 * zcdp_rho(epsilon, delta) / n_steps)
    # The root finder lands within a few ulps of the budget, on either side:
    # step below it until the spent rho provably converts within (epsilon, delta).
    return _shrink_until(
        epsilon0, lambda e0: zcdp_delta(n_steps * exponential_mechanism_zcdp(e0), epsilon)
        <= delta, factor=1.0 - 1e-12)


def _calibrate_gaussian(sensitivity, n_steps, epsilon, delta):
    """``sigma = sensitivity sqrt(n_steps) / mu*(epsilon, delta)``: GDP composition.

    Each noisy gradient is ``(sensitivity / sigma)``-GDP and ``n_steps`` of them
    compose to ``sqrt(n_steps) sensitivity / sigma = mu*`` exactly.
    """
    mu_total = gaussian_mu(epsilon, delta)
    if math.isinf(mu_total):
        return Calibration(GAUSSIAN, n_steps, sensitivity, 0.0, math.inf, delta,
                           math.inf, mu=math.inf)
    sigma = sensitivity * math.sqrt(n_steps) / mu_total
    sigma = _shrink_until(
        sigma, lambda s: gaussian_delta(epsilon, compose_gdp([sensitivity / s] * n_steps))
        <= delta, factor=1.0 + 1e-12)
    mu = compose_gdp([sensitivity / sigma] * n_steps)
    return Calibration(GAUSSIAN, n_steps, sensitivity, sigma, float(epsilon), delta,
                       mu=mu)


def _shrink_until(value, holds, factor, max_tries=1000):
    """Multiply ``value`` by ``factor`` until ``holds(value)``: absorbs rounding only."""
    for _ in range(max_tries):
        if holds(value):
            return value
        value *= factor
    raise RuntimeError("the calibration is off by more than rounding")  # pragma: no cover


# -- the data -------------------------------------------------------------------------

class ClippedLeastSquares:
    """``L(theta) = (1/2n) ||Z theta - y_c||^2`` on the clipped data, by its Gram matrix.

    ``grad L(theta) = G theta - b`` with ``G = Z^T Z / n`` and ``b = Z^T y_c / n``.
    A Frank-Wolfe step moves towards one vertex, so the gradient changes by a
    multiple of one column of ``G`` and of ``b``: ``O(d)`` per step once the
    column is known. The whole Gram matrix (one ``O(n d^2)`` matrix product,
    with ``b`` in the same pass) is worth it unless the steps can touch only a
    few columns (see :func:`use_gram`); otherwise columns are computed on first
    use (one pass over ``X``, ``O(n d)``, by :mod:`._fw_kernels`) and cached.
    ``X`` is never copied whole nor modified: the Gram matrix clips row chunks
    into one reused buffer, the column kernels clip each entry as they read it.
    With ``sample_weight`` (``c_i`` in [0, 1]) the loss is
    ``(1/2n) sum_i c_i (<z_i, theta> - y_i)^2``: the clipped rows (intercept
    column included) and targets are multiplied by ``sqrt(c_i)`` (the column
    kernels weigh each row's product by ``c_i`` instead).
    """

    def __init__(self, X, y, *, feature_bound, y_bound, intercept, precompute,
                 sample_weight=None):
        self.n_samples, n_features = X.shape
        self.n_dims = n_features + int(intercept)
        self._X = X
        self._p = n_features
        self._weight = None if sample_weight is None else np.asarray(
            sample_weight, dtype=np.float64)
        self._root = None if self._weight is None else np.sqrt(self._weight)
        self._y_clipped = np.clip(np.asarray(y, dtype=np.float64), -y_bound, y_bound)
        self._y = self._y_clipped if self._root is None else self._root * self._y_clipped
        self._feature_bound = float(feature_bound)
        self._intercept = bool(intercept)
        self._columns = {}
        self.gram = None
        if precompute:
            self.gram, self.linear = self._gram_and_linear()
        else:
            self.linear = self._linear_and_intercept_column()

    # -- the Gram route: row chunks, clipped into one buffer ----------------------------

    def _chunk_rows(self):
        return max(1, min(CHUNK_ROWS, CHUNK_ENTRIES // self.n_dims))

    def _clip_rows(self, start, stop, out=None):
        Z = np.empty((stop - start, self.n_dims)) if out is None else out[:stop - start]
        n_features = self._p
        bound = self._feature_bound
        rows = self._X[start:stop]
        if rows.dtype == np.float64:
            np.clip(rows, -bound, bound, out=Z[:, :n_features])
        else:
            # Copy to float64 first: clipping float32 rows against float32(bound)
            # could leave values above the bound the sensitivity is computed for.
            Z[:, :n_features] = rows
            np.clip(Z[:, :n_features], -bound, bound, out=Z[:, :n_features])
        if self._intercept:
            Z[:, n_features] = bound
        if self._root is not None:
            Z *= self._root[start:stop, np.newaxis]
        return Z

    def _gram_and_linear(self):
        """``G`` and ``b`` in one pass over ``X`` (``Z^T Z`` by BLAS ``syrk``, per chunk).

        With one BLAS thread: on a busy machine OpenBLAS's threads wait for each
        other (a 100 x 10,000 product took 0.3 s with two threads against 2.5 ms
        with one under load), and the column kernels are single-threaded too.
        """
        from ._threads import single_blas_thread

        n = self.n_samples
        chunk = self._chunk_rows()
        buffer = np.empty((min(chunk, n), self.n_dims))
        gram = np.zeros((self.n_dims, self.n_dims))
        linear = np.zeros(self.n_dims)
        with single_blas_thread():
            for start in range(0, n, chunk):
                stop = min(start + chunk, n)
                Z = self._clip_rows(start, stop, buffer)
                gram += Z.T @ Z
                linear += Z.T @ self._y[start:stop]
        return gram / n, linear / n

    # -- the column route: one kernel pass over X per product ---------------------------

    def _transpose_times(self, weights, column=-1):
        """``sum_i weights[i, m] clip(z_i)`` (times ``clip(x_ij)`` for ``column = j``), as rows.

        ``z_i`` includes the intercept entry ``feature_bound``: its coordinate
        is ``feature_bound`` times the sum of the weights.
        """
        from ._fw_kernels import clipped_transpose_dot

        weights = np.ascontiguousarray(weights, dtype=np.float64).reshape(self.n_samples, -1)
        out = np.empty((weights.shape[1], self.n_dims))
        sums = np.empty(weights.shape[1])
        features = out if not self._intercept else np.empty((weights.shape[1], self._p))
        clipped_transpose_dot(self._X, self._feature_bound, weights, int(column), features,
                              sums)
        if self._intercept:
            out[:, :self._p] = features
            out[:, self._p] = self._feature_bound * sums
        return out

    def _row_weights(self):
        return np.ones(self.n_samples) if self._weight is None else self._weight

    def _linear_and_intercept_column(self):
        """``b``, and the intercept's column of ``G`` in the same pass."""
        weights = self._row_weights()
        vectors = [weights * self._y_clipped]
        if self._intercept:
            vectors.append(self._feature_bound * weights)
        products = self._transpose_times(np.column_stack(vectors)) / self.n_samples
        if self._intercept:
            self._columns[self._p] = products[1]
        return products[0]

    def _predict(self, theta):
        """``<clip(x_i), theta> + feature_bound theta_intercept`` (unweighted)."""
        from ._fw_kernels import clipped_dot

        out = np.empty(self.n_samples)
        clipped_dot(self._X, self._feature_bound,
                    np.ascontiguousarray(theta[:self._p], dtype=np.float64), out)
        if self._intercept:
            out += self._feature_bound * theta[self._p]
        return out

    def column(self, j):
        """Column ``j`` of ``G``."""
        if self.gram is not None:
            return self.gram[:, j]
        if j not in self._columns:
            if j == self._p:   # the intercept (computed with b unless gram was given)
                column = self._transpose_times(self._feature_bound * self._row_weights())[0]
            else:
                column = self._transpose_times(self._row_weights(), column=j)[0]
            self._columns[j] = column / self.n_samples
        return self._columns[j]

    def gradient(self, theta):
        """``G theta - b``."""
        if self.gram is not None:
            return self.gram @ theta - self.linear
        if not np.any(theta):
            return -self.linear
        weights = self._predict(theta) * self._row_weights()
        return self._transpose_times(weights)[0] / self.n_samples - self.linear

    def loss(self, theta):
        """``L(theta)``."""
        residual = self._predict(theta) - self._y_clipped
        return 0.5 * float(np.sum(self._row_weights() * residual * residual)) / self.n_samples

    @classmethod
    def from_sums(cls, gram_sum, linear_sum, n_samples):
        """The objective of rows clipped and summed elsewhere (``fit`` on a dask array).

        ``gram_sum`` and ``linear_sum`` are ``Z^T Z`` and ``Z^T y_c`` over all
        ``n_samples`` rows, each block's taken from this class's own
        ``gram`` and ``linear`` (``n_block`` times them): the same clipping,
        weighting and intercept column. :meth:`gradient` and :meth:`column` are
        those of the Gram matrix; no rows are kept (:meth:`loss` needs them).
        """
        problem = cls.__new__(cls)
        problem.n_samples = int(n_samples)
        problem.n_dims = int(len(linear_sum))
        problem.gram = np.asarray(gram_sum, dtype=np.float64) / problem.n_samples
        problem.linear = np.asarray(linear_sum, dtype=np.float64) / problem.n_samples
        problem._X = problem._root = problem._cached = None
        problem._columns = {}
        return problem


class SparseClippedLeastSquares:
    """:class:`ClippedLeastSquares` for a CSR ``X``, by sparse products only.

    Clipping each entry to ``[-feature_bound, feature_bound]`` reads the stored
    entries only (a zero stays zero); the clipped matrix shares ``X``'s
    ``indices`` and ``indptr`` and holds its own clipped ``data``. A CSC copy
    serves the columns ``G[:, j] = Z^T Z[:, j] / n`` (``O(nnz)`` each); the
    intercept column (the constant ``feature_bound``) is handled blockwise,
    never appended. Same objective, same gradients as the dense class. With
    ``sample_weight``, rows and targets are multiplied by ``sqrt(c_i)`` as in
    the dense class (the intercept column becomes ``feature_bound sqrt(c_i)``).
    """

    def __init__(self, X, y, *, feature_bound, y_bound, intercept, precompute,
                 sample_weight=None):
        import scipy.sparse as sp

        self.n_samples, n_features = X.shape
        self.n_dims = n_features + int(intercept)
        self._p = n_features
        root = None if sample_weight is None else np.sqrt(
            np.asarray(sample_weight, dtype=np.float64))
        self._root = root
        self._y = np.clip(np.asarray(y, dtype=np.float64), -y_bound, y_bound)
        bound = float(feature_bound)
        self._c = bound if intercept else None
        data = np.clip(np.asarray(X.data, dtype=np.float64), -bound, bound)
        if root is not None:
            self._y = root * self._y
            data = data * np.repeat(root, np.diff(X.indptr))
        self._Z = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape, copy=False)
        self._Zc = self._Z.tocsc()
        n = self.n_samples
        # Weighted: sum_i sqrt(c_i) z'_i with z'_i = sqrt(c_i) z_i, computed as the
        # unweighted sum (of rows multiplied once more), so weights of 1 give its bits.
        self._col_sums = np.asarray((self._Z if root is None else sp.csr_matrix(
            (data * np.repeat(root, np.diff(X.indptr)), X.indices, X.indptr),
            shape=X.shape)).sum(axis=0)).ravel()
        linear = np.empty(self.n_dims)
        linear[:n_features] = self._Z.T @ self._y
        if intercept:
            linear[n_features] = self._c * (self._y.sum() if root is None
                                            else (root * self._y).sum())
        self.linear = linear / n
        self.gram = None
        if precompute:
            gram = np.empty((self.n_dims, self.n_dims))
            # In blocks of a public size (doc/privacy.md 57.9): the same bits.
            gram[:n_features, :n_features] = sparse_gram(self._Z)
            if intercept:
                gram[:n_features, n_features] = gram[n_features, :n_features] = (
                    self._c * self._col_sums)
                gram[n_features, n_features] = self._c * self._c * (
                    n if root is None else (root * root).sum())
            self.gram = gram / n
        self._columns = {}

    def _predict(self, theta):
        out = self._Z @ theta[:self._p]
        if self._c is not None:
            out = out + (self._c * theta[self._p] if self._root is None
                         else (self._c * theta[self._p]) * self._root)
        return out

    def _transpose_times(self, r):
        out = np.empty(self.n_dims)
        out[:self._p] = self._Z.T @ r
        if self._c is not None:
            out[self._p] = self._c * (r.sum() if self._root is None else (self._root * r).sum())
        return out

    def column(self, j):
        """Column ``j`` of ``G``."""
        if self.gram is not None:
            return self.gram[:, j]
        if j not in self._columns:
            if j == self._p:   # the intercept: Z^T (c 1) / n (c sqrt(w) with weights)
                column = self._c * self._transpose_times(
                    np.ones(self.n_samples) if self._root is None else self._root)
            else:
                z_j = self._Zc[:, [j]].toarray().ravel()
                column = self._transpose_times(z_j)
            self._columns[j] = column / self.n_samples
        return self._columns[j]

    def gradient(self, theta):
        """``G theta - b``."""
        if self.gram is not None:
            return self.gram @ theta - self.linear
        if not np.any(theta):
            return -self.linear
        return self._transpose_times(self._predict(theta)) / self.n_samples - self.linear

    def loss(self, theta):
        """``L(theta)``."""
        return 0.5 * float(np.sum((self._predict(theta) - self._y) ** 2)) / self.n_samples


def use_gram(n_dims, n_steps, sparse=False):
    """Precompute the Gram matrix when it costs less than the columns the steps can need.

    The Gram matrix costs ``O(n d^2)`` once, each column ``O(n d)`` (one pass
    over ``X``), and ``n_steps`` steps touch at most ``n_steps`` columns
    (noisy selection touches a new one at almost every step). One matrix
    product runs about ``GRAM_SPEEDUP`` times faster per column than one pass
    per column, so the Gram matrix wins from ``n_steps >= n_dims /
    GRAM_SPEEDUP`` (``SPARSE_GRAM_SPEEDUP`` for sparse ``X``). Public
    constants only: the choice never depends on the data.
    """
    speedup = SPARSE_GRAM_SPEEDUP if sparse else GRAM_SPEEDUP
    return n_dims <= min(speedup * n_steps, GRAM_MAX_DIM)


# -- selection ------------------------------------------------------------------------

# Scores more than _MAX_EXPONENT scales above the best are capped there (a
# contraction: it never increases the score's sensitivity); their probability
# is below exp(-4096) either way.
_MAX_EXPONENT = 4096.0
# x is scaled by (1 - 2^-40): it pays for truncating x to 2^-64 (doc/privacy.md 14.5).
_EXPONENT_SHRINK = 1.0 - 2.0 ** -40
# The exponents are computed in floating point (a subtraction, a division and the
# shrink, each rounded), so each is within 1.5 ulp(_MAX_EXPONENT) = 1.5 2^-40 of its
# exact value; two neighbours' bounded ranges can then differ from the exact one by
# 6 2^-40 < 2^-37. The calibration's scale pays for 2^-36 of epsilon0 (section 49.8).
EXPONENT_ROUNDING = 2.0 ** -36


def exponents(scores, scale):
    """``x_s = (u_s - min u) / scale``, shrunk by ``1 - 2^-40``, capped, NaN-free, min 0."""
    scores = np.asarray(scores, dtype=np.float64)
    low, high = float(scores.min()), float(scores.max())    # nan if any score is
    if (math.isfinite(low) and math.isfinite(high) and 0.0 < scale < math.inf
            and math.isfinite((high - low) / scale * _EXPONENT_SHRINK)):
        # The common case, with the same operations in place: every score is finite
        # and (rounding being monotone) none of the x_s overflows, x_s >= 0 and the
        # lowest is exactly 0, so clipping at 0, the cap of non-finite values and the
        # final shift change nothing.
        x = np.subtract(scores, low)
        np.divide(x, scale, out=x)
        np.multiply(x, _EXPONENT_SHRINK, out=x)
        return np.minimum(x, _MAX_EXPONENT, out=x)
    finite = np.isfinite(scores)
    low = np.min(scores[finite]) if finite.any() else 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = (scores - low) / scale * _EXPONENT_SHRINK
    # a non-finite score (never produced from clipped data) gets the cap: data-independent
    x = np.where(np.isfinite(x), np.clip(x, 0.0, _MAX_EXPONENT), _MAX_EXPONENT)
    # The mechanism is invariant to a common shift; keep a zero exponent so that
    # the rejection sampler accepts with positive probability.
    return x - x.min()


def select_exponential(scores, scale, state):
    """The exponential mechanism, sampled exactly: ``s`` with probability
    ``exp(-u_s / scale) / sum exp(-u / scale)``.

    ``state`` is an exact sampler's generator state
    (:func:`~sklearn_dpol._core._exact_kernels.generator_state`). No
    floating-point noise is involved: the choice is made by comparing random
    bits with the exponents (doc/privacy.md section 14.5).
    """
    from . import _exact_kernels

    if not (0.0 < scale < math.inf):       # no noise (or a broken calibration): the argmin
        return int(np.argmin(np.nan_to_num(scores, nan=np.inf)))
    return int(_exact_kernels.exponential_choice(exponents(scores, scale), state))


def exponential_probabilities(scores, scale):
    """The selection probabilities of :func:`select_exponential`."""
    logits = -(scores - np.min(scores)) / scale
    weights = np.exp(logits)
    return weights / weights.sum()


def _exponential_selector(vertices, scale, n_steps, rng):
    from . import _exact_kernels

    state = _exact_kernels.generator_state(rng)

    def choose(t, gradient):
        return select_exponential(vertices.scores(gradient), scale, state)

    return choose


def _gaussian_selector(vertices, sigma, rng):
    # The noisy gradient is the Gaussian release; the vertex is post-processing.
    return lambda t, gradient: gaussian_release(gradient, sigma, rng, postprocess=vertices.best)


def _selector(calibration, vertices, rng):
    if calibration.selection == GAUSSIAN:
        # Through gaussian_release even without noise, so audits see every release.
        return _gaussian_selector(vertices, calibration.noise_scale, rng)
    if math.isinf(calibration.epsilon):
        return lambda t, gradient: vertices.best(gradient)
    return _exponential_selector(vertices, calibration.noise_scale, calibration.n_steps, rng)


# -- the algorithm ----------------------------------------------------------------------

def run(problem, vertices, theta_start, steps, calibration, rng, on_steps=None):
    """Frank-Wolfe from ``theta_start`` with private vertex selection.

    Returns ``(theta, selected)``: the last iterate and the index of the vertex
    chosen at every step. The gradient is kept current in ``O(d)`` per step.
    ``on_steps(done, total)``, if given, is called about ten times, with step
    counts only (progress output must not see the private iterate).
    """
    if steps.size != calibration.n_steps:
        raise ValueError(
            f"{steps.size} steps were given but the noise is calibrated for "
            f"{calibration.n_steps}: more steps would spend more than the budget."
        )
    theta = np.array(theta_start, dtype=np.float64)
    gradient = problem.gradient(theta)
    choose = _selector(calibration, vertices, rng)
    selected = np.empty(steps.size, dtype=np.intp)
    report_every = max(1, -(-steps.size // 10))
    last = steps.size - 1
    for t, step in enumerate(steps):
        k = choose(t, gradient)
        # No step follows the last one: its gradient (one more column of G, a
        # pass over X on the column route) would never be read.
        _move_towards(theta, gradient if t < last else None, problem, vertices.coords[k],
                      vertices.values[k], step)
        selected[t] = k
        if on_steps is not None and ((t + 1) % report_every == 0 or t + 1 == steps.size):
            on_steps(t + 1, steps.size)
    return _into_ball(theta, np.max(np.abs(vertices.values))), selected


def _move_towards(theta, gradient, problem, coord, value, step):
    """``theta <- (1 - step) theta + step s`` for ``s = value e_coord``, in place.

    ``grad(theta') = (1 - step) grad(theta) + step (G s - b)``, in place too
    unless ``gradient`` is ``None``.
    """
    theta *= 1.0 - step
    theta[coord] += step * value
    if gradient is None:
        return
    gradient *= 1.0 - step
    gradient -= step * problem.linear
    if value != 0.0:
        gradient += (step * value) * problem.column(coord)


def _into_ball(theta, radius):
    """Undo rounding that left ``||theta||_1`` a few ulps above ``radius``."""
    return sets.into_set(sets.L1, theta, radius)


def frank_wolfe(X, y, theta_start, *, selection, epsilon, delta, radius, feature_bound,
                y_bound, intercept, positive, n_steps, step_size, t_start, rng,
                on_steps=None, sample_weight=None):
    """Fit on ``(X, y)``: clip, calibrate, run ``n_steps`` private steps.

    ``sample_weight`` (in [0, 1], validated by the caller) multiplies each
    record's loss; the sensitivities are unchanged (``doc/privacy.md``,
    "Sparse input and sample weights for mirror descent ...").
    Returns ``(theta, calibration, selected)``.
    """
    n_samples, n_features = X.shape
    n_dims = n_features + int(intercept)
    from scipy.sparse import issparse

    kind = SparseClippedLeastSquares if issparse(X) else ClippedLeastSquares
    problem = kind(X, y, feature_bound=feature_bound, y_bound=y_bound, intercept=intercept,
                   precompute=use_gram(n_dims, n_steps, sparse=issparse(X)),
                   sample_weight=sample_weight)
    return frank_wolfe_on(problem, theta_start, selection=selection, epsilon=epsilon,
                          delta=delta, radius=radius, feature_bound=feature_bound,
                          y_bound=y_bound, intercept=intercept, positive=positive,
                          n_steps=n_steps, step_size=step_size, t_start=t_start, rng=rng,
                          on_steps=on_steps)


def frank_wolfe_on(problem, theta_start, *, selection, epsilon, delta, radius, feature_bound,
                   y_bound, intercept, positive, n_steps, step_size, t_start, rng,
                   on_steps=None):
    """:func:`frank_wolfe` on a prepared :class:`ClippedLeastSquares` problem."""
    vertices = make_vertices(problem.n_dims, radius, positive, intercept)
    calibration = calibrate(selection, n_samples=problem.n_samples, n_dims=problem.n_dims,
                            n_steps=n_steps, epsilon=epsilon, delta=delta, radius=radius,
                            feature_bound=feature_bound, y_bound=y_bound)
    steps = step_sizes(step_size, n_steps, t_start)
    theta, selected = run(problem, vertices, theta_start, steps, calibration, rng, on_steps)
    return theta, calibration, selected


def default_iterations(selection, *, n_samples, n_dims, epsilon, delta, radius,
                       feature_bound, y_bound, positive, intercept):
    """``max_iter=None``: the count minimising fluctuation plus selection bias, public constants only.

    The iterate of steps ``2/(t+2)`` is the average ``sum_t w_t s_t`` of the
    selected vertices with ``w_t = 2 (t+1) / (T (T+1))``. Its excess risk is
    modelled (``doc/privacy.md``, section 23) as the cost of the random
    fluctuation of that average, ``(1/2) sum_t w_t^2 max_s s^T G s <=
    B^2 r^2 (2T+1) / (3T(T+1))``, plus the bias of the noisy selection,
    ``e(T) = sqrt(T) e(1)`` (:func:`selection_error`: the entropy of the
    vertex weights is at most ``ln |S|``, priced at the Gumbel scale). The
    count is the integer ``T`` in ``[1, AUTO_ITER_CAP]`` minimising
    :func:`fluctuation_bias_bound`; it reads ``n``, the dimension,
    ``epsilon``, ``delta`` and the bounds only. ``epsilon=inf`` gives the cap.
    """
    if math.isinf(epsilon):
        return AUTO_ITER_CAP
    n_vertices = make_vertices(n_dims, radius, positive, intercept).size
    noise_unit = selection_error(selection, 1, n_samples=n_samples, n_dims=n_dims,
                                 n_vertices=n_vertices, epsilon=epsilon, delta=delta,
                                 radius=radius, feature_bound=feature_bound, y_bound=y_bound)
    return fluctuation_minimising_steps(vertex_curvature_bound(radius, feature_bound),
                                        noise_unit)


def vertex_curvature_bound(radius, feature_bound):
    """``max_s s^T G s <= B^2 r^2`` for the vertices ``s = +-r e_j`` (``G_jj <= B^2``)."""
    extent = feature_bound * radius
    return extent * extent


def fluctuation_bias_bound(n_steps, vertex_curvature, noise_unit):
    """``C (2T+1) / (3T(T+1)) + sqrt(T) e(1)``, ``C = B^2 r^2``: what :func:`default_iterations` minimises."""
    t = float(n_steps)
    return vertex_curvature * (2.0 * t + 1.0) / (3.0 * t * (t + 1.0)) + math.sqrt(t) * noise_unit


def fluctuation_minimising_steps(vertex_curvature, noise_unit):
    """The integer ``T`` in ``[1, AUTO_ITER_CAP]`` minimising :func:`fluctuation_bias_bound`.

    The first term is convex and decreasing in ``T``, the second concave and
    increasing, and the derivative ``e(1) / (2 sqrt(T)) - C (2T^2 + 2T + 1)
    / (3 T^2 (T+1)^2)`` changes sign once for ``T >= 1`` (``T^2 (T+1)^2 /
    (sqrt(T) (2T^2 + 2T + 1))`` increases): bisection, then the better
    integer neighbour.
    """
    if not noise_unit > 0.0:
        return AUTO_ITER_CAP

    def slope(t):
        return (noise_unit / (2.0 * math.sqrt(t))
                - vertex_curvature * (2.0 * t * t + 2.0 * t + 1.0)
                / (3.0 * t * t * (t + 1.0) ** 2))

    return _minimising_integer(
        slope, lambda t: fluctuation_bias_bound(t, vertex_curvature, noise_unit))


def _minimising_integer(slope, objective):
    """The integer ``T`` in ``[1, AUTO_ITER_CAP]`` minimising a unimodal ``objective``.

    ``slope`` is its derivative, negative then positive: bisection on the sign
    of ``slope``, then the better of the two integer neighbours.
    """
    low, high = 1.0, float(AUTO_ITER_CAP)
    if slope(low) >= 0.0:
        return 1
    if slope(high) <= 0.0:
        return AUTO_ITER_CAP
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid == low or mid == high:
            break   # adjacent floats: no further iteration would move either end
        if slope(mid) < 0.0:
            low = mid
        else:
            high = mid
    candidates = {max(1, min(AUTO_ITER_CAP, int(math.floor(low)))),
                  max(1, min(AUTO_ITER_CAP, int(math.ceil(high))))}
    return min(sorted(candidates), key=objective)


def selection_error(selection, n_steps, *, n_samples, n_dims, n_vertices, epsilon, delta,
                    radius, feature_bound, y_bound):
    """A bound on the expected score error of one private selection among ``T = n_steps``.

    Exponential (Gumbel-max with scale ``b = 2 Delta / epsilon0``,
    ``epsilon0 = sqrt(8 rho / T)``): ``E error <= b ln |S|`` (the expected
    maximum of ``|S|`` standard Gumbels is ``ln |S| + 0.577``, that of the
    best vertex's ``0.577``). Gaussian (``sigma = Delta_2 sqrt(T) / mu``):
    ``E error <= 2 sigma E max_s |<s, N(0, I)>| <= 2 sigma r sqrt(2 ln |S|)``.
    Both are ``sqrt(T)`` times the value at ``T = 1``.
    """
    log_vertices = math.log(max(n_vertices, 2))
    if selection == EXPONENTIAL:
        sensitivity = score_sensitivity(n_samples, radius, feature_bound, y_bound, n_dims,
                                        n_steps)
        rho = zcdp_rho(epsilon, delta)
        scale = sensitivity * math.sqrt(n_steps / (2.0 * rho))
        return scale * log_vertices
    sensitivity = gradient_sensitivity_l2(n_samples, radius, feature_bound, y_bound, n_dims,
                                          n_steps)
    sigma = sensitivity * math.sqrt(n_steps) / gaussian_mu(epsilon, delta)
    return 2.0 * sigma * gaussian_width_bound(radius, n_vertices)


def excess_risk_bound(n_steps, curvature, noise_unit):
    """``2 Gamma / (T + 2) + sqrt(T) e(1)``: the expected-excess bound (section 4).

    Its minimiser (:func:`bound_minimising_steps`) was the default step count
    before :func:`fluctuation_minimising_steps`; kept for the comparison.
    """
    return 2.0 * curvature / (n_steps + 2.0) + math.sqrt(n_steps) * noise_unit


def bound_minimising_steps(curvature, noise_unit):
    """The integer ``T`` in ``[1, AUTO_ITER_CAP]`` minimising :func:`excess_risk_bound`.

    The bound's derivative ``e(1) / (2 sqrt(T)) - 2 Gamma / (T + 2)^2`` changes
    sign once for ``T >= 1`` (``(T + 2)^2 / sqrt(T)`` increases there), so the
    continuous minimiser is found by bisection and the better neighbour taken.
    """
    if noise_unit <= 0.0:
        return AUTO_ITER_CAP

    def slope(t):
        return noise_unit / (2.0 * math.sqrt(t)) - 2.0 * curvature / (t + 2.0) ** 2

    return _minimising_integer(slope, lambda t: excess_risk_bound(t, curvature, noise_unit))
