"""QFTL's predictions lie in the targets' public range (review 118, H4; doc/privacy.md 56.7)."""

import numpy as np
import pytest

from sklearn_dpol import PrivateQFTLRegressor


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_predictions_are_clipped_to_the_target_bound():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(60, 4))
    y = np.clip(X @ np.array([0.3, -0.2, 0.1, 0.0]), -0.05, 0.05)
    reg = PrivateQFTLRegressor(epsilon=0.5, data_norm=1.0, y_bound=0.05, random_state=0).fit(X, y)
    far = 20 * X                                        # rows beyond the training range
    raw = far @ reg.coef_ + reg.intercept_
    assert np.max(np.abs(raw)) > 0.05                   # the linear model reaches beyond ...
    pred = reg.predict(far)
    assert np.max(np.abs(pred)) <= 0.05                 # ... the released predictions do not
    np.testing.assert_array_equal(pred, np.clip(raw, -0.05, 0.05))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_auto_bound_at_the_bottom_of_its_grid_cannot_blow_up_the_predictions():
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(300, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(300)
    reg = PrivateQFTLRegressor(data_norm="auto", y_bound="auto", random_state=3).fit(X, y)
    assert np.all(np.abs(reg.predict(X)) <= reg.y_bound_)
    assert reg.score(X, y) > -1.0 - np.max(np.abs(y)) ** 2 / np.var(y)
