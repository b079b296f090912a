"""The privacy of one candidate fit, from its hyperparameters alone (no data).

Private selection needs every candidate's guarantee before any data is
touched, as a zCDP parameter ``rho`` (a ``mu``-GDP fit is ``mu^2/2``-zCDP, with
Renyi divergence ``lambda mu^2 / 2`` exactly). Only estimators whose ``fit``
guarantee is fixed by public hyperparameters are listed; the others are
refused with the reason.
"""

import math

import numpy as np

from sklearn.pipeline import Pipeline

from .._export import is_public_step, public_step_error
from ..linear_model import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from ..privacy import gaussian_mu, zcdp_epsilon, zcdp_rho

# Hyperparameters that change a candidate's guarantee: they must be searched as
# lists, so that the mixture of the candidates' guarantees can be enumerated.
PRIVACY_PARAMS = ("epsilon", "delta", "solver", "selection", "feature_weights")

_REFUSED = {
    MutualInformationPrivateOGDRegressor: (
        "its guarantee is per user report (local DP, set by epsilon or by the noise "
        "scale sigma), and in bandit mode its sensitivity depends on the number of "
        "features"
    ),
}


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
    """
    check_supported(estimator)
    estimator = final_estimator(estimator)
    return _RULES[type(estimator)](estimator.get_params(deep=False))


def final_estimator(estimator):
    """The private estimator itself, or a Pipeline's final step."""
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator


def final_prefix(estimator):
    """The parameter prefix of the private estimator: ``"name__"`` in a Pipeline."""
    return f"{estimator.steps[-1][0]}__" if isinstance(estimator, Pipeline) else ""


def check_pipeline(pipeline):
    """``ValueError`` unless every step but the last is public (``_export.is_public_step``).

    A public step's fitted state does not depend on the records, so the
    Pipeline's guarantee is its final estimator's (post-processing).
    """
    steps = pipeline.steps
    if not steps:
        raise ValueError("Private selection needs a Pipeline with a final estimator.")
    for name, step in steps[:-1]:
        if not is_public_step(step):
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
    if kind in _REFUSED:
        raise ValueError(
            f"Private selection does not support {kind.__name__}: {_REFUSED[kind]}. Use "
            "PrivateIGDClassifier, PrivateQFTLRegressor, PrivateFrankWolfeLasso, "
            "PrivateMirrorDescentRegressor or ParameterFreeLocalDPRegressor."
        )
    if kind not in _RULES:
        raise ValueError(
            f"Private selection needs the guarantee of every candidate before it sees the "
            f"data, and knows it only for this library's estimators (exact classes, not "
            f"subclasses, or as the final step of a Pipeline of public transformers); got "
            f"{kind.__name__}. Scale X by public constants (for example with "
            "FunctionTransformer(functools.partial(np.multiply, 1 / bound)) in a Pipeline)."
        )


def _gdp(params):
    mu = gaussian_mu(params["epsilon"], params["delta"])
    return math.inf if math.isinf(mu) else mu * mu / 2.0


def _refuse_objective_perturbation(params, name):
    if params.get("solver") == "objective_perturbation":
        raise ValueError(
            f"{name}(solver='objective_perturbation') has a custom privacy profile that is "
            "not Gaussian DP and not accounted in Renyi DP here; private selection cannot "
            "bound it. Search solver='igd' or 'mirror_descent' instead."
        )


def _igd(params):
    _refuse_objective_perturbation(params, "PrivateIGDClassifier")
    return _gdp(params)


def _mirror_descent(params):
    _refuse_objective_perturbation(params, "PrivateMirrorDescentRegressor")
    # The steps' noise composes to at most mu*(epsilon, delta) (GDP, exact).
    return _gdp(params)


def _frank_wolfe(params):
    if params["selection"] == "gaussian":
        return _gdp(params)
    # Exponential selection spends at most zcdp_rho(epsilon, delta) in zCDP.
    return zcdp_rho(params["epsilon"], params["delta"])


def _parameter_free(params):
    weights = params["feature_weights"]
    if weights is not None and np.any(np.asarray(weights, dtype=float) == 0):
        raise ValueError(
            "ParameterFreeLocalDPRegressor with a zero feature weight publishes that "
            "coordinate without noise and has no replace-one guarantee; private selection "
            "needs one. Give every feature a positive weight."
        )
    epsilon = float(params["epsilon"])
    # Every user at epsilon: the model is epsilon-DP per record (post-processing of
    # epsilon-LDP reports), and pure epsilon-DP is epsilon^2/2-zCDP (Bun and
    # Steinke 2016, Proposition 1.4).
    return math.inf if math.isinf(epsilon) else epsilon * epsilon / 2.0


_RULES = {
    PrivateIGDClassifier: _igd,
    # With alpha="auto", AdaSSP's eigenvalue release and the statistics' release
    # compose to mu* (their mu^2 shares sum to mu*^2): the same rho.
    PrivateQFTLRegressor: _gdp,
    PrivateMirrorDescentRegressor: _mirror_descent,
    PrivateFrankWolfeLasso: _frank_wolfe,
    ParameterFreeLocalDPRegressor: _parameter_free,
}


def check_released_guarantee(estimator, rho):
    """After a candidate's fit: its own ``privacy_`` must be within the planned ``rho``.

    A safety net for a calibration that changed without this table: a
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
