"""Reproduce the two motivating scenarios of seed 001 (van der Hoeven 2019, section 4).

The seed has no experiments: section 4 argues from its regret bounds that the
parameter-free learners gain in two scenarios. This script measures both with
``ParameterFreeLocalDPRegressor`` (its numba kernels, see "How" below) on
synthetic streams, online linear regression with the absolute loss, where
every user's clipped subgradient is reported through the library's local
Laplace randomiser (scale ``2 / tau_tj`` on coordinate ``j``).

Scenario 1, "only a few users ask for privacy" (figure
``seed001_scenario_few_private_users.png``). ``d = 5`` features uniform on
``[-1, 1]`` plus an intercept, comparator ``u = (1, -2, 0.5, 0, 1.5; 0.5)``,
``y = <u, (x, 1)> + 0.1 N(0, 1)``. UC (user-chosen): ``ceil(ln T)`` users at
random positions choose ``sample_epsilon = 1`` (uniform split, Laplace scale
12 per coordinate), the rest ``np.inf``; AP (all private): everyone at
``epsilon = 1``; none: everyone at ``inf``. Baselines fed the UC reports:
projected OGD on the L2 ball of radius ``D = f ||u||_2`` and diagonal AdaGrad
on the box ``[-D, D]^6``, ``D = f ||u||_inf``, with ``f = 0.01, 1, 100`` (the
factor-1 "oracle" radius is a reference, not a fair competitor). The seed's
claim: with the few private users the regret bound loses only an additive
``||u|| (d / eps) ln(||u|| T + T)`` instead of the factor ``d / eps`` of
everybody private, and no radius has to be guessed. Same setting as
``benchmarks/bench_parameter_free.py``, extended to a regret-against-T curve.

Scenario 2, "sparse gradients, per-coordinate budgets" (figure
``seed001_scenario_sparse_gradients.png``). ``d = 20`` features, no
intercept; each feature of a user is nonzero with probability 0.1 (then
uniform on ``[-1, 1]``), so the subgradients ``sign(r) x_t`` are sparse; the
comparator is sparse, ``u_2..u_5 = (1, -1.5, 0.5, 2)``, the rest 0. Every
user has ``epsilon = 1``. "Per-coordinate": the users protect only the 4
sensitive attributes 0..3 (``feature_weights`` 1/4 on them, 0 elsewhere: the
seed's ``tau_j = inf`` for the others, Laplace scale 8 on the sensitive ones);
"uniform": the standard application, the budget split over all 20
coordinates (Laplace scale 40 on each). Learners: Algorithm 3 (coordinate),
Algorithm 2 (reduction) and AdaGrad on ``[-D, D]^20``, ``D = f ||u||_inf``.
The seed's claim: Algorithm 3's bound ``sum_j |u_j| sqrt(sum_t g~_tj^2) ln``
beats AdaGrad's ``D sum_j sqrt(sum_t g~_tj^2)`` when ``D >> |u_j|`` or ``u``
is sparse, and sparse noise lets it exploit sparse gradients, which the
uniform split (noise on every coordinate) does not.

Privacy. UC and AP users at ``epsilon = 1`` are ``1``-LDP (users at ``inf``
chose none). With weight 0 on a coordinate, that coordinate
``sign(residual) x_j`` is released exactly: the sensitive attributes are
1-LDP, but the row has no replace-one guarantee and the estimator's
``privacy_.epsilon`` is ``inf`` (doc/privacy.md, section 9.2); the table says
so.

Metric: average regret ``(1/T) sum_t l_t(w_t) - l_t(u)`` at the iterate
``w_t`` played in round ``t``, mean +- std over seeds; every privacy setting
starts from the same exact-sampler state (the one
``fit(random_state=seed)`` draws; the noise is exact Laplace on a grid,
doc/privacy.md section 14).

How. The estimator publishes only the averaged (or next) iterate, so the
stream is run by a numba loop over the library's own kernels in the order of
``_pf_kernels.run_*_protocol`` (learner predict, ``user_report``, learner
update) that also records the loss of each played iterate. The script checks,
before measuring, that this loop leaves the learner exactly (bit for bit) in
the state of ``ParameterFreeLocalDPRegressor(...).fit(X, y, sample_epsilon)``
for both scenarios and both methods, and that its played iterates equal those
``partial_fit(average=False)`` publishes one row at a time.

With ``--data DIR``: scenario 1's privacy settings on the California housing
stream (``cal_housing.data.gz``, 20,640 rows in a fixed random order, scaled
to ``[-1, 1]`` by public ranges: California's extent, the census top-codes
and a 100,000 cap on block-group counts, never statistics of the data); the
metric there is the average online loss, as the best comparator is unknown.

Run (times measured on 2 cores shared with other jobs, load average 6-8; CPU time in
brackets)::

    python examples/reproduce_seed001_scenarios.py           # T <= 1e5, 5 seeds: ~50 s (20 s)
    python examples/reproduce_seed001_scenarios.py --full    # T <= 1e6, 5 seeds: ~4 min (90 s)
    python examples/reproduce_seed001_scenarios.py --smoke   # T <= 1e3, 1 seed: ~10 s
    python examples/reproduce_seed001_scenarios.py --data ../shared/data   # adds ~5 s

The first run compiles the numba loops (about 10 s more); later runs load them
from the cache.
"""

import gzip
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run the working tree whether or not it is installed

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from _repro import Stopwatch, make_parser, pick, print_table, save_figure  # noqa: E402
from numba import njit  # noqa: E402

from sklearn_dpol import ParameterFreeLocalDPRegressor  # noqa: E402
from sklearn_dpol._base import make_generator  # noqa: E402
from sklearn_dpol._core import _pf_kernels as pfk  # noqa: E402
from sklearn_dpol._core._exact_kernels import WORKSPACE_DIGITS  # noqa: E402
from sklearn_dpol._core.noise import sampler_state  # noqa: E402
from sklearn_dpol._core import parameter_free as pf  # noqa: E402
from sklearn_dpol._core.local_randomizers import normalise_feature_weights  # noqa: E402

EPSILON = 1.0
ABSOLUTE = pfk.ABSOLUTE  # the absolute loss's code (sklearn_dpol._core.losses)
FACTORS = (0.01, 1.0, 100.0)
METHODS = (pf.COORDINATE, pf.REDUCTION)

# Scenario 1 (the benchmark's setting).
U1 = np.array([1.0, -2.0, 0.5, 0.0, 1.5, 0.5])  # last: intercept
# Scenario 2: sparse features, sparse comparator, 4 sensitive attributes.
D2, P_ACTIVE = 20, 0.1
U2 = np.zeros(D2)
U2[2:6] = (1.0, -1.5, 0.5, 2.0)
SENSITIVE = np.arange(4)
Y_NOISE = 0.1


# ---------------------------------------------------------------------------
# Streams driven by the library's kernels, recording the played iterates' loss
# ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _abs_loss(w, x, y, intercept):
    r = -y
    for j in range(x.shape[0]):
        r += w[j] * x[j]
    if intercept:
        r += w[w.shape[0] - 1]
    return abs(r)


@njit(cache=True)
def _pf_stream(coordinate, X, y, intercept, u, state, eps, weights, L, S, scalars, z,
               w_sum, C, b, prior, log_z, checkpoints, out):
    """The library's protocol loop; ``out[k]`` = regret after ``checkpoints[k]`` rounds.

    ``state`` is the users' exact-sampler state, advanced in place."""
    d = w_sum.shape[0]
    w = np.empty(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    regret = 0.0
    k = 0
    for i in range(X.shape[0]):
        if coordinate:
            pfk.learner_coordinate_predict(L, S, C, b, prior, log_z, w)
        else:
            pfk.learner_reduction_predict(scalars, z, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
        regret += _abs_loss(w, X[i], y[i], intercept) - _abs_loss(u, X[i], y[i], intercept)
        pfk.user_report(w, X[i], y[i], intercept, ABSOLUTE, 1.0, eps[i], weights, scales, ws,
                        state, report)
        if coordinate:
            pfk.learner_coordinate_update(L, S, report)
        else:
            pfk.learner_reduction_update(scalars, z, report)
        if k < checkpoints.shape[0] and i + 1 == checkpoints[k]:
            out[k] = regret
            k += 1


@njit(cache=True)
def _baseline_stream(adagrad, X, y, intercept, u, state, eps, weights, radius, G,
                     checkpoints, out):
    """Projected OGD (L2 ball, eta_t = 2 D / (G sqrt t)) or diagonal AdaGrad (box,
    eta = sqrt(2) D), fed reports from the library's ``user_report``."""
    d = u.shape[0]
    w = np.zeros(d)
    sq = np.zeros(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    regret = 0.0
    k = 0
    for i in range(X.shape[0]):
        regret += _abs_loss(w, X[i], y[i], intercept) - _abs_loss(u, X[i], y[i], intercept)
        pfk.user_report(w, X[i], y[i], intercept, ABSOLUTE, 1.0, eps[i], weights, scales, ws,
                        state, report)
        if adagrad:
            for j in range(d):
                sq[j] += report[j] * report[j]
                if sq[j] > 0.0:
                    step = math.sqrt(2.0) * radius * report[j] / math.sqrt(sq[j])
                    w[j] = min(max(w[j] - step, -radius), radius)
        else:
            eta = 2.0 * radius / (G * math.sqrt(i + 1.0))
            norm_sq = 0.0
            for j in range(d):
                w[j] -= eta * report[j]
                norm_sq += w[j] * w[j]
            if norm_sq > radius * radius:
                shrink = radius / math.sqrt(norm_sq)
                for j in range(d):
                    w[j] *= shrink
        if k < checkpoints.shape[0] and i + 1 == checkpoints[k]:
            out[k] = regret
            k += 1


def estimator(method, intercept, feature_weights=None, **kw):
    """The estimator whose defaults the loops reproduce (conjugate prior, b = 1, the seed's
    Laplace randomiser)."""
    return ParameterFreeLocalDPRegressor(method=method, prior="conjugate", randomizer="laplace",
                                         fit_intercept=intercept,
                                         feature_weights=feature_weights, **kw)


def fresh_learner(method, n_dims, intercept):
    """The learner ``fit`` starts from: the estimator's default G, conjugate prior, b = 1."""
    G = estimator(method, intercept)._gradient_bound(n_dims)
    return pf.make_learner(method, n_dims, G=G, prior=pf.CONJUGATE, b=1.0)


def advance(learner, X, y, u, state, eps, weights, checkpoints, intercept):
    """Run the rows through ``learner`` (in place, the sampler ``state`` too);
    cumulative regret at the checkpoints."""
    coordinate = isinstance(learner, pf.CoordinateLearner)
    dummy = np.zeros(learner.n_dims)
    out = np.full(len(checkpoints), np.nan)
    _pf_stream(coordinate, X, y, intercept, u, state, eps, weights,
               learner.L if coordinate else dummy, learner.S if coordinate else dummy,
               dummy if coordinate else learner.scalars, dummy if coordinate else learner.z,
               learner.w_sum, *learner._config(), checkpoints, out)
    learner.t += X.shape[0]
    return out


def run_pf(method, X, y, u, state, eps, weights, checkpoints, intercept):
    """Cumulative regret at the checkpoints, and the learner (for the checks).

    The users' noise starts from (a copy of) the sampler ``state``."""
    learner = fresh_learner(method, u.shape[0], intercept)
    return advance(learner, X, y, u, state.copy(), eps, weights, checkpoints,
                   intercept), learner


def run_baseline(name, radius, X, y, u, state, eps, weights, checkpoints, intercept):
    out = np.full(len(checkpoints), np.nan)
    G = math.sqrt(u.shape[0])  # L2 bound of a clipped gradient, as the reduction's default
    _baseline_stream(name == "AdaGrad", X, y, intercept, u, state.copy(), eps, weights,
                     radius, G, checkpoints, out)
    return out


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

def users_sampler(seed, purpose=0):
    """The users' exact-sampler state, exactly that of ``fit(random_state=seed)``
    (``purpose=1``: of a ``partial_fit`` stream)."""
    return sampler_state(make_generator(seed, purpose=purpose))


def few_private(T, rng):
    """``ceil(ln T)`` users at epsilon = 1 at random positions, the others at inf."""
    eps = np.full(T, np.inf)
    eps[rng.choice(T, size=math.ceil(math.log(T)), replace=False)] = EPSILON
    return eps


def stream_scenario1(T, seed):
    rng = np.random.default_rng([1, seed, T])
    X = rng.uniform(-1.0, 1.0, size=(T, U1.size - 1))
    y = X @ U1[:-1] + U1[-1] + Y_NOISE * rng.standard_normal(T)
    return X, y, few_private(T, rng), users_sampler(seed)


def stream_scenario2(T, seed):
    rng = np.random.default_rng([2, seed, T])
    X = rng.uniform(-1.0, 1.0, size=(T, D2)) * (rng.random((T, D2)) < P_ACTIVE)
    y = X @ U2 + Y_NOISE * rng.standard_normal(T)
    return X, y, users_sampler(seed)


def split_weights():
    """Scenario 2's budget splits: over the sensitive attributes only, or uniform."""
    sensitive = np.zeros(D2)
    sensitive[SENSITIVE] = 1.0
    return {"per-coordinate": sensitive, "uniform": None}


# ---------------------------------------------------------------------------
# Checks: the loop is the estimator
# ---------------------------------------------------------------------------

def check_loop_against_estimator(seed, T=2_000, n_played=200):
    """Bit-for-bit equality with ``fit``, and played iterates equal to ``partial_fit``'s."""
    X1, y1, eps1, state1 = stream_scenario1(T, seed)
    X2, y2, state2 = stream_scenario2(T, seed)
    eps2 = np.full(T, EPSILON)
    cases = [(X1, y1, eps1, state1, U1, True, None)]
    cases += [(X2, y2, eps2, state2, U2, False, w) for w in split_weights().values()]
    for X, y, eps, state, u, intercept, fw in cases:
        weights = normalise_feature_weights(fw, u.size)
        for method in METHODS:
            _, learner = run_pf(method, X, y, u, state, eps, weights, np.array([T]), intercept)
            est = estimator(method, intercept, fw, random_state=seed)
            fitted = est.fit(X, y, sample_epsilon=eps)._learner.state()
            for key, value in learner.state().items():
                if not np.array_equal(value, fitted[key]):
                    raise AssertionError(f"{method}: learner state {key!r} differs from fit")
    # partial_fit draws one sampler state from purpose 1 and advances it call after call.
    weights = normalise_feature_weights(None, U1.size)
    one = np.array([1])
    for method in METHODS:
        est = estimator(method, True, average=False, random_state=seed)
        learner = fresh_learner(method, U1.size, True)
        state = users_sampler(seed, purpose=1)
        for i in range(n_played):
            row = slice(i, i + 1)
            advance(learner, X1[row], y1[row], U1, state, eps1[row], weights, one, True)
            est.partial_fit(X1[row], y1[row], sample_epsilon=eps1[row])
            if not np.array_equal(np.append(est.coef_, est.intercept_), learner.predict()):
                raise AssertionError(f"{method}: played iterate {i + 2} differs from partial_fit")
    return T, n_played


# ---------------------------------------------------------------------------
# Scenario 1
# ---------------------------------------------------------------------------

def scenario1_runs(T, seed):
    """Average regret of every learner and privacy setting at horizon ``T``."""
    X, y, eps_uc, state = stream_scenario1(T, seed)
    settings = {"UC": eps_uc, "AP": np.full(T, EPSILON), "none": np.full(T, np.inf)}
    weights = normalise_feature_weights(None, U1.size)
    cp = np.array([T])
    out = {}
    for method in METHODS:
        for name, eps in settings.items():
            out[(method, name)] = run_pf(method, X, y, U1, state, eps, weights, cp, True)[0][0]
    radii = {"OGD": np.linalg.norm(U1), "AdaGrad": np.max(np.abs(U1))}
    for algo, norm in radii.items():
        for f in FACTORS:
            out[(algo, f)] = run_baseline(algo, f * norm, X, y, U1, state, eps_uc, weights,
                                          cp, True)[0]
    out["zero"] = float(np.sum(np.abs(y) - np.abs(y - X @ U1[:-1] - U1[-1])))
    return {k: v / T for k, v in out.items()}


def mean_std(values):
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3g} ± {sd:.2g}"


def scenario1(sizes, seeds, out_dir):
    res = {T: [scenario1_runs(T, s) for s in seeds] for T in sizes}

    def col(T, key):
        return [r[key] for r in res[T]]

    rows = []
    for T in sizes:
        row = [f"{T:,}", math.ceil(math.log(T))]
        for method in METHODS:
            uc, ap = col(T, (method, "UC")), col(T, (method, "AP"))
            ratio = statistics.fmean(ap) / statistics.fmean(uc)
            row += [mean_std(uc), mean_std(ap), f"{ratio:.3g}"]
        row += [mean_std(col(T, (pf.COORDINATE, "none"))), mean_std(col(T, "zero"))]
        rows.append(row)
    print_table("Scenario 1, table 1: average regret of ParameterFreeLocalDPRegressor, "
                f"mean ± std over {len(seeds)} seeds. UC = ceil(ln T) users at epsilon=1, the "
                "rest inf; AP = all at epsilon=1; AP/UC = ratio of the means.",
                ["T", "# private (UC)", "coordinate UC", "coordinate AP", "AP/UC",
                 "reduction UC", "reduction AP", "AP/UC", "coordinate, none private",
                 "w = 0 (reference)"], rows)

    rows = []
    for T in sizes:
        row = [f"{T:,}"] + [mean_std(col(T, (m, "UC"))) for m in METHODS]
        row += [mean_std(col(T, (a, f))) for a in ("OGD", "AdaGrad") for f in FACTORS]
        worst_pf = max(statistics.fmean(col(T, (m, "UC"))) for m in METHODS)
        mistuned = [statistics.fmean(col(T, (a, f))) for a in ("OGD", "AdaGrad")
                    for f in (0.01, 100.0)]
        beaten = sum(worst_pf < v for v in mistuned)
        row.append(f"{beaten}/4")
        rows.append(row)
    print_table("Scenario 1, table 2: average regret on the UC reports; baselines with radius "
                "D = f x ||u|| (f = 1 is the oracle, a reference only). Last column: "
                "mis-tuned baselines (f = 0.01, 100) beaten by both PF methods.",
                ["T", "PF coordinate", "PF reduction", "OGD D/100", "OGD D (oracle)",
                 "OGD 100D", "AdaGrad D/100", "AdaGrad D (oracle)", "AdaGrad 100D",
                 "mis-tuned beaten"], rows)

    fig, ax = plt.subplots(figsize=(7.5, 5))
    curves = [((pf.COORDINATE, "UC"), "PF coordinate (Alg. 3), few private", "C0", "-o"),
              ((pf.REDUCTION, "UC"), "PF reduction (Alg. 2), few private", "C1", "-s"),
              ((pf.COORDINATE, "AP"), "PF coordinate, all private", "C0", ":o"),
              ((pf.REDUCTION, "AP"), "PF reduction, all private", "C1", ":s"),
              ((pf.COORDINATE, "none"), "PF coordinate, nobody private", "grey", "--"),
              (("OGD", 100.0), "OGD, radius 100x", "C3", "-^"),
              (("AdaGrad", 100.0), "AdaGrad, radius 100x", "C4", "-v"),
              (("OGD", 0.01), "OGD, radius /100", "C3", "-.^"),
              (("OGD", 1.0), "OGD, oracle radius", "C3", "--")]
    for key, label, color, style in curves:
        means = [statistics.fmean(col(T, key)) for T in sizes]
        sds = [statistics.stdev(col(T, key)) if len(seeds) > 1 else 0.0 for T in sizes]
        ax.errorbar(sizes, means, yerr=sds, fmt=style, color=color, label=label, ms=4,
                    capsize=2, alpha=0.9)
    ax.set(xscale="log", yscale="log", xlabel="T (users)", ylabel="average regret",
           title="Seed 001, scenario 1: ceil(ln T) users ask for epsilon = 1 (UC reports)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, alpha=0.3)
    save_figure(fig, out_dir, "seed001_scenario_few_private_users.png")
    plt.close(fig)
    return res


# ---------------------------------------------------------------------------
# Scenario 2
# ---------------------------------------------------------------------------

def scenario2_runs(T, seed, checkpoints):
    X, y, state = stream_scenario2(T, seed)
    eps = np.full(T, EPSILON)
    zero = np.cumsum(np.abs(y) - np.abs(y - X @ U2))[checkpoints - 1]
    out = {"zero": zero / checkpoints}
    splits = dict(split_weights(), none=None)
    for split, fw in splits.items():
        weights = normalise_feature_weights(fw, D2)
        e = np.full(T, np.inf) if split == "none" else eps
        for method in METHODS:
            regret, learner = run_pf(method, X, y, U2, state, e, weights, checkpoints, False)
            out[(split, method)] = regret / checkpoints
            out[(split, method, "w")] = learner.predict()
        if split == "none":
            continue
        for f in FACTORS:
            out[(split, "AdaGrad", f)] = run_baseline(
                "AdaGrad", f * np.max(np.abs(U2)), X, y, U2, state, e, weights, checkpoints,
                False) / checkpoints
    return out


def privacy_of_split(fw, seed):
    """``privacy_.epsilon`` the estimator reports for a split (on a short stream)."""
    X, y, _ = stream_scenario2(50, seed)
    est = estimator(pf.COORDINATE, False, fw, epsilon=EPSILON, random_state=seed).fit(X, y)
    return est.privacy_.epsilon


def scenario2(T, seeds, out_dir):
    checkpoints = np.array(half_decades(T), dtype=np.int64)
    res = [scenario2_runs(T, s, checkpoints) for s in seeds]

    def at(key, k):
        return [r[key][k] for r in res]

    shown = [k for k, t in enumerate(checkpoints) if math.log10(t) % 1 == 0 or t == T]
    rows = []
    for k in shown:
        for split in ("per-coordinate", "uniform"):
            row = [f"{checkpoints[k]:,}", split]
            row += [mean_std(at((split, m), k)) for m in METHODS]
            row += [mean_std(at((split, "AdaGrad", f), k)) for f in FACTORS]
            rows.append(row + [mean_std(at("zero", k))])
        rows.append([f"{checkpoints[k]:,}", "none (reference)"]
                    + [mean_std(at(("none", m), k)) for m in METHODS] + [""] * 4)
    print_table("Scenario 2, table 3: sparse gradients (20 features, each nonzero w.p. 0.1; "
                "u 4-sparse), every user at epsilon = 1; per-coordinate = budget on the 4 "
                "sensitive attributes only (Laplace scale 8), uniform = split over all 20 "
                "(scale 40). Average regret, mean ± std over "
                f"{len(seeds)} seeds; AdaGrad on [-D, D]^20, D = f x ||u||_inf.",
                ["T", "budget split", "PF coordinate (Alg. 3)", "PF reduction (Alg. 2)",
                 "AdaGrad D/100", "AdaGrad D (oracle)", "AdaGrad 100D", "w = 0 (reference)"],
                rows)

    last = len(checkpoints) - 1

    def m(key):
        return statistics.fmean(at(key, last))

    support = np.flatnonzero(U2)
    rows = []
    for split in ("per-coordinate", "uniform", "none"):
        for method in METHODS:
            w = np.mean([r[(split, method, "w")][support] for r in res], axis=0)
            rows.append([split, method] + [f"{v:.3g}" for v in w])
    print_table(f"Scenario 2, table 4: the learners' next iterate w_(T+1) on the support of u "
                f"at T = {T:,} (mean over seeds); coordinates 2, 3 are sensitive (noisy "
                "under both splits), 4, 5 public under the per-coordinate split",
                ["budget split", "method"] + [f"w_{j} (u_{j} = {U2[j]:g})" for j in support],
                rows)

    eps_of = {s: privacy_of_split(fw, seeds[0]) for s, fw in split_weights().items()}
    coord, red = pf.COORDINATE, pf.REDUCTION
    claims = [
        ("Alg. 3 beats AdaGrad with D 100x too large (per-coordinate split)",
         m(("per-coordinate", coord)), m(("per-coordinate", "AdaGrad", 100.0))),
        ("Alg. 3 beats AdaGrad with D 100x too large (uniform split)",
         m(("uniform", coord)), m(("uniform", "AdaGrad", 100.0))),
        ("Alg. 3 beats AdaGrad with D 100x too small (per-coordinate split)",
         m(("per-coordinate", coord)), m(("per-coordinate", "AdaGrad", 0.01))),
        ("Alg. 3 with sparse noise (per-coordinate) beats Alg. 3 with the uniform split",
         m(("per-coordinate", coord)), m(("uniform", coord))),
        ("Alg. 3 exploits the sparse privacy structure better than Alg. 2",
         m(("per-coordinate", coord)), m(("per-coordinate", red))),
        ("Alg. 3 vs oracle-tuned AdaGrad (per-coordinate split; not claimed by the seed)",
         m(("per-coordinate", coord)), m(("per-coordinate", "AdaGrad", 1.0))),
    ]
    rows = [[c, f"{a:.3g}", f"{b:.3g}", f"{b / a:.3g}", "yes" if a < b else "NO"]
            for c, a, b in claims]
    print_table(f"Scenario 2, table 5: the seed's claims at T = {T:,} (means over seeds)",
                ["claim", "first", "second", "second / first", "holds"], rows)
    print("\nGuarantee reported by the estimator (privacy_.epsilon): per-coordinate split "
          f"{eps_of['per-coordinate']} (the 16 public coordinates release sign(residual) x_j "
          f"exactly: the 4 sensitive attributes are 1-LDP, the row has no guarantee), "
          f"uniform split {eps_of['uniform']}.")

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, split in zip(axes, ("per-coordinate", "uniform")):
        curves = [((split, coord), "PF coordinate (Alg. 3)", "C0", "-o"),
                  ((split, red), "PF reduction (Alg. 2)", "C1", "-s"),
                  ((split, "AdaGrad", 0.01), "AdaGrad, D/100", "C4", "-.v"),
                  ((split, "AdaGrad", 1.0), "AdaGrad, oracle D", "C4", "--"),
                  ((split, "AdaGrad", 100.0), "AdaGrad, 100 D", "C4", "-v"),
                  (("none", coord), "PF coordinate, no noise", "grey", ":")]
        for key, label, color, style in curves:
            mean = np.mean([r[key] for r in res], axis=0)
            ax.plot(checkpoints, mean, style, color=color, label=label, ms=4)
        ax.plot(checkpoints, np.mean([r["zero"] for r in res], axis=0), color="k", lw=0.8,
                ls=(0, (1, 4)), label="w = 0 (learns nothing)")
        title = ("budget on the 4 sensitive attributes (Laplace scale 8)"
                 if split == "per-coordinate" else "uniform split over 20 (Laplace scale 40)")
        ax.set(xscale="log", yscale="log", xlabel="T (users)", title=title)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("average regret")
    axes[0].legend(fontsize=8)
    fig.suptitle("Seed 001, scenario 2: sparse gradients, every user at epsilon = 1 "
                 f"(mean over {len(seeds)} seeds)")
    save_figure(fig, out_dir, "seed001_scenario_sparse_gradients.png")
    plt.close(fig)


# ---------------------------------------------------------------------------
# Real data: scenario 1's privacy settings on the California housing stream
# ---------------------------------------------------------------------------

# Public ranges: California's extent, the 1990 census top-codes (age 52, income
# 15, value 500,001) and a cap of 100,000 on a block group's counts (log scale).
CAL_RANGES = [(-124.5, -114.0), (32.5, 42.1), (0.0, 52.0)] + [(0.0, math.log1p(1e5))] * 4 \
    + [(0.0, 15.0)]
CAL_COUNTS = [3, 4, 5, 6]


def load_cal_housing(data_dir):
    path = Path(data_dir) / "cal_housing.data.gz"
    with gzip.open(path, "rt") as f:
        raw = np.loadtxt(f, delimiter=",", skiprows=1)
    X, y = raw[:, :-1].copy(), raw[:, -1]
    X[:, CAL_COUNTS] = np.log1p(X[:, CAL_COUNTS])
    lo, hi = np.array(CAL_RANGES).T
    X = np.clip(2.0 * (X - lo) / (hi - lo) - 1.0, -1.0, 1.0)
    y = 2.0 * y / 500_001.0 - 1.0
    order = np.random.default_rng(0).permutation(len(y))  # public randomness
    return X[order], y[order]


def real_data(data_dir, seeds):
    X, y = load_cal_housing(data_dir)
    T, n_dims = X.shape[0], X.shape[1] + 1
    weights = normalise_feature_weights(None, n_dims)
    zero = np.zeros(n_dims)  # regret against w = 0 = the online loss minus that of 0
    base = float(np.mean(np.abs(y)))
    cp = np.array([T])
    res = {}
    for seed in seeds:
        state = users_sampler(seed)
        settings = {"UC": few_private(T, np.random.default_rng([3, seed])),
                    "AP": np.full(T, EPSILON), "none": np.full(T, np.inf)}
        for method in METHODS:
            for name, eps in settings.items():
                r = run_pf(method, X, y, zero, state, eps, weights, cp, True)[0][0]
                res.setdefault((method, name), []).append(base + r / T)
        for algo in ("OGD", "AdaGrad"):
            for radius in (0.01, 1.0, 100.0):
                r = run_baseline(algo, radius, X, y, zero, state, settings["UC"], weights,
                                 cp, True)[0]
                res.setdefault((algo, radius), []).append(base + r / T)
    rows = [[f"PF {m}", mean_std(res[(m, "UC")]), mean_std(res[(m, "AP")]),
             mean_std(res[(m, "none")])] for m in METHODS]
    rows += [[f"{a} radius {r:g} (UC reports)", mean_std(res[(a, r)]), "", ""]
             for a in ("OGD", "AdaGrad") for r in (0.01, 1.0, 100.0)]
    print_table(f"Real data: cal_housing stream (T = {T:,}, 8 features scaled by public ranges "
                "to [-1, 1], target to [-1, 1]); average online absolute loss (1/T) sum_t "
                f"l_t(w_t), mean ± std over {len(seeds)} seeds; UC = ceil(ln T) = "
                f"{math.ceil(math.log(T))} private users; predicting 0 scores {base:.3f}.",
                ["learner", "UC", "AP", "none private"], rows)


def half_decades(t_max):
    """100, 316, 1000, ... up to ``t_max`` (a power of 10)."""
    return [int(round(10 ** (k / 2))) for k in range(4, round(2 * math.log10(t_max)) + 1)]


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    clock = Stopwatch()
    t_max = pick(args, 100_000, 1_000_000, 1_000)
    sizes = half_decades(t_max)
    seeds = list(range(args.seeds or pick(args, 5, 5, 1)))
    print(f"Seed 001 (van der Hoeven 2019), section 4; T up to {t_max:,}, seeds {seeds}.")
    T_check, n_played = check_loop_against_estimator(seeds[0], T=pick(args, 2_000, 2_000, 300),
                                                     n_played=pick(args, 200, 200, 30))
    print(f"Check passed: on T = {T_check:,} rows (both scenarios, both methods, both splits) "
          "the loop leaves the learner in exactly the state of "
          "ParameterFreeLocalDPRegressor.fit, and its first "
          f"{n_played} played iterates equal those partial_fit(average=False) publishes.")
    scenario1(sizes, seeds, args.out)
    scenario2(t_max, seeds, args.out)
    if args.data is not None:
        real_data(args.data, seeds)
    clock.report()


if __name__ == "__main__":
    main()
