"""The privacy of one candidate fit, from its hyperparameters alone (no data).

Private selection needs every candidate's guarantee before any data is
touched, as a zCDP parameter ``rho`` (a ``mu``-GDP fit is ``mu^2/2``-zCDP, with
Renyi divergence ``lambda mu^2 / 2`` exactly). Each estimator of this library
declares it in its privacy spec (``_privacy_spec``, see
:class:`~sklearn_dpol.privacy._spec.PrivacySpec`): a ``rho``, or why it has none.
Other estimators are refused with the reason.
"""

import math

from sklearn.pipeline import Pipeline

from .._export import is_public_step, public_step_error
from ..linear_model import PrivateFrankWolfeLasso, PrivateIGDClassifier, PrivateQFTLRegressor
from ..privacy import zcdp_epsilon

# Hyperparameters that change a candidate's guarantee: they must be searched as
# lists, so that the mixture of the candidates' guarantees can be enumerated.
PRIVACY_PARAMS = ("epsilon", "delta", "solver", "selection", "feature_weights")

_SUPPORTED_NAMES = (
    "PrivateIGDClassifier, PrivateQFTLRegressor, PrivateFrankWolfeLasso, "
    "PrivateMirrorDescentRegressor or ParameterFreeLocalDPRegressor"
)


def candidate_rho(estimator):
    """zCDP parameter of ``estimator.fit`` as configured; ``ValueError`` if unsupported.

    Parameters
    ----------
    estimator : estimator instance
        A candidate, with its hyperparameters set.

    Returns
    -------
    rho : float
        ``np.inf`` for ``epsilon=inf`` (no privacy).

    Notes
    -----
    A final step with ``solver="auto"`` whose class declares the solver selection
    uses (``_selection_solver``: ``"igd"`` for :class:`PrivateIGDClassifier`,
    ``"mirror_descent"`` for :class:`PrivateMirrorDescentRegressor`) is set to
    it here, the solver its ``rho`` is planned for (:func:`pin_selection_solver`):
    the search calls this on its own candidate copies, right before their fit.
    """
    check_supported(estimator)
    pin_selection_solver(final_estimator(estimator))
    final = selection_spec(final_estimator(estimator)).selection_rho()
    return math.fsum([final] + [rho for _, _, rho in private_steps(estimator)])


def private_steps(estimator):
    """``(name, step, rho)`` of a Pipeline's private transformers, in order.

    A private transformer is one of this library's estimators with a
    ``transform`` (``PrivateRangeScaler``) that states, before any data, a
    zCDP ``rho`` its ``fit`` never exceeds (``_selection_rho``). The Pipeline's
    candidate fit runs it and the final estimator on the same records:
    sequential composition, so their ``rho`` add (``doc/privacy.md``,
    "Private transformers in private selection").
    """
    if not isinstance(estimator, Pipeline):
        return []
    return [(name, step, float(step._selection_rho()))
            for name, step in estimator.steps[:-1] if is_private_transformer(step)]


def is_private_transformer(step):
    """True for this library's transformers that state a selection ``rho`` (see above)."""
    return (declares_spec(step) and hasattr(step, "transform")
            and callable(getattr(type(step), "_selection_rho", None)))


def selection_spec(estimator):
    """The privacy spec of ``estimator.fit`` before any data (no shape, no metadata).

    ``solver="auto"`` is planned with the class's ``_selection_solver`` (``"igd"``,
    ``"mirror_descent"``), the solver its candidates are fitted with
    (:func:`pin_selection_solver`).
    """
    solver = selection_solver(estimator)
    if solver is not None:
        return estimator._privacy_spec(None, fitting=True, solver=solver)
    return estimator._privacy_spec(None, fitting=True)


def selection_solver(estimator):
    """The solver private selection plans and fits ``estimator`` with, or ``None``.

    For ``solver="auto"``, the solver the estimator's class declares in
    ``_selection_solver``: selection composes its candidates' zCDP ``rho``, which
    objective perturbation (the rule's choice for the dense ``X`` selection takes)
    does not have, while the declared solver's noise is Gaussian (IGD's output
    perturbation, ``"igd"`` for :class:`PrivateIGDClassifier`; the noisy
    gradients of ``"mirror_descent"`` for :class:`PrivateMirrorDescentRegressor`).
    A public rule on the parameters alone (``doc/privacy.md``, "solver='auto' of
    PrivateIGDClassifier" and "solver='auto' of PrivateMirrorDescentRegressor").
    """
    solver = getattr(type(estimator), "_selection_solver", None)
    if solver is not None and estimator.get_params(deep=False).get("solver") == "auto":
        return solver
    return None


def pin_selection_solver(estimator):
    """Set the solver of :func:`selection_solver` on a candidate (the search's own copy).

    The candidate is then fitted as it was planned: its ``privacy_`` is the
    Gaussian guarantee of ``rho`` that :func:`check_released_guarantee` checks,
    and ``best_estimator_.solver`` says which solver was used.
    """
    solver = selection_solver(estimator)
    if solver is not None:
        estimator.set_params(solver=solver)
    return estimator


def declares_spec(estimator):
    """True for this library's own estimators (exact classes), which declare a spec."""
    kind = type(estimator)
    return (kind.__module__.split(".")[0] == "sklearn_dpol"
            and callable(getattr(kind, "_privacy_spec", None)))


def final_estimator(estimator):
    """The private estimator itself, or a Pipeline's final step."""
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator


def final_prefix(estimator):
    """The parameter prefix of the private estimator: ``"name__"`` in a Pipeline."""
    return f"{estimator.steps[-1][0]}__" if isinstance(estimator, Pipeline) else ""


def check_pipeline(pipeline):
    """``ValueError`` unless every step but the last is public or a private transformer.

    A public step's fitted state does not depend on the records
    (``_export.is_public_step``): post-processing. A private transformer
    (:func:`is_private_transformer`) is accounted by :func:`candidate_rho`.
    """
    steps = pipeline.steps
    if not steps:
        raise ValueError("Private selection needs a Pipeline with a final estimator.")
    for name, step in steps[:-1]:
        if not (is_public_step(step) or is_private_transformer(step)):
            raise ValueError(public_step_error(name, step))


def check_supported(estimator):
    """``ValueError`` unless private selection knows how ``estimator`` is calibrated.

    A ``Pipeline`` is supported when its other steps are public and its final
    step is supported.
    """
    if isinstance(estimator, Pipeline):
        check_pipeline(estimator)
        estimator = final_estimator(estimator)
    kind = type(estimator)
    spec = None
    if declares_spec(estimator):
        try:
            spec = selection_spec(estimator)
        except NotImplementedError:  # declares none (a search): not a candidate
            spec = None
        except (TypeError, ValueError):
            # Invalid parameters: the candidates' validation (and candidate_rho) says why.
            return
    if spec is not None and spec.rho is None and spec.no_rho_always:
        raise ValueError(
            f"Private selection does not support {kind.__name__}: {spec.no_rho}. Use "
            f"{_SUPPORTED_NAMES}."
        )
    if spec is None or (spec.rho is None and spec.no_rho is None):
        raise ValueError(
            f"Private selection needs the guarantee of every candidate before it sees the "
            f"data, and knows it only for this library's estimators (exact classes, not "
            f"subclasses, or as the final step of a Pipeline of public transformers); got "
            f"{kind.__name__}. Scale X by public constants (for example with "
            "FunctionTransformer(functools.partial(np.multiply, 1 / bound)) in a Pipeline)."
        )


def check_released_candidate(candidate, rho):
    """After a candidate's fit: every private step within its planned share of ``rho``.

    A Pipeline's private transformers are checked against their own
    ``_selection_rho`` (from the zCDP of the parts they released), the final
    estimator against the rest (:func:`check_released_guarantee`).
    """
    planned = 0.0
    for name, step, step_rho in private_steps(candidate):
        released = step._privacy_spec(None, fitting=False).parts_rho()
        if not released <= step_rho * (1 + 1e-9):
            raise RuntimeError(
                f"Pipeline step {name!r} ({type(step).__name__}) released rho={released}, "
                f"above its planned {step_rho}: the selection's accounting is out of date. "
                "Please report this bug."
            )
        planned += step_rho
    rest = rho - planned if math.isfinite(rho) else rho
    check_released_guarantee(final_estimator(candidate), rest)


def check_released_guarantee(estimator, rho):
    """After a candidate's fit: its own ``privacy_`` must be within the planned ``rho``.

    A safety net for a calibration that changed without its privacy spec: a
    mismatch is a bug, raised before anything is released.
    """
    guarantee = estimator.privacy_
    params = estimator.get_params(deep=False)
    delta_ok = guarantee.delta <= float(params.get("delta", 0.0)) * (1 + 1e-12)
    calibrated = _calibrated_rho(estimator)
    if math.isinf(rho):
        within = True
    elif calibrated is not None:
        # Measured from the noise actually drawn, not from the estimator's claim.
        within = calibrated <= rho * (1 + 1e-9)
    elif not math.isnan(guarantee.mu):
        within = guarantee.mu <= math.sqrt(2.0 * rho) * (1 + 1e-9)
    elif guarantee.delta == 0.0:
        # Pure epsilon-DP was planned as epsilon^2/2-zCDP.
        within = guarantee.epsilon <= math.sqrt(2.0 * rho) * (1 + 1e-9)
    else:
        # rho-zCDP implies (zcdp_epsilon(rho, delta), delta)-DP; the claim must be that.
        within = guarantee.epsilon <= zcdp_epsilon(rho, guarantee.delta) * (1 + 1e-9)
    if not (delta_ok and within):
        raise RuntimeError(
            f"{type(estimator).__name__} released a guarantee ({guarantee.epsilon}, "
            f"{guarantee.delta}) [mu={guarantee.mu}] outside the planned rho={rho}: the "
            "selection's accounting is out of date. Please report this bug."
        )


def _calibrated_rho(estimator):
    """zCDP of a fitted candidate, from its released sensitivity and noise scale.

    Gaussian output perturbation (IGD, QFTL) is ``(sensitivity/sigma)^2 / 2``;
    exponential-mechanism Frank-Wolfe is ``T (2 sensitivity / beta)^2 / 8`` over
    its ``T`` bounded-range selections. ``None`` where the guarantee has no such
    closed form here (the claim in ``privacy_`` is checked instead).
    """
    sensitivity = getattr(estimator, "sensitivity_", None)
    scale = getattr(estimator, "noise_scale_", None)
    if sensitivity is None or scale is None:
        return None
    if isinstance(estimator, PrivateQFTLRegressor):
        # AdaSSP (alpha="auto") adds the release of the smallest eigenvalue.
        parts = [(sensitivity, scale)]
        if getattr(estimator, "eigenvalue_noise_scale_", None) is not None:
            parts.append((estimator.eigenvalue_sensitivity_, estimator.eigenvalue_noise_scale_))
        if any(part_scale <= 0 for _, part_scale in parts):
            return math.inf
        return sum((part_sens / part_scale) ** 2 for part_sens, part_scale in parts) / 2.0
    if isinstance(estimator, PrivateIGDClassifier):
        return (sensitivity / scale) ** 2 / 2.0 if scale > 0 else math.inf
    if isinstance(estimator, PrivateFrankWolfeLasso) and estimator.selection != "gaussian":
        steps = estimator.max_iter_
        return steps * (2.0 * sensitivity / scale) ** 2 / 8.0 if scale > 0 else math.inf
    return None
