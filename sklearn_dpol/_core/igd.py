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
That is in exact arithmetic; the computed iterates carry the rounding allowance
:func:`iterate_rounding_factor` (``doc/privacy.md`` 55.10), which the release applies.
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


def release_sensitivity(lipschitz, alpha, update, n_steps, n_occurrences, *, width=None,
                        loss=losses.LOG_LOSS):
    """L2 sensitivity of the iterate after ``n_steps`` steps of one binary problem.

    ``n_occurrences`` is how many of those steps may see the replaced record
    (the number of passes for ``fit``, 1 for a stream). With ``width`` (the
    iterate's length: features plus the intercept column) the bound is that of
    the *computed* iterates, :func:`iterate_rounding_factor` times the exact one
    (``doc/privacy.md`` 55.10); without it, the exact-arithmetic bound.
    """
    offset = 1 if update == IMPLICIT else 0
    denominator = n_steps + offset
    if denominator <= 0:
        return 0.0
    exact = n_occurrences * step_sensitivity(lipschitz, alpha, update) / denominator
    if width is None:
        return exact
    return exact * iterate_rounding_factor(n_steps, n_occurrences, width, update, loss)


# The largest relative allowance accepted: beyond it the float64 iterate's rounding, not
# the record, would set the noise. Public values only (steps, passes, width), so a call
# past it is refused before any data is read.
MAX_ITERATE_ROUNDING = 0.1

# A computed iterate's norm over L/alpha while the allowance is at most the cap (55.10.3).
_RADIUS_SLACK = 1.0 + MAX_ITERATE_ROUNDING

# The log loss's implicit step solves for its weight s in (0, 1) by Newton's method,
# stopped at a step of at most 1e-14 max(1, |log s|), and by bisection on u = k s above
# curvature 1e12 (Newton lost the root to cancellation there, 55.17); a generous bound on
# the absolute error of the computed s (in units of the step's size in w-space). Argued
# and measured (at most 2^-52 against 60-digit roots over curvatures 1e-2 .. 1e42 and
# margins of order -k, 55.17), not proved.
LOG_LOSS_SOLVE_ERROR = 2.0 ** -36


def iterate_rounding_constants(width, update):
    """``(c_iterate, c_step, c_record)``: the unit-roundoff counts of 55.10.

    Per step, the computed map differs from the exact one by at most
    ``gamma(c_iterate) |w| + gamma(c_step) |step|`` (``|w| <= L/alpha`` up to the slack,
    ``|step| <= L/(alpha (t + 1))`` for IGD, ``2L/(alpha t)`` for GIGA); a clipped row's
    computed norm is at most ``L (1 + gamma(c_record))``. ``width``: the iterate's length.
    """
    width = int(width)
    c_record = width + 10
    if update == IMPLICIT:
        # shrink and axpy 3, margin (inner product, scale, shrink) width + 3, the hinge
        # branch 2, a fold of the scale 1.
        c_iterate = width + 9
        # the coefficient 8, the curvature (its six products and the clipped row's
        # squared norm) 2 width + 18, the weight's formula and branches 4; generously
        # 2 width + 40. The log loss's Newton solve is LOG_LOSS_SOLVE_ERROR on top.
        c_step = 2 * width + 40
    else:
        # shrink 4, scale and axpy 2, the margin through the slope width + 2, the
        # norm recomputed for the projection and the projection width + 5, a fold 1.
        c_iterate = 2 * width + 14
        # eta 2, the slope 4, the step 3, the axpy's product 1.
        c_step = 10
    return c_iterate, c_step, c_record


def iterate_rounding_factor(n_steps, n_occurrences, width, update=IMPLICIT,
                            loss=losses.LOG_LOSS):
    """The relative allowance for the rounding of the computed iterates (public values).

    IGD: ``(T + 1) D_T <= 2 L' k / alpha + sum_(t <= T) 2 (t + 1) E_t`` with the per-step
    error ``E_t`` of :func:`iterate_rounding_constants`, so the exact bound
    ``2 L k / (alpha (T + 1))`` is multiplied by ``(1 + gamma(c_record)) (1 + X)`` with
    ``X = (slack gamma(c_iterate) T (T + 3) / 2 + (gamma(c_step) + solve) T) / k``;
    GIGA likewise with ``T (T + 1) / 4`` and ``t D_(t+1) <= (t - 1) D_t + ...``
    (``doc/privacy.md`` 55.10). Raises ``ValueError`` when ``X`` passes
    :data:`MAX_ITERATE_ROUNDING`.
    """
    from ..privacy._rounding import UNIT_ROUNDOFF, gamma

    steps = max(int(n_steps), 0)
    k = max(int(n_occurrences), 1)
    c_iterate, c_step, c_record = iterate_rounding_constants(width, update)
    solve = LOG_LOSS_SOLVE_ERROR if loss == losses.LOG_LOSS else 0.0
    if update == IMPLICIT:
        quadratic = steps * (steps + 3.0) / 2.0
    else:
        quadratic = steps * (steps + 1.0) / 4.0
        solve = 0.0                       # GIGA's slope is a closed form
    excess = (_RADIUS_SLACK * gamma(c_iterate) * quadratic
              + (gamma(c_step) + solve) * steps) / k
    if not excess <= MAX_ITERATE_ROUNDING:
        raise ValueError(
            f"{steps} steps ({k} occurrence(s) of a record) of a {width}-wide iterate are too "
            f"many for float64: the rounding of the iterate could move the release by "
            f"{excess:.3g} times the record's own effect (at most {MAX_ITERATE_ROUNDING:g} "
            "is accepted). Use fewer samples or passes per fit (max_iter), "
            "solver='objective_perturbation' for fit, or stream='ftrl' for a stream.")
    factor = (1.0 + gamma(c_record)) * (1.0 + excess)
    return factor * (1.0 + 4.0 * UNIT_ROUNDOFF)   # the evaluation of the factor itself


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
