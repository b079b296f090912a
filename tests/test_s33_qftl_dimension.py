"""QFTL refuses more features than its d x d statistics support, before any data is read
(review 120, M4): with p = 100,000 sparse features `fit` failed with a MemoryError after
the data-read mark (charged), `partial_fit` with one before it (refunded)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpol import PrivacyAccountant, PrivateQFTLRegressor
from sklearn_dpol._core import qftl


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
@pytest.mark.parametrize("fit_intercept, width", [(True, qftl.MAX_FEATURES),
                                                   (False, qftl.MAX_FEATURES + 1),
                                                   (True, 100_000)])
def test_too_many_features_refused_before_the_read_and_refunded(method, fit_intercept, width):
    X = sp.random(50, width, density=1e-3, format="csr", random_state=0)
    y = np.zeros(50)
    with PrivacyAccountant(epsilon=1.0, delta=1e-5) as accountant:
        est = PrivateQFTLRegressor(fit_intercept=fit_intercept, accountant=accountant,
                                   horizon=None)
        with pytest.raises(ValueError, match=f"at most {qftl.MAX_FEATURES} features"):
            getattr(est, method)(X, y)
        assert accountant.charges == []            # refunded: decided on the shape
        assert not hasattr(est, "coef_")


def test_the_limit_itself_is_accepted():
    qftl.check_dimension(qftl.MAX_FEATURES)   # d x d work of 4096 columns: allowed
    with pytest.raises(ValueError, match="got 4097"):
        qftl.check_dimension(qftl.MAX_FEATURES + 1)


def test_a_stream_marks_its_data_read_before_clipping_its_rows(monkeypatch):
    """A failure while the batch's statistics are computed is charged (57.1)."""
    est = PrivateQFTLRegressor(random_state=0, horizon=None)
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-0.5, 0.5, (40, 3)), rng.uniform(-1, 1, 40)
    seen = []

    def statistics(self, *args, **kwargs):
        seen.append(self._data_read_in_call)
        raise RuntimeError("a failure while reading the rows")

    monkeypatch.setattr(PrivateQFTLRegressor, "_statistics", statistics)
    with PrivacyAccountant(epsilon=10.0, delta=1e-5) as accountant:
        est.set_params(accountant=accountant)
        with pytest.raises(RuntimeError):
            est.partial_fit(X, y)
        assert seen == [True]
        assert len(accountant.charges) == 1      # charged: the rows were being read
