"""Warnings and errors of sklearn_dpol."""

import os
import sys
import warnings

__all__ = [
    "BudgetExceededError",
    "DefaultBoundWarning",
    "GridEdgeWarning",
    "LargeDeltaWarning",
    "LedgerError",
    "NoiseReuseError",
    "PrivacyAccountingError",
    "PrivacyLeakWarning",
    "SmallDataWarning",
    "StaleStreamError",
]


class PrivacyLeakWarning(RuntimeWarning):
    """Something is released without the protection of the privacy guarantee.

    Raised, for example, when the label set of a classifier is taken from the
    training labels: pass it from public knowledge to keep it covered.

    See Also
    --------
    sklearn_dpol.PrivacyGuarantee : Its ``released`` field says what is covered.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateIGDClassifier
    >>> from sklearn_dpol.exceptions import PrivacyLeakWarning
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateIGDClassifier(random_state=0).fit(X, y)  # no classes=[0, 1]
    >>> any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    True
    """


class DefaultBoundWarning(UserWarning):
    """A public data bound (``data_norm``, ``y_bound``...) was left at its default.

    The default, ``None``, stands for 1.0. The privacy guarantee holds whatever
    the bound, but every record is clipped to it: a default that does not fit
    the data silently gives a useless model. Issued once per ``fit`` (and on a
    stream's first call) for a bound left at ``None``, never for one passed
    explicitly (``1.0`` included); its message depends only on the
    estimator's parameters (never on the data, which it must not reveal) and
    says what to pass: a bound known without looking at the data, or data
    scaled into it privately
    (:class:`~sklearn_dpol.preprocessing.PrivateRangeScaler`).

    See Also
    --------
    sklearn_dpol.preprocessing.PrivateRangeScaler : Scales features into
        ``[-1, 1]`` from private quantiles.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> from sklearn_dpol.exceptions import DefaultBoundWarning
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 2))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateQFTLRegressor(random_state=0).fit(X, X[:, 0])
    >>> any(issubclass(w.category, DefaultBoundWarning) for w in caught)
    True
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateQFTLRegressor(data_norm=0.75, y_bound=0.5,
    ...                              random_state=0).fit(X, X[:, 0])
    >>> any(issubclass(w.category, DefaultBoundWarning) for w in caught)
    False
    >>> with warnings.catch_warnings(record=True) as caught:  # an explicit 1.0
    ...     warnings.simplefilter("always")
    ...     _ = PrivateQFTLRegressor(data_norm=1.0, y_bound=1.0,
    ...                              random_state=0).fit(X, X[:, 0])
    >>> any(issubclass(w.category, DefaultBoundWarning) for w in caught)
    False
    """


class SmallDataWarning(UserWarning):
    """Too few rows for the budget: a private range or bound will likely be useless.

    :class:`~sklearn_dpol.preprocessing.PrivateRangeScaler` and the ``"auto"``
    bounds (``data_norm="auto"``, ``y_bound="auto"``, ``feature_bound="auto"``)
    draw private quantiles by the exponential mechanism over a public grid.
    With few rows for the budget, the records' pull on the quantile is weaker
    than the grid's size (and, for the ``"auto"`` bounds, its public prior),
    and the release lands far from the data: a scaler's ranges orders of
    magnitude too wide, an ``"auto"`` bound at the bottom of its grid
    (``2**-20``) or octaves too high. The guarantee holds, but the model is
    useless, without any error.

    Issued before the data is read, from public values only (the number of
    rows, the number of features, ``epsilon``, ``delta``, the quantile and the
    grid), never from the data: two data sets of the same shape get the same
    warning, so the warning itself releases nothing. It says how many rows the
    budget needs. The rules are in ``doc/user_guide/bounds_and_clipping.md``.

    See Also
    --------
    sklearn_dpol.preprocessing.PrivateRangeScaler : Warns when its ranges will
        be far too wide.
    DefaultBoundWarning : A public bound left at its default.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol.exceptions import SmallDataWarning
    >>> from sklearn_dpol.preprocessing import PrivateRangeScaler
    >>> X = np.random.default_rng(0).normal(size=(500, 10))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateRangeScaler(epsilon=1.0, random_state=0).fit(X)
    >>> any(issubclass(w.category, SmallDataWarning) for w in caught)
    True
    """


class GridEdgeWarning(UserWarning):
    """An ``"auto"`` bound was released at an end of its public grid.

    ``data_norm="auto"``, ``y_bound="auto"`` and ``feature_bound="auto"`` are
    private quantiles over the public grid ``2**-20 .. 2**20``. A release at
    the grid's top (``2**20``) means the values may lie above it (they are
    clipped to it); at the bottom (``2**-20``), that they lie below it or that
    the rows were too few for the budget (see :class:`SmallDataWarning`). The
    warning reads only the released bound (post-processing of a private
    release, so it reveals nothing more) and says what to do: rescale the data
    by a public constant into the grid's range, or pass a public bound.

    See Also
    --------
    SmallDataWarning : Too few rows for the budget.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> from sklearn_dpol.exceptions import GridEdgeWarning
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 2))
    >>> y = 1e7 * X[:, 0]                           # prices in cents
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     reg = PrivateQFTLRegressor(data_norm=1.5, y_bound="auto",
    ...                                random_state=0).fit(X, y)
    >>> reg.y_bound_ == 2.0 ** 20
    True
    >>> any(issubclass(w.category, GridEdgeWarning) for w in caught)
    True
    """


class LargeDeltaWarning(UserWarning):
    """``delta`` is not below ``1 / n``: the guarantee allows a whole record to leak.

    A mechanism that publishes one record chosen at random is ``(0, 1/n)``-DP,
    so ``delta`` should be well below ``1 / n`` (``doc/user_guide/epsilon_delta.md``).
    Issued by ``fit`` before the data is read, from public values only (``delta``
    and the number of rows, public under replace-one): two data sets of the same
    shape get the same warning, so the warning itself releases nothing.

    See Also
    --------
    SmallDataWarning : Too few rows for the budget of a private quantile.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> from sklearn_dpol.exceptions import LargeDeltaWarning
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 2))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = PrivateQFTLRegressor(delta=0.05, data_norm=0.75, y_bound=0.5,
    ...                              random_state=0).fit(X, X[:, 0])
    >>> any(issubclass(w.category, LargeDeltaWarning) for w in caught)
    True
    """


def warn_large_delta(name, delta, n_records):
    """Warn (:class:`LargeDeltaWarning`) when ``delta >= 1 / n_records``; public values only."""
    if n_records > 0 and 0.0 < float(delta) and float(delta) * n_records >= 1.0:
        _warn_at_caller(
            f"{name}: delta={delta!r} is not below 1/n = 1/{n_records} = "
            f"{1.0 / n_records:.3g}. Publishing one record chosen at random is "
            "(0, 1/n)-DP, so this delta allows a whole record to leak; take delta well "
            "below 1/n (for example 1e-6 for fewer than a million rows).",
            LargeDeltaWarning,
        )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _warn_at_caller(message, category):
    """``warnings.warn`` pointing at the first frame outside sklearn_dpol, scikit-learn and
    joblib (the user's line that called ``fit``, directly or through a Pipeline, whose
    steps run through ``joblib.Memory``)."""
    import joblib
    import sklearn

    skipped = tuple(os.path.dirname(os.path.abspath(module.__file__)) + os.sep
                    for module in (sklearn, joblib)) + (_PACKAGE_DIR + os.sep,)
    frame, level = sys._getframe(1), 2   # stacklevel 2: the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(skipped):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class BudgetExceededError(ValueError):
    """A call would spend more than its :class:`~sklearn_dpol.privacy.PrivacyAccountant` allows.

    Raised before the call reads any data: nothing is released and nothing is
    charged.

    Parameters
    ----------
    message : str
        What was exceeded, and what to change.
    budget : tuple of float, default=None
        The accountant's ``(epsilon, delta)``.
    spent : PrivacySpend, default=None
        What the other charges have spent.
    requested : PrivacyCost, default=None
        What the call asked for.

    See Also
    --------
    sklearn_dpol.privacy.PrivacyAccountant : The budget that raises it.

    Examples
    --------
    >>> from sklearn_dpol.exceptions import BudgetExceededError
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     try:
    ...         accountant.reserve((2.0, 0.0), label="too much")
    ...     except BudgetExceededError as error:
    ...         print(error.budget, len(accountant.charges))
    (1.0, 1e-06) 0
    """

    def __init__(self, message, *, budget=None, spent=None, requested=None):
        super().__init__(message)
        self.budget = budget
        self.spent = spent
        self.requested = requested

    def __reduce__(self):
        # Raised in a joblib worker process, it reaches the caller pickled.
        return (_rebuild_budget_error,
                (self.args[0], self.budget, self.spent, self.requested))


def _rebuild_budget_error(message, budget, spent, requested):
    return BudgetExceededError(message, budget=budget, spent=spent, requested=requested)


class PrivacyAccountingError(RuntimeError):
    """A release spent more than it had reserved with its accountant: a bug.

    The ledger records what was actually spent and the call is undone; please
    report it.

    See Also
    --------
    sklearn_dpol.privacy.Reservation.settle : Raises it when the spend is not
        covered by the reservation.

    Examples
    --------
    >>> from sklearn_dpol.exceptions import PrivacyAccountingError
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     reservation = accountant.reserve((0.1, 0.0), label="a count")
    ...     try:
    ...         reservation.settle((0.2, 0.0))  # spent more than reserved
    ...     except PrivacyAccountingError:
    ...         print(accountant.spent().epsilon)
    0.2
    """


class NoiseReuseError(ValueError):
    """A charge would draw the same noise as a live charge of its accountant.

    Two releases with the same noise are not independent: the difference of
    two fold models, for example, is noise-free. Raised before the call reads
    any data: nothing is released and nothing is charged.

    See Also
    --------
    sklearn_dpol.privacy.PrivacyAccountant : The ledger that records each
        charge's noise fingerprint.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> from sklearn_dpol.exceptions import NoiseReuseError
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 2))
    >>> y = X[:, 0]
    >>> with PrivacyAccountant(epsilon=4.0, delta=1e-5) as budget:
    ...     _ = PrivateQFTLRegressor(random_state=0, accountant=budget).fit(X, y)
    ...     try:  # the same seed again: the same noise
    ...         PrivateQFTLRegressor(random_state=0, accountant=budget).fit(X, y)
    ...     except NoiseReuseError:
    ...         print("refused")
    refused
    """


class StaleStreamError(ValueError):
    """A copy of a ``partial_fit`` stream continues after another copy did.

    The stream's charge covers one continuation; two copies would release two
    continuations from the same state and the same noise. Raised before the
    call reads any data: nothing is released and nothing is charged.

    See Also
    --------
    sklearn_dpol.privacy.Reservation.next_call : The check of a stream's call count.

    Examples
    --------
    >>> import copy
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> from sklearn_dpol.exceptions import StaleStreamError
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(100, 2))
    >>> y = X[:, 0]
    >>> with PrivacyAccountant(epsilon=4.0, delta=1e-5) as budget:
    ...     stream = PrivateQFTLRegressor(accountant=budget).partial_fit(X[:50], y[:50])
    ...     checkpoint = copy.deepcopy(stream)
    ...     _ = stream.partial_fit(X[50:], y[50:])
    ...     try:  # the checkpoint is behind: continuing it would fork the stream
    ...         checkpoint.partial_fit(X[50:], y[50:])
    ...     except StaleStreamError:
    ...         print("refused")
    refused
    """


class LedgerError(ValueError):
    """A privacy ledger cannot be trusted or reached: nothing is charged.

    Raised by :class:`~sklearn_dpol.privacy.PrivacyAccountant` when its ledger
    fails a check (an entry missing, reordered or edited, the ledger truncated,
    emptied or replaced, a budget that differs from the one stored), or when
    the process cannot reach the ledger's file or server. The accountant never
    falls back to another ledger: the call that needed it raises before it
    reads any data. The message says how to recover.

    See Also
    --------
    sklearn_dpol.privacy.PrivacyAccountant : The ledger's checks.

    Examples
    --------
    >>> import os, sqlite3, tempfile
    >>> from sklearn_dpol.exceptions import LedgerError
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
    >>> budget = PrivacyAccountant(epsilon=1.0, delta=1e-6, path=path)
    >>> budget.reserve((0.5, 0.0), label="a count").settle((0.5, 0.0))
    >>> budget.close()
    >>> with sqlite3.connect(path) as db:  # an entry edited by hand
    ...     _ = db.execute("UPDATE sklearn_dpol_ledger_entries "
    ...                    "SET body = replace(body, '0.5', '0.0')")
    >>> try:
    ...     PrivacyAccountant(epsilon=1.0, delta=1e-6, path=path)
    ... except LedgerError as error:
    ...     print("is corrupt" in str(error), "How to recover" in str(error))
    True True
    """
