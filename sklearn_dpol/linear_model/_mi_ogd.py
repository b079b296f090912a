"""MutualInformationPrivateOGDRegressor: online gradient descent on reports that
every user perturbs with Gaussian noise (seed 003, Zhang and Venkitasubramaniam,
Algorithms 1 and 2)."""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_features
from .._validate import validate_data

from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
    ReleasedLinearRegressorMixin,
)
from .._core import mi_ogd
from .._core._weights import check_unit_sample_weight
from .._core.local_randomizers import REPORT_SCALE_RANGE, sphere_directions
from .._verbose import reports_release
from ..privacy import (
    PrivacyAccountant,
    gaussian_epsilon,
    gaussian_sigma,
)
from ..privacy._spec import LOCAL, PrivacySpec

_NEIGHBOURS = "replace-one (local: each user's report)"


class MutualInformationPrivateOGDRegressor(
    ReleasedLinearRegressorMixin, PrivateEstimatorMixin, RegressorMixin, BaseEstimator
):
    """Online linear regression where every user adds Gaussian noise to its report.

    Each row of ``X`` is a user. The protocol of Zhang and Venkitasubramaniam
    is simulated round by round: the learner plays ``w_t`` in the L2 ball of
    ``radius``; user ``t`` (its "encryption layer") clips its row to
    ``data_norm`` and its target to ``[-y_bound, y_bound]`` and reports

    * ``feedback="full"`` (Algorithm 1): its loss's subgradient at ``w_t``,
      clipped to L2 norm ``gradient_bound``, plus ``N(0, sigma^2 I)``;
    * ``feedback="bandit"`` (Algorithm 2): ``(d / delta) phi_t e_t`` plus
      ``N(0, sigma^2 I)``, where ``phi_t`` is its loss at ``w_t + delta e_t``
      (clipped to ``[0, F]``), ``e_t`` uniform on the unit sphere and
      ``delta = exploration_radius``.

    The learner sees only the noisy reports: ``theta <- theta - z~_t`` and
    ``w_{t+1} = Pi_B(eta_t theta)`` (lazy projection, the seed's lines 7-8).

    The noise ``sigma`` is set either by the privacy budget ``(epsilon,
    delta)`` of each report, like every other estimator of the library
    (``sigma = sensitivity / mu`` with ``mu = gaussian_mu(epsilon, delta)``,
    the library's exact Gaussian calibration), or directly, as in the seed.

    Parameters
    ----------
    epsilon : float or None, default=1.0
        Local privacy budget of each user's report, ``> 0``; ``np.inf`` adds
        no noise. The noise is ``sigma_ = sensitivity_ / gaussian_mu(epsilon,
        delta)`` (rounded up). Pass ``epsilon=None`` to give ``sigma``
        instead: exactly one of the two is set.
    sigma : float or None, default=None
        The seed's parametrisation: the standard deviation of the Gaussian
        noise every user adds to each coordinate of its report, ``> 0``
        (then ``epsilon=None``); the guarantee follows from it.
    gradient_bound : float, default=1.0
        ``L``: each user clips its gradient to this L2 norm (full feedback).
    radius : float or "auto", default="auto"
        ``B``: the learner's iterates stay in the L2 ball of this radius
        (intercept included). ``"auto"`` (resolved into ``radius_``) takes
        ``y_bound / min(data_norm, 1)`` with an intercept, ``y_bound /
        data_norm`` without: the smallest ball holding both the constant model
        at ``y_bound`` and the linear models whose predictions reach
        ``y_bound`` on rows at the bound (public values only; ``1`` at the
        bounds ``1``, the seed's setting). A fixed ``1`` with targets in other
        units pinned the model near zero (load_diabetes, ``y_bound=346``: R^2
        -4.64 at ``epsilon=inf``, 0.12 at ``radius=400``).
    data_norm : float or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Rows of ``X`` are clipped to this L2 norm by their user.
    y_bound : float or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Targets are clipped to ``[-y_bound, y_bound]`` by their user.
    loss : {"absolute", "squared", "huber"}, default="absolute"
        ``|r|`` (the seed's linear-regression example), ``r^2 / 2`` or the
        Huber loss with threshold ``epsilon_huber``; ``r = <w, x> + b - y``.
    epsilon_huber : float, default=1.0
        Threshold of the Huber loss, ``> 0``.
    fit_intercept : bool, default=True
        Learn an intercept as the weight of a constant feature equal to 1.
    step_size : float or None, default=None
        A constant ``eta`` (the seed's algorithm as written), or ``None`` for
        the anytime ``eta_t = B / (G sqrt(t))`` after ``t`` reports, with
        ``G^2 = L^2 + d sigma^2`` (full) or ``(d F / delta)^2 + d sigma^2``
        (bandit) the bound on ``E ||z~_t||^2``: the seed's Theorem 2 choice
        ``eta = B / sqrt((L^2 + d sigma^2) T)`` with ``T`` replaced by ``t``.
    feedback : {"full", "bandit"}, default="full"
        Algorithm 1 (gradients) or Algorithm 2 (one loss value per user).
    exploration_radius : float or None, default=None
        ``delta`` of Algorithm 2 (bandit only). ``None`` takes ``radius_ / 2``.
        The seed's ``delta ~ T^{-1/4}`` needs the horizon; it is constant here
        so that every report has the same guarantee.
    average : bool, default=True
        Publish the average of the iterates played (online-to-batch
        conversion); ``False`` publishes the next iterate ``w_{T+1}``.
    delta : float, default=1e-6
        The ``delta`` of each report's ``(epsilon, delta)``-LDP guarantee:
        with ``epsilon`` it sets the noise; with ``sigma`` it only states the
        guarantee in ``privacy_``.
    random_state : int, RandomState instance or None, default=None
        Seeds the users' noise and directions. ``fit`` re-seeds from it; later
        ``partial_fit`` calls keep drawing from one generator.
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
        Published weights.
    intercept_ : float
        Published intercept; 0.0 when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    t_ : int
        Rounds (users) since ``fit``.
    step_size_ : float
        ``eta`` (constant) or ``B / G`` (the numerator of ``eta_t``).
    sigma_ : float
        The noise standard deviation used: ``sigma``, or the one calibrated
        from ``(epsilon, delta)``; 0 for ``epsilon=np.inf``.
    radius_ : float
        ``B``: ``radius``, or its ``"auto"`` value.
    data_norm_ : float
        The row bound used: ``data_norm`` (1.0 for ``None``).
    y_bound_ : float
        The target bound used: ``y_bound`` (1.0 for ``None``).
    exploration_radius_ : float or None
        ``delta`` (bandit), else ``None``.
    loss_bound_ : float or None
        ``F``, the largest loss at a query point (norm ``<= B + delta``) on
        clipped data (bandit), else ``None``.
    sensitivity_ : float
        Replace-one L2 sensitivity of one report's mean: ``2 L`` (full) or
        ``d F / delta`` (bandit, given the direction).
    mutual_information_bound_ : float
        The seed's guarantee in nats: ``(d/2) ln(1 + L^2 / (d sigma^2))``
        (full, Theorem 1) or ``(d/2) ln(1 + d F^2 / (delta^2 sigma^2))``
        (bandit, Theorem 3 with ``F`` bounding the loss at the query point).
        It is an average-case measure, not a differential privacy guarantee.
    privacy_ : PrivacyGuarantee
        The local ``(epsilon, delta)``-DP of one report, ``mu = sensitivity_ /
        sigma_`` (``epsilon`` at most the one asked for).

    See Also
    --------
    ParameterFreeLocalDPRegressor : Local DP at a level each user chooses.
    sklearn.linear_model.SGDRegressor : The non-private stochastic gradient regressor.

    Notes
    -----
    The seed measures privacy by the mutual information between a user's
    data and its report, bounded by the Gaussian channel capacity. That bound
    holds for the average user; it says nothing about the worst case. As local
    differential privacy, the same report is a Gaussian mechanism: with
    gradients clipped to ``L``, two users' reports have means at most ``2 L``
    apart, so each report is ``mu``-GDP with ``mu = 2 L / sigma`` (the seed's
    Figure 3 setting ``L = sigma = 1`` gives ``mu = 2``, ``epsilon ~ 11`` at
    ``delta = 1e-6``). Every user reports once, and everything the learner
    computes is post-processing of the reports, so every published model is
    ``(epsilon, delta)``-DP for each user's row. A row passed to several calls
    reports several times and its guarantee composes.

    References
    ----------
    R. Zhang and P. Venkitasubramaniam. Mutual-information-private online
    gradient descent algorithm. ICASSP 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import MutualInformationPrivateOGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(50_000, 2))
    >>> y = X @ [0.6, -0.4] + 0.1 + 0.05 * rng.standard_normal(50_000)
    >>> reg = MutualInformationPrivateOGDRegressor(epsilon=None, sigma=1.0,
    ...                                            random_state=0).fit(X, y)
    >>> round(reg.privacy_.mu, 3), round(reg.privacy_.epsilon, 2)
    (2.0, 11.0)
    >>> round(reg.mutual_information_bound_, 4)  # nats, (3/2) ln(1 + 1/3)
    0.4315
    >>> reg.score(X, y) > 0.8
    True
    >>> reg = MutualInformationPrivateOGDRegressor(epsilon=11.0, random_state=0).fit(X, y)
    >>> round(reg.sigma_, 3), reg.privacy_.epsilon <= 11.0
    (1.0, True)
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT, None],
        "sigma": [POSITIVE, None],
        "gradient_bound": [POSITIVE],
        "radius": [POSITIVE, StrOptions({"auto"})],
        "data_norm": [POSITIVE, None],
        "y_bound": [POSITIVE, None],
        "loss": [StrOptions({mi_ogd.SQUARED, mi_ogd.ABSOLUTE, mi_ogd.HUBER})],
        "epsilon_huber": [POSITIVE],
        "fit_intercept": ["boolean"],
        "step_size": [Interval(Real, 0, None, closed="neither"), None],
        "feedback": [StrOptions({mi_ogd.FULL, mi_ogd.BANDIT})],
        "exploration_radius": [Interval(Real, 0, None, closed="neither"), None],
        "average": ["boolean"],
        "delta": [DELTA_CONSTRAINT],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "sigma", "gradient_bound", "radius", "data_norm", "y_bound", "loss", "epsilon_huber",
        "fit_intercept", "step_size", "feedback", "exploration_radius", "delta",
    )
    _DEFAULT_BOUNDS = ("data_norm", "y_bound")
    _private_state = ("_rng", "_sampler", "_sampler_rng")

    def __init__(
        self,
        *,
        epsilon=1.0,
        sigma=None,
        gradient_bound=1.0,
        radius="auto",
        data_norm=None,
        y_bound=None,
        loss="absolute",
        epsilon_huber=1.0,
        fit_intercept=True,
        step_size=None,
        feedback="full",
        exploration_radius=None,
        average=True,
        delta=1e-6,
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.sigma = sigma
        self.gradient_bound = gradient_bound
        self.radius = radius
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.loss = loss
        self.epsilon_huber = epsilon_huber
        self.fit_intercept = fit_intercept
        self.step_size = step_size
        self.feedback = feedback
        self.exploration_radius = exploration_radius
        self.average = average
        self.delta = delta
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Local noise costs accuracy on the checks' tiny data sets.
        tags.regressor_tags.poor_score = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_weight=None):
        """Run the protocol over the rows of ``(X, y)`` from a fresh learner.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per user; clipped to ``data_norm`` by the user.
        y : array-like of shape (n_samples,)
            Targets; clipped to ``[-y_bound, y_bound]`` by the user.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Each user's weight in ``[0, 1]``: the user multiplies its clipped
            gradient (full feedback) or its clipped loss value (bandit) by it
            before adding its noise, so every report keeps its guarantee and
            ``sigma_`` is unchanged (``doc/privacy.md`` 57.5; the weight is
            private, part of the user's record). A user of weight 0 still
            reports: its report is noise only, drawing the same random words
            as any other. All-ones weights give the unweighted fit bit for bit.
            Weights outside ``[0, 1]`` or non-finite raise
            ``ValueError`` before anything is read.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._warn_default_bounds()
        return self._release_fit(X, y, reset=("coef_", "_learner", "_n_calls"),
                                 sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, sample_weight=None):
        """Continue the protocol with the users of this batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per user.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Each user's weight in ``[0, 1]`` (see :meth:`fit`).

        Returns
        -------
        self : object
            The estimator, with the updated model.
        """
        return self._release_stream_batch(X, y, sample_weight=sample_weight)

    def _more_validate_params(self):
        for name in ("sigma", "gradient_bound", "data_norm", "y_bound", "epsilon_huber",
                     "step_size", "exploration_radius", "radius"):
            value = (self._bound(name) if name in self._DEFAULT_BOUNDS
                     else getattr(self, name))
            if isinstance(value, str):
                value = self._radius()         # radius="auto": its public value
            if value is not None and not (REPORT_SCALE_RANGE[0] <= float(value)
                                          <= REPORT_SCALE_RANGE[1]):
                raise ValueError(f"{name}={value!r} must lie in [1e-100, 1e100].")
        if (self.epsilon is None) == (self.sigma is None):
            raise ValueError(
                f"Set exactly one of epsilon and sigma; got epsilon={self.epsilon!r}, "
                f"sigma={self.sigma!r}. epsilon (with delta) calibrates the noise of each "
                "report; to give the noise directly, pass sigma and epsilon=None."
            )
        if self.epsilon is not None and not float(self.epsilon) > 0:
            raise ValueError(f"epsilon={self.epsilon!r} must be > 0: a Gaussian report "
                             "cannot be (0, delta)-DP at a finite noise.")


    def _privacy_spec(self, X=None, *, fitting=True, **_):
        """Local: each user's report is ``mu``-GDP, ``mu = sensitivity / sigma``.

        Bandit feedback's sensitivity grows with the dimension: the number of
        columns of ``X`` (public, the same for neighbouring data sets) is read,
        or the fitted one when ``X`` is ``None``; without either, the spec's
        ``epsilon`` and ``mu`` are unknown (``nan``). No configuration has a
        zCDP ``rho`` for private selection.
        """
        if self.feedback == mi_ogd.FULL:
            sensitivity = 2.0 * float(self.gradient_bound)
        else:
            continuing = not fitting and hasattr(self, "_learner")
            if X is None:
                n_features = getattr(self, "n_features_in_", None)
            else:
                n_features = self.n_features_in_ if continuing else _public_width(X)
            sensitivity = (math.nan if n_features is None else
                           self._calibration(n_features + int(self.fit_intercept))["sensitivity"])
        if math.isnan(sensitivity):
            mu = epsilon = math.nan
        else:
            mu = _report_mu(sensitivity, self._noise(sensitivity))
            epsilon = gaussian_epsilon(mu, self.delta)
        return PrivacySpec(LOCAL, epsilon, self.delta, mu, no_rho=_NO_RHO, no_rho_always=True)

    def _noise(self, sensitivity):
        """``sigma``, or the noise of an ``(epsilon, delta)``-DP report of ``sensitivity``.

        ``gaussian_sigma`` (exact Gaussian calibration), rounded up by two ulps
        so that ``sensitivity / sigma`` never exceeds ``gaussian_mu(epsilon,
        delta)`` through rounding. Public: hyperparameters and ``d`` only.
        """
        if self.sigma is not None:
            return float(self.sigma)
        sigma = gaussian_sigma(sensitivity, float(self.epsilon), float(self.delta))
        return math.nextafter(math.nextafter(sigma, math.inf), math.inf) if sigma else 0.0

    def _radius(self):
        """``radius``, or ``"auto"``'s ``y_bound / min(data_norm, 1)`` (``y_bound /
        data_norm`` without an intercept): public values only."""
        if not isinstance(self.radius, str):
            return float(self.radius)
        row = self._data_norm()
        return self._y_bound() / (min(row, 1.0) if self.fit_intercept else row)

    def _data_norm(self):
        """The row bound in use: ``data_norm`` (``None``: 1.0)."""
        return float(self._bound("data_norm"))

    def _y_bound(self):
        """The target bound in use: ``y_bound`` (``None``: 1.0)."""
        return float(self._bound("y_bound"))

    def _calibration(self, n_dims):
        """Public constants of the stream: step, exploration, ``F``, sensitivity, noise, MI bound."""
        B = self._radius()
        if self.feedback == mi_ogd.FULL:
            exploration = bound = None
            sensitivity = 2.0 * float(self.gradient_bound)
            mean_power = float(self.gradient_bound) ** 2
        else:
            exploration = (B / 2.0 if self.exploration_radius is None
                           else float(self.exploration_radius))
            bound = mi_ogd.loss_bound(self.loss, float(self.epsilon_huber), B + exploration,
                                      self._data_norm(), self._y_bound(),
                                      self.fit_intercept)
            sensitivity = n_dims * bound / exploration
            mean_power = sensitivity ** 2
        if self.sigma is not None or not 0 < sensitivity < mi_ogd.HUGE:
            sigma = float(self.sigma or 1.0)  # out-of-range bounds are refused below
        else:
            sigma = self._noise(sensitivity)
        noise_power = n_dims * sigma * sigma
        if self.step_size is None:
            eta = B / math.sqrt(mean_power + noise_power)
        else:
            eta = float(self.step_size)
        values = (sensitivity, mean_power + noise_power, eta,
                  _report_mu(sensitivity, sigma) if sigma else 1.0)
        if not all(math.isfinite(v) and 0 < v < mi_ogd.HUGE for v in values):
            raise ValueError(
                f"radius={B:.3g}, data_norm={self._data_norm():.3g}, "
                f"y_bound={self._y_bound():.3g}, "
                f"sigma={sigma:.3g} (epsilon={self.epsilon!r}, loss={self.loss!r}, "
                f"feedback={self.feedback!r}) give a "
                "sensitivity or step that overflows or vanishes in floating point. Rescale "
                "X and y by public constants so that these bounds are near 1."
            )
        information = (mi_ogd.mutual_information_bound(n_dims, mean_power, sigma) if sigma
                       else math.inf)
        return {"eta": eta, "exploration": exploration, "loss_bound": bound,
                "sensitivity": sensitivity, "sigma": sigma,
                "mutual_information": information}

    def _partial_fit(self, X, y, *, fitting, sample_weight=None):
        first_call = fitting or not hasattr(self, "_learner")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=first_call)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y holds values too large for float64 (they became inf).")
        n_dims = self.n_features_in_ + int(self.fit_intercept)
        cal = self._calibration(n_dims)
        sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
        self._mark_data_read()
        if first_call:
            learner = mi_ogd.LazyOGDLearner(n_dims, radius=self._radius(),
                                            eta=cal["eta"], anytime=self.step_size is None)
            self._n_calls = 0
        else:
            learner = self._learner.copy()  # a failed call must leave the state as it was
        n = X.shape[0]
        sampler = self._exact_sampler()      # before the directions: one order of draws
        if self.feedback == mi_ogd.BANDIT:
            directions = sphere_directions(self._rng, n, n_dims)
        else:
            directions = np.zeros((0, n_dims))
        mi_ogd.run_protocol(
            learner, X, y, sampler, directions, loss=self.loss,
            huber_threshold=float(self.epsilon_huber), data_norm=self._data_norm(),
            y_bound=self._y_bound(), intercept=self.fit_intercept, feedback=self.feedback,
            clip_norm=float(self.gradient_bound),
            exploration=cal["exploration"] or 1.0, loss_bound=cal["loss_bound"] or 0.0,
            sigma=cal["sigma"], sample_weight=sample_weight,
        )
        self._learner = learner
        self._n_calls += 1
        self.step_size_ = cal["eta"]
        self.sigma_ = cal["sigma"]
        self.radius_ = self._radius()
        self.data_norm_, self.y_bound_ = self._data_norm(), self._y_bound()
        self.exploration_radius_ = cal["exploration"]
        self.loss_bound_ = cal["loss_bound"]
        self.sensitivity_ = cal["sensitivity"]
        self.mutual_information_bound_ = cal["mutual_information"]
        self._publish(learner)
        self.privacy_ = self._guarantee(n_dims)

    def _publish(self, learner):
        weights = learner.average() if self.average else learner.predict()
        n_features = self.n_features_in_
        self.coef_ = weights[:n_features].copy()
        self.intercept_ = float(weights[n_features]) if self.fit_intercept else 0.0
        self.t_ = int(learner.t)

    def _guarantee(self, n_dims):
        """``privacy_`` from :meth:`_privacy_spec` (local: each user's own report)."""
        spec = self._privacy_spec(fitting=False)
        sigma = self.sigma_
        if self.feedback == mi_ogd.FULL:
            mechanism = (
                f"local Gaussian randomiser (seed 003, Algorithm 1): gradient clipped to L2 "
                f"norm L={float(self.gradient_bound):.4g} plus N(0, sigma^2 I), "
                f"sigma={sigma:.4g}; replace-one sensitivity 2L, mu = 2L/sigma"
            )
        else:
            mechanism = (
                f"local Gaussian randomiser on a one-point gradient estimate (seed 003, "
                f"Algorithm 2): (d/delta) phi e + N(0, sigma^2 I), loss value phi clipped to "
                f"[0, F], F={self.loss_bound_:.4g}, delta={self.exploration_radius_:.4g}, "
                f"d={n_dims}, sigma={sigma:.4g}; sensitivity d F/delta given the user's "
                "direction e, mu = d F/(delta sigma)"
            )
        mechanism += (
            f"; the seed's mutual-information bound (Gaussian channel capacity, not DP): "
            f"{self.mutual_information_bound_:.4g} nats per report"
        )
        return spec.guarantee(
            mechanism=mechanism,
            released=(
                "coef_ and intercept_ after every call, post-processing of the users' noisy "
                "reports (the learner sees nothing else)"
            ),
            n_releases=self._n_calls, n_records=int(self.t_),
        )


def _report_mu(sensitivity, sigma):
    """``mu = sensitivity / sigma`` of one Gaussian report; ``inf`` without noise."""
    return sensitivity / sigma if sigma else math.inf


# Private selection's reason (PrivacySpec.no_rho): no configuration has a zCDP rho.
_NO_RHO = (
    "its guarantee is per user report (local DP, set by epsilon or by the noise "
    "scale sigma), and in bandit mode its sensitivity depends on the number of features"
)


def _public_width(X):
    """The number of columns of ``X`` (public: equal for replace-one neighbours)."""
    try:
        return _num_features(X)
    except TypeError as error:  # 1-D or scalar input: the caller's validation message
        raise ValueError(f"X must be a 2-D array of shape (n_samples, n_features): {error}") \
            from None
