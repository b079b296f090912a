"""ParameterFreeLocalDPRegressor: parameter-free regression under user-specified
local differential privacy (seed 001, van der Hoeven 2019, Algorithms 1-3)."""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from .._validate import validate_data

from .._base import (
    EPSILON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
    ReleasedLinearRegressorMixin,
)
from .._core import parameter_free as pf
from .._core._weights import check_unit_sample_weight
from .._core.local_randomizers import (
    LocalSampledCoordinateRandomizer,
    check_sample_epsilon,
    normalise_feature_weights,
    sampled_is_better,
)
from .._verbose import reports_release
from ..privacy import PrivacyAccountant, PrivacyCost, PrivacyGuarantee
from ..privacy._spec import LOCAL, PrivacySpec

_NEIGHBOURS = "replace-one (local: each user's report)"
_MECHANISMS = {
    pf.LAPLACE: "local Laplace randomiser, each user epsilon_t = sum_j tau_tj",
    pf.SAMPLED_COORDINATE: (
        "local sampled-coordinate randomiser: each user reports one coordinate drawn from "
        "the public budget split, with a sign randomised at its own epsilon_t"),
}


class ParameterFreeLocalDPRegressor(
    ReleasedLinearRegressorMixin, PrivateEstimatorMixin, RegressorMixin, BaseEstimator
):
    """Parameter-free online regression where every user privatises its own gradient.

    Each row of ``X`` is a user. The protocol of van der Hoeven (2019) is
    simulated round by round: the learner plays ``w_t``; user ``t`` computes
    the subgradient of its loss at ``w_t``, clips every coordinate to
    ``[-1, 1]``, adds Laplace noise of scale ``2 / tau_tj`` to coordinate ``j``
    (the local Laplace randomiser, ``tau_tj = epsilon_t * weight_j``) and sends
    only that noisy vector. The learner is not given ``epsilon_t``, the budget
    split or the noise; it adapts to them through the noisy gradients alone
    (every report lies on one lattice whatever ``epsilon_t``, ``doc/privacy.md``
    53.7; a coordinate budget below ``2**-16`` reports 0)
    (the noise only has to be symmetric). No learning rate is tuned: the
    potential-based learner of Algorithm 1 adapts to the unknown norm of the
    comparator and to ``sum_t ||g~_t||^2``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Local privacy budget of every user whose ``sample_epsilon`` is not
        given, ``> 0``; ``np.inf`` adds no noise.
    feature_weights : array-like of shape (n_features + fit_intercept,) or None, default=None
        Nonnegative split of each user's budget over the gradient coordinates
        (the intercept's is last), normalised to sum 1 over the nonzero
        weights: ``tau_tj = epsilon_t * weight_j``. ``None`` splits uniformly.
        A zero weight makes coordinate ``j`` public: it is reported without
        noise and carries no guarantee, and since a gradient coordinate
        depends on the residual (hence on ``y``), ``privacy_.epsilon`` is then
        ``inf`` (see Notes).
    randomizer : {"auto", "laplace", "sampled_coordinate"}, default="auto"
        The users' local randomiser, both ``epsilon_t``-LDP per report.
        ``"laplace"``: the seed's, Laplace noise of scale ``2 / tau_tj`` on
        every coordinate. ``"sampled_coordinate"``: each user reports a single
        coordinate ``j``, drawn with probability ``weight_j`` independently of
        its data, as ``s K / weight_j`` with a randomised sign ``s``
        (``P(s = 1) = (1 + g_j / K) / 2``, ``K`` about ``coth(epsilon_t /
        2)``): unbiased, with a summed variance about ``K^2 d^2`` instead of
        the Laplace reports' ``8 d^3 / epsilon^2`` at a uniform split, and one
        random draw per user instead of ``d`` (``doc/privacy.md`` 54.2).
        ``"auto"`` takes the one whose summed variance is smaller at
        ``epsilon`` and the split (public values; the sampled coordinate except
        at a large ``epsilon`` over few coordinates), resolved into
        ``randomizer_`` at each call; a call with per-user ``sample_epsilon``
        takes the Laplace reports, because a sampled report's magnitude tells
        its user's budget (to a rung of ``2^(1/16)``) and marks the users at
        ``inf``, where the Laplace reports' bits do not (``doc/privacy.md``
        53.7 and 54.2). Pass ``randomizer="sampled_coordinate"`` to use it
        with per-user budgets all the same.
    method : {"coordinate", "reduction"}, default="reduction"
        ``"coordinate"``: one 1-D potential learner per coordinate (Algorithm
        3). ``"reduction"``: the 1-D learner learns the norm and scale-free
        projected gradient descent on the unit L2 ball the direction
        (Algorithm 2). The default, with ``prior="improper"``, is the
        combination that did best at every epsilon in the library's
        measurements with the Laplace randomiser (160,000 local users, 2, 5 and 20 features: R^2 0.76
        against 0.00 for the coordinate learner with the conjugate prior at
        ``epsilon=1``, 5 features; ``python -m sklearn_dpol``); the seed's
        reproductions pass ``method`` and ``prior`` explicitly.
    prior : {"conjugate", "improper"}, default="improper"
        Prior of the 1-D potential on ``[-C, C]``, ``C = 1 / (5 G)`` with ``G =
        gradient_bound``: the conjugate prior ``exp(-prior_strength v^2) / Z``
        (prediction (7)) or the improper prior ``1 / |v|`` (Appendix C of the
        seed; ``prior_strength`` is not used).
    gradient_bound : float or None, default=None
        The seed's ``G``: a bound on the (dual) norm of the expected report
        ``E[g~_t]`` (per coordinate for ``"coordinate"``, in L2 for
        ``"reduction"``). It sets the support ``[-1/(5G), 1/(5G)]`` of the
        prior. ``None`` takes the bound implied by the clipping: 1 per
        coordinate for ``"coordinate"``, ``sqrt(n_features + fit_intercept)``
        in L2 for ``"reduction"`` (resolved into ``gradient_bound_``). It is
        not a privacy parameter: the users clip to ``[-1, 1]`` whatever it is.
    prior_strength : float, default=1.0
        The seed's ``b``: the conjugate prior is ``exp(-prior_strength v^2) /
        Z``, and it starts the running sum of squared reports,
        ``B_t = prior_strength + sum_s g~_s^2``. Larger values shrink the
        first predictions towards 0.
    loss : {"absolute", "huber"}, default="absolute"
        Each user's loss: ``|<w, x> - y|`` or the Huber loss with threshold
        ``epsilon_huber``.
    epsilon_huber : float, default=1.0
        Threshold of the Huber loss, ``> 0``.
    fit_intercept : bool, default=True
        Learn an intercept as the weight of a constant feature equal to 1.
    average : bool, default=True
        Publish the average of the iterates played (online-to-batch
        conversion); ``False`` publishes the next iterate ``w_{T+1}``.
    random_state : int, RandomState instance or None, default=None
        Seeds the users' noise. ``fit`` re-seeds from it; later
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
    randomizer_ : str
        The users' randomiser, ``randomizer`` with ``"auto"`` resolved.
    gradient_bound_ : float
        The seed's ``G`` used: ``gradient_bound``, or its default from the
        clipping.
    feature_weights_ : ndarray of shape (n_features + fit_intercept,)
        The normalised budget split.
    sample_epsilon_summary_ : dict
        ``n_users``, ``n_without_noise`` (users at ``inf``) and the smallest
        and largest finite budgets of the users since ``fit`` (``nan`` when
        none). Note that these describe the users' choices (see Notes).
    privacy_ : PrivacyGuarantee
        The guarantee covering what has been released.

    See Also
    --------
    MutualInformationPrivateOGDRegressor : Local Gaussian noise, one level for all users.
    sklearn.linear_model.SGDRegressor : The non-private stochastic gradient regressor.

    Notes
    -----
    Privacy is local: user ``t``'s report is ``epsilon_t``-LDP (Lemma 1 of
    the seed, which needs ``|g_tj| <= 1``: hence the clipping). Everything the
    learner computes, and so every published model, is post-processing of
    the reports, and every user reports once, so the published models are
    ``epsilon_t``-DP for user ``t``'s row under replace-one neighbours.
    ``privacy_.epsilon`` is the largest finite ``epsilon_t`` (users at
    ``inf`` chose no privacy and are counted apart). A row passed to several
    calls reports several times and its guarantee composes. With a zero
    feature weight the public coordinate ``sign(residual) x_j`` (absolute
    loss) is released exactly and leaks the residual's sign: the private
    coordinates remain ``epsilon_t``-LDP, but there is no replace-one
    guarantee for the row, and ``privacy_.epsilon`` is ``inf``.

    Clipping changes the gradient only when ``|psi x_j| > 1``; scale ``X``
    (and for the Huber loss ``epsilon_huber``) by public constants so that it
    does not, to keep the regret guarantees of the seed. ``|w_t|`` is capped
    at ``1e100`` (the potential grows exponentially on long runs of
    same-signed gradients).

    References
    ----------
    D. van der Hoeven. User-specified local differential privacy in
    unconstrained adaptive online learning. NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import ParameterFreeLocalDPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(50_000, 2))
    >>> y = X @ [0.5, -0.3] + 0.1 + 0.05 * rng.standard_normal(50_000)
    >>> eps = np.where(rng.random(50_000) < 0.9, np.inf, 1.0)  # 10% of users want privacy
    >>> reg = ParameterFreeLocalDPRegressor(random_state=0).fit(X, y, sample_epsilon=eps)
    >>> reg.privacy_.epsilon, reg.sample_epsilon_summary_["n_without_noise"]
    (1.0, 45108)
    >>> reg.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "feature_weights": ["array-like", None],
        "randomizer": [StrOptions({"auto", pf.LAPLACE, pf.SAMPLED_COORDINATE})],
        "method": [StrOptions({pf.COORDINATE, pf.REDUCTION})],
        "prior": [StrOptions({pf.CONJUGATE, pf.IMPROPER})],
        "gradient_bound": [Interval(Real, 0, None, closed="neither"), None],
        "prior_strength": [POSITIVE],
        "loss": [StrOptions({pf.ABSOLUTE, pf.HUBER})],
        "epsilon_huber": [POSITIVE],
        "fit_intercept": ["boolean"],
        "average": ["boolean"],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "feature_weights", "randomizer", "method", "prior", "gradient_bound",
        "prior_strength", "loss", "epsilon_huber",
        "fit_intercept",
    )
    _private_state = ("_rng", "_sampler", "_sampler_rng")

    def __init__(
        self,
        *,
        epsilon=1.0,
        feature_weights=None,
        randomizer="auto",
        method="reduction",
        prior="improper",
        gradient_bound=None,
        prior_strength=1.0,
        loss="absolute",
        epsilon_huber=1.0,
        fit_intercept=True,
        average=True,
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.feature_weights = feature_weights
        self.randomizer = randomizer
        self.method = method
        self.prior = prior
        self.gradient_bound = gradient_bound
        self.prior_strength = prior_strength
        self.loss = loss
        self.epsilon_huber = epsilon_huber
        self.fit_intercept = fit_intercept
        self.average = average
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Local noise and the absolute loss cost accuracy on the checks' tiny data.
        tags.regressor_tags.poor_score = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_epsilon=None, sample_weight=None):
        """Run the protocol over the rows of ``(X, y)`` from a fresh learner.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per user.
        y : array-like of shape (n_samples,)
            Targets.
        sample_epsilon : array-like of shape (n_samples,) or None, default=None
            Each user's own budget, ``> 0`` (``np.inf``: no noise). ``None``
            gives every user ``epsilon``. The learner is not given it; the Laplace
            reports' bits do not tell it (one lattice: ``doc/privacy.md`` 53.7), a
            sampled-coordinate report's magnitude does, to a rung (54.2).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Each user's weight in ``[0, 1]``: the user multiplies its clipped
            gradient by it before randomising, so every report keeps its
            ``epsilon_t``-LDP guarantee (``doc/privacy.md`` 57.5; the weight is
            private, part of the user's record). A user of weight 0 still
            reports: its report is noise only (a sampled-coordinate sign is a
            fair coin), drawing the same random words as any other. All-ones
            weights give the unweighted fit bit for bit. Weights outside
            ``[0, 1]`` or non-finite raise ``ValueError`` before
            anything is read.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._release_fit(
            X, y, reset=("coef_", "_learner", "_summary", "_n_calls"),
            sample_epsilon=sample_epsilon, sample_weight=sample_weight,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, sample_epsilon=None, sample_weight=None):
        """Continue the protocol with the users of this batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            One row per user.
        y : array-like of shape (n_samples,)
            Targets.
        sample_epsilon : array-like of shape (n_samples,) or None, default=None
            Each user's own budget (see :meth:`fit`).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Each user's weight in ``[0, 1]`` (see :meth:`fit`).

        Returns
        -------
        self : object
            The estimator, with the updated model.
        """
        return self._release_stream_batch(X, y, sample_epsilon=sample_epsilon,
                                          sample_weight=sample_weight)

    def _more_validate_params(self):
        for name in ("gradient_bound", "prior_strength"):
            value = getattr(self, name)
            if value is not None and not 1e-100 <= float(value) <= 1e100:
                raise ValueError(f"{name}={value!r} must lie in [1e-100, 1e100].")


    def _privacy_spec(self, X=None, *, fitting=True, sample_epsilon=None, **_):
        """Local: the stream's guarantee after this call, from ``sample_epsilon`` (metadata).

        As ``privacy_``: the largest finite user budget since ``fit`` (``inf``
        if no user has one, or if a coordinate is public). Pure
        ``epsilon``-DP per record (post-processing of ``epsilon``-LDP
        reports), hence ``epsilon^2/2``-zCDP for private selection (Bun and
        Steinke 2016, Proposition 1.4).
        """
        if sample_epsilon is None:
            budgets = np.array([float(self.epsilon)])
        else:
            budgets = np.asarray(sample_epsilon)
            if budgets.dtype.kind not in "fiub":
                raise ValueError(f"sample_epsilon must be numeric, got dtype {budgets.dtype}.")
            budgets = budgets.astype(np.float64).ravel()
        finite = budgets[np.isfinite(budgets)]
        largest = float(finite.max()) if finite.size else -math.inf
        if not fitting and hasattr(self, "_summary"):
            largest = max(largest, self._summary["max_finite_epsilon"])
        weights = self.feature_weights
        public = weights is not None and np.any(np.asarray(weights, dtype=float) == 0)
        return self._local_spec(largest, public)

    def _local_spec(self, largest, public):
        """The spec of reports whose largest finite budget is ``largest`` (``-inf``: none)."""
        if public:
            return PrivacySpec(LOCAL, math.inf, 0.0, no_rho=(
                "ParameterFreeLocalDPRegressor with a zero feature weight publishes that "
                "coordinate without noise and has no replace-one guarantee; private selection "
                "needs one. Give every feature a positive weight."))
        epsilon = math.inf if largest == -math.inf else largest
        return PrivacySpec(LOCAL, epsilon, 0.0,
                           rho=math.inf if math.isinf(epsilon) else epsilon * epsilon / 2.0)

    def _n_dims(self):
        return self.n_features_in_ + int(self.fit_intercept)

    def _gradient_bound(self, n_dims):
        if self.gradient_bound is not None:
            return float(self.gradient_bound)
        return 1.0 if self.method == pf.COORDINATE else math.sqrt(n_dims)

    def _partial_fit(self, X, y, *, fitting, sample_epsilon=None, sample_weight=None):
        first_call = fitting or not hasattr(self, "_learner")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=first_call)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y holds values too large for float64 (they became inf).")
        n_dims = self._n_dims()
        weights = normalise_feature_weights(self.feature_weights, n_dims)
        epsilons = check_sample_epsilon(sample_epsilon, X.shape[0], self.epsilon)
        sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
        self._mark_data_read()
        if first_call:
            learner = pf.make_learner(self.method, n_dims, G=self._gradient_bound(n_dims),
                                      prior=self.prior, b=float(self.prior_strength))
            self._summary = {"n_users": 0, "n_without_noise": 0,
                             "min_finite_epsilon": math.inf, "max_finite_epsilon": -math.inf}
            self._n_calls = 0
            self._randomizers_used = ()
        else:
            learner = self._learner.copy()  # a failed call must leave the state as it was
        randomizer = self._resolve_randomizer(weights, sample_epsilon is not None)
        sampled = (LocalSampledCoordinateRandomizer(weights)
                   if randomizer == pf.SAMPLED_COORDINATE else None)
        pf.run_protocol(learner, X, y, epsilons, weights, self._exact_sampler(), loss=self.loss,
                        huber_threshold=float(self.epsilon_huber), intercept=self.fit_intercept,
                        sampled=sampled, sample_weight=sample_weight)
        self._learner = learner
        self.randomizer_ = randomizer
        used = getattr(self, "_randomizers_used", ())
        self._randomizers_used = used + ((randomizer,) if randomizer not in used else ())
        self.gradient_bound_ = float(learner.G)
        self.feature_weights_ = weights
        self._update_summary(epsilons)
        self._n_calls += 1
        self._publish(learner)
        self.privacy_ = self._guarantee(weights, fitting)

    def _resolve_randomizer(self, weights, per_user_budgets):
        """``randomizer``, with ``"auto"`` resolved by the public variance rule at ``epsilon``;
        Laplace when this call's users have their own budgets (a sampled report's magnitude
        tells its user's budget to a rung, ``doc/privacy.md`` 54.2)."""
        if self.randomizer != "auto":
            return self.randomizer
        better = sampled_is_better(weights, float(self.epsilon))
        if per_user_budgets:
            if better and pf.LAPLACE not in self.__dict__.get("_randomizers_used", ()):
                # Once per stream (a fit is one); parameters and the call's signature only.
                from ..exceptions import _warn_at_caller

                _warn_at_caller(
                    f"{type(self).__name__}(randomizer='auto') reports by the Laplace "
                    "randomiser because this call passes per-user sample_epsilon (a sampled "
                    "report's magnitude would tell its user's budget), although at "
                    f"epsilon={float(self.epsilon):g} the sampled-coordinate randomiser has "
                    "the smaller variance; its reports can be much noisier (an outside "
                    "trial: R^2 -0.07 to -0.14 against 0.13-0.17). Pass "
                    "randomizer='sampled_coordinate' if every user's budget is the same or "
                    "public, or drop sample_epsilon to use epsilon for everyone.",
                    UserWarning)
            return pf.LAPLACE
        return pf.SAMPLED_COORDINATE if better else pf.LAPLACE

    def _update_summary(self, epsilons):
        finite = epsilons[np.isfinite(epsilons)]
        s = dict(self._summary)
        s["n_users"] += int(epsilons.shape[0])
        s["n_without_noise"] += int(epsilons.shape[0] - finite.shape[0])
        if finite.size:
            s["min_finite_epsilon"] = min(s["min_finite_epsilon"], float(finite.min()))
            s["max_finite_epsilon"] = max(s["max_finite_epsilon"], float(finite.max()))
        self._summary = s
        self.sample_epsilon_summary_ = {
            k: (v if math.isfinite(v) else math.nan) if isinstance(v, float) else v
            for k, v in s.items()
        }

    def _publish(self, learner):
        weights = learner.average() if self.average else learner.predict()
        n_features = self.n_features_in_
        self.coef_ = weights[:n_features].copy()
        self.intercept_ = float(weights[n_features]) if self.fit_intercept else 0.0
        self.t_ = int(learner.t)

    def _guarantee(self, weights, fitting):
        """``privacy_`` from the spec of the users' budgets so far (local reports)."""
        s = self._summary
        n_private = s["n_users"] - s["n_without_noise"]
        public = np.flatnonzero(weights == 0)
        spec = self._local_spec(s["max_finite_epsilon"] if n_private else -math.inf,
                                bool(public.size))
        used = getattr(self, "_randomizers_used", ()) or (self.randomizer_,)
        mechanism = _MECHANISMS[used[0]]
        if len(used) > 1:     # a stream whose calls resolved "auto" differently
            mechanism = ("the users of this stream's calls reported through two randomisers: "
                         + "; ".join(_MECHANISMS[r] for r in used))
        if not n_private:
            mechanism = "none: every user chose epsilon=inf (no noise)"
        elif public.size:
            mechanism += (
                f"; coordinates {public.tolist()} are public (weight 0, no noise) and carry "
                "sign(residual) x_j, which depends on y: each user's private coordinates are "
                "epsilon_t-LDP given them, but there is no replace-one guarantee for the row"
            )
        records = (
            f"every row passed to fit and to the partial_fit calls since, each a user who "
            f"reported once ({n_private} with a finite epsilon_t, covered by their own "
            f"epsilon_t <= epsilon; {s['n_without_noise']} chose epsilon_t=inf, no guarantee)"
        )
        return spec.guarantee(
            mechanism=mechanism,
            released=(
                "coef_ and intercept_ after every call, post-processing of the users' noisy "
                "reports (the learner sees nothing else)"
            ),
            n_releases=self._n_calls, n_records=s["n_users"], records=records,
        )
