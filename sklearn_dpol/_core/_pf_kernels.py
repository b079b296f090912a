"""Numba kernels of the parameter-free local-DP protocol (seed 001, Algorithms 1-3).

Imported lazily by :mod:`sklearn_dpol._core.parameter_free` so that
``import sklearn_dpol`` does not load numba.

The 1-D potential learner (Algorithm 1) plays, with ``L = -sum g~`` and
``B = b + sum g~^2`` (conjugate prior) or ``B = sum g~^2`` (improper prior),

    w = E_P[v exp(L v - B v^2)]           (equation (5), P on [-C, C], C = 1/(5G))
      = 2 K_1(L, B) / Z                   conjugate prior exp(-b v^2) / Z
      = 2 K_0(L, B)                       improper prior 1 / |v|

where ``K_p = int_0^C v^p sinh(L v) exp(-B v^2) dv`` (w is odd in L). Every
evaluation returns ``log|w|`` and the sign; the closed forms are split into
regimes (``a = L / (2 sqrt B)``, ``c = C sqrt B``) so that no branch cancels
or overflows; ``doc/_draft_parameter_free.md`` derives them. scipy.special is
not available here: ``erfcx`` is ``exp(x^2) erfc(x)`` below 3 and its
continued fraction above, the same continued fraction that gives
``1 - sqrt(pi) x erfcx(x)`` without cancellation.

The protocol is split as in the seed: :func:`user_report` is the user's side
(subgradient, clipping to [-1, 1], the local Laplace randomiser with the
user's budgets); the ``learner_*`` functions only ever receive the noisy
report ``g~``. :func:`run_coordinate_protocol` and
:func:`run_reduction_protocol` interleave the two, round by round.
"""

import math

import numpy as np
from numba import njit

from ._exact_kernels import (LAPLACE_REPORT_LATTICE, WORKSPACE_DIGITS, laplace_report,
                             laplace_report_chunked, lattice_entry, noise_source,
                             pick_coordinate, randomized_sign, sampled_report, settle_noise,
                             sign_rung)
from ._loss_kernels import ABSOLUTE_CODE as ABSOLUTE  # noqa: F401  (the codes of .losses)
from ._loss_kernels import HUBER_CODE as HUBER  # noqa: F401
from ._loss_kernels import loss_derivative
from ._sum_kernels import LANES, lane_dot, lane_total

CONJUGATE = 0
IMPROPER = 1

SQRT_PI = math.sqrt(math.pi)
LOG_SQRT_PI_OVER_4 = math.log(SQRT_PI / 4.0)
LOG2 = math.log(2.0)
# |w_t| is capped here so that the running averages stay finite; the cap binds
# only after an exponential run of same-signed gradients (log|w| ~ C |L|).
LOG_W_CAP = math.log(1e100)
_CF_THRESHOLD = 3.0
# From here on erf is exactly 1.0 and erfc, exp(-x^2) exactly 0.0 in double
# precision (erfc(x) < 2^-1074 / 2 beyond x = 27.23); tests/test_parameter_free_potentials.py
# checks it for the compiled functions.
_SATURATED = 28.0
_CF_TERMS = 80
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(32)
_GL_NODES = (_GL_NODES + 1.0) / 2.0  # on [0, 1]
_GL_WEIGHTS = _GL_WEIGHTS / 2.0


@njit(cache=True, nogil=True)
def _cf_tail(x):
    """``r = K - x`` where ``K = x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))``.

    ``sqrt(pi) erfcx(x) = 1 / K`` and ``1 - sqrt(pi) x erfcx(x) = r / K``.
    Backward evaluation with ``_CF_TERMS`` terms; accurate to rounding for
    ``x >= 3``.
    """
    t = x
    for k in range(_CF_TERMS, 1, -1):
        t = x + 0.5 * k / t
    return 0.5 / t


@njit(cache=True, nogil=True)
def erfcx(x):
    """``exp(x^2) erfc(x)`` for ``x >= 0``."""
    if x < _CF_THRESHOLD:
        return math.exp(x * x) * math.erfc(x)
    return 1.0 / (SQRT_PI * (x + _cf_tail(x)))


@njit(cache=True, nogil=True)
def one_minus_x_erfcx(x):
    """``1 - sqrt(pi) x erfcx(x)`` for ``x >= 0``, without cancellation for large x."""
    if x < _CF_THRESHOLD:
        return 1.0 - SQRT_PI * x * math.exp(x * x) * math.erfc(x)
    r = _cf_tail(x)
    return r / (x + r)


@njit(cache=True, nogil=True)
def _log_gauss_legendre(p, rate, gauss, upper):
    """``log int_0^upper s^p sinh(rate s) exp(-gauss s^2) ds`` (positive integrand)."""
    total = 0.0
    for i in range(_GL_NODES.shape[0]):
        s = upper * _GL_NODES[i]
        value = math.sinh(rate * s) * math.exp(-gauss * s * s)
        if p == 1:
            value *= s
        total += _GL_WEIGHTS[i] * value
    return math.log(total) + math.log(upper)


@njit(cache=True, nogil=True)
def log_k(p, L, B, C):
    """``log K_p(L, B)`` for ``L > 0``, ``B >= 0``: see the module docstring."""
    CL = C * L
    sqrt_b = math.sqrt(B)
    c = C * sqrt_b
    if c < 1e-100:
        # B ~ 0: exp(-B v^2) = 1 to double precision on [0, C].
        if CL <= 20.0:
            return _log_gauss_legendre(p, CL, 0.0, 1.0) + (p + 1) * math.log(C)
        if p == 0:  # (cosh(CL) - 1) / L
            return CL - LOG2 + 2.0 * math.log1p(-math.exp(-CL)) - math.log(L)
        # (C cosh(CL) - sinh(CL) / L) / L
        em = math.exp(-2.0 * CL)
        return (CL - LOG2 - math.log(L)
                + math.log(C - 1.0 / L + em * (C + 1.0 / L)))
    if c <= 1.0 and CL <= 20.0:
        # Smooth on [0, C]: Gauss-Legendre in x = v / C.
        return _log_gauss_legendre(p, CL, c * c, 1.0) + (p + 1) * math.log(C)
    a = L / (2.0 * sqrt_b)
    log_jacobian = -(p + 1) * 0.5 * math.log(B)  # v = s / sqrt(B)
    if a <= c:
        if c < 6.0 and a <= 2.0:
            return _log_gauss_legendre(p, 2.0 * a, 1.0, c) + log_jacobian
        # Mode L / (2B) inside [0, C]: factor exp(a^2). From c - a >= _SATURATED
        # on, erf(c -+ a) are exactly 1 and erfc(c -+ a), exp(-(c - a)^2) exactly
        # 0 in double precision: the same brackets, bit for bit, without the
        # calls (the usual case of a noisy stream, where c grows like sqrt(t)).
        saturated = c - a >= _SATURATED
        if p == 1:
            if saturated:
                bracket = SQRT_PI * a * (1.0 + 1.0)
            else:
                bracket = (SQRT_PI * a * (math.erf(c - a) + math.erf(c + a))
                           + math.exp(-(c - a) * (c - a)) * math.expm1(-4.0 * a * c))
            return a * a + math.log(bracket) - math.log(4.0) + log_jacobian
        tails = 0.0 if saturated else math.erfc(c - a) - math.erfc(c + a)
        bracket = 2.0 * math.erf(a) - tails
        return a * a + math.log(bracket) + LOG_SQRT_PI_OVER_4 + log_jacobian
    # Mode beyond C: factor exp(C L - B C^2), the integrand's value at v = C.
    # A term whose exponential factor underflowed to 0 is 0 whatever its erfcx
    # factors (finite): it is not evaluated (the same bits, fewer calls).
    x = a - c
    y = a + c
    e4 = math.exp(-4.0 * a * c)
    log_e = CL - c * c
    if p == 1:
        far = e4 * (one_minus_x_erfcx(y) + SQRT_PI * c * erfcx(y)) if e4 != 0.0 else 0.0
        bracket = SQRT_PI * c * erfcx(x) - one_minus_x_erfcx(x) + far
        return log_e + math.log(bracket) - math.log(4.0) + log_jacobian
    far = e4 * erfcx(y) if e4 != 0.0 else 0.0
    edge = math.exp(-log_e)
    near_zero = 2.0 * edge * erfcx(a) if edge != 0.0 else 0.0
    bracket = erfcx(x) + far - near_zero
    return log_e + math.log(bracket) + LOG_SQRT_PI_OVER_4 + log_jacobian


@njit(cache=True, nogil=True)
def log_prediction(L, B, C, prior, log_z):
    """``(sign, log|w|)`` of prediction (5); ``log_z`` is ``log Z`` of the conjugate prior."""
    if L == 0.0:
        return 0.0, -np.inf
    sign = 1.0 if L > 0.0 else -1.0
    if prior == CONJUGATE:
        return sign, LOG2 + log_k(1, abs(L), B, C) - log_z
    return sign, LOG2 + log_k(0, abs(L), B, C)


@njit(cache=True, nogil=True)
def prediction(L, B, C, prior, log_z):
    """Prediction (5) as a float, ``|w|`` capped at ``exp(LOG_W_CAP)``."""
    sign, log_w = log_prediction(L, B, C, prior, log_z)
    if sign == 0.0:
        return 0.0
    return sign * math.exp(min(log_w, LOG_W_CAP))


@njit(cache=True)
def predictions(L, B, C, prior, log_z):
    """Vectorised :func:`prediction` over arrays ``L`` and ``B``."""
    out = np.empty(L.shape[0])
    for i in range(L.shape[0]):
        out[i] = prediction(L[i], B[i], C, prior, log_z)
    return out


# --------------------------------------------------------------------------
# User side: sees its data, the played w, its own budgets and its own noise.
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def user_residual(w, x, y, intercept):
    """``<w, (x, 1)> - y``, finite or +-inf with the right sign, never NaN.

    The plain sum (bit-identical to the textbook one) is used when it is
    finite. Otherwise some product overflowed (finite rows reach 1.8e308 and
    ``|w_j|`` up to 1e100), and ``inf - inf`` would give NaN: the sum is
    redone on the row divided by its largest magnitude ``m``, where every term
    is at most ``|w_j|``, and multiplied back by ``m`` (overflowing to a
    correctly signed infinity, which the loss's derivative maps to a clipped
    value). Only the user's own value is affected; the report is clipped to
    ``[-1, 1]`` whatever this returns.
    """
    d = w.shape[0]
    n_features = x.shape[0]
    residual = -y
    for j in range(n_features):
        residual += w[j] * x[j]
    if intercept:
        residual += w[d - 1]
    if math.isfinite(residual):
        return residual
    m = 1.0
    for j in range(n_features):
        m = max(m, abs(x[j]))
    m = max(m, abs(y))
    scaled = -(y / m)
    for j in range(n_features):
        scaled += w[j] * (x[j] / m)
    if intercept:
        scaled += w[d - 1] / m
    if not math.isfinite(scaled):  # unreachable: |scaled| <= sum_j |w_j| + 1
        return 0.0
    return scaled * m


@njit(cache=True, nogil=True)
def user_report(w, x, y, intercept, loss, huber_threshold, epsilon, weights, scales, ws,
                state, out):
    """One user's report: clipped subgradient at ``w`` plus local Laplace noise.

    Coordinate ``j`` gets Laplace noise of scale ``2 / tau_j`` with
    ``tau_j = epsilon * weights[j]``; ``weights[j] == 0`` (public coordinate)
    or ``epsilon == inf`` adds none. The noise is added by the public
    randomiser's kernel (:func:`._exact_kernels.laplace_report`, also behind
    :func:`sklearn_dpol.privacy.local_laplace_report`): exact Laplace noise on
    a grid, so the report's bits carry nothing but the mechanism's output.
    ``scales`` is scratch space, ``ws`` an exact-sampler workspace and
    ``state`` its generator state.
    """
    user_clipped_gradient(w, x, y, intercept, loss, huber_threshold, out)
    for j in range(w.shape[0]):
        scales[j] = laplace_scale(epsilon, weights[j])
    laplace_report(out, scales, out, ws, state)


@njit(cache=True, nogil=True)
def laplace_scale(epsilon, weight):
    """The Laplace scale ``2 / tau`` of a coordinate, ``tau = epsilon * weight``; 0: no noise.

    A NaN budget or weight fails closed (infinite noise: a constant report),
    never open: the estimators refuse NaN budgets, and a direct call of the
    kernels must not release a gradient without noise either.
    """
    if epsilon != epsilon or weight != weight:
        return np.inf
    if weight > 0.0 and epsilon < np.inf:
        tau = epsilon * weight
        # A budget that underflows to 0 has infinite noise (never a
        # ZeroDivisionError): the report is then a constant.
        return 2.0 / tau if tau > 0.0 else np.inf
    return 0.0


@njit(cache=True, nogil=True)
def user_clipped_gradient(w, x, y, intercept, loss, huber_threshold, out):
    """The user's subgradient at ``w``, each coordinate clipped to [-1, 1] (Lemma 1)."""
    weighted_clipped_gradient(w, x, y, intercept, loss, huber_threshold, 1.0, out)


@njit(cache=True, nogil=True, inline="always")
def weighted_clipped_gradient(w, x, y, intercept, loss, huber_threshold, sample_weight, out):
    """:func:`user_clipped_gradient` times the user's ``sample_weight`` in [0, 1]: each
    coordinate is ``sample_weight * clip(psi x_j, -1, 1)``, so ``|out_j| <= 1`` and every
    randomiser's bound holds as without weights (``doc/privacy.md`` 57.5). Every coordinate
    is multiplied whatever the weight (a weight of 1 changes no double): the work does not
    depend on the weight's value."""
    d = w.shape[0]
    n_features = x.shape[0]
    residual = user_residual(w, x, y, intercept)
    psi = loss_derivative(residual, loss, huber_threshold)
    # Two loops (the features, then the intercept's slot) rather than a test per
    # coordinate: the same values, and the first loop vectorises.
    for j in range(n_features):
        out[j] = sample_weight * _clipped_product(psi, x[j])
    for j in range(n_features, d):
        out[j] = sample_weight * _clipped_product(psi, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _clipped_product(psi, x_j):
    """``psi x_j`` clipped to [-1, 1].

    Lemma 1 needs ``|g_j| <= 1``; an overflowed product is clipped to +-1 like
    any large one, and a NaN (not reachable: psi and x_j are finite) would
    become 0, so the report is finite whatever the row.
    """
    g = psi * x_j
    return min(max(g, -1.0), 1.0) if g == g else 0.0


@njit(cache=True, nogil=True)
def _stream_user_report(w, x, y, intercept, loss, huber_threshold, epsilon, weights, grids,
                        source, ws, state, out, sample_weight):
    """:func:`user_report` inside a protocol run: the same report, bit for bit, with the
    grids of the budget's Laplace scales computed once per budget, not per coordinate,
    and the exact variates read from a chunked noise source
    (:func:`._exact_kernels.noise_source`: drawn ahead in the same order).

    ``grids`` is ``(last epsilon, gammas, multipliers)`` scratch: a 1-element
    float array and two length-``d`` arrays, refreshed when ``epsilon`` differs
    from the last user's.
    """
    last, gammas, multipliers = grids
    if not last[0] == epsilon:
        for j in range(w.shape[0]):
            gammas[j], multipliers[j] = lattice_entry(laplace_scale(epsilon, weights[j]),
                                                      LAPLACE_REPORT_LATTICE)
        last[0] = epsilon
    weighted_clipped_gradient(w, x, y, intercept, loss, huber_threshold, sample_weight, out)
    noise, spill, cursor = source
    laplace_report_chunked(out, gammas, multipliers, out, noise, spill, cursor, ws, state)


@njit(cache=True, nogil=True)
def _protocol_report(w, x, y, intercept, loss, huber_threshold, epsilon, weights, grids,
                     source, ws, state, sampled, out, sample_weight):
    """The user's report in a protocol run: Laplace (:func:`_stream_user_report`), or the
    sampled-coordinate randomiser when ``sampled`` (``(on, private, cumulative, inverse_p,
    magnitudes, a)``, :class:`~._exact_kernels` ``sampled_report``) is switched on. The
    clipped gradient is multiplied by the user's ``sample_weight`` (1: unweighted) before
    either randomiser sees it (:func:`weighted_clipped_gradient`)."""
    on, private, cumulative, inverse_p, magnitudes, a = sampled
    if on:
        weighted_clipped_gradient(w, x, y, intercept, loss, huber_threshold, sample_weight, out)
        sampled_report(out, epsilon, private, cumulative, inverse_p, magnitudes, a, out, state)
    else:
        _stream_user_report(w, x, y, intercept, loss, huber_threshold, epsilon, weights,
                            grids, source, ws, state, out, sample_weight)


@njit(cache=True, nogil=True)
def every_coordinate_private(sampled, d):
    """Whether the sampled-coordinate randomiser is on and every one of the ``d`` coordinates
    is private (``private == [0, 1, ..., d - 1]``): its report is then 0 but at one
    coordinate, and :func:`_sampled_private_report` gives it as ``(picked, value)``."""
    on, private = sampled[0], sampled[1]
    if not on or private.shape[0] != d:
        return False
    for j in range(d):
        if private[j] != j:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _sampled_private_report(w, x, y, intercept, loss, huber_threshold, epsilon, sampled, rung,
                            state, sample_weight):
    """:func:`_protocol_report` of the sampled-coordinate randomiser when every coordinate is
    private (:func:`every_coordinate_private`) and ``epsilon < inf``, as ``(picked, value)``:
    the report is ``value`` at ``picked`` and 0 elsewhere (``picked = -1``: no rung, all 0).

    The same report and the same generator words as ``weighted_clipped_gradient`` followed
    by ``sampled_report`` (doc/privacy.md 57.8): the residual is the same sum; the rung is
    the same function of ``epsilon`` (kept in ``rung = [last epsilon, its rung]``: it is
    recomputed only when a user's budget differs from the last one's); the coordinate and
    the sign are drawn by the same functions from the same words in the same order, and the
    sign reads the very double ``sample_weight * clip(psi x_p)`` that ``sampled_report``
    reads at ``p``. The other coordinates' clipped values, which ``sampled_report`` only
    overwrites with 0, are not computed.
    """
    on, private, cumulative, inverse_p, magnitudes, a = sampled
    if not rung[0] == epsilon:
        rung[1] = sign_rung(epsilon, magnitudes)
        rung[0] = epsilon
    k = np.int64(rung[1])
    psi = loss_derivative(user_residual(w, x, y, intercept), loss, huber_threshold)
    if k < 0:
        return -1, 0.0
    i = pick_coordinate(cumulative, state)
    picked = private[i]
    x_p = x[picked] if picked < x.shape[0] else 1.0
    g = sample_weight * _clipped_product(psi, x_p)
    return picked, randomized_sign(g, a[k], state) * magnitudes[k] * inverse_p[i]


# --------------------------------------------------------------------------
# Learner side: sees only the noisy reports g~.
# --------------------------------------------------------------------------

# A report beyond this magnitude (only a budget below about 1e-100 gives one:
# Laplace noise of scale 2 / (epsilon w)) is received as this: the sums L and
# S then stay finite for any stream shorter than 1e100 rounds.
REPORT_CAP = 1e100


@njit(cache=True, nogil=True)
def received(g):
    """The learner's reading of one report coordinate: NaN -> 0, clamped to +-REPORT_CAP.

    Post-processing of the (private) report: with a tiny budget the noise can
    overflow to +-inf (or inf * 0 = NaN), which would turn the learner's
    state, and every later release, into NaN.
    """
    if g != g:
        return 0.0
    return min(max(g, -REPORT_CAP), REPORT_CAP)


@njit(cache=True, nogil=True)
def learner_coordinate_predict(L, S, C, b, prior, log_z, out):
    """Algorithm 3: one potential per coordinate, ``B_j = b + S_j`` (or ``S_j``)."""
    offset = b if prior == CONJUGATE else 0.0
    for j in range(L.shape[0]):
        out[j] = prediction(L[j], offset + S[j], C, prior, log_z)


@njit(cache=True, nogil=True)
def learner_coordinate_update(L, S, g_tilde):
    for j in range(L.shape[0]):
        g = received(g_tilde[j])
        L[j] -= g
        S[j] += g * g


@njit(cache=True, nogil=True)
def learner_reduction_predict(scalars, z, C, b, prior, log_z, out):
    """Algorithm 2: ``w = v z``, ``v`` from the 1-D potential on ``<z_t, g~_t>``.

    ``scalars = [L_v, S_v, sum ||g~||^2]``.
    """
    offset = b if prior == CONJUGATE else 0.0
    v = prediction(scalars[0], offset + scalars[1], C, prior, log_z)
    for j in range(z.shape[0]):
        out[j] = v * z[j]


# Post-processing of the reports. The sums are taken in the fixed four-lane order of
# ``_sum_kernels`` (never reassociated by the compiler, so every caller gets the same
# bits wherever LLVM inlines this function); the lanes keep most of the vectorised
# speed. Every path (protocol kernels, the learner objects' update and replay) calls
# this one compiled function.
@njit(cache=True, nogil=True)
def learner_reduction_update(scalars, z, g_tilde):
    """Feed ``<z_t, g~_t>`` to the 1-D learner, then a scale-free projected step on z."""
    d = z.shape[0]
    body = d - d % LANES
    i0 = i1 = i2 = i3 = 0.0
    q0 = q1 = q2 = q3 = 0.0
    for j in range(0, body, LANES):
        g0 = received(g_tilde[j])
        g1 = received(g_tilde[j + 1])
        g2 = received(g_tilde[j + 2])
        g3 = received(g_tilde[j + 3])
        i0 += z[j] * g0
        i1 += z[j + 1] * g1
        i2 += z[j + 2] * g2
        i3 += z[j + 3] * g3
        q0 += g0 * g0
        q1 += g1 * g1
        q2 += g2 * g2
        q3 += g3 * g3
    inner = lane_total(i0, i1, i2, i3)
    sq = lane_total(q0, q1, q2, q3)
    for j in range(body, d):
        g = received(g_tilde[j])
        inner += z[j] * g
        sq += g * g
    scalars[0] -= inner
    scalars[1] += inner * inner
    scalars[2] += sq
    if scalars[2] > 0.0:
        eta = 1.0 / math.sqrt(scalars[2])
        for j in range(d):
            z[j] -= eta * received(g_tilde[j])
        norm_sq = lane_dot(z, z)
        if norm_sq > 1.0:
            shrink = 1.0 / math.sqrt(norm_sq)
            for j in range(d):
                z[j] *= shrink


@njit(cache=True, nogil=True, inline="always")
def _learner_reduction_update_one(scalars, z, picked, value):
    """:func:`learner_reduction_update` on the report that is ``value`` at ``picked`` and
    +0.0 elsewhere (``picked = -1``: +0.0 everywhere), the same bits without the zeros.

    Each lane of the sums starts at +0.0 and adds products with a received 0: ``z_j 0`` is
    a signed zero (``z`` is finite), and adding a signed zero to a nonzero double, or to
    +0.0, leaves it as it is. So ``inner`` is ``0.0 + z_p g`` (a -0.0 product becomes
    +0.0, as in the lanes) and ``sq`` is ``0.0 + g g``. In the step, ``eta`` is finite
    (``1 / sqrt`` of a positive double), ``eta 0 = +0.0`` and ``z_j - (+0.0) = z_j``: only
    ``z_p`` moves. The norm and the shrink are the same code on the same ``z``.
    """
    if picked >= 0:
        g = received(value)
        inner = 0.0 + z[picked] * g
        sq = 0.0 + g * g
    else:
        g = 0.0
        inner = 0.0
        sq = 0.0
    scalars[0] -= inner
    scalars[1] += inner * inner
    scalars[2] += sq
    if scalars[2] > 0.0:
        eta = 1.0 / math.sqrt(scalars[2])
        if picked >= 0:
            z[picked] -= eta * g
        norm_sq = lane_dot(z, z)
        if norm_sq > 1.0:
            shrink = 1.0 / math.sqrt(norm_sq)
            for j in range(z.shape[0]):
                z[j] *= shrink


# --------------------------------------------------------------------------
# The protocol, round by round.
# --------------------------------------------------------------------------

@njit(cache=True)
def run_coordinate_protocol(X, y, intercept, loss, huber_threshold, state, epsilons,
                            sample_weights, weights, sampled, L, S, w_sum, C, b, prior, log_z):
    """Rows in order: the learner plays, the user reports, the learner updates.

    Updates ``L``, ``S`` and adds the played iterates to ``w_sum`` in place.
    ``sample_weights`` holds one weight in [0, 1] per row, or is empty (unweighted).
    """
    d = L.shape[0]
    w = np.empty(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    grids = (np.full(1, np.nan), scales, np.empty(d, np.int64))
    source = noise_source()
    weighted = sample_weights.shape[0] > 0
    # The sampled randomiser with every coordinate private (doc/privacy.md 57.8): a report
    # moves one coordinate's (L_j, S_j), so only that coordinate's prediction changes; ``w``
    # is kept from round to round while ``played`` says it is the prediction at (L, S).
    sparse = every_coordinate_private(sampled, d)
    rung = np.array([np.nan, -1.0])
    offset = b if prior == CONJUGATE else 0.0
    played = False
    for i in range(X.shape[0]):
        if sparse and epsilons[i] != np.inf:
            if not played:
                learner_coordinate_predict(L, S, C, b, prior, log_z, w)
                played = True
            for j in range(d):
                w_sum[j] += w[j]
            picked, value = _sampled_private_report(
                w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i], sampled, rung,
                state, sample_weights[i] if weighted else 1.0)
            if picked >= 0:
                # learner_coordinate_update without its zeros: L_j - (+0.0) = L_j for every
                # double, and S_j + (+0.0) = S_j as S_j is never -0.0 (it starts at +0.0 and
                # adds squares)
                g = received(value)
                L[picked] -= g
                S[picked] += g * g
                w[picked] = prediction(L[picked], offset + S[picked], C, prior, log_z)
            continue
        played = False
        learner_coordinate_predict(L, S, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
        if weighted:
            _protocol_report(w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i],
                             weights, grids, source, ws, state, sampled, report,
                             sample_weights[i])
        else:      # a constant 1 (folded by the compiler: unweighted fits run as before)
            _protocol_report(w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i],
                             weights, grids, source, ws, state, sampled, report, 1.0)
        learner_coordinate_update(L, S, report)
    settle_noise(source[0], source[1], source[2], ws, state)


@njit(cache=True)
def run_reduction_protocol(X, y, intercept, loss, huber_threshold, state, epsilons,
                           sample_weights, weights, sampled, scalars, z, w_sum, C, b, prior,
                           log_z):
    d = z.shape[0]
    w = np.empty(d)
    report = np.empty(d)
    scales = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    grids = (np.full(1, np.nan), scales, np.empty(d, np.int64))
    source = noise_source()
    weighted = sample_weights.shape[0] > 0
    # The sampled randomiser with every coordinate private: each report is one coordinate,
    # handed to the learner as (picked, value) (the same bits, doc/privacy.md 57.8).
    sparse = every_coordinate_private(sampled, d)
    rung = np.array([np.nan, -1.0])
    for i in range(X.shape[0]):
        learner_reduction_predict(scalars, z, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
        if sparse and epsilons[i] != np.inf:
            picked, value = _sampled_private_report(
                w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i], sampled, rung,
                state, sample_weights[i] if weighted else 1.0)
            _learner_reduction_update_one(scalars, z, picked, value)
            continue
        if weighted:
            _protocol_report(w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i],
                             weights, grids, source, ws, state, sampled, report,
                             sample_weights[i])
        else:      # a constant 1 (folded by the compiler: unweighted fits run as before)
            _protocol_report(w, X[i], y[i], intercept, loss, huber_threshold, epsilons[i],
                             weights, grids, source, ws, state, sampled, report, 1.0)
        learner_reduction_update(scalars, z, report)
    settle_noise(source[0], source[1], source[2], ws, state)


@njit(cache=True)
def learner_coordinate_replay(reports, L, S, w_sum, C, b, prior, log_z):
    """The learner alone, fed a sequence of reports (no user, no epsilon, no noise)."""
    d = L.shape[0]
    w = np.empty(d)
    for i in range(reports.shape[0]):
        learner_coordinate_predict(L, S, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
        learner_coordinate_update(L, S, reports[i])


@njit(cache=True)
def learner_reduction_replay(reports, scalars, z, w_sum, C, b, prior, log_z):
    d = z.shape[0]
    w = np.empty(d)
    for i in range(reports.shape[0]):
        learner_reduction_predict(scalars, z, C, b, prior, log_z, w)
        for j in range(d):
            w_sum[j] += w[j]
        learner_reduction_update(scalars, z, reports[i])
