"""PrivateIGDClassifier: private implicit gradient descent (seed 002, Alg. 2 and 3)."""

import math
import sys
from numbers import Integral

import numpy as np
from scipy.sparse import issparse
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import (
    _check_partial_fit_first_call,
    check_classification_targets,
)
from sklearn.utils.validation import check_is_fitted
from .._validate import jointly_typed, validate_data

from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    HORIZON_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
    check_max_calls,
)
from .._auto_bounds import AutoBoundsMixin
from .._core import ftrl, igd
from .._core import objective_perturbation as op
from .._core._clip import clip_row_scales
from .._core._weights import canonical_csr, check_unit_sample_weight
from .._core._threads import single_blas_thread
from .._verbose import current_progress, reports_release
from ..exceptions import PrivacyLeakWarning, _warn_at_caller
from ..privacy import PrivacyAccountant
from ..privacy._spec import (
    ONE_RELEASE,
    Part,
    PrivacySpec,
    gaussian_spec,
    objective_perturbation_refusal,
    stream_regime,
)
from ..privacy._streams import budget_schedule, check_rounding, stream_calls

_NEIGHBOURS = "replace-one"

#: ``alpha_ / L^2`` of a stream started with ``alpha="auto"`` or ``"seed"`` and
#: no horizon (no public ``n`` to resolve from); ``1e-3`` for ``L = 1``.
STREAM_ALPHA = 1e-3
#: Public prior on the size of a good model: ``|<w*, x>| <= LOGIT_SCALE`` for a
#: row at the bound, i.e. ``||w*|| = LOGIT_SCALE / L``.
LOGIT_SCALE = 10.0
#: ``alpha="auto"`` of ``solver="objective_perturbation"`` takes this multiple of
#: the worst-spectrum balance at its own noise; chosen on synthetic logistic tasks
#: only (``benchmarks/bench_igd_op_alpha.py``, doc/privacy.md section 47).
OP_BALANCE_FACTOR = 0.5


def auto_unit_intercept(n_features):
    """``intercept_scaling="auto"`` over ``data_norm_``: ``1 / sqrt(n_features)``.

    The constant feature is ``data_norm_ / sqrt(n_features)``, the root mean square
    coordinate of a row at the bound: in the units of ``X`` (unit-free, as
    ``data_norm_`` was), and it adds ``1/d``, not 1, to ``L^2 / data_norm_^2``. The
    intercept's noise enters every decision value times this value, so when the
    bound is loose (rows far inside it) ``data_norm_`` itself cost up to 0.14
    accuracy (``doc/privacy.md`` 55.16). One feature: exactly 1.0. Public: the
    width only.
    """
    n_features = int(n_features)
    return 1.0 if n_features <= 1 else 1.0 / math.sqrt(n_features)


def public_alpha(lipschitz, n_samples, mu, n_problems=1):
    """``alpha`` balancing output noise against regularisation bias (public values only).

    ``fit`` releases ``w + z`` with ``z ~ N(0, sigma^2 I)`` per problem,
    ``sigma = sqrt(K) 2 L / (alpha n mu)`` (``K`` one-vs-rest problems). For a
    loss with curvature at most ``1/4`` in the margin (log loss) and rows of
    norm at most ``L``, the noise adds at most ``E[z^T H z] / 2 <= L^2
    sigma^2 / 8`` to the expected risk; the regulariser biases it by about
    ``alpha ||w*||^2 / 2``. With the public prior ``||w*|| = LOGIT_SCALE / L``,
    ``alpha W^2 / 2 + L^2 sigma^2 / 8`` is smallest at

        ``alpha = (2 K L^6 / (LOGIT_SCALE^2 n^2 mu^2))^(1/3)``

    (``doc/privacy.md``, "Public tuning rules of QFTL and IGD"). It is at least
    ``L^2 / n``, the regularisation of the optimisation error of ``n`` steps
    (and the whole rule with ``mu = inf``).
    """
    L2 = float(lipschitz) * float(lipschitz)
    n = float(n_samples)
    floor = L2 / n
    if math.isinf(mu):
        return floor
    # Cube roots of each factor (products, not **: float ** raises OverflowError where
    # * gives inf; a public data_norm near 1e52 made L^6 overflow)
    balance = L2 * (2.0 * n_problems / (LOGIT_SCALE ** 2 * n * n * mu * mu)) ** (1.0 / 3.0)
    return max(balance, floor)


def objective_perturbation_alpha(epsilon, delta, *, n_samples, lipschitz, n_columns,
                                 n_problems=1):
    """``alpha="auto"`` of ``solver="objective_perturbation"``: public values only.

    The ridge ``Lambda = n alpha`` is :data:`OP_BALANCE_FACTOR` (1/2) times the
    worst-spectrum balance of objective perturbation, ``sqrt(k) sigma / T``
    (:func:`~sklearn_dpol._core.objective_perturbation.worst_case_ridge`, the one
    mirror descent's rule takes too), with ``k`` the columns of the clipped design
    (``d``, plus one with an intercept), the public prior ``T = LOGIT_SCALE / L`` on
    ``||w*||`` (as :func:`public_alpha`) and ``sigma`` the noise of the plan at that
    very ``Lambda`` (a fixed point,
    :func:`~sklearn_dpol._core.objective_perturbation.self_consistent_plan`, with
    the log loss's derivative bound 1 and curvature bound 1/4 and the ``K``
    one-vs-rest problems of the fit), never below the curvature floor
    (``doc/privacy.md``, "IGD's objective perturbation: alpha at its own noise").
    ``epsilon=inf`` (no noise): :func:`public_alpha`'s value there, ``L^2 / n``.
    Returns ``alpha = Lambda / n``.
    """
    lipschitz = float(lipschitz)
    if math.isinf(epsilon):
        return public_alpha(lipschitz, n_samples, math.inf, n_problems)
    extent = LOGIT_SCALE / lipschitz

    def rule(sigma):
        return OP_BALANCE_FACTOR * op.worst_case_ridge(sigma, n_columns, extent)

    plan = op.self_consistent_plan(
        epsilon, delta, n_samples=n_samples, feature_norm=lipschitz, derivative_bound=1.0,
        curvature_bound=op.CURVATURE[op.LOG_LOSS], rule=rule, n_problems=n_problems)
    return plan.regularization / n_samples


def horizon_alpha(lipschitz, horizon):
    """Seed 002's strong convexity for a non-strongly convex loss: ``L^2 / sqrt(T)``.

    Adding ``alpha/2 ||w||^2`` to a Lipschitz loss costs ``alpha T ||w*||^2 / 2``
    of regret over ``T`` steps and leaves the strongly convex regret
    ``O(L^2 log T / alpha)`` (noise included up to logarithms): ``alpha`` of
    order ``1 / sqrt(T)`` balances them, for ``O(sqrt(T))`` regret up to
    logarithms; ``L^2`` makes it scale-free (``||w*|| ~ 1 / L``).
    """
    return float(lipschitz) * float(lipschitz) / math.sqrt(float(horizon))


class PrivateIGDClassifier(AutoBoundsMixin, PrivateEstimatorMixin, ClassifierMixin,
                           BaseEstimator):
    """Linear classifier trained by differentially private implicit gradient descent.

    Each step solves the proximal problem
    ``argmin_w 1/2 ||w - w_t||^2 + eta_t (loss(y <w, z_t>) + alpha/2 ||w||^2)``
    exactly, with ``eta_t = 1 / (alpha t)`` (Jain, Kothari and Thakurta 2012,
    Algorithm 2). Rows are clipped to ``data_norm`` in L2, so one record moves
    the iterate after ``T`` steps by at most ``2 L k / (alpha (T + 1))`` where it
    appears ``k`` times, and ``fit``'s release adds Gaussian noise calibrated to
    that bound with the exact analytic Gaussian mechanism. ``partial_fit``
    streams by DP-FTRL (``stream="ftrl"``): only noisy prefix sums of the
    batches' gradients touch the data, and every model is computed from them.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, ``> 0``; ``np.inf`` adds no noise (non-private IGD).
    delta : float, default=1e-6
        Privacy parameter delta in ``(0, 1)``; take it well below ``1/n``.
    alpha : float, "auto" or "seed", default="auto"
        Strength of the L2 regulariser ``alpha/2 ||w||^2``, ``> 0``. It is the
        strong convexity the sensitivity analysis rests on: the noise scales as
        ``1 / (alpha n)``. ``"auto"``: a public rule balancing the noise's
        excess risk against the regularisation bias,
        ``(2 K L^6 / (100 n^2 mu^2))^(1/3)`` and at least ``L^2 / n``
        (:func:`public_alpha`; ``K`` one-vs-rest problems, ``mu`` the GDP
        parameter of ``(epsilon, delta)``); when ``fit`` uses objective
        perturbation (``solver_``), it takes instead half the worst-case balance
        of that mechanism at the noise of its own plan, ``n alpha = sqrt(k) sigma L / (2 LOGIT_SCALE)``
        (:func:`objective_perturbation_alpha`; ``k`` the columns with the
        intercept). ``"seed"``: seed 002's strong
        convexity from the horizon, ``L^2 / sqrt(T)`` (:func:`horizon_alpha`).
        ``fit`` takes ``n`` (and ``T``) from ``X``'s shape; a ``partial_fit``
        stream from ``horizon``, or without one ``1e-3 L^2``; a stream after
        ``fit`` keeps the fit's value. Resolved into ``alpha_``
        (``doc/privacy.md``, "Public tuning rules of QFTL and IGD" and "IGD's
        objective perturbation: alpha at its own noise").
    loss : {"log_loss", "hinge"}, default="log_loss"
        Logistic regression or a linear SVM.
    data_norm : float, "auto" or None, default=None
        ``None``: 1.0, with a :class:`~sklearn_dpol.exceptions.DefaultBoundWarning`
        (pass your data's public bound; an explicit ``1.0`` does not warn).
        Rows of ``X`` are clipped to this L2 norm before they are used. Set it
        from public knowledge of the data (for example documented feature
        ranges), never from the private data. ``"auto"``:
        ``AUTO_DATA_NORM_SHARE`` (10%) of ``epsilon`` buys a private 98%
        quantile of the row norms (exponential mechanism over the public grid
        ``2**(k/4)``, ``k/4`` in ``[-20, 20]``; a stream draws it from its
        first batch), resolved into ``data_norm_``; the model gets the rest of
        the budget, ``(0.9 epsilon, delta)``, by basic composition
        (``doc/privacy.md``, "data_norm='auto' for every estimator").
    fit_intercept : bool, default=True
        Learn an intercept as the weight of a constant feature equal to
        ``intercept_scaling``, regularised like the other weights.
    intercept_scaling : float or "auto", default="auto"
        Value of the constant feature. The loss is Lipschitz with
        ``L = sqrt(data_norm**2 + intercept_scaling**2)``. ``"auto"``: the row
        bound in use over the root of the number of features,
        ``data_norm_ / sqrt(n_features_in_)`` (the root mean square coordinate
        of a row at the bound), so that the constant feature is in the units
        of ``X``: fitting ``c X`` with ``data_norm=c`` then gives the model of
        ``X`` with ``data_norm=1`` (its ``coef_`` divided by ``c``, the same
        predictions, noise of the same law and the same ``privacy_``). A
        constant of 1 next to features of norm 100 is regularised like a
        feature 100 times smaller than the rest, which pins the intercept
        near 0; a constant of ``data_norm_`` doubles ``L^2`` and, when the
        bound is loose, puts the intercept's noise times ``data_norm_`` into
        every decision value. Resolved into ``intercept_scaling_``
        (``doc/privacy.md``, "Unit-free defaults of IGD and QFTL" and
        "intercept_scaling='auto' at 1/sqrt(d) of the row bound").
    max_iter : int, default=5
        Passes over the data in ``fit``, each an epoch of per-record steps
        (``max_iter`` counts passes over the training set in every estimator
        of the library). The step counter keeps running across passes, so
        more passes do not increase the noise (see Notes).
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    update : {"implicit", "gradient"}, default="implicit"
        ``"implicit"`` is IGD; ``"gradient"`` is projected gradient descent
        with step ``2/(alpha t)`` (GIGA, Algorithm 3, log loss only), which
        ignores the first ``2 L_G^2 / alpha^2`` samples (its burn-in) and has
        twice IGD's sensitivity. Used by ``fit`` and by the
        ``stream="iterate_perturbation"`` stream; DP-FTRL takes gradients.
    solver : {"auto", "igd", "objective_perturbation"}, default="auto"
        How ``fit`` trains. ``"igd"``: passes of private IGD and one noisy
        release (output perturbation). ``"objective_perturbation"``
        (``loss="log_loss"`` only; dense or sparse ``X``, CSR through sparse
        products, never densified): the minimiser of the
        regularised log loss plus a random linear term (Kifer, Smith and
        Thakurta 2012; seed 004, Algorithm 2), certified by Newton's method to
        a gradient norm of ``1e-10 n L`` and released with a little Gaussian
        noise covering that gap; the regularisation is ``n * alpha``, raised if
        needed so the Jacobian term takes at most half of epsilon. It was more
        accurate than IGD on every real task measured (covertype at defaults:
        0.749 / 0.754 / 0.756 against 0.690 / 0.709 / 0.723 at epsilon 0.5 / 1 /
        2, ``benchmarks/bench_defaults.py``) and fits sizes whose IGD passes the
        rounding allowance refuses. ``"auto"``: a public rule on the call's
        public properties only, ``"objective_perturbation"`` for
        ``loss="log_loss"`` and dense ``X``, else ``"igd"`` (the hinge loss;
        ``update="gradient"``; sparse ``X``, by its format, never its values;
        ``delta`` below ``1e-300``, which objective perturbation refuses). ``X``
        (dense or sparse) of more than 4096 columns (with the intercept's) is
        refused by objective perturbation before it is read (pass
        ``solver="igd"``). Resolved into ``solver_``. Private selection
        (:class:`~sklearn_dpol.model_selection.PrivateHyperparameterSearch`)
        plans and fits ``"auto"`` candidates with ``"igd"``: it composes zCDP
        ``rho``, which objective perturbation does not have.
        ``partial_fit`` never uses it; its stream starts from the released model.
    stream : {"ftrl", "iterate_perturbation"}, default="ftrl"
        How ``partial_fit`` learns and releases. ``"ftrl"``: DP-FTRL (Kairouz
        et al. 2021). Each call sums the batch's clipped gradients at a point
        computed from the models released before it; a continual-release
        mechanism over the calls (``prefix_sums``, one step per call) releases
        noisy prefix sums of them, and the model is the follow-the-regularized-leader
        solution on those sums (proximal regulariser ``alpha t / 2``, at least
        32 times the prefix sums' noise counted in records, a public value, so
        that a small first batch does not make the first models mostly noise;
        momentum 0.95, gradients taken at the lookahead ``W_k + 0.9 (W_k - W_{k-1})``
        of the released models, projected onto the ball of radius ``L / alpha``).
        Its noise grows at most with the logarithm of the number of calls.
        ``"iterate_perturbation"``: the seed's stream, which runs IGD and
        perturbs each released iterate with its share of the budget (noise
        grows like the square root of the number of releases; kept for the
        reproductions).
    gradient_bound : float or None, default=None
        ``stream="ftrl"`` only: each record's gradient (of each one-vs-rest
        problem) is scaled down to at most this L2 norm, and the noise is
        calibrated to it instead of ``L``. ``None`` (or a value ``>= L``)
        changes nothing. A bound below ``L`` lowers the noise and biases the
        gradients of badly classified records, as the clipping of DP-SGD and
        DP-FTRL does; choose it from public knowledge, like ``data_norm``.
    prefix_sums : {"auto", "blt", "sqrt", "tree", "honaker"}, default="auto"
        ``stream="ftrl"`` only: the continual-release mechanism of the gradient
        prefix sums (:func:`~sklearn_dpol.privacy._streams.make_stream_mechanism`),
        one step per ``partial_fit`` call. ``"auto"`` is ``"blt"``: a buffered
        linear Toeplitz matrix factorization with 4 buffers (``O(4 * dim)``
        memory), within 1% of the square-root factorization's error; with
        ``horizon=None`` its unbounded variant, whose noise covers a stream of
        any length. ``"sqrt"``: the square-root Toeplitz factorization (memory
        grows with the number of calls; epochs for ``horizon=None``).
        ``"tree"`` and ``"honaker"``: a binary tree over the calls with the
        plain or Honaker estimator (epoch trees for ``horizon=None``), the
        stream's earlier default. The resolved name is ``prefix_sums_``.
    horizon : int or None, default=None
        Number of samples a ``partial_fit`` stream may contain; a stream that
        runs past it raises ``ValueError``. With ``stream="ftrl"`` the
        mechanism is calibrated for ``ceil(horizon / b)`` calls, ``b`` the size
        of the first batch (or ``max_calls``), and a stream that has made that
        many calls raises too. With ``stream="iterate_perturbation"`` every sample buys an equal
        share of the budget. ``None`` keeps the guarantee for a stream of any
        length (the unbounded variant of ``prefix_sums``, or an anytime
        schedule).
    max_calls : int or None, default=None
        The number of ``partial_fit`` calls the stream may make, declared up
        front (public). With ``stream="ftrl"`` the mechanism is calibrated on
        ``max_calls`` steps whatever the batch sizes; in every stream call
        ``max_calls + 1`` raises ``ValueError`` before reading its data, and
        ``horizon`` still caps the samples. ``None``: ``ceil(horizon / b)``
        calls for ``stream="ftrl"`` (``b`` the first batch's size), which
        refuses a stream whose later batches are smaller than the first before
        its samples reach ``horizon``: with batches of varying size pass the
        number of calls you will make. Needs a ``horizon`` and is at most
        ``horizon`` (``ValueError`` otherwise: with ``horizon=None`` the stream
        takes any number of calls). Resolved into ``max_calls_`` at the
        stream's first call.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise and the shuffling. ``fit`` re-seeds from it; later
        ``partial_fit`` calls keep drawing from one generator.
        A seed (and a copy or pickle of a seeded estimator) replays its noise:
        ``None`` for anything published (``doc/privacy.md`` 13.3).
    n_jobs : int or None, default=None
        Threads for the one-vs-rest problems of a multiclass fit.
    classes : array-like of shape (n_classes,) or None, default=None
        The label set, from public knowledge. ``classes_`` is released as is;
        with ``None`` it is taken from ``y``, which reveals which labels occur
        (a label held by one record reveals that record) and warns with
        :class:`~sklearn_dpol.exceptions.PrivacyLeakWarning`. With public
        classes, a record whose label is not one of them contributes nothing
        (a zero gradient, like a record whose loss is constant): the call
        neither fails nor reveals that such a record exists (``doc/privacy.md``,
        "Failures and refunds"). A ``y`` whose dtype no class can equal (strings
        against numeric classes, numbers against string classes) is refused with
        ``ValueError`` before any value is read: the dtype is public, and every
        record would be ignored (an object-dtype ``y`` is not checked).
    class_weight : dict or None, default=None
        Public weights of the classes, ``{label: weight}`` with weights ``>= 0``
        (a class left out weighs 1), applied as per-record weights multiplying
        each record's loss (and ``sample_weight``). They are divided by their
        largest value over ``classes_``, so every record weight is in
        ``[0, 1]`` and the sensitivity is unchanged (only the ratios matter).
        ``"balanced"`` is refused: it is computed from the label counts of the
        private data, which would be released outside the guarantee.
        Both solvers take them (``doc/privacy.md``, "Sample weights in
        objective perturbation").
    accountant : PrivacyAccountant or None, default=None
        The privacy budget of the data set, shared by every fit that charges
        it, clones and worker processes of a model-selection run included.
        Each ``fit``, and each ``partial_fit`` stream once, reserves its
        guarantee before reading any data and raises
        :class:`~sklearn_dpol.exceptions.BudgetExceededError` past the budget
        (:class:`~sklearn_dpol.privacy.PrivacyAccountant`).
    verbose : int, default=0
        Print progress in scikit-learn's style: a line per pass of ``fit``
        (epoch, step count), then a summary of each call's
        release. Only public information is printed (counters,
        the noise scale and the guarantee already released; no running time,
        which depends on the data),
        never a loss, a norm or any other value of the private iterates or
        the data: printing one would release it outside the guarantee.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    alpha_ : float
        The L2 strength used (``alpha`` with ``"auto"`` or ``"seed"``
        resolved from public values and ``data_norm_``); for a fit by objective
        perturbation, the ridge the solve used over ``n``
        (raised, from public values, when needed to certify its tolerance).
    solver_ : str
        The solver of the last ``fit``: ``solver``, or the rule of ``"auto"``
        (``"objective_perturbation"`` or ``"igd"``). ``partial_fit`` leaves it
        as it is (a stream never uses it).
    data_norm_ : float
        The row bound used: ``data_norm``, or its private quantile for
        ``data_norm="auto"`` (released, covered by ``privacy_``).
    intercept_scaling_ : float
        The value of the constant feature used: ``intercept_scaling``, or
        ``data_norm_ / sqrt(n_features_in_)`` for ``"auto"``; 0.0 when
        ``fit_intercept=False``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Released (noisy) weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Released (noisy) intercepts; zero when ``fit_intercept=False``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.
    n_iter_ : int
        Passes over the data in the last call.
    t_ : int
        Number of updates since the last ``fit`` plus one, as in ``SGDClassifier``.
    noise_scale_ : float
        Standard deviation of the noise added to each released weight by the
        last release; for a ``stream="ftrl"`` stream, of the noise on each
        noised value of the prefix-sum mechanism (``C g`` of a factorization,
        a tree node) over the gradient sums.
    sensitivity_ : float
        L2 sensitivity of the last release (all classes together); for a
        ``stream="ftrl"`` stream, of one call's gradient sum.
    privacy_ : PrivacyGuarantee
        The guarantee covering what has been released.
    prefix_sums_ : str or None
        The mechanism of the current ``stream="ftrl"`` stream (``"blt"``,
        ``"sqrt"``, ``"tree"`` or ``"honaker"``; ``prefix_sums`` with
        ``"auto"`` resolved); ``None`` after ``fit`` and for the seed's stream.
    max_calls_ : int or None
        The number of ``partial_fit`` calls the stream is calibrated for and
        may make, fixed at its first call: ``max_calls``, or for
        ``stream="ftrl"`` ``ceil(horizon / b)`` (``b`` the first batch's size);
        ``None`` when nothing limits the calls but the samples
        (``horizon=None``; the seed's stream without ``max_calls``) and after
        ``fit``.

    See Also
    --------
    sklearn.linear_model.SGDClassifier : The non-private stochastic gradient classifier.
    sklearn.linear_model.LogisticRegression : The non-private logistic regression.
    PrivateMirrorDescentRegressor : Noisy mirror descent, for regression.

    Notes
    -----
    Privacy is per record under replace-one neighbours. ``fit`` releases one
    model and is ``(epsilon, delta)``-DP for its records (by default, on dense
    ``X`` with the log loss, by objective perturbation, whose guarantee has no
    Gaussian-DP ``mu``; with ``solver="igd"`` by output perturbation,
    ``mu``-GDP). Each ``partial_fit`` call releases one model; all releases
    since the stream started are jointly ``(epsilon, delta)``-DP for the
    stream's records, each passed once (the
    prefix-sum mechanism's Gaussian values with adaptively chosen gradients,
    or exact Gaussian DP composition of the perturbed iterates). A stream
    after ``fit`` starts from the *released* model, so the records of ``fit``
    pay nothing more. Multiclass problems are one-vs-rest
    and one record moves every class's weights, so the noise covers the joint
    sensitivity ``sqrt(n_classes)`` times that of one problem. Derivations are
    in ``doc/privacy.md``.

    References
    ----------
    P. Jain, P. Kothari and A. Thakurta. Differentially private online learning.
    COLT 2012.

    P. Kairouz, B. McMahan, S. Song, O. Thakkar, A. Thakurta and Z. Xu.
    Practical and private (deep) learning without sampling or shuffling.
    ICML 2021.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpol import PrivateIGDClassifier
    >>> X, y = make_classification(n_samples=20_000, random_state=0)
    >>> clf = PrivateIGDClassifier(epsilon=1.0, data_norm=5.0, classes=[0, 1],
    ...                            random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.8
    True
    """

    _parameter_constraints = {
        "epsilon": [EPSILON_CONSTRAINT],
        "delta": [DELTA_CONSTRAINT],
        "alpha": [POSITIVE, StrOptions({"auto", "seed"})],
        "loss": [StrOptions({"log_loss", "hinge"})],
        "data_norm": [POSITIVE, StrOptions({"auto"}), None],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [POSITIVE, StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "update": [StrOptions({"implicit", "gradient"})],
        "solver": [StrOptions({"auto", "igd", "objective_perturbation"})],
        "stream": [StrOptions({"ftrl", "iterate_perturbation"})],
        "gradient_bound": [POSITIVE, None],
        "prefix_sums": [StrOptions({"auto", "blt", "sqrt", "tree", "honaker"})],
        "horizon": [HORIZON_CONSTRAINT, None],
        "max_calls": [HORIZON_CONSTRAINT, None],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "accountant": [PrivacyAccountant, None],
        "verbose": ["verbose"],
    }
    _stream_params = (
        "epsilon", "delta", "alpha", "loss", "data_norm", "fit_intercept",
        "intercept_scaling", "update", "stream", "gradient_bound", "prefix_sums", "horizon",
        "max_calls", "classes",
    )
    _DEFAULT_BOUNDS = ("data_norm",)
    # The FTRL stream's prefix-sum mechanism holds exact sums of gradients; its
    # FTRL state is post-processing but only serves to continue the stream.
    _private_state = ("_w_private", "_rng", "_ftrl_mechanism", "_ftrl")
    #: The solver private selection plans and fits ``solver="auto"`` with: its candidates
    #: compose zCDP ``rho``, which objective perturbation does not have
    #: (``model_selection/_candidates.py::selection_solver``).
    _selection_solver = "igd"

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-6,
        alpha="auto",
        loss="log_loss",
        data_norm=None,
        fit_intercept=True,
        intercept_scaling="auto",
        max_iter=5,
        shuffle=True,
        update="implicit",
        solver="auto",
        stream="ftrl",
        gradient_bound=None,
        prefix_sums="auto",
        horizon=None,
        max_calls=None,
        random_state=None,
        n_jobs=None,
        classes=None,
        class_weight=None,
        accountant=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.loss = loss
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.update = update
        self.solver = solver
        self.stream = stream
        self.gradient_bound = gradient_bound
        self.prefix_sums = prefix_sums
        self.horizon = horizon
        self.max_calls = max_calls
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.classes = classes
        self.class_weight = class_weight
        self.accountant = accountant
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Noise calibrated for privacy costs accuracy on the checks' tiny data.
        tags.classifier_tags.poor_score = True
        # CSR kernels (solver="igd", which "auto" takes for sparse X) and sparse
        # products (objective perturbation); other formats are converted to CSR.
        tags.input_tags.sparse = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)`` and release one model, ``(epsilon, delta)``-DP.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; rows are clipped to ``data_norm``. Sparse input is
            used as CSR, never densified (``solver="igd"``, which ``"auto"``
            takes for it, or ``"objective_perturbation"``: the same model as
            the dense input).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]`` (both solvers): a record's loss is
            multiplied by its weight. ``None`` weighs every record 1. Weights
            outside ``[0, 1]`` raise ``ValueError``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._warn_default_bounds()
        return self._release_fit(X, y, reset=("classes_", "_w_private", "_t", "_op_fit_rows"),
                                 classes=None,
                                 n_passes=self.max_iter, sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    @reports_release
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Take one pass over a batch and release the updated model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch of the stream; rows are clipped to ``data_norm``. Sparse
            input is used as CSR.
        y : array-like of shape (n_samples,)
            Class labels of the batch.
        classes : array-like of shape (n_classes,), default=None
            All the classes of the stream. Required on the first call of a
            stream unless ``fit`` was called before or the estimator was built
            with ``classes``; when both are given they must hold the same
            labels (``ValueError`` otherwise, before any data is read).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]`` of the batch's records, as in :meth:`fit`
            (both streams; the guarantee is unchanged, ``doc/privacy.md``,
            "Sparse input and sample weights for mirror descent ...").

        Returns
        -------
        self : object
            The estimator, with the new release in ``coef_`` and ``intercept_``.
        """
        return self._release_stream_batch(X, y, classes=classes, n_passes=1,
                                          sample_weight=sample_weight)

    def _more_validate_params(self):
        check_max_calls(self)
        if self.solver == "objective_perturbation" and self.loss != "log_loss":
            raise ValueError(
                "solver='objective_perturbation' needs a smooth loss (its privacy proof "
                f"uses the Hessian); got loss={self.loss!r}. Use loss='log_loss', or "
                "solver='igd' for the hinge loss."
            )
        if self.update == "gradient" and self.loss != "log_loss":
            raise ValueError(
                f"update='gradient' (GIGA) needs a smooth loss; got loss={self.loss!r}. "
                "Use loss='log_loss', or update='implicit' for the hinge loss."
            )
        self._check_class_weight_param()
        if self.classes is not None and np.unique(np.asarray(self.classes)).size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes; got "
                f"classes={self.classes!r}."
            )
        if self._auto_norm() and self.update == "gradient":
            raise ValueError(
                "update='gradient' (GIGA) skips a burn-in of 2 (L^2/4 + alpha)^2 / alpha^2 "
                "steps that depends on the row bound, so it needs a public data_norm; got "
                "data_norm='auto'. Pass a public data_norm, or use update='implicit'."
            )
        # The checks of an unresolved (or about to be redrawn) "auto" bound: its worst case.
        _, lipschitz = self._geometry(worst=True)
        if not isinstance(self.alpha, str):
            igd.check_geometry(lipschitz, float(self.alpha), self.update)


    def _planned_privacy(self, X, *, fitting, **kwargs):
        """The call's cost, from :meth:`_privacy_spec` (``privacy_`` never depends on data)."""
        if fitting and self.classes is None and np.isfinite(self.epsilon):
            # The accountant would charge a guarantee that does not cover classes_.
            raise ValueError(
                "With an accountant, the label set must be public: classes=None takes "
                "it from y and releases it as classes_ outside the guarantee charged. "
                "Pass classes=[...] from public knowledge. Nothing was read or charged."
            )
        return super()._planned_privacy(X, fitting=fitting, **kwargs)

    def _fit_solver(self, X=None):
        """The solver ``fit`` uses: ``solver``, or the public rule of ``"auto"``.

        ``"auto"`` is ``"objective_perturbation"`` for ``loss="log_loss"`` and dense
        ``X``, else ``"igd"``: the hinge loss, ``update="gradient"`` (GIGA, an
        update of IGD's passes that objective perturbation would ignore), sparse
        ``X``, and a ``delta`` below objective perturbation's ``MIN_DELTA``
        (which it refuses). Only public
        properties of the call enter: the parameters and the *format* of ``X`` (a
        SciPy sparse matrix or array, or a pandas DataFrame of sparse columns,
        which validation turns into one: type checks that read neither its values
        nor its shape, so an accountant's plan can call it before ``X`` is
        touched). ``X=None`` (no data yet) plans for dense ``X``. Private selection
        plans and fits its candidates with ``"igd"`` instead (they need a zCDP
        ``rho``; ``model_selection/_candidates.py``).
        """
        if self.solver != "auto":
            return self.solver
        if self.loss != "log_loss" or self.update != "implicit":
            return "igd"
        if not math.isinf(float(self.epsilon)) and not float(self.delta) >= op.MIN_DELTA:
            return "igd"
        if X is not None and _sparse_format(X):
            return "igd"
        return "objective_perturbation"

    def _privacy_spec(self, X=None, *, fitting=True, solver=None, **_):
        """``mu*(epsilon, delta)``-GDP: one release (``fit``) or a continual stream.

        Objective perturbation's exact profile meets ``(epsilon, delta)``; it
        has no GDP ``mu`` and no zCDP ``rho``. ``solver``: the solver of the
        ``fit`` planned (by default :meth:`_fit_solver` of ``X``; the fit's own
        ``privacy_`` passes ``solver_``).
        """
        regime = stream_regime(fitting)
        if fitting and solver is None:
            solver = self._fit_solver(X)
        if fitting and solver == "objective_perturbation":
            refusal = objective_perturbation_refusal(type(self).__name__)
            if self._any_auto_bound():
                return self._spec_with_quantiles(
                    ONE_RELEASE, (Part("the objective-perturbation model"),), no_rho=refusal)
            return PrivacySpec(ONE_RELEASE, self.epsilon, self.delta, no_rho=refusal)
        if self._any_auto_bound():
            model = ("the model (output perturbation)" if fitting
                     else "the stream's models (its Gaussian mechanism)")
            return self._spec_with_quantiles(
                regime, (Part.gaussian(model, self._budget_split()[2]),), horizon=self.horizon)
        return gaussian_spec(self.epsilon, self.delta, regime, horizon=self.horizon)

    def _partial_fit(self, X, y, *, classes, n_passes, fitting, sample_weight=None):
        first_call = not hasattr(self, "classes_")
        if fitting:
            # The public rule, on the raw input the accountant's plan saw (its format,
            # never its values): a fitted attribute; ``solver`` keeps "auto".
            self.solver_ = self._fit_solver(X)
        # Whether y came with a declared dtype (an array or a pandas column): a list's
        # dtype is inferred from its values, so it is never a public property.
        declared_dtype = hasattr(y, "dtype")
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", accept_sparse="csr",
                             reset=first_call)
        X = canonical_csr(X)
        sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
        # Public checks of the label set against y's dtype (not its values): refused
        # before anything is read or changed (doc/privacy.md 54.15).
        self._check_public_classes(y, classes, fitting, declared_dtype)
        labels = None
        if classes is None and self.classes is None and fitting:
            # The label set comes from y (released as classes_, outside the
            # guarantee, with a PrivacyLeakWarning): only then are y's values
            # inspected here. With public classes nothing below depends on
            # which labels occur: out-of-class records contribute nothing.
            # A list is an object array of its own elements (labels_as_given); the
            # labels are inferred and released here anyway (PrivacyLeakWarning), in the
            # joint typing scikit-learn's target checks expect.
            y = jointly_typed(y)
            check_classification_targets(y)
            labels = np.unique(y)
        label_set = self._label_set(labels, classes, fitting)
        if not self._same_classes(label_set):
            _check_partial_fit_first_call(self, label_set)
        self._check_labels()
        # Public weights of public classes (or of classes_ already released).
        sample_weight = self._record_weights(y, sample_weight)
        if fitting:
            self._forget_auto_bounds()   # a new fit draws its own quantile
        resolve_bounds = self._unresolved_auto_bounds()
        if resolve_bounds:
            self._check_auto_bounds_public(X.shape[0])
        # Public values only (the shape, the classes, the hyperparameters; an
        # unresolved "auto" bound at its worst case, so a refusal reads nothing).
        keep_alpha = not fitting and hasattr(self, "alpha_")
        self.alpha_ = self._resolve_alpha(X.shape[0], fitting)
        if not fitting:
            self._check_stream_left(X.shape[0])
        if fitting and self.solver_ == "objective_perturbation":
            self._check_objective_perturbation(X.shape, sample_weight, resolve_bounds)
        elif fitting or self.stream != "ftrl":
            # Output perturbation: refuse a step count past the rounding allowance's cap
            # (public values; the same function calibrates the release, 55.10).
            steps = n_passes * X.shape[0] + (0 if fitting else getattr(self, "_t", 0))
            igd.iterate_rounding_factor(steps, n_passes if fitting else 1,
                                        X.shape[1] + int(bool(self.fit_intercept)),
                                        self.update, self.loss)
        self._mark_data_read()
        if resolve_bounds:
            # data_norm="auto": the private quantile (of the stream's first batch).
            self._resolve_auto_bounds(X, stream=not fitting)
            if not keep_alpha:
                self.alpha_ = self._resolve_alpha(X.shape[0], fitting, keep=False)
        self.data_norm_ = self._data_norm()
        self.intercept_scaling_ = self._geometry()[0]
        if fitting or getattr(self, "_w_private", None) is None:
            self._start_stream(X.shape[1], fitting)
        n_samples = X.shape[0]
        if fitting and self.solver_ == "objective_perturbation":
            self._fit_objective_perturbation(X, y, sample_weight)
            return
        if not fitting and self.stream == "ftrl":
            # A batch's (problems x rows) products: one BLAS thread, as for the
            # other streams, so busy cores cannot make them collapse (37x at
            # 10,000 x 50 on a loaded 2-core machine).
            with single_blas_thread():
                self._ftrl_step(X, y, sample_weight)
            return
        share = 1.0 if fitting else self._schedule().share(
            self._stream_samples, self._stream_samples + n_samples
        )
        self._train(X, y, n_passes, sample_weight)
        self._stream_samples += n_samples
        self._stream_releases += 1
        self._release(share, n_occurrences=n_passes if fitting else 1, fitting=fitting)
        self.n_iter_ = n_passes
        self.t_ = self._t + 1

    def _resolve_alpha(self, n_samples, fitting, keep=True):
        """``alpha_`` from public values: the parameter, or the rule it names.

        ``"auto"`` balances the noise's excess risk against the regularisation
        bias (:func:`public_alpha`); ``"seed"`` is seed
        002's strong convexity from the horizon,
        :func:`horizon_alpha`. ``fit`` uses its ``n``; a
        stream keeps the ``alpha_`` of the stream or fit it continues, else uses
        ``horizon``, else :data:`~sklearn_dpol._core.STREAM_ALPHA`.
        Raises ``ValueError`` before any data is read if the bounds overflow.
        ``keep=False``: a stream's first call recomputes the rule once its
        ``data_norm="auto"`` is resolved.
        """
        _, lipschitz = self._geometry()
        if not isinstance(self.alpha, str):
            return float(self.alpha)
        if keep and not fitting and hasattr(self, "alpha_"):
            # A stream keeps its calibration, and one after a fit the fit's
            # (released) alpha_.
            return self.alpha_
        horizon = n_samples if fitting else self.horizon
        if horizon is None:
            alpha = STREAM_ALPHA * lipschitz * lipschitz
        elif self.alpha == "seed":
            alpha = horizon_alpha(lipschitz, horizon)
        else:
            n_problems = 1 if self.classes_.size == 2 else self.classes_.size
            alpha = public_alpha(lipschitz, horizon, self._budget_split()[2], n_problems)
            if fitting and self.solver_ == "objective_perturbation":
                # Bounds whose square overflows or underflows break the plan's arithmetic
                # (OverflowError, ZeroDivisionError): refused first with IGD's messages
                # (they fail on L alone), before anything is read (doc/privacy.md 56.12).
                if not 0.0 < lipschitz * lipschitz < 1e300:
                    igd.check_geometry(lipschitz, alpha, self.update)
                try:
                    alpha = objective_perturbation_alpha(
                        self._budget_split()[1], float(self.delta), n_samples=n_samples,
                        lipschitz=lipschitz,
                        n_columns=self.n_features_in_ + int(bool(self.fit_intercept)),
                        n_problems=n_problems)
                except (OverflowError, ZeroDivisionError) as exc:
                    raise ValueError(
                        f"alpha='auto' of objective perturbation cannot be computed in "
                        f"floating point for the bound L={lipschitz:.3g} ({exc}): rescale X "
                        "by a public bound so that data_norm and intercept_scaling are "
                        "between about 1e-150 and 1e150, or pass a positive alpha. Nothing "
                        "was read or charged.") from None
        igd.check_geometry(lipschitz, alpha, self.update)
        return alpha

    def _check_public_classes(self, y, classes, fitting, declared_dtype=True):
        """Refuse a label set that conflicts with another, or that ``y``'s dtype cannot match.

        Public values only: the constructor's ``classes``, ``partial_fit``'s
        ``classes``, ``classes_`` already released, and ``y``'s dtype (a schema
        property, not a value). A record whose *value* is outside the classes is
        still not an error (that would be a one-bit answer about the data); a
        *dtype* that no class can equal (strings against numeric classes, numbers
        against string classes) would make every record contribute nothing, an
        all-zero model, whatever the data. An object-dtype ``y`` (a pandas column
        of strings, say) is not checked: only its values say what it holds; nor is a
        ``y`` passed without a dtype (a list), which validation reads element by
        element into an object array (``_validate.labels_as_given``: numpy's inferred
        dtype would let one string label re-type every other, doc/privacy.md 58.3).
        """
        if classes is not None and self.classes is not None and not _same_label_set(
                classes, self.classes):
            raise ValueError(
                f"partial_fit got classes={_short(classes)} but the estimator was built "
                f"with classes={_short(self.classes)}: pass the same label set, or leave "
                "partial_fit's classes=None to use the constructor's. Nothing was read "
                "or charged.")
        public = classes if classes is not None else self.classes
        if public is None and not fitting and "classes_" in self.__dict__:
            public = self.classes_
        if public is None or not declared_dtype:
            return
        y_kind = _dtype_kind(np.asarray(y).dtype)
        classes_kind = _values_kind(public)
        if y_kind is not None and classes_kind is not None and y_kind != classes_kind:
            raise ValueError(
                f"y holds {y_kind}s (dtype {np.asarray(y).dtype}) but the classes "
                f"{_short(public)} are {classes_kind}s: no label of y can equal a class, so "
                "every record would be ignored and the model would be all zeros. Convert "
                "y (e.g. y.astype(int) or y.astype(str)) or pass classes of y's type. This "
                "is decided from y's dtype, not its values; nothing was read or charged.")

    def _label_set(self, labels, classes, fitting):
        """The classes of a new stream: public ones if given, else from ``y``."""
        if classes is None and self.classes is not None:
            classes = np.asarray(self.classes)
        if classes is None and fitting:
            if np.isfinite(self.epsilon):
                _warn_at_caller(
                    "The label set was taken from y and is released as classes_ "
                    "without privacy protection: a label held by one record reveals "
                    "that record. Pass classes=[...] from public knowledge.",
                    PrivacyLeakWarning,
                )
            self._labels_from_data = True
            return labels
        if classes is not None and not hasattr(self, "classes_"):
            # Only a new label set is public; one inferred earlier stays leaked.
            self._labels_from_data = False
        return classes

    def _same_classes(self, label_set):
        """Whether a stream call repeats the label set already in ``classes_``.

        A per-call fast path (``unique_labels`` costs about a millisecond, a
        third of a one-row call): when the sorted distinct labels equal
        ``classes_``, scikit-learn's check would pass without changing anything.
        """
        if label_set is None or "classes_" not in self.__dict__:
            return False
        try:
            return bool(np.array_equal(self.classes_, np.unique(np.asarray(label_set))))
        except TypeError:       # labels of mixed types: let scikit-learn's check say why
            return False

    def _check_labels(self):
        # Reads classes_ only: public classes, or labels already taken from y.
        # A record whose label is outside classes_ is not an error (that would
        # be a one-bit answer about the data): it contributes nothing, see
        # _signed_targets.
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes; got one class "
                f"({self.classes_.tolist()}). Pass data, or `classes`, with two or "
                "more labels."
            )

    def _check_class_weight_param(self):
        """Public checks of ``class_weight`` (no data read)."""
        weights = self.class_weight
        if weights is None:
            return
        if isinstance(weights, str):  # "balanced", the only string the constraints let in
            raise ValueError(
                "class_weight='balanced' is not supported: it divides by the number of "
                "records of each class, counted on the private data, and those counts "
                "would be released outside the privacy guarantee (a count moves by one "
                "when one record is replaced). Pass a dict of public class weights, "
                "e.g. from public class frequencies or a separate private count."
            )
        try:
            values = np.array([float(v) for v in weights.values()], dtype=np.float64)
        except (TypeError, ValueError, ArithmeticError) as exc:   # 10**400: OverflowError
            raise ValueError(f"class_weight values must be numbers; got {weights!r}.") from exc
        if not np.all(np.isfinite(values) & (values >= 0.0)):
            raise ValueError(
                f"class_weight values must be finite and >= 0; got {weights!r}."
            )
        if values.size and not np.any(values > 0.0):
            raise ValueError("class_weight gives every listed class weight 0; at least one "
                             "class needs a positive weight.")

    def _record_weights(self, y, sample_weight):
        """Each record's weight in [0, 1]: its class's public weight over the largest.

        ``class_weight`` maps ``classes_`` (public, or already released) to
        weights; they are divided by their maximum over ``classes_`` (a
        public number), and multiply ``sample_weight``. A record whose label
        is not in ``classes_`` keeps weight 1 (it contributes nothing anyway).
        """
        if self.class_weight is None:
            return sample_weight
        self._check_class_weight_param()  # also after set_params in a stream
        keys = [label.item() if hasattr(label, "item") else label for label in self.classes_]
        unknown = [key for key in self.class_weight
                   if not np.any(_equals(self.classes_, key))]
        if unknown:
            raise ValueError(
                f"class_weight has labels {unknown!r} that are not classes ("
                f"{self.classes_.tolist()!r})."
            )
        per_class = np.array([float(self.class_weight.get(key, 1.0)) for key in keys])
        top = per_class.max()
        if not top > 0.0:
            raise ValueError(
                f"class_weight gives every class of {self.classes_.tolist()!r} weight 0; "
                "at least one needs a positive weight."
            )
        per_class = per_class / top
        weights = np.ones(len(y))
        for label, value in zip(self.classes_, per_class):
            weights[_equals(y, label)] = value
        return weights if sample_weight is None else weights * sample_weight

    def _start_stream(self, n_features, fitting):
        """Begin a new calibration: from zero, or from the released model."""
        n_problems = 1 if self.classes_.size == 2 else self.classes_.size
        width = n_features + int(self.fit_intercept)
        W = np.zeros((n_problems, width))
        if not fitting and hasattr(self, "coef_"):
            intercept_value, lipschitz = self._geometry()
            W[:, :n_features] = self.coef_
            if self.fit_intercept:
                W[:, n_features] = self.intercept_ / intercept_value
            # A released model need not lie in the ball of radius L / alpha (objective
            # perturbation's is not projected): the stream starts from its projection,
            # post-processing of public values, so that the rounding allowance's radius
            # argument holds from the first step (doc/privacy.md 55.17; review 114).
            radius = igd.iterate_radius(lipschitz, self.alpha_)
            norms = np.linalg.norm(W, axis=1)
            outside = norms > radius
            W[outside] *= (radius / norms[outside] * (1.0 - 2.0 ** -50))[:, np.newaxis]
        self._w_private = W
        self._t = 0 if fitting else getattr(self, "_t", 0)
        self._stream_samples = 0
        self._stream_releases = 0
        self._ftrl, self._ftrl_mechanism = None, None
        self.prefix_sums_ = None
        # The stream's call limit (public; DP-FTRL's first step sets its calibration's).
        self.max_calls_ = None if fitting else self.max_calls

    def _schedule(self):
        return budget_schedule(self.horizon)

    def _ftrl_step(self, X, y, sample_weight=None):
        """One DP-FTRL step: noisy prefix sum of the batch's gradients, then the FTRL model.

        The gradients are taken at a public point (the lookahead of the models
        released before the batch); only the prefix-sum mechanism reads them
        (``doc/privacy.md``, section 2.1).
        """
        intercept_value, lipschitz = self._geometry()
        n_rows = X.shape[0]
        state, mechanism = self._ftrl, self._ftrl_mechanism
        if state is None:
            n_problems = self._w_private.shape[0]
            # One step per call: a known horizon of n samples in batches of the
            # first call's size b is ceil(n / b) steps (shapes are public).
            self._ftrl_steps = stream_calls(self.horizon, n_rows, self.max_calls)
            self._ftrl_mu = self._budget_split()[2]
            self._ftrl_sensitivity = ftrl.step_sensitivity(lipschitz, n_problems,
                                                           self.gradient_bound)
            mechanism = ftrl.prefix_sum_mechanism(
                self._w_private.size, self._ftrl_sensitivity, self._ftrl_mu, self._ftrl_steps,
                self.prefix_sums)
            self._ftrl_max_rows = 0
            # The rows behind the start: an IGD fit's steps (_t), or an objective-perturbation
            # fit's rows (public shapes; only FTRL's regularisation reads them: the
            # iterate-perturbation stream's sensitivity reads _t, never these rows).
            if not self._t:
                self._t = int(self.__dict__.get("_op_fit_rows", 0))
            state = ftrl.FTRLState(self._w_private, self.alpha_ * self._t)
        else:
            # A copy to advance, so that a failed call leaves the stream as it was.
            mechanism = mechanism.snapshot()
        self._check_ftrl_horizon(mechanism.t, n_rows)
        self._check_ftrl_rounding(mechanism, n_rows)
        row_scale, _ = clip_row_scales(X, self._data_norm())
        sums = ftrl.gradient_sums(state.query(), X, row_scale, self._signed_targets(y),
                                  loss=self.loss, intercept_value=intercept_value,
                                  gradient_bound=self.gradient_bound,
                                  sample_weight=sample_weight)
        prefix = mechanism.advance(ftrl.StepVector(sums.ravel()), self._rng)
        t = self._t + n_rows
        # lam: alpha t, floored at the released prefix's noise (public values; 58.7).
        lam = ftrl.regularisation(self.alpha_, t, ftrl.released_variance(mechanism),
                                  self._w_private.size, self._ftrl_sensitivity, state.lam)
        state = state.step(prefix, lam, igd.iterate_radius(lipschitz, self.alpha_))
        self._ftrl, self._ftrl_mechanism = state, mechanism
        self._ftrl_max_rows = max(self._ftrl_max_rows, n_rows)
        self.prefix_sums_ = mechanism.name
        self.max_calls_ = self._ftrl_steps
        self._w_private, self._t = state.W, t
        self._stream_samples += n_rows
        self._stream_releases += 1
        self._publish(state.W, intercept_value)
        self.noise_scale_ = float(mechanism.sigma)
        self.sensitivity_ = float(self._ftrl_sensitivity)
        spent = self._ftrl_mu * np.sqrt(mechanism.spent_fraction())
        self.privacy_ = self._guarantee(self._ftrl_mu, False, spent=spent)
        self.n_iter_ = 1
        self.t_ = self._t + 1

    def _check_stream_left(self, n_rows):
        """Refuse, before the data is read, a batch its stream's calibration does not cover.

        Public values only (the batch's size, the stream's counts, the horizon), so a
        refusal is refunded. The checks made later, where the batch is used, stay: these
        decide the same refusals earlier.
        """
        continuing = getattr(self, "_w_private", None) is not None
        samples = self._stream_samples if continuing else 0
        if self.stream == "ftrl":
            state = self._ftrl if continuing else None
            if state is not None:
                self._check_ftrl_horizon(self._ftrl_mechanism.t, n_rows)
                self._check_ftrl_rounding(self._ftrl_mechanism, n_rows)
            else:
                self._check_ftrl_horizon(0, n_rows, samples)
                # The stream's first call: check the mechanism it would build (the check
                # reads neither the sensitivity nor mu; review 113 F1).
                n_problems = 1 if self.classes_.size == 2 else self.classes_.size
                width = self.n_features_in_ + int(self.fit_intercept)
                steps = stream_calls(self.horizon, n_rows, self.max_calls)
                mechanism = ftrl.prefix_sum_mechanism(n_problems * width, 1.0, 1.0, steps,
                                                      self.prefix_sums)
                self._check_ftrl_rounding(mechanism, n_rows, n_problems=n_problems,
                                          max_rows=n_rows)
        else:
            calls = self._stream_releases if continuing else 0
            if self.max_calls is not None and calls + 1 > self.max_calls:
                raise ValueError(
                    f"This would be call {calls + 1} of a stream declared with "
                    f"max_calls={self.max_calls}. Call fit to start a new stream, or pass "
                    "a larger max_calls (or None) next time.")
            self._schedule().share(samples, samples + n_rows)   # raises past the horizon

    def _check_ftrl_rounding(self, mechanism, n_rows, n_problems=None, max_rows=None):
        """Refuse, before reading the batch, a call past the rounding allowance (public shapes)."""
        rows = max(self._ftrl_max_rows if max_rows is None else max_rows, n_rows)
        n_problems = self._w_private.shape[0] if n_problems is None else n_problems
        tree = mechanism.granularity == "row"
        # A tree takes one position per call, holding the call's gradient sum.
        per_call, per_position = (1, rows) if tree else (rows, 1)
        check_rounding(mechanism, mechanism.t + 1, per_call,
                       ftrl.coordinate_fraction(n_problems),
                       rows_per_position=per_position,
                       advice="call fit to start a new stream" + (
                           "" if tree else ", or prefix_sums='tree'"))

    def _check_ftrl_horizon(self, steps_done, n_rows, samples=None):
        """Refuse, before reading the batch, a call past the horizon (public shapes only)."""
        if self.horizon is None:
            return
        samples = self._stream_samples if samples is None else samples
        if samples + n_rows > self.horizon:
            raise ValueError(
                f"This batch of {n_rows} samples would take the stream to "
                f"{samples + n_rows} samples, past horizon={self.horizon}: the "
                "noise was calibrated for at most horizon samples. Call fit to start a new "
                "stream, or use horizon=None for streams of unknown length."
            )
        if steps_done and steps_done + 1 > self._ftrl_steps:
            why = (f"max_calls={self.max_calls}" if self.max_calls is not None else
                   f"max_calls=None: horizon={self.horizon} samples in batches of its "
                   "first call's size")
            raise ValueError(
                f"This would be call {steps_done + 1} of a stream calibrated for "
                f"{self._ftrl_steps} partial_fit calls ({why}; max_calls_ states it from "
                "the first call), which has made them all. Call fit to start a new "
                "stream; next time pass max_calls (the number of partial_fit calls you "
                "will make) when batch sizes vary, keep later batches at least as large "
                "as the first, or use horizon=None."
            )

    def _geometry(self, worst=False):
        """``(intercept value, L)``; ``worst``: an "auto" ``data_norm`` at its largest candidate.

        ``intercept_scaling="auto"`` is the row bound in use (public, or the released
        quantile of ``data_norm="auto"``, or its worst case) over ``sqrt(n_features)``,
        so that the constant feature is in the units of ``X`` (``doc/privacy.md``,
        "Unit-free defaults of IGD and QFTL" and "intercept_scaling='auto' at
        1/sqrt(d) of the row bound"). ``worst`` (the checks before ``validate_data``,
        the width unknown): the largest value, ``data_norm`` itself (one feature).
        """
        data_norm = self._data_norm(worst)
        if not self.fit_intercept:
            intercept_value = 0.0
        elif isinstance(self.intercept_scaling, str):     # "auto"
            width = 1 if worst else self.n_features_in_
            intercept_value = data_norm * auto_unit_intercept(width)
        else:
            intercept_value = float(self.intercept_scaling)
        return intercept_value, igd.loss_lipschitz(data_norm, intercept_value)

    def _train(self, X, y, n_passes, sample_weight=None):
        intercept_value, lipschitz = self._geometry()
        row_scale, row_sq = clip_row_scales(X, self._data_norm())
        Y = self._signed_targets(y)
        W = self._w_private.copy()
        t = self._t
        progress = current_progress(self)
        for epoch in range(1, n_passes + 1):
            order = (
                self._rng.permutation(X.shape[0]) if self.shuffle and n_passes > 1
                else np.arange(X.shape[0])
            )
            t = igd.run_pass(
                W, X, row_scale, row_sq, Y, order, t, alpha=self.alpha_,
                loss=self.loss, update=self.update, intercept_value=intercept_value,
                lipschitz=lipschitz, n_jobs=self.n_jobs, sample_weight=sample_weight,
            )
            progress.epoch(epoch, t)  # counters only: W is private until released
        self._w_private, self._t = W, t
        burn_in = igd.burn_in_steps(lipschitz, self.alpha_, self.update)
        if t < burn_in:
            _warn_at_caller(
                f"update='gradient' skips its first {burn_in} steps (burn-in) and has "
                f"taken {t}: the released model has not used the data yet. Increase "
                "alpha, feed more data, or use update='implicit'.",
                UserWarning,
            )

    def _objective_plan(self, n_samples):
        """Objective perturbation's plan from public values (the bounds in use)."""
        _, feature_norm = self._geometry()
        return op.plan(
            self._budget_split()[1], self.delta, n_samples=n_samples, feature_norm=feature_norm,
            derivative_bound=1.0, curvature_bound=op.CURVATURE[op.LOG_LOSS],
            alpha=self.alpha_, n_problems=1 if self.classes_.size == 2 else self.classes_.size,
        )

    def _check_objective_perturbation(self, shape, sample_weight, bounds_unresolved):
        """Objective perturbation's refusals of public values, before the data is read
        (free): ``delta``, the columns, and (bounds known) the tolerance."""
        n_columns = shape[1] + int(self.fit_intercept)
        try:
            op.check_public(float(self.epsilon), float(self.delta), n_columns)
        except ValueError as exc:
            if self.solver != "auto":
                raise
            raise ValueError(
                f"{exc} solver='auto' fits the log loss on dense X by objective "
                "perturbation: pass solver='igd' for IGD. Nothing was read or charged."
            ) from None
        if not bounds_unresolved:
            op.solve_regularization(
                self._objective_plan(shape[0]), (shape[0], n_columns),
                n_problems=1 if self.classes_.size == 2 else self.classes_.size,
                weighted=sample_weight is not None)

    def _fit_objective_perturbation(self, X, y, sample_weight=None):
        """``fit`` by objective perturbation: one release of the perturbed minimiser."""
        intercept_value, _ = self._geometry()
        targets = self._signed_targets(y)
        plan = self._objective_plan(X.shape[0])
        Z = op.clipped_design(X, self._data_norm(),
                              intercept_value if self.fit_intercept else None)
        released = op.solve(Z, targets, loss=op.LOG_LOSS, plan=plan, rng=self._rng,
                            sample_weight=sample_weight)
        self._publish(released, intercept_value)
        # The ridge the solve used (public; at least the planned one, 54.16.4).
        import dataclasses

        plan = dataclasses.replace(plan, regularization=op.solve_regularization(
            plan, Z.shape, n_problems=targets.shape[0], weighted=sample_weight is not None))
        self.alpha_ = float(plan.regularization / X.shape[0])
        # The next partial_fit starts from the released model (no private state).
        self._w_private = None
        self._stream_samples, self._stream_releases = X.shape[0], 1
        # A DP-FTRL stream continuing this model counts these rows in its regularisation
        # (a shape: public), as it counts an IGD fit's steps (review 130; 58.9).
        self._op_fit_rows = X.shape[0]
        self.n_iter_, self.t_ = 1, 1
        self.noise_scale_ = float(plan.noise_std)
        self.sensitivity_ = float(np.sqrt(plan.n_problems) * plan.gradient_sensitivity)
        released = "coef_ and intercept_ of the fitted model (one release)"
        mechanism = plan.description
        if self._any_auto_bound():
            released += self._quantile_released()
            mechanism += self._quantile_mechanisms(fitting=True)
        self.privacy_ = self._privacy_spec(fitting=True, solver=self.solver_).guarantee(
            mechanism=mechanism,
            released=released
            + ("; classes_ was taken from y and is NOT covered"
               if getattr(self, "_labels_from_data", False) else ""),
            n_releases=1, n_records=X.shape[0],
        )

    def _signed_targets(self, y):
        """The {-1, +1} targets of each binary problem; 0 for an out-of-class record.

        A target of 0 makes the record's margin loss ``phi(0 * <w, z>)``
        constant: its gradient is zero in every kernel (IGD, GIGA, objective
        perturbation), so the step that sees it only applies the regulariser,
        as a step on a record with a constant loss would. The sensitivity
        analysis covers it unchanged (a constant loss is 0-Lipschitz, within
        the bound L, and has zero curvature), and such a record is still one
        record of the replace-one neighbourhood: ``n`` and the step count
        include it.
        """
        members = np.stack([_equals(y, label) for label in self.classes_])
        inside = members.any(axis=0)
        if self.classes_.size == 2:
            return (members[1].astype(np.float64) - members[0])[np.newaxis, :]
        return np.where(members, 1.0, np.where(inside, -1.0, 0.0))

    def _release(self, share, *, n_occurrences, fitting):
        """Add calibrated noise to the private iterate and publish it."""
        intercept_value, lipschitz = self._geometry()
        n_problems = self._w_private.shape[0]
        # The computed iterate's bound: the exact one times the rounding allowance of
        # doc/privacy.md 55.10 (public: steps, passes, width; checked before the read).
        sensitivity = np.sqrt(n_problems) * igd.release_sensitivity(
            lipschitz, self.alpha_, self.update, self._t, n_occurrences,
            width=self._w_private.shape[1], loss=self.loss,
        )
        mu = self._budget_split()[2]
        sigma = 0.0 if np.isinf(mu) else sensitivity / (mu * np.sqrt(share))
        released = igd.release(
            self._w_private, sigma, igd.iterate_radius(lipschitz, self.alpha_),
            self._rng,
        )
        self._publish(released, intercept_value)
        self.noise_scale_ = float(sigma)
        self.sensitivity_ = float(sensitivity)
        self.privacy_ = self._guarantee(mu, fitting)
        if fitting:
            # The next partial_fit starts from the released model, not from
            # private state, so these records pay nothing more.
            self._w_private = None

    def _publish(self, released, intercept_value):
        n_features = self.n_features_in_
        self.coef_ = released[:, :n_features].copy()
        if self.fit_intercept:
            self.intercept_ = released[:, n_features] * intercept_value
        else:
            self.intercept_ = np.zeros(released.shape[0])

    def _guarantee(self, mu, fitting, spent=None):
        """``privacy_`` from :meth:`_privacy_spec`; ``spent``: the stream mechanism's spent mu.

        ``mu`` is the spec's (the callers' calibration), kept for their calls.
        """
        spec = self._privacy_spec(fitting=fitting,
                                  solver=self.solver_ if fitting else None)
        private = not np.isinf(self._budget_split()[2])
        ftrl_stream = not fitting and self.stream == "ftrl"
        if fitting:
            released = "coef_ and intercept_ of the fitted model (one release)"
        else:
            if spent is None:
                spent = spec.mu * np.sqrt(
                    self._schedule().cumulative_share(self._stream_samples))
            released = "coef_ and intercept_ after every partial_fit call"
        if getattr(self, "_labels_from_data", False):
            released += "; classes_ was taken from y and is NOT covered"
        if not private:
            mechanism = "none: epsilon=inf adds no noise"
        elif ftrl_stream:
            mechanism = (
                "DP-FTRL on the stream's gradient sums, one step per partial_fit call"
                + ("" if self.horizon is None else f" (at most {self._ftrl_steps} calls)")
                + ": " + self._ftrl_mechanism.describe()
                + (" (each call is one tree position)"
                   if self._ftrl_mechanism.granularity == "row" else "")
                + "; the models are post-processing"
            )
        else:
            mechanism = "analytic Gaussian on the uncorrupted iterate, GDP-composed over releases"
        if self._any_auto_bound():
            # Not GDP (basic composition with the quantile): no mu, no spent mu.
            released += self._quantile_released()
            if private:
                mechanism += self._quantile_mechanisms(fitting)
            spent = math.nan
        return spec.guarantee(
            mechanism=mechanism, released=released, n_releases=self._stream_releases,
            n_records=self._stream_samples, spent_mu=spent,
        )

    def decision_function(self, X):
        """Signed distance to the separating hyperplane of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For binary problems, positive scores predict ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, accept_sparse="csr", reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _has_log_loss(self):
        return self.loss == "log_loss"

    @available_if(_has_log_loss)
    def predict_proba(self, X):
        """Class probabilities (log loss only).

        Binary: the logistic function of the score. Multiclass: the softmax of
        the one-vs-rest scores, which keeps ``argmax`` equal to :meth:`predict`
        even where the per-class sigmoids saturate at 1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, in the order of ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    @available_if(_has_log_loss)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


def _sparse_format(X):
    """Whether validation gives ``X`` as a sparse matrix: its format, never its values.

    A SciPy sparse matrix or array, or a pandas DataFrame whose every column is
    sparse (scikit-learn's validation converts it with ``DataFrame.sparse.to_coo``).
    """
    if issparse(X):
        return True
    pandas = sys.modules.get("pandas")     # a DataFrame means pandas is loaded
    if pandas is None or not isinstance(X, pandas.DataFrame) or X.shape[1] == 0:
        return False
    return all(isinstance(dtype, pandas.SparseDtype) for dtype in X.dtypes)


def _dtype_kind(dtype):
    """``"number"``, ``"string"`` or ``None`` (undecided) from a dtype alone."""
    if dtype.kind in "biuf":
        return "number"
    if dtype.kind in "US":
        return "string"
    return None


def _values_kind(values):
    """The kind of a public label set: from its dtype, or from its values when object."""
    array = np.asarray(list(values) if isinstance(values, range) else values)
    kind = _dtype_kind(array.dtype)
    if kind is not None or array.dtype.kind != "O":
        return kind
    items = array.ravel().tolist()
    if items and all(isinstance(v, str) for v in items):
        return "string"
    if items and all(isinstance(v, (int, float, np.number)) for v in items):
        return "number"
    return None


def _same_label_set(a, b):
    """Whether two public label sets hold the same labels (mixed types: never raising)."""
    try:
        return bool(np.array_equal(np.unique(np.asarray(a)), np.unique(np.asarray(b))))
    except TypeError:
        return False


def _short(values, limit=12):
    """A public label set for an error message, shortened."""
    items = np.asarray(list(values) if isinstance(values, range) else values).ravel().tolist()
    return repr(items if len(items) <= limit else items[:limit] + ["..."])


def _equals(y, label):
    """Elementwise ``y == label`` as a boolean array of ``y``'s shape, never raising.

    A label of another type (a string against numbers) matches nothing.
    """
    try:
        equal = np.asarray(y == label, dtype=bool)
    except (TypeError, ValueError):
        equal = np.array([bool(v == label) for v in y], dtype=bool)
    return np.broadcast_to(equal, y.shape)
