"""The augmented row's norm bound is an upper bound (review 122, low; privacy.md 57.7).

``math.hypot`` is within one ulp of the exact norm but may round down, so a row
``(z, c)`` whose data part is clipped a few ulps below ``a`` could exceed the
rounded-down bound when ``|c| >> a`` (by 3e-18 relative): the sensitivities built on
it (IGD's and mirror descent's Lipschitz constant, objective perturbation's feature
norm, QFTL's row bound) take it one ulp up.
"""

import math
from fractions import Fraction

import numpy as np

from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol._core.losses import augmented_norm, norm_bound


def _pairs(count=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = 10.0 ** rng.uniform(-3, 1, count)
    c = 10.0 ** rng.uniform(-3, 4, count)
    return zip(a.tolist(), c.tolist())


def test_norm_bound_is_above_the_exact_norm_where_hypot_is_not():
    below = 0
    for a, c in _pairs():
        exact_sq = Fraction(a) ** 2 + Fraction(c) ** 2
        assert Fraction(norm_bound(a, c)) ** 2 >= exact_sq
        below += Fraction(math.hypot(a, c)) ** 2 < exact_sq
    assert below > 100   # hypot alone is below the exact norm in many of these cases


def test_augmented_norm_is_the_bound_with_an_intercept_and_the_norm_without():
    assert augmented_norm(0.01, 1.0) == norm_bound(0.01, 1.0)
    assert augmented_norm(2.5, 0.0) == 2.5


def test_igd_lipschitz_is_at_least_the_exact_gradient_bound():
    """data_norm = 0.01, intercept 1: hypot rounds down there (1.97e-16 relative)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = PrivateIGDClassifier(solver="igd", data_norm=0.01, intercept_scaling=1.0,
                                 classes=[0, 1], random_state=0).fit(X, y)
    exact_sq = Fraction(0.01) ** 2 + Fraction(1.0) ** 2
    intercept_value, lipschitz = model._geometry()
    assert intercept_value == 1.0
    assert Fraction(lipschitz) ** 2 >= exact_sq   # log loss: |f'| <= 1
    assert Fraction(math.hypot(0.01, 1.0)) ** 2 < exact_sq
