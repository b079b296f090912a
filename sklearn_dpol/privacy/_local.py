"""The user-side randomisers of the local protocols, as public functions.

In a real local-DP deployment each user runs one of these on its own device and
sends only the report. The estimators simulate the same users with exactly the
same numba kernels (``ParameterFreeLocalDPRegressor`` with
:func:`local_laplace_report` or :func:`local_sampled_coordinate_report`,
``MutualInformationPrivateOGDRegressor`` with
:func:`local_gaussian_report`). The noise is exact and the report lies on a grid
(``doc/privacy.md`` section 14), so its floating-point bits say nothing about
the gradient beyond the mechanism's output: the parity attack on ``+-1 + fl(b n)``
finds nothing. Laplace reports lie on one lattice (``2**-12``) whatever the budget,
so their bits do not tell it either (section 53.7).
"""

import numpy as np

from .._core.local_randomizers import (
    LocalGaussianRandomizer,
    LocalLaplaceRandomizer,
    REPORT_SCALE_RANGE,
    LocalSampledCoordinateRandomizer,
    normalise_feature_weights,
)

__all__ = ["local_gaussian_report", "local_laplace_report", "local_sampled_coordinate_report"]


def _vector(gradient):
    gradient = np.array(gradient, dtype=np.float64, ndmin=1)
    if gradient.ndim != 1:
        raise ValueError(f"gradient must be one vector, got shape {gradient.shape}.")
    return gradient


def local_laplace_report(gradient, epsilon, *, feature_weights=None, random_state=None):
    """A user's epsilon-LDP report of its gradient (seed 001, Lemma 1).

    Each coordinate is clipped to ``[-1, 1]`` and released with Laplace noise of
    scale ``2 / (epsilon * w_j)``, ``w`` the normalised ``feature_weights``: the
    report is ``epsilon``-LDP (pure) under replace-one.

    Parameters
    ----------
    gradient : array-like of shape (n_dims,)
        The user's gradient (it is clipped here).
    epsilon : float
        The user's budget, ``> 0``; ``inf`` reports the clipped gradient rounded
        to the reports' lattice (multiples of ``2^-12``).
    feature_weights : array-like of shape (n_dims,), default=None
        Budget split over coordinates (``None``: uniform); a zero weight makes
        that coordinate public (no noise).
    random_state : int, Generator or None, default=None
        Source of the random bits. ``None`` (fresh operating-system entropy) for
        every real report: an integer seed is for tests only, since two reports
        with the same seed carry the same noise (their difference is the
        difference of the two gradients). A ``Generator`` must not be copied
        between reports.

    Returns
    -------
    report : ndarray of shape (n_dims,)
        The noisy report, on the reports' lattice (multiples of ``2^-12``).

    Examples
    --------
    >>> from sklearn_dpol.privacy import local_laplace_report
    >>> local_laplace_report([0.3, -2.0], epsilon=1.0, random_state=0).shape
    (2,)
    """
    gradient = _vector(gradient)
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    weights = normalise_feature_weights(feature_weights, gradient.shape[0])
    return LocalLaplaceRandomizer(weights).report(gradient, epsilon, random_state)


def local_sampled_coordinate_report(gradient, epsilon, *, feature_weights=None,
                                    random_state=None):
    """A user's epsilon-LDP report of one sampled coordinate (``doc/privacy.md`` 54.2).

    The gradient is clipped to ``[-1, 1]`` per coordinate; one coordinate ``j``
    is drawn with probability ``w_j`` (the normalised ``feature_weights``,
    independently of the gradient) and reported as ``s K / w_j`` with a sign
    ``s`` randomised exactly at ``epsilon`` (``K`` about ``coth(epsilon /
    2)``); the other private coordinates are 0. Unbiased for the clipped
    gradient and ``epsilon``-LDP (pure) under replace-one; the randomiser of
    ``ParameterFreeLocalDPRegressor(randomizer="sampled_coordinate")``.

    Parameters
    ----------
    gradient : array-like of shape (n_dims,)
        The user's gradient (it is clipped here).
    epsilon : float
        The user's budget, ``> 0``; ``inf`` reports the clipped gradient rounded
        to the reports' lattice (multiples of ``2^-12``).
    feature_weights : array-like of shape (n_dims,), default=None
        Budget split and sampling probabilities over coordinates (``None``:
        uniform); a zero weight makes that coordinate public (no noise).
    random_state : int, Generator or None, default=None
        As for :func:`local_laplace_report` (``None`` for every real report).

    Returns
    -------
    report : ndarray of shape (n_dims,)
        The report: one private coordinate ``+-K / w_j``, the others 0 (public
        coordinates clipped and rounded to the reports' lattice).

    Examples
    --------
    >>> from sklearn_dpol.privacy import local_sampled_coordinate_report
    >>> report = local_sampled_coordinate_report([0.3, -2.0], epsilon=1.0, random_state=0)
    >>> int((report != 0).sum())
    1
    """
    gradient = _vector(gradient)
    epsilon = float(epsilon)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    weights = normalise_feature_weights(feature_weights, gradient.shape[0])
    return LocalSampledCoordinateRandomizer(weights).report(gradient, epsilon, random_state)


def local_gaussian_report(gradient, sigma, *, clip_norm, random_state=None):
    """A user's Gaussian report of its gradient (seed 003, Algorithm 1, line 4).

    The gradient is clipped to L2 norm ``clip_norm`` and released with Gaussian
    noise ``sigma`` per coordinate: ``mu = 2 clip_norm / sigma`` GDP under
    replace-one.

    Parameters
    ----------
    gradient : array-like of shape (n_dims,)
        The user's gradient (it is clipped here).
    sigma : float
        Noise standard deviation, in ``[1e-100, 1e100]``.
    clip_norm : float
        L2 clipping norm, in ``[1e-100, 1e100]`` (a subnormal norm could not be
        met after rounding).
    random_state : int, Generator or None, default=None
        Source of the random bits. ``None`` (fresh operating-system entropy) for
        every real report: an integer seed is for tests only, since two reports
        with the same seed carry the same noise (their difference is the
        difference of the two gradients). A ``Generator`` must not be copied
        between reports.

    Returns
    -------
    report : ndarray of shape (n_dims,)
        The noisy report, on the noise grid.

    Examples
    --------
    >>> from sklearn_dpol.privacy import local_gaussian_report
    >>> local_gaussian_report([0.3, -2.0], sigma=8.0, clip_norm=1.0, random_state=0).shape
    (2,)
    """
    gradient = _vector(gradient)
    if gradient.shape[0] < 1:   # as the other two reports (normalise_feature_weights)
        raise ValueError("The gradient has no coordinates: a report needs at least one.")
    sigma, clip_norm = float(sigma), float(clip_norm)
    # The range MutualInformationPrivateOGDRegressor allows: a subnormal clip_norm
    # rounds the clipped coordinates up to whole subnormal steps (a norm of up to
    # 2 clip_norm, twice the stated mu), and a subnormal sigma's noise grid underflows
    # (review 127; doc/privacy.md 58.1).
    for name, value in (("sigma", sigma), ("clip_norm", clip_norm)):
        if not REPORT_SCALE_RANGE[0] <= value <= REPORT_SCALE_RANGE[1]:  # also nan
            raise ValueError(f"{name} must lie in [1e-100, 1e100], got {value!r}.")
    return LocalGaussianRandomizer(sigma, clip_norm).report(gradient, random_state)
