"""A user-held privacy budget for one data set, charged by every fit that uses it.

The ledger lives in a file, so that every copy of the accountant charges the
same budget: ``sklearn.base.clone`` keeps the object itself (``__deepcopy__``
returns ``self``), and the pickled copies that joblib sends to worker processes
carry the file's path. Each change is appended to the file under an exclusive
lock (``fcntl.flock``) after checking the budget under the same lock, so
concurrent workers can never jointly overspend.

Composition (``doc/privacy.md``, section 11): charges that carry a Gaussian DP
``mu`` compose exactly, ``mu = sqrt(sum mu_i^2)``; the others (pure epsilon,
the objective-perturbation profile, zCDP conversions) by basic composition,
``(sum eps_i, sum delta_i)``; the two groups together are
``(eps_basic + eps_G, delta_basic + delta_G)``-DP for every ``(eps_G, delta_G)``
the GDP group satisfies.
"""

import hashlib
import json
import math
import os
import tempfile
import threading
import uuid
import weakref
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..exceptions import (
    BudgetExceededError,
    NoiseReuseError,
    PrivacyAccountingError,
    StaleStreamError,
)
from ._gaussian import compose_gdp, gaussian_delta, gaussian_epsilon, gaussian_mu
from ._guarantee import PrivacyGuarantee
from ._validation import check_epsilon, check_mu

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process only (see PrivacyAccountant)
    fcntl = None

__all__ = ["Charge", "PrivacyAccountant", "PrivacyCost", "PrivacySpend", "Reservation",
           "noise_fingerprint"]

# Relative slack of every budget comparison. It absorbs rounding only: decimal
# budgets in binary (ten charges of 0.1 add up to 1 + 5.6e-17) and calibrations
# whose root searches land a few ulps above the target (a Frank-Wolfe mu is up
# to 4.4e-16 above mu*(epsilon, delta), and still within (epsilon, delta)).
ROUNDING_SLACK = 1e-12

_LEDGER_VERSION = 1


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
        return (f"({self.epsilon:.4g}, {self.delta:.3g})-DP over {self.n_charges} charge(s) "
                f"[GDP mu={self.mu:.4g}; basic ({self.epsilon_basic:.4g}, "
                f"{self.delta_basic:.3g})]")


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
        A hash of the generator's state (``None`` for ``None``).
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


class _Ledger:
    """Replay of the ledger's events into the current charges."""

    def __init__(self, events):
        self.budget = None
        self.charges = {}
        self.n_events = 0
        for event in events:
            self.apply(event)

    def apply(self, event):
        self.n_events += 1
        op = event["op"]
        if op == "budget":
            self.budget = (event["epsilon"], event["delta"])
            return
        if op == "open":
            self.charges[event["id"]] = {
                "label": event["label"], "kind": event["kind"], "pid": event["pid"],
                "spent": None, "reserved": PrivacyCost(**event["cost"]),
                "settled": False, "noise": event.get("noise"), "calls": 1,
            }
            return
        charge = self.charges[event["id"]]
        if op == "increase":
            charge["reserved"], charge["settled"] = PrivacyCost(**event["cost"]), False
            charge["calls"] = event.get("calls", charge["calls"])
        elif op == "settle":
            charge["spent"] = charge["reserved"] = PrivacyCost(**event["cost"])
            charge["settled"] = True
        elif op == "refund":
            if charge["spent"] is None:
                del self.charges[event["id"]]
            else:
                charge["reserved"], charge["settled"] = charge["spent"], True
        else:
            raise ValueError(f"unknown ledger event {op!r}")

    def snapshot(self):
        """A copy that later events, applied by other threads, leave unchanged."""
        copy = _Ledger([])
        copy.budget, copy.n_events = self.budget, self.n_events
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


# Threads of one process serialise on this lock before taking the file lock.
_THREAD_LOCKS = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def _thread_lock(path):
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(path, threading.RLock())


def _remove_ledger(path, owner_pid):
    # A forked child inherits the owner object; only the creating process removes.
    if os.getpid() == owner_pid:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


class PrivacyAccountant:
    """The privacy budget of one data set, shared by every fit that charges it.

    Pass it to estimators as ``accountant=``. Each ``fit``, and each
    ``partial_fit`` stream once, reserves its guarantee before reading any data
    and raises :class:`~sklearn_dpol.exceptions.BudgetExceededError` if the
    budget would be exceeded; a call that fails is refunded, and a successful
    one settles at its ``privacy_``. Copies share one ledger: ``clone`` keeps
    this very object, and pickled copies (joblib's worker processes) write to
    the same file, under an exclusive lock, so a model-selection run in
    parallel processes is charged for every fit it makes.

    Parameters
    ----------
    epsilon : float
        Total epsilon for the data set, ``>= 0``; ``np.inf`` only records.
    delta : float
        Total delta, in ``[0, 1)``.
    path : str or None, default=None
        File of the ledger. ``None`` creates a temporary file, removed when the
        accountant is closed (the end of its ``with`` block, or :meth:`close`)
        or garbage collected in the process that created it. A given path
        persists, so a data set's budget is tracked across sessions; opening
        an existing ledger requires the same budget.

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

    The lock is ``fcntl.flock`` on the ledger file: local POSIX file systems
    (on NFS it depends on the server). Without ``fcntl`` (Windows) the
    accountant serialises threads of one process and refuses to be pickled,
    so that a process-based parallel run fails loudly instead of losing
    charges.

    Examples
    --------
    >>> from sklearn_dpol.privacy import PrivacyAccountant
    >>> with PrivacyAccountant(epsilon=1.0, delta=1e-6) as accountant:
    ...     with accountant.reserve((0.5, 0.0), label="a count"):
    ...         pass
    ...     print(accountant.spent().epsilon, len(accountant.charges))
    0.5 1
    """

    def __init__(self, epsilon, delta, path=None):
        self.epsilon = check_epsilon(epsilon)
        self.delta = float(delta)
        if not 0.0 <= self.delta < 1.0:
            raise ValueError(f"delta must be in [0, 1); got {delta!r}.")
        self._closed_ledger = None
        self._cache = None
        self._owner = path is None
        if path is None:
            fd, path = tempfile.mkstemp(prefix="sklearn_dpol_budget_", suffix=".jsonl")
            os.close(fd)
            weakref.finalize(self, _remove_ledger, path, os.getpid())
        self.path = os.path.abspath(os.fspath(path))
        self._attach_or_create()

    # -- copies ---------------------------------------------------------------

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        if fcntl is None:
            raise TypeError(
                "PrivacyAccountant cannot be pickled on this platform (no fcntl file "
                "lock): copies in other processes could not charge the ledger safely. "
                "Use a thread-based backend, e.g. joblib.parallel_backend('threading')."
            )
        return {"epsilon": self.epsilon, "delta": self.delta, "path": self.path,
                "_closed_ledger": self._closed_ledger, "_owner": False}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._cache = None

    def __repr__(self):
        return (f"PrivacyAccountant(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"path={self.path!r})")

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
        with self._locked() as fd:
            self._closed_ledger = self._refresh(fd).snapshot()
        if self._owner:
            _remove_ledger(self.path, os.getpid())

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
            noise from; ``None`` for noise from fresh entropy.

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

        def open_charge(ledger):
            self._check_noise(ledger, noise, label)
            self._check_budget(ledger, charge_id, cost, label)
            event = {"op": "open", "id": charge_id, "label": label, "kind": str(kind),
                     "pid": os.getpid(), "cost": cost.as_dict()}
            if noise is not None:
                event["noise"] = str(noise)
            return event

        self._transact(open_charge)
        return Reservation(self, charge_id)

    # -- ledger file ----------------------------------------------------------

    def _attach_or_create(self):
        header = {"op": "budget", "epsilon": self.epsilon, "delta": self.delta,
                  "version": _LEDGER_VERSION}
        with _thread_lock(self.path):
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                _lock(fd)
                events = _read_events(fd)
                if not events:
                    _append(fd, header)
                elif _Ledger(events).budget != (self.epsilon, self.delta):
                    raise ValueError(
                        f"The ledger {self.path} holds a budget of "
                        f"{_Ledger(events).budget}, not ({self.epsilon}, {self.delta}). "
                        "A data set has one budget: pass the same epsilon and delta, "
                        "or another path for another data set."
                    )
            finally:
                os.close(fd)

    @contextmanager
    def _locked(self):
        with _thread_lock(self.path):
            try:
                # No O_CREAT: a missing ledger must never restart from zero.
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                raise ValueError(
                    f"The ledger file {self.path} of this PrivacyAccountant is gone (its "
                    "accountant was closed or garbage collected). Charges cannot be "
                    "recorded; keep the accountant open while its estimators fit."
                ) from None
            try:
                _lock(fd)
                yield fd
            finally:
                os.close(fd)  # releases the lock

    def _ledger(self):
        if self._closed_ledger is not None:
            return self._closed_ledger
        # The cached replay is shared with this accountant's other threads, which
        # apply events to it once the lock is released: readers get a snapshot.
        with self._locked() as fd:
            return self._refresh(fd).snapshot()

    def _refresh(self, fd):
        """The ledger up to the end of the file, parsing only what was appended since.

        The file is append-only, so a copy keeps its replay and its offset in
        the file; call with the lock held.
        """
        identity = os.fstat(fd).st_ino
        offset, ledger, known = self._cache or (0, _Ledger([]), identity)
        if known != identity or os.fstat(fd).st_size < offset:
            raise ValueError(
                f"The ledger file {self.path} was replaced while this accountant used it; "
                "refusing to charge a ledger that may have lost charges."
            )
        data = _read_from(fd, offset)
        for event in _parse(data, first_line=ledger.n_events + 1):
            ledger.apply(event)
        self._cache = (offset + len(data), ledger, identity)
        return ledger

    def _check_open(self):
        if self._closed_ledger is not None:
            raise ValueError(
                "This PrivacyAccountant is closed (its with-block ended, or close() was "
                "called): it records no more charges. Create a new accountant for a "
                "new data set; a data set's budget cannot be restarted."
            )

    def _transact(self, decide):
        """Read the ledger, let ``decide(ledger)`` make one event, append it: atomically.

        ``decide`` may raise (nothing is appended) or return ``None`` (no change).
        """
        self._check_open()
        with self._locked() as fd:
            ledger = self._refresh(fd)
            event = decide(ledger)
            if event is None:
                return
            if event["op"] != "open":
                _charge_in(ledger, event["id"])  # never write an event for no charge
            written = _append(fd, event)
            ledger.apply(event)
            offset, ledger, identity = self._cache
            self._cache = (offset + written, ledger, identity)

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
        return BudgetExceededError(
            f"Privacy budget exceeded: the data set's budget is ({self.epsilon:.4g}, "
            f"{self.delta:.3g})-DP, {len(others)} other charge(s) have spent {spend}, "
            f"and this {label} needs {cost}{already}. Nothing was read or released. "
            "Lower this call's epsilon, fit fewer models, or reserve one joint "
            "guarantee for a whole selection; the budget of a data set cannot grow.",
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

        self.accountant._transact(spend_reserved)
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

        self.accountant._transact(raise_reservation)

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

        self.accountant._transact(advance)
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

        self.accountant._transact(record)
        if not found["covered"]:
            raise PrivacyAccountingError(
                f"{found['label']} spent {actual} but reserved only {found['reserved']} "
                "with its accountant: the planned guarantee is wrong. The ledger records "
                "the actual spend."
            )

    def refund(self):
        """Undo what is reserved beyond the last settlement (all of it if none)."""
        self.accountant._transact(lambda ledger: {"op": "refund", "id": self.id})

    def _charge(self):
        return _charge_in(self.accountant._ledger(), self.id)

    def __repr__(self):
        return f"Reservation(id={self.id!r}, accountant={self.accountant!r})"


def _charge_in(ledger, charge_id):
    if charge_id not in ledger.charges:
        raise ValueError(f"charge {charge_id} is not in the ledger (it was refunded).")
    return ledger.charges[charge_id]


def _lock(fd):
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _read_events(fd):
    return _parse(_read_from(fd, 0))


def _read_from(fd, offset):
    os.lseek(fd, offset, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _parse(data, first_line=1):
    """The events of whole lines; a corrupt or unfinished line raises."""
    if data and not data.endswith(b"\n"):
        raise ValueError(_CORRUPT.format(line="the last line"))
    events = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=first_line):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            raise ValueError(_CORRUPT.format(line=f"line {number}")) from None
    return events


_CORRUPT = ("The privacy ledger is corrupt at {line}; refusing to guess what was spent. "
            "Inspect the file, or start a new ledger with the budget left.")


def _append(fd, event):
    # One write of a short line to an O_APPEND file. Events that spend budget
    # are synced to disk before the call goes on, so a reservation survives a
    # crash of the machine; losing a settlement or a refund only leaves the
    # reservation counted, which can overstate the spend, never understate it.
    line = (json.dumps(event) + "\n").encode("utf-8")
    os.write(fd, line)
    if event["op"] in ("budget", "open", "increase"):
        os.fsync(fd)
    return len(line)
