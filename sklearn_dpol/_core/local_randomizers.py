"""The users' side of the local-DP protocols: the local Laplace randomiser of
seed 001 and the local Gaussian randomisers of seed 003 (at the end).

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

Nothing in the learners (:mod:`sklearn_dpol._core.parameter_free`,
:mod:`sklearn_dpol._core.mi_ogd`) imports this module or sees ``epsilon_t``,
``tau``, ``sigma`` or the noise: they receive the reports only.
"""

import math

import numpy as np

from .noise import sampler_state
from ..privacy._validation import MAX_FINITE_EPSILON

__all__ = [
    "LocalBanditGaussianRandomizer",
    "LocalGaussianRandomizer",
    "LocalLaplaceRandomizer",
    "LocalSampledCoordinateRandomizer",
    "normalise_feature_weights",
    "check_sample_epsilon",
]


#: The range of a Gaussian report's public scales (``sigma``, the clipping norm) and of
#: MutualInformationPrivateOGDRegressor's scalar parameters: normal doubles far from
#: both ends, so clipping and the noise grid never round into subnormals (review 127).
REPORT_SCALE_RANGE = (1e-100, 1e100)
_SMALLEST_SHARE = 1e-12


def _workspace():
    from . import _exact_kernels

    return _exact_kernels, _exact_kernels.workspace()


def normalise_feature_weights(feature_weights, n_dims):
    """The budget split over coordinates: nonnegative, summing to 1 over the nonzero ones.

    ``None`` splits uniformly over all ``n_dims`` coordinates.
    """
    if n_dims < 1:
        raise ValueError("The gradient has no coordinates: a report needs at least one.")
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
    normalised = weights / total
    # A positive weight so small that its share rounds to zero (or its Laplace
    # scale 2/(epsilon w) overflows) would silently turn a private coordinate
    # into a public one.
    if np.any((weights > 0) & (normalised < _SMALLEST_SHARE)):
        raise ValueError(
            f"feature_weights has a positive weight below {_SMALLEST_SHARE:g} of the total; "
            "its noise would be unusable or overflow. Give it a larger weight, or 0 to "
            "publish that coordinate without privacy."
        )
    return normalised


def check_sample_epsilon(sample_epsilon, n_samples, default):
    """Per-user budgets: ``default`` for everyone, or a validated array (``inf`` allowed)."""
    if sample_epsilon is None:
        return np.full(n_samples, float(default))
    eps = np.asarray(sample_epsilon)
    if eps.dtype.kind not in "fiu":   # booleans are not budgets
        raise ValueError(f"sample_epsilon must be numeric (real), got dtype {eps.dtype}.")
    eps = eps.astype(np.float64)
    if eps.ndim != 1 or eps.shape[0] != n_samples:
        raise ValueError(
            f"sample_epsilon has shape {eps.shape}; expected ({n_samples},): one budget "
            "per row of X."
        )
    if np.any(np.isnan(eps)):
        raise ValueError("sample_epsilon contains NaN.")
    # The messages quote no budget: a user's budget is that user's own (53.7).
    if np.any(eps <= 0):
        raise ValueError(
            "sample_epsilon must be > 0 (np.inf means no noise for that user); a budget "
            "is 0 or negative."
        )
    if np.any(np.isfinite(eps) & (eps > MAX_FINITE_EPSILON)):
        raise ValueError(
            f"sample_epsilon must be at most {MAX_FINITE_EPSILON:g} or np.inf (no noise for "
            "that user): a finite budget beyond it protects nothing.")
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
        tau = np.where((self.weights > 0) & np.isfinite(epsilon), tau, np.inf)
        # A NaN, zero or negative budget fails closed (infinite noise: a constant report),
        # as the kernel's laplace_scale does; only epsilon = inf (or a weight 0) adds none.
        return np.where(np.asarray(epsilon) > 0, tau, 0.0)

    def scales(self, epsilon):
        """Laplace scales ``2 / tau_j`` (0 where no noise is added, inf for a NaN budget)."""
        with np.errstate(divide="ignore"):
            return 2.0 / self.tau(epsilon)

    @staticmethod
    def clip(gradient):
        """Coordinates clipped to ``[-1, 1]``: the premise of Lemma 1."""
        return np.clip(gradient, -1.0, 1.0)

    def report(self, gradient, epsilon, rng):
        """``clip(g)`` released with Laplace noise of scale ``2 / tau_j`` per coordinate.

        Exact Laplace noise on a grid (``doc/privacy.md`` section 14): the same
        kernel the protocol runs. ``rng`` is a numpy Generator, a seed, or a
        sampler state (:func:`sampler_state`).
        """
        kernels, ws = _workspace()
        gradient = np.array(gradient, dtype=np.float64, ndmin=1)
        out = np.empty_like(gradient)
        kernels.laplace_report(gradient, self.scales(epsilon), out, ws, sampler_state(rng))
        return out

    def logpdf(self, z, gradient, epsilon):
        """Log density of the report ``z`` given the (unclipped) gradient, per coordinate.

        Coordinates without noise are point masses and have no density: ``nan``.
        """
        tau = self.tau(epsilon)
        clipped = self.clip(np.asarray(gradient, dtype=np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.log(tau / 4.0) - tau * np.abs(np.asarray(z) - clipped) / 2.0
        return np.where(np.isfinite(tau), out, np.nan)


class LocalSampledCoordinateRandomizer:
    """One sampled coordinate with a randomised sign: ``epsilon_t``-LDP, O(1) noise per user.

    The user draws a private coordinate ``j`` with probability ``p_j = weight_j``
    (the public budget split; independent of its data) and reports ``s K / p_j``
    on it, 0 on the other private coordinates, where ``s = +-1`` with
    ``P(s = 1) = (1 + g_j / K) / 2`` (on an exact 2^-62 grid) and ``K >=
    coth(epsilon_t / 2)`` is a rung of a public ladder: unbiased, ``E[report]
    = clip(g)``, and ``epsilon_t``-LDP whatever ``g`` (``doc/privacy.md``
    section 54.2; the sampling and randomised-response mechanism of Duchi,
    Jordan and Wainwright 2018 and Nguyen et al. 2016). Its variance,
    ``K^2 / p_j`` on coordinate ``j``, is below the Laplace randomiser's
    ``8 / (epsilon_t w_j)^2`` unless ``epsilon_t`` is large and the
    coordinates few (:func:`sampled_is_better`). Coordinates of weight 0 are
    public: clipped and rounded to the reports' lattice without noise, as the
    Laplace randomiser's.
    """

    def __init__(self, weights):
        from . import _exact_kernels as kernels

        self.weights = np.asarray(weights, dtype=np.float64)
        self.private = np.flatnonzero(self.weights > 0).astype(np.int64)
        p = self.weights[self.private]
        self.cumulative = np.cumsum(p)
        if self.cumulative.size:
            self.cumulative[-1] = 1.0    # the last coordinate takes the rounding's rest
        self.probabilities = np.diff(self.cumulative, prepend=0.0)
        self.inverse_p = 1.0 / p
        self.magnitudes, self.a = kernels.sign_ladder()

    def rung(self, epsilon):
        """The ladder's rung ``k`` for ``epsilon`` (``-1``: none, the report is 0)."""
        from . import _exact_kernels as kernels

        return int(kernels.sign_rung(float(epsilon), self.magnitudes))

    def magnitude(self, epsilon):
        """``K`` for ``epsilon`` (``nan`` without a rung; ``1`` at ``inf``, no noise)."""
        if epsilon == math.inf:
            return 1.0
        k = self.rung(epsilon)
        return float(self.magnitudes[k]) if k >= 0 else math.nan

    def sign_probability(self, g, epsilon):
        """``P(s = +1)`` for a clipped coordinate ``g`` as the kernel draws it (exact)."""
        from fractions import Fraction

        k = self.rung(epsilon)
        if k < 0 or epsilon == math.inf:
            raise ValueError(f"epsilon={epsilon!r} draws no sign (the report is 0, or the "
                             "rounded gradient at inf).")
        a = int(self.a[k])
        g = 0.0 if g != g else min(max(float(g), -1.0), 1.0)
        r = min(max(math.floor(g * float(a) + 0.5), -a), a)
        return Fraction((1 << 61) + r, 1 << 62)

    def report(self, gradient, epsilon, rng):
        """One report; ``rng`` as in :func:`sampler_state` (the protocol's kernel)."""
        from . import _exact_kernels as kernels

        gradient = np.array(gradient, dtype=np.float64, ndmin=1)
        out = np.empty_like(gradient)
        kernels.sampled_report(gradient, float(epsilon), self.private, self.cumulative,
                               self.inverse_p, self.magnitudes, self.a, out,
                               sampler_state(rng))
        return out

    def total_variance(self, epsilon):
        """``sum_j K^2 / p_j``: the report's summed second moment about 0 (a bound on its
        variance, public)."""
        return float(self.magnitude(epsilon) ** 2 * np.sum(self.inverse_p))


def laplace_total_variance(weights, epsilon):
    """``sum_j 2 (2 / (epsilon w_j))^2`` over the private coordinates: the Laplace reports'
    summed noise variance (public)."""
    w = np.asarray(weights, dtype=np.float64)
    w = w[w > 0]
    return float(np.sum(8.0 / (epsilon * w) ** 2))


def sampled_is_better(weights, epsilon):
    """The public rule of ``randomizer="auto"``: the sampled coordinate when its summed
    second moment is below the Laplace noise's variance at ``epsilon`` (finite)."""
    if not (0.0 < epsilon < math.inf):
        return True
    sampled = LocalSampledCoordinateRandomizer(weights)
    if sampled.rung(epsilon) < 0:
        return False
    return sampled.total_variance(epsilon) < laplace_total_variance(weights, epsilon)


class LocalGaussianRandomizer:
    """The local Gaussian randomiser of seed 003 (Algorithm 1, line 4), with clipping.

    A user reports ``z~ = clip_L(g) + sigma * xi``, ``xi ~ N(0, I)``, where
    ``clip_L(g) = g min(1, L / ||g||_2)``. Two users' clipped gradients differ
    by at most ``2 L`` in L2 (antipodal gradients attain it), so the report is
    ``mu``-GDP with ``mu = 2 L / sigma`` under replace-one (local) neighbours.
    The seed's own measure, ``I(g; z~) <= (d/2) ln(1 + L^2 / (d sigma^2))``,
    is the capacity of the Gaussian channel (:attr:`mutual_information`).

    Parameters
    ----------
    sigma : float
        Noise standard deviation per coordinate, ``> 0``.
    clip_norm : float
        ``L``, the L2 clipping norm.
    """

    def __init__(self, sigma, clip_norm):
        self.sigma = float(sigma)
        self.clip_norm = float(clip_norm)

    @property
    def sensitivity(self):
        """Replace-one L2 sensitivity of the clipped gradient: ``2 L``."""
        return 2.0 * self.clip_norm

    @property
    def mu(self):
        return self.sensitivity / self.sigma

    def mutual_information(self, n_dims):
        """``(d/2) ln(1 + L^2 / (d sigma^2))`` nats (seed 003, Theorem 1)."""
        return 0.5 * n_dims * math.log1p(self.clip_norm ** 2 / (n_dims * self.sigma ** 2))

    def clip(self, gradient):
        """``g min(1, L / ||g||_2)``; the zero vector when ``||g||^2`` is not finite.

        The protocol kernel's rule (``_mi_kernels._full_gradient``): a gradient with
        a NaN or an infinite coordinate, or whose squared norm overflows, is replaced
        by 0, a data-independent point of the ball. (A NaN norm compared with ``L``
        is false, so the gradient used to pass unclipped: an unbounded report.)
        """
        g = np.asarray(gradient, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            sq = float(np.sum(g * g))
        if not math.isfinite(sq):
            return np.zeros_like(g)
        norm = math.sqrt(sq)
        return g * (self.clip_norm / norm) if norm > self.clip_norm else g

    def report(self, gradient, rng):
        """``clip_L(g)`` released with exact Gaussian noise ``sigma`` on a grid.

        The same kernel the protocol runs; ``rng`` as in :func:`sampler_state`.
        """
        kernels, ws = _workspace()
        clipped = np.array(self.clip(gradient), dtype=np.float64, ndmin=1)
        out = np.empty_like(clipped)
        kernels.gaussian_report(clipped, self.sigma, out, ws, sampler_state(rng))
        return out

    def logpdf(self, z, gradient):
        """Log density of the report ``z`` given the (unclipped) gradient."""
        diff = np.asarray(z, dtype=np.float64) - self.clip(gradient)
        d = diff.shape[-1]
        return (-0.5 * np.sum(diff * diff, axis=-1) / self.sigma ** 2
                - d * (math.log(self.sigma) + 0.5 * math.log(2 * math.pi)))


class LocalBanditGaussianRandomizer:
    """The user side of seed 003's Algorithm 2 (lines 3-7), made private.

    The user evaluates its loss once, ``phi = f(w + delta e)`` with ``e``
    uniform on the unit sphere (drawn by the user, independent of the data),
    clips it to ``[0, F]`` and reports
    ``z~ = (d / delta) phi e + sigma * xi``, ``xi ~ N(0, I)``. Given ``e``, two
    users' means differ by ``(d / delta) |phi - phi'| <= d F / delta`` in L2,
    and a mixture over the same data-independent ``e`` of ``mu``-GDP
    mechanisms is ``mu``-GDP: ``mu = d F / (delta sigma)``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation per coordinate, ``> 0``.
    loss_bound : float
        ``F``; loss values are clipped to ``[0, F]``.
    exploration : float
        ``delta``, the exploration radius.
    n_dims : int
        ``d``.
    """

    def __init__(self, sigma, loss_bound, exploration, n_dims):
        self.sigma = float(sigma)
        self.loss_bound = float(loss_bound)
        self.exploration = float(exploration)
        self.n_dims = int(n_dims)

    @property
    def sensitivity(self):
        """Replace-one L2 sensitivity given ``e``: ``d F / delta``."""
        return self.n_dims * self.loss_bound / self.exploration

    @property
    def mu(self):
        return self.sensitivity / self.sigma

    def mutual_information(self):
        """``(d/2) ln(1 + P / (d sigma^2))``, ``P = (d F / delta)^2`` (seed 003, Theorem 3)."""
        return 0.5 * self.n_dims * math.log1p(
            self.sensitivity ** 2 / (self.n_dims * self.sigma ** 2))

    def mean(self, phi, direction):
        """``(d / delta) clip(phi, 0, F) e``: the one-point gradient estimate."""
        phi = min(max(float(phi), 0.0), self.loss_bound)
        return (self.n_dims * phi / self.exploration) * np.asarray(direction, dtype=np.float64)

    def report(self, phi, direction, rng):
        """The one-point estimate released with exact Gaussian noise ``sigma`` on a grid."""
        kernels, ws = _workspace()
        mean = np.array(self.mean(phi, direction), dtype=np.float64, ndmin=1)
        out = np.empty_like(mean)
        kernels.gaussian_report(mean, self.sigma, out, ws, sampler_state(rng))
        return out

    def logpdf(self, z, phi, direction):
        """Log density of ``z`` given the loss value and the direction."""
        diff = np.asarray(z, dtype=np.float64) - self.mean(phi, direction)
        return (-0.5 * np.sum(diff * diff, axis=-1) / self.sigma ** 2
                - self.n_dims * (math.log(self.sigma) + 0.5 * math.log(2 * math.pi)))


def sphere_directions(rng, n, n_dims):
    """``n`` directions uniform on the unit sphere of ``R^n_dims`` (normalised normals)."""
    g = rng.standard_normal(size=(n, n_dims))
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    bad = norms[:, 0] == 0.0  # probability 0; keep the output on the sphere anyway
    g[bad, 0], norms[bad] = 1.0, 1.0
    return g / norms
