"""Public steps of a Pipeline, and ``export_public`` for estimators and Pipelines.

A step other than the final estimator is *public* when its fitted state does
not depend on the values of the records: it is stateless, or what it learns in
``fit`` is the shape of ``X`` (``n_features_in_``, and column names, which are
the schema). Such a step releases nothing about any record, so a Pipeline of
public steps and one private estimator has exactly the estimator's guarantee
(post-processing: the estimator sees the transformed rows, and the transform
of one record depends on that record only). The allow-list is explicit, not
inferred from tags, because a third-party transformer's tags are a claim, not a
proof:

- ``"passthrough"`` and ``None``;
- ``FunctionTransformer`` (its function is the user's and must be a public
  function of one row, for example ``functools.partial(np.multiply, 0.25)``:
  a function that closes over a data statistic is not public, and only the
  user can know that; with an ``inverse_func``, ``check_inverse=False``, since
  the check runs on rows of the data and warns);
- ``Normalizer``, ``Binarizer`` (stateless);
- ``PolynomialFeatures`` (its fitted state is computed from the number of
  features only).

Scalers fitted on the data (``StandardScaler``, ``MinMaxScaler``, ...) are not
public: their means and ranges are statistics of the records.
"""

import copy

from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, PolynomialFeatures

PUBLIC_STEPS = (FunctionTransformer, Normalizer, Binarizer, PolynomialFeatures)


def is_public_step(step):
    """True when ``step``'s fitted state does not depend on the data (see the module)."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return True
    if type(step) is FunctionTransformer and step.inverse_func is not None \
            and step.check_inverse:
        # fit would test the inverse on rows of the data and warn: a data-dependent output.
        return False
    return type(step) in PUBLIC_STEPS


def public_step_error(name, step):
    """The ``ValueError`` message for a Pipeline step that is not public."""
    kind = type(step).__name__
    private = hasattr(step, "export_public") or hasattr(step, "privacy_")
    if type(step) is FunctionTransformer:
        return (
            f"Pipeline step {name!r}: FunctionTransformer with an inverse_func checks the "
            "inverse on rows of the data in fit and warns when it fails, an output that "
            "depends on the records; pass check_inverse=False."
        )
    reason = (
        f"{kind} is a private estimator used as a transformer, and private selection "
        "accounts only private transformers that state their zCDP rho before fit "
        "(sklearn_dpol.preprocessing.PrivateRangeScaler)" if private else
        f"{kind} is not on the allow-list of public transformers (FunctionTransformer "
        "with a public function and, with an inverse_func, check_inverse=False; "
        "Normalizer, Binarizer, PolynomialFeatures, "
        "'passthrough'): its fitted state may be a statistic of the records, released "
        "without noise"
    )
    return (
        f"Pipeline step {name!r}: {reason}. Scale X by public constants, for example "
        "FunctionTransformer(functools.partial(np.multiply, 1 / bound)), or fit the "
        "transformer on public data and apply it before the search."
    )


def export_public(estimator):
    """A copy of a fitted private estimator, or of a Pipeline, holding released values only.

    For a library estimator this is ``estimator.export_public()``. For a
    ``Pipeline``, each step is replaced by its own export: a private step by
    its ``export_public()``, a public step (see :func:`is_public_step`) by a
    copy of itself. The result predicts like the original, pickles without any
    private state (generators, uncorrupted iterates, seeds) and cannot continue
    a stream.

    Parameters
    ----------
    estimator : estimator or Pipeline
        Fitted.

    Returns
    -------
    public : estimator or Pipeline
        The public copy.

    Raises
    ------
    ValueError
        For a step that is neither public nor has ``export_public()`` (its
        fitted state could be a statistic of the records).
    """
    if isinstance(estimator, Pipeline):
        steps = [(name, _export_step(name, step, last=index == len(estimator.steps) - 1))
                 for index, (name, step) in enumerate(estimator.steps)]
        public = copy.copy(estimator)
        public.steps = steps
        return public
    if hasattr(estimator, "export_public"):
        return estimator.export_public()
    raise ValueError(
        f"{type(estimator).__name__} has no export_public(): it is not an estimator of "
        "sklearn_dpol, and its fitted state is not known to be public."
    )


def _export_step(name, step, *, last):
    if hasattr(step, "export_public") or isinstance(step, Pipeline):
        return export_public(step)
    if is_public_step(step):
        return copy.deepcopy(step)
    raise ValueError(public_step_error(name, step) if not last else
                     f"Pipeline's final step {name!r} ({type(step).__name__}) has no "
                     "export_public(): it is not an estimator of sklearn_dpol.")


def public_state(state):
    """A deep copy of an estimator's state (a dict) with every nested estimator
    replaced by :func:`public_clone`.

    Used by ``export_public``: a parameter may hold an estimator (a search's
    template, estimators in its grid), and a fitted one carries its own private
    state (exact stream sums, uncorrupted iterates, generators) and its seed and
    accountant. Estimators are found in dicts, lists and tuples, at any depth.
    """
    return copy.deepcopy(_public_value(state))


def public_clone(estimator):
    """An unfitted clone of ``estimator`` with every ``random_state`` and
    ``accountant`` inside it (nested steps included) set to ``None``.

    The seed regenerates a fit's noise and the accountant is the ledger's
    address; neither is released.
    """
    cloned = clone(estimator)
    names = [name for name in cloned.get_params(deep=True)
             if name.rsplit("__", 1)[-1] in ("random_state", "accountant")]
    if names:
        cloned.set_params(**dict.fromkeys(names))
    return cloned


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def _public_value(value):
    if _is_estimator(value):
        return public_clone(value)
    if type(value) is dict:
        return {key: _public_value(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_public_value(item) for item in value)
    return value
