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
from collections import Counter
from pathlib import Path

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, cross_validate
from sklearn.utils.estimator_checks import check_estimator

from sklearn_dpol import (
    MutualInformationPrivateOGDRegressor,
    ParameterFreeLocalDPRegressor,
    PrivateFrankWolfeLasso,
    PrivateIGDClassifier,
    PrivateMirrorDescentRegressor,
    PrivateQFTLRegressor,
)
from sklearn_dpol._core import objective_perturbation as op
from sklearn_dpol.exceptions import BudgetExceededError, PrivacyAccountingError
from sklearn_dpol.privacy import (
    PrivacyAccountant,
    PrivacyCost,
    compose_gdp,
    gaussian_epsilon,
    gaussian_mu,
)
from sklearn_dpol.privacy._accountant import compose

DOC = Path(__file__).resolve().parents[1] / "doc" / "accountant.md"
RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(120, 3)) / 2
Y = np.clip(X @ [0.5, -0.3, 0.2] + 0.05 * RNG.standard_normal(120), -1, 1)
Y_CLASS = (Y > 0).astype(int)

# One estimator of each class, small enough for cv fits in a few ms, and the
# grid each is searched over (MI-OGD has no epsilon: its noise is sigma).
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
    (MutualInformationPrivateOGDRegressor(), {"sigma": [2.0, 4.0]}),
    (MutualInformationPrivateOGDRegressor(feedback="bandit", loss="squared"),
     {"sigma": [20.0, 40.0]}),
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
    """A charge or guarantee as comparable numbers (rounded far below any real gap)."""
    return tuple(float(f"{v:.12g}") if math.isfinite(v) else str(v)
                 for v in (cost.epsilon, cost.delta, cost.mu))


def reference_guarantee(estimator, **params):
    """``privacy_`` of a direct fit with ``params``, without an accountant."""
    model = clone(estimator).set_params(accountant=None, **params)
    return model.fit(X, targets(estimator)).privacy_


@pytest.fixture
def accountant():
    with PrivacyAccountant(epsilon=np.inf, delta=1e-3) as acc:
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
    path = tmp_path / "budget.jsonl"
    first = PrivacyAccountant(1.0, 1e-6, path=path)
    first.reserve((0.75, 0.0), "session 1").settle((0.75, 0.0))
    again = PrivacyAccountant(1.0, 1e-6, path=path)  # a later session, same data set
    assert again.spent().epsilon == 0.75
    with pytest.raises(ValueError, match="holds a budget"):
        PrivacyAccountant(2.0, 1e-6, path=path)
    with open(path, "a") as ledger:  # a torn write: never guess what was spent
        ledger.write('{"op": "open", "id"')
    with pytest.raises(ValueError, match="corrupt"):
        again.reserve((0.1, 0.0), "after the tear")
    os.replace(tmp_path / "budget.jsonl", tmp_path / "old.jsonl")
    PrivacyAccountant(1.0, 1e-6, path=path)  # a fresh ledger under the same name
    with pytest.raises(ValueError, match="replaced"):
        first.reserve((0.1, 0.0), "into the new file")


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


def test_concurrent_processes_never_overspend(tmp_path):
    path = tmp_path / "shared.jsonl"
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


def test_changing_the_accountant_mid_stream_charges_the_new_one():
    with PrivacyAccountant(np.inf, 1e-3) as first, PrivacyAccountant(np.inf, 1e-3) as second:
        est = PrivateIGDClassifier(classes=[0, 1], accountant=first)
        est.partial_fit(X[:50], Y_CLASS[:50])
        est.set_params(accountant=second)
        est.partial_fit(X[50:], Y_CLASS[50:])
        est.partial_fit(X[:5], Y_CLASS[:5])
        assert len(first.charges) == 1 and len(second.charges) == 1


def test_pickled_stream_keeps_charging_its_ledger(accountant):
    est = PrivateQFTLRegressor(accountant=accountant).partial_fit(X[:50], Y[:50])
    resumed = pickle.loads(pickle.dumps(est))  # a checkpoint of the stream
    resumed.partial_fit(X[50:], Y[50:])
    (charge,) = accountant.charges
    assert key(charge.cost) == key(resumed.privacy_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.parametrize("estimator", [PrivateQFTLRegressor(), PrivateIGDClassifier()],
                         ids=lambda e: type(e).__name__)
def test_estimators_with_an_accountant_pass_the_estimator_checks(estimator, accountant):
    # The checks clone, pickle, refit and set_params: all must work with a ledger.
    results = check_estimator(clone(estimator).set_params(accountant=accountant),
                              on_fail=None)
    assert [r["check_name"] for r in results if r["status"] == "failed"] == []
    assert len(accountant.charges) > 20  # every fit of the checks was recorded


# -- the public reservation API (for meta-estimators) ---------------------------------------


def test_reservation_refunds_on_exception_and_spends_otherwise():
    with PrivacyAccountant(1.0, 1e-6) as acc:
        with pytest.raises(RuntimeError):
            with acc.reserve((0.5, 1e-7), label="selection"):
                raise RuntimeError("the selection failed")
        assert acc.charges == []
        with acc.reserve((0.5, 1e-7), label="selection") as reservation:
            assert reservation.status == "reserved"
            reservation.settle((0.4, 1e-7))
        (charge,) = acc.charges
        assert (charge.label, charge.status, charge.cost.epsilon) == ("selection", "spent", 0.4)
        with pytest.raises(PrivacyAccountingError):
            with acc.reserve((0.1, 0.0), label="wrong plan") as reservation:
                reservation.settle((0.2, 0.0))
        assert acc.charges[-1].cost.epsilon == 0.2


# -- the documentation runs ---------------------------------------------------------------


def test_accountant_page_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102
