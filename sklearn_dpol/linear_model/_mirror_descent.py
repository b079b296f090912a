"""PrivateMirrorDescentRegressor: noisy mirror descent over a public set (seed 004, Alg. 1)."""

import math
from numbers import Integral, Real
from types import MappingProxyType

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_features, check_is_fitted
from .._validate import validate_data

from .._auto_bounds import AUTO_GRID, AutoBoundsMixin
from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
)
from .._core import losses
from .._core import mirror_descent as md
from .._core._weights import canonical_csr, check_unit_sample_weight
from .._verbose import current_progress, reports_release
from ..privacy import PrivacyAccountant, PrivacyCost, PrivacyGuarantee, gaussian_mu
from ..privacy._spec import (
    Part,
    PrivacySpec,
    gaussian_spec,
    objective_perturbation_refusal,
    stream_regime,
)
from ._dask_fit import check_mirror_descent_dask_fit, is_dask_array, mirror_descent_data
from ._igd import _sparse_format

_NEIGHBOURS = "replace-one"
AUTO = "auto"
MIRROR_DESCENT = "mirror_descent"
OBJECTIVE_PERTURBATION = "objective_perturbation"
#: Public prior of objective perturbation's ``alpha="auto"`` (:func:`default_alpha`): the
#: signal ``<theta*, x>`` has standard deviation ``OP_SIGNAL_FRACTION * y_bound``; the
#: 1/4 was chosen on synthetic tasks only (``benchmarks/bench_op_alpha.py``).
OP_SIGNAL_FRACTION = 0.25


class PrivateMirrorDescentRegressor(AutoBoundsMixin, PrivateEstimatorMixin, RegressorMixin,
                                    BaseEstimator):
    """Convex regression over a public set, trained by differentially private mirror descent.

    Minimises ``(1/n) sum_i f(<x_i, w> + b - y_i)`` for the squared, absolute
    or Huber loss ``f``, subject to ``w`` in an L2, L1 or group-L1 ball or a
    simplex of ``radius`` and ``b`` in ``[-y_bound, y_bound]``, after clipping
    every row of ``X`` to L2 norm ``data_norm`` and every target to
    ``[-y_bound, y_bound]``. Each step adds Gaussian noise to the full-batch
    gradient and takes a mirror step with a potential matched to the set
    (Talwar, Thakurta and Zhang 2015, Algorithm 1, with exact Gaussian DP
    accounting instead of strong composition); the model is the average
    iterate. ``solver="objective_perturbation"`` instead solves a randomly
    perturbed, regularised problem once and projects the solution on the set;
    the default ``solver="auto"`` takes it where it was measured better (a
    smooth loss on the L2 ball, dense ``X``), mirror descent elsewhere.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, ``> 0``; ``np.inf`` adds no noise (plain mirror descent).
    delta : float, default=1e-6
        Privacy parameter delta in ``(0, 1)``; take it well below ``1/n``.
    loss : {"squared", "absolute", "huber"}, default="squared"
        Loss of the residual ``r = <x, w> + b - y``: ``r^2 / 2``, ``|r|``, or
        Huber with threshold ``epsilon_huber``.
    epsilon_huber : float, default=1.0
        Threshold of the Huber loss, ``> 0`` (its derivative bound).
    constraint : {"l2", "l1", "simplex", "group_l1"}, default="l2"
        The set of ``w``: ``||w||_2 <= radius``, ``||w||_1 <= radius``,
        ``{w >= 0, sum w = radius}``, or ``sum_g ||w_g||_2 <= radius`` over
        consecutive groups of ``group_size`` features.
    radius : float or "auto", default="auto"
        Size of the set, ``> 0``. ``"auto"``: the public rule ``radius_ = c *
        y_bound_ / data_norm_``: as ``|<x, w>| <= data_norm ||w||_2``, the L2
        ball holds the models whose predictions reach ``c`` times the target
        bound; on the L1 and group-L1 balls with the huber or absolute loss
        the row bound is ``data_norm_ / sqrt(k)`` (``k``: ``d``, or the number
        of groups), the dual norm of a row spread evenly, so the ball is the
        smallest one holding that L2 ball; ``data_norm_ / k^(1/4)`` with the
        squared loss (whose noise grows with the radius) and on the simplex
        (``AUTO_RADIUS_DUAL_EXPONENTS``); ``c = 3.4 (noise /
        noise_ref)^(-1/3)`` in ``[0.5, 16]``, ``noise = sqrt(d) / (n mu*(epsilon, delta))`` (``n``, ``d``:
        the fit's shape, or a stream's first call's; ``noise_ref`` at ``n =
        20,000``, ``d = 10``, ``epsilon = 1``): a larger ball when the noise
        is smaller. It reads the shape, the budget and the bounds in use only
        (public values, or the released quantiles of ``"auto"`` bounds: no
        budget), scales like the coefficients (``1/k`` when ``X`` is scaled
        by ``k``, ``k`` when ``y`` is), and its constants were chosen for the
        L2 ball on synthetic data (``benchmarks/bench_radius_rule.py``;
        ``doc/privacy.md``, "radius='auto' that tracks the noise"). A radius from
        public knowledge is better when there is one, and the simplex (whose
        coefficients sum to exactly ``radius``) needs one.
    group_size : int or None, default=None
        Features per group for ``constraint="group_l1"`` (the last group may be
        shorter); required there, ignored otherwise.
    data_norm : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Rows of ``X`` are clipped to this L2 norm. Set it from public
        knowledge, never from the data. ``"auto"``: ``AUTO_DATA_NORM_SHARE``
        (10%) of ``epsilon`` buys a private 0.98-quantile of the row norms
        over a public grid (exponential mechanism), resolved into
        ``data_norm_``; the mirror descent (or objective perturbation) gets
        the rest of the budget, ``(epsilon - epsilon_q, delta)``, by basic
        composition (``doc/privacy.md``, "data_norm='auto' and y_bound='auto'
        for mirror descent"). Refused by ``fit`` on a dask array.
        ``partial_fit`` draws it from the stream's first batch (or keeps the
        ``fit``'s).
    y_bound : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Targets are clipped to ``[-y_bound, y_bound]``, which is also the
        public interval of the intercept. ``"auto"``: ``AUTO_Y_BOUND_SHARE``
        (10%) of ``epsilon`` buys a private 0.98-quantile of ``|y|`` (same
        mechanism and grid as ``data_norm="auto"``), resolved into
        ``y_bound_``; with both ``"auto"`` each quantile takes its own 10%.
    fit_intercept : bool, default=True
        Fit an intercept in ``[-y_bound, y_bound]`` with its own Euclidean
        potential (the set is the product of the two). No centring is done.
    max_iter : int or None, default=None
        Noisy steps per call, each one pass over the batch (a full-batch
        gradient; ``max_iter`` counts passes over the training set in every
        estimator of the library). ``None`` takes a public rule (resolved into
        ``max_iter_``, ``doc/privacy.md`` section 8.11): the fewest steps at
        which the proven excess-risk bound reaches its floor (for the squared
        and Huber losses on the L2 ball or simplex, ``T_s = (2 beta mu / s)
        sqrt(Psi_max / (c B))``, linear in ``n mu``; otherwise the count of
        Theorem 3.2 re-derived for the exact noise), softly capped by a
        compute budget: ``soft_max(2000 + n p^2 / s, 2e9 / s)`` steps for the
        squared loss (which steps on the Gram matrix, ``s = p^2 + p + 400``
        multiply-adds a step), ``soft_max(2000, 2e9 / (n p))`` for the others,
        at most 1,000,000. It is a continuous function of ``n``,
        ``p``, ``epsilon``, ``delta`` and the bounds only (no data), and the
        work it implies never drops as ``n`` grows. ``epsilon=inf`` takes the
        cap. The noise grows with ``sqrt(max_iter)``.
    step_size : float or None, default=None
        The mirror step ``eta``; ``None`` takes the one that minimises the
        theorem's bound for the chosen ``max_iter`` or, for the smooth losses
        (squared, Huber) on the L2 ball, L1 ball and simplex, the step of the
        smooth-loss bound (``eta <= c / (2 beta)``, no worst-case gradient
        term) when that bound is smaller (``doc/privacy.md`` section 8.6).
    solver : {"auto", "mirror_descent", "objective_perturbation"}, default="auto"
        ``"objective_perturbation"`` supports the squared and Huber losses only
        (dense or sparse ``X``: CSR through sparse products, never densified;
        at most 4096 columns with the intercept's, refused before the read).
        ``"auto"``: a public rule on the call's parameters and the format and
        width of ``X`` (never its values), resolved into ``solver_``: ``fit``
        takes ``"objective_perturbation"`` for the squared or Huber loss on
        ``constraint="l2"`` with ``max_iter`` and ``step_size`` left at
        ``None``, a finite ``epsilon``, ``delta >= 1e-300`` and dense in-memory
        ``X`` of at most 4096 columns with the intercept's; ``"mirror_descent"``
        otherwise (the absolute loss, the L1, group-L1 and simplex sets,
        ``epsilon=inf``, sparse ``X``, a dask array, a wider ``X``).
        ``partial_fit`` streams by mirror descent (objective perturbation would
        solve each batch afresh). Measured at defaults with only the budget
        and public bounds passed (test R^2, 10 seeds,
        ``benchmarks/bench_defaults.py --parts md_solver``): mirror descent /
        objective perturbation 0.068 / 0.133, 0.348 / 0.439, 0.475 / 0.535,
        0.573 / 0.602 on cal_housing at epsilon 0.1 / 0.5 / 1 / 2, and 0.079 /
        0.074, 0.151 / 0.165, 0.187 / 0.200, 0.219 / 0.235 on protein (within
        about one standard error); on the L1 ball of ``python -m sklearn_dpol``
        neither dominates (mirror descent wins at epsilon 0.1, objective
        perturbation from 0.5), and mirror descent, built for the set, stays. The
        charge is ``(epsilon, delta)`` either way; objective perturbation's has
        no GDP ``mu``. Private selection
        (:class:`~sklearn_dpol.model_selection.PrivateHyperparameterSearch`)
        plans and fits ``"auto"`` candidates with ``"mirror_descent"``: it
        composes zCDP ``rho``, which objective perturbation does not have.
    alpha : float or "auto", default="auto"
        Ridge strength (mean form) of objective perturbation; unused by mirror
        descent. It penalises the coefficients of the unit scale, ``coef_ *
        data_norm_`` and the intercept (``doc/privacy.md`` section 55), so the
        same ``alpha`` means the same fit in every unit of ``X``. ``"auto"`` (resolved into ``alpha_``, ``doc/privacy.md``
        section 8.11) balances the regularisation's bias against the noise's
        effect when the data add no curvature: ``Lambda = n alpha =
        sqrt(k) sigma_0 / ||theta||_max`` with ``k`` the number of coefficients
        (intercept included), ``sigma_0`` the noise of the smallest admissible
        ``Lambda`` and ``||theta||_max = sqrt((radius data_norm)^2 +
        y_bound^2)`` (without the ``y_bound`` term when there is no intercept):
        public values only.
    tol : float or None, default=None
        Relative tolerance of the objective perturbation solver: it certifies a
        gradient norm of at most ``tol n L R`` (``None``: ``1e-10``). Only
        utility depends on it (the output noise scales with it); values below
        what float64 rounding can certify (about ``1e-11``) are refused.
        Unused by mirror descent.
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
        The released coefficients (the average iterate).
    intercept_ : float
        The released intercept; ``0.0`` when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    radius_ : float
        The radius in use: ``radius``, or its public rule for ``radius="auto"``.
    solver_ : str
        The solver of the last call: ``solver``, or the rule of ``"auto"``
        (``"objective_perturbation"`` or ``"mirror_descent"``).
    max_iter_ : int
        Steps chosen for the last call (``max_iter``, or the resolved rule of
        ``max_iter=None``; the parameter itself is never changed).
    n_iter_ : int
        Steps taken in the last call (always ``max_iter_``: stopping on the
        data would leak); 1 for objective perturbation.
    step_size_ : float
        The mirror step of the last call (``nan`` for objective perturbation).
    alpha_ : float
        The ridge strength (mean form) objective perturbation used in the last
        call: ``alpha``, or its resolved rule for ``alpha="auto"``, raised if
        needed to meet the curvature condition or to certify the tolerance
        (public values; ``nan`` for mirror descent).
    noise_scale_ : float
        Gaussian standard deviation per gradient coordinate in the last call.
        Like ``sensitivity_``, ``lipschitz_`` and ``alpha_``, in the *unit
        scale* the fit computes in: the clipped rows divided by ``data_norm_``
        (norm at most 1) and the coefficients multiplied by it, so that the fit
        does not depend on the units of ``X`` (``doc/privacy.md`` section 55);
        the same numbers as in the units of ``X`` when ``data_norm_ = 1``.
    sensitivity_ : float
        Replace-one L2 sensitivity ``2 L / n`` of the mean gradient in the last
        call; for objective perturbation, ``2 L R`` of the summed gradient.
    lipschitz_ : float
        ``L``, the L2-Lipschitz constant of one record's loss on the set
        (``Lf sqrt(2)`` with intercept: unit rows and the constant feature 1).
    gaussian_width_ : float
        Gaussian width of the symmetrised unit set (``nan`` for objective perturbation).
    data_norm_ : float
        The row bound used: ``data_norm``, or its private quantile for
        ``data_norm="auto"`` (released, covered by ``privacy_``).
    y_bound_ : float
        The target bound used: ``y_bound``, or its private quantile for
        ``y_bound="auto"`` (released, covered by ``privacy_``).
    privacy_ : PrivacyGuarantee
        The guarantee covering what has been released.

    See Also
    --------
    sklearn.linear_model.SGDRegressor : The non-private stochastic gradient regressor.
    sklearn.linear_model.HuberRegressor : The non-private Huber regression.
    PrivateFrankWolfeLasso : Private Frank-Wolfe over an L1 ball.
    PrivateQFTLRegressor : Private ridge regression on released statistics.

    Notes
    -----
    Privacy is per record under replace-one neighbours; ``n`` is public. The
    ``max_iter_`` noisy gradients are ``mu*``-GDP together (adaptive GDP
    composition) with ``mu* = gaussian_mu(epsilon, delta)``, and the model is
    a function of them, so ``fit`` is ``(epsilon, delta)``-DP for its records.
    Each ``partial_fit`` call runs the same private algorithm on its batch only,
    warm-started from the released model (public), and is ``(epsilon, delta)``-DP
    for the records of that batch. Batches are disjoint, so every record is
    covered by ``(epsilon, delta)`` through the one call that contained it, and
    the whole sequence of releases is ``(epsilon, delta)``-DP per record
    (parallel composition, which also holds when later batches are chosen after
    seeing earlier releases). A record passed to ``k`` calls is exposed ``k``
    times and its guarantee composes. With ``solver="objective_perturbation"``
    (explicitly: ``"auto"`` streams by mirror descent)
    each call solves its batch afresh (no warm start), so the model reflects
    the last batch only; the guarantee is the same. The derivation is in
    ``doc/privacy.md``, sections 7 and 8.

    References
    ----------
    K. Talwar, A. Thakurta and L. Zhang. Nearly optimal private LASSO.
    NeurIPS 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateMirrorDescentRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 10)) / np.sqrt(10)
    >>> y = np.clip(2 * X[:, 0] - 2 * X[:, 1] + 0.05 * rng.normal(size=20000), -1, 1)
    >>> model = PrivateMirrorDescentRegressor(loss="huber", constraint="l1", radius=4.0,
    ...                                       random_state=0).fit(X, y)
    >>> model.solver_      # "auto" on the L1 ball: mirror descent
    'mirror_descent'
    >>> model.max_iter_
    10004
    >>> float(np.abs(model.coef_).sum()) <= 4.0
    True
    >>> model.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [DELTA_CONSTRAINT],
        "loss": [StrOptions(set(md.LOSSES))],
        "epsilon_huber": [POSITIVE],
        "constraint": [StrOptions(set(md.CONSTRAINTS))],
        "radius": [POSITIVE, StrOptions({"auto"})],
        "group_size": [Interval(Integral, 1, None, closed="left"), None],
        "data_norm": [POSITIVE, StrOptions({"auto"}), None],
        "y_bound": [POSITIVE, StrOptions({"auto"}), None],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "step_size": [POSITIVE, None],
        "solver": [StrOptions({AUTO, MIRROR_DESCENT, OBJECTIVE_PERTURBATION})],
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tol": [POSITIVE, None],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "delta", "loss", "epsilon_huber", "constraint", "radius", "group_size",
        "data_norm", "y_bound", "fit_intercept", "solver", "alpha",
    )
    _DEFAULT_BOUNDS = ("data_norm", "y_bound")
    _private_state = ("_rng",)
    #: The solver private selection plans and fits ``solver="auto"`` with: its candidates
    #: compose zCDP ``rho``, which objective perturbation does not have
    #: (``model_selection/_candidates.py::selection_solver``).
    _selection_solver = MIRROR_DESCENT
    # data_norm="auto", y_bound="auto": private quantiles (``_auto_bounds.py``).
    _auto_bound_params = ("data_norm", "y_bound")
    #: radius="auto": ``radius_ = c * y_bound_ / data_norm_``, ``c = 3.4 (noise /
    #: noise_ref)^(-1/3)`` in ``[0.5, 16]`` (``_auto_bounds.auto_radius_factor``; chosen on
    #: synthetic data, ``benchmarks/bench_radius_rule.py --parts sweep-md``).
    AUTO_RADIUS_FACTOR = 3.4
    AUTO_RADIUS_SLOPE = 1 / 3
    AUTO_RADIUS_RANGE = (0.5, 16.0)
    #: radius="auto" on the L1, group-L1 balls and the simplex: the row bound in the set's
    #: dual norm is taken as ``data_norm_ / k^a``, ``k = d`` (L1, simplex) or the number of
    #: groups (group-L1), ``a`` = (squared loss, huber or absolute loss) below; ``a = 1/2``
    #: is the dual norm of a row of L2 norm ``data_norm_`` spread evenly (the noise of the
    #: bounded-derivative losses does not grow with the radius; the squared loss's does, and
    #: the simplex fixes the coefficients' sum). Measured on synthetic data:
    #: ``benchmarks/bench_radius_rule.py --parts dual-md`` (``_dual_row_bound``).
    AUTO_RADIUS_DUAL_EXPONENTS = MappingProxyType({
        md.L1: (0.25, 0.5), md.GROUP_L1: (0.25, 0.5), md.SIMPLEX: (0.25, 0.25)})

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        loss="squared",
        epsilon_huber=1.0,
        constraint="l2",
        radius="auto",
        group_size=None,
        data_norm=None,
        y_bound=None,
        fit_intercept=True,
        max_iter=None,
        step_size=None,
        solver="auto",
        alpha="auto",
        tol=None,
        random_state=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.epsilon_huber = epsilon_huber
        self.constraint = constraint
        self.radius = radius
        self.group_size = group_size
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.step_size = step_size
        self.solver = solver
        self.alpha = alpha
        self.tol = tol
        self.random_state = random_state
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Clipping to public bounds and the noise cost accuracy on the checks' data.
        tags.regressor_tags.poor_score = True
        # CSR through sparse kernels and products, both solvers (other formats
        # converted).
        tags.input_tags.sparse = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)`` from the potential's centre and release one model.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``. Sparse input is
            used as CSR (sparse kernels, never densified; the same model as the
            dense input; both solvers).
            A dask array (dense blocks, at most 4096 columns; ``loss="squared"``
            with ``solver="mirror_descent"`` or ``"auto"``) is clipped and reduced to its Gram
            statistics on the workers, and the noisy steps run once on the
            driver: the same model and guarantee as in memory
            (``doc/integrations.md``, "fit on a dask array"); ``sample_weight``
            must then be a NumPy array.
        y : array-like or dask array of shape (n_samples,)
            Targets; clipped to ``y_bound``.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in the public range ``[0, 1]`` multiplying each record's
            loss (the guarantee is unchanged: ``doc/privacy.md``, "Sparse input
            and sample weights for mirror descent"); ``None`` weighs every
            record 1. Weights in ``[0, c]`` for a public ``c`` can be divided by
            ``c``. ``solver="objective_perturbation"`` takes them too
            (``doc/privacy.md``, "Sample weights in objective perturbation").

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._warn_default_bounds()
        return self._release_fit(X, y, reset=("coef_", "intercept_"),
                                 sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, sample_weight=None):
        """Run the private algorithm on one batch, warm-started from the released model.

        With ``solver="objective_perturbation"`` the batch is solved afresh
        (the previous model is replaced); ``solver="auto"`` takes mirror
        descent here, warm-started.

        The call is ``(epsilon, delta)``-DP for the records of this batch; as
        every record belongs to one call, the stream is ``(epsilon, delta)``-DP
        per record (parallel composition, see Notes of the class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch; rows are clipped to ``data_norm``. Sparse input is used as
            CSR, for both solvers.
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

    def _dual_row_bound(self, row_bound, n_features):
        """``radius="auto"``'s bound on a row's dual norm of the set (public: ``d``, the set).

        ``row_bound / k^a`` (``AUTO_RADIUS_DUAL_EXPONENTS``) on the L1, group-L1 and
        simplex sets, ``row_bound`` on the L2 ball (``doc/privacy.md``, "radius='auto' on
        the L1 and group-L1 balls").
        """
        exponents = self.AUTO_RADIUS_DUAL_EXPONENTS.get(self.constraint)
        if n_features is None or exponents is None:
            return row_bound
        exponent = exponents[0] if self.loss == md.SQUARED else exponents[1]
        k = int(n_features)
        if self.constraint == md.GROUP_L1:
            k = -(-k // int(self.group_size))   # the number of groups
        return row_bound / float(max(k, 1)) ** exponent

    def _more_validate_params(self):
        if self.constraint == md.GROUP_L1 and self.group_size is None:
            raise ValueError("constraint='group_l1' needs group_size, the number of "
                             "consecutive features per group (an integer >= 1).")
        if self.solver == OBJECTIVE_PERTURBATION and self.loss == md.ABSOLUTE:
            raise ValueError("solver='objective_perturbation' needs a smooth loss "
                             "('squared' or 'huber'); the absolute loss has no bounded "
                             "curvature. Use solver='mirror_descent'.")
        # An "auto" bound (unresolved, or about to be redrawn) at both ends of its range.
        for radius, row_bound, y_bound in self._bound_cases(True):
            md.check_bounds(self.loss, float(self.epsilon_huber), radius, row_bound, y_bound,
                            self.fit_intercept, unit_scale=True)

    def _fit_solver(self, X=None):
        """The solver ``fit`` uses: ``solver``, or the public rule of ``"auto"``.

        ``"auto"`` is ``"objective_perturbation"`` for the squared or Huber loss on
        the L2 ball (``constraint="l2"``), ``max_iter`` and ``step_size`` left to
        their rules (``None``: mirror descent's own knobs, which objective
        perturbation would ignore), a finite ``epsilon``, ``delta`` at least
        objective perturbation's ``MIN_DELTA``, and dense in-memory ``X`` of at most
        ``MAX_COLUMNS`` columns with the intercept's; ``"mirror_descent"``
        otherwise (sparse ``X``, a dask array, a wider ``X``). Only public
        properties of the call enter: the parameters, the *format* of ``X`` (type
        checks) and its number of columns (its shape), never a value. ``X=None``
        (no data yet) plans for dense ``X`` within the column limit. Private
        selection plans and fits its candidates with ``_selection_solver``
        instead (``model_selection/_candidates.py``).
        """
        if self.solver != AUTO:
            return self.solver
        if (self.loss not in (md.SQUARED, md.HUBER) or self.constraint != md.L2
                or self.max_iter is not None or self.step_size is not None):
            return MIRROR_DESCENT
        from .._core import objective_perturbation as op

        if math.isinf(float(self.epsilon)) or not float(self.delta) >= op.MIN_DELTA:
            return MIRROR_DESCENT
        if X is None:
            return OBJECTIVE_PERTURBATION
        if is_dask_array(X) or _sparse_format(X):
            return MIRROR_DESCENT
        try:
            width = _num_features(X)   # the shape (public), never a value
        except TypeError:   # not 2-D: validation refuses it, whichever the solver
            return OBJECTIVE_PERTURBATION
        if width + int(self.fit_intercept) > op.MAX_COLUMNS:
            return MIRROR_DESCENT
        return OBJECTIVE_PERTURBATION

    def _call_solver(self, X=None, fitting=True):
        """The solver of a ``fit`` (:meth:`_fit_solver`) or of a ``partial_fit`` call:
        ``"auto"`` streams by mirror descent (objective perturbation would solve every
        batch afresh, forgetting the stream); an explicit ``solver`` is kept."""
        if fitting:
            return self._fit_solver(X)
        return MIRROR_DESCENT if self.solver == AUTO else self.solver

    def _continues_objective_perturbation(self):
        """Whether a ``partial_fit`` call continues a stream one of whose releases was made
        by objective perturbation (a ``solver="auto"`` fit): public state."""
        return (hasattr(self, "coef_")
                and OBJECTIVE_PERTURBATION in self.__dict__.get("_stream_solvers", ()))

    def _privacy_spec(self, X=None, *, fitting=True, solver=None, **_):
        """``(epsilon, delta)`` per call: one release, or parallel over a stream's batches.

        Noisy mirror descent composes to at most ``mu*(epsilon, delta)`` (GDP);
        objective perturbation meets ``(epsilon, delta)`` without a GDP ``mu``
        and has no zCDP ``rho``. ``solver``: the solver of the call planned (by
        default :meth:`_call_solver` of ``X``; the call's own ``privacy_`` passes
        ``solver_``). A mirror-descent stream continuing a ``solver="auto"`` fit made
        by objective perturbation covers that fit's records too, at ``(epsilon,
        delta)`` without ``mu``: its spec is objective perturbation's.
        """
        regime = stream_regime(fitting, parallel=True)
        if solver is None:
            solver = self._call_solver(X, fitting)
        mixed = (not fitting and solver == MIRROR_DESCENT
                 and self._continues_objective_perturbation())
        if solver == OBJECTIVE_PERTURBATION or mixed:
            refusal = objective_perturbation_refusal(type(self).__name__)
            part = ("the objective-perturbation model" if not mixed else
                    "the objective-perturbation fit's model and the stream's models")
            if self._any_auto_bound():
                return self._spec_with_quantiles(regime, (Part(part),), no_rho=refusal)
            return PrivacySpec(regime, self.epsilon, self.delta, no_rho=refusal)
        if self._any_auto_bound():
            return self._spec_with_quantiles(
                regime, (Part.gaussian("the noisy mirror-descent gradients",
                                       self._budget_split()[2]),))
        return gaussian_spec(self.epsilon, self.delta, regime)

    def _partial_fit(self, X, y, *, fitting, sample_weight=None):
        first_call = fitting or not hasattr(self, "coef_")
        # The public rule, on the raw input the accountant's plan saw (its format and
        # width, never its values): a fitted attribute; ``solver`` keeps "auto".
        self.solver_ = self._call_solver(X, fitting)
        if fitting and is_dask_array(X):  # the Gram statistics reduced on the workers
            self._refuse_auto_bounds_on_dask("the Gram statistics are")
            dask_input = check_mirror_descent_dask_fit(self, X, y, sample_weight)  # public
            shape = (dask_input.n_rows, dask_input.n_features)   # a fit: a first call
            md.check_bounds(self.loss, float(self.epsilon_huber), self._radius(shape=shape),
                            self._data_norm(), self._y_bound(), self.fit_intercept,
                            dask_input.n_rows, unit_scale=True)
            self._mark_data_read()  # failures from here on are charged
            self.data_norm_, self.y_bound_ = self._data_norm(), self._y_bound()
            self.radius_ = self._release_radius(shape)
            self._mirror_descent_release(mirror_descent_data(self, dask_input), None, True,
                                         n_rows=dask_input.n_rows)
            n_rows = dask_input.n_rows
        else:
            n_rows = self._in_memory_release(X, y, first_call, sample_weight, fitting)
        if first_call:
            self._stream_records, self._stream_calls = 0, 0
            self._stream_solvers = ()
        # The solvers of the stream's releases (public): a solver="auto" fit by objective
        # perturbation followed by mirror-descent calls has no GDP mu (_privacy_spec).
        self._stream_solvers = tuple(sorted(
            set(self.__dict__.get("_stream_solvers", ())) | {self.solver_}))
        self._stream_records += n_rows
        self._stream_calls += 1
        self.privacy_ = self._guarantee(fitting)

    def _in_memory_release(self, X, y, first_call, sample_weight, fitting=True):
        """Validate ``(X, y)`` and release the model of one call; returns the row count."""
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], order="C",
                             accept_sparse="csr", y_numeric=True, reset=first_call)
        X = canonical_csr(X)
        sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
        y = np.asarray(y, dtype=np.float64)
        # "auto" bounds: a fit draws new quantiles, a stream's first call too
        # (later calls keep the released ones). Public checks only, before reading.
        resolve_bounds = self._any_auto_bound() and (fitting or self._unresolved_auto_bounds())
        if resolve_bounds:
            self._check_auto_bounds_public(X.shape[0])
            # The Gram statistics' underflow check, at the smallest candidates (it
            # grows with the bounds): decided before the quantiles are drawn.
            md.check_gram_statistics(
                X.shape[0], float(AUTO_GRID[0]) if self._auto_norm() else self._data_norm(),
                float(AUTO_GRID[0]) if self._auto_y() else self._y_bound())
        shape = self._radius_shape(X.shape[0], X.shape[1], first_call)
        for radius, row_bound, y_bound in self._bound_cases(resolve_bounds, shape):
            md.check_bounds(self.loss, float(self.epsilon_huber), radius, row_bound, y_bound,
                            self.fit_intercept, X.shape[0], unit_scale=True)
        if self.solver_ == OBJECTIVE_PERTURBATION:
            from .._core import objective_perturbation as op

            op.check_public(float(self.epsilon), float(self.delta),
                            X.shape[1] + int(self.fit_intercept))   # public: no data read
            if not resolve_bounds:
                self._check_objective_tolerance(*X.shape, shape, sample_weight is not None)  # public
        elif not first_call:
            # The stream's start is the released coef_ (public): a start outside the set
            # is refused here, before the read, and refunded (doc/privacy.md 56.3).
            md.start_point(md.make_potential(self.constraint, X.shape[1], self.group_size),
                           self.coef_, self.intercept_, self._radius(), self._y_bound(),
                           self.fit_intercept)
        self._mark_data_read()  # failures from here on are charged
        if resolve_bounds:
            if fitting:
                self._forget_auto_bounds()   # a new fit draws its own quantiles
            self._resolve_auto_bounds(X, y, stream=not fitting)
        self.data_norm_, self.y_bound_ = self._data_norm(), self._y_bound()
        self.radius_ = self._release_radius(shape)   # "auto": the public rule, bounds in use
        if self.solver_ == OBJECTIVE_PERTURBATION:
            self._perturbed_objective_release(X, y, sample_weight)
        else:
            self._mirror_descent_release(X, y, first_call, sample_weight)
        return X.shape[0]

    def _mirror_descent_release(self, X, y, first_call, sample_weight=None, n_rows=None):
        """One mirror-descent release; ``X`` is the reduced Gram statistics
        (:func:`~sklearn_dpol._core.mirror_descent.gram_data_from_sums`) of
        ``n_rows`` records when ``n_rows`` is given (``fit`` on a dask array)."""
        run = dict(
            loss=self.loss,
            huber_threshold=float(self.epsilon_huber), constraint=self.constraint,
            radius=self._radius(), group_size=self.group_size,
            data_norm=self._data_norm(), y_bound=self._y_bound(),
            intercept=self.fit_intercept, epsilon=self._budget_split()[1],
            delta=float(self.delta), rng=self._rng, n_steps=self.max_iter,
            step_size=None if self.step_size is None else float(self.step_size),
            on_steps=current_progress(self).steps,
            unit_scale=True,   # rows / data_norm_: doc/privacy.md section 55
        )
        starts = (None if first_call else self.coef_, None if first_call else self.intercept_)
        if n_rows is not None:
            result = md.mirror_descent_on(X, n_rows, self.n_features_in_, *starts, **run)
        else:
            result = md.mirror_descent(X, y, *starts, sample_weight=sample_weight, **run)
        calibration = result.calibration
        self.coef_ = np.asarray(result.coef, dtype=np.float64)
        self.intercept_ = float(result.intercept)
        self.max_iter_ = self.n_iter_ = calibration.n_steps
        self.step_size_ = float(calibration.step_size)
        self.alpha_ = math.nan
        self.noise_scale_ = float(calibration.noise_scale)
        self.sensitivity_ = float(calibration.sensitivity)
        self.lipschitz_ = float(calibration.lipschitz)
        self.gaussian_width_ = float(calibration.gaussian_width)
        self._mechanism = _mirror_descent_description(calibration)
        self._mu = float(calibration.mu)
        self._epsilon_claim = float(calibration.epsilon)
        self._delta_claim = float(calibration.delta)

    def _objective_plan(self, n_samples, n_features, shape=None):
        """Objective perturbation's plan, its loss's derivative bound and the rows' norm
        bound, from public values and the bounds in use (released, if "auto");
        ``shape``: that of :meth:`_radius` (the last release's if ``None``).

        In the unit scale (``doc/privacy.md`` section 55): the rows divided by
        ``data_norm_`` (norm at most 1), the radius multiplied by it; the intercept's
        constant feature 1 is then of the rows' size in every unit of ``X``."""
        from .._core import objective_perturbation as op

        y_bound = self._y_bound()
        md.check_bounds(self.loss, float(self.epsilon_huber), self._radius(shape=shape),
                        self._data_norm(), y_bound, self.fit_intercept, n_samples,
                        unit_scale=True)
        radius, data_norm = md.unit_bounds(self._radius(shape=shape), self._data_norm())
        epsilon = self._budget_split()[1]   # after the "auto" bounds' quantiles, if any
        # The Huber continuation of the squared loss at its derivative bound on the
        # set equals it there and has a bounded derivative everywhere.
        derivative = md.derivative_bound(self.loss, float(self.epsilon_huber), radius,
                                         data_norm, y_bound, self.fit_intercept)
        feature_norm = losses.augmented_norm(data_norm, 1.0 if self.fit_intercept else 0.0)
        alpha = self.alpha
        if alpha == "auto":
            alpha = default_alpha(epsilon, float(self.delta), n_samples=n_samples,
                                  n_features=n_features, radius=radius, y_bound=y_bound,
                                  intercept=self.fit_intercept, feature_norm=feature_norm,
                                  derivative=derivative)
        plan = op.plan(epsilon, float(self.delta), n_samples=n_samples,
                       feature_norm=feature_norm, derivative_bound=derivative,
                       curvature_bound=1.0, alpha=float(alpha), n_problems=1)
        return plan, derivative, feature_norm

    def _check_objective_tolerance(self, n_samples, n_features, shape, weighted=False):
        """Refuse a ``tol`` the solve cannot certify, before the data is read (public)."""
        from .._core import objective_perturbation as op

        plan, _, _ = self._objective_plan(n_samples, n_features, shape)
        op.solve_regularization(plan, (n_samples, n_features + int(self.fit_intercept)),
                                tol=self.tol, weighted=weighted)

    def _perturbed_objective_release(self, X, y, sample_weight=None):
        from .._core import objective_perturbation as op

        n_samples, n_features = X.shape
        radius, data_norm, y_bound = self._radius(), self._data_norm(), self._y_bound()
        plan, derivative, feature_norm = self._objective_plan(n_samples, n_features)
        Z = _unit_design(op.clipped_design(X, data_norm), data_norm,
                         1.0 if self.fit_intercept else None)
        targets = np.clip(y, -y_bound, y_bound)[np.newaxis, :]
        theta = op.solve(Z, targets, loss="huber", threshold=derivative, plan=plan,
                         rng=self._rng, tol=self.tol, sample_weight=sample_weight)
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        # Back to the units of X (w = w' / data_norm_), then the projection on the
        # public set: post-processing of the private solution with public constants.
        self.coef_ = md.project(self.constraint, theta[:n_features] / data_norm, radius,
                                self.group_size)
        self.intercept_ = float(np.clip(theta[n_features], -y_bound, y_bound)) \
            if self.fit_intercept else 0.0
        self.max_iter_ = self.n_iter_ = 1
        self.step_size_ = math.nan
        # The ridge the solve used (public; at least the planned one, 54.16.4).
        import dataclasses

        plan = dataclasses.replace(plan, regularization=op.solve_regularization(
            plan, Z.shape, tol=self.tol, weighted=sample_weight is not None))
        self.alpha_ = float(plan.regularization / n_samples)
        self.noise_scale_ = float(plan.noise_std)
        self.sensitivity_ = float(plan.gradient_sensitivity)
        self.lipschitz_ = float(derivative * feature_norm)
        self.gaussian_width_ = math.nan
        self._mechanism = str(plan.description)
        self._mu = math.nan
        self._epsilon_claim = float(plan.epsilon)
        self._delta_claim = float(plan.delta)

    def _guarantee(self, fitting):
        """``privacy_`` from :meth:`_privacy_spec`, at the guarantee the calibration achieved."""
        released = (
            "coef_ and intercept_ after every call (the average mirror-descent iterate, "
            "a function of the noisy gradients), and the step count max_iter_"
            if self.solver_ == MIRROR_DESCENT else
            "coef_ and intercept_ after every call (the perturbed objective's minimiser "
            "projected on the public set)"
        )
        mechanism, achieved = self._mechanism, (self._epsilon_claim, self._delta_claim, self._mu)
        if (not fitting and self.solver_ == MIRROR_DESCENT
                and self._continues_objective_perturbation()):
            # The fit's records: objective perturbation's (epsilon, delta), no mu; the
            # spec's numbers (each call within them), not the last call's claim.
            mechanism = "the fit's objective perturbation, then per batch: " + mechanism
            achieved = None
        if self._any_auto_bound():
            # Basic composition with the quantiles: the spec's (epsilon, delta), no mu.
            released += self._quantile_released()
            if math.isfinite(self._budget_split()[1]):
                mechanism += self._quantile_mechanisms(fitting)
            achieved = None
        return self._privacy_spec(fitting=fitting, solver=self.solver_).guarantee(
            mechanism=mechanism, released=released, n_releases=self._stream_calls,
            n_records=self._stream_records, achieved=achieved,
        )

    def predict(self, X):
        """Predict from rows clipped to ``data_norm``, as in training.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], order="C",
                          accept_sparse="csr", reset=False)
        X = canonical_csr(X)
        scales = md.row_scales(X, self._data_norm())
        return np.asarray(X @ self.coef_).ravel() * scales + self.intercept_


def _unit_design(design, data_norm, intercept_value):
    """The clipped design of the unit scale: each row's clipping factor divided by the
    public ``data_norm`` (rows of norm at most 1: the factors aim ``4 (d + 2)`` ulps
    below the bound and the division rounds once), and the intercept's constant column.

    ``design`` is :func:`~sklearn_dpol._core.objective_perturbation.clipped_design`'s
    without intercept column. At ``data_norm = 1`` the design is the old one exactly."""
    scale = design.scale
    if data_norm != 1.0:
        scale = (np.ones(design.n_rows) if scale is None else scale) / data_norm
    # The design's own class: dense, or sparse (its stored entries only).
    return type(design)(design.X, scale, intercept_value)


def default_alpha(epsilon, delta, *, n_samples, n_features, radius, y_bound, intercept,
                  feature_norm, derivative):
    """``alpha="auto"`` of objective perturbation: public values only.

    The perturbed objective is ``sum_i f + (Lambda/2) ||theta||^2 + <b, theta>``
    with ``b ~ N(0, sigma^2 I_k)``; for the squared loss, a direction of the data
    with eigenvalue ``lambda`` (mean form) and coefficient ``theta_j`` costs
    ``lambda (alpha^2 theta_j^2 + s^2) / (2 (lambda + alpha)^2)`` of excess risk,
    ``alpha = Lambda / n``, ``s = sigma / n``. Two balances bracket the best ``alpha``:

    - whatever the spectrum (``lambda = alpha``, the worst case):
      ``Lambda_w = sqrt(k) sigma / T``, ``T^2 = radius^2 + y_bound^2``
      (``radius^2`` without intercept) bounding ``||theta*||^2``;
    - a flat spectrum sharing the signal variance ``V`` over the ``k`` directions:
      ``Lambda_f = k sigma^2 / (n V)``, with the public prior
      ``sqrt(V) = OP_SIGNAL_FRACTION * y_bound``.

    The rule takes ``Lambda = max(Lambda_w, sqrt(Lambda_w Lambda_f))``: the prior
    may only raise the ridge above the worst-case balance (by their geometric mean,
    where the noise dominates), never lower it; ``sigma`` is the noise of the plan
    at that ``Lambda`` (a fixed point,
    :func:`~sklearn_dpol._core.objective_perturbation.self_consistent_plan`), never
    below the curvature floor (``doc/privacy.md``, "objective perturbation's alpha
    at its own noise"). ``epsilon=inf``: the smallest positive ridge of the mean
    form, ``1e-10``. Returns ``alpha = Lambda / n``.
    """
    from .._core import objective_perturbation as op

    if math.isinf(epsilon):
        return 1e-10
    k = n_features + int(intercept)
    extent = math.hypot(radius, y_bound) if intercept else radius
    signal_variance = (OP_SIGNAL_FRACTION * y_bound) ** 2

    def rule(sigma):
        worst = op.worst_case_ridge(sigma, k, extent)
        flat = k * sigma * sigma / (n_samples * signal_variance)
        return max(worst, math.sqrt(worst * flat))

    plan = op.self_consistent_plan(
        epsilon, delta, n_samples=n_samples, feature_norm=feature_norm,
        derivative_bound=derivative, curvature_bound=1.0, rule=rule, n_problems=1)
    return plan.regularization / n_samples


def _mirror_descent_description(calibration):
    steps = calibration.n_steps
    if math.isinf(calibration.epsilon):
        return f"none: epsilon=inf runs {steps} noiseless mirror-descent steps"
    allowance = calibration.rounding_allowance
    paid = (f", calibrated on {1.0 + allowance:g} times it for the Gram path's rounding"
            if allowance else "")
    return (
        f"Gaussian noise (sigma={calibration.noise_scale:.4g}) on the mean gradient "
        f"(L2 sensitivity {calibration.sensitivity:.4g}{paid}) at each of T={steps} "
        f"mirror-descent steps, GDP-composed to mu={calibration.mu:.4g}"
    )
