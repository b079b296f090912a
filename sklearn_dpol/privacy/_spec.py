"""One declaration of an estimator's privacy: the privacy spec.

Every estimator answers three questions about a call from its public
parameters (and the call's public metadata: its shape, per-user budgets), never
from the data's values:

(a) the cost charged to an accountant before the call reads anything
    (:meth:`PrivacySpec.cost`);
(b) the zCDP ``rho`` that private selection plans a candidate ``fit`` with, or
    why the estimator has none (:meth:`PrivacySpec.selection_rho`);
(c) the :class:`~sklearn_dpol.privacy.PrivacyGuarantee` the call stores in
    ``privacy_`` (:meth:`PrivacySpec.guarantee`).

Each estimator declares them once, in ``_privacy_spec``, as one
:class:`PrivacySpec` in one of four regimes; the base class
(``sklearn_dpol/_base.py``) derives the accountant's charge from it and
private selection (``model_selection/_candidates.py``) its ``rho``.
``doc/privacy.md``, section "The privacy spec", documents the regimes and how
the parts of a composed spec compose.
"""

import math
from dataclasses import dataclass

from ._accountant import PrivacyCost
from ._gaussian import gaussian_mu
from ._guarantee import PrivacyGuarantee

__all__ = ["CONTINUAL", "LOCAL", "ONE_RELEASE", "PARALLEL", "Part", "PrivacySpec",
           "gaussian_spec"]

# -- regimes ---------------------------------------------------------------------------
ONE_RELEASE = "one release"    # fit: one central release (possibly of several parts)
CONTINUAL = "continual"        # a partial_fit stream: one guarantee for the whole stream
PARALLEL = "parallel"          # a partial_fit stream of disjoint batches, each a release
LOCAL = "local"                # every user's own noisy report (local DP)
REGIMES = (ONE_RELEASE, CONTINUAL, PARALLEL, LOCAL)

NEIGHBOURS = "replace-one"
LOCAL_NEIGHBOURS = "replace-one (local: each user's report)"

_CONTINUAL_RECORDS = (
    "the records passed to partial_fit since the stream started (records "
    "of an earlier fit are covered by its own release)"
)
_PARALLEL_RECORDS = (
    "the records of fit (if it came first) and of every partial_fit call "
    "since, each covered by (epsilon, delta) through the one call (batch) that contained "
    "it; batches are disjoint, so the stream is (epsilon, delta)-DP per record by parallel "
    "composition (a record passed to k calls composes k times)"
)
_LOCAL_RECORDS = (
    "every row passed to fit and to the partial_fit calls since, each a user who "
    "reported once"
)
_BUDGETS = {
    ONE_RELEASE: "this release",
    PARALLEL: "each batch, for a stream however long (parallel composition)",
    LOCAL: ("each user's own report, for a stream however long (a row passed to k "
            "calls reports k times and composes)"),
}


@dataclass(frozen=True)
class Part:
    """One mechanism of a composed spec (section "The privacy spec" of doc/privacy.md).

    Parameters
    ----------
    name : str
        What the part releases.
    epsilon : float
        Its pure ``epsilon`` (``nan`` for a Gaussian part, described by ``mu``).
    mu : float
        Its Gaussian DP parameter (``nan`` if it is not GDP).
    rho : float
        Its zCDP parameter: ``mu^2 / 2`` for a Gaussian part, ``epsilon^2 / 8``
        for an ``epsilon``-bounded-range part (exponential mechanism).
    """

    name: str
    epsilon: float = math.nan
    mu: float = math.nan
    rho: float = math.nan

    @classmethod
    def gaussian(cls, name, mu, epsilon=math.nan):
        """A ``mu``-GDP part (``mu^2/2``-zCDP); ``epsilon``: its share of a basic composition."""
        mu = float(mu)
        return cls(name, epsilon=float(epsilon), mu=mu,
                   rho=math.inf if math.isinf(mu) else mu * mu / 2.0)

    @classmethod
    def bounded_range(cls, name, epsilon):
        """An ``epsilon``-DP exponential mechanism (``epsilon^2/8``-zCDP, bounded range)."""
        epsilon = float(epsilon)
        return cls(name, epsilon=epsilon,
                   rho=math.inf if math.isinf(epsilon) else epsilon * epsilon / 8.0)


@dataclass(frozen=True)
class PrivacySpec:
    """The privacy of one call of an estimator, declared from public values.

    Parameters
    ----------
    regime : {"one release", "continual", "parallel", "local"}
        ``"one release"``: ``fit``, one central release (its parts, if any,
        compose into it). ``"continual"``: a ``partial_fit`` stream whose
        releases share one guarantee, spent gradually (``spent_mu`` grows
        towards ``mu``; the same total as one release). ``"parallel"``: a
        stream of disjoint batches, each released with the whole guarantee
        (parallel composition). ``"local"``: each user's own noisy report
        (local DP); the model is post-processing.
    epsilon, delta : float
        The guarantee of the call (for a stream, of the whole stream).
    mu : float
        Its Gaussian DP parameter; ``nan`` when the guarantee is not GDP
        (then it composes in an accountant by adding ``(epsilon, delta)``).
    parts : tuple of Part
        The mechanisms a composed release is made of (empty for one mechanism).
    composition : str
        How the parts compose: ``"gdp"`` (``mu^2`` add up to ``mu^2``),
        ``"basic"`` (``epsilon`` add up), ``"zcdp"`` (``rho`` add up, converted
        to ``(epsilon, delta)``); ``""`` for a single mechanism. A release of
        many steps not listed as parts may name how they compose (Frank-Wolfe's
        exponential selections: ``"zcdp"``).
    rho : float or None
        zCDP parameter of ``fit`` for private selection; ``None`` when there is
        none (see ``no_rho``).
    no_rho : str or None
        Why there is no ``rho``. ``None`` together with ``rho=None``: the
        estimator is not a candidate of private selection at all.
    no_rho_always : bool
        True when no configuration of the estimator has a ``rho`` (private
        selection refuses the estimator itself, not one of its settings).
    horizon : int or None
        The horizon of a continual stream (``None``: however long).
    """

    regime: str
    epsilon: float
    delta: float
    mu: float = math.nan
    parts: tuple = ()
    composition: str = ""
    rho: float = None
    no_rho: str = None
    no_rho_always: bool = False
    horizon: int = None

    def __post_init__(self):
        if self.regime not in REGIMES:
            raise ValueError(f"regime must be one of {REGIMES}; got {self.regime!r}.")

    # (a) the accountant's charge --------------------------------------------------------
    def cost(self):
        """The cost charged to an accountant before the call (a :class:`PrivacyCost`)."""
        return PrivacyCost(self.epsilon, self.delta, self.mu)

    # (b) private selection --------------------------------------------------------------
    def selection_rho(self):
        """zCDP ``rho`` of the configured ``fit``; ``ValueError`` saying why if there is none."""
        if self.rho is None:
            raise ValueError(self.no_rho or "This estimator is not a candidate of private "
                             "selection.")
        return self.rho

    def parts_rho(self):
        """The sum of the parts' zCDP ``rho`` (zCDP composes additively); ``nan`` if unknown."""
        return math.fsum(part.rho for part in self.parts) if self.parts else math.nan

    # (c) privacy_ -----------------------------------------------------------------------
    def guarantee(self, *, mechanism, released, n_releases, n_records, spent_fraction=1.0,
                  spent_mu=None, records=None, achieved=None):
        """The ``privacy_`` of the call: this spec's numbers, the regime's scope.

        Parameters
        ----------
        mechanism, released : str
            The estimator's descriptions of its noise and of what is public.
        n_releases, n_records : int
            Counts so far (public: the calls and their shapes).
        spent_fraction : float, default=1.0
            For a continual stream, the fraction of ``mu^2`` spent so far (the
            stream mechanism's or the schedule's); ``spent_mu = mu sqrt(f)``.
        spent_mu : float, optional
            The spent ``mu`` as the stream mechanism reports it, instead.
        records : str, optional
            Which records, where the regime's standard text needs the
            estimator's details (the local estimators' per-user budgets).
        achieved : tuple (epsilon, delta, mu), optional
            The guarantee a calibration achieved, within this spec (a step
            count or a noise scale rounded towards more privacy, say).
        """
        epsilon, delta, mu = ((self.epsilon, self.delta, self.mu) if achieved is None
                              else achieved)
        if spent_mu is None:
            spent_mu = mu if spent_fraction == 1.0 else mu * math.sqrt(spent_fraction)
        return PrivacyGuarantee(
            epsilon=float(epsilon), delta=float(delta), mu=float(mu),
            neighbouring=LOCAL_NEIGHBOURS if self.regime == LOCAL else NEIGHBOURS,
            mechanism=mechanism, released=released,
            n_releases=int(n_releases), n_records=int(n_records),
            records=self._records() if records is None else records,
            spent_mu=float(spent_mu), budget=self._budget(),
        )

    def _records(self):
        if self.regime == ONE_RELEASE:
            return "the records passed to fit"
        if self.regime == CONTINUAL:
            return _CONTINUAL_RECORDS
        return _PARALLEL_RECORDS if self.regime == PARALLEL else _LOCAL_RECORDS

    def _budget(self):
        if self.regime != CONTINUAL:
            return _BUDGETS[self.regime]
        return (f"the stream up to its horizon of {self.horizon} samples"
                if self.horizon is not None else "the stream, however long")


def gaussian_spec(epsilon, delta, regime=ONE_RELEASE, *, horizon=None, parts=()):
    """A ``mu*(epsilon, delta)``-GDP spec: cost with ``mu``, ``rho = mu^2 / 2``.

    ``parts`` (Gaussian, their ``mu^2`` summing to ``mu*^2``) describe a
    release made of several Gaussian mechanisms (AdaSSP's eigenvalue share).
    """
    mu = gaussian_mu(epsilon, delta)
    return PrivacySpec(
        regime, epsilon, delta, mu, parts=tuple(parts), composition="gdp" if parts else "",
        rho=math.inf if math.isinf(mu) else mu * mu / 2.0, horizon=horizon,
    )


def stream_regime(fitting, *, parallel=False):
    """``"one release"`` for ``fit``; ``"parallel"`` or ``"continual"`` for a stream."""
    if fitting:
        return ONE_RELEASE
    return PARALLEL if parallel else CONTINUAL


def objective_perturbation_refusal(name):
    """Private selection's refusal of an objective-perturbation ``fit`` (no zCDP ``rho``)."""
    return (
        f"{name}(solver='objective_perturbation') has a custom privacy profile that is "
        "not Gaussian DP and not accounted in Renyi DP here; private selection cannot "
        "bound it. Search solver='igd' or 'mirror_descent' instead."
    )
