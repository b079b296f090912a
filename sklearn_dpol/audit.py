"""Statistical privacy audits: lower bounds on epsilon that hold with high probability.

Method (Jagielski et al. 2020; Nasr et al. 2021): run a mechanism many times on
two neighbouring data sets, score each output with a statistic, and threshold
it. Any ``(epsilon, delta)``-DP mechanism satisfies, for every test,
``FPR + e^eps FNR >= 1 - delta`` and ``FNR + e^eps FPR >= 1 - delta``. With
one-sided Clopper-Pearson upper bounds ``FPR+`` and ``FNR+`` (level ``alpha/2``
each) on runs kept apart from those that chose the statistic and threshold,

    eps_lb = max(ln((1 - delta - FNR+) / FPR+), ln((1 - delta - FPR+) / FNR+))

is a lower bound on the true epsilon with probability at least ``1 - alpha``.
An audit can show a mechanism is *not* private; it can never prove that it is.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse import csr_matrix, issparse
from scipy.sparse import vstack as sparse_vstack
from scipy.stats import beta as beta_dist
from sklearn.base import clone, is_classifier

from ._core._weights import float64_csr as _float64_csr
from ._core.noise import recording_releases
from .privacy import gaussian_epsilon

__all__ = ["AuditResult", "audit_estimator", "audit_mechanism", "audit_samples",
           "epsilon_lower_bound", "float_release", "representable"]


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    Returned by the ``audit_*`` functions; its fields are also its
    constructor's parameters. An ``epsilon_lower_bound`` above the claimed
    epsilon certifies (with probability ``1 - alpha``) that the claim is false.

    Parameters
    ----------
    epsilon_lower_bound : float
        Holds with probability at least ``1 - alpha``.
    delta, alpha : float
        The delta the bound is stated for, and the audit's failure probability.
    n_test : int
        Runs per data set that were counted.
    false_positives, false_negatives : int
        Counted errors of the threshold test.
    threshold : float
        The chosen threshold of the statistic.
    statistic : str
        Which statistic scored the outputs.
    instance_mu : float
        For white-box estimator audits, the exact GDP parameter of the audited
        pair (``nan`` otherwise): what a perfect audit would approach.
    instance_epsilon : float
        ``epsilon`` of ``instance_mu`` at ``delta`` (``nan`` when unknown).

    See Also
    --------
    audit_mechanism : Audit a randomised function on two neighbouring data sets.
    audit_estimator : Audit a private estimator's ``fit`` or stream.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol.audit import audit_mechanism
    >>> from sklearn_dpol.privacy import gaussian_epsilon
    >>> def noisy_sum(data, rng):  # sensitivity 1, noise std 1: 1-GDP
    ...     return np.array([sum(data) + rng.normal(0.0, 1.0)])
    >>> result = audit_mechanism(noisy_sum, [0, 0, 0], [0, 0, 1], n_runs=4000,
    ...                          delta=1e-5, random_state=0)
    >>> 1.0 < result.epsilon_lower_bound <= gaussian_epsilon(1.0, 1e-5)
    True
    """

    epsilon_lower_bound: float
    delta: float
    alpha: float
    n_test: int
    false_positives: int
    false_negatives: int
    threshold: float
    statistic: str
    instance_mu: float = float("nan")
    instance_epsilon: float = float("nan")


def _clopper_pearson_upper(errors, n, level):
    """One-sided upper confidence bound on a binomial rate at confidence ``1 - level``."""
    if errors >= n:
        return 1.0
    return float(beta_dist.ppf(1.0 - level, errors + 1, n - errors))


def epsilon_lower_bound(false_positives, false_negatives, n0, n1, delta, alpha=0.05):
    """Lower bound on epsilon from counted errors of one threshold test.

    Parameters
    ----------
    false_positives : int
        Runs on the first data set scored at or above the threshold.
    false_negatives : int
        Runs on the second data set scored below the threshold.
    n0, n1 : int
        Counted runs on each data set.
    delta : float
        The delta of the claimed guarantee.
    alpha : float, default=0.05
        The bound fails with probability at most ``alpha``.

    Returns
    -------
    epsilon : float
        ``>= 0``; ``0`` when the counts show nothing.
    """
    fpr = _clopper_pearson_upper(false_positives, n0, alpha / 2)
    fnr = _clopper_pearson_upper(false_negatives, n1, alpha / 2)
    candidates = [0.0]
    for numerator, denominator in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr)):
        if numerator > 0 and denominator > 0:
            candidates.append(np.log(numerator / denominator))
    return float(max(candidates))


def _best_threshold(scores0, scores1, delta, alpha, n_candidates=512):
    """The threshold maximising the bound on held-out selection runs."""
    pooled = np.concatenate([scores0, scores1])
    candidates = np.unique(np.quantile(pooled, np.linspace(0, 1, n_candidates)))
    sorted0, sorted1 = np.sort(scores0), np.sort(scores1)
    best, best_threshold = -1.0, candidates[0]
    for threshold in candidates:
        fp = sorted0.size - np.searchsorted(sorted0, threshold, side="left")
        fn = np.searchsorted(sorted1, threshold, side="left")
        bound = epsilon_lower_bound(fp, fn, sorted0.size, sorted1.size, delta, alpha)
        if bound > best:
            best, best_threshold = bound, threshold
    return float(best_threshold)


def _count_and_bound(scores0, scores1, threshold, delta, alpha, statistic, **extra):
    fp = int(np.sum(scores0 >= threshold))
    fn = int(np.sum(scores1 < threshold))
    return AuditResult(
        epsilon_lower_bound=epsilon_lower_bound(fp, fn, scores0.size, scores1.size,
                                                delta, alpha),
        delta=float(delta), alpha=float(alpha), n_test=int(min(scores0.size, scores1.size)),
        false_positives=fp, false_negatives=fn, threshold=float(threshold),
        statistic=statistic, **extra,
    )


def _fitted_gaussian_statistic(fit0, fit1):
    """Diagonal Gaussian likelihood ratio, fitted on runs that are not counted."""
    mean0, mean1 = fit0.mean(axis=0), fit1.mean(axis=0)
    variance = 0.5 * (fit0.var(axis=0) + fit1.var(axis=0))
    # A coordinate constant on both sides says nothing if the means agree and
    # everything if they differ (a release without noise): weight it fully.
    floor = np.where(mean1 != mean0, 1.0, np.inf)
    variance = np.where(variance > 0, variance, floor)
    weights = (mean1 - mean0) / variance
    centre = 0.5 * (mean0 + mean1)
    return lambda outputs: (outputs - centre) @ weights


def audit_samples(outputs0, outputs1, delta, alpha=0.05, statistic=None, threshold=None,
                  random_state=None):
    """Audit from released outputs already sampled on two neighbouring data sets.

    Parameters
    ----------
    outputs0, outputs1 : array-like of shape (n_runs, n_outputs)
        Independent releases on the first and the second data set.
    delta : float
        The delta of the claimed guarantee.
    alpha : float, default=0.05
        The bound fails with probability at most ``alpha``.
    statistic : callable or None, default=None
        Maps an ``(n, n_outputs)`` array to ``n`` scores, larger meaning "second
        data set". ``None`` fits a diagonal Gaussian likelihood ratio on a
        quarter of the runs of each side.
    threshold : float or None, default=None
        A fixed threshold (with a fixed ``statistic``, no run is spent choosing).
        ``None`` chooses it on a quarter (half with a given statistic) of the
        runs; the rest are counted.
    random_state : int, Generator or None, default=None
        Shuffles the runs before they are split.

    Returns
    -------
    result : AuditResult
        The lower bound on epsilon and the counts it rests on.
    """
    rng = np.random.default_rng(random_state)
    outputs0 = rng.permutation(np.asarray(outputs0, dtype=float).reshape(len(outputs0), -1))
    outputs1 = rng.permutation(np.asarray(outputs1, dtype=float).reshape(len(outputs1), -1))
    name = "given statistic"
    if statistic is None:
        # A quarter of each side fits the statistic, a quarter picks the
        # threshold, half is counted.
        quarter0, quarter1 = len(outputs0) // 4, len(outputs1) // 4
        statistic = _fitted_gaussian_statistic(outputs0[:quarter0], outputs1[:quarter1])
        outputs0, outputs1 = outputs0[quarter0:], outputs1[quarter1:]
        name = "fitted diagonal Gaussian likelihood ratio"
    scores0, scores1 = statistic(outputs0), statistic(outputs1)
    if threshold is None:
        share = 3 if name != "given statistic" else 2
        cut0, cut1 = len(scores0) // share, len(scores1) // share
        threshold = _best_threshold(scores0[:cut0], scores1[:cut1], delta, alpha)
        scores0, scores1 = scores0[cut0:], scores1[cut1:]
    return _count_and_bound(scores0, scores1, threshold, delta, alpha, name)


def audit_mechanism(mechanism, D0, D1, n_runs, delta, alpha=0.05, statistic=None,
                    threshold=None, n_jobs=None, random_state=None):
    """Audit a randomised function on two neighbouring data sets.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(D, rng)`` returns the released vector for data set ``D``,
        drawing all its randomness from the ``numpy.random.Generator`` ``rng``.
    D0, D1 : object
        The neighbouring data sets.
    n_runs : int
        Runs on each data set.
    delta : float
        The delta of the claimed guarantee.
    alpha : float, default=0.05
        The bound fails with probability at most ``alpha``.
    statistic : callable or None, default=None
        Scores the outputs, as in :func:`audit_samples`.
    threshold : float or None, default=None
        A fixed threshold, as in :func:`audit_samples`.
    n_jobs : int or None, default=None
        Parallel workers for the runs (joblib; processes by default, or the
        backend chosen with ``joblib.parallel_config``). The result does not
        depend on it: every run has its own seed. With a process backend,
        ``mechanism`` must be picklable (the default backend, loky, pickles
        lambdas and closures; ``"multiprocessing"`` needs a module-level
        function).
    random_state : int or None, default=None
        Seeds every run (independent streams) and the split.

    Returns
    -------
    result : AuditResult
        The lower bound on epsilon and the counts it rests on.
    """
    if not isinstance(n_runs, Integral) or n_runs < 8:
        raise ValueError(f"n_runs must be an integer >= 8; got {n_runs!r}.")
    seeds = np.random.SeedSequence(random_state).spawn(2 * n_runs + 1)
    # Every run gets its own child seed, so the outputs do not depend on the
    # backend or on how joblib batches the runs; module-level so that process
    # backends can pickle it.
    outputs = Parallel(n_jobs=n_jobs)(
        delayed(_run_mechanism)(mechanism, D0 if i < n_runs else D1, seeds[i])
        for i in range(2 * n_runs)
    )
    outputs = np.asarray(outputs)
    return audit_samples(outputs[:n_runs], outputs[n_runs:], delta, alpha, statistic,
                         threshold, random_state=np.random.default_rng(seeds[-1]))


def _run_mechanism(mechanism, data, seed):
    return np.ravel(np.asarray(mechanism(data, np.random.default_rng(seed)), dtype=float))


def _neighbour(X, y, index, replacement):
    row, label = replacement
    y1 = np.array(y, copy=True)
    y1[index] = label
    if issparse(X):   # CSR: the replaced row's stored entries are its non-zero values
        row = csr_matrix(np.asarray(row, dtype=float).reshape(1, -1))
        X1 = sparse_vstack([X[:index], row, X[index + 1:]], format="csr")
        return X1, y1
    X1 = np.array(X, dtype=float, copy=True)
    X1[index] = row
    return X1, y1


def _fit_and_record(estimator, X, y, release, batch_size, classes):
    """Fit once, recording every Gaussian release the estimator makes."""
    with recording_releases() as log:
        if release == "final":
            estimator.fit(X, y)
        else:
            for start in range(0, X.shape[0], batch_size):
                estimator.partial_fit(X[start:start + batch_size], y[start:start + batch_size],
                                      **_stream_kwargs(estimator, classes))
    return log


def _stream_kwargs(estimator, classes):
    """Classifiers need the label set on the first ``partial_fit``; regressors take none."""
    return {"classes": classes} if is_classifier(estimator) else {}


def _released_vector(estimator):
    parts = [np.ravel(estimator.coef_)]
    if hasattr(estimator, "intercept_"):
        parts.append(np.ravel(estimator.intercept_))
    return np.concatenate(parts)


def audit_estimator(estimator, X, y, index, replacement, n_runs, *, release="final",
                    batch_size=None, delta=None, alpha=0.05, replay=True, n_jobs=None,
                    random_state=None):
    """Audit an estimator on ``(X, y)`` against the data set with one record replaced.

    Parameters
    ----------
    estimator : estimator
        Unfitted private estimator (it is cloned).
    X, y : array-like (X also a SciPy sparse matrix)
        The first data set. Sparse ``X`` is kept sparse (canonical CSR), so the
        fits take their sparse paths, as a user's fit on it would.
    index : int
        The record replaced by ``replacement`` to form the second data set, in
        ``[0, n_samples)``.
    replacement : tuple (row, label)
        The canary; choose it from the sensitivity analysis (worst case).
    n_runs : int
        Releases audited on each data set.
    release : {"final", "stream"}, default="final"
        ``"final"`` audits the model of ``fit``; ``"stream"`` audits the
        concatenation of every model released by ``partial_fit`` calls on
        consecutive batches of ``batch_size`` rows.
    batch_size : int or None, default=None
        Rows per ``partial_fit`` call for ``release="stream"``.
    delta : float or None, default=None
        Delta of the claim; the estimator's ``delta`` by default.
    alpha : float, default=0.05
        The bound fails with probability at most ``alpha``.
    replay : bool, default=True
        Fit once per data set while recording each Gaussian release (its
        values before noise and its noise scale), then draw ``n_runs`` releases
        from exactly those distributions. Only for estimators whose every
        release is such a Gaussian release (``PrivateIGDClassifier`` with
        ``solver="igd"``, ``PrivateQFTLRegressor``, ``PrivateFrankWolfeLasso``
        with ``selection="gaussian"``, none with an "auto" bound); the others
        raise ``ValueError`` (use ``replay=False``). Honest when the values before noise
        do not depend on earlier noise (the uncorrupted iterates of IGD); the
        outputs are scored with the exact (white-box) likelihood ratio and are
        audited before post-processing (which can only lower the bound). With
        ``replay=False`` every run is a real fit with its own seed and the
        statistic is fitted on held-out runs.
    n_jobs : int or None, default=None
        Parallel workers (joblib) for the real fits when ``replay=False``;
        ignored when replaying. Every fit has its own seed, so the result
        does not depend on ``n_jobs`` or on the joblib backend.
    random_state : int or None, default=None
        Seeds the audit.

    Returns
    -------
    result : AuditResult
        The lower bound on epsilon and the counts it rests on.
    """
    if release not in ("final", "stream"):
        raise ValueError(f"release must be 'final' or 'stream'; got {release!r}.")
    if release == "stream" and not (isinstance(batch_size, Integral) and batch_size >= 1):
        raise ValueError("release='stream' needs batch_size, an integer >= 1.")
    # A SciPy sparse X stays sparse (canonical float64 CSR, never densified), so that
    # the fits read it as a user's fit would; anything else becomes a float array.
    X0 = _float64_csr(X) if issparse(X) else np.asarray(X, dtype=float)
    y0 = np.asarray(y)
    if replay:
        # On the array the fits use: solver="auto" resolves from the input's format, and
        # the fits below see X0 (dense, or CSR for sparse X), whatever format X came in
        # (review 119).
        reason = _replay_refusal(estimator, X0, release)
        if reason is not None:
            raise ValueError(
                f"audit_estimator(replay=True) cannot audit {estimator!r}: {reason}. The "
                "replay audits only estimators whose every release is a recorded Gaussian "
                "release (PrivateIGDClassifier with solver='igd', PrivateQFTLRegressor, "
                "PrivateFrankWolfeLasso with selection='gaussian', without 'auto' bounds); "
                "use replay=False (real fits) for the others."
            )
    if not (isinstance(index, Integral) and 0 <= index < X0.shape[0]):
        # Negative indices too: sparse slicing X[:index] would read -1 as "all but the
        # last row" and build a neighbour of 2n - 1 rows (review 122).
        raise ValueError(f"index must be an integer in [0, {X0.shape[0]}); got {index!r}.")
    X1, y1 = _neighbour(X0, y0, index, replacement)
    classes = np.unique(np.concatenate([y0, y1])) if is_classifier(estimator) else None
    delta = estimator.delta if delta is None else delta
    rng = np.random.default_rng(random_state)
    if replay:
        logs = [
            _fit_and_record(clone(estimator).set_params(random_state=0), Xd, yd, release,
                            batch_size, classes)
            for Xd, yd in ((X0, y0), (X1, y1))
        ]
        return _replay_audit(logs, n_runs, delta, alpha, rng)

    seeds = _distinct_seeds(rng, 2 * n_runs)
    outputs = np.asarray(Parallel(n_jobs=n_jobs)(
        delayed(_refit_once)(estimator, *((X0, y0) if i < n_runs else (X1, y1)), int(seeds[i]),
                             release, batch_size, classes)
        for i in range(2 * n_runs)
    ))
    return audit_samples(outputs[:n_runs], outputs[n_runs:], delta, alpha, random_state=rng)


def _distinct_seeds(rng, n):
    """``n`` different ``random_state`` integers for ``n`` real fits.

    Independent draws of 32-bit seeds collide (one pair in 2,000 runs with
    probability about 5e-4), and two runs with one seed share their noise;
    consecutive integers never collide, and each estimator hashes its seed
    through ``SeedSequence``, so their noise streams are independent.
    """
    first = int(rng.integers(0, 2**32 - n))
    return np.arange(first, first + n, dtype=np.int64)


def _refit_once(estimator, X, y, seed, release, batch_size, classes):
    """One real fit (or stream) of a clone seeded with ``seed``; its released vector."""
    model = clone(estimator).set_params(random_state=seed)
    if release == "final":
        return _released_vector(model.fit(X, y))
    outputs = []
    for start in range(0, X.shape[0], batch_size):
        model.partial_fit(X[start:start + batch_size], y[start:start + batch_size],
                          **_stream_kwargs(model, classes))
        outputs.append(_released_vector(model))
    return np.concatenate(outputs)


def _replay_refusal(estimator, X=None, release="final"):
    """Why the replay would not see every release of ``estimator``, or ``None``.

    The replay audits what ``gaussian_release`` recorded, so it is honest only
    for configurations whose every release goes through it, as the released
    output or its post-processing: an allow-list of exact classes and
    settings. Elsewhere the noise is drawn by other samplers (the kernels of
    mirror descent, MI-OGD and the local protocols, the exponential
    mechanism of Frank-Wolfe and of the private quantiles of "auto" bounds:
    nothing or only part would be recorded, and the audit would pass
    vacuously), or the recorded Gaussian draw is not the output (objective
    perturbation's random linear term).
    """
    from .linear_model import PrivateFrankWolfeLasso, PrivateIGDClassifier, PrivateQFTLRegressor

    kind = type(estimator)
    if kind is PrivateIGDClassifier:
        # A stream is IGD whatever the solver; a fit uses the solver the rule of
        # solver="auto" resolves for this X (its format only, doc/privacy.md 56.10).
        solver = estimator._fit_solver(X) if release == "final" else "igd"
        if solver != "igd":
            return (f"solver={estimator.solver!r} fits by objective perturbation here: its "
                    "recorded Gaussian draw is a term of the objective, not a release "
                    "(pass solver='igd' to audit output perturbation)")
    elif kind is PrivateFrankWolfeLasso:
        if estimator.selection != "gaussian":
            return (f"selection={estimator.selection!r} draws its noise with the "
                    "exponential mechanism, which is not recorded")
    elif kind is not PrivateQFTLRegressor:
        return f"{kind.__name__} draws noise that the replay does not record"
    if estimator._any_auto_bound():
        return ("an 'auto' bound is a private quantile (exponential mechanism), which is "
                "not recorded")
    return None


def _replay_audit(logs, n_runs, delta, alpha, rng):
    """Draw releases from recorded distributions; score with the exact likelihood ratio."""
    log0, log1 = logs
    if not log0 or not log1:
        # Nothing recorded: an instance_mu of 0 would pass any estimator vacuously.
        raise ValueError(
            "The fit made no recorded Gaussian release, so the replay has nothing to "
            "audit; use replay=False (real fits)."
        )
    if len(log0) != len(log1):
        raise ValueError("The two data sets made different numbers of releases.")
    sigmas = np.array([entry[1] for entry in log0])
    if not np.array_equal(sigmas, [entry[1] for entry in log1]):
        raise ValueError(
            "The noise scale differs between neighbouring data sets: the calibration "
            "depends on the data, which is itself a privacy leak."
        )
    if np.any(sigmas == 0):
        means0 = np.concatenate([np.ravel(entry[0]) for entry in log0])
        means1 = np.concatenate([np.ravel(entry[0]) for entry in log1])
        distinct = not np.array_equal(means0, means1)
        # Without noise, one output tells the data sets apart with certainty.
        scores0 = np.full(n_runs, 0.0)
        scores1 = np.full(n_runs, 1.0 if distinct else 0.0)
        return _count_and_bound(scores0, scores1, 0.5, delta, alpha, "no noise: exact match",
                                instance_mu=np.inf if distinct else 0.0,
                                instance_epsilon=np.inf if distinct else 0.0)
    means0 = [np.ravel(entry[0]) for entry in log0]
    means1 = [np.ravel(entry[0]) for entry in log1]
    weights = [(m1 - m0) / s**2 for m0, m1, s in zip(means0, means1, sigmas)]
    instance_mu = float(np.sqrt(sum(np.sum((m1 - m0) ** 2) / s**2
                                    for m0, m1, s in zip(means0, means1, sigmas))))

    def scores(means):
        total = np.zeros(n_runs)
        for mean, mean0, mean1, weight, sigma in zip(means, means0, means1, weights, sigmas):
            draws = mean + sigma * rng.standard_normal((n_runs, mean.size))
            total += (draws - 0.5 * (mean0 + mean1)) @ weight
        return total

    scores0, scores1 = scores(means0), scores(means1)
    half = n_runs // 2
    threshold = _best_threshold(scores0[:half], scores1[:half], delta, alpha)
    return _count_and_bound(
        scores0[half:], scores1[half:], threshold, delta, alpha,
        "white-box Gaussian likelihood ratio (replayed releases)",
        instance_mu=instance_mu, instance_epsilon=gaussian_epsilon(instance_mu, delta),
    )


# -- floating-point attacks (doc/privacy.md section 14, doc/audit.md) -------------------

def representable(noiseless, released, steps=4):
    """Whether every released double can be ``fl(noiseless + t)`` for some double ``t``.

    The representability attack on the released bits: an attacker who knows
    every record but one computes the noiseless release of each candidate and
    rules out a candidate for which this is ``False``. The library's grid
    release never lets it rule anything out; :func:`float_release` does.

    Parameters
    ----------
    noiseless : array-like of float
        The release without noise under one hypothesis (e.g. the estimator at
        ``epsilon=inf`` on the candidate data set).
    released : array-like of float
        The released values, of the same size.
    steps : int, default=4
        How many doubles to search on each side of ``released - noiseless``.

    Returns
    -------
    possible : bool
        ``True`` when every coordinate can be ``fl(noiseless + t)``.
    """
    W, z = np.ravel(noiseless), np.ravel(released)
    ok = np.zeros(W.shape, dtype=bool)
    up = down = z - W
    for _ in range(steps + 1):
        ok |= (W + up == z) | (W + down == z)
        up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
    return bool(ok.all())


def float_release(values, scale, rng, gaussian=True):
    """The naive release ``values + scale * draw``: a positive control, never private.

    Its low-order bits depend on ``values`` (Mironov 2012), which
    :func:`representable` detects. For audits and tests only; the library
    releases through ``sklearn_dpol._core.noise``.

    Parameters
    ----------
    values : array-like of float
        The exact values.
    scale : float
        The noise scale (standard deviation, or the Laplace scale).
    rng : numpy.random.Generator
        The source of the floating-point noise.
    gaussian : bool, default=True
        Gaussian noise, else Laplace.

    Returns
    -------
    released : ndarray
        ``values + scale * draw`` in floating point.
    """
    shape = np.shape(values)
    draw = rng.standard_normal(shape) if gaussian else rng.laplace(size=shape)
    return values + scale * draw

