"""A user-held privacy budget for one data set, charged by every fit that uses it.

The ledger lives in a database, so that every copy of the accountant charges
the same budget: ``sklearn.base.clone`` keeps the object itself
(``__deepcopy__`` returns ``self``), and the pickled copies that joblib or dask
send to worker processes carry the ledger's address and identity. An SQLite
file serves the processes of one machine; a PostgreSQL server (``path`` a
``postgresql://`` URL) the processes of a cluster that spans machines. Each
change is one transaction that locks the ledger, verifies its hash chain,
checks the budget and appends the entry (``_ledger.py``), so concurrent
workers can never jointly overspend, and a damaged or unreachable ledger
refuses every charge.

Composition (``doc/privacy.md``, section 11): charges that carry a Gaussian DP
``mu`` compose exactly, ``mu = sqrt(sum mu_i^2)``; the others (pure epsilon,
the objective-perturbation profile, zCDP conversions) by basic composition,
``(sum eps_i, sum delta_i)``; the two groups together are
``(eps_basic + eps_G, delta_basic + delta_G)``-DP for every ``(eps_G, delta_G)``
the GDP group satisfies.
"""

import hashlib
import hmac
import json
import math
import os
import threading
import uuid
import weakref
from dataclasses import dataclass

import numpy as np

from ..exceptions import (
    BudgetExceededError,
    LedgerError,
    NoiseReuseError,
    PrivacyAccountingError,
    StaleStreamError,
)
from ._gaussian import compose_gdp, gaussian_delta, gaussian_epsilon, gaussian_mu
from ._guarantee import PrivacyGuarantee
from ._ledger import LEDGER_VERSION, RetryTransaction, _Head, corrupt, hostname, is_url
from ._ledger import open_store, redact, temporary_path
from ._validation import check_epsilon, check_mu

__all__ = ["Charge", "PrivacyAccountant", "PrivacyCost", "PrivacySpend", "Reservation",
           "noise_fingerprint"]

# Relative slack of every budget comparison. It absorbs rounding only: decimal
# budgets in binary (ten charges of 0.1 add up to 1 + 5.6e-17) and calibrations
# whose root searches land a few ulps above the target (a Frank-Wolfe mu is up
# to 4.4e-16 above mu*(epsilon, delta), and still within (epsilon, delta)).
ROUNDING_SLACK = 1e-12


@dataclass(frozen=True)
class PrivacyCost:
    """The guarantee one charge stands for.

    A charge with a Gaussian DP ``mu`` composes exactly with the other GDP
    charges; one without composes by adding its ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon, delta : float
        The ``(epsilon, delta)``-DP guarantee; ``epsilon=inf`` for no privacy.
    mu : float, default=nan
        Gaussian DP parameter when the guarantee is ``mu``-GDP (it then
        composes exactly with other GDP charges); ``nan`` otherwise (basic
        composition of ``(epsilon, delta)``).

    See Also
    --------
    PrivacyAccountant.reserve : Takes a cost, a guarantee or a tuple.
    sklearn_dpol.PrivacyGuarantee : An estimator's ``privacy_``, convertible
        with :meth:`PrivacyCost.of`.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyCost, gaussian_mu
    >>> cost = PrivacyCost(1.0, 1e-6, mu=gaussian_mu(1.0, 1e-6))
    >>> cost.is_gdp, round(cost.mu, 4)
    (True, 0.2367)
    """

    epsilon: float
    delta: float
    mu: float = math.nan

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        delta = float(self.delta)
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta must be in [0, 1); got {self.delta!r}.")
        object.__setattr__(self, "delta", delta)
        mu = float(self.mu)
        object.__setattr__(self, "mu", mu if math.isnan(mu) else check_mu(mu))

    @property
    def is_gdp(self):
        """True when the cost composes in Gaussian DP (``mu`` is not NaN)."""
        return not math.isnan(self.mu)

    @classmethod
    def of(cls, value):
        """A cost from a :class:`PrivacyGuarantee`, a cost, or ``(epsilon, delta[, mu])``.

        Parameters
        ----------
        value : PrivacyGuarantee, PrivacyCost or tuple
            ``privacy_`` of a fit, a cost, ``(epsilon, delta)`` or
            ``(epsilon, delta, mu)``.

        Returns
        -------
        cost : PrivacyCost
            The same guarantee as a cost.
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, PrivacyGuarantee):
            return cls(value.epsilon, value.delta, value.mu)
        if isinstance(value, (tuple, list)) and len(value) in (2, 3):
            return cls(*value)
        raise ValueError(
            "A privacy cost is a PrivacyGuarantee, a PrivacyCost or a tuple "
            f"(epsilon, delta) or (epsilon, delta, mu); got {value!r}."
        )

    def covers(self, other, slack=ROUNDING_SLACK):
        """True when a release costing ``other`` is within this cost (same group).

        Parameters
        ----------
        other : PrivacyCost
            The cost to compare.
        slack : float, default=ROUNDING_SLACK
            Relative excess allowed for rounding (``0`` for exact cover).

        Returns
        -------
        covered : bool
            Same group, and no larger ``mu`` (GDP) or ``(epsilon, delta)``.
        """
        if self.is_gdp != other.is_gdp:
            return False
        if self.is_gdp:
            return other.mu <= self.mu * (1.0 + slack)
        return (other.epsilon <= self.epsilon * (1.0 + slack)
                and other.delta <= self.delta * (1.0 + slack))

    def join(self, other):
        """A cost that covers both: the smallest one when they are of one group.

        Parameters
        ----------
        other : PrivacyCost
            Another cost.

        Returns
        -------
        joined : PrivacyCost
            The componentwise maximum. For a GDP cost and a non-GDP one, the
            maximum ``(epsilon, delta)`` without ``mu`` (basic composition):
            each is ``(epsilon, delta)``-DP at its own fields.
        """
        same_gdp = self.is_gdp and other.is_gdp
        return PrivacyCost(max(self.epsilon, other.epsilon), max(self.delta, other.delta),
                           max(self.mu, other.mu) if same_gdp else math.nan)

    def as_dict(self):
        """The cost as ``{"epsilon": ..., "delta": ..., "mu": ...}`` (the ledger's format).

        Returns
        -------
        values : dict
            The three fields.
        """
        return {"epsilon": self.epsilon, "delta": self.delta, "mu": self.mu}

    def __str__(self):
        gdp = f" [{self.mu:.4g}-GDP]" if self.is_gdp else ""
        return f"({self.epsilon:.4g}, {self.delta:.3g})-DP{gdp}"


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger.

    :attr:`PrivacyAccountant.charges` lists them in the order they were
    opened; a refunded charge is removed.

    Parameters
    ----------
    id : str
        Identifier of the charge.
    label : str
        Who charged: the estimator's class, or the label given to
        :meth:`PrivacyAccountant.reserve`.
    kind : str
        ``"fit"`` (one release), ``"stream"`` (a ``partial_fit`` stream, charged
        once for its whole guarantee) or ``"reservation"``.
    cost : PrivacyCost
        What the charge counts against the budget: the guarantee spent, or the
        amount reserved while the call runs.
    status : str
        ``"spent"`` once settled, ``"reserved"`` while the call runs (a
        reservation left by a process that died counts as spent).
    pid : int
        Process that opened the charge.

    See Also
    --------
    PrivacyAccountant.spent : What the charges add up to.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     with accountant.reserve((0.25, 0.0), label="a histogram"):
    ...         pass
    ...     charge = accountant.charges[0]
    >>> charge.label, charge.kind, charge.status, charge.cost.epsilon
    ('a histogram', 'reservation', 'spent', 0.25)
    """

    id: str
    label: str
    kind: str
    cost: PrivacyCost
    status: str
    pid: int


@dataclass(frozen=True)
class PrivacySpend:
    """What a ledger's charges add up to.

    Returned by :meth:`PrivacyAccountant.spent`: the joint guarantee of every
    charge, by the composition rule of ``doc/privacy.md``, section 11.

    Parameters
    ----------
    epsilon, delta : float
        The charges are jointly ``(epsilon, delta)``-DP. With GDP charges,
        ``delta`` is the budget's delta and ``epsilon`` the smallest value
        that goes with it; without them, the basic sums.
    mu : float
        Gaussian DP parameter of the GDP charges together (0 if none).
    epsilon_basic, delta_basic : float
        Sums over the charges without a GDP ``mu``.
    n_charges : int
        Number of charges.

    See Also
    --------
    PrivacyAccountant.remaining : The largest epsilon a further charge may have.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyAccountant, gaussian_mu
    >>> mu = gaussian_mu(1.0, 1e-6)
    >>> with PrivacyAccountant(epsilon=5.0, delta=1e-6) as accountant:
    ...     for _ in range(4):
    ...         with accountant.reserve((1.0, 1e-6, mu), label="a fit"):
    ...             pass
    ...     spend = accountant.spent()
    >>> spend.n_charges, round(spend.mu / mu, 6), spend.epsilon < 4.0
    (4, 2.0, True)
    """

    epsilon: float
    delta: float
    mu: float
    epsilon_basic: float
    delta_basic: float
    n_charges: int

    def __str__(self):
        # Only the groups that hold charges (a "basic (0, 0)" beside GDP charges read as a
        # charge of nothing).
        parts = []
        if self.mu:
            parts.append(f"GDP mu={self.mu:.4g}")
        if self.epsilon_basic or self.delta_basic:
            parts.append(f"basic ({self.epsilon_basic:.4g}, {self.delta_basic:.3g})")
        detail = f" [{'; '.join(parts)}]" if parts else ""
        return (f"({self.epsilon:.4g}, {self.delta:.3g})-DP over {self.n_charges} "
                f"charge(s){detail}")


def compose(costs, delta):
    """The joint guarantee of ``costs`` at a total ``delta`` (section 11).

    Parameters
    ----------
    costs : iterable of PrivacyCost
        The charges.
    delta : float
        Total delta to state the spend at (the budget's delta).

    Returns
    -------
    spend : PrivacySpend
        Their joint ``(epsilon, delta)``, the GDP group's ``mu`` and the basic sums.
    """
    costs = list(costs)
    mu = compose_gdp([c.mu for c in costs if c.is_gdp])
    eps_basic = math.fsum(c.epsilon for c in costs if not c.is_gdp)
    delta_basic = math.fsum(c.delta for c in costs if not c.is_gdp)
    if mu == 0.0:
        return PrivacySpend(eps_basic, delta_basic, 0.0, eps_basic, delta_basic, len(costs))
    left = delta - delta_basic
    eps_gdp = gaussian_epsilon(mu, left) if 0.0 < left < 1.0 else math.inf
    return PrivacySpend(eps_basic + eps_gdp, max(delta, delta_basic), mu, eps_basic,
                        delta_basic, len(costs))


def within_budget(costs, epsilon, delta):
    """True when ``costs`` compose within ``(epsilon, delta)`` (up to rounding).

    The GDP group, ``mu``-GDP, is ``(e, delta(e; mu))``-DP for every ``e``; it
    fits when ``delta(epsilon - eps_basic; mu) <= delta - delta_basic``.

    Parameters
    ----------
    costs : iterable of PrivacyCost
        The charges.
    epsilon, delta : float
        The budget.

    Returns
    -------
    within : bool
        Whether the charges compose within the budget.
    """
    if math.isinf(epsilon):
        return True
    costs = list(costs)
    eps_cap = epsilon * (1.0 + ROUNDING_SLACK)
    delta_cap = delta * (1.0 + ROUNDING_SLACK)
    mu = compose_gdp([c.mu for c in costs if c.is_gdp])
    eps_left = eps_cap - math.fsum(c.epsilon for c in costs if not c.is_gdp)
    delta_left = delta_cap - math.fsum(c.delta for c in costs if not c.is_gdp)
    if eps_left < 0 or delta_left < 0:
        return False
    return mu == 0.0 or gaussian_delta(eps_left, mu) <= delta_left


def noise_fingerprint(generator, origin="seeded"):
    """A fingerprint of the random draws ``generator`` will make.

    Two generators with the same state draw the same noise; passed to
    :meth:`PrivacyAccountant.reserve`, the fingerprint lets the ledger refuse
    a second charge that would reuse the noise of a live one.

    Parameters
    ----------
    generator : numpy.random.Generator, numpy.random.RandomState or None
        The generator the charge draws its noise from, before its first draw;
        ``None`` for one seeded from fresh operating-system entropy, whose
        draws no other charge repeats.
    origin : str, default="seeded"
        Hashed with the state, to tell apart generators that can only meet
        by accident: ``"seeded"`` (freshly seeded for the charge) and
        ``"carried"`` (left by an earlier release, which may have drawn
        nothing from it).

    Returns
    -------
    fingerprint : str or None
        A hash of the generator's state (``None`` for ``None``). It is a
        function of the state alone, hence of an integer seed: the ledger
        never stores it, but a keyed hash of it (:func:`keyed_fingerprint`).
    """
    if generator is None:
        return None
    if isinstance(generator, np.random.RandomState):
        state = generator.get_state(legacy=False)
    else:
        state = generator.bit_generator.state
    text = json.dumps([origin, state], sort_keys=True,
                      default=lambda v: np.asarray(v).tolist())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def keyed_fingerprint(fingerprint, key):
    """What the ledger stores for a charge's noise: HMAC-SHA256 of ``fingerprint`` under ``key``.

    ``key`` is the ledger's secret (32 random bytes made with the ledger and
    kept outside it, ``doc/privacy.md`` section 51): a reader of the ledger
    who lacks it cannot test a guessed seed against a stored fingerprint,
    while two charges with the same generator state on one ledger still
    store the same value.
    """
    digest = hmac.new(key, str(fingerprint).encode("utf-8"), hashlib.sha256)
    return digest.hexdigest()[:32]


class _InvalidEntry(Exception):
    """An entry that no accountant writes (raised by :meth:`_Ledger.apply`)."""


# Each event's fields: (required, optional).
_EVENT_FIELDS = {
    "budget": ({"op", "epsilon", "delta", "version", "ledger"}, {"host"}),
    "open": ({"op", "id", "label", "kind", "pid", "cost"}, {"noise"}),
    "increase": ({"op", "id", "cost"}, {"calls"}),
    "settle": ({"op", "id", "cost"}, set()),
    "refund": ({"op", "id"}, set()),
    # The machine an SQLite ledger serves from now on (PrivacyAccountant(adopt_host=True)).
    "host": ({"op", "host"}, set()),
}


def _field(event, name, types):
    value = event[name]
    if isinstance(value, bool) or not isinstance(value, types):
        raise _InvalidEntry(f"has a {name} of type {type(value).__name__}")
    return value


def _cost_field(event):
    cost = event["cost"]
    if not isinstance(cost, dict) or set(cost) != {"epsilon", "delta", "mu"}:
        raise _InvalidEntry(f"has a malformed cost {cost!r}")
    for value in cost.values():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _InvalidEntry(f"has a malformed cost {cost!r}")
    try:
        return PrivacyCost(**cost)
    except ValueError as error:
        raise _InvalidEntry(f"has an invalid cost ({error})") from None


def _dominates(new, old):
    """True when ``new`` counts at least ``old`` against any budget (no slack).

    Within a group, :meth:`PrivacyCost.covers`; a basic cost dominates a GDP
    one when its ``(epsilon, delta)`` do (the GDP cost is ``(epsilon,
    delta)``-DP too); a GDP cost never dominates a basic one.
    """
    if new.is_gdp == old.is_gdp:
        return new.covers(old, slack=0.0)
    return (not new.is_gdp and new.epsilon >= old.epsilon and new.delta >= old.delta)


class _Ledger:
    """Replay of the ledger's events into the current charges.

    Every event is checked before it changes anything: its fields, the
    charge it names, and the rules the accountant follows when it writes
    (entry 1 is the budget and only entry 1; an ``increase`` or a ``settle``
    never lowers what a charge counts or has spent; a stream's calls advance
    one at a time). A ledger holding anything else was not written by an
    accountant, and :meth:`apply` raises :class:`_InvalidEntry`.
    """

    def __init__(self, events=()):
        self.budget = None
        self.ledger_id = None
        self.host = None  # the machine an SQLite ledger serves (None: not recorded)
        self.charges = {}
        self.n_events = 0
        self._ids = set()
        for event in events:
            self.apply(event)

    def apply(self, event):
        if not isinstance(event, dict):
            raise _InvalidEntry(f"is {type(event).__name__}, not an event")
        op = event.get("op")
        if op not in _EVENT_FIELDS:
            raise _InvalidEntry(f"has an unknown operation {op!r}")
        required, optional = _EVENT_FIELDS[op]
        missing = required - set(event)
        if missing:
            raise _InvalidEntry(f"({op}) lacks {sorted(missing)}")
        extra = set(event) - required - optional
        if extra:
            raise _InvalidEntry(f"({op}) has unknown fields {sorted(extra)}")
        if (op == "budget") != (self.n_events == 0):
            raise _InvalidEntry("is a budget: only entry 1 is" if op == "budget"
                                else "is not the budget, which entry 1 must be")
        getattr(self, "_" + op)(event)
        self.n_events += 1

    def _budget(self, event):
        if event["version"] != LEDGER_VERSION:
            raise _InvalidEntry(f"is a ledger of version {event['version']!r}, not "
                                f"{LEDGER_VERSION}")
        epsilon = _field(event, "epsilon", (int, float))
        delta = _field(event, "delta", (int, float))
        ledger_id = _field(event, "ledger", str)
        try:
            check_epsilon(epsilon)
        except ValueError as error:
            raise _InvalidEntry(f"has an invalid budget ({error})") from None
        if not 0.0 <= delta < 1.0:
            raise _InvalidEntry(f"has an invalid budget delta {delta!r}")
        self.budget, self.ledger_id = (float(epsilon), float(delta)), ledger_id
        if "host" in event:
            self.host = _field(event, "host", str)

    def _host(self, event):
        self.host = _field(event, "host", str)

    def _open(self, event):
        charge_id = _field(event, "id", str)
        if charge_id in self._ids:
            raise _InvalidEntry(f"opens charge {charge_id} a second time")
        label, kind = _field(event, "label", str), _field(event, "kind", str)
        pid = _field(event, "pid", int)
        noise = _field(event, "noise", str) if "noise" in event else None
        cost = _cost_field(event)
        self._ids.add(charge_id)
        self.charges[charge_id] = {
            "label": label, "kind": kind, "pid": pid, "spent": None, "reserved": cost,
            "settled": False, "noise": noise, "calls": 1,
        }

    def _live(self, event):
        charge_id = _field(event, "id", str)
        if charge_id not in self.charges:
            raise _InvalidEntry(f"({event['op']}) names charge {charge_id}, which is not "
                                "open")
        return self.charges[charge_id]

    def _increase(self, event):
        charge = self._live(event)
        cost = _cost_field(event)
        calls = charge["calls"]
        if "calls" in event:
            calls = _field(event, "calls", int)
            if calls != charge["calls"] + 1:
                raise _InvalidEntry(f"sets a stream's call count from {charge['calls']} "
                                    f"to {calls}")
        if not _dominates(cost, charge["reserved"]):
            raise _InvalidEntry(f"lowers a reservation from {charge['reserved']} to {cost}")
        charge.update(reserved=cost, settled=False, calls=calls)

    def _settle(self, event):
        charge = self._live(event)
        cost = _cost_field(event)
        if charge["spent"] is not None and not _dominates(cost, charge["spent"]):
            raise _InvalidEntry(f"lowers a spent charge from {charge['spent']} to {cost}")
        charge.update(spent=cost, reserved=cost, settled=True)

    def _refund(self, event):
        charge = self._live(event)
        if charge["spent"] is None:
            del self.charges[event["id"]]
        else:
            charge.update(reserved=charge["spent"], settled=True)

    def snapshot(self):
        """A copy that later events, applied by other threads, leave unchanged."""
        copy = _Ledger()
        copy.budget, copy.ledger_id, copy.n_events = self.budget, self.ledger_id, self.n_events
        copy.host = self.host
        copy.charges = {cid: dict(c) for cid, c in self.charges.items()}
        return copy

    def costs(self, replace=None):
        """Every charge's reserved cost, with ``replace = (id, cost)`` swapped in."""
        costs = {cid: c["reserved"] for cid, c in self.charges.items()}
        if replace is not None:
            costs[replace[0]] = replace[1]
        return list(costs.values())

    def listing(self):
        return [
            Charge(cid, c["label"], c["kind"], c["reserved"],
                   "spent" if c["settled"] else "reserved", c["pid"])
            for cid, c in self.charges.items()
        ]


# Threads of one process serialise on this lock before the database's lock.
_THREAD_LOCKS = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(key):
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(key, threading.RLock())


def _fresh_thread_locks():
    # A forked child has only the forking thread: a lock that another thread
    # of the parent held at the fork would stay held in the child forever.
    global _THREAD_LOCKS_GUARD
    _THREAD_LOCKS_GUARD = threading.Lock()
    _THREAD_LOCKS.clear()


if hasattr(os, "register_at_fork"):  # pragma: no branch - every POSIX platform
    os.register_at_fork(after_in_child=_fresh_thread_locks)


def _remove_store(store, owner_pid):
    # A forked child inherits the owner object; only the creating process removes.
    if os.getpid() == owner_pid:
        store.remove()


class PrivacyAccountant:
    """The privacy budget of one data set, shared by every fit that charges it.

    Pass it to estimators as ``accountant=``. Each ``fit``, and each
    ``partial_fit`` stream once, reserves its guarantee before reading any data
    and raises :class:`~sklearn_dpol.exceptions.BudgetExceededError` if the
    budget would be exceeded; a call that fails is refunded, and a successful
    one settles at its ``privacy_``. Copies share one ledger: ``clone`` keeps
    this very object, and pickled copies (joblib's or dask's worker processes)
    charge the same ledger, each charge one locked database transaction, so a
    model-selection run in parallel processes is charged for every fit it
    makes.

    Parameters
    ----------
    epsilon : float
        Total epsilon for the data set, ``>= 0``; ``np.inf`` only records.
    delta : float
        Total delta, in ``[0, 1)``.
    path : str, path-like or None, default=None
        Where the ledger lives. A file path: an SQLite ledger, for the
        processes of one machine. A ``postgresql://user@host:port/database``
        URL: a ledger on a PostgreSQL server, for processes on several
        machines (needs ``pip install "sklearn-dpol[postgres]"``); the URL's
        fragment names the ledger within the database
        (``postgresql://host/db#census-2020``; ``default`` without one).
        ``None`` creates a temporary SQLite file, removed when the accountant
        is closed (the end of its ``with`` block, or :meth:`close`) or
        garbage collected in the process that created it. A given path or URL
        persists, so a data set's budget is tracked across sessions; opening
        an existing ledger requires the same budget.
    adopt_host : bool, default=False
        An SQLite ledger serves the host that created it: an accountant on
        another host refuses to charge it. ``True`` makes this machine the
        ledger's host (a chained entry; accountants of the former host refuse
        from then on): for a renamed host or a replaced container, never for
        two machines at once (doc/accountant.md, "One machine per SQLite
        ledger, moved on purpose"). Ignored for PostgreSQL ledgers.

    See Also
    --------
    sklearn_dpol.PrivateHyperparameterSearch : Charges a whole private
        search once.
    sklearn_dpol.exceptions.BudgetExceededError : Raised before any data is
        read when a call would exceed the budget.

    Notes
    -----
    Charges compose by the rule of ``doc/privacy.md``, section 11: GDP charges
    exactly in ``mu``, the others by adding ``(epsilon, delta)``, and the two
    groups by adding the GDP group's ``(epsilon, delta)`` at the delta the
    others leave. Records fed to one ``partial_fit`` stream are covered by the
    stream's guarantee; a record fed twice composes, which neither the stream's
    ``privacy_`` nor the accountant sees.

    Composition needs independent noise: a charge whose noise generator has
    the state of a live charge's (the same integer ``random_state``, a cloned
    ``RandomState``, a copied estimator) is refused with
    :class:`~sklearn_dpol.exceptions.NoiseReuseError`, and a copy of a stream
    that another copy continued with
    :class:`~sklearn_dpol.exceptions.StaleStreamError`. Use
    ``random_state=None`` for fits that share a budget.

    The ledger fails closed: its entries are numbered and chained by hashes,
    and an accountant that finds them truncated, reordered, edited, emptied
    or replaced, or that cannot reach the ledger's file or server, raises
    :class:`~sklearn_dpol.exceptions.LedgerError` and charges nothing (never
    another ledger). An SQLite ledger serves one machine: an accountant on
    another host (a pickled copy, or one opened at the same path through a
    shared file system) refuses to charge it.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     with accountant.reserve((0.5, 0.0), label="a count"):
    ...         pass
    ...     print(accountant.spent().epsilon, len(accountant.charges))
    0.5 1
    """

    def __init__(self, epsilon, delta, path=None, *, adopt_host=False):
        self.epsilon = check_epsilon(epsilon)
        self.delta = float(delta)
        if not 0.0 <= self.delta < 1.0:
            raise ValueError(f"delta must be in [0, 1); got {delta!r}.")
        self._closed_ledger = None
        self._cache = None
        self._owner = self._temporary = path is None
        self._host = hostname()
        self._ledger_id = None
        self._mark = None  # (seq, hash) of the last entry ever verified
        if path is None:
            path = temporary_path()
        elif not is_url(path):
            path = os.path.abspath(os.fspath(path))
        self.path = path
        self._store = open_store(path, temporary=self._temporary)
        if self._temporary:
            weakref.finalize(self, _remove_store, self._store, os.getpid())
        self._attach_or_create(adopt_host=bool(adopt_host))

    # -- copies ---------------------------------------------------------------

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        # The budget, the ledger's address and identity, and the host: an
        # unpickled copy re-checks all of them against the ledger before it
        # charges (a copy is never trusted to carry a budget of its own).
        return {"epsilon": self.epsilon, "delta": self.delta, "path": self.path,
                "_closed_ledger": self._closed_ledger, "_owner": False,
                "_temporary": self._temporary, "_ledger_id": self._ledger_id,
                "_host": self._host, "_mark": self._mark}

    def __setstate__(self, state):
        # (Copies pickled by version 0.1 carry no identity: they attach to the
        # ledger at their path, whose budget they then check.)
        self.__dict__.update({"_temporary": False, "_ledger_id": None, "_host": hostname(),
                              "_mark": None}, **state)
        self._cache = None
        self._store = open_store(self.path, temporary=self._temporary)

    def __repr__(self):
        path = redact(self.path) if is_url(self.path) else self.path
        return (f"PrivacyAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"path={path!r})")

    # -- life cycle -----------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def close(self):
        """Stop charging; keep the final ledger readable; remove a temporary file."""
        if self._closed_ledger is not None:
            return
        try:
            final = self._read()
        finally:
            self._store.close()
        self._closed_ledger = final
        if self._owner:
            _remove_store(self._store, os.getpid())

    @property
    def closed(self):
        """True once :meth:`close` ran (here or before this copy was pickled)."""
        return self._closed_ledger is not None

    # -- reading --------------------------------------------------------------

    @property
    def charges(self):
        """The ledger's charges, in the order they were opened (list of :class:`Charge`)."""
        return self._ledger().listing()

    def spent(self):
        """What the charges add up to, reservations in flight included.

        Returns
        -------
        spend : PrivacySpend
            The joint guarantee of every charge, stated at the budget's delta.
        """
        return compose(self._ledger().costs(), self.delta)

    def remaining(self, delta=0.0):
        """The largest epsilon a further ``(epsilon, delta)``-DP charge may have.

        Parameters
        ----------
        delta : float, default=0.0
            The delta of that charge.

        Returns
        -------
        epsilon : float
            0 when nothing is left (``inf`` for an infinite budget).
        """
        if math.isinf(self.epsilon):
            return math.inf
        costs = self._ledger().costs()
        low, high = 0.0, self.epsilon
        if not within_budget([*costs, PrivacyCost(0.0, delta)], self.epsilon, self.delta):
            return 0.0
        for _ in range(200):  # bisection: the GDP group's epsilon has no closed form
            mid = 0.5 * (low + high)
            if within_budget([*costs, PrivacyCost(mid, delta)], self.epsilon, self.delta):
                low = mid
            else:
                high = mid
            if high - low <= 1e-15 * max(high, 1e-300):
                break
        return low

    def remaining_mu(self):
        """The largest ``mu`` a further Gaussian DP charge may have.

        Returns
        -------
        mu : float
            0 when nothing is left (``inf`` for an infinite budget).
        """
        if math.isinf(self.epsilon):
            return math.inf
        spend = compose(self._ledger().costs(), self.delta)
        eps_left = self.epsilon - spend.epsilon_basic
        delta_left = self.delta - spend.delta_basic
        if eps_left < 0 or delta_left <= 0:
            return 0.0
        total = gaussian_mu(eps_left, min(delta_left, 1.0 - 1e-16))
        return math.sqrt(max(total * total - spend.mu * spend.mu, 0.0))

    def can_afford(self, cost):
        """True when a further charge of ``cost`` would fit in the budget.

        Parameters
        ----------
        cost : PrivacyGuarantee, PrivacyCost or tuple
            ``(epsilon, delta)`` or ``(epsilon, delta, mu)``.

        Returns
        -------
        affordable : bool
            Whether the ledger with this charge added stays within the budget.
        """
        costs = self._ledger().costs()
        return within_budget([*costs, PrivacyCost.of(cost)], self.epsilon, self.delta)

    # -- charging -------------------------------------------------------------

    def reserve(self, cost, label, kind="reservation", noise=None):
        """Reserve ``cost`` against the budget, before any data is read.

        Use it as a context manager: the end of the ``with`` block spends it
        (at the cost given to :meth:`Reservation.settle`, or at the reserved
        cost), whether or not the block raised, since releases made before an
        exception may have escaped. Only :meth:`Reservation.refund` gives the
        budget back: call it when the block is known to have released nothing.
        A meta-estimator that makes many releases under one joint guarantee
        reserves that guarantee once and runs its inner fits without an
        accountant.

        Parameters
        ----------
        cost : PrivacyGuarantee, PrivacyCost or tuple
            The guarantee the call will have, ``(epsilon, delta)`` or
            ``(epsilon, delta, mu)`` (``mu`` for a GDP guarantee).
        label : str
            Who charges, shown in :attr:`charges`.
        kind : str, default="reservation"
            Shown in :attr:`charges`; estimators use ``"fit"`` and ``"stream"``.
        noise : str or None, default=None
            :func:`noise_fingerprint` of the generator the charge draws its
            noise from; ``None`` for noise from fresh entropy. The ledger
            stores it keyed with the ledger's secret key
            (:func:`keyed_fingerprint`), and refuses the charge
            (``LedgerError``) when that key is missing.

        Returns
        -------
        reservation : Reservation
            The open charge: settle it, refund it, or let its ``with`` block spend it.

        Raises
        ------
        BudgetExceededError
            If the budget cannot cover ``cost``; nothing is recorded.
        NoiseReuseError
            If a live (not refunded) charge of the ledger has the same ``noise``
            fingerprint; nothing is recorded.
        """
        cost, label = PrivacyCost.of(cost), str(label)
        charge_id = uuid.uuid4().hex
        if noise is not None:
            noise = self._keyed_noise(noise)

        def open_charge(ledger):
            self._check_noise(ledger, noise, label)
            self._check_budget(ledger, charge_id, cost, label)
            event = {"op": "open", "id": charge_id, "label": label, "kind": str(kind),
                     "pid": os.getpid(), "cost": cost.as_dict()}
            if noise is not None:
                event["noise"] = str(noise)
            return event

        self._record(open_charge)
        return Reservation(self, charge_id)

    # -- the ledger -----------------------------------------------------------

    def _attach_or_create(self, adopt_host=False):
        header = {"op": "budget", "epsilon": self.epsilon, "delta": self.delta,
                  "version": LEDGER_VERSION, "ledger": uuid.uuid4().hex, "host": self._host}
        with _thread_lock(self.path):
            # create() is False when another process created the ledger first.
            created = not self._store.exists() and self._store.create(header)
            ledger = self._read()  # verifies the whole chain, and the budget
            if adopt_host and not is_url(self.path) and ledger.host != self._host:
                # This machine takes the SQLite ledger over (doc/accountant.md): a chained
                # entry, so every accountant of the former host refuses from now on.
                self._transact(lambda _: {"op": "host", "host": self._host}, adopting=True)
            # Another host's ledger opens (reading it, spent() and charges, is harmless);
            # every charge refuses there, inside its transaction (_check_ledger_host).
            if not created:  # a PostgreSQL ledger made by an earlier version
                self._store.register(self._ledger_id)
            if created and self._ledger_id != header["ledger"]:  # pragma: no cover
                raise corrupt(self._store.location, "the ledger just created reads as "
                                                    "another one (a stale write-ahead log?)")

    def _keyed_noise(self, noise):
        """``noise`` keyed with the ledger's secret key (raises if the key is missing)."""
        self._check_open()
        self._check_host()
        if not is_url(self.path) and not os.path.exists(self.path):
            raise self._missing()
        if self._ledger_id is None:  # a copy pickled by version 0.1
            self._read()
        return keyed_fingerprint(noise, self._store.noise_key(self._ledger_id))

    def _missing(self):
        if self._temporary:
            return LedgerError(
                f"The ledger file {self.path} of this PrivacyAccountant is gone (its "
                "accountant was closed or garbage collected). Charges cannot be "
                "recorded; keep the accountant open while its estimators fit."
            )
        return LedgerError(
            f"Cannot reach the privacy ledger file {self.path} from this process (host "
            f"{hostname()}): there is no such file here. Nothing was charged, and no "
            "other ledger is charged instead. If the file was moved, open it where it "
            "is now; if this process runs on another machine, use a PostgreSQL ledger "
            "(path='postgresql://...') that every machine reaches; if it was deleted, "
            "do not start a new file at this path (it would restart the budget from zero), "
            "nor put a backup in its place (it lacks every charge made after it): start a "
            "new ledger with the budget that is left (doc/accountant.md, recovery)."
        )

    def _check_host(self):
        if not is_url(self.path) and self._host != hostname():
            raise LedgerError(
                f"This PrivacyAccountant's ledger is the SQLite file {self.path} on host "
                f"{self._host}, and this accountant now runs on host {hostname()} (a copy "
                "sent to another machine, or a renamed host). SQLite's "
                "locks do not span machines, so charging it from here could overspend "
                "the budget (or charge another file of the same name). Nothing was "
                "charged. For a cluster that spans machines, use a PostgreSQL ledger: "
                "PrivacyAccountant(epsilon, delta, path='postgresql://user@host/db#name'). "
                "If this machine was only renamed, open the ledger again here with "
                "PrivacyAccountant(epsilon, delta, path, adopt_host=True)."
            )

    def _check_ledger_host(self, ledger):
        """Refuse an SQLite ledger whose recorded host is not this machine (issue 18, item 7).

        The budget entry records the host that created the file, and a ``host`` entry
        the host that took it over since (``adopt_host=True``); an accountant on any
        other machine, new or old, refuses before it charges: SQLite's locks do not
        span machines (a file on a network share), so two hosts charging one file
        could overspend the budget silently. Ledgers of version 0.1 record no host.
        """
        if is_url(self.path) or ledger.host is None or ledger.host == hostname():
            return
        raise LedgerError(
            f"The SQLite ledger {self.path} serves host {ledger.host}, and this "
            f"accountant runs on host {hostname()}. SQLite's locks do not span machines, "
            "so charging it from here could overspend the budget. Nothing was charged. "
            "For processes on several machines use a PostgreSQL ledger "
            "(path='postgresql://user@host/db#name'). If this machine replaced the "
            f"other one (a renamed host, a new container on the same volume) and host "
            f"{ledger.host} will never charge this file again, take it over with "
            "PrivacyAccountant(epsilon, delta, path, adopt_host=True) "
            "(doc/accountant.md, 'One machine per SQLite ledger')."
        )

    def _refresh(self, tx, cache):
        """The ledger up to its last entry, verifying only what is new to ``cache``."""
        head, ledger = cache if cache is not None else (_Head(), None)
        fresh = ledger is None
        if fresh:
            ledger = _Ledger()
        location = self._store.location
        for seq, event in tx.entries(head, self._ledger_id, self._mark):
            try:
                ledger.apply(event)
            except _InvalidEntry as error:
                raise corrupt(location, f"entry {seq} {error}") from None
        if fresh:
            if self._ledger_id is None:
                self._ledger_id = ledger.ledger_id
            elif ledger.ledger_id != self._ledger_id:  # pragma: no cover - head checked
                raise corrupt(location, "its budget entry names another ledger")
            if ledger.budget != (self.epsilon, self.delta):
                raise LedgerError(
                    f"The ledger {redact(location)} holds a budget of {ledger.budget}, "
                    f"not ({self.epsilon}, {self.delta}). A data set has one budget: pass "
                    "the same epsilon and delta, or another path for another data set. "
                    "(An unpickled accountant whose budget differs from its ledger's is "
                    "refused too.) Nothing was charged."
                )
        return head, ledger

    def _transact(self, decide, write=True, durable=True, adopting=False):
        """Read the ledger, let ``decide(ledger)`` make one event, append it: atomically.

        ``decide`` may raise (nothing is appended) or return ``None`` (no
        change). Returns the ledger as of the end of the transaction (shared
        with this accountant's later transactions: callers copy it). A
        transaction the database rolled back to serialise it is run again
        (twice at most).
        """
        for attempt in range(3):
            try:
                return self._transact_once(decide, write, durable, adopting)
            except RetryTransaction:
                if attempt == 2:
                    raise

    def _transact_once(self, decide, write, durable, adopting=False):
        if write:
            self._check_host()   # reading from another host is harmless (review 124)
        with _thread_lock(self.path):
            # Set again only once the transaction has committed (or wrote nothing).
            cache, self._cache = self._cache, None
            with self._store.transaction(write, self._missing, durable) as tx:
                head, ledger = self._refresh(tx, cache)
                try:
                    if write and not adopting:
                        # In the transaction: a takeover by another host, committed
                        # since this accountant last read, is seen before it writes.
                        self._check_ledger_host(ledger)
                    event = decide(ledger)
                except BaseException:
                    self._cache = (head, ledger)  # verified, and nothing was written
                    self._mark = (head.seq, head.hash)
                    raise
                if event is not None:
                    ledger.apply(event)  # the same checks as a replay, before writing
                    tx.append(head, event)
            self._cache = (head, ledger)
            self._mark = (head.seq, head.hash)
            return ledger

    def _read(self):
        """A verified snapshot of the ledger (no change)."""
        with _thread_lock(self.path):
            return self._transact(lambda ledger: None, write=False).snapshot()

    def _ledger(self):
        if self._closed_ledger is not None:
            return self._closed_ledger
        return self._read()

    def _check_open(self):
        if self._closed_ledger is not None:
            raise ValueError(
                "This PrivacyAccountant is closed (its with-block ended, or close() was "
                "called): it records no more charges. Create a new accountant for a "
                "new data set; a data set's budget cannot be restarted."
            )

    def _record(self, decide, durable=True):
        # Entries that spend budget (open, increase) are durable at commit, so
        # a reservation survives a crash of the machine. A settlement or a
        # refund may be lost with the last commits before such a crash (never
        # reordered with later ones): that leaves the reservation counted,
        # which can overstate the spend, never understate it.
        self._check_open()
        self._transact(decide, durable=durable)

    @staticmethod
    def _check_noise(ledger, noise, label):
        """Raise if a live charge draws the same noise (same seed, or copied state)."""
        if noise is None:
            return
        for other in ledger.charges.values():
            if other.get("noise") == str(noise):
                raise NoiseReuseError(
                    f"This {label} would draw the same noise as a charge of this "
                    f"accountant already made by {other['label']} (same random_state, or "
                    "a copy of the same generator). Releases with the same noise are not "
                    "independent: the difference of two of them cancels the noise, so "
                    "the accountant cannot compose them. Nothing was read or released. "
                    "Use random_state=None for fits that share a budget (or a distinct "
                    "seed for each), and continue only one copy of an estimator."
                )

    def _check_budget(self, ledger, charge_id, cost, label):
        """Raise unless the ledger, with ``charge_id`` at ``cost``, is within budget."""
        if not within_budget(ledger.costs(replace=(charge_id, cost)), self.epsilon,
                             self.delta):
            raise self._exceeded(ledger, charge_id, cost, label)

    def _exceeded(self, ledger, charge_id, cost, label):
        others = [c for cid, c in ledger.charges.items() if cid != charge_id]
        spend = compose([c["reserved"] for c in others], self.delta)
        previous = ledger.charges.get(charge_id)
        already = (f" (it holds {previous['reserved']} already)" if previous else "")
        # Which limit binds: the deltas of the charges without a GDP mu add up (basic
        # composition), so past the budget's delta no smaller epsilon helps (review 128).
        basic_delta = math.fsum(c.delta for c in [*(o["reserved"] for o in others), cost]
                                if not c.is_gdp)
        if basic_delta > self.delta * (1.0 + ROUNDING_SLACK):
            advice = (
                f"Delta is the binding limit: the charges composed by basic composition "
                f"(those without a GDP mu, such as objective perturbation fits) add their "
                f"deltas, {basic_delta:.3g} with this one against the budget's "
                f"{self.delta:.3g}, and no smaller epsilon changes that. Pass a smaller "
                "delta to each fit (the budget's delta over the number of fits planned), "
                "fit fewer models, use a Gaussian solver (solver='igd' or "
                "'mirror_descent'), whose charges compose by GDP, or reserve one joint "
                "guarantee for a whole selection; the budget of a data set cannot grow.")
        else:
            advice = ("Lower this call's epsilon, fit fewer models, or reserve one joint "
                      "guarantee for a whole selection; the budget of a data set cannot "
                      "grow.")
        return BudgetExceededError(
            f"Privacy budget exceeded: the data set's budget is ({self.epsilon:.4g}, "
            f"{self.delta:.3g})-DP, {len(others)} other charge(s) have spent {spend}, "
            f"and this {label} needs {cost}{already}. Nothing was read or released. "
            + advice,
            budget=(self.epsilon, self.delta), spent=spend, requested=cost,
        )


class Reservation:
    """A charge in a :class:`PrivacyAccountant`'s ledger, held by whoever made it.

    Returned by :meth:`PrivacyAccountant.reserve`. Settle it at what was
    spent, raise it with :meth:`increase`, or give it back with
    :meth:`refund`; leaving its ``with`` block spends it at the reserved cost,
    even on an exception, because releases may already have escaped.

    Parameters
    ----------
    accountant : PrivacyAccountant
        The ledger.
    charge_id : str
        The charge.

    Attributes
    ----------
    calls : int
        The stream calls this holder has made under the charge (1 once
        opened); the ledger counts them too, so that a stale copy of the holder
        is refused (:meth:`next_call`).

    See Also
    --------
    PrivacyAccountant.charges : The ledger's entries.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     reservation = accountant.reserve((0.5, 0.0), label="an attempt")
    ...     reservation.refund()  # nothing was released
    ...     print(accountant.charges)
    []
    """

    def __init__(self, accountant, charge_id):
        self.accountant = accountant
        self.id = charge_id
        self.calls = 1

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # On an exception too: releases may have escaped the block before it
        # raised, so only an explicit refund() gives the budget back.
        def spend_reserved(ledger):
            charge = ledger.charges.get(self.id)
            if charge is None or charge["settled"]:  # refunded, or settled already
                return None
            return {"op": "settle", "id": self.id, "cost": charge["reserved"].as_dict()}

        self.accountant._record(spend_reserved, durable=False)
        return False

    @property
    def cost(self):
        """The cost the charge counts now (:class:`PrivacyCost`)."""
        return self._charge()["reserved"]

    @property
    def status(self):
        """``"spent"`` or ``"reserved"``."""
        return "spent" if self._charge()["settled"] else "reserved"

    def increase(self, cost, label=None):
        """Reserve more, so that the charge covers ``cost`` too (budget-checked).

        Parameters
        ----------
        cost : PrivacyGuarantee, PrivacyCost or tuple
            What the charge must cover from now on.
        label : str, default=None
            For the error message.
        """
        cost = PrivacyCost.of(cost)

        def raise_reservation(ledger):
            charge = _charge_in(ledger, self.id)
            if charge["reserved"].covers(cost, slack=0.0):
                return None
            return self._increase_event(ledger, charge, cost, label)

        self.accountant._record(raise_reservation)

    def _increase_event(self, ledger, charge, cost, label):
        # Any cost not exactly covered is reserved and budget-checked: covering
        # it "up to rounding" would let a stream creep past the budget by the
        # rounding slack at every call.
        new = charge["reserved"].join(cost)
        self.accountant._check_budget(ledger, self.id, new, label or charge["label"])
        return {"op": "increase", "id": self.id, "cost": new.as_dict()}

    def next_call(self, cost, label=None):
        """Admit one more call of a stream: check the holder is current, then :meth:`increase`.

        A copy of a stream's holder (a pickled or deep-copied estimator) holds
        the call count at the time of the copy. The first copy to continue
        advances the ledger's count; every other copy is then stale and is
        refused, so one charge never covers two continuations of a stream.

        Parameters
        ----------
        cost : PrivacyGuarantee, PrivacyCost or tuple
            What the charge must cover after this call.
        label : str, default=None
            For the error message.

        Raises
        ------
        StaleStreamError
            If another copy continued the stream since this one last did.
        BudgetExceededError
            If the budget cannot cover ``cost``.
        """
        cost = PrivacyCost.of(cost)

        def advance(ledger):
            charge = _charge_in(ledger, self.id)
            if charge["calls"] != self.calls:
                raise StaleStreamError(
                    f"This {label or charge['label']} is a stale copy of a partial_fit "
                    f"stream: another copy continued it (the ledger counts "
                    f"{charge['calls']} calls, this copy saw {self.calls}). Continuing "
                    "both would release two continuations, with the same noise, under one "
                    "charge. Nothing was read or released. Continue only one copy of a "
                    "stream (the latest checkpoint), or call fit to start a new one."
                )
            event = self._increase_event(ledger, charge, cost, label)
            event["calls"] = self.calls + 1
            return event

        self.accountant._record(advance)
        self.calls += 1

    def settle(self, actual):
        """Record what was spent: ``actual``, which the reservation must cover.

        A stream settles after every call; the charge never decreases.

        Parameters
        ----------
        actual : PrivacyGuarantee, PrivacyCost or tuple
            The guarantee of the release (an estimator's ``privacy_``).

        Raises
        ------
        PrivacyAccountingError
            If ``actual`` is not covered by the reservation (a bug). The ledger
            then records a cost covering both ``actual`` and what the charge
            had spent: it was spent.
        """
        actual = PrivacyCost.of(actual)
        found = {}

        def record(ledger):
            charge = _charge_in(ledger, self.id)
            reserved, spent = charge["reserved"], charge["spent"]
            # A stream's charge never decreases: what earlier calls spent stays spent.
            total = actual if spent is None else spent.join(actual)
            found.update(charge, covered=reserved.covers(total))
            if found["covered"] and not reserved.covers(total, slack=0.0):
                # Above the budget-checked reservation by rounding only: record
                # the reservation, so that rounding never accumulates.
                total = reserved
            return {"op": "settle", "id": self.id, "cost": total.as_dict()}

        self.accountant._record(record, durable=False)
        if not found["covered"]:
            raise PrivacyAccountingError(
                f"{found['label']} spent {actual} but reserved only {found['reserved']} "
                "with its accountant: the planned guarantee is wrong. The ledger records "
                "the actual spend."
            )

    def refund(self):
        """Undo what is reserved beyond the last settlement (all of it if none).

        Refunding a charge that was refunded already does nothing.
        """
        def give_back(ledger):
            if self.id not in ledger.charges:  # refunded already
                return None
            return {"op": "refund", "id": self.id}

        self.accountant._record(give_back, durable=False)

    def _charge(self):
        return _charge_in(self.accountant._ledger(), self.id)

    def __repr__(self):
        return f"Reservation(id={self.id!r}, accountant={self.accountant!r})"


def _charge_in(ledger, charge_id):
    if charge_id not in ledger.charges:
        raise ValueError(f"charge {charge_id} is not in the ledger (it was refunded).")
    return ledger.charges[charge_id]
