"""PrivateHyperparameterSearch: release the best of a random number of private candidates."""

import copy
import itertools
import math
import warnings
from numbers import Real

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, has_fit_parameter
from .._validate import check_no_dask_collections, jointly_typed, validate_data

from .._base import (
    DELTA_CONSTRAINT,
    POSITIVE,
    PrivateEstimatorMixin,
    _call_lock,
    bound_in_use,
    _refunded_on_failure,
    _warn_large_delta,
    _silent_floats,
    _settle,
    make_generator,
)
from .._core import selection as core
from .._core._weights import canonical_csr, check_unit_sample_weight
from ..exceptions import PrivacyLeakWarning, _warn_at_caller
from ..privacy import PrivacyAccountant, PrivacyGuarantee
from ..privacy._accountant import noise_fingerprint
from ..privacy._selection import (
    selection_epsilon,
    truncated_negative_binomial_gamma,
    truncated_negative_binomial_mean,
)
from .._export import export_public as _export_public
from ._candidates import (
    PRIVACY_PARAMS,
    candidate_rho,
    check_released_candidate,
    check_supported,
    final_estimator,
    final_prefix,
    is_private_transformer,
    pin_selection_solver,
)

_NEIGHBOURS = "replace-one"
# Set by the search itself, never by the grid.
_RESERVED = ("random_state", "accountant", "classes")
# A Pipeline's own parameters the search fixes on every candidate (verbose=False,
# memory=None): a printed block per candidate would reveal K, and a joblib cache
# would let candidates (and later searches) reuse one private step's release.
_PIPELINE_FIXED = {"verbose": False, "memory": None}
# Most list combinations the privacy plan enumerates (one candidate_rho each, ~0.1 ms).
_PLAN_LIMIT = 50_000


def _delegates(method):
    """``available_if`` check: the (best) estimator has ``method``."""
    def check(self):
        owner = getattr(self, "best_estimator_", self.estimator)
        getattr(owner, method)
        return True
    return check


class PrivateHyperparameterSearch(PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    """Private selection of hyperparameters: the best of a random number of private fits.

    ``fit`` splits the rows at random (public randomness, independent of the
    data) into a training part and a validation part, draws a random number
    ``K`` of candidates from a truncated negative binomial distribution, and
    for each candidate draws a setting from ``param_distributions``, fits a
    clone of ``estimator`` on the training part and scores it on the
    validation part with Gaussian noise. Only the candidate with the best
    noisy score is kept: its model, its setting and its noisy score are
    released; every other candidate is discarded. This is the private
    selection of Papernot and Steinke (2022, Theorem 2), which with
    ``shape=1`` is the random stopping of Liu and Talwar (2019).

    Parameters
    ----------
    estimator : estimator instance
        A ``PrivateIGDClassifier``, ``PrivateQFTLRegressor``,
        ``PrivateFrankWolfeLasso``, ``PrivateMirrorDescentRegressor`` or
        ``ParameterFreeLocalDPRegressor``, or a ``Pipeline`` whose final step
        is one of them and whose other steps are public transformers
        (``FunctionTransformer`` with a public function, ``Normalizer``,
        ``Binarizer``, ``PolynomialFeatures``, ``"passthrough"``: their fitted
        state does not depend on the records; in a Pipeline, name parameters
        ``step__param``); its parameters are the defaults of every candidate.
        Others are refused before any data is read. A Pipeline's candidates
        run with ``verbose=False`` (a printed block per candidate would reveal
        ``K``) and ``memory=None`` (a cache would let them reuse one private
        step's release).
    param_distributions : dict or list of dicts
        Maps parameter names to lists (drawn uniformly, with replacement) or
        to distributions with an ``rvs`` method. A list of dicts picks one
        dict uniformly per candidate. The privacy parameters (``epsilon``,
        ``delta``, ``solver``, ``selection``, ``feature_weights``) may be
        searched, as lists only. The plan enumerates every combination of the
        list values. A distribution's draws must leave the candidate's
        guarantee unchanged: each is checked before the candidate's fit, and
        one that changes it (``"auto"`` for a bound) stops the search with a
        ``ValueError``, charged. Each candidate gets its own copy of every drawn
        value (estimators are cloned). ``random_state``, ``accountant`` and
        ``classes`` (and a Pipeline's own ``verbose`` and ``memory``) are set by
        the search.
    n_candidates : float, default=10.0
        Expected number of candidates ``E[K] > 1``. The guarantee grows with
        ``log(n_candidates)``, not linearly.
    shape : float, default=1.0
        Shape ``eta >= 0`` of the truncated negative binomial: 1 is the
        geometric distribution (random stopping), 0 the logarithmic one,
        whose tail is heavier and whose privacy overhead is smaller.
    delta : float, default=1e-6
        The delta of the selection's total ``(epsilon, delta)`` guarantee.
    validation_fraction : float, default=0.2
        Share of the rows held out for scoring, in ``(0, 1)``.
    y_bound : float or None, default=None
        Regression only: targets and predictions are clipped to
        ``[-y_bound, y_bound]`` to bound the score. ``None`` takes the
        estimator's own ``y_bound`` parameter (1.0 where that is left unset,
        ``None``).
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the candidate count, the settings, the score noise
        and the candidates' own noise. An integer makes everything
        reproducible (by whoever knows it: experiments only).
    accountant : PrivacyAccountant or None, default=None
        A user-held budget (:class:`~sklearn_dpol.privacy.PrivacyAccountant`).
        The search reserves its total guarantee once, before reading any data,
        is refunded if ``fit`` fails and settles at ``privacy_``; the
        candidates run without it, so they are not charged one by one. With
        an accountant, a classifier's ``classes`` must be public (not
        ``None``), and one ledger takes one search per integer seed
        (:class:`~sklearn_dpol.exceptions.NoiseReuseError`).

    Attributes
    ----------
    best_estimator_ : estimator
        The released candidate, fitted on the training part only.
    best_params_ : dict
        Its hyperparameters (the searched ones).
    best_score_ : float
        Its noisy validation score: accuracy for classifiers,
        ``1 - mean((clip(y_pred) - clip(y))^2) / (2 y_bound)^2`` for regressors.
        With ``sample_weight``, ``(1/m) sum_i w_i v_i`` over the ``m`` validation
        rows (divided by ``m``, not by the weights' sum, which would change the
        score's sensitivity): the weighted score times the mean validation weight.
    privacy_ : PrivacyGuarantee
        The selection's total guarantee, which covers everything above.
    n_candidates_ : int
        The number ``K`` of candidates actually run. **Not released**: the
        guarantee rests on ``K`` staying secret, so this attribute is not
        covered and :meth:`export_public` drops it.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn_dpol.privacy.selection_epsilon : The total guarantee of a selection.
    sklearn_dpol.PrivacyAccountant : A budget the search charges once.
    sklearn.model_selection.GridSearchCV : Non-private search; its scores and
        choice are not covered by any guarantee.

    Notes
    -----
    Privacy is per record under replace-one neighbours. A candidate is a fit
    on the training part (``rho_fit``-zCDP) and a score on the disjoint
    validation part, a mean of per-record values in ``[0, 1]`` (replace-one
    sensitivity ``1/m``) plus Gaussian noise of standard deviation
    ``1 / (m sqrt(2 rho_fit))``; a record is in one part only, so the
    candidate is ``rho_fit``-zCDP (parallel composition) and the score costs
    nothing extra. Drawing the setting at random makes one candidate the
    mixture of the settings' guarantees, whose Renyi divergence is
    ``log(sum_h w_h exp((l-1) l rho_h)) / (l-1)``. Theorem 2 of Papernot and
    Steinke bounds the Renyi DP of the best of ``K`` candidates, and
    Proposition 12 of Canonne, Kamath and Steinke converts it to
    ``(epsilon, delta)``, minimised over the order. The guarantee is computed
    from the hyperparameters alone, before any data is read
    (:meth:`privacy_plan`). ``best_estimator_`` is not refitted on all rows: a
    refit would be one more release. The label set of a classifier is taken
    from the estimator's ``classes``; if it is ``None`` it comes from ``y``,
    is not covered and warns with
    :class:`~sklearn_dpol.exceptions.PrivacyLeakWarning`. Derivation:
    ``doc/privacy.md``, section 12.

    Candidates need a zCDP ``rho``, which objective perturbation does not have:
    an estimator with ``solver="auto"`` (``PrivateIGDClassifier``,
    ``PrivateMirrorDescentRegressor``) is planned and fitted with its Gaussian
    solver (``"igd"``, ``"mirror_descent"``), which is less accurate than the
    objective perturbation its ``fit`` would use (``doc/model_selection.md``,
    section 3). When only the budget or a knob with a public default rule is to
    be chosen, one default ``fit`` is usually the better use of the budget.

    Sparse ``X`` (CSR; other formats are converted) reaches the candidates as
    CSR row slices of the public split when every candidate the search space
    can produce takes sparse input (every combination of the list values is
    checked, from the hyperparameters alone); otherwise it is refused with a
    ``ValueError`` before anything is read or charged. ``sample_weight`` in
    ``[0, 1]`` weighs the final estimator's fit on the training part and the
    per-record score values on the validation part, at the score's unweighted
    sensitivity ``1/m`` (``doc/integrations.md``, "Sparse data and sample
    weights").

    References
    ----------
    N. Papernot and T. Steinke. Hyperparameter tuning with Renyi differential
    privacy. ICLR 2022.

    J. Liu and K. Talwar. Private selection from private candidates. STOC 2019.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpol import PrivateIGDClassifier
    >>> from sklearn_dpol.model_selection import PrivateHyperparameterSearch
    >>> X, y = make_classification(n_samples=20_000, random_state=0)
    >>> search = PrivateHyperparameterSearch(
    ...     PrivateIGDClassifier(data_norm=5.0, classes=[0, 1]),
    ...     {"alpha": [1e-3, 1e-2, 1e-1], "epsilon": [0.5, 1.0]},
    ...     n_candidates=5, random_state=0)
    >>> round(search.privacy_plan().epsilon, 2)
    1.81
    >>> search.fit(X, y).score(X, y) > 0.7
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "param_distributions": [dict, list],
        "n_candidates": [Interval(Real, 1, None, closed="neither")],
        "shape": [Interval(Real, 0, None, closed="left")],
        "delta": [DELTA_CONSTRAINT],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "y_bound": [POSITIVE, None],
        "random_state": ["random_state"],
        "accountant": [PrivacyAccountant, None],
    }
    # Not covered by the guarantee: dropped by export_public().
    _private_state = ("n_candidates_",)

    def __init__(self, estimator, param_distributions, *, n_candidates=10.0, shape=1.0,
                 delta=1e-6, validation_fraction=0.2, y_bound=None, random_state=None,
                 accountant=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_candidates = n_candidates
        self.shape = shape
        self.delta = delta
        self.validation_fraction = validation_fraction
        self.y_bound = y_bound
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = copy.deepcopy(inner.classifier_tags)
        tags.regressor_tags = copy.deepcopy(inner.regressor_tags)
        tags.target_tags.required = True
        tags.input_tags.sparse = self._takes_sparse()
        return tags

    def _takes_sparse(self):
        """The sparse tag: every candidate the search can produce takes sparse ``X``.

        scikit-learn reads the tags in every ``validate_data`` (``predict``
        included), and the answer enumerates the grid, so it is kept for as long
        as the estimator, its parameters and the searched values are the same
        objects. ``fit`` decides afresh (:meth:`_check_sparse_input`).
        """
        try:
            key = _parameters_key(self.estimator, self.param_distributions)
        except Exception:  # noqa: BLE001 - unusual parameters: no cache
            key = None
        cached = self.__dict__.get("_sparse_tag")
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        try:   # sparse X when every candidate the search can produce takes it
            value = self._sparse_refusal(self._spaces()) is None
        except Exception:  # noqa: BLE001 - invalid parameters: fit will say why
            value = False
        if key is not None:
            self.__dict__["_sparse_tag"] = (key, value)
        return value

    def _sparse_refusal(self, spaces):
        """``None`` when every candidate ``spaces`` can produce takes sparse ``X``,
        else the name of one that does not (and its setting), from parameters alone.

        Every combination of the list values is set on a clone, as the plan does
        (the solver :func:`pin_selection_solver` fits it with included), and asked
        for its ``input_tags.sparse`` (a Pipeline's is every step's). A value drawn
        from a distribution is checked on each candidate before its fit
        (:meth:`_check_sparse_candidate`).
        """
        for space in spaces:
            names = self._list_names(space)
            for combo in itertools.product(*(space[name] for name in names)):
                setting = dict(zip(names, combo))
                candidate = clone(self.estimator).set_params(**setting)
                pin_selection_solver(final_estimator(candidate))
                if not get_tags(candidate).input_tags.sparse:
                    return _describe(candidate, setting)
        return None

    def _check_sparse_input(self, plan):
        """``ValueError`` (nothing read, nothing charged) for sparse ``X`` when a
        candidate the plan can produce does not take it."""
        refused = self._sparse_refusal(plan["spaces"])
        if refused is not None:
            raise ValueError(
                f"PrivateHyperparameterSearch got a sparse X, but the search space can "
                f"produce a candidate that does not take sparse input ({refused}; for "
                "example a local-DP regressor, or a Pipeline with PrivateRangeScaler), and "
                "its fit would fail after the read, charged. Search only settings that take "
                "sparse X, or pass a dense X. Nothing was read or charged."
            )

    @staticmethod
    def _check_sparse_candidate(candidate, setting):
        """Before a candidate's fit on sparse ``X``: it takes sparse input.

        Its list values were checked before the read; a value drawn from a
        distribution can only be checked here, after the read (charged)."""
        if not get_tags(candidate).input_tags.sparse:
            raise ValueError(
                f"A candidate drew {setting!r}, with which {_describe(candidate, None)} "
                "does not take sparse X: search such a parameter as a list of values, "
                "which is checked before any data is read. Nothing was released; the "
                "search's guarantee stays charged."
            )

    def _check_weights_supported(self):
        """``ValueError`` (nothing read) unless the final estimator's ``fit`` takes
        ``sample_weight`` (the only estimator a candidate's weights go to)."""
        final = final_estimator(self.estimator)
        if not has_fit_parameter(final, "sample_weight"):
            raise ValueError(
                f"sample_weight was passed, but {type(final).__name__}.fit takes no "
                "sample_weight, so the candidates could not be weighted. Fit without "
                "sample_weight. Nothing was read or charged."
            )

    # ----------------------------------------------------------------- plan
    def _spaces(self):
        """The search spaces as a list of dicts, checked against the estimator."""
        check_supported(self.estimator)
        spaces = self.param_distributions
        spaces = [spaces] if isinstance(spaces, dict) else list(spaces)
        if not spaces or not all(isinstance(s, dict) and s for s in spaces):
            raise ValueError(
                "param_distributions must be a non-empty dict, or a non-empty list of "
                "non-empty dicts, mapping parameter names to lists or distributions."
            )
        valid = self.estimator.get_params(deep=isinstance(self.estimator, Pipeline))
        for space in spaces:
            for name, values in space.items():
                self._check_space_entry(name, values, valid)
        return spaces

    def _own_name(self, name):
        """``name`` without the Pipeline's final-step prefix, or ``None`` for another step's."""
        prefix = final_prefix(self.estimator)
        return name[len(prefix):] if name.startswith(prefix) else None

    def _private_step_param(self, name):
        """A private transformer's parameter name for ``name`` (``step__param``), or ``None``."""
        if not isinstance(self.estimator, Pipeline) or self._own_name(name) is not None:
            return None
        step, _, param = name.partition("__")
        steps = dict(self.estimator.steps[:-1])
        return param if param and is_private_transformer(steps.get(step)) else None

    def _privacy_param(self, name):
        """True when ``name`` changes a candidate's guarantee (its final or private steps')."""
        own = self._own_name(name)
        return (own if own is not None else self._private_step_param(name)) in PRIVACY_PARAMS

    def _check_space_entry(self, name, values, valid):
        own = self._own_name(name)
        pipeline = isinstance(self.estimator, Pipeline)
        if self._private_step_param(name) in _RESERVED:
            raise ValueError(
                f"param_distributions names {name!r}, which is set by the search for every "
                f"private step. Search only the steps' other hyperparameters."
            )
        if pipeline and own is None and name in _PIPELINE_FIXED:
            raise ValueError(
                f"param_distributions names {name!r}, the Pipeline's own {name!r}, which "
                "the search fixes for every candidate (verbose=False: one printed block "
                "per candidate would reveal K; memory=None: a cache would let candidates "
                "reuse one private step's release). Search the steps' parameters."
            )
        if pipeline and own is None and name in ("steps", final_prefix(self.estimator)[:-2]):
            raise ValueError(
                f"param_distributions names {name!r}, which replaces the Pipeline's steps "
                "or its final estimator: search the final estimator's own parameters "
                f"({final_prefix(self.estimator)}<name>) and public steps' parameters."
            )
        if name not in valid or own in _RESERVED:
            reason = "is set by the search" if own in _RESERVED else "is not a parameter"
            raise ValueError(
                f"param_distributions names {name!r}, which {reason} of "
                f"{type(self.estimator).__name__}. Search only its own hyperparameters "
                f"other than {', '.join(_RESERVED)}."
            )
        if hasattr(values, "rvs"):
            if self._privacy_param(name) or (pipeline and own is None
                                             and "__" not in name):
                raise ValueError(
                    f"{name!r} changes the candidates' guarantee and must be searched as a "
                    f"list of values, not a distribution; for example {name}=[0.5, 1.0]."
                )
            return
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") \
                or len(values) == 0:
            raise ValueError(
                f"param_distributions[{name!r}] must be a non-empty list or a distribution "
                f"with an rvs method; got {values!r}."
            )
        for value in values:  # invalid values fail now, before any data is read
            candidate = clone(self.estimator).set_params(**{name: value})
            check_supported(candidate)  # a replaced Pipeline step must be public too
            estimators = [s for _, s in candidate.steps] if pipeline else [candidate]
            for estimator in estimators:
                if hasattr(estimator, "_validate_params"):
                    estimator._validate_params()

    @staticmethod
    def _list_names(space):
        """The names of ``space`` searched as lists (the others are distributions)."""
        return [name for name in sorted(space) if not hasattr(space[name], "rvs")]

    def _setting_rho(self, values):
        """``rho`` of a candidate with ``values`` set on the estimator (no data)."""
        return candidate_rho(clone(self.estimator).set_params(**values))

    def _space_combos(self, spaces):
        """Every combination of each space's list-valued parameters, with its ``rho``.

        The full product: a parameter that changes ``rho`` only together with
        another (``feature_bound`` and ``y_bound`` of ``PrivateFrankWolfeLasso``,
        whose "auto" quantiles share one budget split) is enumerated with it.
        Returns, per space, ``(names, [(combo, rho), ...])``; from the
        hyperparameters alone.
        """
        sizes = [math.prod(len(space[name]) for name in self._list_names(space))
                 for space in spaces]
        if sum(sizes) > _PLAN_LIMIT:
            raise ValueError(
                f"param_distributions has {sum(sizes)} combinations of list values; the "
                f"privacy plan enumerates every one (at most {_PLAN_LIMIT}), because a "
                "parameter can change a candidate's guarantee in combination with another. "
                "Search fewer values, or search parameters that do not change the "
                "guarantee (a learning rate, a regularization strength) as distributions."
            )
        combos = []
        for space in spaces:
            names = self._list_names(space)
            combos.append((names, [
                (combo, self._setting_rho(dict(zip(names, combo))))
                for combo in itertools.product(*(space[name] for name in names))]))
        return combos

    def _setting_mixture(self, spaces, combos=None):
        """The distinct ``rho`` of one candidate and their probabilities.

        A space is drawn uniformly, then each list uniformly: every combination
        of a space's list values has probability ``1 / (len(spaces) * size)``.
        A distribution-valued parameter does not enter the plan: each of its
        draws is checked to leave ``rho`` unchanged (:meth:`_check_planned_rho`).
        """
        combos = self._space_combos(spaces) if combos is None else combos
        mixture = {}
        for _, rows in combos:
            for _, rho in rows:
                mixture.setdefault(rho, []).append(1.0 / len(combos) / len(rows))
        rhos = list(mixture)
        return (np.asarray(rhos, dtype=np.float64),
                np.asarray([math.fsum(mixture[rho]) for rho in rhos]))

    def _check_planned_rho(self, plan, index, setting, rho, rng):
        """Before a candidate's fit: its ``rho`` is the one the plan gave its setting.

        Public values only (the setting comes from the generator, never from the
        data). A list-valued setting always passes: the plan enumerated it, so a
        failure is a bug (``RuntimeError``). A value drawn from a distribution
        must leave ``rho`` unchanged at *every* combination of its space's list
        values (:meth:`_check_draws`), so that whether the search stops does not
        depend on the list values drawn; with several spaces, the other spaces'
        distributions are drawn too (from ``rng``) and checked, so that it does
        not depend on the space drawn either (``doc/privacy.md``, section 54.5).
        A failure raises; nothing is released, and the search stays charged
        (the data has been read).
        """
        names, rows = plan["combos"][index]
        space = plan["spaces"][index]
        self._check_draws(plan, index,
                          {name: setting[name] for name in sorted(space) if name not in names})
        for other, other_space in enumerate(plan["spaces"]):
            other_names = plan["combos"][other][0]
            if other != index and len(other_names) < len(other_space):
                self._check_draws(plan, other, core.sample_setting([{
                    name: values for name, values in other_space.items()
                    if name not in other_names}], rng))
        # The plan's rho of these list values (the same function of the same values;
        # an array of values yields new scalar objects, so no lookup by identity).
        planned = self._setting_rho({name: setting[name] for name in names})
        if planned not in {r for _, r in rows} or rho != planned:
            raise RuntimeError(
                f"The candidate with setting {setting!r} has rho={rho}, but the privacy "
                f"plan gave its setting rho={planned}: the selection's accounting is out "
                "of date. Nothing was released. Please report this bug."
            )

    def _check_draws(self, plan, index, drawn):
        """``ValueError`` unless the distribution draws ``drawn`` of space ``index``
        leave ``rho`` at the plan's value for every combination of its list values."""
        if not drawn:
            return
        names, rows = plan["combos"][index]
        for combo, planned in rows:
            lists = dict(zip(names, combo))
            actual = self._setting_rho({**lists, **drawn})
            if actual != planned:
                raise ValueError(
                    f"A candidate drew {drawn!r} from param_distributions' distributions, "
                    f"which changes its guarantee (rho={actual:.6g} with {lists!r}, where "
                    f"the privacy plan has rho={planned:.6g}): a parameter that can change "
                    "the guarantee (a bound or alpha that can be 'auto') must be searched "
                    "as a list of values. Nothing was released; the search's guarantee "
                    "stays charged."
                )

    def _score_bound(self, spaces):
        if get_tags(self.estimator).estimator_type != "regressor":
            return None
        if self.y_bound is not None:
            return float(self.y_bound)
        params = final_estimator(self.estimator).get_params(deep=False)
        if "y_bound" not in params or any(
                final_prefix(self.estimator) + "y_bound" in space for space in spaces):
            raise ValueError(
                "The regression score needs one public bound on the targets: pass "
                "y_bound=... to the search (the estimator has none, or it is searched)."
            )
        if isinstance(params["y_bound"], str):
            raise ValueError(
                f"The regression score needs one public bound on the targets, and the "
                f"estimator's y_bound={params['y_bound']!r} is resolved privately inside each "
                "candidate: pass a public y_bound=... to the search. Nothing was read."
            )
        return float(bound_in_use(params["y_bound"]))   # None, unset: its 1.0

    def _plan(self):
        """Everything the guarantee depends on, from the hyperparameters alone."""
        spaces = self._spaces()
        combos = self._space_combos(spaces)
        rhos, weights = self._setting_mixture(spaces, combos)
        shape = float(self.shape)
        gamma = truncated_negative_binomial_gamma(self.n_candidates, shape)
        epsilon, order = selection_epsilon(self.delta, rhos, weights,
                                           n_candidates=self.n_candidates, shape=shape)
        return {
            "spaces": spaces, "combos": combos, "rhos": rhos, "gamma": gamma,
            "shape": shape,
            "mean": truncated_negative_binomial_mean(gamma, shape),
            "epsilon": epsilon, "order": order, "score_bound": self._score_bound(spaces),
        }

    def privacy_plan(self):
        """The total guarantee ``fit`` will give, computed without any data.

        Returns
        -------
        guarantee : PrivacyGuarantee
            ``(epsilon, delta)`` of the whole selection; ``n_records`` is 0
            until ``fit`` has seen the data.
        """
        self._validate_params()
        return self._guarantee(self._plan(), n_records=0, labels_from_data=False)

    def _guarantee(self, plan, n_records, labels_from_data):
        finite = plan["rhos"][np.isfinite(plan["rhos"])]
        rho_range = (f"rho in [{finite.min():.4g}, {finite.max():.4g}]" if finite.size
                     else "rho=inf")
        mechanism = (
            f"private selection (Papernot and Steinke 2022, Theorem 2): the best noisy "
            f"validation score of K ~ truncated negative binomial(eta={plan['shape']:.4g}, "
            f"gamma={plan['gamma']:.4g}) candidates, E[K]={plan['mean']:.4g}; each "
            f"candidate zCDP with {rho_range} (fit and noisy score on disjoint rows); "
            f"Renyi DP of order {plan['order']:.4g} converted exactly (Canonne, Kamath "
            "and Steinke 2020, Proposition 12)"
        )
        released = (
            "best_estimator_ (fitted on the training part), best_params_ and best_score_ "
            "(noisy); n_candidates_ (K) is NOT released: it is private, not covered, and "
            "export_public() drops it; the other candidates are discarded"
        )
        if labels_from_data:
            released += "; classes_ was taken from y and is NOT covered"
        return PrivacyGuarantee(
            epsilon=float(plan["epsilon"]), delta=float(self.delta), mu=math.nan,
            neighbouring=_NEIGHBOURS, mechanism=mechanism, released=released,
            n_releases=1, n_records=int(n_records),
            records="the records passed to fit (training and validation parts)",
            spent_mu=math.nan, budget="this release (the whole search)",
        )

    def _reserve_budget(self, guarantee, rng):
        """Reserve the whole search's guarantee with the accountant, if any.

        One charge for the search, made before any data is read; the candidates
        run without an accountant (see ``_candidate``), so they are not charged
        again one by one. Every random draw of the search, the candidates'
        seeds included, comes from ``rng``: one noise fingerprint per search.
        """
        if self.accountant is None:
            return None
        if self._labels_from_y() and math.isfinite(guarantee.epsilon):
            raise ValueError(
                "With an accountant, the classifier's label set must be public: "
                f"{type(self.estimator).__name__} has classes=None, so the labels would "
                "be taken from y and released as classes_ outside the guarantee the "
                "accountant is charged. Pass classes=[...] from public knowledge to the "
                "estimator. Nothing was read or charged."
            )
        noise = None if self.random_state is None else rng
        return self.accountant.reserve(guarantee, type(self).__name__, kind="fit",
                                       noise=noise_fingerprint(noise))

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Run the private selection and release the best candidate.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, scaled by public constants. Sparse ``X`` is used as
            CSR (other formats are converted) and reaches the candidates
            sparse, split by row index, when every candidate the search space
            can produce takes sparse input; otherwise it is refused with a
            ``ValueError`` before anything is read or charged.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights in ``[0, 1]`` (validated before the data is read): the
            training part's go to the final estimator's ``fit`` (a Pipeline's
            other steps are fitted unweighted), the validation part's multiply
            the per-record score values, whose sum is still divided by the
            public count ``m`` of validation rows, so the score's sensitivity
            and noise are unchanged (``doc/privacy.md``, "Private
            hyperparameter selection"). Refused, before anything is read, when
            the final estimator's ``fit`` takes no ``sample_weight``.

        Returns
        -------
        self : object
            The search, with ``best_estimator_`` and ``privacy_``.
        """
        with _call_lock(self):   # concurrent fits run one after the other (doc/privacy.md 56.2)
            return self._fit_locked(X, y, sample_weight)

    def _fit_locked(self, X, y, sample_weight):
        # Before anything reads a shape (a dask DataFrame's would be computed).
        check_no_dask_collections(self, X=X, y=y, sample_weight=sample_weight)
        plan = self._plan()
        sparse = issparse(X)    # the input's format: public
        if sparse:
            self._check_sparse_input(plan)
        if sample_weight is not None:
            self._check_weights_supported()
        with self._atomic(), _silent_floats():
            rng = make_generator(self.random_state, purpose=0)
            charge = self._reserve_budget(self._guarantee(plan, 0, False), rng)
            _warn_large_delta(self, X)   # after the plan, before the data is read
            with _refunded_on_failure(charge) as call:
                for name in (*self._private_state, "_exported_public"):
                    self.__dict__.pop(name, None)
                X, y = validate_data(self, X, y, dtype=np.float64,
                                     accept_sparse="csr" if sparse else False,
                                     y_numeric=plan["score_bound"] is not None)
                X = canonical_csr(X)
                sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
                # The final estimator's public checks of its classes against y's dtype
                # (not its values), here before the read: in a candidate's fit they
                # would come after it and be charged (review 125; doc/privacy.md 58.3).
                public_label_checks = getattr(final_estimator(self.estimator),
                                              "_check_public_classes", None)
                if public_label_checks is not None:
                    public_label_checks(y, None, True)
                if X.shape[0] < 2:
                    raise ValueError(
                        f"Private selection needs at least 2 samples (one to train on, "
                        f"one to validate); got {X.shape[0]} "
                        f"sample{'s' if X.shape[0] != 1 else ''}."
                    )
                # Validation is over: a failure from here on (a candidate's fit on
                # its split, a public step's overflow) depends on the records and is
                # charged, never refunded (doc/privacy.md, sections 13 and 49).
                call.data_read = True
                self._select(X, y, plan, rng, sample_weight)
                _settle(charge, self.privacy_)
        return self

    def _select(self, X, y, plan, rng, sample_weight=None):
        classes, from_data = self._label_set(y)
        if from_data:
            y = jointly_typed(y)   # the candidates read y as the label set was typed
        train, validation = core.split_indices(X.shape[0], float(self.validation_fraction),
                                               rng)
        n_candidates = core.draw_candidate_count(plan["gamma"], plan["shape"], rng)
        best = None
        for _ in range(n_candidates):
            index, setting = core.sample_setting(plan["spaces"], rng, return_space=True)
            candidate, rho = self._candidate(setting, classes, rng)
            self._check_planned_rho(plan, index, setting, rho, rng)
            if issparse(X):
                self._check_sparse_candidate(candidate, setting)
            fit_params = _weighted_fit_params(
                candidate, None if sample_weight is None else sample_weight[train])
            # A candidate's warnings describe an unreleased run (and their number
            # would reveal K): hold every warning of its fit and of its scoring.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                candidate.fit(X[train], y[train], **fit_params)
                check_released_candidate(candidate, rho)
                # Scoring must not warn either: overflow in a prediction would
                # say something about one validation record.
                with np.errstate(all="ignore"):
                    score = self._noisy_score(
                        candidate, X[validation], y[validation], rho, plan["score_bound"],
                        rng, None if sample_weight is None else sample_weight[validation])
            if best is None or score > best[0]:
                best = (score, setting, candidate, caught)
        self.best_score_, self.best_params_, self.best_estimator_, caught = best
        _mark_released_by_search(self.best_estimator_)
        for record in _replayable(caught):
            warnings.warn_explicit(record.message, record.category, record.filename,
                                   record.lineno)
        self.n_candidates_ = n_candidates
        self.privacy_ = self._guarantee(plan, X.shape[0], from_data)

    def _labels_from_y(self):
        """True when the classifier has no public label set (it would come from ``y``)."""
        params = final_estimator(self.estimator).get_params(deep=False)
        return (get_tags(self.estimator).estimator_type == "classifier"
                and "classes" in params and params["classes"] is None)

    def _label_set(self, y):
        """The classifier's label set: public if the estimator has one, else from ``y``."""
        params = final_estimator(self.estimator).get_params(deep=False)
        if get_tags(self.estimator).estimator_type != "classifier" or "classes" not in params:
            return None, False
        if params["classes"] is not None:
            return params["classes"], False
        _warn_at_caller(
            "The label set was taken from y and is released as classes_ without privacy "
            "protection. Pass classes=[...] from public knowledge to the estimator.",
            PrivacyLeakWarning,
        )
        return np.unique(jointly_typed(y)), True

    def _candidate(self, setting, classes, rng):
        # Each candidate gets its own copy of every drawn value (as scikit-learn's
        # searches do): an estimator given as a value (a private step) would
        # otherwise be one object refitted by every candidate that draws it, and
        # the released model would carry another candidate's release.
        candidate = clone(self.estimator).set_params(
            **{name: clone(value, safe=False) for name, value in setting.items()})
        params = final_estimator(candidate).get_params(deep=False)
        # A seeded search gives each candidate a RandomState, never an integer: the
        # candidate's fit draws its seed from it, and a refit of best_estimator_ (or of
        # a clone, which copies the advanced RandomState) draws the next one, so it can
        # never regenerate the released candidate's noise (an integer seed would, with
        # no charge on the ledger to refuse it; doc/privacy.md, section 49.6).
        seed = None if self.random_state is None else _candidate_seeder(rng)
        extra = {"random_state": seed} if "random_state" in params else {}
        if "accountant" in params:
            extra["accountant"] = None  # the search is charged once, for its total
        if "verbose" in params:
            extra["verbose"] = 0  # one summary per candidate would reveal K
        if classes is not None:
            extra["classes"] = classes
        prefix = final_prefix(candidate)
        candidate.set_params(**{prefix + name: value for name, value in extra.items()})
        if isinstance(candidate, Pipeline):
            candidate.set_params(**_PIPELINE_FIXED)
            # Private transformers: their own seed, never their own accountant
            # (the search is charged once) and no per-candidate summary.
            for name, step in candidate.steps[:-1]:
                if is_private_transformer(step):
                    step_seed = (None if self.random_state is None
                                 else _candidate_seeder(rng))
                    candidate.set_params(**{f"{name}__random_state": step_seed,
                                            f"{name}__accountant": None,
                                            f"{name}__verbose": 0})
        return candidate, candidate_rho(candidate)

    @staticmethod
    def _noisy_score(candidate, X, y, rho, bound, rng, weights=None):
        y_pred = candidate.predict(X)
        values = (core.accuracy_values(y, y_pred) if bound is None
                  else core.clipped_squared_error_values(y, y_pred, bound))
        if weights is not None:
            # w_i v_i in [0, 1], summed and divided by the public m (not by the weights'
            # sum): one record moves the score by at most 1/m, as unweighted.
            values = weights * values
        sigma = core.score_sigma(X.shape[0], math.sqrt(2.0 * rho))
        return core.noisy_mean_score(values, sigma, rng)

    # ------------------------------------------------------------ delegation
    def export_public(self):
        """A copy holding released values only.

        Drops ``n_candidates_`` (not covered) and replaces ``best_estimator_``
        by its own public export (a Pipeline's by ``sklearn_dpol.export_public``,
        step by step); ``random_state`` and ``accountant`` become ``None``, and
        the template ``estimator`` (and any estimator in
        ``param_distributions``) an unfitted clone without seed or accountant:
        a fitted template would carry its own private state.

        Returns
        -------
        public : PrivateHyperparameterSearch
            The public copy.
        """
        check_is_fitted(self)
        public = super().export_public()
        public.best_estimator_ = _export_public(self.best_estimator_)
        return public

    def _features(self, X):
        check_is_fitted(self)
        sparse = issparse(X) and self.__sklearn_tags__().input_tags.sparse
        return validate_data(self, X, dtype=np.float64, reset=False,
                             accept_sparse="csr" if sparse else False)

    @property
    def classes_(self):
        """The class labels of the released classifier."""
        check_is_fitted(self)
        return self.best_estimator_.classes_

    def predict(self, X):
        """Predict with the released candidate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions of ``best_estimator_``.
        """
        X = self._features(X)
        return self.best_estimator_.predict(X)

    @available_if(_delegates("decision_function"))
    def decision_function(self, X):
        """Decision function of the released candidate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray
            ``best_estimator_.decision_function(X)``.
        """
        X = self._features(X)
        return self.best_estimator_.decision_function(X)

    @available_if(_delegates("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the released candidate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            ``best_estimator_.predict_proba(X)``.
        """
        X = self._features(X)
        return self.best_estimator_.predict_proba(X)

    @available_if(_delegates("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the released candidate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``best_estimator_.predict_log_proba(X)``.
        """
        X = self._features(X)
        return self.best_estimator_.predict_log_proba(X)

    def score(self, X, y):
        """Score of the released candidate on ``(X, y)`` (its own ``score`` method).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            True targets.

        Returns
        -------
        score : float
            Accuracy for classifiers, R^2 for regressors.
        """
        X = self._features(X)
        return self.best_estimator_.score(X, y)


def _candidate_seeder(rng):
    """A candidate's ``random_state``: a ``RandomState`` seeded from the search's generator."""
    return np.random.RandomState(int(rng.integers(2**32 - 1)))


def _mark_released_by_search(estimator):
    """Refuse ``partial_fit`` on the search's released model (and its private steps).

    The search's charge covers one fit of each candidate; the candidate runs
    without an accountant, so a stream continued from it would release more
    under no charge. ``fit`` starts afresh and clears the mark.
    """
    steps = [s for _, s in estimator.steps] if isinstance(estimator, Pipeline) else [estimator]
    for step in steps:
        if isinstance(step, PrivateEstimatorMixin):
            step._released_by_search = True


def _replayable(caught):
    """The released candidate's warnings that say nothing about the data.

    Numeric ``RuntimeWarning``s (overflow, invalid values) depend on the values
    of individual records, which the guarantee does not cover: they are dropped.
    The others (for example a ``PrivacyLeakWarning`` about a public setting)
    follow from hyperparameters and shapes and are replayed.
    """
    return [record for record in caught
            if issubclass(record.category, PrivacyLeakWarning)
            or not issubclass(record.category, RuntimeWarning)]


def _parameters_key(estimator, param_distributions):
    """The identities of the objects the sparse tag depends on (cheap; no enumeration)."""
    deep = isinstance(estimator, Pipeline)
    params = tuple((name, id(value)) for name, value in estimator.get_params(deep=deep).items())
    spaces = ([param_distributions] if isinstance(param_distributions, dict)
              else list(param_distributions))
    searched = tuple(
        (id(space), tuple((name, id(values), len(values) if hasattr(values, "__len__") else -1,
                           tuple(map(id, values)) if isinstance(values, (list, tuple))
                           else ()) for name, values in space.items())
         if isinstance(space, dict) else id(space))
        for space in spaces)
    return id(estimator), params, id(param_distributions), searched


def _weighted_fit_params(candidate, weights):
    """The keywords that give a candidate's final estimator ``weights`` (and no other step).

    A Pipeline takes ``name__sample_weight``; with scikit-learn's metadata routing
    enabled it refuses that form, and takes ``sample_weight`` routed to the final
    step, which the search's own copy requests.
    """
    if weights is None:
        return {}
    if isinstance(candidate, Pipeline) and _routing_enabled():
        final_estimator(candidate).set_fit_request(sample_weight=True)
        return {"sample_weight": weights}
    return {final_prefix(candidate) + "sample_weight": weights}


def _describe(candidate, setting):
    """A candidate for a message: its final estimator (and the setting, if given)."""
    steps = ([step for _, step in candidate.steps] if isinstance(candidate, Pipeline)
             else [candidate])
    dense_only = [step for step in steps if step is not None and step != "passthrough"
                  and not get_tags(step).input_tags.sparse] or [final_estimator(candidate)]
    step = dense_only[0]
    text = type(step).__name__
    solver = step.get_params(deep=False).get("solver")
    if solver is not None:
        text += f" with solver={solver!r}"
    if isinstance(candidate, Pipeline):
        text = f"the Pipeline's step {text}"
    return text if setting is None else f"{text}, setting {setting!r}"
