"""Smoke test of every estimator, for the environment pinned to the lowest versions.

Checks first that the installed runtime dependencies are exactly the pins given
as arguments (``name==version``, from ``.ci/lowest_constraints.py``), then,
for every estimator that ``sklearn_dpol`` exports: ``fit``, ``predict``
(``transform`` for the private scaler), ``score``, ``partial_fit`` where it exists, a pickle round trip that predicts
the same, and a fit charged to a ``PrivacyAccountant`` (an SQLite ledger).
Prints one line per estimator and exits non-zero on the first failure.
"""

import inspect
import pickle
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np
from packaging.version import Version
from sklearn.base import BaseEstimator, ClassifierMixin, clone

import sklearn_dpol
from sklearn_dpol import PrivacyAccountant, PrivateIGDClassifier

for pin in sys.argv[1:]:
    name, _, wanted = pin.partition("==")
    found = version(name)
    if Version(found) != Version(wanted):
        sys.exit(f"{name} {found} is installed, not the pinned floor {wanted}")
    print(f"{name} {found} (floor {wanted})")

rng = np.random.default_rng(0)
X = rng.uniform(-0.5, 0.5, size=(400, 3))
y_reg = np.clip(X @ [0.5, -0.3, 0.2], -1, 1)
y_cls = (y_reg > 0).astype(int)

estimators = []
for name in sklearn_dpol.__all__:
    obj = getattr(sklearn_dpol, name)
    if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
        if name == "PrivateHyperparameterSearch":
            est = obj(PrivateIGDClassifier(classes=[0, 1]), {"alpha": [1e-3, 1e-2]},
                      n_candidates=2.0, random_state=0)
        elif name == "PrivateIGDClassifier":
            est = obj(classes=[0, 1], random_state=0)
        else:
            est = obj(random_state=0)
        estimators.append(est)
assert len(estimators) >= 7, [type(e).__name__ for e in estimators]

with tempfile.TemporaryDirectory() as directory:
    budget = PrivacyAccountant(np.inf, 1e-3, path=Path(directory) / "ledger.sqlite")
    for est in estimators:
        name = type(est).__name__
        classifies = isinstance(est, ClassifierMixin) or name.endswith("Search")
        y = y_cls if classifies else y_reg
        fitted = clone(est).fit(X, y)
        if not hasattr(fitted, "predict"):        # a private transformer (the scaler)
            out = fitted.transform(X)
            assert out.shape == X.shape and np.all(np.isfinite(out)), name
            again = pickle.loads(pickle.dumps(fitted))
            np.testing.assert_array_equal(again.transform(X), out)
            clone(est).set_params(accountant=budget, random_state=None).fit(X, y)
            print(f"{name}: fit, transform, pickle, accountant")
            continue
        prediction = fitted.predict(X)
        assert prediction.shape == (len(X),) and np.all(np.isfinite(prediction)), name
        score = fitted.score(X, y)
        again = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(again.predict(X), prediction)
        if hasattr(est, "partial_fit"):
            stream = clone(est)
            stream.partial_fit(X[:200], y[:200])
            stream.partial_fit(X[200:], y[200:])
            assert np.all(np.isfinite(stream.predict(X))), name
        clone(est).set_params(accountant=budget, random_state=None).fit(X, y)
        print(f"{name}: fit, predict, score={score:.3f}, pickle"
              + (", partial_fit" if hasattr(est, "partial_fit") else "") + ", accountant")
    n_charges = len(budget.charges)
    budget.close()
assert n_charges == len(estimators), n_charges
print(f"smoke test: {len(estimators)} estimators passed, {n_charges} charges recorded")
