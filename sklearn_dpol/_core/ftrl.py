"""DP-FTRL for linear classifiers (Kairouz et al. 2021) on noisy gradient prefix sums.

Step ``k`` of a stream sums the clipped per-record gradients of a batch into
``g_k``, each taken at the lookahead point ``Q_k = W_k + beta (W_k - W_{k-1})``
of the models released before the batch (a public point); a
prefix-sum mechanism releases ``G_k ~ g_1 + ... + g_k`` with Gaussian noise,
and the next model is the follow-the-regularized-leader solution

    W_{k+1} = argmin_{||w|| <= radius}  <M_k, w> + sum_{s <= k} (lam_s - lam_{s-1})/2 ||w - W_s||^2

with ``lam_k = alpha * max(t_k, NOISE_FLOOR * r_k)`` (``t_k`` samples so far,
FTRL-Proximal of McMahan 2011, centred at the released models; ``r_k`` the noise
of the released prefix sum counted in records, a public value:
:func:`regularisation`) and ``M_k`` the heavy-ball
momentum of the noisy prefix sums (Kairouz et al. 2021, section 4): with
``v_k = gamma v_{k-1} + (G_k - G_{k-1})``, ``M_k = (1 - gamma) sum_{s<=k} v_s``.
Everything after ``G_k`` is post-processing of released values; the minimiser
of an isotropic quadratic over a ball is the projection of the unconstrained one.
The lookahead (Nesterov's extrapolation, ``beta = 0.9``) only moves the point
where the next gradients are taken to another public point.

Only the prefix sums touch the data, so the privacy of the stream is that of
the prefix-sum mechanism at the replace-one sensitivity of one step's
gradient sum, ``2 L sqrt(n_problems)`` (``doc/privacy.md``, section 2.1),
whatever the gradients' adaptivity. The mechanism is the layer's BLT
matrix factorization by default (one step per call; the binary trees stay
as options): with adaptively chosen gradients and a record passed once, the
noised ``C g`` moves by at most ``2 L sqrt(n_problems) max_j ||C[:, j]||``
given the transcript (``doc/privacy.md``, "DP-FTRL on a matrix-factorization
mechanism").
"""

import math

import numpy as np
from scipy.sparse import issparse

from . import losses, sets
from .losses import HINGE, LOG_LOSS  # noqa: F401  (the loss names)

# Heavy-ball momentum of the prefix sums (post-processing: no privacy effect).
# Kairouz et al. use 0.9; on the covertype stream of the benchmark (84 steps
# of 1,000 rows) 0.95 was better at every epsilon, 0.98 worse, with the tree;
# with the BLT factorization 0.95 beat 0.97 at eps = 0.5, 1 and 2 (6 seeds:
# 0.718 / 0.740 / 0.751 against 0.709 / 0.735 / 0.745), and 0.9 and no
# momentum were far behind (0.694 and 0.63 at eps = 0.5, 3 seeds).
MOMENTUM = 0.95
# The regularisation counts at least NOISE_FLOOR times the released prefix sum's noise,
# in records (regularisation): the noise then moves the unprojected model by about
# 1/NOISE_FLOOR of the ball's radius L/alpha or less (with the default stream alpha, three
# times the public prior's norm LOGIT_SCALE/L), and a stream's first calls on a small
# batch release models centred on the start instead of noise projected onto the ball.
# On covertype (review 128's loader; eps 0.5 / 1 / 2, horizon None and n, first batch 37
# or 100 then batches of 2,000, 6 seeds) floors 16 to 128 all came within 0.008 of the
# 1,000-row start, 4 within 0.024 and none (the old rule) 0.027 to 0.166 below it; 32 is
# in the middle of the flat range (doc/privacy.md 58.7; benchmarks/bench_igd_first_batch.py).
NOISE_FLOOR = 32.0
# Gradients are taken at W_k + LOOKAHEAD (W_k - W_{k-1}), a public point. On the
# same stream it gained 0.01 to 0.04 accuracy over the released model itself.
LOOKAHEAD = 0.9


def prefix_sum_mechanism(dim, sensitivity, mu, horizon, mechanism="auto"):
    """The continual-release mechanism of the gradient prefix sums (one place to swap).

    Parameters
    ----------
    dim : int
        Length of each step's vector.
    sensitivity : float
        Replace-one L2 sensitivity of one step's vector (a record is in one step).
    mu : float
        GDP parameter of the whole stream (``inf``: no noise).
    horizon : int or None
        Number of steps (``partial_fit`` calls), or ``None`` for an unbounded stream.
    mechanism : {"auto", "blt", "sqrt", "tree", "honaker"}, default="auto"
        The stream-mechanism layer's name (``privacy/_streams.py``); ``"auto"``
        is ``"blt"``. Every mechanism takes one position per call: the
        factorizations one step per ``advance``, and the trees see one
        :class:`StepVector` (a single "row") per call.

    Returns
    -------
    mechanism : object
        With ``advance(stats, rng)`` (returns the noisy prefix sum), ``t``,
        ``sigma``, ``spent_fraction()``, ``current_variance()``, ``describe()``
        and ``snapshot()``. The default, a buffered linear Toeplitz
        factorization ``A = B C`` (4 buffers; its unbounded variant for
        ``horizon=None``), noises ``C g`` with
        ``sigma = (1 + ROUNDING_ALLOWANCE) sensitivity * max_j ||C[:, j]|| / mu``
        (the layer's rounding allowance, ``privacy/_streams.py``; callers refuse
        a call past it with its ``check_rounding``); with adaptively chosen
        gradients this is ``mu``-GDP for a record passed once
        (``doc/privacy.md``, "DP-FTRL on a matrix-factorization mechanism").
    """
    from ..privacy._streams import make_stream_mechanism

    return make_stream_mechanism(mechanism, dim=dim, sensitivity=sensitivity, mu=mu,
                                 horizon=horizon)


class StepVector:
    """One stream position holding one vector, in the form the mechanisms read.

    A tree sees it as one row (one position per call); a factorization as a
    step whose sum is the vector itself.
    """

    n_rows = 1

    def __init__(self, vector):
        self.vector = np.asarray(vector, dtype=np.float64)
        self.dim = self.vector.size

    def sum(self, lo, hi):
        return self.vector.copy() if hi > lo else np.zeros(self.dim)

    def atoms(self, lo, hi):
        return self.vector[np.newaxis, :].copy()[: hi - lo]


def released_variance(mechanism):
    """The mechanism's ``current_variance()``, ``inf`` where it overflows a double.

    The variances are ``sigma^2`` times a coefficient, computed on Python floats,
    which raise ``OverflowError`` above ``sigma ~ 1e154`` (explicit extreme bounds
    with a small epsilon): the floor then takes its cap (:func:`regularisation`)
    instead of failing after the data were read (review 130).
    """
    try:
        return mechanism.current_variance()
    except OverflowError:
        return math.inf


def noise_records(noise_variance, dim, sensitivity):
    """The released prefix sum's noise, counted in records: ``2 sqrt(dim var) / Delta``.

    ``noise_variance`` is the per-coordinate variance of the last released prefix
    sum (the mechanism's ``current_variance()``, a function of its calibration and
    step count only), ``dim`` the vector's length and ``sensitivity`` one step's
    replace-one sensitivity ``Delta = 2 b sqrt(K)``. The sum of ``t`` records'
    gradients has norm at most ``t b sqrt(K) = t Delta / 2``, so the noise's
    expected norm (about ``sqrt(dim var)``) is that of the worst-case gradients
    of this many records. Public values only (``0`` without noise).
    """
    spread = float(np.max(noise_variance)) if np.size(noise_variance) else 0.0
    if not spread > 0.0:
        return 0.0
    return 2.0 * math.sqrt(dim * spread) / float(sensitivity)


def regularisation(alpha, samples, noise_variance, dim, sensitivity, previous=0.0):
    """FTRL's ``lam_k = max(lam_(k-1), alpha max(t_k, NOISE_FLOOR r_k))``: public values only.

    ``t_k = samples`` (the rows so far), ``r_k`` = :func:`noise_records`. With
    ``lam_k = alpha t_k`` alone the noise moves the model by about
    ``sqrt(dim var) / (alpha t_k)`` against a data term of norm at most
    ``b / alpha``: on a small first batch (``t_k < r_k``) the released model is
    mostly noise, projected onto the ball, and later models are pulled toward it.
    The floor keeps the noise's share of the unprojected model at most
    ``1 / NOISE_FLOOR`` of the ball's radius, and changes nothing once
    ``t_k >= NOISE_FLOOR r_k`` (or without noise); the floor is capped at ``2^53``
    records (:data:`~sklearn_dpol._core.igd.MAX_ALPHA`). Taking the maximum with the
    previous value keeps ``lam`` nondecreasing (the proximal terms' weights
    ``lam_k - lam_(k-1)`` stay nonnegative). It reads no data: the rows so far
    and the mechanism's noise are public (``doc/privacy.md``, 58.7).
    """
    # At most 2^53 records, the count igd.MAX_ALPHA keeps alpha t finite for: an extreme
    # public calibration (tiny mu, huge dim) cannot overflow lam to inf.
    floor = min(NOISE_FLOOR * noise_records(noise_variance, dim, sensitivity), 2.0 ** 53)
    return max(float(previous), float(alpha) * max(float(samples), floor))


def step_sensitivity(lipschitz, n_problems, gradient_bound=None):
    """Replace-one sensitivity of one step's gradient sum, all problems together.

    Each per-record gradient ``phi'(m) y z`` has norm at most ``L`` (``|phi'| <= 1``,
    ``||z|| <= L``), and at most ``gradient_bound`` when clipped to it; replacing
    a record changes one gradient of each binary problem by at most twice
    that. A relative margin of ``1e-9`` covers rounding of the clipped rows.
    """
    bound = lipschitz if gradient_bound is None else min(lipschitz, gradient_bound)
    return 2.0 * bound * math.sqrt(n_problems) * (1 + 1e-9)


def coordinate_fraction(n_problems):
    """Bound on a coordinate of one record's gradient vector, over :func:`step_sensitivity`.

    Each problem's gradient has norm at most ``b`` and the sensitivity is
    ``2 b sqrt(n_problems)`` (with a margin above it), so every coordinate is
    at most ``1 / (2 sqrt(n_problems))`` of it: the ``coordinate_fraction`` of
    the stream layer's rounding check (``privacy/_streams.py``, ``check_rounding``).
    """
    return 0.5 / math.sqrt(n_problems)


def gradient_sums(W, X, row_scale, Y, *, loss, intercept_value, gradient_bound=None,
                  sample_weight=None):
    """Sum over the rows of the clipped gradients of each binary problem at ``W``.

    ``W`` has one row per problem (weights, then the intercept weight when it
    has one more column than ``X``), ``Y`` the {-1, +1} labels of each problem.
    With ``gradient_bound``, each record's gradient of each problem is scaled
    down to at most that L2 norm. ``sample_weight`` (in [0, 1]) multiplies
    each record's (capped) gradient, whose norm stays within the bound.
    Returns an array shaped like ``W``.
    """
    p = X.shape[1]
    sparse = issparse(X)                       # CSR: sparse products, never densified
    if sparse:
        rows = X.multiply(row_scale[:, np.newaxis]).tocsr()
    else:
        rows = X * row_scale[:, np.newaxis]    # clipped rows (scale first: no overflow)
    intercept = W.shape[1] > p
    margins = Y * ((rows @ W[:, :p].T).T if sparse else W[:, :p] @ rows.T)
    if intercept:
        margins += Y * (W[:, p:] * intercept_value)
    # phi'(m) y: -sigmoid(-m) y (log loss) or a subgradient -[m < 1] y (hinge).
    slopes = Y * losses.margin_derivatives(loss, margins)
    if gradient_bound is not None:
        # ||gradient|| = |slope| ||z||: cap |slope| at gradient_bound / ||z||.
        sq = (np.asarray(rows.multiply(rows).sum(axis=1)).ravel() if sparse
              else np.einsum("ij,ij->i", rows, rows))
        norms = np.sqrt(sq
                        + (intercept_value * intercept_value if intercept else 0.0))
        with np.errstate(divide="ignore"):
            cap = np.where(norms > 0, gradient_bound / norms, np.inf)
        slopes = np.sign(slopes) * np.minimum(np.abs(slopes), cap)
    if sample_weight is not None:
        slopes = slopes * sample_weight         # |c_i| <= 1: the norm bound holds
    sums = np.empty_like(W)
    sums[:, :p] = (rows.T @ slopes.T).T if sparse else slopes @ rows
    if intercept:
        sums[:, p] = intercept_value * slopes.sum(axis=1)
    return sums


class FTRLState:
    """The public state of an FTRL stream: every array here is released or post-processed.

    The prefix-sum mechanism (which holds exact, private sums) is kept apart.
    """

    def __init__(self, W0, lam0, momentum=MOMENTUM, lookahead=LOOKAHEAD):
        self.W = np.array(W0, dtype=np.float64)
        self.W_before = self.W                  # the model released before W
        self.lookahead = float(lookahead)
        self.lam = float(lam0)
        self.anchor = self.lam * self.W
        self.momentum = float(momentum)
        self.previous = np.zeros_like(self.W)   # last noisy prefix sum
        self.velocity = np.zeros_like(self.W)
        self.velocity_sum = np.zeros_like(self.W)

    def step(self, prefix, lam, radius):
        """A new state after the noisy prefix sum ``prefix`` and regularisation ``lam``."""
        new = object.__new__(FTRLState)
        new.momentum, new.lookahead, new.W_before = self.momentum, self.lookahead, self.W
        new.previous = np.asarray(prefix, dtype=np.float64).reshape(self.W.shape)
        new.velocity = self.momentum * self.velocity + (new.previous - self.previous)
        new.velocity_sum = self.velocity_sum + new.velocity
        leader = (1.0 - self.momentum) * new.velocity_sum
        new.anchor = self.anchor + (lam - self.lam) * self.W
        new.lam = float(lam)
        W = (new.anchor - leader) / new.lam
        new.W = sets.project_rows_l2(W, radius)
        return new

    def query(self):
        """Where the next batch's gradients are taken: ``W + beta (W - W_before)``, public."""
        return self.W + self.lookahead * (self.W - self.W_before)
