"""PrivateQFTLRegressor: private follow-the-leader ridge regression (seed 002, Alg. 4-5)."""

import contextlib
import math
import weakref

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from .._validate import validate_data

from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    HORIZON_CONSTRAINT,
    POSITIVE,
    check_max_calls,
    PrivateEstimatorMixin,
    ReleasedLinearRegressorMixin,
    validated_stream_batch,
)
from .._core import losses, qftl
from .._core._clip import clip_row_scales
from .._core._weights import canonical_csr, check_unit_sample_weight
from .._core.noise import gaussian_release
from .._core._threads import single_blas_thread
from .._auto_bounds import AUTO_GRID as _AUTO_GRID  # noqa: F401  (the tests read it here)
from .._auto_bounds import AutoBoundsMixin
from .._verbose import reports_release
from ..privacy import PrivacyAccountant
from ..privacy._rounding import sum_rounding_factor
from ..privacy._spec import Part, gaussian_spec, stream_regime
from ..privacy._streams import (
    calibration_horizon,
    check_rounding,
    make_stream_mechanism,
    resolve_mechanism,
)
from ._dask_fit import dask_statistics, is_dask_array

_NEIGHBOURS = "replace-one"
# Solved models of the latest release read from each estimator (see _released_model).
_MODEL_CACHE = weakref.WeakKeyDictionary()


#: Version of the released statistics' scale: 2 since session 30 (the unit scale of the
#: public bounds, ``doc/privacy.md`` section 54.14); a pickle without it predates it.
STATISTICS_FORMAT = 2

class PrivateQFTLRegressor(
    AutoBoundsMixin, ReleasedLinearRegressorMixin, PrivateEstimatorMixin, RegressorMixin, BaseEstimator
):
    """Ridge regression on privately released sufficient statistics, batch or streaming.

    The model after ``t`` samples is follow-the-leader for the quadratic losses
    ``1/2 (y - v^T x)^2 + alpha/2 ||x||^2`` (Jain, Kothari and Thakurta 2012,
    Algorithm 4): ``x = (t alpha I + V_t)^{-1} u_t`` with ``V_t = sum v v^T``
    and ``u_t = sum y v``, i.e. ridge regression with penalty ``t alpha``.
    Only ``(V, u)`` touch the data, computed in the unit scale: rows divided
    by ``data_norm_`` and targets by ``y_bound_`` (public constants), so that
    fitting ``(c X, b y)`` with ``data_norm=c`` and ``y_bound=b`` gives the
    model of ``(X, y)`` with bounds 1 in the other units (the same
    predictions times ``b``, the same noise draws, the same ``privacy_``),
    and the one noise scale of the packed ``(V, u)`` never weighs one
    statistic's units against the other's (``doc/privacy.md``, "Unit-free
    defaults of IGD and QFTL"). ``fit`` releases them once with Gaussian
    noise (sufficient statistics perturbation; with ``alpha="auto"`` AdaSSP
    also releases the smallest eigenvalue of ``V`` with its own share of the
    budget); a ``partial_fit`` stream releases their prefix sums through a
    continual-release mechanism with one step per call (``prefix_sums="auto"``:
    a dense factorization weighted towards the last release for a known
    horizon of at most 128 calls, a minimax dense block then BLT for
    ``horizon=None`` with batches of at least 128 rows, else BLT, Dvijotham et
    al. 2024), optionally the seed's binary tree of noisy partial sums
    (Algorithm 5). ``T`` releases cost ``O(log T)`` noise each instead of
    ``O(T)``. Every noise scale comes from the joint replace-one sensitivity of
    one record's ``(v v^T, y v)``, and the model is post-processing.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, ``> 0``; ``np.inf`` adds no noise (exact ridge / FTL).
    delta : float, default=1e-6
        Privacy parameter delta in ``(0, 1)``; take it well below ``1/n``.
    alpha : float or "auto", default="auto"
        Ridge penalty per sample: after ``t`` samples the penalty is
        ``t * alpha / 2 ||x||^2`` (``Ridge(alpha=t * alpha)`` on the augmented
        data). It also bounds how far noise can move the model. ``"auto"``:
        in ``fit``, AdaSSP (Wang 2018): a twentieth of ``mu*^2`` releases the
        smallest eigenvalue of the clipped ``V = X^T X`` with Gaussian noise,
        and the ridge is a bound on the noise's spectral norm minus that
        private estimate (never below 0); the statistics get the other
        ``0.95 mu*^2``.
        In a ``partial_fit`` stream, AdaSSP's rule with the smallest
        eigenvalue taken as 0, from each release's public noise level (no
        budget spent; per release), or the value of the ``fit`` the stream
        continues. The resolved value is ``alpha_`` (``doc/privacy.md``,
        "QFTL fit: AdaSSP" and "QFTL streams calibrated on calls").
    data_norm : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Rows of ``X`` are clipped to this L2 norm. Set it from public knowledge
        of the data, never from the private data. ``"auto"`` (``fit``, or a
        stream's first call, from its first batch):
        ``AUTO_DATA_NORM_SHARE`` (10%) of ``epsilon`` buys a private 98%
        quantile of the row norms (exponential mechanism over the public grid
        ``2**(k/4)``, ``k/4`` in ``[-20, 20]``), resolved into ``data_norm_``;
        the rest, ``(0.9 epsilon, delta)``, goes to the statistics, and
        ``privacy_`` is ``(epsilon, delta)`` by basic composition. A
        ``partial_fit`` stream resolves it from its first batch
        (``doc/privacy.md``, "Private quantiles, private scaling").
    y_bound : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Targets are clipped to ``[-y_bound, y_bound]``. Set it from public
        knowledge of the targets. ``"auto"``: ``AUTO_Y_BOUND_SHARE`` (10%) of
        ``epsilon`` buys a private 98% quantile of ``|y|`` (the same mechanism
        and grid as ``data_norm="auto"``), resolved into ``y_bound_``. With
        both ``"auto"``, each quantile takes its own 10% and the statistics
        ``(0.8 epsilon, delta)``; ``privacy_`` is ``(epsilon, delta)`` by basic
        composition. Refused, like ``data_norm="auto"``, by ``fit`` on a dask
        array; a ``partial_fit`` stream resolves it from its first batch
        (``doc/privacy.md``, "y_bound='auto' for QFTL").
    fit_intercept : bool, default=True
        Learn an intercept as the weight of a constant feature equal to
        ``intercept_scaling``. It counts in the row norm:
        ``R = sqrt(data_norm**2 + intercept_scaling**2)``, and it is penalised
        like the other weights, so centre ``y`` by a public value if you can.
    intercept_scaling : float or "auto", default="auto"
        Value of the constant feature. ``"auto"``: ``c * data_norm_`` (in the
        units of ``X``), with ``c`` from public values only: ``c^2 =
        clip(sqrt(4 sqrt(2 (d + 1)) sigma_1 / n), 0.1, 1)``, ``sigma_1`` the
        statistics' noise at ``c = 1``, ``n`` the rows of ``fit``: it balances
        the intercept's noise-to-signal ratio against the row bound
        ``sqrt(1 + c^2)`` that scales all the noise. A ``partial_fit``
        stream fixes it at its first call: from ``horizon`` and its mechanism's
        last release, or with ``horizon=None`` the minimax over 1 to 128 calls
        of the first batch's size (``doc/privacy.md`` 56.9); a stream continuing
        a ``fit`` keeps the fit's. Resolved into ``intercept_scaling_``
        (``doc/privacy.md`` 56.4).
    horizon : int or None, default=None
        Samples a ``partial_fit`` stream may contain; running past it raises
        ``ValueError``. A factorization (``"dense"``, ``"blt"``, ``"sqrt"``) is
        calibrated on calls: ``ceil(horizon / n)`` of them, ``n`` the first
        batch's size (public), and a call past that raises ``ValueError``
        before reading its data (keep later batches at least as large as the
        first, or declare the calls with ``max_calls``). A tree is calibrated
        for ``horizon.bit_length()`` levels. With ``None`` the guarantee holds
        for a stream of any length, at somewhat more noise.
    max_calls : int or None, default=None
        The number of ``partial_fit`` calls the stream may make, declared up
        front (public). A factorization is calibrated on ``max_calls`` steps
        whatever the batch sizes, and call ``max_calls + 1`` raises
        ``ValueError`` before reading its data; ``horizon`` still caps the
        samples. ``None``: ``ceil(horizon / n)`` calls, ``n`` the first batch's
        size, which refuses a stream whose later batches are smaller than the
        first before its samples reach ``horizon``: with batches of varying
        size pass the number of calls you will make. A tree counts samples, so
        ``max_calls`` changes nothing in its noise (it still caps the calls).
        Needs a ``horizon`` and is at most ``horizon`` (``ValueError``
        otherwise: with ``horizon=None`` the stream takes any number of calls).
        Resolved into ``max_calls_`` at the stream's first call.
    prefix_sums : {"auto", "blt", "sqrt", "dense", "tree", "honaker"}, default="auto"
        The continual-release mechanism of a stream's prefix sums
        (:func:`~sklearn_dpol.privacy._streams.make_stream_mechanism`).
        ``"blt"``: a buffered linear Toeplitz factorization with 4 buffers, one
        step per ``partial_fit`` call, within 1% of the square-root
        factorization's error and ``O(4 * packed dim)`` memory. ``"sqrt"``: the
        square-root Toeplitz factorization (memory grows with the number of
        calls). ``"tree"`` and ``"honaker"``: the seed's binary tree over
        samples with the plain or Honaker estimator (both draw at most two
        noise vectors a call, ``doc/privacy.md`` section 50). ``"dense"``: a
        lower-triangular factorization for a known horizon of at most 128
        calls, weighted so that the last release (the model the stream ends
        with) gets about half BLT's variance; with ``horizon=None``, a dense
        block of 128 calls whose error is 2.28 times the known horizon's at
        every call (the smallest largest ratio of any matrix factorization), then an unbounded
        BLT. ``"auto"`` is ``"dense"`` when the calls (``max_calls``, else
        ``ceil(horizon / n)``) are at most 128, or
        with ``horizon=None`` when the first batch has at least 128 rows and
        at most about 250 features (the block's steps cost ``O(128 x packed
        dim)``), else ``"blt"``; the resolved name is
        ``prefix_sums_``. A factorization's
        noise carries the stream layer's rounding allowance (``1 + 1e-3``),
        and a call whose public worst-case rounding (call count, largest
        batch, packed dimension) would pass it raises ``ValueError`` before
        reading its data (:func:`~sklearn_dpol.privacy._streams.check_rounding`).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise. ``fit`` re-seeds from it; later ``partial_fit`` calls
        keep drawing from one generator.
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
        Print a summary of each ``fit`` and ``partial_fit`` call's release
        in scikit-learn's style. Only public information is printed (counters,
        the noise scale and the guarantee already released; no running time,
        which depends on the data),
        never a loss, a norm or any other value of the private iterates or
        the data: printing one would release it outside the guarantee.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released weights. A release stores the noisy statistics (``O(d^2)``);
        the ridge model, post-processing of them, is solved the first time
        ``coef_``, ``intercept_`` or ``predict`` reads it (by a certified
        Cholesky solve where no eigenvalue, or all but a few, must be clipped;
        else one ``eigh``: ``doc/privacy.md``, "QFTL streams at speed").
    intercept_ : float
        Released intercept; 0.0 when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    alpha_ : float
        The ridge penalty per sample used (``alpha`` with ``"auto"``
        resolved), in the units of ``X`` (the unit-scale rule times
        ``data_norm_**2``).
    intercept_scaling_ : float or None
        The value of the constant feature used (``intercept_scaling``, or
        ``"auto"``'s public ``c * data_norm_``); ``None`` when
        ``fit_intercept=False``.
    eigenvalue_noise_scale_ : float or None
        Standard deviation of the noise on the released smallest eigenvalue
        of the unit-scale ``V`` (``alpha="auto"`` in ``fit``), else ``None``.
    eigenvalue_sensitivity_ : float or None
        Replace-one sensitivity of that eigenvalue (``R^2`` of the unit-scale
        rows plus a rounding margin), else ``None``.
    t_ : int
        Samples the released model is fitted on (those of ``fit`` and of the
        stream that continued from it).
    noise_scale_ : float
        Standard deviation of the noise on each coordinate of the packed
        statistics (of the unit-scale rows ``x / data_norm_`` and targets
        ``y / y_bound_``); for a stream, of each noised value of its mechanism (per
        step of a factorization, per tree node, the current epoch's for an
        epoch tree).
    sensitivity_ : float
        Joint replace-one L2 sensitivity of one record's ``(v v^T, y v)`` in
        the unit scale (rows of norm at most ``sqrt(1 + (intercept_scaling_ /
        data_norm_)**2)``, targets in ``[-1, 1]``).
    data_norm_ : float
        The row bound in use: ``data_norm``, or its private resolution when
        ``data_norm="auto"`` (released, covered by ``privacy_``).
    y_bound_ : float
        The target bound in use: ``y_bound``, or its private resolution when
        ``y_bound="auto"`` (released, covered by ``privacy_``).
    prefix_sums_ : str or None
        The stream's mechanism (``"blt"``, ``"dense"``, ``"sqrt"``, ``"tree"``
        or ``"honaker"``, ``"auto"`` resolved), ``None`` after ``fit``.
    max_calls_ : int or None
        The number of ``partial_fit`` calls the stream is calibrated for and
        may make, fixed at its first call: ``max_calls``, or
        ``ceil(horizon / n)`` for a factorization (``n`` the first batch's
        size); ``None`` when nothing limits the calls but the samples (a tree
        without ``max_calls``, ``horizon=None``) and after ``fit``.
    privacy_ : PrivacyGuarantee
        The guarantee covering what has been released.

    See Also
    --------
    sklearn.linear_model.Ridge : The non-private ridge regression.
    PrivateMirrorDescentRegressor : Regression on a constraint set, other losses.
    PrivateFrankWolfeLasso : Sparse regression on an L1 ball.

    Notes
    -----
    Privacy is per record under replace-one neighbours. ``fit`` is one
    ``(epsilon, delta)``-DP release of the noisy statistics. All the releases
    of a ``partial_fit`` stream, every model after every call, are jointly
    ``(epsilon, delta)``-DP for the stream's records: they are post-processing
    of the mechanism's noisy values (``C x + z`` of a factorization, whose
    sensitivity is the largest column norm of ``C``; the tree nodes, of which a
    record lies in at most ``horizon.bit_length()``). A stream after
    ``fit`` adds to the *released* statistics of ``fit``, whose records pay
    nothing more. Noise can make ``t alpha I + V`` indefinite; the solve clips
    the eigenvalues of the noisy ``V`` into ``[0, t R^2]``, where the exact one
    lies (a projection, so it can only help), raises those below the noise's
    own spectral norm to that level (directions the noise hides), and never
    returns NaN or inf.
    Derivations are in ``doc/privacy.md``, section 3 and "Matrix-factorization
    continual release".

    References
    ----------
    P. Jain, P. Kothari and A. Thakurta. Differentially private online learning.
    COLT 2012.
    T.-H. H. Chan, E. Shi and D. Song. Private and continual release of
    statistics. ACM TISSEC 2011.
    J. Honaker. Efficient use of differentially private binary trees. 2015.
    K. Dvijotham, H. B. McMahan, K. Pillutla, T. Steinke and A. Thakurta.
    Efficient and near-optimal noise generation for streaming differential
    privacy. FOCS 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(50_000, 3)) / np.sqrt(3)
    >>> y = np.clip(X @ [0.5, -0.3, 0.2] + 0.05 * rng.standard_normal(50_000), -1, 1)
    >>> reg = PrivateQFTLRegressor(epsilon=1.0, random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [DELTA_CONSTRAINT],
        "alpha": [POSITIVE, StrOptions({"auto"})],
        "data_norm": [POSITIVE, StrOptions({"auto"}), None],
        "y_bound": [POSITIVE, StrOptions({"auto"}), None],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [POSITIVE, StrOptions({"auto"})],
        "horizon": [HORIZON_CONSTRAINT, None],
        "max_calls": [HORIZON_CONSTRAINT, None],
        "prefix_sums": [StrOptions({"auto", "blt", "sqrt", "dense", "tree", "honaker"})],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "delta", "alpha", "data_norm", "y_bound", "fit_intercept",
        "intercept_scaling", "horizon", "max_calls", "prefix_sums",
    )
    _DEFAULT_BOUNDS = ("data_norm", "y_bound")
    # The exact sums inside the tree and the generator are never released.
    _private_state = ("_stream", "_rng")

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        alpha="auto",
        data_norm=None,
        y_bound=None,
        fit_intercept=True,
        intercept_scaling="auto",
        horizon=None,
        max_calls=None,
        prefix_sums="auto",
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.horizon = horizon
        self.max_calls = max_calls
        self.prefix_sums = prefix_sums
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Noise calibrated for privacy costs accuracy on the checks' tiny data.
        tags.regressor_tags.poor_score = True
        tags.input_tags.sparse = True  # CSR statistics; other formats converted
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_weight=None):
        """Release the noisy statistics of ``(X, y)`` once and fit the ridge model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``. Sparse input is
            used as CSR, never densified.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``[-y_bound, y_bound]`` (``y_bound_``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]``: record ``i`` contributes
            ``w_i (v v^T, y v)`` to the statistics, at the same sensitivity
            (``doc/privacy.md``, "Sparse input and sample weights"). The
            penalty stays ``n_samples * alpha``. Weights outside ``[0, 1]``
            raise ``ValueError``. With a dask array ``X``, a NumPy array of
            weights, folded into the sums reduced on the workers.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._warn_default_bounds()
        return self._release_fit(X, y, reset=("_released_statistics", "_stream",
                                              "_stream_releases", "_rounding_cleared"),
                                 sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, sample_weight=None):
        """Add a batch to the stream and release the updated model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch of the stream; rows are clipped to ``data_norm``. Sparse
            input is used as CSR, never densified.
        y : array-like of shape (n_samples,)
            Targets of the batch.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]``, as in :meth:`fit`.

        Returns
        -------
        self : object
            The estimator, with the new release in ``coef_`` and ``intercept_``.
        """
        return self._release_stream_batch(X, y, sample_weight=sample_weight)

    def _partial_fit(self, X, y, *, fitting, sample_weight=None):
        first_call = "_released_statistics" not in self.__dict__
        if not fitting:
            self._check_statistics_format()   # public, before anything is read
        if fitting and is_dask_array(X):  # sums reduced on the workers, noise added here
            if len(X.shape) == 2:   # public: a shape (dask_statistics checks the rest)
                qftl.check_dimension(int(X.shape[1]) + bool(self.fit_intercept))
            if self._any_auto_bound():
                raise ValueError(
                    "fit on a dask array takes neither data_norm='auto' nor "
                    "y_bound='auto'; pass public bounds, or compute X first.")
            stats = dask_statistics(self, X, y, sample_weight)
            self._set_bounds()
        else:
            # A later call of a stream on plain float64 arrays: the same checks, minus
            # the conversions that would do nothing (validated_stream_batch).
            checked = (None if fitting or first_call or sample_weight is not None
                       else validated_stream_batch(self, X, y))
            if checked is not None:
                X, y = checked
            else:
                X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                     accept_sparse="csr", reset=first_call)
                qftl.check_dimension(X.shape[1] + bool(self.fit_intercept))  # public
                X = canonical_csr(X)
                y = _as_float64_targets(y)
                sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
            if not fitting:
                self._check_stream_rounding(X.shape[0])  # public: the shapes
            if fitting:
                self._forget_auto_bounds()
                self._check_auto_bounds_public(X.shape[0])
                self._mark_data_read()  # failures from here on are charged
                self._resolve_auto_bounds(X, y)
            elif self._unresolved_auto_bounds():
                # A stream's first call resolves the bounds from its first batch.
                self._check_auto_bounds_public(X.shape[0])
                self._check_rows_left(0, X.shape[0])     # public: refused, and refunded
                self._mark_data_read()  # failures from here on are charged
                self._resolve_auto_bounds(X, y, stream=True)
            self._resolve_intercept(X.shape[0], fitting)   # public: shapes, parameters
            self._set_bounds()
            if not fitting:
                # The stream's public checks (shapes) before its rows are read: the
                # statistics below clip them (doc/privacy.md 57.1).
                stream = self._stream_to_advance(
                    qftl.packed_dim(X.shape[1] + bool(self.fit_intercept)), X.shape[0])
                self._check_horizon_left(stream, X.shape[0])  # public: the shapes
                self._mark_data_read()  # failures from here on are charged
            stats = self._statistics(X, y, sample_weight)
        eigenvalue_noise = eigenvalue_sensitivity = None
        if fitting:
            # mu of the statistics (after the "auto" bounds' shares of epsilon, if any)
            mu = self._budget_split()[2]
            adassp = self.alpha == "auto"
            fit_sensitivity, sigma = self._fit_noise(stats.n_rows, self._row_bound())
            summed = stats.sum(0, stats.n_rows)
            statistics = gaussian_release(summed, sigma, self._rng)
            if adassp:
                # lambda_min moves by R^2, a record's own bound: term ratio 1.
                eigenvalue_sensitivity = qftl.min_eigenvalue_sensitivity(
                    self._row_bound(), stats.n_rows) * sum_rounding_factor(stats.n_rows, 1.0)
                eigenvalue_noise = (
                    0.0 if math.isinf(mu)
                    else eigenvalue_sensitivity / (mu * math.sqrt(qftl.EIGENVALUE_SHARE)))
                self._set_alpha(self._adassp_alpha(summed, stats, eigenvalue_noise, sigma))
            else:
                self._set_alpha(None)
            self._base_statistics, self._base_samples = statistics, stats.n_rows
            self._base_alpha = self._alpha_unit   # a stream continuing this fit keeps it
            self._base_variance = sigma * sigma
            self._stream = None
            n_samples, spent_fraction = stats.n_rows, 1.0
            noise_std = sigma
        else:
            mu = stream.mu
            # Per-release work (a batch's gram, the mechanism's buffers): one BLAS
            # thread, so competing processes cannot make it collapse; work too
            # small for BLAS to thread skips the context (it costs ~30 us).
            with _one_blas_thread(stats):
                statistics = self._base_statistics + stream.advance(stats, self._rng)
                n_samples = self._base_samples + stream.n_rows
                noise_std = math.sqrt(self._base_variance + stream.current_variance())
                # Public: counts and the release's stated noise level.
                self._set_alpha(self._stream_alpha(n_samples, stats.dim_features, noise_std))
                self._publish(statistics, n_samples, stats.dim_features, noise_std,
                              fresh=True)
            self._stream_max_rows = self._stream_rows_so_far(stats.n_rows)
            self._stream = stream
            self.max_calls_ = self._stream_call_limit   # public, fixed at the first call
            sigma, spent_fraction = stream.sigma, stream.spent_fraction()
        if fitting:
            self._publish(statistics, n_samples, stats.dim_features, noise_std)
        self.noise_scale_ = float(sigma)
        self.sensitivity_ = fit_sensitivity if fitting else self.sensitivity()
        if fitting:
            self.eigenvalue_noise_scale_ = eigenvalue_noise
            self.eigenvalue_sensitivity_ = eigenvalue_sensitivity
        self.prefix_sums_ = None if fitting else stream.name
        if fitting:
            self.max_calls_ = None
        self.privacy_ = self._guarantee(mu, spent_fraction, fitting)

    def _fit_noise(self, n_rows, row_bound):
        """``(sensitivity, sigma)`` of ``fit``'s statistics for rows of unit-scale norm ``row_bound``.

        Public: the count, the bound and the budget. The statistics sum
        ``n_rows`` records in float64: section 54.8's allowance (a record's
        packed atom is at most ``1/sqrt(2)`` of the joint sensitivity); AdaSSP
        (``alpha="auto"``) splits ``mu^2`` between the eigenvalue and the
        statistics.
        """
        mu = self._budget_split()[2]
        mu_stats = mu * math.sqrt(1.0 - qftl.EIGENVALUE_SHARE) if self.alpha == "auto" else mu
        sensitivity = self._sensitivity_at(row_bound) * sum_rounding_factor(
            n_rows, qftl.ATOM_NORM_FRACTION)
        return sensitivity, (0.0 if math.isinf(mu) else sensitivity / mu_stats)

    def _resolve_intercept(self, n_rows, fitting):
        """Fix the constant feature of ``intercept_scaling="auto"`` (``_intercept_unit``).

        From public values only (``doc/privacy.md`` 56.4): ``fit`` reads its row
        count ``n_rows`` (a shape) and the noise its statistics would get at
        ``c = 1``; a new stream with a ``horizon`` reads the horizon and the
        noise of its mechanism's last release at ``c = 1``; a stream with
        ``horizon=None`` takes the minimax over its unknown length
        (:meth:`_unbounded_unit_intercept`). The feature is inside the released
        statistics, so a stream (and a stream continuing a ``fit``) keeps the
        value it started with. Called before the statistics are computed.
        """
        if not self.fit_intercept or not isinstance(self.intercept_scaling, str):
            self.__dict__.pop("_intercept_unit", None)
            return
        n_features = self.n_features_in_
        if fitting:
            noise = self._fit_noise(n_rows, _SQRT2)[1]
            unit = auto_unit_intercept(noise, n_rows, n_features)
        elif (self.__dict__.get("_stream") is not None
              or getattr(self, "_base_samples", 0) > 0):
            return          # the stream's own value, or the fit's it continues
        elif self.horizon is None:
            unit = self._unbounded_unit_intercept(n_rows, n_features)
        else:
            mechanism = self._mechanism_at_unit_feature(
                calibration_horizon(self.prefix_sums, self.horizon, n_rows, self.max_calls), n_rows, n_features)
            noise = (0.0 if mechanism is None
                     else math.sqrt(mechanism.prefix_variance(mechanism.horizon)))
            unit = auto_unit_intercept(noise, self.horizon, n_features)
        self._intercept_unit = unit

    def _mechanism_at_unit_feature(self, steps, n_rows, n_features):
        """The stream mechanism this stream would build, calibrated at ``c = 1`` (public).

        ``None`` without noise (``epsilon=inf``). Its release variances set the
        constant feature of ``intercept_scaling="auto"`` (56.4, 56.9).
        """
        mu = self._budget_split()[2]
        if math.isinf(mu):
            return None
        dim = qftl.packed_dim(n_features + 1)
        return make_stream_mechanism(
            resolve_mechanism(self.prefix_sums, steps, first_rows=n_rows, dim=dim),
            dim=dim, sensitivity=self._sensitivity_at(_SQRT2), mu=mu, horizon=steps)

    def _unbounded_unit_intercept(self, n_rows, n_features):
        """``c`` of an unbounded stream (``horizon=None``): minimax over its length.

        The stream's length is unknown, so the rule of 56.4 is taken at one call
        and at 128 calls (the unbounded mechanism's design length, section 38;
        ``n_rows`` rows a call, the first batch's: a shape) with the mechanism's
        own release noise at ``c = 1``, and ``c^2`` is the geometric mean of the
        two: under 56.4's cost model ``a rho / c^2 + b c^2`` the ratio to the
        optimum is ``(x + 1/x) / 2`` with ``x`` the ratio of ``c^2`` to the
        optimum's, so the geometric mean of the extremes minimises the worst ratio
        over every length between them (``doc/privacy.md`` 56.9). Public values only.
        """
        from .._core.matrix_factorization import DENSE_MAX_STEPS

        mechanism = self._mechanism_at_unit_feature(None, n_rows, n_features)
        if mechanism is None:
            return 1.0
        per_call = n_rows if mechanism.name in ("tree", "honaker") else 1   # trees count rows
        units = [auto_unit_intercept(math.sqrt(mechanism.prefix_variance(calls * per_call)),
                                     calls * n_rows, n_features)
                 for calls in (1, DENSE_MAX_STEPS)]
        return math.sqrt(units[0] * units[1])

    def _set_bounds(self):
        """The bounds in use as fitted attributes (public, or released quantiles)."""
        self.data_norm_, self.y_bound_ = self._data_norm(), self._y_bound()
        self.intercept_scaling_ = _intercept_value(self)

    def _prediction_bound(self):
        """Predictions are clipped to ``[-y_bound_, y_bound_]`` (``doc/privacy.md`` 56.7).

        Every training target was clipped there, so the clip is post-processing of
        the release with a public (or, for ``y_bound="auto"``, released) constant;
        it bounds the damage of a model whose statistics are mostly noise (an
        ``"auto"`` bound at the bottom of its grid scales predictions by
        ``y_bound_ / data_norm_``).
        """
        return float(self.y_bound_)

    def _set_alpha(self, alpha_unit):
        """``alpha_`` (units of ``X``) from the unit-scale ridge; ``None``: the parameter.

        The solve reads ``_alpha_unit``, the penalty of the unit-scale problem:
        rows ``x / s`` and targets ``y / b`` turn ``1/2 (y - w^T x)^2 + alpha/2
        ||w||^2`` into ``b^2`` times the same loss of ``w' = w s / b`` with
        ``alpha / s^2`` (``doc/privacy.md``, "Unit-free defaults of IGD and QFTL").
        """
        s = self._data_norm()
        if alpha_unit is None:
            self.alpha_ = float(self.alpha)
            self._alpha_unit = self.alpha_ if s == 1.0 else self.alpha_ / (s * s)
        else:
            self._alpha_unit = float(alpha_unit)
            self.alpha_ = self._alpha_unit if s == 1.0 else self._alpha_unit * (s * s)

    def _adassp_alpha(self, summed, stats, eigenvalue_noise, statistics_noise):
        """Unit-scale ``alpha`` from AdaSSP: one Gaussian release of ``lambda_min(V)``, then public maths.

        The only read of the data is :func:`~sklearn_dpol._core.qftl.min_eigenvalue`,
        released through ``gaussian_release``; the rule itself
        (:func:`~sklearn_dpol._core.qftl.adassp_ridge`) sees the released value
        and public quantities only.
        """
        released = gaussian_release(
            np.array([qftl.min_eigenvalue(summed, stats.dim_features)]),
            eigenvalue_noise, self._rng)
        lam = qftl.adassp_ridge(float(released[0]), stats.dim_features, eigenvalue_noise,
                                statistics_noise, float(self.delta))
        return self._alpha_floored(lam / stats.n_rows)

    def _alpha_floored(self, alpha):
        bound = self._row_bound()
        return max(float(alpha), qftl.ALPHA_FLOOR * bound * bound)

    def _stream_alpha(self, n_samples, n_augmented, noise_std):
        """A release's unit-scale ``alpha`` in a stream (``None``: the parameter), the ``fit``'s, or public.

        With ``alpha="auto"`` and no ``fit`` before, AdaSSP's ridge with the
        smallest eigenvalue taken as 0 (its worst case, so nothing is released
        about it): ``SPECTRAL_FRACTION * sigma_t * sqrt(d log(2 d^2 / rho))``
        for this release's stated noise standard deviation ``sigma_t`` on
        ``V``, per sample. Every input is public (counts, the mechanism's
        calibration), so the rule costs no budget (``doc/privacy.md``, "QFTL
        streams calibrated on calls").
        """
        if self.alpha != "auto":
            return None
        if getattr(self, "_base_samples", 0) > 0 and getattr(self, "_base_alpha", None):
            return self._base_alpha   # released by the fit the stream continues
        lam = qftl.adassp_ridge(0.0, n_augmented, 0.0, noise_std, float(self.delta))
        return self._alpha_floored(lam / max(int(n_samples), 1))

    def sensitivity(self):
        """Joint replace-one L2 sensitivity of one record's packed ``(v v^T, y v)``.

        Returns
        -------
        sensitivity : float
            The bound of ``doc/privacy.md`` section 3.1 for the unit-scale
            statistics: rows clipped to ``data_norm`` and divided by it (with
            the intercept feature ``intercept_scaling_ / data_norm_``), targets
            clipped to ``y_bound`` and divided by it (``"auto"``: the resolved
            bounds), so ``R = sqrt(1 + (intercept_scaling_ / data_norm_)**2)``
            and ``B = 1``; with a margin of ``1e-9`` relative for rounding.
        """
        return self._sensitivity_at(self._row_bound())

    @staticmethod
    def _sensitivity_at(row_bound):
        """:meth:`sensitivity` for unit-scale rows of norm at most ``row_bound`` (``B = 1``)."""
        # Clipping rounds: a clipped row's norm can exceed data_norm by a few
        # ulps, so the bound carries a margin far above that and far below
        # anything that matters for the noise.
        return qftl.joint_sensitivity(row_bound, 1.0) * (1 + 1e-9)

    def _row_bound(self, worst=False):
        """``R`` of the unit-scale rows: ``sqrt(1 + (intercept / data_norm)^2)``.

        ``worst``: for ``intercept_scaling="auto"``, the largest value its rule
        can resolve to (``c = 1``), for checks made before it is resolved.
        """
        intercept = _unit_intercept(self)
        if intercept is None:
            return 1.0
        if worst and isinstance(self.intercept_scaling, str):
            return _SQRT2
        return losses.norm_bound(1.0, intercept)

    # -- data_norm="auto", y_bound="auto": private quantiles (``_auto_bounds.py``) --------
    _auto_bound_params = ("data_norm", "y_bound")

    def _more_validate_params(self):
        check_max_calls(self)
        bound, y_bound = self._row_bound(worst=True), self._y_bound()
        data_norm = self._data_norm()
        if min(data_norm, y_bound) < 1e-100:
            raise ValueError(
                f"data_norm={self.data_norm!r} and y_bound={self.y_bound!r} must be at least "
                "1e-100: near the bottom of the floating-point range, clipping cannot hold "
                "rows to the bound. Rescale X and y by public constants instead."
            )
        # The unit-scale problem (statistics, sensitivity, ridge: R = bound, B = 1)...
        alpha = (self._alpha_floored(0.0) if self.alpha == "auto"
                 else float(self.alpha) / (data_norm * data_norm))
        unit_ok = self._sensitivity_at(bound) < 1e150 and alpha > 0.0 and bound / alpha < 1e300
        # ... and the same problem in the units of X and y (alpha_, coef_ and
        # intercept_ are released in them): the refusals of the bounds before the
        # statistics were computed in the unit scale, kept.
        row_bound = bound * data_norm
        alpha = alpha * (data_norm * data_norm) if self.alpha == "auto" else float(self.alpha)
        units_ok = (qftl.joint_sensitivity(row_bound, y_bound) < 1e150
                    and row_bound * y_bound / alpha < 1e300)
        if not (unit_ok and units_ok):
            raise ValueError(
                f"data_norm={self.data_norm!r}, intercept_scaling, y_bound={self.y_bound!r} "
                f"and alpha={self.alpha!r} give statistics or coefficients that overflow "
                "floating point. Rescale X and y by public bounds so that data_norm and "
                "y_bound are at most about 1e37, and keep "
                "sqrt(data_norm**2 + intercept_scaling**2) * y_bound / alpha below 1e300."
            )


    def _privacy_spec(self, X=None, *, fitting=True, **_):
        """``mu*(epsilon, delta)``, for ``fit`` (one release) or a stream (continual).

        AdaSSP (``alpha="auto"``, ``fit``) splits ``mu^2`` between the
        statistics and ``lambda_min(V)``: GDP parts composing to ``mu*``.
        ``data_norm="auto"`` first spends ``AUTO_DATA_NORM_SHARE`` of
        ``epsilon`` on a private quantile of the row norms: basic composition
        with the Gaussian parts at ``(epsilon - epsilon_q, delta)``, not GDP.
        ``y_bound="auto"`` likewise spends ``AUTO_Y_BOUND_SHARE`` on a private
        quantile of ``|y|``; with both, ``epsilon_q`` is the sum of the two
        shares and the quantiles are two parts of the basic composition.
        Its selection ``rho`` stays ``mu*(epsilon, delta)^2 / 2``, which covers
        the parts' zCDP sum (``epsilon_q^2/8 + mu^2/2``) up to ``epsilon`` near
        40; above, the sum (``doc/privacy.md``, "The privacy spec").
        """
        eps_q, eps_main, mu = self._budget_split()
        regime = stream_regime(fitting)
        statistics = ("the packed statistics (V, u)" if fitting
                      else "the prefix sums of the packed statistics (V, u)")
        if fitting and self.alpha == "auto":
            share = qftl.EIGENVALUE_SHARE
            gaussian = (Part.gaussian(statistics, mu * math.sqrt(1.0 - share)),
                        Part.gaussian("lambda_min(V) (AdaSSP)", mu * math.sqrt(share)))
        else:
            gaussian = (Part.gaussian(statistics, mu),)
        if not self._any_auto_bound():
            return gaussian_spec(self.epsilon, self.delta, regime, horizon=self.horizon,
                                 parts=gaussian if len(gaussian) > 1 else ())
        return self._spec_with_quantiles(regime, gaussian, horizon=self.horizon)

    def _statistics(self, X, y, sample_weight=None):
        """The batch's statistics: rows clipped to ``data_norm_``, targets to ``y_bound_``.

        A CSR ``X`` stays sparse: its row norms come from the stored entries. A
        dense ``X`` is clipped block by block as it is summed (no clipped copy).
        """
        data_norm, y_bound = self._data_norm(), self._y_bound()
        scale, _ = clip_row_scales(X, data_norm)
        # The unit scale (doc/privacy.md, "Unit-free defaults of IGD and QFTL"): each
        # clipped row divided by data_norm, each clipped target by y_bound. Reads only
        # public parameters (and the resolved bounds), as the dask workers' copy does.
        intercept = _unit_intercept(self)
        if data_norm != 1.0:
            scale = scale / data_norm
        targets = np.clip(y, -y_bound, y_bound)
        if y_bound != 1.0:
            targets /= y_bound
        if issparse(X):
            return qftl.PackedStatistics(X.multiply(scale[:, np.newaxis]).tocsr(), targets,
                                         intercept, sample_weight)
        return qftl.PackedStatistics(X, targets, intercept, sample_weight, row_scale=scale)

    def _stream_to_advance(self, dim, n_rows):
        """A copy of the stream to advance (so a failed call changes nothing), or a new one.

        ``n_rows`` is the batch's size: a new stream's first batch, public (a
        shape). A factorization is calibrated on calls,
        ``ceil(horizon / n_rows)`` steps; a tree on ``horizon`` rows
        (:func:`~sklearn_dpol.privacy._streams.calibration_horizon`).
        """
        if getattr(self, "_stream", None) is not None:
            return self._stream.snapshot()
        if not hasattr(self, "_base_statistics"):
            self._base_statistics, self._base_samples, self._base_variance = np.zeros(dim), 0, 0.0
        steps = calibration_horizon(self.prefix_sums, self.horizon, n_rows, self.max_calls)
        self._stream_first_batch = int(n_rows)   # public (a shape), for the error message
        # The calls this stream may make (public): max_calls, or the factorization's steps.
        self._stream_call_limit = (
            self.max_calls if steps is None or self.max_calls is not None
            or resolve_mechanism(self.prefix_sums) in ("tree", "honaker") else steps)
        return make_stream_mechanism(
            resolve_mechanism(self.prefix_sums, steps, first_rows=n_rows, dim=dim), dim=dim,
            sensitivity=self.sensitivity(), mu=self._budget_split()[2], horizon=steps,
        )

    def _stream_rows_so_far(self, n_rows):
        """Largest batch of the stream, this one of ``n_rows`` included (public: shapes)."""
        previous = (getattr(self, "_stream_max_rows", 0)
                    if getattr(self, "_stream", None) is not None else 0)
        return max(int(previous), int(n_rows))

    def _check_stream_rounding(self, n_rows):
        """Refuse, before reading any data (public shapes), a call past the rounding allowance.

        The stream layer's one check
        (:func:`~sklearn_dpol.privacy._streams.check_rounding`): the call's
        index, the largest batch so far and the packed dimension, with every
        coordinate of a record's packed atom at most
        ``qftl.ATOM_COORDINATE_FRACTION`` of the sensitivity. A stream's first
        call checks the mechanism it would build (the check reads neither
        the sensitivity nor ``mu``, so a resolved ``data_norm="auto"`` is not
        needed).
        """
        stream = getattr(self, "_stream", None)
        max_rows = self._stream_rows_so_far(n_rows)
        cleared = self.__dict__.get("_rounding_cleared")
        if (stream is not None and cleared is not None and stream.t + 1 <= cleared[0]
                and max_rows <= cleared[1]):
            return   # within a call index and batch size already checked (see below)
        dim = qftl.packed_dim(self.n_features_in_ + bool(self.fit_intercept))
        if stream is None:
            calls = calibration_horizon(self.prefix_sums, self.horizon, n_rows, self.max_calls)
            stream = make_stream_mechanism(
                resolve_mechanism(self.prefix_sums, calls, first_rows=n_rows, dim=dim), dim=dim,
                sensitivity=1.0, mu=1.0,
                horizon=calls)
        steps = stream.t + 1
        check_rounding(stream, steps, max_rows, qftl.ATOM_COORDINATE_FRACTION,
                       norm_fraction=qftl.ATOM_NORM_FRACTION,
                       advice="call fit to start a new stream" + (
                           "" if stream.granularity == "row" else ", or prefix_sums='tree'"))
        # The worst-case ratio grows with the call index and the batch size (a
        # rounding bound of more, larger steps), so a check that passes at twice
        # this index clears every call up to it with batches up to max_rows:
        # log2(calls) checks per stream instead of one per call.
        ahead = steps * 2 if stream.horizon is None else max(min(steps * 2, stream.horizon),
                                                             steps)
        try:
            check_rounding(stream, ahead, max_rows, qftl.ATOM_COORDINATE_FRACTION,
                           norm_fraction=qftl.ATOM_NORM_FRACTION)
        except ValueError:
            ahead = steps
        self._rounding_cleared = (ahead, max_rows)

    def _check_horizon_left(self, stream, n_rows):
        """Refuse, from public shapes only and before any data is read, a call past the calibration."""
        self._check_rows_left(stream.n_rows, n_rows)
        limit = getattr(self, "_stream_call_limit", None)
        calls = (getattr(self, "_stream_releases", 0)
                 if getattr(self, "_stream", None) is not None else 0)
        if (stream.granularity == "step" and stream.horizon is not None
                and stream.t + 1 > stream.horizon) or (limit is not None and calls + 1 > limit):
            limit = stream.horizon if limit is None else limit
            if stream.granularity == "row":
                raise ValueError(
                    f"This would be call {calls + 1} of a stream declared with "
                    f"max_calls={self.max_calls} (prefix_sums={self.prefix_sums!r} is "
                    "calibrated on samples; max_calls caps its calls). Call fit to start a "
                    "new stream, or pass a larger max_calls (or None) next time.")
            if self.max_calls is not None:
                why = f"max_calls={self.max_calls}"
            else:
                why = (f"max_calls=None: ceil(horizon / first batch size) with "
                       f"horizon={self.horizon} and a first batch of "
                       f"{getattr(self, '_stream_first_batch', '?')} samples")
            raise ValueError(
                f"This would be call {calls + 1} of a stream whose noise was calibrated "
                f"for {limit} calls ({why}; prefix_sums={self.prefix_sums!r} takes one "
                "step per call; max_calls_ states it from the first call). Call fit to "
                "start a new stream; next time pass max_calls (the number of partial_fit "
                "calls you will make) when batch sizes vary, keep later batches at least "
                "as large as the first, or use prefix_sums='tree' (calibrated on samples) "
                "or horizon=None."
            )

    def _check_rows_left(self, rows_so_far, n_rows):
        """Refuse a batch that takes the stream past ``horizon`` samples (public counts)."""
        if self.horizon is not None and rows_so_far + n_rows > self.horizon:
            raise ValueError(
                f"This batch of {n_rows} samples would take the stream to "
                f"{rows_so_far + n_rows} samples, past horizon={self.horizon}: the noise "
                "was calibrated for at most horizon samples. Call fit to start a new "
                "stream, or use horizon=None for streams of unknown length."
            )

    def _publish(self, statistics, n_samples, n_augmented, noise_std, fresh=False):
        """Store the released statistics; the model is solved from them when read.

        The ridge model is post-processing of the released statistics, so a
        release costs ``O(d^2)`` (storing them) and the ``O(d^3)`` solve runs
        once per release actually read, through ``coef_``, ``intercept_`` or
        ``predict`` (:meth:`_released_model`).
        """
        # ``fresh``: a new float64 array nothing else holds (a stream's sum), kept as is.
        self._released_statistics = (statistics if fresh
                                     else np.array(statistics, dtype=np.float64))
        # Everything the solve reads, as of this release (a later set_params
        # must not change a released model): the unit-scale problem (alpha, R, B = 1),
        # then the factors taking its weights to the units of X and y (public).
        intercept = _unit_intercept(self)
        data_norm, y_bound = self._data_norm(), self._y_bound()
        self._released_solve = (
            int(n_samples), int(n_augmented), float(noise_std), float(self._alpha_unit),
            self._row_bound(), 1.0, self.n_features_in_,
            None if intercept is None else intercept * y_bound,
            1.0 if y_bound == data_norm else y_bound / data_norm,
        )
        self.t_ = int(n_samples)
        self._statistics_format = STATISTICS_FORMAT

    def _check_statistics_format(self):
        """Refuse statistics released by an older version (a pickle): before session 30 they
        were in the units of X and y, and a stream's noise was calibrated on that scale's
        sensitivity, which the unit-scale rows of this version can exceed (section 54.14).
        Public: a property of the object, checked before anything is read."""
        if (self.__dict__.get("_released_statistics") is not None
                and self.__dict__.get("_statistics_format") != STATISTICS_FORMAT):
            raise ValueError(
                "This PrivateQFTLRegressor was fitted by an older version of sklearn_dpol "
                "(statistics in the units of X and y; this version keeps them in the unit "
                "scale of the public bounds). Its stream cannot continue and its model "
                "cannot be solved here: call fit to start afresh.")

    def _released_model(self):
        """``(coef, intercept)`` of the released statistics, solved once per release.

        The cache lives outside the estimator's ``__dict__`` (so reading a
        model changes no attribute, and a copy or a pickle never carries a
        stale solve), keyed on the identity of the released array, which
        every release replaces.
        """
        statistics = self.__dict__.get("_released_statistics")
        if statistics is None:
            raise AttributeError(
                f"{type(self).__name__} has no released model yet: call fit or partial_fit."
            )
        self._check_statistics_format()
        cached = _MODEL_CACHE.get(self)
        if cached is not None and cached[0] is statistics:
            return cached[1], cached[2]
        # The previous solve's Ritz vectors (post-processing of an earlier
        # release) warm-start this one; a stale hint costs time, never the model.
        warm = {} if cached is None else cached[3]
        (n_samples, n_augmented, noise_std, alpha, row_bound, y_bound, n_features,
         intercept_scaling, coef_scaling) = self._released_solve
        # V_hat lives in a reused work array: the solve is done with it on return.
        V_hat, u_hat = qftl.unpack(statistics, n_augmented, scratch=True)
        with single_blas_thread():   # a (d+1) x (d+1) eigh: one thread is fastest
            weights = qftl.ridge_from_statistics(
                V_hat, u_hat, n_samples, alpha, row_bound, y_bound, noise_std, warm=warm,
            )
        coef = (weights[:n_features].copy() if coef_scaling == 1.0
                else weights[:n_features] * coef_scaling)
        intercept = (
            0.0 if intercept_scaling is None else float(weights[n_features] * intercept_scaling)
        )
        _MODEL_CACHE[self] = (statistics, coef, intercept, warm)
        return coef, intercept

    @property
    def coef_(self):
        """Released weights, shape ``(n_features,)`` (solved from the released statistics)."""
        return self._released_model()[0]

    @property
    def intercept_(self):
        """Released intercept; 0.0 when ``fit_intercept=False``."""
        return self._released_model()[1]

    def _stream_spec(self):
        """:meth:`_privacy_spec` of the stream, built once per set of the parameters it reads.

        A stream's parameters are frozen (checked on every call before this), so
        the spec is the same object call after call.
        """
        key = (self.epsilon, self.delta, self.data_norm, self.y_bound, self.horizon,
               self.alpha)
        cached = self.__dict__.get("_stream_spec_cache")
        if cached is not None and _same_params(cached[0], key):
            return cached[1]
        spec = self._privacy_spec(fitting=False)
        self._stream_spec_cache = (key, spec)
        return spec

    def _guarantee(self, mu, spent_fraction, fitting):
        """``privacy_`` from :meth:`_privacy_spec` (``mu``: the calibration's, the spec's)."""
        spec = self._stream_spec() if not fitting else self._privacy_spec(fitting=True)
        private = not math.isinf(mu)
        if fitting:
            released = (
                "coef_ and intercept_, computed from one release of the noisy "
                "sufficient statistics (V, u)"
            )
            n_releases, n_records = 1, self._base_samples
            mechanism = "analytic Gaussian on the packed (V, u), joint sensitivity"
            if self.alpha == "auto":
                share = qftl.EIGENVALUE_SHARE
                mechanism = (
                    f"AdaSSP: Gaussian release of the packed (V, u) (joint sensitivity, "
                    f"mu*sqrt({1 - share:g})) and of lambda_min(V) (sensitivity R^2, "
                    f"mu*sqrt({share:g})), composing to mu*")
            if self._any_auto_bound():
                mechanism += self._quantile_mechanisms(fitting=True)
        else:
            released = (
                "coef_ and intercept_ after every partial_fit call, computed from the "
                "noisy prefix sums of (V, u) released by the stream mechanism"
            )
            n_releases = getattr(self, "_stream_releases", 0) + 1
            self._stream_releases = n_releases
            n_records = self._stream.n_rows
            mechanism = "Gaussian continual release of (V, u): " + self._stream.describe()
        if not private:
            mechanism = "none: epsilon=inf adds no noise"
        if self._any_auto_bound():
            released += self._quantile_released()
            if not fitting:
                mechanism += self._quantile_mechanisms(fitting=False)
        return spec.guarantee(
            mechanism=mechanism, released=released, n_releases=n_releases,
            n_records=n_records, spent_mu=spec.mu * math.sqrt(spent_fraction),
        )


#: Below this many multiply-adds in a batch's gram (and packed vectors this
#: short), BLAS runs one thread anyway: no thread-limit context.
_SMALL_GRAM = 1 << 16
_SMALL_PACKED = 2304


def _one_blas_thread(stats):
    """:func:`single_blas_thread`, or nothing for a batch too small to thread."""
    d = stats.dim_features
    if stats.n_rows * d * d <= _SMALL_GRAM and stats.dim <= _SMALL_PACKED:
        return contextlib.nullcontext()
    return single_blas_thread()


def _same_params(a, b):
    """Two tuples of scalar parameters equal element by element (type included)."""
    return all(type(x) is type(y) and (x is y or x == y) for x, y in zip(a, b))


#: ``K`` of ``intercept_scaling="auto"`` (:func:`auto_unit_intercept`): ``c^4 = K rho_1``,
#: ``rho_1`` the public noise-to-signal ratio of the intercept's direction at ``c = 1``.
AUTO_INTERCEPT_K = 4.0
#: ... and ``c^2`` at least this: below it the sensitivity gains at most 7% (``R^2 = 1.1``
#: against 1) while the intercept's signal ``n c^2`` keeps shrinking.
AUTO_INTERCEPT_C2_MIN = 0.1
_SQRT2 = math.sqrt(2.0)   # correctly rounded, above the exact sqrt(2): a bound as it is


def auto_unit_intercept(noise_std, n_rows, n_features):
    """``c`` of ``intercept_scaling="auto"``, the constant feature of the unit-scale rows.

    ``c^2 = clip(sqrt(K rho_1), C2_MIN, 1)`` with ``rho_1 = sqrt(2 (d + 1))
    sigma_1 / n``: ``sigma_1`` the standard deviation of the statistics' noise
    at ``c = 1`` (``R = sqrt 2``), ``n`` the rows (of ``fit``, or a stream's
    ``horizon``), ``d`` the features, ``K = AUTO_INTERCEPT_K``, ``C2_MIN =
    AUTO_INTERCEPT_C2_MIN``. The intercept's direction of ``V`` carries
    ``n c^2`` against noise of spectral norm about ``sqrt(2 (d + 1)) sigma``
    (:func:`~sklearn_dpol._core.qftl.noise_spectral_norm`, the solve's
    eigenvalue floor), a ratio ``rho_1 / c^2``; a larger ``c`` raises the row
    bound ``R^2 = 1 + c^2`` and with it the noise on every coordinate. The
    rule balances the two, a cost ``rho_1 / c^2`` against one growing like
    ``c^2`` (minimum at ``c^2`` proportional to ``sqrt(rho_1)``). No noise
    (``epsilon=inf``): 1. Public values only (``doc/privacy.md`` 56.4).
    """
    if not noise_std > 0.0:
        return 1.0
    ratio = qftl.noise_spectral_norm(noise_std, int(n_features) + 1) / max(int(n_rows), 1)
    return math.sqrt(min(max(math.sqrt(AUTO_INTERCEPT_K * ratio), AUTO_INTERCEPT_C2_MIN), 1.0))


def _intercept_value(estimator):
    """The constant feature in the units of ``X``: ``intercept_scaling``, or ``c data_norm_`` for "auto".

    ``None`` without an intercept. Reads public parameters, ``_data_norm()`` and the
    resolved ``c`` of "auto" only (so the dask workers' parameter copy can call it).
    """
    if not estimator.fit_intercept:
        return None
    if isinstance(estimator.intercept_scaling, str):      # "auto"
        unit, data_norm = _unit_intercept(estimator), estimator._data_norm()
        return data_norm if unit == 1.0 else unit * data_norm
    return float(estimator.intercept_scaling)


def _unit_intercept(estimator):
    """The constant feature of the unit-scale rows: ``intercept_scaling_ / data_norm_``.

    For ``intercept_scaling="auto"``, ``c`` as resolved by ``_resolve_intercept``
    (1.0 before: the rule's largest value), no division; exactly 1.0 for equal values.
    """
    if not estimator.fit_intercept:
        return None
    if isinstance(estimator.intercept_scaling, str):      # "auto"
        return float(getattr(estimator, "_intercept_unit", 1.0))
    value, data_norm = float(estimator.intercept_scaling), estimator._data_norm()
    return 1.0 if value == data_norm else value / data_norm


def _as_float64_targets(y):
    """Targets as float64, finite.

    ``validate_data`` converts ``X`` only; a ``longdouble`` ``y`` would make the
    sums, and the noise added to them, extended precision, and the bits below
    float64 precision of a noisy sum would be bits of the exact one.
    """
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(
            "y holds values too large for float64 (they became inf): rescale the "
            "targets by a public constant."
        )
    return y
