"""Choosing hyperparameters on private data costs privacy: numbers, and private selection.

Three parts, each printed as a Markdown table (``doc/model_selection.md``):

1. What ``GridSearchCV(cv=5, refit=True)`` over ``k`` settings spends through
   its fits alone (each record is in the training set of ``4k + 1`` fits;
   exact Gaussian DP composition), against private selection of the best of
   ``E[K] = k`` candidates at the same per-fit budget.
2. The leak, measured: release the best of ``k`` Gaussian releases (each
   ``(1, 1e-6)``-DP), chosen by its exact error on the private data. Its exact
   epsilon (numerical integration) and a 95% lower bound from
   :func:`sklearn_dpol.audit.audit_samples` both exceed the claim of one. The
   same audit of private selection over the same candidates stays below its
   guarantee (a sanity check, not a proof).
3. Utility at equal total ``(epsilon, 1e-6)``: ``PrivateHyperparameterSearch``
   against ``GridSearchCV`` with the budget split over its fits (which still
   leaks through its exact CV scores) and against the default ``alpha``.

Run: ``python examples/private_hyperparameter_selection.py`` (about a minute;
``--smoke`` for a seconds-long check).
"""

import math
import time

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from _repro import make_parser, pick, print_table
from sklearn_dpol import PrivateIGDClassifier
from sklearn_dpol.audit import audit_samples
from sklearn_dpol.model_selection import PrivateHyperparameterSearch
from sklearn_dpol.privacy import compose_gdp, gaussian_epsilon, gaussian_mu
from sklearn_dpol._core.selection import draw_candidate_count, score_sigma
from sklearn_dpol.privacy import (
    selection_candidate_rho,
    selection_epsilon,
    truncated_negative_binomial_gamma,
)

DELTA = 1e-6
ALPHAS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]


# ------------------------------------------------------------ 1. accounting
def grid_search_cost_table(per_fit_epsilons, grid_sizes):
    rows = []
    for epsilon in per_fit_epsilons:
        mu = gaussian_mu(epsilon, DELTA)
        for k in grid_sizes:
            fits = compose_gdp([mu] * (4 * k + 1))
            selection, _ = selection_epsilon(DELTA, [mu**2 / 2], n_candidates=k,
                                             shape=1.0)
            rows.append((epsilon, k, 5 * k + 1, 4 * k + 1, gaussian_epsilon(fits, DELTA),
                         selection))
    print_table(
        "GridSearchCV(cv=5, refit=True) over k settings: total epsilon at delta=1e-6 of its "
        "fits alone (exact GDP composition), against private selection with E[K]=k",
        ["per-fit epsilon", "k", "fits", "fits per record", "GridSearchCV fits: total epsilon",
         "private selection (E[K]=k, eta=1): total epsilon"], rows)


# ------------------------------------------------------------ 2. the leak
def _log_density_best_of(w, k, sigma):
    """Density of the noise of the release closest to the truth among k: N(0, sigma^2)
    draws, the one of smallest absolute value kept."""
    z = np.abs(w) / sigma
    return (math.log(k) - 0.5 * z**2 - 0.5 * math.log(2 * math.pi) - math.log(sigma)
            + (k - 1) * (math.log(2.0) + log_ndtr(-z)))


def exact_epsilon_best_of(k, sigma, delta=DELTA):
    """Exact epsilon of 'release the closest of k' for a query of sensitivity 1."""
    y = np.linspace(-25 * sigma, 25 * sigma + 1, 400_001)
    log_p, log_q = _log_density_best_of(y, k, sigma), _log_density_best_of(y - 1, k, sigma)

    def excess(epsilon):
        # delta(eps) = int (p - e^eps q)_+ ; symmetric, so one direction suffices.
        gap = np.exp(log_p) * -np.expm1(np.minimum(epsilon + log_q - log_p, 0.0))
        return math.log(max(np.trapezoid(gap, y), 1e-300)) - math.log(delta)

    return brentq(excess, 0.0, 60.0, xtol=1e-6)


def leak_table(ks, n_runs, rng):
    mu = gaussian_mu(1.0, DELTA)
    sigma = 1.0 / mu
    rows = []
    for k in ks:
        draws = rng.normal(0.0, sigma, size=(2, n_runs, k))
        # Keep the release closest to the private truth (0 on D0, 1 on D1).
        best = np.take_along_axis(draws, np.abs(draws).argmin(axis=2)[..., None], 2)[..., 0]
        audit = audit_samples(best[0][:, None], 1.0 + best[1][:, None], DELTA,
                              statistic=lambda o: o[:, 0], random_state=int(k))
        rows.append((k, 1.0, exact_epsilon_best_of(k, sigma), audit.epsilon_lower_bound))
    print_table(
        f"Releasing the best of k private releases chosen on the private data (each "
        f"(1, 1e-6)-DP, sigma={sigma:.3f}, sensitivity 1; {n_runs} runs per data set for the "
        "audit, 95% confidence)",
        ["k", "claimed epsilon of each release", "exact epsilon of the best",
         "audited lower bound"], rows)


def _selected_release(q, n_runs, mean, sigma, n_validation, rng, chunk=20_000):
    """Private selection on the toy: candidates release q + N(0, sigma^2) (the record that
    differs is in the training part); the score is the closeness to a validation target
    t = 0.5, a mean of m values in [0, 1], plus N(0, (1/(m mu))^2); K ~ geometric, secret."""
    gamma = truncated_negative_binomial_gamma(mean, 1.0)
    counts = np.array([draw_candidate_count(gamma, 1.0, rng) for _ in range(n_runs)])
    out = np.empty(n_runs)
    for start in range(0, n_runs, chunk):
        k = counts[start:start + chunk]
        releases = q + rng.normal(0.0, sigma, size=(k.size, k.max()))
        value = np.clip(1.0 - np.abs(releases - 0.5), 0.0, 1.0)
        scores = value + rng.normal(0.0, score_sigma(n_validation, 1.0 / sigma), value.shape)
        scores[np.arange(k.max())[None, :] >= k[:, None]] = -np.inf
        out[start:start + chunk] = releases[np.arange(k.size), scores.argmax(axis=1)]
    return out


def selection_audit_table(means, n_runs, rng):
    mu = gaussian_mu(1.0, DELTA)
    rows = []
    for mean in means:
        outputs = [_selected_release(q, n_runs, mean, 1.0 / mu, 1_000, rng) for q in (0, 1)]
        audit = audit_samples(outputs[0][:, None], outputs[1][:, None], DELTA,
                              random_state=int(mean))
        guarantee, _ = selection_epsilon(DELTA, [mu**2 / 2], n_candidates=mean, shape=1.0)
        rows.append((mean, 1.0, guarantee, audit.epsilon_lower_bound))
    print_table(
        f"The same candidates under private selection (noisy score on a disjoint validation "
        f"part of 1,000 records, K geometric and secret; {n_runs} runs per data set, fitted "
        "statistic, 95% confidence)",
        ["E[K]", "claimed epsilon of each candidate", "guarantee of the selection",
         "audited lower bound"], rows)


# ------------------------------------------------------------ 3. utility
def candidate_epsilon(total_epsilon, n_candidates):
    """Per-candidate epsilon (at delta=1e-6) for a selection within the total."""
    rho = selection_candidate_rho(total_epsilon, DELTA, n_candidates=n_candidates, shape=1.0)
    epsilon = gaussian_epsilon(math.sqrt(2 * rho), DELTA)
    while gaussian_mu(epsilon, DELTA) > math.sqrt(2 * rho):
        epsilon *= 1 - 1e-9
    return epsilon


def run_methods(total_epsilon, data, seed):
    X, y, X_test, y_test = data
    base = dict(classes=[0, 1], delta=DELTA, random_state=seed)
    k = len(ALPHAS)
    eps_candidate = candidate_epsilon(total_epsilon, k)
    search = PrivateHyperparameterSearch(
        PrivateIGDClassifier(**base), {"alpha": ALPHAS, "epsilon": [eps_candidate]},
        n_candidates=k, shape=1.0, delta=DELTA, random_state=seed)
    planned = search.privacy_plan().epsilon
    assert planned <= total_epsilon, planned
    search.fit(X, y)
    eps_fit = gaussian_epsilon(gaussian_mu(total_epsilon, DELTA) / math.sqrt(4 * k + 1), DELTA)
    grid = GridSearchCV(PrivateIGDClassifier(epsilon=eps_fit, **base), {"alpha": ALPHAS},
                        cv=5).fit(X, y)
    default = PrivateIGDClassifier(epsilon=total_epsilon, **base).fit(X, y)
    hindsight = max(PrivateIGDClassifier(epsilon=total_epsilon, alpha=a, **base)
                    .fit(X, y).score(X_test, y_test) for a in ALPHAS)
    return {
        "selection": search.score(X_test, y_test), "grid": grid.score(X_test, y_test),
        "default": default.score(X_test, y_test), "hindsight": hindsight,
        "alpha_sel": search.best_params_["alpha"], "alpha_grid": grid.best_params_["alpha"],
        "eps_candidate": eps_candidate, "eps_fit": eps_fit, "planned": planned,
        "n_candidates": search.n_candidates_,
    }


def utility_table(totals, n_seeds, n_train):
    X, y = make_classification(n_samples=n_train + 10_000, n_features=20, n_informative=8,
                               random_state=0)
    X = X / 4.0  # a public constant, not a statistic of the data
    data = (X[:n_train], y[:n_train], X[n_train:], y[n_train:])
    rows = []
    for total in totals:
        runs = [run_methods(total, data, seed) for seed in range(n_seeds)]

        def cell(key):
            values = np.array([r[key] for r in runs])
            return f"{values.mean():.3f} ± {values.std():.3f}"

        rows.append((
            total, f"{runs[0]['planned']:.4g}", f"{runs[0]['eps_candidate']:.3g}",
            cell("selection"), f"{runs[0]['eps_fit']:.3g}", cell("grid"), cell("default"),
            cell("hindsight"),
            ", ".join(f"{r['alpha_sel']:g}" for r in runs),
            ", ".join(str(r["n_candidates"]) for r in runs),
        ))
    print_table(
        f"Test accuracy at equal total (epsilon, 1e-6), make_classification ({n_train} "
        f"training rows, 10,000 test rows, 20 features), alpha grid of {len(ALPHAS)} "
        f"values, {n_seeds} seeds (mean ± sd)",
        ["total epsilon", "selection: planned total", "per-candidate epsilon",
         "PrivateHyperparameterSearch (E[K]=7)", "GridSearchCV per-fit epsilon",
         "GridSearchCV cv=5 (fits only; scores leak)", "default alpha='auto'",
         "best alpha in hindsight (not private)", "alpha chosen (per seed)",
         "K (private, per seed)"], rows)


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--only-audit", action="store_true",
                        help="stop after the accounting and audit tables")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    grid_search_cost_table([0.5, 1.0, 2.0], [3, 5, 10, 20])
    leak_table(pick(args, [1, 2, 5, 10, 100], [1, 2, 5, 10, 100], [1, 10]),
               pick(args, 200_000, 1_000_000, 4_000), np.random.default_rng(0))
    selection_audit_table(pick(args, [2, 10, 100], [2, 10, 100], [10]),
                          pick(args, 200_000, 1_000_000, 4_000), np.random.default_rng(1))
    if args.only_audit:
        return
    for n_train in pick(args, [25_000, 4_000], [25_000, 4_000], [3_000]):
        utility_table(pick(args, [0.3, 1.0, 3.0], [0.1, 0.3, 1.0, 3.0], [1.0]),
                      args.seeds or pick(args, 5, 10, 1), n_train)
    print(f"\n(total time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
