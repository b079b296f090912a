"""PrivateRangeScaler: per-feature private ranges from private quantiles."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted
from .._validate import validate_data

from .._base import EPSILON_CONSTRAINT, PrivateEstimatorMixin
from .._verbose import reports_release
from ..privacy import PrivacyAccountant
from ..privacy._quantile import geometric_grid, private_quantile, quantile_scale
from ..privacy._spec import ONE_RELEASE, Part, PrivacySpec
from ..privacy._zcdp import exponential_mechanism_zcdp, zcdp_rho

_NEIGHBOURS = "replace-one"
# The public default grid: 0 and +-2^(k/32) for k/32 in [-20, 20] (2563 candidates).
_GRID_EXPONENTS = (-20, 20)
_GRID_PER_OCTAVE = 32


class PrivateRangeScaler(PrivateEstimatorMixin, OneToOneFeatureMixin, TransformerMixin,
                         BaseEstimator):
    """Scale each feature into ``[-1, 1]`` from a private range, clipping the rest.

    For each feature ``j``, ``fit`` releases a private ``quantile`` and
    ``1 - quantile`` quantile, ``low_[j]`` and ``high_[j]``, by the exponential
    mechanism over a public grid of candidates (``doc/privacy.md``, "Private
    quantiles, private scaling"). ``transform`` maps ``[low_, high_]`` onto
    ``[-1, 1]`` (centring included) and clips everything outside, so every
    transformed row has L2 norm at most ``sqrt(n_features)`` and every entry
    lies in ``[-1, 1]``: public bounds for the estimator that follows
    (``data_norm=sqrt(n_features)``, ``feature_bound=1``) in a Pipeline.

    The ``2 * n_features`` quantiles compose into ``privacy_``: by basic
    composition (``delta=0``, each quantile ``epsilon / (2 n_features)``-DP),
    or, with ``delta > 0``, in zCDP (each ``eps0``-DP quantile is
    ``eps0**2 / 8``-zCDP) when that allows a larger ``eps0``. A Pipeline of
    this scaler and a private estimator fitted on the same records is
    ``(epsilon_1 + epsilon_2, delta_1 + delta_2)``-DP (sequential
    composition). An accountant charges only the steps it is passed to:
    give the same ``accountant`` to the scaler and to the estimator (review
    121: passed to the estimator alone, it records the estimator's share).

    Each quantile needs rows: ``fit`` warns with
    :class:`~sklearn_dpol.exceptions.SmallDataWarning`, before reading the
    data, when ``quantile_scale(eps0) * max(1, round(quantile * n))`` (about
    ``n * quantile * eps0 / 2``) is below the logarithm of the number of
    candidates, a public condition under which the ranges come out far too
    wide; the message says how many rows the budget needs.

    Parameters
    ----------
    epsilon : float, default=1.0
        Budget of the whole fit (all features); ``np.inf`` for no privacy.
    delta : float, default=0.0
        ``0`` for a pure ``epsilon``-DP fit; positive to compose the
        quantiles in zCDP and convert to ``(epsilon, delta)``.
    quantile : float, default=0.02
        The range of feature ``j`` is its ``[quantile, 1 - quantile]``
        private quantiles: a small fraction of each tail is clipped, which
        makes the quantiles accurate with few records.
    bounds : None or tuple (low, high), default=None
        A public hint of where the features lie (floats, or arrays of shape
        ``(n_features,)``): the candidates are ``n_candidates`` points evenly
        spaced on ``[low, high]``. ``None``: the candidates are ``0`` and
        ``+-2**(k / 32)`` for ``k / 32`` in ``[-20, 20]`` (2563 candidates, 2.2%
        apart), for features of any scale; a tighter hint is more accurate.
        A public prior prefers, among candidates of equal score, those next
        to the data (1 nat per octave on the default grid, 8 nats across a
        ``bounds`` grid): beyond a feature's extreme all candidates tie.
        Known without looking at the data: never pass the data's minimum and
        maximum.
    n_candidates : int, default=1000
        Size of the grid between ``bounds``.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise; ``None`` draws fresh entropy.
    accountant : PrivacyAccountant or None, default=None
        Charged ``privacy_`` for each fit.
    verbose : int, default=0
        Print a summary after each fit.

    Attributes
    ----------
    low_, high_ : ndarray of shape (n_features,)
        The released private quantiles (``low_ <= high_``: the two are sorted).
    center_, scale_ : ndarray of shape (n_features,)
        ``transform(X) = clip((X - center_) / scale_, -1, 1)``.
    epsilon_per_quantile_ : float
        The pure-DP budget of each of the ``2 n_features_in_`` quantiles.
    privacy_ : PrivacyGuarantee
        The guarantee of the released ranges.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen in ``fit``, when ``X`` has string column names.

    See Also
    --------
    sklearn.preprocessing.MinMaxScaler : The non-private scaler (its ranges
        are the data's exact extremes: not private).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol.preprocessing import PrivateRangeScaler
    >>> X = np.random.default_rng(0).normal(loc=[10.0, -3.0], scale=[2.0, 0.5],
    ...                                     size=(5000, 2))
    >>> scaler = PrivateRangeScaler(epsilon=1.0, bounds=(-50, 50), random_state=0).fit(X)
    >>> np.round(scaler.low_, 1), np.round(scaler.high_, 1)
    (array([ 5.9, -4.1]), array([14.3, -2. ]))
    >>> Xt = scaler.transform(X)
    >>> bool(np.abs(Xt).max() <= 1.0)
    True
    >>> print(scaler.privacy_.epsilon, scaler.privacy_.delta)
    1.0 0.0
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "quantile": [Interval(Real, 0, 0.5, closed="left")],
        "bounds": [tuple, list, None],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _private_state = ("_rng",)

    def __init__(self, *, epsilon=1.0, delta=0.0, quantile=0.02, bounds=None,
                 n_candidates=1000, random_state=None, accountant=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.quantile = quantile
        self.bounds = bounds
        self.n_candidates = n_candidates
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    # -- public calibration -------------------------------------------------------------

    def _more_validate_params(self):
        if self.bounds is not None:
            if len(self.bounds) != 2:
                raise ValueError("bounds must be None or a pair (low, high).")
            low, high = (np.asarray(b, dtype=np.float64) for b in self.bounds)
            if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))
                    and np.all(low < high)):
                raise ValueError(
                    f"bounds must be finite with low < high; got {self.bounds!r}.")

    def _epsilon_per_quantile(self, n_features):
        """Each quantile's pure-DP budget, from (epsilon, delta, n_features): public."""
        if n_features < 1:
            raise ValueError(
                f"X has {n_features} features: PrivateRangeScaler needs at least one.")
        releases = 2 * n_features
        if math.isinf(self.epsilon):
            return math.inf, "none"
        basic = self.epsilon / releases
        if self.delta > 0:
            # rho = releases * eps0^2 / 8 must convert to (epsilon, delta).
            zcdp = math.sqrt(8.0 * zcdp_rho(self.epsilon, self.delta) / releases)
            if zcdp > basic:
                return zcdp, "zcdp"
        return basic, "basic"

    def _quantiles_spec(self, n_features):
        """One release of ``2 n_features`` quantiles, composed in zCDP or basically.

        Each quantile is an ``eps0``-DP exponential mechanism (``eps0^2/8``-zCDP):
        zCDP composition claims ``(epsilon, delta)``, basic composition
        ``(epsilon, 0)``, whichever gives the larger ``eps0``. A transformer,
        not a candidate of private selection (no ``rho``).
        """
        eps0, composition = self._epsilon_per_quantile(n_features)
        releases = 2 * n_features
        quantiles = Part(f"{releases} private quantiles (low_ and high_), {eps0:.4g}-DP each",
                         epsilon=releases * eps0,
                         rho=releases * exponential_mechanism_zcdp(eps0)
                         if math.isfinite(eps0) else math.inf)
        delta = float(self.delta) if composition == "zcdp" else 0.0
        return PrivacySpec(ONE_RELEASE, self.epsilon, delta, parts=(quantiles,),
                           composition=composition if composition != "none" else "")

    def _selection_rho(self):
        """A zCDP ``rho`` of ``fit`` known before the data: the largest over ``n_features >= 1``.

        For private selection over a Pipeline (``doc/privacy.md``, "Private
        transformers in private selection"). With ``2 d`` quantiles of
        ``eps0``-DP each (``eps0^2 / 8``-zCDP), zCDP composition spends exactly
        ``zcdp_rho(epsilon, delta)`` whatever ``d``; basic composition
        (``eps0 = epsilon / (2 d)``, chosen when it is the larger ``eps0``)
        spends ``epsilon^2 / (16 d)``, largest at ``d = 1``. So ``rho(d) <=
        max(epsilon^2 / 16, zcdp_rho(epsilon, delta))`` for every ``d``.
        """
        if math.isinf(self.epsilon):
            return math.inf
        zcdp = zcdp_rho(self.epsilon, self.delta) if self.delta > 0 else 0.0
        return max(exponential_mechanism_zcdp(self.epsilon / 2.0) * 2.0, zcdp)

    def _privacy_spec(self, X=None, *, fitting=True, **_):
        """The quantiles' spec for ``X``'s public shape (or the fitted one if ``X`` is None)."""
        n_features = (_public_shape(X)[1] if X is not None
                      else getattr(self, "n_features_in_", None))
        if n_features is None:  # delta depends on the number of features: unknown
            return PrivacySpec(ONE_RELEASE, self.epsilon, math.nan)
        return self._quantiles_spec(n_features)

    def _guarantee(self, n_features, n_records):
        eps0, composition = self._epsilon_per_quantile(n_features)
        if composition == "none":
            mechanism = "none: epsilon=inf adds no noise (the best candidates)"
        else:
            mechanism = (
                f"exponential mechanism on a public grid, {2 * n_features} quantiles of "
                f"{eps0:.4g}-DP each, "
                + ("zCDP composition (eps0^2/8 each)" if composition == "zcdp"
                   else "basic composition")
            )
        return self._quantiles_spec(n_features).guarantee(
            mechanism=mechanism,
            released="low_ and high_ (the private per-feature quantiles) and what is "
                     "computed from them",
            n_releases=1, n_records=n_records,
        )

    def _candidates(self, n_features):
        """The public grids and the public prior's slope (nats per grid step)."""
        if self.bounds is None:
            grid = geometric_grid(*_GRID_EXPONENTS, per_octave=_GRID_PER_OCTAVE)
            return [grid] * n_features, 1.0 / _GRID_PER_OCTAVE
        low, high = (np.broadcast_to(np.asarray(b, dtype=np.float64), (n_features,))
                     for b in self.bounds)
        grids = [np.linspace(lo, hi, int(self.n_candidates)) for lo, hi in zip(low, high)]
        return grids, 8.0 / (int(self.n_candidates) - 1)

    def _rows_needed(self, eps0, n_candidates):
        """The public accuracy condition of one quantile, and the rows it asks for.

        A quantile is accurate when its records' pull, ``s * k`` (``s`` the
        exponential mechanism's scale ``quantile_scale(eps0)``, about
        ``eps0 / 2``, and ``k = max(1, round(quantile * n))`` the records
        between the target rank and the data's extreme), is above the
        logarithm of the number of candidates: below it the candidates beyond
        the data's extreme outweigh the right one together, and the ranges come
        out orders of magnitude too wide (``doc/user_guide/
        bounds_and_clipping.md``). Returns ``(needed pull, rows needed)``:
        public values only.
        """
        needed = math.log(n_candidates)
        per_row = quantile_scale(eps0) * max(float(self.quantile), 0.0)
        rows = math.ceil(needed / per_row) if per_row > 0 else math.inf
        return needed, rows

    def _warn_small_data(self, n, d, eps0, candidates):
        """Warn (:class:`~sklearn_dpol.exceptions.SmallDataWarning`) when the public
        accuracy condition of :meth:`_rows_needed` fails: from ``n``, ``d``,
        ``epsilon``, ``delta``, ``quantile`` and the grid, never from the data."""
        if not math.isfinite(eps0):
            return
        n_candidates = len(candidates[0])
        needed, rows = self._rows_needed(eps0, n_candidates)
        k = max(1, round(float(self.quantile) * n))
        if quantile_scale(eps0) * k >= needed:
            return
        from ..exceptions import SmallDataWarning, _warn_at_caller

        rows_text = (f"about {rows} rows" if math.isfinite(rows)
                     else "quantile > 0 and more rows")
        _warn_at_caller(
            f"PrivateRangeScaler: {n} rows are too few for {d} feature(s) at "
            f"epsilon={self.epsilon!r}, delta={self.delta!r} ({2 * d} quantiles of "
            f"{eps0:.4g}-DP each, over {n_candidates} candidates): some or all of the "
            "released ranges will likely be far too wide (by orders of magnitude when the "
            "rows are a small fraction of those needed) or miss the data, and a model "
            f"trained after them useless. These quantiles need {rows_text}. "
            "Use fewer features, a larger epsilon for the scaler (or delta > 0), "
            + ("a tighter public hint bounds=(low, high) with fewer n_candidates"
               if self.bounds is not None else "a public hint bounds=(low, high)")
            + ", or public ranges instead. This warning depends only on the public shape "
            "and parameters, never on the data.",
            SmallDataWarning)

    # -- fit / transform ----------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y=None):
        """Release each feature's private range.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (the private records).
        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted scaler.
        """
        return self._release_fit(X, None, reset=("low_", "high_", "center_", "scale_"))

    def _partial_fit(self, X, y, *, fitting):
        X = validate_data(self, X, dtype=np.float64, reset=True)
        n, d = X.shape
        if self.bounds is not None:
            for b in self.bounds:
                if np.ndim(b) and np.shape(b) != (d,):
                    raise ValueError(
                        f"bounds hold arrays of shape {np.shape(b)}; X has {d} features.")
        eps0, _ = self._epsilon_per_quantile(d)
        if math.isfinite(eps0) and quantile_scale(eps0) * n >= 2.0**39:
            raise ValueError(
                f"epsilon={self.epsilon!r} is too large for {n} records and {d} features; "
                "pass epsilon=np.inf for no privacy.")
        if math.isfinite(eps0) and eps0 < 2.0**-30:
            raise ValueError(f"epsilon={self.epsilon!r} is too small for {d} features.")
        candidates, slope = self._candidates(d)
        for grid in candidates:   # public: refused (and refunded) before any value is read
            if not (np.all(np.isfinite(grid)) and np.all(np.diff(grid) > 0)):
                raise ValueError(
                    f"bounds={self.bounds!r} give {int(self.n_candidates)} candidates that are "
                    "not finite and strictly increasing (a range too wide for float64, or "
                    "too narrow for that many steps); pass narrower or wider public bounds.")
        self._warn_small_data(n, d, eps0, candidates)   # public values only
        self._mark_data_read()  # failures from here on are charged
        state = self._exact_sampler()
        q = float(self.quantile)
        low = np.empty(d)
        high = np.empty(d)
        for j in range(d):
            low[j] = private_quantile(X[:, j], q, candidates[j], eps0, state, slope)
            high[j] = private_quantile(X[:, j], 1.0 - q, candidates[j], eps0, state, slope)
        # Post-processing of the released values only.
        self.low_, self.high_ = np.minimum(low, high), np.maximum(low, high)
        self.center_ = (self.low_ + self.high_) / 2.0
        half = (self.high_ - self.low_) / 2.0
        # A degenerate range (both quantiles on one candidate): unit scale, centred there.
        self.scale_ = np.where(half > 0, half, 1.0)
        self.epsilon_per_quantile_ = float(eps0)
        self.privacy_ = self._guarantee(d, n)
        return self.privacy_

    def transform(self, X):
        """Map each feature's private range onto ``[-1, 1]``, clipping outside it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data to scale.

        Returns
        -------
        X_scaled : ndarray of shape (n_samples, n_features)
            ``clip((X - center_) / scale_, -1, 1)``.
        """
        check_is_fitted(self)
        # A Pipeline's fit transforms the private training rows: no floating-point
        # warning may single out a record. scikit-learn's finiteness check sums the
        # rows (a finite row [M, -M] with M near 1.8e308 gives inf - inf), and a finite
        # entry far outside the range overflows before the clip maps it to +-1.
        with np.errstate(all="ignore"):
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return np.clip((X - self.center_) / self.scale_, -1.0, 1.0)

    def inverse_transform(self, X):
        """Map scaled data back (clipped values come back at the range's ends).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Scaled data.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X * scale_ + center_``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X * self.scale_ + self.center_


def _public_shape(X):
    shape = getattr(X, "shape", None)
    if shape is None:
        X = np.asarray(X)
        shape = X.shape
    n = int(shape[0]) if len(shape) >= 1 else 0
    d = int(shape[1]) if len(shape) == 2 else 1
    return n, d
