"""Private implicit gradient descent (seed 002, Alg. 2) and GIGA (Alg. 3).

The learner updates its *uncorrupted* iterate; a release adds Gaussian noise to
it. The sensitivity bounds here are derived in ``doc/privacy.md``, section 2.
With ``L`` the Lipschitz constant of the loss alone (the L2 regulariser is the
same on neighbouring data sets and cancels) and ``D_t`` the largest distance
between the iterates after ``t`` steps on neighbouring data:

* IGD: ``(t + 1) D_{t+1} <= t D_t + 2L/alpha`` at a step that sees the
  replaced record, ``<= t D_t`` otherwise;
* GIGA (``t >= burn_in``): ``t D_{t+1} <= (t - 1) D_t + 4L/alpha`` likewise.

So after ``T`` steps in which the record appeared ``k`` times,
``D <= k * step_sensitivity / (T + offset)``, whatever the order of the rows.
"""

import math
from functools import partial

from joblib import Parallel, delayed
from scipy.sparse import issparse

from . import losses, sets
from .noise import gaussian_release

IMPLICIT = "implicit"
GRADIENT = "gradient"


def loss_lipschitz(data_norm, intercept_value, loss=losses.LOG_LOSS):
    """Lipschitz constant of the log and hinge losses in the weights.

    Both have ``|phi'| <= 1`` (:func:`.losses.derivative_bound`), so ``L`` is
    the largest norm of an augmented row ``(clipped x, intercept_value)``.
    """
    return losses.lipschitz(losses.derivative_bound(loss), data_norm, intercept_value)


def step_sensitivity(lipschitz, alpha, update):
    """The ``lambda`` of the sensitivity recursion: 2L/alpha (IGD), 4L/alpha (GIGA).

    GIGA's step ``2/(alpha t)`` is twice IGD's, hence twice the constant; the
    seed's 2G/alpha drops that factor 2.
    """
    factor = 2.0 if update == IMPLICIT else 4.0
    return factor * lipschitz / alpha


def burn_in_steps(lipschitz, alpha, update):
    """First step at which GIGA updates (seed Alg. 3's ``t_q``); 1 for IGD.

    GIGA is a contraction by ``(t-1)/t`` once ``t >= 2 L_G^2 / alpha^2 - 1/2``,
    with ``L_G = L^2/4 + alpha`` the smoothness of the regularised log loss.
    """
    if update == IMPLICIT:
        return 1
    # The ratio form: alpha**2 underflows to 0 for alpha ~ 1e-200.
    ratio = (lipschitz * lipschitz / 4.0 + alpha) / alpha
    return max(2, math.ceil(2.0 * ratio * ratio))


def release_sensitivity(lipschitz, alpha, update, n_steps, n_occurrences):
    """L2 sensitivity of the iterate after ``n_steps`` steps of one binary problem.

    ``n_occurrences`` is how many of those steps may see the replaced record
    (the number of passes for ``fit``, 1 for a stream).
    """
    offset = 1 if update == IMPLICIT else 0
    denominator = n_steps + offset
    if denominator <= 0:
        return 0.0
    return n_occurrences * step_sensitivity(lipschitz, alpha, update) / denominator


# alpha t stays finite (below 1e300) for every count of samples up to 2^53.
MAX_ALPHA = 1e280


def check_geometry(lipschitz, alpha, update):
    """Raise ``ValueError`` when the bounds cannot be computed in floating point."""
    if not alpha > 0.0:
        raise ValueError(
            f"alpha={alpha!r} leaves no strong convexity (an alpha='auto' of data_norm "
            f"{lipschitz:.3g} underflows to 0): pass data_norm and intercept_scaling of at "
            "least about 1e-150, or a positive alpha."
        )
    # Products, not **: float ** raises OverflowError where * gives inf.
    square = lipschitz * lipschitz
    values = (square, step_sensitivity(lipschitz, alpha, update), square / alpha)
    if not all(v < 1e300 for v in values):  # also catches inf and nan
        raise ValueError(
            f"data_norm, intercept_scaling and alpha give an infinite sensitivity "
            f"(L={lipschitz:.3g}, alpha={alpha:.3g}). Rescale X by a public bound so "
            "that data_norm and intercept_scaling are at most about 1e150, and "
            "choose alpha so that L**2 / alpha stays below 1e300."
        )
    if not alpha <= MAX_ALPHA:
        raise ValueError(
            f"alpha={alpha!r} is too large for floating point: the regularisation alpha t "
            f"of a stream's t-th sample would overflow (the model would be NaN). Pass "
            f"alpha of at most {MAX_ALPHA:g}; rescale X by a public bound if needed."
        )
    ratio = (square / 4.0 + alpha) / alpha
    if update == GRADIENT and 2.0 * ratio * ratio > 2**53:
        raise ValueError(
            "update='gradient' would skip more than 2**53 samples (its burn-in "
            "2 (L^2/4 + alpha)^2 / alpha^2): increase alpha or use update='implicit'."
        )


def iterate_radius(lipschitz, alpha):
    """Radius of the ball that contains every iterate: ``L / alpha``.

    It holds the minimiser of every regularised loss, IGD maps it into itself,
    and GIGA projects onto it.
    """
    return lipschitz / alpha


def run_pass(W, X, row_scale, row_sq, Y, order, t_start, *, alpha, loss, update,
             intercept_value, lipschitz, n_jobs=None, sample_weight=None):
    """One pass over ``X[order]`` for each binary problem (row of ``W``), in place.

    ``Y`` holds the {-1, +1} labels of each problem, one row per row of ``W``.
    ``X`` is a dense array or a CSR matrix (sparse kernels, stored entries
    only). ``sample_weight`` (values in [0, 1], or ``None``) multiplies each
    record's loss. Returns the step counter after the pass.
    """
    options = dict(alpha=alpha, loss=loss, update=update, intercept_value=intercept_value,
                   lipschitz=lipschitz, sample_weight=sample_weight)
    if W.shape[0] == 1 or n_jobs in (None, 1):
        results = [_one_problem(W[k], X, row_scale, row_sq, Y[k], order, t_start, **options)
                   for k in range(W.shape[0])]
    else:
        # The kernels release the GIL, so threads are preferred; a process
        # backend chosen with joblib.parallel_config works on copies of the
        # rows, hence every problem returns its row and it is written back.
        results = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_one_problem)(W[k], X, row_scale, row_sq, Y[k], order, t_start,
                                  **options)
            for k in range(W.shape[0])
        )
    for k, (w, _) in enumerate(results):
        W[k] = w
    return int(results[0][1])


def _one_problem(w, X, row_scale, row_sq, y, order, t_start, *, alpha, loss, update,
                 intercept_value, lipschitz, sample_weight=None):
    """One pass of one binary problem on ``w`` (updated in place); ``(w, t)``."""
    from . import _igd_kernels as kernels

    if issparse(X):
        csr = (X.data, X.indices, X.indptr, X.shape[1])
        if update == IMPLICIT:
            loss_code = losses.code(loss)
            t = kernels.implicit_pass_csr(w, *csr, y, row_scale, row_sq, order, t_start,
                                          alpha, loss_code, intercept_value, sample_weight)
        else:
            t = kernels.gradient_pass_csr(w, *csr, y, row_scale, row_sq, order, t_start,
                                          alpha, intercept_value,
                                          burn_in_steps(lipschitz, alpha, update),
                                          iterate_radius(lipschitz, alpha), sample_weight)
        return w, t
    if update == IMPLICIT:
        loss_code = losses.code(loss)
        t = kernels.implicit_pass(w, X, y, row_scale, row_sq, order, t_start, alpha,
                                  loss_code, intercept_value, sample_weight)
    else:
        t = kernels.gradient_pass(w, X, y, row_scale, row_sq, order, t_start, alpha,
                                  intercept_value, burn_in_steps(lipschitz, alpha, update),
                                  iterate_radius(lipschitz, alpha), sample_weight)
    return w, t


def release(W, sigma, radius, rng):
    """Gaussian release of the iterates, projected back onto their ball.

    The projection is post-processing; it only removes noise that pushed a
    coefficient vector outside the set every true iterate lies in.
    """
    return gaussian_release(W, sigma, rng, partial(sets.project_rows_l2, radius=radius))
