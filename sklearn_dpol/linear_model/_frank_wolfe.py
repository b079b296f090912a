"""PrivateFrankWolfeLasso: private Frank-Wolfe over the L1 ball (seed 004, Alg. 4 and 5)."""

import math
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted
from .._validate import validate_data

from .._auto_bounds import AUTO_GRID, LINF, AutoBoundsMixin
from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
)
from .._core import frank_wolfe as fw
from .._core import sets
from .._core._weights import canonical_csr, check_unit_sample_weight
from .._verbose import current_progress, reports_release
from ..privacy import PrivacyAccountant
from ..privacy._spec import Part, PrivacySpec, gaussian_spec, stream_regime
from ..privacy._zcdp import zcdp_rho
from ._dask_fit import check_frank_wolfe_dask_fit, frank_wolfe_problem, is_dask_array

_NEIGHBOURS = "replace-one"
# A warm start further outside the constraint set than rounding can explain
# was not released by this estimator.
_WARM_START_RTOL = sets.START_RTOL


class PrivateFrankWolfeLasso(AutoBoundsMixin, PrivateEstimatorMixin, RegressorMixin, BaseEstimator):
    """Least squares over an L1 ball, trained by differentially private Frank-Wolfe.

    Minimises ``(1/2n) sum_i (<x_i, w> + b - y_i)^2`` subject to
    ``||w||_1 + |b| / feature_bound <= radius`` (the LASSO in constraint form),
    after clipping every feature to ``[-feature_bound, feature_bound]`` and
    every target to ``[-y_bound, y_bound]``. Each Frank-Wolfe step moves
    towards one vertex ``+-radius e_j`` of the ball, chosen by the exponential
    mechanism (Talwar, Thakurta and Zhang 2015, Algorithm 4, with Gumbel-max
    selection and exact zCDP accounting instead of Laplace noise) or from a
    gradient with Gaussian noise (their Algorithm 5, corrected). Coefficients
    of features that are never selected are exactly zero.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, ``> 0``; ``np.inf`` selects without noise (plain
        Frank-Wolfe).
    delta : float, default=1e-6
        Privacy parameter delta in ``(0, 1)``; take it well below ``1/n``.
    radius : float or "auto", default="auto"
        Radius of the L1 ball, ``> 0``. The intercept, when fitted, is the
        weight of a constant feature and shares the ball (see Notes).
        ``"auto"``: the public rule ``radius_ = c * y_bound_ / feature_bound_``:
        as ``|<x, w>| <= feature_bound ||w||_1``, the ball holds the models
        whose predictions reach ``c`` times the target bound, with ``c = 1.5
        (noise / noise_ref)^(-1/3)`` in ``[0.5, 16]``, ``noise = ln(2 d) / (n
        mu*(epsilon, delta))`` (the selection among the ball's ``2 d`` vertices) (``n``, ``d``: the fit's shape, or a stream's
        first call's; ``noise_ref`` at ``n = 20,000``, ``d = 10``, ``epsilon
        = 1``): a larger ball when the noise is smaller. It reads the shape,
        the budget and the bounds in use only
        (public values, or the released quantiles of ``"auto"`` bounds: no
        budget), scales like the coefficients (``1/k`` when ``X`` is scaled
        by ``k``, ``k`` when ``y`` is), and its constants were chosen on
        synthetic data (``benchmarks/bench_radius_rule.py``; ``doc/privacy.md``,
        "radius='auto' that tracks the noise"). A radius from
        public knowledge of the model's size is better when there is one.
    feature_bound : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Every entry of ``X`` is clipped to ``[-feature_bound, feature_bound]``
        (max norm). Set it from public knowledge, never from the data.
        ``"auto"``: ``AUTO_DATA_NORM_SHARE`` (10%) of ``epsilon`` buys a
        private 98% quantile of the rows' L-infinity norms ``max_j |x_ij|``
        (exponential mechanism over the public grid ``2**(k/4)``, ``k/4`` in
        ``[-20, 20]``; for sparse rows only the stored entries are read),
        resolved into ``feature_bound_``; Frank-Wolfe gets the rest of the
        budget, and the two compose by basic composition (``doc/privacy.md``,
        "feature_bound='auto' for Frank-Wolfe"). A stream draws it from its
        first batch and keeps it.
    y_bound : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Targets are clipped to ``[-y_bound, y_bound]``. Set it from public
        knowledge, never from the data. ``"auto"``: ``AUTO_Y_BOUND_SHARE``
        (10%) of ``epsilon`` buys a private 98% quantile of ``|y|`` (same
        mechanism and grid), resolved into ``y_bound_``; with both ``"auto"``
        each quantile takes its own 10%.
    fit_intercept : bool, default=True
        Fit an intercept as the weight of a constant feature equal to
        ``feature_bound``, so the bounds, and the privacy analysis, are those
        of the other features. No data-dependent centring is done.
    positive : bool, default=False
        Constrain the coefficients (not the intercept) to be nonnegative: the
        set becomes ``{w >= 0, ||w||_1 + |b| / feature_bound <= radius}``,
        whose vertices are ``radius e_j``, ``-+radius`` on the intercept, and
        the origin when there is no intercept.
    selection : {"exponential", "gaussian"}, default="exponential"
        ``"exponential"``: Gumbel-max (the exponential mechanism) over the
        vertices, whose score sensitivity is ``2 L1 radius / n``.
        ``"gaussian"``: the vertex minimising a gradient with Gaussian noise;
        its L2 sensitivity grows with ``sqrt(n_features)``, so it is offered for
        comparison.
    max_iter : int or None, default=None
        Frank-Wolfe steps per call, each one pass over the batch (a
        full-batch gradient; ``max_iter`` counts passes over the training set
        in every estimator of the library). ``None`` takes the step count that
        minimises ``B^2 r^2 (2T+1) / (3T(T+1)) + e(T)`` (``doc/privacy.md``,
        section 23): the first term bounds the cost of the random fluctuation
        of the average of the selected vertices, the second is the expected
        error of one private selection at the noise of ``T`` steps (``b ln |S|``
        for the Gumbel scale ``b``; ``2 sigma r sqrt(2 ln |S|)`` for Gaussian
        selection), which grows like ``sqrt(T) / n``. It reads public
        constants only (``n``, the dimension, ``epsilon``, ``delta``, the
        bounds), is resolved into ``max_iter_`` and is at most 20,000 (exactly
        20,000 for ``epsilon=inf``). The noise of every step grows with
        ``sqrt(max_iter)``.
    step_size : {"decreasing", "constant"}, default="decreasing"
        ``"decreasing"``: ``2 / (t + 2)``, with ``t`` counting the steps since
        ``fit`` (so a ``partial_fit`` stream keeps its warm start);
        ``"constant"``: ``1 / (max_iter + 2)``, the seed's choice. The
        decreasing steps gave lower excess risk in ``benchmarks/README.md``.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise. ``fit`` re-seeds from it; ``partial_fit`` calls keep
        drawing from one generator.
        A seed (and a copy or pickle of a seeded estimator) replays its noise:
        ``None`` for anything published (``doc/privacy.md`` 13.3).
    accountant : PrivacyAccountant or None, default=None
        The privacy budget of the data set, shared by every fit that charges
        it, clones and worker processes of a model-selection run included.
        Each ``fit``, and each ``partial_fit`` stream once, reserves its
        guarantee before reading any data and raises
        :class:`~sklearn_dpol.exceptions.BudgetExceededError` past the budget
        (:class:`~sklearn_dpol.privacy.PrivacyAccountant`).
    verbose : int, default=0
        Print progress in scikit-learn's style: step counts about ten
        times per call, then a summary of each call's release. Only public information is printed (counters,
        the noise scale and the guarantee already released; no running time,
        which depends on the data),
        never a loss, a norm or any other value of the private iterates or
        the data: printing one would release it outside the guarantee.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released coefficients (the last Frank-Wolfe iterate).
    intercept_ : float
        The released intercept; ``0.0`` when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    radius_ : float
        The radius in use: ``radius``, or its public rule for ``radius="auto"``.
    max_iter_ : int
        The number of steps chosen for the last call: ``max_iter``, or the
        count of its rule when ``max_iter=None`` (the parameter itself is
        never changed).
    n_iter_ : int
        Steps taken in the last call (always ``max_iter_``: stopping early on
        the data would leak).
    t_ : int
        Steps since ``fit`` (or since the stream started).
    noise_scale_ : float
        Noise of each step in the last call: the Gumbel scale (exponential) or
        the Gaussian standard deviation.
    sensitivity_ : float
        Replace-one sensitivity of the scores (exponential) or L2 sensitivity
        of the gradient (Gaussian) in the last call.
    privacy_ : PrivacyGuarantee
        The guarantee covering what has been released.
    feature_bound_ : float
        The entry bound in use: ``feature_bound``, or its private quantile
        with ``feature_bound="auto"`` (released, covered by ``privacy_``).
    y_bound_ : float
        The target bound in use: ``y_bound``, or its private quantile with
        ``y_bound="auto"`` (released, covered by ``privacy_``).

    See Also
    --------
    sklearn.linear_model.Lasso : The non-private L1-penalised regression.
    PrivateMirrorDescentRegressor : Noisy mirror descent, also over an L1 ball.

    Notes
    -----
    Privacy is per record under replace-one neighbours; ``n`` is public. The
    selected vertices are the whole transcript and ``coef_``/``intercept_`` are
    a function of them, so ``fit`` is ``(epsilon, delta)``-DP for its records.
    Each ``partial_fit`` call runs the same private algorithm on its batch only,
    warm-started from the released model (public), and is ``(epsilon, delta)``-DP
    for the records of that batch. Batches are disjoint, so every record is
    covered by ``(epsilon, delta)`` through the one call that contained it, and
    the whole sequence of releases is ``(epsilon, delta)``-DP per record
    (parallel composition, which also holds when later batches are chosen after
    seeing earlier releases). A record passed to ``k`` calls is exposed ``k``
    times and its guarantee composes. ``fit`` followed by ``partial_fit``
    behaves the same way. The derivation is in ``doc/privacy.md``, section 4.

    References
    ----------
    K. Talwar, A. Thakurta and L. Zhang. Nearly optimal private LASSO.
    NeurIPS 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateFrankWolfeLasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 50))
    >>> y = np.clip(X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=20000), -1, 1)
    >>> model = PrivateFrankWolfeLasso(radius=1.5, random_state=0).fit(X, y)
    >>> model.max_iter_
    52
    >>> model.score(X, y) > 0.6
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [DELTA_CONSTRAINT],
        "radius": [POSITIVE, StrOptions({"auto"})],
        "feature_bound": [POSITIVE, StrOptions({"auto"}), None],
        "y_bound": [POSITIVE, StrOptions({"auto"}), None],
        "fit_intercept": ["boolean"],
        "positive": ["boolean"],
        "selection": [StrOptions({fw.EXPONENTIAL, fw.GAUSSIAN})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "step_size": [StrOptions({fw.DECREASING, fw.CONSTANT})],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "delta", "radius", "feature_bound", "y_bound", "fit_intercept",
        "positive", "selection",
    )
    _DEFAULT_BOUNDS = ("feature_bound", "y_bound")
    _private_state = ("_rng",)
    # feature_bound="auto", y_bound="auto": private quantiles (``_auto_bounds.py``),
    # the row bound an L-infinity one.
    _auto_bound_params = ("feature_bound", "y_bound")
    _auto_norm_param = "feature_bound"
    _auto_norm_kind = LINF
    #: radius="auto": ``radius_ = c * y_bound_ / feature_bound_``, ``c = 1.5 (noise /
    #: noise_ref)^(-1/3)`` in ``[0.5, 16]`` with the noise ratio ``ln(2 d) / (n mu)`` of a
    #: selection among the L1 ball's 2 d vertices (``_auto_bounds.auto_radius_factor``;
    #: chosen on synthetic data, ``benchmarks/bench_radius_rule.py --parts sweep-fw``).
    AUTO_RADIUS_FACTOR = 1.5
    AUTO_RADIUS_SLOPE = 1 / 3
    AUTO_RADIUS_RANGE = (0.5, 16.0)
    AUTO_RADIUS_DIMENSION = "log"

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        radius="auto",
        feature_bound=None,
        y_bound=None,
        fit_intercept=True,
        positive=False,
        selection="exponential",
        max_iter=None,
        step_size="decreasing",
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.feature_bound = feature_bound
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.positive = positive
        self.selection = selection
        self.max_iter = max_iter
        self.step_size = step_size
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Clipping to public bounds and the noise cost accuracy on the checks' data.
        tags.regressor_tags.poor_score = True
        tags.input_tags.sparse = True  # CSR by sparse products; other formats converted
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)`` from the origin and release one model, ``(epsilon, delta)``-DP.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data; entries are clipped to ``feature_bound``. Sparse
            input is used as CSR (sparse products, never densified). A dask
            array (dense blocks, at most 4096 columns with the intercept) is
            clipped and reduced to its Gram matrix on the workers, and the
            private algorithm runs once on the driver: the same model and
            guarantee as in memory (``doc/integrations.md``, "fit on a dask
            array").
        y : array-like or dask array of shape (n_samples,)
            Targets; clipped to ``y_bound``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in the public range ``[0, 1]`` multiplying each record's
            squared loss; the sensitivities, the noise and the guarantee are
            unchanged (``doc/privacy.md``, "Sparse input and sample weights for
            mirror descent ..."). ``None`` weighs every record 1. In memory
            (a NumPy array) also when ``X`` is a dask array.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._warn_default_bounds()
        return self._release_fit(X, y, reset=("coef_", "intercept_", "t_"),
                                 sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, sample_weight=None):
        """Run the private algorithm on one batch, warm-started from the released model.

        The call is ``(epsilon, delta)``-DP for the records of this batch; as
        every record belongs to one call, the stream is ``(epsilon, delta)``-DP
        per record (parallel composition, see Notes of the class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch; entries are clipped to ``feature_bound``. Sparse input is
            used as CSR.
        y : array-like of shape (n_samples,)
            Targets of the batch; clipped to ``y_bound``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]`` of the batch's records, as in :meth:`fit`.

        Returns
        -------
        self : object
            The estimator, with the new release in ``coef_`` and ``intercept_``.
        """
        return self._release_stream_batch(X, y, sample_weight=sample_weight)

    def _more_validate_params(self):
        # An "auto" bound (unresolved, or about to be redrawn) at its worst case.
        fw.check_bounds(self._radius(worst=True), self._feature_bound(worst=True),
                        self._y_bound(worst=True), n_dims=1)

    def _smallest_bounds(self):
        """``(feature_bound, y_bound)`` in use, an "auto" one at the grid's smallest
        candidate (public: the worst case of the underflow checks)."""
        return (float(AUTO_GRID[0]) if self._auto_norm() else self._feature_bound(),
                float(AUTO_GRID[0]) if self._auto_y() else self._y_bound())

    def _feature_bound(self, worst=False):
        """The entry bound in use: the mixin's row bound (``feature_bound``, an L-inf bound)."""
        return self._data_norm(worst=worst)


    def _privacy_spec(self, X=None, *, fitting=True, **_):
        """``(epsilon, delta)`` per call: one release, or parallel over a stream's batches.

        Gaussian selection composes to ``mu*(epsilon, delta)`` (up to rounding of
        its calibration); the exponential mechanism is accounted in zCDP
        (``rho = zcdp_rho(epsilon, delta)``, its steps' ``epsilon0^2/8`` sum to
        at most that) and charged as ``(epsilon, delta)``. A stream is
        ``(epsilon, delta)`` per batch by parallel composition.
        """
        regime = stream_regime(fitting, parallel=True)
        if self._any_auto_bound():
            # The quantiles, then the selections at (epsilon - epsilon_q, delta): basic.
            _, eps_main, mu_main = self._budget_split()
            if self.selection == fw.GAUSSIAN:
                part = Part.gaussian("the noisy Frank-Wolfe gradients", mu_main)
            else:
                part = Part("the Frank-Wolfe selections (exponential mechanism, zCDP)",
                            epsilon=eps_main, rho=zcdp_rho(eps_main, self.delta))
            return self._spec_with_quantiles(regime, (part,))
        if self.selection == fw.GAUSSIAN:
            return gaussian_spec(self.epsilon, self.delta, regime)
        return PrivacySpec(regime, self.epsilon, self.delta, composition="zcdp",
                           rho=zcdp_rho(self.epsilon, self.delta))

    def _partial_fit(self, X, y, *, fitting, sample_weight=None):
        first_call = fitting or not hasattr(self, "coef_")
        dask_input = None
        if fitting and is_dask_array(X):  # the Gram matrix reduced on the workers
            self._refuse_auto_bounds_on_dask("the Gram matrix is")
            dask_input = check_frank_wolfe_dask_fit(self, X, y, sample_weight)  # public
            n_samples = dask_input.n_rows
            n_dims = dask_input.n_features + int(self.fit_intercept)
        else:
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C",
                                 accept_sparse="csr", y_numeric=True, reset=first_call)
            X = canonical_csr(X)
            sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
            n_samples, n_dims = X.shape[0], X.shape[1] + int(self.fit_intercept)
        # "auto" bounds: a fit draws new quantiles, a stream's first call too (later
        # calls keep the released ones). Public checks only, at the worst candidate.
        resolve_bounds = (dask_input is None and self._any_auto_bound()
                          and (fitting or self._unresolved_auto_bounds()))
        shape = self._radius_shape(n_samples, n_dims - int(self.fit_intercept), first_call)
        if resolve_bounds:
            self._check_auto_bounds_public(n_samples)
            # The Gram sums' overflow check of the calibration (it grows with the bounds).
            fw._check_sums_fit_in_floating_point(n_samples, self._radius(worst=True),
                                                 self._feature_bound(worst=True),
                                                 self._y_bound(worst=True))
            # The Gram statistics' underflow check, at the smallest candidates (it
            # grows with the bounds): decided before the quantiles are drawn.
            fw.check_gram_statistics(n_samples, *self._smallest_bounds())
        fw.check_bounds(self._radius(worst=resolve_bounds, shape=shape),
                        self._feature_bound(worst=resolve_bounds),
                        self._y_bound(worst=resolve_bounds), n_dims)
        if not resolve_bounds:
            n_steps = self._n_steps(n_samples, n_dims, shape)
            # The calibration's refusals (bounds too small for floating point) are
            # decided by public values: decide them before the data is read.
            fw.calibrate(self.selection, n_samples=n_samples, n_dims=n_dims, n_steps=n_steps,
                         epsilon=self._budget_split()[1], delta=float(self.delta),
                         radius=self._radius(shape=shape),
                         feature_bound=self._feature_bound(), y_bound=self._y_bound())
        t_start = 0 if first_call else self.t_
        start = self._warm_start(first_call, n_dims, shape)  # public values only
        self._mark_data_read()  # failures from here on are charged
        if resolve_bounds:
            if fitting:
                self._forget_auto_bounds()   # a new fit draws its own quantiles
            self._resolve_auto_bounds(X, np.asarray(y, dtype=np.float64), stream=not fitting)
            # The public rule at the released bounds (post-processing).
            n_steps = self._n_steps(n_samples, n_dims, shape)
        self.feature_bound_, self.y_bound_ = self._feature_bound(), self._y_bound()
        self.radius_ = self._release_radius(shape)   # "auto": the public rule, bounds in use
        run = dict(
            selection=self.selection,
            epsilon=self._budget_split()[1], delta=float(self.delta), radius=self._radius(),
            feature_bound=self._feature_bound(), y_bound=self._y_bound(),
            intercept=self.fit_intercept, positive=self.positive, n_steps=n_steps,
            step_size=self.step_size, t_start=t_start, rng=self._rng,
            on_steps=current_progress(self).steps,
        )
        if dask_input is not None:
            problem = frank_wolfe_problem(self, dask_input)
            theta, calibration, _ = fw.frank_wolfe_on(problem, start, **run)
        else:
            theta, calibration, _ = fw.frank_wolfe(X, y, start, sample_weight=sample_weight,
                                                   **run)
        self._publish(theta)
        self._record_call(calibration, n_samples, first_call, fitting)

    def _n_steps(self, n_samples, n_dims, shape=None):
        if self.max_iter is not None:
            return int(self.max_iter)
        return fw.default_iterations(
            self.selection, n_samples=n_samples, n_dims=n_dims,
            epsilon=self._budget_split()[1],   # after the "auto" bounds' quantiles, if any
            delta=float(self.delta), radius=self._radius(shape=shape),
            feature_bound=self._feature_bound(), y_bound=self._y_bound(),
            positive=self.positive, intercept=self.fit_intercept,
        )

    def _warm_start(self, first_call, n_dims, shape):
        """The released model as a point of the constraint set (the origin at first),
        checked against the radius of the run (``shape``: the stream's first call's)."""
        theta = np.zeros(n_dims)
        if first_call:
            return theta
        theta[:self.n_features_in_] = self.coef_
        if self.fit_intercept:
            theta[-1] = self.intercept_ / self._feature_bound()
        radius = self._radius(shape=shape)
        signs_ok = not self.positive or np.all(theta[:self.n_features_in_] >= 0)
        inside = sets.contains(sets.L1, theta, radius, rtol=_WARM_START_RTOL)
        if not inside or not signs_ok:
            raise ValueError(
                "coef_ and intercept_ are outside the constraint set, so they were not "
                "released by this estimator; the sensitivity analysis needs a start "
                "inside it. Call fit to start afresh."
            )
        return sets.into_set(sets.L1, theta, radius)

    def _publish(self, theta):
        n_features = self.n_features_in_
        self.coef_ = theta[:n_features].copy()
        self.intercept_ = float(theta[n_features] * self._feature_bound()) if self.fit_intercept \
            else 0.0

    def _record_call(self, calibration, n_samples, first_call, fitting):
        self.max_iter_ = self.n_iter_ = calibration.n_steps
        self.t_ = (0 if first_call else self.t_) + calibration.n_steps
        self.noise_scale_ = float(calibration.noise_scale)
        self.sensitivity_ = float(calibration.sensitivity)
        if first_call:
            self._stream_records, self._stream_calls = 0, 0
        self._stream_records += n_samples
        self._stream_calls += 1
        self.privacy_ = self._guarantee(calibration, fitting)

    def _guarantee(self, calibration, fitting):
        """``privacy_`` from :meth:`_privacy_spec`, at the guarantee the calibration achieved."""
        mechanism = _mechanism_description(calibration)
        released = ("coef_ and intercept_ after every call (the last Frank-Wolfe iterate, "
                    "a function of the selected vertices), and the step count max_iter_")
        achieved = (calibration.epsilon, self.delta, calibration.mu)
        if self._any_auto_bound():
            # Basic composition with the quantiles: the spec's (epsilon, delta), no mu.
            released += self._quantile_released()
            if math.isfinite(self._budget_split()[1]):
                mechanism += self._quantile_mechanisms(fitting)
            achieved = None
        return self._privacy_spec(fitting=fitting).guarantee(
            mechanism=mechanism, released=released,
            n_releases=self._stream_calls, n_records=self._stream_records, achieved=achieved,
        )

    def predict(self, X):
        """Predict from features clipped to ``feature_bound_``, as in training.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], accept_sparse="csr",
                          reset=False)
        bound = self._feature_bound()
        if issparse(X):
            X = canonical_csr(X)
            clipped = sp.csr_matrix(
                (np.clip(np.asarray(X.data, dtype=np.float64), -bound, bound), X.indices,
                 X.indptr), shape=X.shape)
            return clipped @ self.coef_ + self.intercept_
        return np.clip(np.asarray(X, dtype=np.float64), -bound, bound) @ self.coef_ \
            + self.intercept_


def _mechanism_description(calibration):
    steps = calibration.n_steps
    if math.isinf(calibration.epsilon):
        return f"none: epsilon=inf selects the best vertex exactly ({steps} steps)"
    if calibration.selection == fw.EXPONENTIAL:
        return (
            f"exponential mechanism (Gumbel-max) at each of {steps} Frank-Wolfe steps, "
            f"each {calibration.epsilon_step:.4g}-bounded range, hence "
            f"{calibration.epsilon_step ** 2 / 8:.4g}-zCDP; {calibration.rho:.4g}-zCDP in "
            "total, converted exactly to (epsilon, delta)"
        )
    return (
        f"Gaussian noise on the gradient at each of {steps} Frank-Wolfe steps (analytic "
        f"Gaussian, sigma={calibration.noise_scale:.4g}), GDP-composed to "
        f"mu={calibration.mu:.4g}"
    )
