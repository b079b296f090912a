"""Numba kernels of mutual-information-private OGD (seed 003, Algorithms 1 and 2).

Imported lazily by :mod:`sklearn_dpol._core.mi_ogd` so that
``import sklearn_dpol`` does not load numba.

The protocol is split as in the seed's Figures 1 and 2:

* user side (the "encryption layer"): :func:`user_full_report` computes the
  subgradient of the user's loss at the public ``w_t`` (row clipped to
  ``data_norm``, target to ``[-y_bound, y_bound]``), clips it to L2 norm
  ``L`` and adds ``N(0, sigma^2 I)`` (Algorithm 1, lines 3-4);
  :func:`user_bandit_report` evaluates the loss once at ``w_t + delta e_t``
  (``e_t`` uniform on the unit sphere, drawn on the user's side), clips the
  value to ``[0, F]`` and reports ``(d / delta) phi_t e_t + N(0, sigma^2 I)``
  (Algorithm 2, lines 3-7);
* learner side: :func:`learner_update` / :func:`learner_predict` only ever
  receive the noisy report ``z~_t``: ``theta <- theta - z~_t`` and
  ``w = Pi_B(eta_t theta)`` (lazy projection, lines 7-8 / 10-11).
"""

import math

import numpy as np
from numba import njit

from ._exact_kernels import (_BITS, REPORT_SCRATCH_ROWS, WORKSPACE_DIGITS, _fixed_point_clamped,
                             _from_grid, _normal_direct, _to_grid, _usual_floor,
                             floor_estimate_bound, gaussian_report, gaussian_report_direct,
                             grid_entry, usual_floor_estimate)
from ._loss_kernels import ABSOLUTE_CODE as ABSOLUTE  # noqa: F401  (the codes of .losses)
from ._loss_kernels import HUBER_CODE as HUBER  # noqa: F401
from ._loss_kernels import SQUARED_CODE as SQUARED  # noqa: F401
from ._loss_kernels import loss_derivative, loss_value
from ._sum_kernels import lane_dot
FULL = 0
BANDIT = 1
SCALE_BLOCK = 64           # rows whose clipping factors run_protocol computes at a time


@njit(cache=True, nogil=True)
def _residual(w, x, y, intercept, data_norm, y_bound):
    """``(<w, (c x, 1)> - clip(y), c)`` with ``c`` clipping ``x`` to L2 norm ``data_norm``."""
    scale = _row_scale(x, data_norm)
    return _scaled_residual(w, x, y, intercept, scale, y_bound), scale


@njit(cache=True, nogil=True, inline="always")
def _row_scale(x, data_norm):
    """``c``: the factor clipping ``x`` to L2 norm ``data_norm`` (the user's row; its
    residual at ``w`` is :func:`_scaled_residual`)."""
    sq = 0.0
    for j in range(x.shape[0]):
        sq += x[j] * x[j]
    return _clip_scale(sq, x, data_norm)


@njit(cache=True, nogil=True, inline="always")
def _clip_scale(sq, x, data_norm):
    """``c``, from ``sq``: ``x``'s squared norm summed in order (``_row_scale``, ``row_scales``)."""
    n_features = x.shape[0]
    if sq < 1e280:
        norm = math.sqrt(sq)
        scale = 1.0
        if norm > data_norm:
            scale = data_norm / norm
    else:
        # The squared norm of a finite row with entries near 1.8e308 overflows:
        # take the norm as largest * ||x / largest||, which is finite.
        largest = 0.0
        for j in range(n_features):
            largest = max(largest, abs(x[j]))
        unit = 0.0
        for j in range(n_features):
            unit += (x[j] / largest) ** 2
        scale = (data_norm / largest) / math.sqrt(unit)
        # Round the factor down so that the clipped row stays inside the ball.
        scale = min(1.0, scale * (1.0 - 4.0 * (n_features + 2) * 2.220446049250313e-16))
        if scale < 2.2250738585072014e-308:
            # Subnormal: its rounding error is absolute, not relative (see
            # _clip.clip_row_scales); round down by two ulps.
            scale = max(scale - 1e-323, 0.0)
    return scale


@njit(cache=True, nogil=True, inline="always")
def _scaled_residual(w, x, y, intercept, scale, y_bound):
    """``<w, (scale x, 1)> - clip(y)``, summed in order."""
    r = _residual_start(y, y_bound)
    for j in range(x.shape[0]):
        r += _residual_term(w[j], x[j], scale)
    if intercept:
        r += w[w.shape[0] - 1]
    return r


# The pieces of the user's residual and clipped gradient, one function each: the per-user
# kernels (_scaled_residual, _scaled_gradient) and the protocol's fused rounds
# (_fused_full_round) call these, so that the two paths are one formula (and the same bits).
@njit(cache=True, nogil=True, inline="always")
def _residual_start(y, y_bound):
    """``-clip(y)``: the residual's first term."""
    return -min(max(y, -y_bound), y_bound)


@njit(cache=True, nogil=True, inline="always")
def _residual_term(wj, xj, scale):
    """``w_j (scale x_j)``: the residual's term of feature ``j``."""
    return wj * (scale * xj)


@njit(cache=True, nogil=True, inline="always")
def _gradient_coordinate(psi, x, scale, j, n_features):
    """``psi (scale x_j)``, or ``psi * 1`` for the intercept's coordinate ``j = n_features``."""
    return psi * (scale * x[j] if j < n_features else 1.0)


@njit(cache=True, nogil=True, inline="always")
def _gradient_shrink(sq, clip_norm, sample_weight):
    """``(shrink, finite)`` of a gradient whose squared norm, summed in order, is ``sq``:
    the clipping factor times the user's ``sample_weight`` in [0, 1] (1: unweighted, a
    product by 1 changes no double). The weighted factor is at most the clipping factor
    (rounding is monotone), so the weighted gradient's norm is at most ``clip_norm`` as the
    unweighted one's (``doc/privacy.md`` 57.5)."""
    norm = math.sqrt(sq)
    shrink = 1.0
    if norm > clip_norm:
        shrink = clip_norm / norm
    return shrink * sample_weight, math.isfinite(sq)


@njit(cache=True, nogil=True, inline="always")
def _clipped_coordinate(g, shrink, finite):
    """A coordinate of the clipped gradient. A non-finite gradient (unreachable with clipped
    data and a bounded iterate) is replaced by 0, a data-independent value inside the ball."""
    return shrink * g if finite else 0.0


@njit(cache=True, nogil=True)
def row_scales(X, start, data_norm, out):
    """``out[i]`` = ``_row_scale``'s clipping factor of row ``start + i``, the same bits.

    Each row's squared norm is summed in ``_row_scale``'s order; four rows' sums run in
    one loop, so that the four chains of additions overlap (one chain is bound by
    the latency of an addition).
    """
    n = out.shape[0]
    d = X.shape[1]
    i = 0
    while i + 4 <= n:
        a, b, c, e = X[start + i], X[start + i + 1], X[start + i + 2], X[start + i + 3]
        q0 = q1 = q2 = q3 = 0.0
        for j in range(d):
            q0 += a[j] * a[j]
            q1 += b[j] * b[j]
            q2 += c[j] * c[j]
            q3 += e[j] * e[j]
        out[i] = _clip_scale(q0, a, data_norm)
        out[i + 1] = _clip_scale(q1, b, data_norm)
        out[i + 2] = _clip_scale(q2, c, data_norm)
        out[i + 3] = _clip_scale(q3, e, data_norm)
        i += 4
    while i < n:
        out[i] = _row_scale(X[start + i], data_norm)
        i += 1


@njit(cache=True, nogil=True)
def user_full_report(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, clip_norm,
                     sigma, ws, state, out):
    """Algorithm 1, lines 3-4: clipped subgradient plus Gaussian noise ``sigma``.

    The noise is added by the public randomiser's kernel
    (:func:`._exact_kernels.gaussian_report`, also behind
    :func:`sklearn_dpol.privacy.local_gaussian_report`): exact, on a grid.
    """
    _full_gradient(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, clip_norm, out)
    gaussian_report(out, sigma, out, ws, state)


@njit(cache=True, nogil=True)
def _full_gradient(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, clip_norm, out):
    """The clipped subgradient of :func:`user_full_report`, before its noise."""
    scale = _row_scale(x, data_norm)
    _scaled_gradient(w, x, y, intercept, loss, huber_threshold, scale, y_bound, clip_norm, 1.0,
                     out)


@njit(cache=True, nogil=True, inline="always")
def _scaled_gradient(w, x, y, intercept, loss, huber_threshold, scale, y_bound, clip_norm,
                     sample_weight, out):
    """:func:`_full_gradient` with the row's clipping factor given (``row_scales``), times the
    user's ``sample_weight`` (1: unweighted)."""
    d = w.shape[0]
    n_features = x.shape[0]
    r = _scaled_residual(w, x, y, intercept, scale, y_bound)
    psi = loss_derivative(r, loss, huber_threshold)
    sq = 0.0
    for j in range(d):
        g = _gradient_coordinate(psi, x, scale, j, n_features)
        out[j] = g
        sq += g * g
    shrink, finite = _gradient_shrink(sq, clip_norm, sample_weight)
    for j in range(d):
        out[j] = _clipped_coordinate(out[j], shrink, finite)


@njit(cache=True, nogil=True)
def user_bandit_report(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, exploration,
                       loss_bound, sigma, direction, ws, state, query, out):
    """Algorithm 2, lines 3-7: one loss value at ``w + delta e``, then noise.

    ``direction`` is ``e_t`` (unit norm); ``query`` is scratch space.
    """
    _bandit_vector(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, exploration,
                   loss_bound, direction, query, out)
    gaussian_report(out, sigma, out, ws, state)


@njit(cache=True, nogil=True)
def _bandit_vector(w, x, y, intercept, loss, huber_threshold, data_norm, y_bound, exploration,
                   loss_bound, direction, query, out):
    """The one-point gradient estimate of :func:`user_bandit_report`, before its noise."""
    scale = _row_scale(x, data_norm)
    _scaled_bandit_vector(w, x, y, intercept, loss, huber_threshold, scale, y_bound, exploration,
                          loss_bound, 1.0, direction, query, out)


@njit(cache=True, nogil=True, inline="always")
def _scaled_bandit_vector(w, x, y, intercept, loss, huber_threshold, scale, y_bound, exploration,
                          loss_bound, sample_weight, direction, query, out):
    """:func:`_bandit_vector` with the row's clipping factor given (``row_scales``); the
    clipped loss value is multiplied by the user's ``sample_weight`` in [0, 1] (1:
    unweighted, the same double), so it stays in ``[0, F]`` (``doc/privacy.md`` 57.5)."""
    d = w.shape[0]
    for j in range(d):
        query[j] = w[j] + exploration * direction[j]
    r = _scaled_residual(query, x, y, intercept, scale, y_bound)
    value = loss_value(r, loss, huber_threshold)
    # NaN (unreachable) maps to 0, +inf to the clip F: the report stays bounded.
    phi = min(max(value, 0.0), loss_bound) if value == value else 0.0
    phi = sample_weight * phi
    factor = d * phi / exploration
    for j in range(d):
        out[j] = factor * direction[j]


# --------------------------------------------------------------------------
# Learner side: sees only the noisy reports z~.
# --------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def step(t, eta, anytime):
    """``eta`` (constant) or ``eta / sqrt(t)`` after ``t >= 1`` reports."""
    if anytime:
        return eta / math.sqrt(t)
    return eta


# Post-processing of the reports. The squared norm is summed in four lanes in a fixed
# order (lane k holds coordinates j = k mod 4, then (l0 + l1) + (l2 + l3) plus the tail),
# never reassociated by the compiler: the rounding is then the same wherever LLVM
# inlines this function (with ``fastmath={"reassoc"}`` it was not, and the protocol
# kernel and the per-user path could differ by one ulp). Every path (the protocol
# kernel, the learner object's predict and replay) calls this one compiled function.
@njit(cache=True, nogil=True)
def learner_predict(theta, t, eta, anytime, radius, out):
    """``w_{t+1} = Pi_B(eta_t theta_{t+1})`` (line 8 / 11); ``w_1 = 0``."""
    d = theta.shape[0]
    if t == 0:
        for j in range(d):
            out[j] = 0.0
        return
    e = step(t, eta, anytime)
    for j in range(d):
        out[j] = e * theta[j]
    shrink = _ball_shrink(out, radius)
    if shrink != 1.0:
        for j in range(d):
            out[j] *= shrink


@njit(cache=True, nogil=True, inline="always")
def _ball_shrink(w, radius):
    """The factor of the projection on the ball of ``radius``: ``radius / ||w||`` if that
    is below 1, else 1 (a product by 1 changes no double)."""
    norm = math.sqrt(lane_dot(w, w))
    return radius / norm if norm > radius else 1.0


@njit(cache=True, nogil=True)
def _update_and_play(theta, report, t, eta, anytime, radius, w, w_sum):
    """:func:`learner_update` then :func:`learner_predict` (``t >= 1``) and ``w_sum += w``,
    the same operations on each coordinate in two passes instead of four."""
    e = step(t, eta, anytime)
    for j in range(theta.shape[0]):
        theta[j] -= report[j]
        w[j] = e * theta[j]
    shrink = _ball_shrink(w, radius)
    for j in range(theta.shape[0]):
        w[j] *= shrink
        w_sum[j] += w[j]


@njit(cache=True, nogil=True)
def learner_update(theta, report):
    """``theta_{t+1} = theta_t - z~_t`` (line 7 / 10)."""
    for j in range(theta.shape[0]):
        theta[j] -= report[j]


@njit(cache=True)
def learner_replay(reports, theta, t0, w_sum, eta, anytime, radius):
    """Reports (rows) in order: play, add the played iterate to ``w_sum``, update."""
    d = theta.shape[0]
    w = np.empty(d)
    for i in range(reports.shape[0]):
        learner_predict(theta, t0 + i, eta, anytime, radius, w)
        for j in range(d):
            w_sum[j] += w[j]
        learner_update(theta, reports[i])


# --------------------------------------------------------------------------
# The protocol, round by round.
# --------------------------------------------------------------------------

@njit(cache=True, _nrt=False)
def _fused_full_round(w, x, y, intercept, loss, huber_threshold, scale, y_bound, clip_norm,
                      sample_weight, gamma, inverse_gamma, multiplier, grad, draws, ws, state, out,
                      x_next):
    """User ``t``'s full-feedback report (``_scaled_gradient`` then ``gaussian_report_direct``)
    in fewer passes over the row, the same bits and words: ``True`` with the report in
    ``out`` and the generator advanced, or ``False`` with the state as it was (the caller
    then runs the unfused path).

    The report's variates do not depend on the data: in the usual case (every variate
    usual and every floor decided by u's two digits, see :func:`gaussian_report_direct`)
    they are the state's next words, drawn in coordinate order whatever the row. They are
    drawn here inside the two loops of the gradient (the residual's sum, then the squared
    norm's), whose additions are chains bound by their latency, and run alongside the
    generator's integer work; the sums keep their order. The last pass takes each
    coordinate from the gradient to the released double: the clipped coordinate, its
    point by :func:`usual_floor_estimate` (double precision, vectorised), certified by
    its error bound, and for the coordinates it leaves uncertain (a few in ten thousand;
    marked NaN in ``out``) :func:`gaussian_report_direct`'s exact fixed point and floor
    (doc/privacy.md 56.8). If a variate is not
    usual or a floor is not decided, ``False``: the words drawn are dropped and the report
    is computed again by the public path from the same state. ``multiplier`` is at least
    2 (``grid_entry(sigma)``), ``inverse_gamma`` is ``1 / gamma`` exactly (the caller
    checks); ``grad``, ``out`` of ``w``'s length and ``draws`` of 2 rows are scratch.
    """
    d = w.shape[0]
    n_features = x.shape[0]
    half = n_features // 2
    t0, t1, t2, t3 = state[0], state[1], state[2], state[3]
    s0, s1, s2, s3 = t0, t1, t2, t3
    usual_all = True
    r = _residual_start(y, y_bound)
    q = 0.0
    for k in range(half):
        r += _residual_term(w[2 * k], x[2 * k], scale)
        r += _residual_term(w[2 * k + 1], x[2 * k + 1], scale)
        q += x_next[2 * k] * x_next[2 * k]
        q += x_next[2 * k + 1] * x_next[2 * k + 1]
        sign_bit, offset, box, shift, usual, u, s0, s1, s2, s3 = _normal_direct(
            s0, s1, s2, s3, ws, state)
        draws[0, k] = sign_bit | (box << 1)
        draws[1, k] = np.int64(u)
        usual_all &= usual
    if n_features > 2 * half:
        r += _residual_term(w[n_features - 1], x[n_features - 1], scale)
        q += x_next[n_features - 1] * x_next[n_features - 1]
    if intercept:
        r += w[d - 1]
    psi = loss_derivative(r, loss, huber_threshold)
    sq = 0.0
    for k in range(half):
        g = _gradient_coordinate(psi, x, scale, 2 * k, n_features)
        grad[2 * k] = g
        sq += g * g
        g = _gradient_coordinate(psi, x, scale, 2 * k + 1, n_features)
        grad[2 * k + 1] = g
        sq += g * g
        sign_bit, offset, box, shift, usual, u, s0, s1, s2, s3 = _normal_direct(
            s0, s1, s2, s3, ws, state)
        draws[0, half + k] = sign_bit | (box << 1)
        draws[1, half + k] = np.int64(u)
        usual_all &= usual
    for j in range(2 * half, d):
        g = _gradient_coordinate(psi, x, scale, j, n_features)
        grad[j] = g
        sq += g * g
    for j in range(2 * half, d):
        sign_bit, offset, box, shift, usual, u, s0, s1, s2, s3 = _normal_direct(
            s0, s1, s2, s3, ws, state)
        draws[0, j] = sign_bit | (box << 1)
        draws[1, j] = np.int64(u)
        usual_all &= usual
    shrink, finite = _gradient_shrink(sq, clip_norm, sample_weight)
    decided = usual_all
    if decided:
        # Each coordinate's point in double precision, certified (usual_floor_estimate; c =
        # mean / gamma, here mean * (1 / gamma), the same double: gamma is a power of two
        # whose inverse is a double); the few uncertain ones exactly, as the direct report.
        multiplier_f = np.float64(multiplier)
        # the clipped gradient's coordinates are at most clip_norm (up to rounding) in
        # absolute value, weighted or not (the weight only shrinks them); a larger |c| is
        # left uncertain by the estimate
        c_limit = clip_norm * (1.0 + 2.0 ** -10) * inverse_gamma
        bound = floor_estimate_bound(c_limit, multiplier_f)
        uncertain = np.int64(0)
        for j in range(d):
            mean = _clipped_coordinate(grad[j], shrink, finite)
            point, certain = usual_floor_estimate(mean * inverse_gamma, draws[0, j] & 1,
                                                  draws[0, j] >> 1, np.uint64(draws[1, j]),
                                                  multiplier_f, c_limit, bound)
            out[j] = _from_grid(point, gamma)      # NaN where uncertain
            uncertain |= np.int64(not certain)
        if uncertain:
            grid_scale = np.int64(multiplier)
            for j in range(d):
                if out[j] != out[j]:
                    mean = _clipped_coordinate(grad[j], shrink, finite)
                    a, f1, f2 = _fixed_point_clamped(_to_grid(mean, gamma))
                    point, ok = _usual_floor(a, np.uint64((f1 << _BITS) | f2), draws[0, j] & 1,
                                             draws[0, j] >> 1, np.uint64(draws[1, j]),
                                             grid_scale)
                    out[j] = _from_grid(point, gamma)
                    decided &= ok
    if decided:
        state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    else:
        state[0], state[1], state[2], state[3] = t0, t1, t2, t3
    return decided, q


@njit(cache=True)
def run_protocol(X, y, intercept, loss, huber_threshold, data_norm, y_bound, feedback, clip_norm,
                 exploration, loss_bound, sigma, state, directions, sample_weights, theta, t0,
                 w_sum, eta, anytime, radius):
    """Rows in order: the learner plays ``w_t``, user ``t`` reports, the learner updates.

    Updates ``theta`` and adds the played iterates to ``w_sum`` in place.
    ``sample_weights`` holds one weight in [0, 1] per row, or is empty (every user weighs
    1, multiplied in as ``1.0``: the same doubles).
    """
    d = theta.shape[0]
    w = np.empty(d)
    report = np.empty(d)
    query = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    # The users' reports of user_full_report / user_bandit_report, bit for bit and word
    # for word (gaussian_report_direct is gaussian_report, faster; _fused_full_round is
    # _scaled_gradient then gaussian_report_direct, in fewer passes): one exact variate
    # per coordinate, none drawn beyond the user's report, so the generator ends where the
    # per-user kernels leave it and a stream cut into calls draws the same bits as one call.
    scratch = np.zeros((REPORT_SCRATCH_ROWS, d), np.int64)
    gamma, multiplier = grid_entry(sigma)
    # gamma is a power of two: its inverse is exact when gamma is a normal double
    inverse_gamma = 1.0 / gamma if gamma >= 2.2250738585072014e-308 else 0.0
    fused = (feedback == FULL and multiplier >= 2 and inverse_gamma * gamma == 1.0
             and inverse_gamma < math.inf)
    grad = np.empty(d)
    draws = np.zeros((2, d), np.int64)
    # The rows' clipping factors (data only, not the iterate): a block at a time, or (fused
    # rounds) the next row's squared norm summed inside the round.
    scales = np.empty(SCALE_BLOCK)
    n = X.shape[0]
    weighted = sample_weights.shape[0] > 0
    scale = _row_scale(X[0], data_norm) if fused and n > 0 else 1.0
    for i in range(n):
        weight = sample_weights[i] if weighted else 1.0
        if not fused:
            if i % SCALE_BLOCK == 0:
                block = min(SCALE_BLOCK, n - i)
                row_scales(X, i, data_norm, scales[:block])
            scale = scales[i % SCALE_BLOCK]
        if i == 0:
            # later plays come from _update_and_play below
            learner_predict(theta, t0, eta, anytime, radius, w)
            for j in range(d):
                w_sum[j] += w[j]
        done = False
        q = 0.0
        if fused:
            x_next = X[min(i + 1, n - 1)]
            done, q = _fused_full_round(w, X[i], y[i], intercept, loss, huber_threshold, scale,
                                        y_bound, clip_norm, weight, gamma, inverse_gamma,
                                        multiplier, grad, draws, ws, state, report, x_next)
        if not done:
            if feedback == FULL:
                _scaled_gradient(w, X[i], y[i], intercept, loss, huber_threshold, scale,
                                 y_bound, clip_norm, weight, report)
            else:
                _scaled_bandit_vector(w, X[i], y[i], intercept, loss, huber_threshold, scale,
                                      y_bound, exploration, loss_bound, weight, directions[i],
                                      query, report)
            gaussian_report_direct(report, sigma, report, ws, state, scratch)
        if fused:
            scale = _clip_scale(q, x_next, data_norm)
        if i + 1 < n:
            _update_and_play(theta, report, t0 + i + 1, eta, anytime, radius, w, w_sum)
        else:
            learner_update(theta, report)
