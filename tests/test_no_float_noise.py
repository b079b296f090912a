"""No release of any estimator draws floating-point noise (doc/privacy.md section 14).

Every estimator's generator is replaced by one whose floating-point samplers
(normal, Laplace, Gumbel, exponential, uniform floats) raise: a fit passes only if
all of its noise comes from the exact samplers (random bits and integers: permutations
and the exact samplers' seeds are allowed). A new mechanism that draws
``rng.standard_normal`` for a release fails here.
"""

import numpy as np
import pytest

import sklearn_dpol._base as base
from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)

_FLOAT_SAMPLERS = ("standard_normal", "normal", "laplace", "gumbel", "exponential",
                   "standard_exponential", "random", "uniform", "standard_t", "logistic")


class IntegerOnlyGenerator(np.random.Generator):
    """A Generator whose floating-point samplers raise."""


def _refuse(name):
    def method(self, *args, **kwargs):
        raise AssertionError(f"a release drew floating-point noise: rng.{name}")
    return method


for _name in _FLOAT_SAMPLERS:
    setattr(IntegerOnlyGenerator, _name, _refuse(_name))


@pytest.fixture
def integer_only(monkeypatch):
    original = base.make_generator

    def make(random_state, purpose=0):
        rng = original(random_state, purpose)
        return IntegerOnlyGenerator(rng.bit_generator)

    # Every estimator's generator is made in _base (fits, stream calls, and the fresh one
    # kept after an unseeded release).
    monkeypatch.setattr("sklearn_dpol._base.make_generator", make)
    # The bandit users' directions are data-independent randomness, not noise on a value.
    import sklearn_dpol.linear_model._mi_ogd as mi

    real = mi.sphere_directions
    monkeypatch.setattr(mi, "sphere_directions",
                        lambda rng, n, d: real(np.random.default_rng(rng.integers(2**63)), n, d))


def _data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2
    y = np.clip(X @ np.linspace(-1, 1, d) + 0.1 * rng.normal(size=n), -1, 1)
    return X, y, (y > 0).astype(int)


CASES = {
    "igd": lambda: PrivateIGDClassifier(classes=[0, 1]),
    "igd-objective-perturbation": lambda: PrivateIGDClassifier(
        classes=[0, 1], solver="objective_perturbation"),
    "qftl": lambda: PrivateQFTLRegressor(),
    "frank-wolfe-exponential": lambda: PrivateFrankWolfeLasso(selection="exponential"),
    "frank-wolfe-gaussian": lambda: PrivateFrankWolfeLasso(selection="gaussian"),
    "frank-wolfe-auto-bounds": lambda: PrivateFrankWolfeLasso(feature_bound="auto",
                                                              y_bound="auto"),
    "mirror-descent": lambda: PrivateMirrorDescentRegressor(solver="mirror_descent"),
    "mirror-descent-auto": lambda: PrivateMirrorDescentRegressor(),   # OP fit, MD stream
    "mirror-descent-objective-perturbation": lambda: PrivateMirrorDescentRegressor(
        solver="objective_perturbation"),
    "parameter-free": lambda: ParameterFreeLocalDPRegressor(),
    "mi-ogd-full": lambda: MutualInformationPrivateOGDRegressor(),
    "mi-ogd-bandit": lambda: MutualInformationPrivateOGDRegressor(feedback="bandit"),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, None])
def test_fit_and_stream_draw_no_float_noise(integer_only, name, seed):
    X, y, labels = _data()
    target = labels if name.startswith("igd") else y
    est = CASES[name]().set_params(random_state=seed)
    est.fit(X, target)
    assert np.all(np.isfinite(est.coef_))
    if hasattr(est, "partial_fit") and "objective" not in name:
        stream = CASES[name]().set_params(random_state=seed)
        for chunk in np.array_split(np.arange(len(y)), 4):
            stream.partial_fit(X[chunk], target[chunk])
        assert np.all(np.isfinite(stream.coef_))


def test_the_guard_catches_float_noise(integer_only):
    """Positive control: a float sampler on an estimator's generator raises."""
    rng = base.make_generator(0)
    with pytest.raises(AssertionError, match="floating-point noise"):
        rng.standard_normal(3)


class _SearchGenerator(IntegerOnlyGenerator):
    """The search's generator: ``random`` allowed (the candidate count's uniform, drawn
    from public parameters only, before any data), every other float sampler refused."""

    random = np.random.Generator.random


@pytest.mark.parametrize("seed", [0, None])
def test_private_search_releases_its_score_without_float_noise(monkeypatch, seed):
    """best_score_ is a released value: it comes from the exact sampler (independent
    review, session 28: it was mean + rng.normal)."""
    import sklearn_dpol.model_selection._search as search
    from sklearn_dpol.model_selection import PrivateHyperparameterSearch

    original = search.make_generator

    def make(random_state, purpose=0):
        return _SearchGenerator(original(random_state, purpose).bit_generator)

    monkeypatch.setattr(search, "make_generator", make)
    X, y, labels = _data()
    est = PrivateHyperparameterSearch(PrivateIGDClassifier(classes=[0, 1], epsilon=1.0),
                                      {"alpha": [1e-3, 1e-2]}, n_candidates=3.0,
                                      random_state=seed).fit(X, labels)
    assert np.isfinite(est.best_score_)
    # positive control: the old release (mean + rng.normal) is refused by this generator
    with pytest.raises(AssertionError, match="floating-point noise"):
        make(0).normal(0.0, 0.1)
