"""Numeric core of private selection: the random candidate count, splits, noisy scores.

Everything here takes arrays, scalars and a ``numpy.random.Generator``; the
accounting is in :mod:`sklearn_dpol.privacy._selection`.
"""

import math

import numpy as np

from .noise import gaussian_release

__all__ = [
    "accuracy_values",
    "clipped_squared_error_values",
    "draw_candidate_count",
    "noisy_mean_score",
    "sample_setting",
    "score_sigma",
    "split_indices",
]


def draw_candidate_count(gamma, shape, rng):
    """Draw ``K >= 1`` from the truncated negative binomial ``D(shape, gamma)``.

    Inversion of the distribution function with the ratio
    ``P[K = k + 1] / P[K = k] = (1 - gamma)(k + eta) / (k + 1)``; no rejection,
    so a tiny ``eta`` (where ``P[K = 0]`` of the untruncated law is near one)
    costs nothing. The draw uses the generator only, never the data.
    """
    uniform = rng.random()
    log_gamma = math.log(gamma)
    if shape == 0.0:
        probability = (1.0 - gamma) / -log_gamma  # logarithmic: P[K=1]
    else:
        probability = (1.0 - gamma) * shape / math.expm1(-shape * log_gamma)
    k, cumulative = 1, probability
    while cumulative < uniform and probability > 0.0:
        probability *= (1.0 - gamma) * (k + shape) / (k + 1)
        cumulative += probability
        k += 1
    return k


def split_indices(n_samples, validation_fraction, rng):
    """A random train/validation partition of ``range(n_samples)``, independent of the data.

    Returns ``(train, validation)`` index arrays, each non-empty; the
    validation size ``m = max(1, round(fraction * n))`` is public because
    ``n`` is.
    """
    n_validation = min(max(1, int(round(validation_fraction * n_samples))), n_samples - 1)
    order = rng.permutation(n_samples)
    return np.sort(order[n_validation:]), np.sort(order[:n_validation])


def sample_setting(spaces, rng, return_space=False):
    """One hyperparameter setting: a space uniformly, then each value independently.

    ``spaces`` is a list of dicts mapping a name to a list (drawn uniformly,
    with replacement) or to an object with ``rvs(random_state=...)``. Draws are
    independent across calls, as private selection requires (scikit-learn's
    ``ParameterSampler`` draws grids without replacement, which it does not).
    With ``return_space=True``, returns ``(index, setting)``: the index of the
    space drawn (the same draws from ``rng`` either way).
    """
    index = int(rng.integers(len(spaces)))
    space = spaces[index]
    setting = {}
    for name in sorted(space):
        values = space[name]
        if hasattr(values, "rvs"):
            setting[name] = values.rvs(random_state=np.random.RandomState(
                int(rng.integers(2**32 - 1))))
        else:
            setting[name] = values[int(rng.integers(len(values)))]
    return (index, setting) if return_space else setting


def score_sigma(n_validation, mu):
    """Noise of a mean of ``n_validation`` values in ``[0, 1]`` for ``mu``-GDP.

    Replacing one validation record moves the mean by at most
    ``1 / n_validation``; the computed mean (a float64 sum of ``n_validation`` values,
    then a division) by at most that times
    :func:`~sklearn_dpol.privacy._rounding.sum_rounding_factor` ``(n_validation, 1)``
    (one value's bound over the sum's sensitivity is 1; ``doc/privacy.md`` 55.11).
    ``mu = inf`` adds no noise.
    """
    from ..privacy._rounding import sum_rounding_factor

    if math.isinf(mu):
        return 0.0
    return sum_rounding_factor(n_validation, 1.0) / (n_validation * mu)


def noisy_mean_score(values, sigma, rng):
    """``mean(values) + N(0, sigma'^2)``, the released score of one candidate.

    Released through the exact grid sampler (:func:`.noise.gaussian_release`,
    ``sigma' >= sigma``), like every other value the library releases: the
    score's bits are a function of the grid point alone (``doc/privacy.md``,
    sections 14 and 49).
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0 or not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError("Per-record score values must be in [0, 1] (and not empty).")
    return float(gaussian_release(np.array([values.mean()]), sigma, rng)[0])


def accuracy_values(y_true, y_pred):
    """Per-record correctness in ``{0, 1}``."""
    return (np.asarray(y_true) == np.asarray(y_pred)).astype(np.float64)


def clipped_squared_error_values(y_true, y_pred, bound):
    """Per-record ``1 - (clip(y_pred) - clip(y_true))^2 / (2 bound)^2`` in ``[0, 1]``.

    Both are clipped to the public ``[-bound, bound]``, so the squared error is
    at most ``(2 bound)^2`` and the value a bounded, higher-is-better score.
    """
    y_true = np.clip(np.asarray(y_true, dtype=np.float64), -bound, bound)
    y_pred = np.clip(np.asarray(y_pred, dtype=np.float64), -bound, bound)
    values = 1.0 - (y_pred - y_true) ** 2 / (2.0 * bound) ** 2
    # A non-finite prediction scores the worst value, keeping the range [0, 1].
    return np.where(np.isfinite(values), values, 0.0)
