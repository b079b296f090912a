"""Private bounds: ``data_norm="auto"`` and ``y_bound="auto"``, one place for every estimator.

An estimator that clips rows to an L2 bound ``data_norm`` (and targets to
``y_bound``) may resolve the bound from the data instead of a public value: a
private quantile of the row norms (of ``|y|``) over the public grid
:data:`AUTO_GRID`, drawn by the exponential mechanism
(:func:`~sklearn_dpol.privacy._quantile.private_quantile`) with a stated share
of ``epsilon``. The rest of the budget, ``(epsilon - epsilon_q, delta)``, goes
to the estimator's own mechanism, and the two compose by basic composition
(``doc/privacy.md``, sections "data_norm='auto' for QFTL", "y_bound='auto'"
and "data_norm='auto' for every estimator").

The row bound may also be an L-infinity bound (``PrivateFrankWolfeLasso``'s
``feature_bound``, which clips every entry): the class names its row-bound
parameter and the norm (``_auto_norm_param``, ``_auto_norm_kind``), and the
quantile is then of the rows' L-infinity norms (``doc/privacy.md``,
"feature_bound='auto' for Frank-Wolfe"); everything else is the same.

A class with a constraint set may also take ``radius="auto"`` (its
``AUTO_RADIUS_FACTOR``, ``AUTO_RADIUS_SLOPE``, ``AUTO_RADIUS_RANGE``): a public
rule on the bounds in use, ``radius_ = c * y_bound / B`` (:func:`auto_radius`)
with ``c`` a public function of the noise ratio ``D(d) / (n mu*(epsilon,
delta))`` of the fit's shape and budget (``D = sqrt`` or ``d -> ln(2 d)``, the
class's ``AUTO_RADIUS_DIMENSION``; :func:`auto_radius_factor`),
post-processing of released values that spends no budget (``doc/privacy.md``,
"radius='auto' for Frank-Wolfe and mirror descent" and "radius='auto' that
tracks the noise").

The resolved values are fitted attributes (``data_norm_``, ``y_bound_``,
``radius_``); the parameters keep ``"auto"``. Before a value is drawn (parameter checks),
``"auto"`` stands for the grid's largest candidate (``_data_norm(worst=True)``): the worst
case of the checks that grow with the bound (an overflow, a noise scale or sensitivity
too large), so a configuration refused there is refused before any data is read. It is
not the worst case of a check that fails when a bound is too *small* (a sensitivity or a
noise scale that rounds to zero in floating point): such a check must also be run at the
grid's smallest candidate, ``AUTO_GRID[0]``, to be decided before the data is read
(``_radius(worst=True)`` already pairs the smallest row-bound candidate with the largest
``y_bound``). The number of rows a quantile can take (``2**31 - 1``) and its budget are
checked from public values by :meth:`AutoBoundsMixin._check_auto_bounds_public`.
"""

import math

import numpy as np
from scipy.sparse import issparse

from ._base import bound_in_use
from .privacy._gaussian import gaussian_mu
from .privacy._quantile import _MAX_RECORDS, geometric_grid, private_quantile, quantile_scale
from .privacy._spec import Part, PrivacySpec, gaussian_spec

__all__ = ["AUTO_GRID", "AUTO_RADIUS_REFERENCE", "L2", "LINF", "AutoBoundsMixin", "auto_radius",
           "auto_radius_factor", "noise_ratio", "row_norms"]

#: The public candidates of an "auto" bound: ``2**(k/4)``, ``k/4`` in ``[-20, 20]``.
AUTO_GRID = geometric_grid(-20, 20, signed=False, per_octave=4)
# Public prior of the quantiles: 1 nat per octave toward small bounds.
_PRIOR_SLOPE = 0.25

#: The row norms an "auto" row bound may be a quantile of.
L2, LINF = "l2", "linf"
# What privacy_ and the spec call the values of each kind's quantile.
_NORM_NAMES = {L2: "row norms", LINF: "row L-inf norms"}


def row_norms(X, kind=L2):
    """Each row's norm (``L2`` or ``LINF``) as float64; dense or CSR ``X`` (finite values).

    For CSR input only the stored entries are read (an implicit zero counts as
    0). A finite row whose L2 norm overflows (entries near ``1e308``) is given
    the largest double: it lies above every candidate, and is never refused
    after the data were read.
    """
    if kind == LINF:
        if not issparse(X):
            return np.max(np.abs(np.asarray(X, dtype=np.float64)), axis=1)
        X = X.tocsr()
        if not X.has_canonical_format:   # duplicates add up before the maximum
            X = X.copy()
            X.sum_duplicates()
        indptr = X.indptr
        norms = np.zeros(X.shape[0])
        stored = np.diff(indptr) > 0     # an empty row: every entry an implicit 0
        if np.any(stored):
            # Segment i runs from row i's first stored entry to the next non-empty row's.
            norms[stored] = np.maximum.reduceat(
                np.abs(np.asarray(X.data[:indptr[-1]], dtype=np.float64)),
                indptr[:-1][stored])
        return norms
    if kind != L2:
        raise ValueError(f"kind must be {L2!r} or {LINF!r}; got {kind!r}.")
    # A finite row whose squared norm overflows gives inf (clipped below), silently:
    # a warning would say that one record is huge, outside the guarantee.
    with np.errstate(over="ignore"):
        if issparse(X):
            X = X.astype(np.float64, copy=False)   # float32 squares overflow at 1.8e19
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        else:
            norms = np.linalg.norm(X, axis=1)
    return np.minimum(norms, np.finfo(np.float64).max)


_MU_CACHE = {}


def _cached_mu(epsilon, delta):
    """:func:`~sklearn_dpol.privacy.gaussian_mu`, remembered once it has validated its input.

    A stream asks for its calibration several times per call; the validation
    of the two floats costs more than the cached root. Anything gaussian_mu
    refuses is never stored, so it is refused again.
    """
    key = (gaussian_mu, epsilon, delta)   # the function too: a patched one is not cached
    try:
        return _MU_CACHE[key]
    except (KeyError, TypeError):
        pass
    mu = gaussian_mu(epsilon, delta)
    if len(_MU_CACHE) > 1024:
        _MU_CACHE.clear()
    try:
        _MU_CACHE[key] = mu
    except TypeError:
        pass
    return mu


def noise_ratio(n_samples, n_features, epsilon, delta, dimension="sqrt"):
    """``D(d) / (n mu*(epsilon, delta))``: the privacy noise against the signal, public.

    ``dimension="sqrt"``, ``D(d) = sqrt(d)``: a ``mu``-GDP release of the mean
    of ``n`` rows of norm at most ``B`` in ``d`` dimensions adds noise of norm
    about ``sqrt(d) B / (n mu)``, against a signal of norm up to ``B`` (mirror
    descent's noisy gradients). ``dimension="log"``, ``D(d) = ln(2 d)``: a
    private selection among the ``2 d`` vertices of an L1 ball errs by about
    ``ln(2 d) / (n mu)`` times the largest score (Frank-Wolfe's steps).
    0 at ``epsilon = inf``.
    """
    mu = _cached_mu(epsilon, delta)
    if not math.isfinite(mu):
        return 0.0
    if dimension == "log":
        return math.log(2.0 * n_features) / (n_samples * mu)
    return math.sqrt(n_features) / (n_samples * mu)


#: The public reference shape of ``radius="auto"``'s factor: ``(n, d, epsilon, delta)``.
AUTO_RADIUS_REFERENCE = (20_000, 10, 1.0, 1e-6)


def auto_radius_factor(factor, slope, factor_range, noise, dimension="sqrt"):
    """The factor ``c`` of ``radius="auto"`` at the noise ratio ``noise``, a public rule.

    ``c = factor * (noise / noise_ref) ** -slope`` clipped to ``factor_range``,
    with ``noise_ref`` the :func:`noise_ratio` of :data:`AUTO_RADIUS_REFERENCE`
    with the same ``dimension`` term (so ``factor`` is ``c`` there): less noise, a larger ball (``doc/privacy.md``,
    "radius='auto' that tracks the noise"). ``slope = 0`` is the constant
    ``factor``; ``noise = 0`` (``epsilon = inf``) gives the top of the range.
    """
    low, high = factor_range
    if slope == 0:
        return float(min(max(factor, low), high))
    if noise <= 0:
        return float(high)
    reference = noise_ratio(*AUTO_RADIUS_REFERENCE, dimension=dimension)
    return float(min(max(factor * (noise / reference) ** -slope, low), high))


def auto_radius(factor, y_bound, row_bound):
    """``radius="auto"``: ``factor * y_bound / row_bound``, a public rule.

    ``row_bound`` bounds every row in the dual norm of the constraint set
    (``||x||_inf`` for an L1 ball, ``||x||_2`` for an L2 ball), so a model of
    norm ``r`` predicts at most ``r * row_bound`` in absolute value; the rule
    gives the set room for predictions ``factor`` times the target bound
    (``factor`` from :func:`auto_radius_factor`).
    Scale-equivariant: scaling ``X`` by ``k`` divides it by ``k``, scaling
    ``y`` by ``k`` multiplies it by ``k``.
    """
    return float(factor) * float(y_bound) / float(row_bound)


class AutoBoundsMixin:
    """``data_norm="auto"`` (and ``y_bound="auto"`` where the class has ``y_bound``).

    The class declares which of its bounds may be ``"auto"`` in
    ``_auto_bound_params``; the shares and quantile levels are public class
    constants.
    """

    _auto_bound_params = ("data_norm",)
    # The parameter of the row bound and its norm (FW: "feature_bound", LINF).
    _auto_norm_param = "data_norm"
    _auto_norm_kind = L2
    AUTO_DATA_NORM_SHARE = 0.1
    AUTO_DATA_NORM_QUANTILE = 0.98
    AUTO_Y_BOUND_SHARE = 0.1
    AUTO_Y_BOUND_QUANTILE = 0.98
    # radius="auto": radius_ = c * y_bound / B with c = auto_radius_factor(AUTO_RADIUS_FACTOR,
    # AUTO_RADIUS_SLOPE, AUTO_RADIUS_RANGE, noise ratio of (n, d, epsilon, delta)) (None: no
    # "auto" radius).
    AUTO_RADIUS_FACTOR = None
    AUTO_RADIUS_SLOPE = 0.0
    AUTO_RADIUS_RANGE = (0.5, 16.0)
    # The dimension term of the noise ratio (noise_ratio's ``dimension``).
    AUTO_RADIUS_DIMENSION = "sqrt"

    # -- which bounds are "auto" (public: the parameters) -------------------------------
    def _auto_norm(self):
        param = self._auto_norm_param
        value = getattr(self, param)
        return param in self._auto_bound_params and isinstance(value, str) and value == "auto"

    def _auto_y(self):
        return ("y_bound" in self._auto_bound_params and isinstance(self.y_bound, str)
                and self.y_bound == "auto")

    def _any_auto_bound(self):
        return self._auto_norm() or self._auto_y()

    def _refuse_auto_bounds_on_dask(self, statistics):
        """Refuse (public parameters, nothing read) an "auto" bound on a dask Gram fit.

        ``statistics`` names what the workers clip before a quantile could be drawn.
        """
        if self._any_auto_bound():
            raise ValueError(
                f"fit on a dask array takes neither {self._auto_norm_param}='auto' nor "
                f"y_bound='auto' ({statistics} clipped on the workers before any quantile "
                "could be drawn); pass public bounds, or compute X first. Nothing was read "
                "or charged.")

    # -- the bounds in use ------------------------------------------------------------------
    def _data_norm(self, worst=False):
        """The row bound in use: ``data_norm``, or the resolved ``data_norm_``.

        Before the private quantile is drawn, and with ``worst=True`` (the
        parameter checks of a ``fit``, which will draw a new one), ``"auto"``
        stands for the largest candidate, the worst case of the checks.
        """
        if not self._auto_norm():
            return float(bound_in_use(getattr(self, self._auto_norm_param)))
        if worst:
            return float(AUTO_GRID[-1])
        return float(self.__dict__.get("_auto_data_norm", AUTO_GRID[-1]))

    def _y_bound(self, worst=False):
        """The target bound in use: ``y_bound``, or the resolved ``y_bound_`` (as ``_data_norm``)."""
        if not self._auto_y():
            return float(bound_in_use(self.y_bound))
        if worst:
            return float(AUTO_GRID[-1])
        return float(self.__dict__.get("_auto_y_bound", AUTO_GRID[-1]))

    # -- radius="auto": a public rule on the bounds in use (post-processing) ---------------
    def _auto_radius(self):
        return (self.AUTO_RADIUS_FACTOR is not None and isinstance(self.radius, str)
                and self.radius == "auto")

    def _radius(self, worst=False, shape=None):
        """The radius in use: ``radius``, or ``c * y_bound / B`` for ``radius="auto"``.

        ``B`` (:meth:`_dual_row_bound` of the row bound ``_auto_norm_param`` and
        the shape's ``d``) is a public value for the rows' dual norm of the
        constraint set: the row bound itself, so that ``|<x, w>| <= B ||w||``
        and the ball of ``radius_`` holds the models whose predictions reach
        ``c`` times ``y_bound`` (``doc/privacy.md``, "radius='auto' for
        Frank-Wolfe and mirror descent"), or, for mirror descent's L1,
        group-L1 and simplex sets, a smaller one (the dual norm of a row
        spread over its coordinates; "radius='auto' on the L1 and group-L1
        balls"). ``c`` (:meth:`_radius_factor`) is a
        public function of ``shape = (n, d)`` (the rows and features of the
        fit, or of a stream's first call: :meth:`_radius_shape`), ``epsilon``
        and ``delta``; without ``shape``, the shape of the last release
        (:meth:`_release_radius`). It reads the bounds in use only:
        public values, or the released private quantiles of "auto" bounds
        (post-processing, no budget). ``worst``: the largest radius the rule
        can give before the quantiles are drawn (the top of ``c``'s range
        times the largest ``y_bound`` candidate over the smallest row-bound
        candidate), which the parameter checks pair with the bounds' worst
        cases (:meth:`_data_norm`): every checked quantity grows with each of
        the three (``B`` at ``d`` unknown is the row bound itself: Frank-Wolfe's;
        mirror descent checks :meth:`_bound_cases` at the call's shape instead).
        """
        if not self._auto_radius():
            return float(self.radius)
        row_bound = (float(AUTO_GRID[0]) if worst and self._auto_norm()
                     else self._data_norm(worst=worst))
        if shape is None:
            shape = self.__dict__.get("_auto_radius_shape")
        factor = (float(self.AUTO_RADIUS_RANGE[1]) if worst or shape is None
                  else self._radius_factor(*shape))
        dual = self._dual_row_bound(row_bound, None if shape is None else shape[1])
        return auto_radius(factor, self._y_bound(worst=worst), dual)

    def _dual_row_bound(self, row_bound, n_features):
        """``B``: the value of a row's dual norm of the set that the rule divides by.

        A public function of the row bound in use and ``d`` (``n_features``),
        increasing in the row bound and at most the row bound (``None``: ``d`` not
        known yet, the row bound itself, the rule's smallest radius). Here the row
        bound itself (an L2 ball's dual norm is L2; Frank-Wolfe's ``feature_bound``
        is already an L-infinity bound); mirror descent's L1, group-L1 and simplex
        sets override it (``doc/privacy.md``, "radius='auto' on the L1 and group-L1
        balls").
        """
        return row_bound

    def _bound_cases(self, resolve, shape=None):
        """``(radius, row bound, y_bound)`` triples a parameter check must pass.

        The bounds in use when nothing is to be drawn (``resolve`` false); otherwise
        every combination of each unresolved quantity's two ends (an "auto" bound's
        smallest and largest candidates, ``radius="auto"``'s smallest and largest
        value over them), so that checks that fail at small values (underflow) are
        decided before the quantiles are drawn as well as those that fail at large ones
        (review 113 F2). Public values only.
        """
        if not resolve:
            return [(self._radius(shape=shape), self._data_norm(), self._y_bound())]
        lo, hi = float(AUTO_GRID[0]), float(AUTO_GRID[-1])
        norms = (lo, hi) if self._auto_norm() else (self._data_norm(),)
        ys = (lo, hi) if self._auto_y() else (self._y_bound(),)
        if self._auto_radius():
            # B (_dual_row_bound) grows with the row bound: the two ends at the shape's d.
            low, high = self.AUTO_RADIUS_RANGE
            d = None if shape is None else shape[1]
            radii = (auto_radius(float(low), min(ys), self._dual_row_bound(max(norms), d)),
                     auto_radius(float(high), max(ys), self._dual_row_bound(min(norms), d)))
        else:
            radii = (float(self.radius),)
        return [(r, b, y) for r in radii for b in norms for y in ys]

    def _radius_factor(self, n_samples, n_features):
        """``c`` of ``radius="auto"`` at ``n`` rows, ``d`` features and the main budget (public)."""
        _, eps_main, _ = self._budget_split()
        noise = noise_ratio(n_samples, n_features, eps_main, float(self.delta),
                            self.AUTO_RADIUS_DIMENSION)
        return auto_radius_factor(self.AUTO_RADIUS_FACTOR, self.AUTO_RADIUS_SLOPE,
                                  self.AUTO_RADIUS_RANGE, noise, self.AUTO_RADIUS_DIMENSION)

    def _radius_shape(self, n_samples, n_features, first_call):
        """The ``(n, d)`` the rule reads: this call's, or a continued stream's first call's.

        A stream keeps its first call's radius (its warm start must stay inside
        the ball and the calibration of every call reads the same radius).
        Public: the shape of a batch, never a value.
        """
        if first_call or not self._auto_radius():
            return int(n_samples), int(n_features)
        if "_auto_radius_shape" not in self.__dict__:
            # A model with coef_ but no recorded first call (set by hand, or pickled by an
            # older version): its radius is unknown, and a warm start checked against one
            # radius and run with another would break the sensitivity analysis.
            raise ValueError(
                "radius='auto' continues a stream with its first call's radius, and this "
                "estimator has none recorded (coef_ set by hand or from an older version). "
                "Call fit to start afresh, or pass a numeric radius.")
        return self._auto_radius_shape

    def _release_radius(self, shape):
        """Record the shape the rule read for this release (after ``_mark_data_read``); the radius."""
        self._auto_radius_shape = (int(shape[0]), int(shape[1]))
        return self._radius()

    # -- the budget ---------------------------------------------------------------------------
    def _quantile_epsilons(self):
        """``(epsilon of data_norm's quantile, epsilon of y_bound's)``: public, 0 if not "auto"."""
        epsilon = float(self.epsilon)
        return (self.AUTO_DATA_NORM_SHARE * epsilon if self._auto_norm() else 0.0,
                self.AUTO_Y_BOUND_SHARE * epsilon if self._auto_y() else 0.0)

    def _budget_split(self):
        """``(epsilon of the quantiles, epsilon of the main mechanism, its mu)``: public.

        Each "auto" bound takes its own share of ``epsilon``; the estimator's
        own mechanism gets the rest (basic composition). Without an "auto"
        bound: ``(0, epsilon, mu*(epsilon, delta))``.
        """
        if not self._any_auto_bound():
            return 0.0, float(self.epsilon), _cached_mu(self.epsilon, self.delta)
        eps_x, eps_y = self._quantile_epsilons()
        eps_q = eps_x + eps_y
        eps_main = float(self.epsilon) - eps_q if math.isfinite(eps_q) else math.inf
        return eps_q, eps_main, _cached_mu(eps_main, self.delta)

    # -- resolution (after _mark_data_read) ------------------------------------------------
    def _forget_auto_bounds(self):
        """A new ``fit`` draws its own quantiles."""
        self.__dict__.pop("_auto_data_norm", None)
        self.__dict__.pop("_auto_y_bound", None)

    def _unresolved_auto_bounds(self):
        """True while an "auto" bound has no private resolution yet (a stream's first call)."""
        return ((self._auto_norm() and "_auto_data_norm" not in self.__dict__)
                or (self._auto_y() and "_auto_y_bound" not in self.__dict__))

    def _check_auto_bounds_public(self, n_rows):
        """Refuse, before reading values, what the quantiles cannot do (public checks):
        more rows than a quantile takes (``private_quantile``'s ``2**31 - 1``), a share
        of epsilon too small, or too large for the number of rows."""
        for name, auto, eps_q in zip((self._auto_norm_param, "y_bound"), (self._auto_norm(), self._auto_y()),
                                     self._quantile_epsilons()):
            if auto and n_rows > _MAX_RECORDS:
                raise ValueError(
                    f"{name}='auto' draws a private quantile of at most {_MAX_RECORDS} rows; "
                    f"got {n_rows}. Pass a public {name}.")
            if auto and math.isfinite(eps_q) and (
                    eps_q < 2.0**-30 or quantile_scale(eps_q) * n_rows >= 2.0**39):
                raise ValueError(
                    f"{name}='auto' cannot spend {eps_q!r} of epsilon on {n_rows} rows "
                    f"(too small or too large); pass a public {name}.")
        self._warn_small_auto_bounds(n_rows)

    def _warn_small_auto_bounds(self, n_rows):
        """Warn (:class:`~sklearn_dpol.exceptions.SmallDataWarning`) when an "auto"
        bound's quantile has too few rows for its share of epsilon (public values only).

        The quantile's records pull with ``s * k`` nats (``s =
        quantile_scale(epsilon_q)``, ``k = round(q n)`` the records below its
        target rank, held to ``[1, n]``), against the public prior's whole span
        over :data:`AUTO_GRID` (``_PRIOR_SLOPE`` nats a step, 40 nats from the
        top candidate to the bottom one) plus the logarithm of the number of
        candidates. Below that, wherever the data lie on the grid, the quantile
        can fall to the grid's bottom (``2**-20``: every row clipped to almost
        nothing) or land octaves away. With ``epsilon = 1`` (a 10% share) that is
        below about 920 rows; rows of norm near 1 collapse below about 450
        (README). Decided from ``n``, ``epsilon`` and the public grid, before
        the quantile is drawn, never from the data.
        """
        from .exceptions import SmallDataWarning, _warn_at_caller

        needed = _PRIOR_SLOPE * (len(AUTO_GRID) - 1) + math.log(len(AUTO_GRID))
        for name, auto, eps_q, q in zip(
                (self._auto_norm_param, "y_bound"), (self._auto_norm(), self._auto_y()),
                self._quantile_epsilons(),
                (self.AUTO_DATA_NORM_QUANTILE, self.AUTO_Y_BOUND_QUANTILE)):
            if not auto or not math.isfinite(eps_q):
                continue
            scale = quantile_scale(eps_q)
            k = min(max(1, round(q * n_rows)), n_rows)
            if scale * k >= needed:
                continue
            rows = math.ceil(needed / (scale * q))
            _warn_at_caller(
                f"{type(self).__name__}: {name}='auto' draws a private {q:g} quantile of "
                f"{n_rows} rows with {eps_q:.4g} of epsilon (its share of "
                f"epsilon={self.epsilon!r}): below about {rows} rows at this budget the "
                "quantile can fall to the bottom of its grid (2**-20, every row clipped to "
                "almost nothing) or land octaves above the data, and the model is then "
                f"useless. Pass a public {name}"
                + (" (or scale the features with PrivateRangeScaler and pass its bound)"
                   if name != "y_bound" else " (the targets' public range: PrivateRangeScaler "
                   "scales features only)")
                + ", more rows, or a larger epsilon. This warning depends "
                "only on the number of rows and the budget, never on the data.",
                SmallDataWarning)

    def _resolve_auto_bounds(self, X, y=None, *, stream=False):
        """Draw the private quantiles of the unresolved "auto" bounds (after ``_mark_data_read``).

        ``stream``: drawn from a stream's first batch (not from a ``fit``'s rows).
        """
        eps_x, eps_y = self._quantile_epsilons()
        if self._unresolved_auto_bounds():
            self._auto_bounds_from_stream = bool(stream)
        if self._auto_norm() and "_auto_data_norm" not in self.__dict__:
            norms = row_norms(X, self._auto_norm_kind)
            self._auto_data_norm = private_quantile(
                norms, self.AUTO_DATA_NORM_QUANTILE, AUTO_GRID, eps_x, self._exact_sampler(),
                slope=_PRIOR_SLOPE)
            self._warn_grid_edge(self._auto_norm_param, self._auto_data_norm)
        if self._auto_y() and "_auto_y_bound" not in self.__dict__:
            self._auto_y_bound = private_quantile(
                np.abs(y), self.AUTO_Y_BOUND_QUANTILE, AUTO_GRID, eps_y, self._exact_sampler(),
                slope=_PRIOR_SLOPE)
            self._warn_grid_edge("y_bound", self._auto_y_bound)

    @staticmethod
    def _warn_grid_edge(name, released):
        """Warn when a released "auto" bound is an end of the grid (post-processing of the
        release: the warning reads only the released value; doc/privacy.md 55.9)."""
        from .exceptions import GridEdgeWarning, _warn_at_caller

        if released == AUTO_GRID[-1]:
            _warn_at_caller(
                f"{name}='auto' was released at the top of its public grid (2**20 = "
                f"{AUTO_GRID[-1]:g}): the values may lie above it, and everything above is "
                "clipped to it. Divide the data by a public constant (for example change "
                "the units) so that they lie within 2**-20 .. 2**20, or pass a public "
                f"{name}. This warning reads only the released bound.", GridEdgeWarning)
        elif released == AUTO_GRID[0]:
            _warn_at_caller(
                f"{name}='auto' was released at the bottom of its public grid (2**-20 = "
                f"{AUTO_GRID[0]:g}): the values may lie below it, or the rows were too few "
                "for the budget (the quantile then falls to the grid's bottom). Multiply "
                "the data by a public constant so that they lie within 2**-20 .. 2**20, "
                f"pass a public {name}, or use more rows or a larger epsilon. This warning "
                "reads only the released bound.", GridEdgeWarning)

    # -- the spec and privacy_'s texts ---------------------------------------------------
    def _norm_words(self):
        """``(parameter, what its quantile is of)``: ``("data_norm", "row norms")`` for L2."""
        return self._auto_norm_param, _NORM_NAMES[self._auto_norm_kind]

    def _quantile_parts(self):
        eps_x, eps_y = self._quantile_epsilons()
        param, norms = self._norm_words()
        return (
            *((Part.bounded_range(f"{param}_, a private quantile of the {norms}", eps_x),)
              if self._auto_norm() else ()),
            *((Part.bounded_range("y_bound_, a private quantile of |y|", eps_y),)
              if self._auto_y() else ()),
        )

    def _spec_with_quantiles(self, regime, main_parts, *, horizon=None, no_rho=None):
        """The spec of the quantiles followed by ``main_parts`` (basic composition).

        ``main_parts`` share ``(epsilon - epsilon_q, delta)``; a single Gaussian
        part is stated with that epsilon. The selection ``rho`` is the larger of
        ``mu*(epsilon, delta)^2 / 2`` and the parts' zCDP sum, unless
        ``no_rho`` says why there is none.
        """
        _, eps_main, _ = self._budget_split()
        if len(main_parts) == 1 and math.isnan(main_parts[0].epsilon):
            part = main_parts[0]
            main_parts = ((Part.gaussian(part.name, part.mu, eps_main) if not math.isnan(part.mu)
                           else Part(part.name, epsilon=eps_main)),)
        parts = (*self._quantile_parts(), *main_parts)
        if no_rho is not None:
            return PrivacySpec(regime, self.epsilon, self.delta, parts=parts,
                               composition="basic", no_rho=no_rho, horizon=horizon)
        rho = max(gaussian_spec(self.epsilon, self.delta).rho,
                  math.fsum(part.rho for part in parts))
        return PrivacySpec(regime, self.epsilon, self.delta, parts=parts, composition="basic",
                           rho=rho, horizon=horizon)

    def _quantile_mechanisms(self, fitting):
        """``privacy_.mechanism``'s suffix: ``" at (eps_main, delta)-DP, after ...; basic composition"``."""
        _, eps_main, _ = self._budget_split()
        eps_x, eps_y = self._quantile_epsilons()
        param, norms = self._norm_words()
        if fitting:
            quantiles = [
                *([f"a {eps_x:.4g}-DP private quantile of the {norms} ({param}='auto', "
                   "exponential mechanism)"] if self._auto_norm() else []),
                *([f"a {eps_y:.4g}-DP private quantile of |y| (y_bound='auto', "
                   "exponential mechanism)"] if self._auto_y() else []),
            ]
        elif not self.__dict__.get("_auto_bounds_from_stream", True):
            # A stream continuing a fit keeps the fit's released bounds: no new quantile.
            names = [*([f"{param}_"] if self._auto_norm() else []),
                     *(["y_bound_"] if self._auto_y() else [])]
            return (f" at ({eps_main:.4g}, {float(self.delta):.3g})-DP; "
                    + " and ".join(names) + " from the fit this stream continues (released "
                    "by it), so the quantiles' share of epsilon is not spent again")
        else:
            quantiles = [
                *([f"a {eps_x:.4g}-DP private quantile of the first batch's {norms} "
                   f"({param}='auto')"] if self._auto_norm() else []),
                *([f"a {eps_y:.4g}-DP private quantile of the first batch's |y| "
                   "(y_bound='auto')"] if self._auto_y() else []),
            ]
        return (f" at ({eps_main:.4g}, {float(self.delta):.3g})-DP, after "
                + " and ".join(quantiles) + "; basic composition")

    def _quantile_released(self):
        """``privacy_.released``'s suffix naming the resolved bounds."""
        param, norms = self._norm_words()
        names = [
            *([f"{param}_ (the private quantile of the {norms})"]
              if self._auto_norm() else []),
            *(["y_bound_ (the private quantile of |y|)"] if self._auto_y() else []),
        ]
        return " and " + names[0] if len(names) == 1 else ", " + " and ".join(names)
