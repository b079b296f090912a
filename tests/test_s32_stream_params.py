"""A parameter set between stream calls is validated on every call (review 116, low).

scikit-learn validates a fitted estimator's ``partial_fit`` parameters once; a
parameter the stream does not freeze (``max_iter``, ``step_size``, ``random_state``)
could be set between calls and reach the engine unchecked (``max_iter=0``: a
``ZeroDivisionError`` in Frank-Wolfe after the data was read). Every call now
validates before anything is read or charged, and the stream continues once the
parameter is set back.
"""

import numpy as np
import pytest

from sklearn_dpol import (
    PrivacyAccountant,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.5, 0.5, size=(60, 3))
Y = np.clip(X @ np.array([0.5, -0.3, 0.2]), -1, 1)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("make, y, name, bad, good", [
    (lambda acc: PrivateFrankWolfeLasso(accountant=acc), Y, "max_iter", 0, 20),
    (lambda acc: PrivateFrankWolfeLasso(accountant=acc), Y, "step_size", "bogus", "decreasing"),
    (lambda acc: PrivateMirrorDescentRegressor(accountant=acc), Y, "max_iter", 0, 50),
    (lambda acc: PrivateIGDClassifier(classes=[0, 1], horizon=600, accountant=acc),
     (Y > 0).astype(int), "random_state", "junk", None),
])
def test_a_bad_parameter_set_between_calls_is_refused_before_the_read(tmp_path, make, y, name,
                                                                      bad, good):
    accountant = PrivacyAccountant(10.0, 1e-3, path=tmp_path / "ledger")
    est = make(accountant)
    est.partial_fit(X[:20], y[:20])
    spent = accountant.spent()
    coef = np.array(est.coef_, copy=True)
    est.set_params(**{name: bad})
    with pytest.raises(ValueError, match=name):
        est.partial_fit(X[20:40], y[20:40])
    assert str(accountant.spent()) == str(spent)            # refused, refunded
    np.testing.assert_array_equal(est.coef_, coef)
    est.set_params(**{name: good})
    est.partial_fit(X[20:40], y[20:40])
