"""Warnings and errors of sklearn_dpol."""

__all__ = [
    "BudgetExceededError",
    "NoiseReuseError",
    "PrivacyAccountingError",
    "PrivacyLeakWarning",
    "StaleStreamError",
]


class PrivacyLeakWarning(RuntimeWarning):
    """Something is released without the protection of the privacy guarantee.

    Raised, for example, when the label set of a classifier is taken from the
    training labels: pass it from public knowledge to keep it covered.
    """


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
    """


class NoiseReuseError(ValueError):
    """A charge would draw the same noise as a live charge of its accountant.

    Two releases with the same noise are not independent: the difference of
    two fold models, for example, is noise-free. Raised before the call reads
    any data: nothing is released and nothing is charged.
    """


class StaleStreamError(ValueError):
    """A copy of a ``partial_fit`` stream continues after another copy did.

    The stream's charge covers one continuation; two copies would release two
    continuations from the same state and the same noise. Raised before the
    call reads any data: nothing is released and nothing is charged.
    """
