"""Numba kernels of noisy mirror descent: the full-batch gradient and the mirror steps.

Imported lazily by :mod:`sklearn_dpol._core.mirror_descent` so that
``import sklearn_dpol`` does not load numba. Iterates live in normalised
coordinates ``u = w / radius`` on a unit set; the intercept, when fitted, is
``v = b / y_bound`` in ``[-1, 1]`` with the potential ``v^2 / 2``.
"""

import math

import numpy as np
from numba import njit

from ._exact_kernels import WORKSPACE_DIGITS, release_value
from ._loss_kernels import ABSOLUTE_CODE as ABSOLUTE  # noqa: F401  (the codes of .losses)
from ._loss_kernels import HUBER_CODE as HUBER  # noqa: F401
from ._loss_kernels import SQUARED_CODE as SQUARED  # noqa: F401
from ._loss_kernels import loss_derivative

# Constraint kernels. The L1 kind also serves the Euclidean potential on the
# L1 ball (q = 2, c = 1), where its step is the Euclidean projection.
BALL_L2 = 0
BALL_L1 = 1
SIMPLEX = 2
GROUP_L1 = 3

# The dual bisections stop when the multiplier is known to this relative width.
_BISECTION_RTOL = 1e-15
_BISECTION_MAX = 200


# -- the full-batch gradient (losses: .losses) -----------------------------------------------

@njit(cache=True, nogil=True)
def data_gradient(X, scales, y, weights, w, b, loss, threshold, out):
    """``out = (1/n) sum_i c_i f'(r_i) (z_i, 1)``, ``z_i = scales[i] X[i]``: O(n p).

    ``out`` has ``p`` entries, or ``p + 1`` when the last one is the
    intercept's. ``X`` is read in place (float32 or float64), never copied.
    ``weights`` holds the sample weights ``c_i`` in [0, 1], or nothing (every
    weight 1: no multiplication at all).
    """
    n, p = X.shape
    weighted = weights.size > 0
    for j in range(out.size):
        out[j] = 0.0
    total = 0.0
    for i in range(n):
        s = scales[i]
        # Clip first: every product below is on the clipped row z_i = s X[i]
        # (norm <= data_norm), never on the raw row, whose finite entries up
        # to 1.8e308 would overflow <x_i, w> to inf and the gradient to NaN.
        dot = 0.0
        for j in range(p):
            dot += (s * X[i, j]) * w[j]
        d = loss_derivative(dot + b - y[i], loss, threshold)
        if weighted:
            d *= weights[i]
        if d != 0.0:
            for j in range(p):
                out[j] += d * (s * X[i, j])
            total += d
    for j in range(p):
        out[j] /= n
    if out.size > p:
        out[p] = total / n


@njit(cache=True, nogil=True)
def data_gradient_csr(data, indices, indptr, scales, y, weights, w, b, loss, threshold, out):
    """:func:`data_gradient` for a CSR matrix: O(nnz + p), stored entries only.

    The absent entries are zeros, whose terms ``(s * 0) * w_j`` and
    ``d * (s * 0)`` add nothing, so with the columns of a row in increasing
    order (canonical CSR) every sum adds the same nonzero terms in the same
    order as the dense kernel: the result is bitwise the dense one.
    """
    n = indptr.size - 1
    p = w.size
    weighted = weights.size > 0
    for j in range(out.size):
        out[j] = 0.0
    total = 0.0
    for i in range(n):
        s = scales[i]
        lo, hi = indptr[i], indptr[i + 1]
        dot = 0.0
        for k in range(lo, hi):
            dot += (s * data[k]) * w[indices[k]]
        d = loss_derivative(dot + b - y[i], loss, threshold)
        if weighted:
            d *= weights[i]
        if d != 0.0:
            for k in range(lo, hi):
                out[indices[k]] += d * (s * data[k])
            total += d
    for j in range(p):
        out[j] /= n
    if out.size > p:
        out[p] = total / n


@njit(cache=True, nogil=True)
def gram_gradient(gram, z_mean, zy_mean, y_mean, w_mean, w, b, out):
    """The squared loss's gradient from the Gram statistics: O(p^2).

    ``grad_w = G w + b zbar - mean(z y)``, ``grad_b = <zbar, w> + b cbar - mean(y)``,
    all means weighted by the sample weights ``c_i`` (``cbar = mean(c)``, 1.0
    without weights, where ``b * 1.0`` is ``b`` bitwise).
    """
    p = w.size
    for j in range(p):
        acc = b * z_mean[j] - zy_mean[j]
        for k in range(p):
            acc += gram[j, k] * w[k]
        out[j] = acc
    if out.size > p:
        acc = b * w_mean - y_mean
        for k in range(p):
            acc += z_mean[k] * w[k]
        out[p] = acc


# -- the Huber loss on the Gram matrix --------------------------------------------------------
#
# The Huber derivative is the squared loss's, ``r``, on rows with ``|r| <= h``,
# so the mean gradient is the squared loss's (O(p^2) from the Gram statistics)
# minus ``(1/n) sum_i c_i (r_i - f'(r_i)) (z_i, 1)`` over the rows with
# ``|r_i| > h`` only. Those rows are found among candidates: one pass at a
# reference point ``(w0, b0)`` keeps the rows with ``|r_i(w0, b0)| > h - m``;
# as ``|r_i(w, b) - r_i(w0, b0)| <= R ||w - w0|| + |b - b0| = Delta`` for a
# row of norm at most ``R``, every other row has ``|r_i| < h`` while
# ``Delta < m``, and the pass is redone when it is not (``doc/privacy.md``,
# "Mirror descent's Huber loss on the Gram matrix").


@njit(cache=True, nogil=True)
def huber_candidates(X, csr_data, csr_indices, csr_indptr, sparse, scales, y, w, b, level,
                     cand):
    """Store in ``cand`` the rows with ``|r_i(w, b)| > level``; return their number: O(n p).

    ``r_i = <z_i, w> + b - y_i`` with ``z_i = scales[i] x_i``, summed as in
    :func:`data_gradient` (dense) or :func:`data_gradient_csr`. A NaN residual
    (unreachable on clipped data) is a candidate. The dense and CSR loops are
    written out: a shared per-row helper made both ten times slower.
    """
    n = scales.size
    p = w.size
    count = 0
    for i in range(n):
        s = scales[i]
        dot = 0.0
        if sparse:
            for k in range(csr_indptr[i], csr_indptr[i + 1]):
                dot += (s * csr_data[k]) * w[csr_indices[k]]
        else:
            for j in range(p):
                dot += (s * X[i, j]) * w[j]
        r = dot + b - y[i]
        if not abs(r) <= level:
            cand[count] = i
            count += 1
    return count


@njit(cache=True, nogil=True)
def huber_gram_gradient(gram, z_mean, zy_mean, y_mean, w_mean, X, csr_data, csr_indices,
                        csr_indptr, sparse, scales, y, weights, cand, count, w, b, loss,
                        threshold, out):
    """The mean gradient of a loss with ``f'(r) = r`` on ``|r| <= h`` (Huber): O(p^2 + k p).

    :func:`gram_gradient` (the squared loss) minus, over the ``count`` rows
    ``cand[:count]``, which must hold every row with ``|r_i| > h``,
    ``(1/n) c_i (r_i - f'(r_i)) (z_i, 1)``; ``f'`` is the loss table's.
    The correction is summed apart, in blocks of ``floor(sqrt(n)) + 1`` rows,
    and subtracted once: its rounding grows like ``2 sqrt(n) + 2`` terms of the
    residual bound at most, not ``n`` (``doc/privacy.md`` section 54.3,
    :func:`~sklearn_dpol._core.mirror_descent.huber_gram_rounding`).
    """
    gram_gradient(gram, z_mean, zy_mean, y_mean, w_mean, w, b, out)
    n = scales.size
    p = w.size
    weighted = weights.size > 0
    block = int(math.sqrt(n)) + 1
    acc = np.zeros(p + 1)     # the blocks' sums (last entry: the intercept's)
    part = np.zeros(p + 1)    # the current block's sum
    in_block = 0
    for k in range(count):
        i = cand[k]
        s = scales[i]
        dot = 0.0
        if sparse:
            lo, hi = csr_indptr[i], csr_indptr[i + 1]
            for kk in range(lo, hi):
                dot += (s * csr_data[kk]) * w[csr_indices[kk]]
        else:
            for j in range(p):
                dot += (s * X[i, j]) * w[j]
        r = dot + b - y[i]
        # A NaN residual: f' = 0 on the rows, and nothing to take back here.
        excess = r - loss_derivative(r, loss, threshold) if r == r else 0.0
        if weighted:
            excess *= weights[i]
        if excess != 0.0:
            d = excess / n
            if sparse:
                for kk in range(csr_indptr[i], csr_indptr[i + 1]):
                    part[csr_indices[kk]] += d * (s * csr_data[kk])
            else:
                for j in range(p):
                    part[j] += d * (s * X[i, j])
            part[p] += d
            in_block += 1
            if in_block == block:
                for j in range(p + 1):
                    acc[j] += part[j]
                    part[j] = 0.0
                in_block = 0
    for j in range(p):
        out[j] -= acc[j] + part[j]
    if out.size > p:
        out[p] -= acc[p] + part[p]


@njit(cache=True, nogil=True)
def _drift(w, b, ref, data_norm):
    """``Delta = R ||w - w0||_2 + |b - b0|`` from the reference ``ref = (w0, b0)``."""
    p = w.size
    acc = 0.0
    for j in range(p):
        e = w[j] - ref[j]
        acc += e * e
    return data_norm * math.sqrt(acc) + abs(b - ref[p])


# -- potentials on the L1 ball: (c/2) ||u||_q^2 and its conjugate -----------------------

@njit(cache=True, nogil=True)
def half_sq_norm_grad(x, r, a, out):
    """Gradient of ``(a/2) ||x||_r^2``: ``a ||x||_r^(2-r) |x_i|^(r-1) sign(x_i)``.

    Computed on ``x / max|x|`` so that large exponents neither overflow nor
    underflow (the powers of ``max|x|`` cancel to one factor).
    """
    largest = 0.0
    for i in range(x.size):
        largest = max(largest, abs(x[i]))
    if largest == 0.0:
        for i in range(x.size):
            out[i] = 0.0
        return
    acc = 0.0
    for i in range(x.size):
        acc += (abs(x[i]) / largest) ** r
    factor = a * largest * acc ** ((2.0 - r) / r)
    for i in range(x.size):
        t = abs(x[i]) / largest
        g = factor * t ** (r - 1.0) if t > 0.0 else 0.0
        out[i] = g if x[i] >= 0.0 else -g


@njit(cache=True, nogil=True)
def _l1_norm(x):
    acc = 0.0
    for i in range(x.size):
        acc += abs(x[i])
    return acc


@njit(cache=True, nogil=True)
def _soft_threshold(z, lam, out):
    for i in range(z.size):
        a = abs(z[i]) - lam
        out[i] = 0.0 if a <= 0.0 else (a if z[i] > 0.0 else -a)


@njit(cache=True, nogil=True)
def l1_step(z, q_dual, c_inv, out, work):
    """``argmin_{||u||_1 <= 1} -<z, u> + Psi(u)`` for ``Psi = (c/2) ||u||_q^2``.

    ``u(lam) = grad Psi*(S_lam(z))`` minimises the Lagrangian with multiplier
    ``lam``; ``||u(lam)||_1`` is nonincreasing in ``lam`` (it is one plus the
    derivative of the concave dual function), so bisection finds the ``lam``
    with ``||u(lam)||_1 = 1`` when the unconstrained point is outside the ball.
    The returned point is the bisection's feasible end.
    """
    half_sq_norm_grad(z, q_dual, c_inv, out)
    if _l1_norm(out) <= 1.0:
        return
    lo = 0.0
    hi = 0.0
    for i in range(z.size):
        hi = max(hi, abs(z[i]))
    for _ in range(_BISECTION_MAX):
        mid = 0.5 * (lo + hi)
        _soft_threshold(z, mid, work)
        half_sq_norm_grad(work, q_dual, c_inv, out)
        if _l1_norm(out) > 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= _BISECTION_RTOL * hi:
            break
    _soft_threshold(z, hi, work)
    half_sq_norm_grad(work, q_dual, c_inv, out)
    total = _l1_norm(out)
    if total > 1.0:  # rounding only
        for i in range(out.size):
            out[i] /= total


# -- group L1 ball: (1/(M xi)) sum_j ||u_j||^M ---------------------------------------------

@njit(cache=True, nogil=True)
def _block_norms(x, starts, norms):
    for j in range(norms.size):
        acc = 0.0
        for i in range(starts[j], starts[j + 1]):
            acc += x[i] * x[i]
        norms[j] = math.sqrt(acc)


@njit(cache=True, nogil=True)
def group_mirror(u, starts, power, xi, out, norms):
    """``grad Psi(u)_j = (1/xi) ||u_j||^(M-1) u_j / ||u_j||``."""
    _block_norms(u, starts, norms)
    for j in range(norms.size):
        factor = norms[j] ** (power - 1.0) / (xi * norms[j]) if norms[j] > 0.0 else 0.0
        for i in range(starts[j], starts[j + 1]):
            out[i] = factor * u[i]


@njit(cache=True, nogil=True)
def _group_radii(norms, lam, power, xi, radii):
    """Block norms of ``grad Psi*(S_lam z)``: ``(xi (||z_j|| - lam)_+)^(1/(M-1))``."""
    total = 0.0
    for j in range(norms.size):
        a = norms[j] - lam
        radii[j] = (xi * a) ** (1.0 / (power - 1.0)) if a > 0.0 else 0.0
        total += radii[j]
    return total


@njit(cache=True, nogil=True)
def group_step(z, starts, power, xi, out, norms, radii):
    """``argmin_{sum_j ||u_j|| <= 1} -<z, u> + Psi(u)``: dual bisection on block norms.

    As for :func:`l1_step` with block soft-thresholding; the group norm of
    ``u(lam)`` depends on the block norms of ``z`` only, so each bisection
    step costs O(number of groups).
    """
    _block_norms(z, starts, norms)
    lam = 0.0
    total = _group_radii(norms, 0.0, power, xi, radii)
    if total > 1.0:
        lo = 0.0
        hi = 0.0
        for j in range(norms.size):
            hi = max(hi, norms[j])
        for _ in range(_BISECTION_MAX):
            mid = 0.5 * (lo + hi)
            if _group_radii(norms, mid, power, xi, radii) > 1.0:
                lo = mid
            else:
                hi = mid
            if hi - lo <= _BISECTION_RTOL * hi:
                break
        lam = hi
        total = _group_radii(norms, lam, power, xi, radii)
    shrink = 1.0 / total if total > 1.0 else 1.0  # rounding only
    for j in range(norms.size):
        factor = shrink * radii[j] / norms[j] if radii[j] > 0.0 else 0.0
        for i in range(starts[j], starts[j + 1]):
            out[i] = factor * z[i]


# -- simplex: exponentiated gradient in log space -----------------------------------------

@njit(cache=True, nogil=True)
def simplex_step(log_u, gradient, eta, u):
    """``log u <- log u - eta g - logsumexp(...)``; ``u = exp(log u)`` sums to one."""
    top = -np.inf
    for i in range(log_u.size):
        log_u[i] -= eta * gradient[i]
        top = max(top, log_u[i])
    acc = 0.0
    for i in range(log_u.size):
        acc += math.exp(log_u[i] - top)
    shift = top + math.log(acc)
    total = 0.0
    for i in range(log_u.size):
        log_u[i] -= shift
        u[i] = math.exp(log_u[i])
        total += u[i]
    for i in range(u.size):
        u[i] /= total


@njit(cache=True, nogil=True)
def l2_step(u, gradient, eta):
    """``u <- Proj_{unit ball}(u - eta g)``."""
    acc = 0.0
    for i in range(u.size):
        u[i] -= eta * gradient[i]
        acc += u[i] * u[i]
    norm = math.sqrt(acc)
    if norm > 1.0:
        for i in range(u.size):
            u[i] /= norm


# -- the per-step loop ---------------------------------------------------------------------

@njit(cache=True, nogil=True)
def run_steps(X, csr_data, csr_indices, csr_indptr, sparse, scales, y, weights, gram,
              z_mean, zy_mean, y_mean, w_mean, use_gram, loss, threshold, kind, q, c, power,
              xi, starts, radius, y_bound, eta, n_steps, sigma, state, u, v, log_u, u_sum,
              v_sum, trace, huber_gram, data_norm, margin, cand, ref, count):
    """Take ``n_steps`` noisy mirror steps in place; add each new iterate to the sums.

    Each step's gradient in the original coordinates ``(w, b)`` is released
    with Gaussian noise ``sigma`` on the noise grid (``release_value``: exact
    noise, no floating-point sum of gradient and noise; ``state`` is the exact
    sampler's generator state, ``sigma = 0`` adds nothing); the step uses ``radius * g_w`` and
    ``y_bound * g_b``, the gradient in the normalised coordinates. With
    ``sparse``, the rows are the CSR arrays ``csr_*`` (``X`` unused), else
    ``X``; ``weights`` are the sample weights (empty: all 1). ``v`` holds
    the intercept (one entry, or none without intercept). ``trace`` receives
    every iterate when it has a row per step (for tests), else nothing.

    ``huber_gram`` (with ``use_gram``): the Huber gradient from the Gram
    statistics and the candidate rows ``cand[:count[0]]`` found at the
    reference ``ref = (w0, b0)`` with level ``h - margin``; the candidates
    are found again (one pass) when ``count[0] < 0`` or the drift
    ``data_norm ||w - w0|| + |b - b0|`` reaches ``0.99 margin``. ``cand``,
    ``ref`` and ``count`` carry that state from one call to the next.
    """
    p = u.size
    intercept = v.size > 0
    d = p + v.size
    w = np.empty(p)
    grad = np.empty(d)
    g_u = np.empty(p)
    z = np.empty(p)
    work = np.empty(p)
    n_groups = starts.size - 1
    norms = np.empty(max(n_groups, 1))
    radii = np.empty(max(n_groups, 1))
    q_dual = q / (q - 1.0) if q > 1.0 else 2.0
    noisy = np.empty(d)
    ws = np.zeros((4, WORKSPACE_DIGITS), np.int64)
    for t in range(n_steps):
        for j in range(p):
            w[j] = radius * u[j]
        b = y_bound * v[0] if intercept else 0.0
        if use_gram and huber_gram:
            if count[0] < 0 or not _drift(w, b, ref, data_norm) < 0.99 * margin:
                count[0] = huber_candidates(X, csr_data, csr_indices, csr_indptr, sparse,
                                            scales, y, w, b, threshold - margin, cand)
                for j in range(p):
                    ref[j] = w[j]
                ref[p] = b
            huber_gram_gradient(gram, z_mean, zy_mean, y_mean, w_mean, X, csr_data,
                                csr_indices, csr_indptr, sparse, scales, y, weights, cand,
                                count[0], w, b, loss, threshold, grad)
        elif use_gram:
            gram_gradient(gram, z_mean, zy_mean, y_mean, w_mean, w, b, grad)
        elif sparse:
            data_gradient_csr(csr_data, csr_indices, csr_indptr, scales, y, weights, w, b,
                              loss, threshold, grad)
        else:
            data_gradient(X, scales, y, weights, w, b, loss, threshold, grad)
        for j in range(d):
            noisy[j] = release_value(grad[j], sigma, True, ws, state)
        for j in range(p):
            g_u[j] = radius * noisy[j]
        if kind == BALL_L2:
            l2_step(u, g_u, eta)
        elif kind == BALL_L1:
            half_sq_norm_grad(u, q, c, z)
            for j in range(p):
                z[j] -= eta * g_u[j]
            l1_step(z, q_dual, 1.0 / c, u, work)
        elif kind == SIMPLEX:
            simplex_step(log_u, g_u, eta, u)
        else:
            group_mirror(u, starts, power, xi, z, norms)
            for j in range(p):
                z[j] -= eta * g_u[j]
            group_step(z, starts, power, xi, u, norms, radii)
        if intercept:
            step = v[0] - eta * y_bound * noisy[p]
            v[0] = min(1.0, max(-1.0, step))
            v_sum[0] += v[0]
        for j in range(p):
            u_sum[j] += u[j]
        if trace.shape[0] == n_steps:
            for j in range(p):
                trace[t, j] = u[j]
            if intercept:
                trace[t, p] = v[0]
