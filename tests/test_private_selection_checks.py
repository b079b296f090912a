"""PrivateHyperparameterSearch passes scikit-learn's estimator checks.

The only expected failures (since the search takes ``sample_weight``, session 33) are
the sample-weight checks that feed weights above 1, which the search refuses as every
estimator does (``tests/test_estimator_checks.py``); a search whose final estimator
takes no ``sample_weight`` (``ParameterFreeLocalDPRegressor``) refuses every weight.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_dpol import (
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateQFTLRegressor,
)
from sklearn_dpol.model_selection import PrivateHyperparameterSearch

ESTIMATORS = [
    PrivateHyperparameterSearch(PrivateIGDClassifier(), {"alpha": [1e-2, 1e-1]},
                                n_candidates=3),
    PrivateHyperparameterSearch(PrivateIGDClassifier(loss="hinge"),
                                {"epsilon": [1.0, 2.0], "max_iter": [1, 2]},
                                n_candidates=2, shape=0.0),
    PrivateHyperparameterSearch(PrivateQFTLRegressor(), {"alpha": [0.1, 1.0]},
                                n_candidates=3),
    PrivateHyperparameterSearch(PrivateFrankWolfeLasso(max_iter=20),
                                [{"radius": [0.5, 1.0]}, {"selection": ["gaussian"]}],
                                n_candidates=2, y_bound=2.0),
    PrivateHyperparameterSearch(ParameterFreeLocalDPRegressor(), {"epsilon": [1.0, 4.0]},
                                n_candidates=2, y_bound=3.0),
]


_WEIGHTS_ABOVE_ONE = (
    "sample_weight must lie in [0, 1] (doc/privacy.md, 'Sparse input and sample "
    "weights'); this check passes weights above 1"
)
_WEIGHT_CHECKS = ("check_sample_weights_list", "check_sample_weights_not_overwritten",
                  "check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")
_NO_WEIGHTS = ("check_sample_weights_pandas_series", "check_sample_weights_not_an_array",
               "check_sample_weights_shape", "check_all_zero_sample_weights_error")


def _expected_failed_checks(search):
    from sklearn.utils.validation import has_fit_parameter

    if not has_fit_parameter(search.estimator, "sample_weight"):
        return {name: "the final estimator takes no sample_weight: the search refuses it"
                for name in _WEIGHT_CHECKS + _NO_WEIGHTS}
    expected = {name: _WEIGHTS_ABOVE_ONE for name in _WEIGHT_CHECKS}
    # Weights that are all zero are fitted, noise only (doc/privacy.md 57.9).
    expected["check_all_zero_sample_weights_error"] = (
        "weights that are all zero are fitted (noise only), not refused: the refusal would "
        "release whether every weight is 0 (doc/privacy.md 57.9)")
    return expected


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
