"""PrivacyAccountant: one budget for every fit on a data set, across clones and processes.

The accounting is checked against what the fits themselves report: the
ledger's charges must be exactly the fits made (cv folds x candidates + refit)
and each charge must equal a fit's ``privacy_``.
"""

import concurrent.futures
import copy
import math
import multiprocessing
import os
import pickle
import re
import threading
from collections import Counter
from pathlib import Path
from unittest import SkipTest

import dp_accounting
import numpy as np
import pytest
from _ledger_postgres import ledger_path, new_ledger_url
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, RandomizedSearchCV, cross_validate
from sklearn.utils.estimator_checks import estimator_checks_generator

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.exceptions import (
    BudgetExceededError,
    LedgerError,
    NoiseReuseError,
    PrivacyAccountingError,
    StaleStreamError,
)
from sklearn_dpol.privacy import (
    PrivacyAccountant,
    PrivacyCost,
    compose_gdp,
    gaussian_epsilon,
    gaussian_mu,
)
from sklearn_dpol.privacy._accountant import compose, noise_fingerprint

DOC = Path(__file__).resolve().parents[1] / "doc" / "accountant.md"
RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(120, 3)) / 2
Y = np.clip(X @ [0.5, -0.3, 0.2] + 0.05 * RNG.standard_normal(120), -1, 1)
Y_CLASS = (Y > 0).astype(int)

# One estimator of each class, small enough for cv fits in a few ms, and the
# grid each is searched over.
SEARCHES = [
    (PrivateIGDClassifier(classes=[0, 1], max_iter=1), {"epsilon": [0.5, 1.0]}),
    (PrivateIGDClassifier(classes=[0, 1], solver="objective_perturbation", alpha=1e-2),
     {"epsilon": [0.5, 1.0]}),
    (PrivateQFTLRegressor(), {"epsilon": [0.5, 1.0]}),
    (PrivateFrankWolfeLasso(max_iter=20), {"epsilon": [0.5, 1.0]}),
    (PrivateFrankWolfeLasso(max_iter=20, selection="gaussian"), {"epsilon": [0.5, 1.0]}),
    (PrivateMirrorDescentRegressor(max_iter=20), {"epsilon": [0.5, 1.0]}),
    (PrivateMirrorDescentRegressor(solver="objective_perturbation", alpha=1e-2),
     {"epsilon": [0.5, 1.0]}),
    (ParameterFreeLocalDPRegressor(), {"epsilon": [0.5, 1.0]}),
    (MutualInformationPrivateOGDRegressor(), {"epsilon": [0.5, 1.0]}),
    (MutualInformationPrivateOGDRegressor(epsilon=None, sigma=2.0), {"sigma": [2.0, 4.0]}),
    (MutualInformationPrivateOGDRegressor(feedback="bandit", loss="squared"),
     {"epsilon": [0.5, 1.0]}),
]
SEARCH_IDS = [
    type(e).__name__ + "-" + "-".join(f"{k}={v}" for k, v in e.get_params().items()
                                      if k in ("solver", "selection", "feedback")
                                      and v not in ("igd", "mirror_descent", "full",
                                                    "exponential"))
    for e, _ in SEARCHES
]


def targets(estimator):
    return Y_CLASS if isinstance(estimator, PrivateIGDClassifier) else Y


def key(cost):
    """A charge or guarantee as comparable numbers (rounded far below any real gap; the
    calibrations land within ~1e-12 of their targets, at an n-dependent point since the
    rounding allowance of privacy.md 54.8 depends on n)."""
    return tuple(float(f"{v:.10g}") if math.isfinite(v) else str(v)
                 for v in (cost.epsilon, cost.delta, cost.mu))


def reference_guarantee(estimator, **params):
    """``privacy_`` of a direct fit with ``params``, without an accountant."""
    model = clone(estimator).set_params(accountant=None, **params)
    return model.fit(X, targets(estimator)).privacy_


@pytest.fixture(params=["sqlite", "postgres"])
def accountant(request):
    """An infinite budget, on a temporary SQLite ledger and on a PostgreSQL server
    (``tests/_ledger_postgres.py``: skipped where no server can be started,
    except in CI)."""
    path = new_ledger_url() if request.param == "postgres" else None
    with PrivacyAccountant(epsilon=np.inf, delta=1e-3, path=path) as acc:
        yield acc


# -- composition rule -------------------------------------------------------------------


@pytest.mark.parametrize("mus", [[0.1], [0.2, 0.3], [0.05] * 20, [0.5, 0.01, 0.2]])
@pytest.mark.parametrize("delta", [1e-9, 1e-6, 1e-3])
def test_gdp_group_matches_dp_accounting_pld(mus, delta):
    # Gaussian mechanisms of noise multiplier 1/mu: the PLD accountant's exact
    # composition against ours (mu adds in quadrature, then the exact profile).
    pld = PLDAccountant(value_discretization_interval=1e-4)
    for mu in mus:
        pld.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
    ours = compose([PrivacyCost(0.0, 0.0, mu) for mu in mus], delta)
    assert ours.mu == pytest.approx(compose_gdp(mus))
    assert ours.epsilon == pytest.approx(pld.get_epsilon(delta), rel=2e-4)


@pytest.mark.parametrize("laplace_eps", [[0.1], [0.3, 0.2], [0.05] * 4])
@pytest.mark.parametrize("mus", [[], [0.2], [0.1, 0.3]])
def test_mixed_groups_are_sound_against_dp_accounting(laplace_eps, mus):
    # Laplace (pure epsilon) and Gaussian mechanisms together: the PLD
    # accountant composes both exactly, so it is the tightest valid epsilon;
    # our rule must never be below it (sound), and is exact without Laplace.
    delta = 1e-6
    pld = PLDAccountant(value_discretization_interval=1e-4)
    for eps in laplace_eps:
        pld.compose(dp_accounting.LaplaceDpEvent(1.0 / eps))
    for mu in mus:
        pld.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
    costs = [PrivacyCost(e, 0.0) for e in laplace_eps] + [PrivacyCost(0, 0, m) for m in mus]
    ours = compose(costs, delta)
    reference = pld.get_epsilon(delta)
    assert ours.epsilon >= reference * (1 - 1e-4)
    expected = math.fsum(laplace_eps) + (gaussian_epsilon(compose_gdp(mus), delta)
                                         if mus else 0.0)
    assert ours.epsilon == pytest.approx(expected)


def test_budget_admits_exactly_what_the_rule_allows():
    mu_star = gaussian_mu(1.0, 1e-6)
    with PrivacyAccountant(1.0, 1e-6) as acc:
        assert acc.can_afford((1.0, 1e-6, mu_star))  # one fit at the whole budget
        assert not acc.can_afford((1.0, 1e-6, mu_star * (1 + 1e-9)))
        with acc.reserve((0.25, 0.0), "count"):
            pass
        # What is left for a GDP charge: mu*(0.75, 1e-6), exactly.
        assert acc.remaining_mu() == pytest.approx(gaussian_mu(0.75, 1e-6), rel=1e-9)
        assert acc.can_afford((0, 0, acc.remaining_mu()))
        assert not acc.can_afford((0, 0, acc.remaining_mu() * 1.001))
        left = acc.remaining(delta=0.0)
        assert left == pytest.approx(0.75)
        assert not acc.can_afford((left * 1.001, 0.0))


def test_decimal_budget_shares_add_up():
    # Ten charges of 0.1 sum to 1 + 5.6e-17 in binary: the budget of 1 admits them.
    with PrivacyAccountant(1.0, 0.0) as acc:
        for _ in range(10):
            acc.reserve((0.1, 0.0), "tenth").settle((0.1, 0.0))
        with pytest.raises(BudgetExceededError):
            acc.reserve((1e-9, 0.0), "one more")
        assert acc.spent().epsilon == pytest.approx(1.0)


# -- one ledger for every copy ----------------------------------------------------------


def test_clone_deepcopy_and_pickle_share_one_ledger():
    with PrivacyAccountant(2.0, 1e-6) as acc:
        est = PrivateQFTLRegressor(accountant=acc)
        assert clone(est).accountant is acc
        assert copy.deepcopy(acc) is acc and copy.copy(acc) is acc
        remote = pickle.loads(pickle.dumps(acc))
        assert remote is not acc and remote.path == acc.path
        remote.reserve((0.5, 0.0), "from a copy").settle((0.5, 0.0))
        clone(est).fit(X, Y)
        assert [c.label for c in acc.charges] == ["from a copy", "PrivateQFTLRegressor"]
        assert remote.spent() == acc.spent()
    assert not os.path.exists(acc.path)  # the temporary ledger is removed at exit
    assert acc.closed and len(acc.charges) == 2  # and stays readable


def test_closed_or_missing_ledger_never_restarts_from_zero(tmp_path):
    acc = PrivacyAccountant(1.0, 1e-6)
    copy_elsewhere = pickle.loads(pickle.dumps(acc))
    acc.close()
    with pytest.raises(ValueError, match="closed"):
        acc.reserve((0.1, 0.0), "late")
    with pytest.raises(ValueError, match="is gone"):
        copy_elsewhere.reserve((0.1, 0.0), "late")
    path = tmp_path / "budget.sqlite"
    first = PrivacyAccountant(1.0, 1e-6, path=path)
    first.reserve((0.75, 0.0), "session 1").settle((0.75, 0.0))
    again = PrivacyAccountant(1.0, 1e-6, path=path)  # a later session, same data set
    assert again.spent().epsilon == 0.75
    with pytest.raises(ValueError, match="holds a budget"):
        PrivacyAccountant(2.0, 1e-6, path=path)
    os.replace(tmp_path / "budget.sqlite", tmp_path / "old.sqlite")
    PrivacyAccountant(1.0, 1e-6, path=path)  # a fresh ledger under the same name
    with pytest.raises(LedgerError, match="replaced"):
        first.reserve((0.1, 0.0), "into the new file")
    # Damaged ledgers (edited, truncated, emptied, ...) refuse to open:
    # tests/test_ledger.py, for both backends.


def _charge_tenths(path, attempts):
    acc = PrivacyAccountant(1.0, 0.0, path=path)
    granted = 0
    for _ in range(attempts):
        try:
            acc.reserve((0.1, 0.0), f"worker {os.getpid()}").settle((0.1, 0.0))
            granted += 1
        except BudgetExceededError:
            pass
    return granted


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_concurrent_processes_never_overspend(backend, tmp_path):
    path = ledger_path(backend, tmp_path)
    PrivacyAccountant(1.0, 0.0, path=path)
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(4, mp_context=context) as pool:
        granted = list(pool.map(_charge_tenths, [path] * 4, [8] * 4))
    acc = PrivacyAccountant(1.0, 0.0, path=path)
    assert sum(granted) == 10 == len(acc.charges)  # 32 attempts, exactly 10 fit
    assert len({c.pid for c in acc.charges}) >= 2
    assert acc.spent().epsilon <= 1.0 + 1e-12


# -- model selection: every fit is charged, and each charge is a fit's privacy_ -----------


def test_grid_search_in_loky_processes_charges_every_fit(accountant):
    est = PrivateQFTLRegressor(accountant=accountant)
    search = GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3, n_jobs=2).fit(X, Y)
    charges = accountant.charges
    assert len(charges) == 2 * 3 + 1
    assert len({c.pid for c in charges} - {os.getpid()}) >= 1  # charged in workers
    best = search.best_params_["epsilon"]
    expected = Counter({key(reference_guarantee(est, epsilon=0.5)): 3,
                        key(reference_guarantee(est, epsilon=1.0)): 3})
    expected[key(search.best_estimator_.privacy_)] += 1
    assert Counter(key(c.cost) for c in charges) == expected
    assert search.best_estimator_.privacy_.epsilon == best
    assert all(c.status == "spent" and c.kind == "fit" for c in charges)


def test_cross_validate_in_processes_records_each_returned_fit(accountant):
    est = PrivateMirrorDescentRegressor(max_iter=20, accountant=accountant)
    result = cross_validate(est, X, Y, cv=4, n_jobs=2, return_estimator=True)
    charges = accountant.charges
    assert len(charges) == 4
    assert Counter(key(c.cost) for c in charges) == \
        Counter(key(e.privacy_) for e in result["estimator"])


@pytest.mark.parametrize(("estimator", "grid"), SEARCHES, ids=SEARCH_IDS)
def test_threaded_grid_search_charges_every_fit(estimator, grid, accountant):
    est = clone(estimator).set_params(accountant=accountant)
    with parallel_backend("threading", n_jobs=2):
        search = GridSearchCV(est, grid, cv=2, error_score="raise").fit(X, targets(est))
    (name, values), = grid.items()
    expected = Counter()
    for value in values:
        expected[key(reference_guarantee(est, **{name: value}))] += 2
    expected[key(search.best_estimator_.privacy_)] += 1
    assert Counter(key(c.cost) for c in accountant.charges) == expected
    assert {c.label for c in accountant.charges} == {type(est).__name__}


def test_randomized_search_charges_every_fit(accountant):
    est = PrivateFrankWolfeLasso(max_iter=20, accountant=accountant)
    search = RandomizedSearchCV(est, {"epsilon": [0.25, 0.5, 1.0, 2.0], "radius": [1, 2]},
                                n_iter=3, cv=2, random_state=0).fit(X, Y)
    assert len(accountant.charges) == 3 * 2 + 1
    epsilons = Counter(c.cost.epsilon for c in accountant.charges)
    expected = Counter(p["epsilon"] for p in search.cv_results_["params"] for _ in range(2))
    expected[search.best_params_["epsilon"]] += 1
    assert epsilons == expected


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_search_stops_when_the_budget_runs_out(n_jobs):
    # (1, 1e-6): four fits at mu*(0.5) compose beyond it (three fit); the search
    # raises, from a worker process too (the error pickles with its fields).
    with PrivacyAccountant(1.0, 1e-6) as acc:
        est = PrivateQFTLRegressor(epsilon=0.5, accountant=acc)
        search = GridSearchCV(est, {"alpha": [1e-2, 1e-1]}, cv=2, error_score="raise",
                              n_jobs=n_jobs)
        with pytest.raises(BudgetExceededError, match="budget exceeded") as error:
            search.fit(X, Y)
        assert error.value.budget == (1.0, 1e-6)
        assert error.value.requested.mu == pytest.approx(gaussian_mu(0.5, 1e-6))
        assert acc.spent().epsilon <= 1.0 + 1e-12
        assert len(acc.charges) == 3


# -- before any data is read; failures are refunded ---------------------------------------


class Untouchable:
    """Training data that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"the data was touched ({name})")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was touched (__array__)")

    def __len__(self):
        raise AssertionError("the data was touched (__len__)")


@pytest.mark.parametrize(("estimator", "grid"), SEARCHES, ids=SEARCH_IDS)
def test_exceeded_budget_raises_before_the_data_is_read(estimator, grid):
    with PrivacyAccountant(1e-3, 1e-12) as acc:
        est = clone(estimator).set_params(accountant=acc, random_state=0)
        if not (est.get_params().get("feedback") == "bandit"):
            # Anything that reads X fails this test: the accountant must come first.
            with pytest.raises(BudgetExceededError):
                est.fit(Untouchable(), Untouchable())
        nan_X = np.full_like(X, np.nan)
        # NaN data would raise its own ValueError; the budget error comes first.
        with pytest.raises(BudgetExceededError, match="needs"):
            est.fit(nan_X, targets(est))
        with pytest.raises(BudgetExceededError):
            est.partial_fit(nan_X, targets(est))
        assert acc.charges == []
        assert not hasattr(est, "privacy_") and not hasattr(est, "n_features_in_")


def test_exceeded_budget_leaves_a_fitted_estimator_as_it_was():
    with PrivacyAccountant(1.0, 1e-6) as acc:
        est = PrivateIGDClassifier(classes=[0, 1], random_state=np.random.RandomState(0),
                                   accountant=acc).fit(X, Y_CLASS)
        before = pickle.dumps({k: v for k, v in est.__dict__.items() if k != "accountant"})
        n_charges = len(acc.charges)
        with pytest.raises(BudgetExceededError):
            est.fit(X, Y_CLASS)
        with pytest.raises(BudgetExceededError):
            est.partial_fit(X, Y_CLASS)
        after = pickle.dumps({k: v for k, v in est.__dict__.items() if k != "accountant"})
        assert after == before and len(acc.charges) == n_charges


def test_failed_fit_is_refunded(accountant):
    est = PrivateQFTLRegressor(accountant=accountant)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(bad, Y)
    assert accountant.charges == [] and accountant.spent().epsilon == 0.0
    est.fit(X, Y)
    with pytest.raises(ValueError):
        est.fit(X[:, :2], Y[:5])  # inconsistent lengths
    assert [key(c.cost) for c in accountant.charges] == [key(est.privacy_)]


def test_solver_failure_stays_spent(accountant, monkeypatch):
    # doc/privacy.md 7.4: an uncertified objective-perturbation solve is one
    # bit outside the guarantee, so its budget is treated as spent.
    def fail(*args, **kwargs):
        raise op.SolverDidNotConverge("no certificate")

    monkeypatch.setattr(op, "solve", fail)
    est = PrivateIGDClassifier(classes=[0, 1], solver="objective_perturbation",
                               accountant=accountant)
    with pytest.raises(op.SolverDidNotConverge):
        est.fit(X, Y_CLASS)
    (charge,) = accountant.charges
    assert charge.status == "spent" and charge.cost.epsilon == 1.0


def test_planned_guarantee_below_the_actual_one_fails_loudly(accountant):
    est = PrivateQFTLRegressor(accountant=accountant)
    est._planned_privacy = lambda X, **kw: PrivacyCost(0.5, 1e-6, gaussian_mu(0.5, 1e-6))
    with pytest.raises(PrivacyAccountingError, match="reserved only"):
        est.fit(X, Y)
    assert not hasattr(est, "coef_")  # the release is undone ...
    (charge,) = accountant.charges  # ... but the ledger keeps what was spent
    assert charge.cost.mu == pytest.approx(gaussian_mu(1.0, 1e-6))


# -- streams ------------------------------------------------------------------------------


@pytest.mark.parametrize(("estimator", "grid"), SEARCHES, ids=SEARCH_IDS)
def test_a_stream_is_one_charge_for_its_whole_guarantee(estimator, grid, accountant):
    est = clone(estimator).set_params(accountant=accountant)
    y = targets(est)
    for batch in np.array_split(np.arange(len(X)), 3):
        est.partial_fit(X[batch], y[batch])
    (charge,) = accountant.charges
    assert charge.kind == "stream" and charge.status == "spent"
    assert key(charge.cost) == key(est.privacy_)
    est.fit(X, y)  # a new release ...
    est.partial_fit(X[:10], y[:10])  # ... and a new stream after it
    kinds = [c.kind for c in accountant.charges]
    assert kinds == ["stream", "fit", "stream"]
    assert key(accountant.charges[-1].cost) == key(est.privacy_)


def test_failed_stream_calls_are_refunded(accountant):
    est = PrivateQFTLRegressor(horizon=100, accountant=accountant)
    with pytest.raises(ValueError):
        est.partial_fit(np.full((5, 3), np.nan), Y[:5])
    assert accountant.charges == []
    est.partial_fit(X[:60], Y[:60])
    with pytest.raises(ValueError, match="past horizon"):
        est.partial_fit(X[60:], Y[60:])  # 120 samples > horizon
    (charge,) = accountant.charges
    assert charge.status == "spent" and key(charge.cost) == key(est.privacy_)


def test_local_dp_stream_is_topped_up_when_a_user_asks_for_more():
    # privacy_ is the largest finite sample_epsilon of the stream: the charge
    # grows with it, and a top-up past the budget is refused before the data.
    with PrivacyAccountant(2.0, 0.0) as acc:
        est = ParameterFreeLocalDPRegressor(accountant=acc)
        est.partial_fit(X[:40], Y[:40], sample_epsilon=np.full(40, 0.5))
        est.partial_fit(X[40:80], Y[40:80], sample_epsilon=np.r_[np.full(39, 0.2), 1.5])
        (charge,) = acc.charges
        assert charge.cost.epsilon == est.privacy_.epsilon == 1.5
        with pytest.raises(BudgetExceededError, match="holds"):
            est.partial_fit(np.full((3, 3), np.nan), Y[:3], sample_epsilon=[3.0, 1, 1])
        assert acc.charges[0].cost.epsilon == 1.5 and est.privacy_.epsilon == 1.5


def test_the_accountant_is_frozen_for_a_stream(tmp_path):
    # Removing it mid-stream would let the stream grow uncharged.
    with PrivacyAccountant(1.0, 0.0, path=tmp_path / "l") as acc, \
            PrivacyAccountant(np.inf, 1e-3) as other:
        est = ParameterFreeLocalDPRegressor(accountant=acc)
        est.partial_fit(X[:50], Y[:50], sample_epsilon=np.full(50, 0.1))
        for replacement in (None, other):
            with pytest.raises(ValueError, match="accountant"):
                est.set_params(accountant=replacement).partial_fit(
                    X[50:100], Y[50:100], sample_epsilon=np.full(50, 5.0))
            assert est.privacy_.epsilon == 0.1
        assert other.charges == []
        # The same ledger reopened (another session, or an unpickled copy) is unchanged.
        acc.close()  # a session ends ...
        est = pickle.loads(pickle.dumps(est))  # ... with a checkpoint (its ledger closed)
        reopened = PrivacyAccountant(1.0, 0.0, path=tmp_path / "l")  # ... and reopened
        est.set_params(accountant=reopened).partial_fit(X[50:60], Y[50:60],
                                                        sample_epsilon=np.full(10, 0.2))
        (charge,) = reopened.charges
        assert charge.cost.epsilon == est.privacy_.epsilon == 0.2
        est.set_params(accountant=None).fit(X, Y)  # fit starts afresh, uncharged
        assert len(reopened.charges) == 1


def test_pickled_stream_keeps_charging_its_ledger(accountant):
    est = PrivateQFTLRegressor(accountant=accountant).partial_fit(X[:50], Y[:50])
    resumed = pickle.loads(pickle.dumps(est))  # a checkpoint of the stream
    resumed.partial_fit(X[50:80], Y[50:80])
    resumed.partial_fit(X[80:], Y[80:])
    (charge,) = accountant.charges
    assert key(charge.cost) == key(resumed.privacy_)


@pytest.mark.parametrize("make_copy", [pickle.loads, copy.deepcopy],
                         ids=["pickle", "deepcopy"])
def test_a_copied_stream_continues_once(make_copy, accountant):
    # Two continuations of one stream from the same state and the same noise,
    # under one charge: only the first copy to continue may.
    est = PrivateQFTLRegressor(accountant=accountant).partial_fit(X[:50], Y[:50])
    snapshot = pickle.dumps(est) if make_copy is pickle.loads else est
    first, second = make_copy(snapshot), make_copy(snapshot)
    first.partial_fit(X[50:100], Y[50:100])
    with pytest.raises(StaleStreamError, match="stale copy"):
        second.partial_fit(Untouchable(), Untouchable())
    before = pickle.dumps({k: v for k, v in second.__dict__.items() if k != "accountant"})
    with pytest.raises(StaleStreamError):
        second.partial_fit(X[50:100], Y[50:100])
    with pytest.raises(StaleStreamError):
        est.partial_fit(X[50:100], Y[50:100])  # the original is stale too
    after = pickle.dumps({k: v for k, v in second.__dict__.items() if k != "accountant"})
    assert after == before
    (charge,) = accountant.charges
    assert key(charge.cost) == key(first.privacy_)
    # A failed call releases nothing and keeps the copy current.
    with pytest.raises(ValueError, match="NaN"):
        first.partial_fit(np.full((3, 3), np.nan), Y[:3])
    first.partial_fit(X[100:], Y[100:])
    second.fit(X, Y)  # fit starts a new release: allowed
    assert [c.kind for c in accountant.charges] == ["stream", "fit"]


def test_copies_of_a_seeded_fitted_estimator_start_one_stream(accountant):
    # Seeded copies share the generator the fit left: two streams from it
    # would draw the same noise.
    est = PrivateQFTLRegressor(accountant=accountant, random_state=0).fit(X, Y)
    first, second = copy.deepcopy(est), copy.deepcopy(est)
    first.partial_fit(X[:50], Y[:50])
    with pytest.raises(NoiseReuseError):
        second.partial_fit(X[:50], Y[:50])
    assert [c.kind for c in accountant.charges] == ["fit", "stream"]


def test_unseeded_copies_of_a_fitted_estimator_draw_fresh_noise(accountant):
    # Issue 15 item 5: with random_state=None a copy re-seeds from the OS, so
    # two streams from copies of one fit draw independent noise: two charges.
    est = PrivateQFTLRegressor(accountant=accountant).fit(X, Y)
    first, second = copy.deepcopy(est), copy.deepcopy(est)
    first.partial_fit(X[:50], Y[:50])
    second.partial_fit(X[:50], Y[:50])
    assert not np.array_equal(first.coef_, second.coef_)
    assert [c.kind for c in accountant.charges] == ["fit", "stream", "stream"]


def _seeded(random_state, accountant):
    return PrivateIGDClassifier(classes=[0, 1], max_iter=1, random_state=random_state,
                                accountant=accountant)


@pytest.mark.parametrize("random_state", [0, np.random.RandomState(0)],
                         ids=["int", "RandomState"])
def test_fits_with_the_same_noise_are_refused(random_state, accountant):
    # Clones of a seeded estimator (clone deep-copies a RandomState) draw
    # identical noise: the difference of two fold models is noise-free.
    base = _seeded(random_state, accountant)
    first = clone(base).fit(X[:60], Y_CLASS[:60])  # one seeded fit: reproducible
    with pytest.raises(NoiseReuseError, match="random_state=None"):
        clone(base).fit(Untouchable(), Untouchable())  # refused before the data
    assert len(accountant.charges) == 1
    assert key(accountant.charges[0].cost) == key(first.privacy_)
    if isinstance(random_state, int):  # distinct seeds draw distinct noise
        clone(base).set_params(random_state=1).fit(X[60:], Y_CLASS[60:])
        assert len(accountant.charges) == 2


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize(("estimator", "grid"), SEARCHES, ids=SEARCH_IDS)
def test_a_seeded_fit_and_the_stream_after_it_are_allowed(estimator, grid, epsilon,
                                                         accountant):
    # The stream continues the fit's generator: fresh draws, even when the fit
    # drew nothing from it (epsilon=inf leaves it as seeded).
    est = clone(estimator).set_params(accountant=accountant, random_state=0)
    if "epsilon" in est.get_params():
        est.set_params(epsilon=epsilon)
        if est.get_params().get("sigma") is not None:  # MI-OGD: one of epsilon, sigma
            est.set_params(sigma=None)
    y = targets(est)
    est.fit(X, y)
    est.partial_fit(X[:40], y[:40])
    est.partial_fit(X[40:80], y[40:80])
    assert [c.kind for c in accountant.charges] == ["fit", "stream"]


def test_seeded_grid_search_is_refused_and_fresh_noise_is_charged(accountant):
    cv = KFold(3, shuffle=True, random_state=0)
    seeded = _seeded(0, accountant)
    with pytest.raises(NoiseReuseError):
        GridSearchCV(seeded, {"alpha": [1e-3]}, cv=cv, error_score="raise").fit(X, Y_CLASS)
    assert len(accountant.charges) == 1  # the first fold; the second was refused
    fresh = _seeded(None, accountant)
    GridSearchCV(fresh, {"alpha": [1e-3]}, cv=cv, error_score="raise").fit(X, Y_CLASS)
    assert len(accountant.charges) == 1 + 3 + 1


def test_a_failed_seeded_fit_frees_its_noise(accountant):
    est = _seeded(0, accountant)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.full_like(X, np.nan), Y_CLASS)  # refunded: released nothing
    est.fit(X, Y_CLASS)
    assert len(accountant.charges) == 1


def test_labels_from_y_are_refused_with_an_accountant(accountant):
    # classes_ from y is not covered by privacy_: the accountant cannot charge it.
    est = PrivateIGDClassifier(accountant=accountant)
    with pytest.raises(ValueError, match="classes=") as error:
        est.fit(Untouchable(), Untouchable())
    assert not isinstance(error.value, BudgetExceededError)
    assert accountant.charges == [] and not hasattr(est, "classes_")
    est.partial_fit(X, Y_CLASS, classes=[0, 1])  # classes given to the stream: public
    PrivateIGDClassifier(epsilon=np.inf, accountant=accountant).fit(X, Y_CLASS)  # no privacy
    assert [c.kind for c in accountant.charges] == ["stream", "fit"]


@pytest.mark.parametrize("estimator", [PrivateQFTLRegressor(),
                                       PrivateIGDClassifier(epsilon=np.inf)],
                         ids=lambda e: type(e).__name__)
def test_estimators_with_an_accountant_pass_the_estimator_checks(estimator):
    # The checks clone, pickle, refit and set_params: all must work with a ledger.
    # They also seed random_state=0, and some fit twice with it: the ledger
    # refuses the second fit (noise reuse) and nothing else. (classes=None
    # with an accountant needs epsilon=inf: the checks use many label sets.)
    n_passed, n_charges = 0, 0
    # sample weights above 1 are refused by design (tests/test_estimator_checks.py)
    from test_estimator_checks import _expected_failed_checks

    for est, check in estimator_checks_generator(
            estimator, mark="skip", expected_failed_checks=_expected_failed_checks(estimator)):
        with PrivacyAccountant(np.inf, 1e-3) as acc:
            try:
                check(clone(est).set_params(accountant=acc))
                n_passed += 1
            except SkipTest:
                pass
            except AssertionError as error:  # a check's failure, caused by the ledger?
                assert isinstance(error.__cause__ or error.__context__, NoiseReuseError)
            except NoiseReuseError:
                pass
            n_charges += len(acc.charges)
    assert n_passed > 30 and n_charges > 20  # every fit of the checks was recorded


# -- the public reservation API (for meta-estimators) ---------------------------------------


def test_reservation_spends_on_exit_and_refunds_only_explicitly():
    with PrivacyAccountant(1.0, 1e-6) as acc:
        # Releases made before an exception may have escaped: still spent.
        with pytest.raises(RuntimeError):
            with acc.reserve((0.5, 1e-7), label="selection"):
                raise RuntimeError("the selection failed after releasing")
        (charge,) = acc.charges
        assert (charge.status, charge.cost.epsilon) == ("spent", 0.5)
        with acc.reserve((0.25, 0.0), label="nothing released") as reservation:
            reservation.refund()  # only an explicit refund gives the budget back
        with pytest.raises(KeyError):
            with acc.reserve((0.25, 0.0), label="failed early") as reservation:
                reservation.refund()
                raise KeyError("before any release")
        assert len(acc.charges) == 1
        with acc.reserve((0.25, 1e-7), label="selection") as reservation:
            assert reservation.status == "reserved"
            reservation.settle((0.2, 1e-7))
        assert (acc.charges[-1].status, acc.charges[-1].cost.epsilon) == ("spent", 0.2)
        with pytest.raises(PrivacyAccountingError):
            with acc.reserve((0.1, 0.0), label="wrong plan") as reservation:
                reservation.settle((0.2, 0.0))
        assert acc.charges[-1].cost.epsilon == 0.2


def test_reservations_with_the_same_noise_fingerprint_are_refused():
    with PrivacyAccountant(1.0, 1e-6) as acc:
        noise = noise_fingerprint(np.random.default_rng(0))
        assert noise == noise_fingerprint(np.random.default_rng(0))
        assert noise != noise_fingerprint(np.random.default_rng(1))
        first = acc.reserve((0.1, 0.0), "a", noise=noise)
        with pytest.raises(NoiseReuseError):
            acc.reserve((0.1, 0.0), "b", noise=noise)
        assert len(acc.charges) == 1
        first.refund()  # a refunded charge released nothing: its noise is free again
        acc.reserve((0.1, 0.0), "c", noise=noise)
        acc.reserve((0.1, 0.0), "fresh entropy", noise=None)
        acc.reserve((0.1, 0.0), "fresh entropy", noise=None)
        assert len(acc.charges) == 3


def test_settle_never_lowers_a_charge():
    # A stream's GDP spend, then a settlement of the other group: the ledger
    # records a cost covering both, never the smaller one.
    with PrivacyAccountant(1.0, 1e-6) as acc:
        stream = acc.reserve((1.0, 1e-6, 0.2), label="s", kind="stream")
        stream.settle((1.0, 1e-6, 0.2))
        with pytest.raises(PrivacyAccountingError):
            stream.settle((0.01, 0.0))
        (charge,) = acc.charges
        assert charge.cost.epsilon >= 1.0 and charge.cost.delta >= 1e-6
        assert acc.spent().epsilon >= 1.0


def test_rounding_slack_never_compounds():
    # Each cost is within the 1e-12 slack of the last: covering it "up to
    # rounding" at every call would creep past the budget without a check.
    with PrivacyAccountant(1.0, 0.0) as acc:
        stream = acc.reserve((1.0, 0.0), label="s", kind="stream")
        cost = 1.0
        with pytest.raises(BudgetExceededError):
            for _ in range(20_000):
                cost *= 1 + 0.9e-12
                stream.increase((cost, 0.0))
                stream.settle((cost, 0.0))
        assert acc.spent().epsilon <= 1.0 + 1e-12
    with PrivacyAccountant(1.0, 0.0) as acc:
        est = ParameterFreeLocalDPRegressor(accountant=acc)
        epsilon = 1.0
        with pytest.raises(BudgetExceededError):
            for _ in range(3_000):
                epsilon *= 1 + 0.9e-12
                est.partial_fit(X[:1], Y[:1], sample_epsilon=[epsilon])
        assert acc.spent().epsilon <= 1.0 + 1e-12
        assert est.privacy_.epsilon <= 1.0 + 1e-12


def test_readers_get_a_snapshot_that_other_threads_cannot_change():
    # spent(), charges, remaining() and can_afford() iterate what _ledger()
    # returns after the lock is released; a charge made meanwhile must not
    # change it ("dictionary changed size during iteration").
    with PrivacyAccountant(np.inf, 1e-3) as acc:
        seen = acc._ledger()
        acc.reserve((0.1, 0.0), "meanwhile, in another thread")
        assert seen.charges == {} and len(acc._ledger().charges) == 1
        errors = []

        def read():
            for _ in range(300):
                try:
                    acc.spent(), acc.charges, acc.can_afford((0.1, 0.0))
                except RuntimeError as error:
                    errors.append(error)

        reader = threading.Thread(target=read)
        reader.start()
        for _ in range(300):
            with acc.reserve((0.0, 0.0), "w"):
                pass
        reader.join()
        assert errors == []


# -- the documentation runs ---------------------------------------------------------------


def test_accountant_page_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102


def test_the_spend_prints_only_the_groups_that_hold_charges():
    from sklearn_dpol.privacy._accountant import PrivacySpend

    gdp = PrivacySpend(1.4, 1e-6, 0.33, 0.0, 0.0, 3)
    assert str(gdp) == "(1.4, 1e-06)-DP over 3 charge(s) [GDP mu=0.33]"
    both = PrivacySpend(2.9, 1e-5, 0.24, 2.0, 1e-6, 2)
    assert str(both).endswith("[GDP mu=0.24; basic (2, 1e-06)]")
    assert str(PrivacySpend(0.0, 0.0, 0.0, 0.0, 0.0, 0)) == "(0, 0)-DP over 0 charge(s)"


def test_a_refusal_bound_by_delta_says_so():
    """Review 128: objective perturbation charges compose by basic composition, so their
    deltas add up; past the budget's delta the refusal told the user to lower epsilon."""
    from sklearn_dpol import PrivateIGDClassifier
    from sklearn_dpol.exceptions import BudgetExceededError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    acc = PrivacyAccountant(epsilon=1000.0, delta=1e-5)
    for _ in range(10):
        PrivateIGDClassifier(epsilon=0.1, delta=1e-6, data_norm=1.0, classes=[0, 1],
                             accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError, match="Delta is the binding limit") as info:
        PrivateIGDClassifier(epsilon=0.1, delta=1e-6, data_norm=1.0, classes=[0, 1],
                             accountant=acc).fit(X, y)
    assert "Lower this call's epsilon" not in str(info.value)
    small = PrivacyAccountant(epsilon=0.5, delta=1e-5)
    with pytest.raises(BudgetExceededError, match="Lower this call's epsilon"):
        PrivateIGDClassifier(epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1],
                             accountant=small).fit(X, y)
