"""Every estimator passes scikit-learn's estimator checks, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
    PrivateRangeScaler,
)

ESTIMATORS = [
    PrivateIGDClassifier(),
    PrivateIGDClassifier(loss="hinge", fit_intercept=False),
    PrivateIGDClassifier(update="gradient", alpha=0.5, epsilon=float("inf")),
    PrivateIGDClassifier(solver="objective_perturbation", alpha=1e-2),
    PrivateQFTLRegressor(),
    PrivateQFTLRegressor(fit_intercept=False, horizon=10_000, prefix_sums="tree"),
    PrivateQFTLRegressor(epsilon=float("inf")),
    PrivateQFTLRegressor(data_norm="auto"),
    PrivateFrankWolfeLasso(),
    PrivateFrankWolfeLasso(selection="gaussian", positive=True, fit_intercept=False,
                           step_size="constant"),
    PrivateFrankWolfeLasso(epsilon=float("inf"), max_iter=200, radius=5.0),
    PrivateMirrorDescentRegressor(),
    PrivateMirrorDescentRegressor(constraint="l1", loss="huber"),
    PrivateMirrorDescentRegressor(constraint="simplex", fit_intercept=False),
    PrivateMirrorDescentRegressor(solver="objective_perturbation", constraint="group_l1",
                                  group_size=2, alpha=1e-2),
    ParameterFreeLocalDPRegressor(),
    ParameterFreeLocalDPRegressor(method="reduction", prior="improper", loss="huber",
                                  fit_intercept=False, average=False, epsilon=float("inf")),
    MutualInformationPrivateOGDRegressor(),
    MutualInformationPrivateOGDRegressor(feedback="bandit", loss="squared", fit_intercept=False,
                                         average=False, exploration_radius=0.25),
    PrivateRangeScaler(),
    PrivateRangeScaler(bounds=(-5.0, 5.0), delta=1e-6, quantile=0.0, n_candidates=50),
    PrivateRangeScaler(epsilon=float("inf")),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
