"""PrivateHyperparameterSearch passes scikit-learn's estimator checks, with no expected failures."""

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


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
