"""Mutual-information-private online gradient descent (seed 003, Algorithms 1 and 2).

The learner side of the protocol: :class:`LazyOGDLearner` keeps
``theta = -sum_s z~_s`` and plays ``w_{t+1} = Pi_B(eta_t theta_{t+1})``, the
projection on the L2 ball of radius ``B`` (Algorithm 1, lines 7-8; Algorithm
2, lines 10-11). It receives the noisy reports ``z~_t`` and nothing else; the
users' side (clipping, the exploration direction, the Gaussian noise) lives in
:mod:`sklearn_dpol._core.local_randomizers` and in the user-side kernels.

Step size: a constant ``eta`` (the seed's algorithm as written) or the anytime
``eta_t = B / (G sqrt(t))`` after ``t`` reports, where ``G^2`` bounds
``E ||z~_t||^2``: the seed's Theorem 2 choice ``eta = B / sqrt((L^2 + d
sigma^2) T)`` (line 86) with the horizon ``T`` replaced by the current ``t``.
"""

import math

import numpy as np

from . import losses
from .losses import ABSOLUTE, HUBER, SQUARED  # noqa: F401  (the loss names)

FULL = "full"
BANDIT = "bandit"
_LOSS_CODES = {name: losses.code(name) for name in losses.RESIDUAL_LOSSES}
_FEEDBACK_CODES = {FULL: 0, BANDIT: 1}
HUGE = 1e150


# ---------------------------------------------------------------------------
# Bounds (public: they depend on hyperparameters only).
# ---------------------------------------------------------------------------

def feature_norm(data_norm, intercept):
    """L2 norm of ``(x, 1)`` (or ``x``) after clipping rows to ``data_norm``, rounded to nearest.

    Only :func:`loss_bound` uses it, and a report's loss is *clipped* to that ``F``, so ``F``
    is a threshold the clip enforces, not a premise of a sensitivity: it needs no upward
    rounding (:func:`.losses.norm_bound`, which the estimators' sensitivities use).
    """
    return math.hypot(data_norm, 1.0) if intercept else float(data_norm)


def loss_value(r, loss, huber_threshold=1.0):
    """The loss of residual ``r`` (:func:`.losses.values`, the kernel's formula)."""
    return losses.values(loss, r, huber_threshold)


def loss_bound(loss, huber_threshold, query_radius, data_norm, y_bound, intercept):
    """``F``: the loss at any point of norm ``<= query_radius`` on clipped data.

    ``|r| = |<w, (x, 1)> - y| <= query_radius ||(x, 1)|| + y_bound``; the loss
    is increasing in ``|r|``.
    """
    r = query_radius * feature_norm(data_norm, intercept) + y_bound
    return float(loss_value(r, loss, huber_threshold))


def mutual_information_bound(n_dims, power, sigma):
    """``C = (d/2) ln(1 + P / (d sigma^2))`` nats: the capacity of ``d`` parallel
    Gaussian channels under the power constraint ``E ||z||^2 <= P`` (Theorems 1, 3)."""
    return 0.5 * n_dims * math.log1p(power / (n_dims * sigma * sigma))


# ---------------------------------------------------------------------------
# The learner: state and updates from noisy reports only.
# ---------------------------------------------------------------------------

class LazyOGDLearner:
    """Lazy projected OGD on the L2 ball of ``radius`` (the seed's learner).

    Parameters
    ----------
    n_dims : int
    radius : float
        ``B``.
    eta : float
        Constant step, or with ``anytime=True`` the numerator of
        ``eta_t = eta / sqrt(t)``.
    anytime : bool
    """

    def __init__(self, n_dims, *, radius, eta, anytime):
        self.n_dims = int(n_dims)
        self.radius = float(radius)
        self.eta = float(eta)
        self.anytime = bool(anytime)
        self.t = 0
        self.theta = np.zeros(self.n_dims)
        self.w_sum = np.zeros(self.n_dims)

    def _config(self):
        return self.eta, self.anytime, self.radius

    def predict(self):
        """The iterate the learner plays next."""
        from . import _mi_kernels as kernels

        out = np.empty(self.n_dims)
        kernels.learner_predict(self.theta, self.t, *self._config(), out)
        return out

    def average(self):
        """Average of the iterates played so far (zeros before the first round)."""
        return self.w_sum / self.t if self.t else np.zeros(self.n_dims)

    def update(self, report):
        """Receive one noisy report ``z~_t``."""
        from . import _mi_kernels as kernels

        self.w_sum += self.predict()
        kernels.learner_update(self.theta, np.asarray(report, dtype=np.float64))
        self.t += 1

    def replay(self, reports):
        """Receive a sequence of reports (rows), as :meth:`update` one at a time."""
        from . import _mi_kernels as kernels

        reports = np.ascontiguousarray(reports, dtype=np.float64).reshape(-1, self.n_dims)
        kernels.learner_replay(reports, self.theta, self.t, self.w_sum, *self._config())
        self.t += reports.shape[0]

    def copy(self):
        new = type(self).__new__(type(self))
        new.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v)
                             for k, v in self.__dict__.items()})
        return new

    def state(self):
        """The learner's numeric state (for comparisons in tests)."""
        return {k: np.copy(v) for k, v in sorted(self.__dict__.items())}


# ---------------------------------------------------------------------------
# The protocol: users and learner, round by round.
# ---------------------------------------------------------------------------

def run_protocol(learner, X, y, rng, directions, *, loss, huber_threshold, data_norm, y_bound,
                 intercept, feedback, clip_norm, exploration, loss_bound, sigma,
                 sample_weight=None):
    """Rows of ``(X, y)`` as users, in order, against ``learner`` (updated in place).

    User ``i`` adds exact Gaussian noise (the public randomiser's kernel, its
    random bits from ``rng``: a numpy Generator or an exact sampler state) and,
    for bandit feedback, uses ``directions[i]`` (unit vector); the kernel hands
    the learner only the reports. ``sample_weight`` (one weight in [0, 1] per
    row, validated by the caller, or ``None``) multiplies each user's clipped
    gradient (full) or clipped loss value (bandit) before its noise
    (``doc/privacy.md`` 57.5).
    """
    from . import _mi_kernels as kernels
    from .noise import sampler_state

    if sample_weight is not None and np.shape(sample_weight) != (X.shape[0],):
        raise ValueError("sample_weight must hold one weight per row of X.")

    kernels.run_protocol(
        np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64),
        bool(intercept), _LOSS_CODES[loss], float(huber_threshold), float(data_norm),
        float(y_bound),
        _FEEDBACK_CODES[feedback], float(clip_norm), float(exploration), float(loss_bound),
        float(sigma), sampler_state(rng),
        np.ascontiguousarray(directions, dtype=np.float64),
        (np.zeros(0) if sample_weight is None
         else np.ascontiguousarray(sample_weight, dtype=np.float64)),
        learner.theta, learner.t, learner.w_sum, *learner._config(),
    )
    learner.t += X.shape[0]
    return learner


def _clipped_row(x, data_norm):
    """``x`` clipped to L2 norm ``data_norm``, as the kernel's ``_row_scale`` does.

    A finite row near 1.8e308 has an overflowing squared norm: its norm is
    then taken as ``largest * ||x / largest||`` (the factor rounded down).
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        sq = float(np.dot(x, x))
    if sq < 1e280:
        norm = np.sqrt(sq)
        return x * (data_norm / norm) if norm > data_norm else x
    largest = float(np.max(np.abs(x)))
    scale = (data_norm / largest) / float(np.sqrt(np.sum((x / largest) ** 2)))
    scale = min(1.0, scale * (1.0 - 4.0 * (x.size + 2) * np.finfo(np.float64).eps))
    if scale < np.finfo(np.float64).tiny:
        scale = max(scale - 1e-323, 0.0)
    return scale * x


def user_gradient(w, x, y, *, loss, huber_threshold=1.0, data_norm, y_bound, intercept):
    """A user's subgradient at ``w`` on its clipped row (before the L-clipping), numpy."""
    x = _clipped_row(x, data_norm)
    x_aug = np.append(x, 1.0) if intercept else x
    r = float(np.dot(w, x_aug)) - min(max(float(y), -y_bound), y_bound)
    return losses.loss_derivative(r, losses.code(loss), huber_threshold) * x_aug


def user_loss(w, x, y, *, loss, huber_threshold=1.0, data_norm, y_bound, intercept):
    """A user's loss at ``w`` on its clipped row, numpy."""
    x = _clipped_row(x, data_norm)
    x_aug = np.append(x, 1.0) if intercept else x
    r = float(np.dot(w, x_aug)) - min(max(float(y), -y_bound), y_bound)
    return float(loss_value(r, loss, huber_threshold))


def run_protocol_python(learner, X, y, randomizer, rng, directions=None, *, loss,
                        huber_threshold=1.0, data_norm, y_bound, intercept):
    """The same protocol in plain Python with separate objects (reference for tests).

    ``randomizer`` is a :class:`LocalGaussianRandomizer` (full feedback) or a
    :class:`LocalBanditGaussianRandomizer` (bandit). Returns the reports the
    learner received.
    """
    from .noise import sampler_state

    state = sampler_state(rng)      # one stream of random bits, as in the kernel
    reports = []
    kw = dict(loss=loss, huber_threshold=huber_threshold, data_norm=data_norm,
              y_bound=y_bound, intercept=intercept)
    for i in range(X.shape[0]):
        w = learner.predict()
        if directions is None:
            report = randomizer.report(user_gradient(w, X[i], y[i], **kw), state)
        else:
            phi = user_loss(w + randomizer.exploration * directions[i], X[i], y[i], **kw)
            report = randomizer.report(phi, directions[i], state)
        learner.update(report)
        reports.append(report)
    return np.array(reports).reshape(X.shape[0], learner.n_dims)
