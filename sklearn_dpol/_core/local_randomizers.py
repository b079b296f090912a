"""The user's side of the local-DP protocol of seed 001: the local Laplace randomiser.

A user ``t`` holds its data, receives the public iterate ``w_t``, computes a
subgradient, clips each coordinate to ``[-1, 1]`` and reports

    g~_t = clip(g_t) + xi_t,   density of xi_t  propto  exp(-sum_j tau_tj |z_j| / 2),

i.e. independent Laplace noise of scale ``2 / tau_tj`` per coordinate, with
``tau_tj = epsilon_t * weight_j``. For ``|g_tj| <= 1`` coordinate ``j`` is
``tau_tj``-LDP (sensitivity 2) and the report is ``epsilon_t = sum_j tau_tj``
LDP (Lemma 1; the clipping is what makes ``|g_tj| <= 1`` true). A coordinate
with ``weight_j = 0`` is public: reported without noise, it carries no
guarantee (``tau_j = inf`` in the seed's section 4). ``epsilon_t = inf`` means
the user adds no noise at all.

Nothing in the learner (:mod:`sklearn_dpol._core.parameter_free`) imports this
module or sees ``epsilon_t``, ``tau`` or the noise: it receives ``g~_t`` only.
"""

import numpy as np

__all__ = [
    "LocalLaplaceRandomizer",
    "normalise_feature_weights",
    "check_sample_epsilon",
]


def normalise_feature_weights(feature_weights, n_dims):
    """The budget split over coordinates: nonnegative, summing to 1 over the nonzero ones.

    ``None`` splits uniformly over all ``n_dims`` coordinates.
    """
    if feature_weights is None:
        return np.full(n_dims, 1.0 / n_dims)
    weights = np.asarray(feature_weights, dtype=np.float64)
    if weights.ndim != 1 or weights.shape[0] != n_dims:
        raise ValueError(
            f"feature_weights has shape {weights.shape}; expected ({n_dims},): one weight "
            "per feature, plus one for the intercept when fit_intercept=True (last)."
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("feature_weights must be finite and nonnegative.")
    total = weights.sum()
    if not total > 0:
        raise ValueError(
            "feature_weights must have at least one positive weight; all-zero weights "
            "would make every coordinate public. Use epsilon=np.inf for no privacy."
        )
    return weights / total


def check_sample_epsilon(sample_epsilon, n_samples, default):
    """Per-user budgets: ``default`` for everyone, or a validated array (``inf`` allowed)."""
    if sample_epsilon is None:
        return np.full(n_samples, float(default))
    eps = np.asarray(sample_epsilon)
    if eps.dtype.kind not in "fiub":
        raise ValueError(f"sample_epsilon must be numeric, got dtype {eps.dtype}.")
    eps = eps.astype(np.float64)
    if eps.ndim != 1 or eps.shape[0] != n_samples:
        raise ValueError(
            f"sample_epsilon has shape {eps.shape}; expected ({n_samples},): one budget "
            "per row of X."
        )
    if np.any(np.isnan(eps)):
        raise ValueError("sample_epsilon contains NaN.")
    if np.any(eps <= 0):
        raise ValueError(
            "sample_epsilon must be > 0 (np.inf means no noise for that user); got "
            f"min {eps.min()!r}."
        )
    return eps


class LocalLaplaceRandomizer:
    """The local Laplace randomiser of one user with budget split ``weights``.

    Parameters
    ----------
    weights : ndarray of shape (n_dims,)
        Normalised budget split (see :func:`normalise_feature_weights`).
    """

    def __init__(self, weights):
        self.weights = np.asarray(weights, dtype=np.float64)

    def tau(self, epsilon):
        """Per-coordinate budgets ``tau_j = epsilon * weight_j``; ``inf`` where no noise."""
        with np.errstate(invalid="ignore"):
            tau = epsilon * self.weights
        return np.where((self.weights > 0) & np.isfinite(epsilon), tau, np.inf)

    def scales(self, epsilon):
        """Laplace scales ``2 / tau_j`` (0 where no noise is added)."""
        return 2.0 / self.tau(epsilon)

    @staticmethod
    def clip(gradient):
        """Coordinates clipped to ``[-1, 1]``: the premise of Lemma 1."""
        return np.clip(gradient, -1.0, 1.0)

    def report(self, gradient, epsilon, unit_noise):
        """``clip(g) + scale * unit_noise``; ``unit_noise`` is standard Laplace (scale 1)."""
        scales = self.scales(epsilon)
        clipped = self.clip(np.asarray(gradient, dtype=np.float64))
        return np.where(scales > 0, clipped + scales * unit_noise, clipped)

    def logpdf(self, z, gradient, epsilon):
        """Log density of the report ``z`` given the (unclipped) gradient, per coordinate.

        Coordinates without noise are point masses and have no density: ``nan``.
        """
        tau = self.tau(epsilon)
        clipped = self.clip(np.asarray(gradient, dtype=np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.log(tau / 4.0) - tau * np.abs(np.asarray(z) - clipped) / 2.0
        return np.where(np.isfinite(tau), out, np.nan)
