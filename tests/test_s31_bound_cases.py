"""Review 113 F2: mirror descent's parameter checks before the quantiles are drawn pair
every "auto" bound at both ends of its grid (they used the largest candidates only, so a
check that fails at small values, e.g. a tiny Huber threshold's (Lf extent)^2 underflow,
was decided by the released y_bound_ after the data was read, and charged)."""

import numpy as np
import pytest

from sklearn_dpol import PrivacyAccountant, PrivateMirrorDescentRegressor


@pytest.mark.parametrize("scale", [1e5, 1e-5])
def test_a_check_failing_at_small_bounds_is_refused_before_reading_for_any_data(scale):
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(2000, 2))
    accountant = PrivacyAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateMirrorDescentRegressor(loss="huber", epsilon_huber=3e-146, y_bound="auto",
                                        data_norm=1.0, epsilon=2.0, accountant=accountant,
                                        random_state=0)
    with pytest.raises(ValueError):
        est.fit(X, scale * X[:, 0])
    assert accountant.spent().n_charges == 0 and not hasattr(est, "y_bound_")


def test_the_cases_are_the_ends_of_each_unresolved_bound():
    est = PrivateMirrorDescentRegressor(data_norm="auto", y_bound=2.0, radius=3.0)
    cases = est._bound_cases(True)
    assert len(cases) == 2 and {c[1] for c in cases} == {2.0 ** -20, 2.0 ** 20}
    assert est._bound_cases(False)[0][0] == 3.0
    auto = PrivateMirrorDescentRegressor(data_norm="auto", y_bound="auto", radius="auto")
    assert len(auto._bound_cases(True)) == 8
