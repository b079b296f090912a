"""PrivateQFTLRegressor: private follow-the-leader ridge regression (seed 002, Alg. 4-5)."""

import math

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import validate_data

from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    HORIZON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
    ReleasedLinearRegressorMixin,
    make_generator,
)
from .._core import qftl
from .._core._clip import clip_row_scales
from .._core.noise import gaussian_release
from .._core._threads import single_blas_thread
from .._verbose import reports_release
from ..privacy import PrivacyAccountant, PrivacyCost, PrivacyGuarantee, gaussian_mu
from ..privacy._streams import make_stream_mechanism, resolve_mechanism
from ._dask_fit import dask_statistics, is_dask_array

_NEIGHBOURS = "replace-one"


class PrivateQFTLRegressor(
    ReleasedLinearRegressorMixin, PrivateEstimatorMixin, RegressorMixin, BaseEstimator
):
    """Ridge regression on privately released sufficient statistics, batch or streaming.

    The model after ``t`` samples is follow-the-leader for the quadratic losses
    ``1/2 (y - v^T x)^2 + alpha/2 ||x||^2`` (Jain, Kothari and Thakurta 2012,
    Algorithm 4): ``x = (t alpha I + V_t)^{-1} u_t`` with ``V_t = sum v v^T``
    and ``u_t = sum y v``, i.e. ridge regression with penalty ``t alpha``.
    Only ``(V, u)`` touch the data. ``fit`` releases them once with Gaussian
    noise (sufficient statistics perturbation); a ``partial_fit`` stream
    releases their prefix sums through a continual-release mechanism: by
    default a BLT matrix factorization with one step per call (Dvijotham et
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
    alpha : float, default=1e-2
        Ridge penalty per sample: after ``t`` samples the penalty is
        ``t * alpha / 2 ||x||^2`` (``Ridge(alpha=t * alpha)`` on the augmented
        data). It also bounds how far noise can move the model.
    data_norm : float, default=1.0
        Rows of ``X`` are clipped to this L2 norm. Set it from public knowledge
        of the data, never from the private data.
    y_bound : float, default=1.0
        Targets are clipped to ``[-y_bound, y_bound]``.
    fit_intercept : bool, default=True
        Learn an intercept as the weight of a constant feature equal to
        ``intercept_scaling``. It counts in the row norm:
        ``R = sqrt(data_norm**2 + intercept_scaling**2)``, and it is penalised
        like the other weights, so centre ``y`` by a public value if you can.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    horizon : int or None, default=None
        Samples a ``partial_fit`` stream may contain; running past it raises
        ``ValueError``. A factorization mechanism is calibrated for at most
        ``horizon`` calls (a call has at least one sample), a tree for
        ``horizon.bit_length()`` levels. With ``None`` the guarantee holds for
        a stream of any length, at somewhat more noise.
    prefix_sums : {"auto", "blt", "sqrt", "tree", "honaker"}, default="auto"
        The continual-release mechanism of a stream's prefix sums
        (:func:`~sklearn_dpol.privacy._streams.make_stream_mechanism`).
        ``"blt"``: a buffered linear Toeplitz factorization with 4 buffers, one
        step per ``partial_fit`` call, within 1% of the square-root
        factorization's error and ``O(4 * packed dim)`` memory. ``"sqrt"``: the
        square-root Toeplitz factorization (memory grows with the number of
        calls). ``"tree"`` and ``"honaker"``: the seed's binary tree over
        samples with the plain or Honaker estimator (Honaker costs
        ``O(n_features**2)`` random draws per sample). ``"auto"`` is
        ``"blt"``; the resolved name is ``prefix_sums_``.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise. ``fit`` re-seeds from it; later ``partial_fit`` calls
        keep drawing from one generator.
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
        elapsed time, the noise scale and the guarantee already released),
        never a loss, a norm or any other value of the private iterates or
        the data: printing one would release it outside the guarantee.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released weights.
    intercept_ : float
        Released intercept; 0.0 when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    t_ : int
        Samples the released model is fitted on (those of ``fit`` and of the
        stream that continued from it).
    noise_scale_ : float
        Standard deviation of the noise on each coordinate of the packed
        statistics; for a stream, of each noised value of its mechanism (per
        step of a factorization, per tree node, the current epoch's for an
        epoch tree).
    sensitivity_ : float
        Joint replace-one L2 sensitivity of one record's ``(v v^T, y v)``.
    prefix_sums_ : str or None
        The stream's mechanism (``"blt"``, ``"sqrt"``, ``"tree"`` or
        ``"honaker"``, ``"auto"`` resolved), ``None`` after ``fit``.
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
    >>> reg = PrivateQFTLRegressor(epsilon=1.0, alpha=1e-3, random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [DELTA_CONSTRAINT],
        "alpha": [POSITIVE],
        "data_norm": [POSITIVE],
        "y_bound": [POSITIVE],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [POSITIVE],
        "horizon": [HORIZON_CONSTRAINT, None],
        "prefix_sums": [StrOptions({"auto", "blt", "sqrt", "tree", "honaker"})],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "delta", "alpha", "data_norm", "y_bound", "fit_intercept",
        "intercept_scaling", "horizon", "prefix_sums",
    )
    # The exact sums inside the tree and the generator are never released.
    _private_state = ("_stream", "_rng")

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        alpha=1e-2,
        data_norm=1.0,
        y_bound=1.0,
        fit_intercept=True,
        intercept_scaling=1.0,
        horizon=None,
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
        self.prefix_sums = prefix_sums
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Noise calibrated for privacy costs accuracy on the checks' tiny data.
        tags.regressor_tags.poor_score = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y):
        """Release the noisy statistics of ``(X, y)`` once and fit the ridge model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``[-y_bound, y_bound]``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._release_fit(X, y, reset=("coef_", "_stream", "_stream_releases"))

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y):
        """Add a batch to the stream and release the updated model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A batch of the stream; rows are clipped to ``data_norm``.
        y : array-like of shape (n_samples,)
            Targets of the batch.

        Returns
        -------
        self : object
            The estimator, with the new release in ``coef_`` and ``intercept_``.
        """
        return self._release_stream_batch(X, y)

    def _partial_fit(self, X, y, *, fitting):
        first_call = not hasattr(self, "coef_")
        if fitting and is_dask_array(X):  # sums reduced on the workers, noise added here
            stats = dask_statistics(self, X, y)
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                 reset=first_call)
            y = _as_float64_targets(y)
            if fitting:
                self._mark_data_read()  # failures from here on are charged
            stats = self._statistics(X, y)
        if fitting:
            mu = gaussian_mu(self.epsilon, self.delta)
            sigma = 0.0 if math.isinf(mu) else self.sensitivity() / mu
            statistics = gaussian_release(stats.sum(0, stats.n_rows), sigma, self._rng)
            self._base_statistics, self._base_samples = statistics, stats.n_rows
            self._base_variance = sigma * sigma
            self._stream = None
            n_samples, spent_fraction = stats.n_rows, 1.0
            noise_std = sigma
        else:
            stream = self._stream_to_advance(stats.dim)
            mu = stream.mu
            self._check_horizon_left(stream, stats.n_rows)  # public: the shape
            self._mark_data_read()  # failures from here on are charged
            # Small per-release work (a batch's gram, a (d+1) x (d+1) eigh): one
            # BLAS thread, so competing processes cannot make it collapse.
            with single_blas_thread():
                statistics = self._base_statistics + stream.advance(stats, self._rng)
                n_samples = self._base_samples + stream.n_rows
                noise_std = math.sqrt(self._base_variance + stream.current_variance())
                self._publish(statistics, n_samples, stats.dim_features, noise_std)
            self._stream = stream
            sigma, spent_fraction = stream.sigma, stream.spent_fraction()
        if fitting:
            with single_blas_thread():   # a (d+1) x (d+1) eigh: one thread is fastest
                self._publish(statistics, n_samples, stats.dim_features, noise_std)
        if self.random_state is None:
            # A stored generator lets whoever holds it rewind to the noise just
            # drawn; an unseeded estimator starts over from fresh OS entropy.
            self._rng = make_generator(None)
        self.noise_scale_ = float(sigma)
        self.sensitivity_ = self.sensitivity()
        self.prefix_sums_ = None if fitting else stream.name
        self.privacy_ = self._guarantee(mu, spent_fraction, fitting)

    def sensitivity(self):
        """Joint replace-one L2 sensitivity of one record's packed ``(v v^T, y v)``.

        Returns
        -------
        sensitivity : float
            The bound of ``doc/privacy.md`` section 3.1 for rows clipped to
            ``data_norm`` (with the intercept feature) and targets clipped to
            ``y_bound``, with a margin of ``1e-9`` relative for rounding.
        """
        # Clipping rounds: a clipped row's norm can exceed data_norm by a few
        # ulps, so the bound carries a margin far above that and far below
        # anything that matters for the noise.
        return qftl.joint_sensitivity(self._row_bound(), float(self.y_bound)) * (1 + 1e-9)

    def _row_bound(self):
        intercept = float(self.intercept_scaling) if self.fit_intercept else 0.0
        return math.hypot(float(self.data_norm), intercept)

    def _more_validate_params(self):
        bound, y_bound = self._row_bound(), float(self.y_bound)
        if min(float(self.data_norm), y_bound) < 1e-100:
            raise ValueError(
                f"data_norm={self.data_norm!r} and y_bound={self.y_bound!r} must be at least "
                "1e-100: near the bottom of the floating-point range, clipping cannot hold "
                "rows to the bound. Rescale X and y by public constants instead."
            )
        if not (self.sensitivity() < 1e150 and bound * y_bound / float(self.alpha) < 1e300):
            raise ValueError(
                f"data_norm={self.data_norm!r}, intercept_scaling, y_bound={self.y_bound!r} "
                f"and alpha={self.alpha!r} give statistics or coefficients that overflow "
                "floating point. Rescale X and y by public bounds so that data_norm and "
                "y_bound are at most about 1e37, and keep "
                "sqrt(data_norm**2 + intercept_scaling**2) * y_bound / alpha below 1e300."
            )


    def _planned_privacy(self, X, *, fitting, **_):
        """The call's guarantee from hyperparameters: ``mu*(epsilon, delta)``, fit or stream."""
        return PrivacyCost(self.epsilon, self.delta, gaussian_mu(self.epsilon, self.delta))

    def _statistics(self, X, y):
        """The batch's statistics: rows clipped to ``data_norm``, targets to ``y_bound``."""
        scale, _ = clip_row_scales(X, float(self.data_norm))
        intercept = float(self.intercept_scaling) if self.fit_intercept else None
        return qftl.PackedStatistics(
            X * scale[:, np.newaxis], np.clip(y, -float(self.y_bound), float(self.y_bound)),
            intercept,
        )

    def _stream_to_advance(self, dim):
        """A copy of the stream to advance (so a failed call changes nothing), or a new one."""
        if getattr(self, "_stream", None) is not None:
            return self._stream.snapshot()
        if not hasattr(self, "_base_statistics"):
            self._base_statistics, self._base_samples, self._base_variance = np.zeros(dim), 0, 0.0
        # horizon counts samples: a stream of at most horizon samples takes at
        # most horizon steps (one per call), so it bounds both kinds.
        return make_stream_mechanism(
            resolve_mechanism(self.prefix_sums), dim=dim, sensitivity=self.sensitivity(),
            mu=gaussian_mu(self.epsilon, self.delta), horizon=self.horizon,
        )

    def _check_horizon_left(self, stream, n_rows):
        if self.horizon is not None and stream.n_rows + n_rows > self.horizon:
            raise ValueError(
                f"This batch of {n_rows} samples would take the stream to "
                f"{stream.n_rows + n_rows} samples, past horizon={self.horizon}: the noise "
                "was calibrated for at most horizon samples. Call fit to start a new "
                "stream, or use horizon=None for streams of unknown length."
            )

    def _publish(self, statistics, n_samples, n_augmented, noise_std):
        V_hat, u_hat = qftl.unpack(statistics, n_augmented)
        weights = qftl.ridge_from_statistics(
            V_hat, u_hat, n_samples, float(self.alpha), self._row_bound(),
            float(self.y_bound), noise_std,
        )
        n_features = self.n_features_in_
        self.coef_ = weights[:n_features].copy()
        self.intercept_ = (
            float(weights[n_features] * self.intercept_scaling) if self.fit_intercept else 0.0
        )
        self.t_ = int(n_samples)

    def _guarantee(self, mu, spent_fraction, fitting):
        private = not math.isinf(mu)
        if fitting:
            records = "the records passed to fit"
            budget = "this release"
            released = (
                "coef_ and intercept_, computed from one release of the noisy "
                "sufficient statistics (V, u)"
            )
            n_releases, n_records = 1, self._base_samples
            mechanism = "analytic Gaussian on the packed (V, u), joint sensitivity"
        else:
            records = (
                "the records passed to partial_fit since the stream started (records "
                "of an earlier fit are covered by its own release)"
            )
            budget = (
                f"the stream up to its horizon of {self.horizon} samples"
                if self.horizon is not None else "the stream, however long"
            )
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
        return PrivacyGuarantee(
            epsilon=float(self.epsilon), delta=float(self.delta), mu=float(mu),
            neighbouring=_NEIGHBOURS, mechanism=mechanism, released=released,
            n_releases=n_releases, n_records=int(n_records),
            records=records, spent_mu=float(mu * math.sqrt(spent_fraction)), budget=budget,
        )



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
