""""auto" bounds refuse more rows than a private quantile takes before reading
(review 101, L1, the part in ``_auto_bounds.py``).

``private_quantile`` takes at most ``2**31 - 1`` values (``_quantile.py``,
``_MAX_RECORDS``); ``_check_auto_bounds_public`` did not test it, so such a
fit was refused by the quantile after the data was read (charged). The limit
is now checked from the public row count before anything is read.
"""

import warnings

import numpy as np
import pytest

from sklearn_dpol import (
    PrivacyAccountant,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol import _auto_bounds
from sklearn_dpol.privacy import _quantile

MODELS = {
    "igd": lambda: PrivateIGDClassifier(data_norm="auto", classes=[0, 1]),
    "qftl-x": lambda: PrivateQFTLRegressor(data_norm="auto", y_bound=1.0),
    "qftl-y": lambda: PrivateQFTLRegressor(data_norm=1.0, y_bound="auto"),
    "fw": lambda: PrivateFrankWolfeLasso(feature_bound="auto", y_bound=1.0, max_iter=10),
    "md": lambda: PrivateMirrorDescentRegressor(data_norm=1.0, y_bound="auto", max_iter=3),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_the_public_check_refuses_more_rows_than_a_quantile_takes(name):
    model = MODELS[name]()
    assert _quantile._MAX_RECORDS == 2**31 - 1
    model._check_auto_bounds_public(2**31 - 1)       # the largest count a quantile takes
    with pytest.raises(ValueError, match="at most 2147483647 rows"):
        model._check_auto_bounds_public(2**31)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_too_many_rows_are_refused_before_reading_and_refunded(monkeypatch, tmp_path, name,
                                                               method):
    # The limit lowered to 100 rows (both modules: the quantile's and the public check's),
    # so that a fit of 200 rows exercises it; on the old code the quantile refused it
    # after the data was read, and the refusal was charged.
    monkeypatch.setattr(_quantile, "_MAX_RECORDS", 100)
    monkeypatch.setattr(_auto_bounds, "_MAX_RECORDS", 100, raising=False)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = X @ [0.5, -0.2, 0.1]
    if name == "igd":
        y = (y > 0).astype(int)
    model = MODELS[name]()
    if method == "partial_fit" and not hasattr(model, "partial_fit"):
        pytest.skip("no partial_fit")
    with PrivacyAccountant(50.0, 1e-3, path=tmp_path / "ledger") as accountant, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.set_params(accountant=accountant, random_state=0)
        with pytest.raises(ValueError, match="at most"):
            getattr(model, method)(X, y)
        assert accountant.charges == [] or all(c.status == "refunded" for c in accountant.charges)
        assert accountant.spent().epsilon == 0.0
        assert not hasattr(model, "coef_")
        model.fit(X[:100], y[:100])                 # at the limit: fits, and is charged
        assert accountant.spent().epsilon > 0
