"""The floating-point floor of the Gram statistics, shared by Frank-Wolfe and mirror descent.

One record moves an entry of the Gram matrix by at most ``2 R^2 / n`` and one of the
linear statistic (``X^T y / n``) by at most ``2 R Y / n``. Below ``TINY`` those moves are
subnormal, where a sum's division by ``n`` rounds to whole subnormal steps, and the
iterate (up to the radius) multiplies that rounding beyond the sensitivity
(``doc/privacy.md`` section 54.3). Public values only: checked before the data is read.
"""

# Sensitivities and noise scales below this lose their precision (or vanish) in
# double precision; the data's effect would be rounded, not bounded.
TINY = 1e-290


def gram_statistic_sensitivities(n_samples, row_bound, y_bound):
    """``(2 R^2 / n, 2 R Y / n)``: what one record can move an entry of the Gram matrix
    (``|z_j z_k| <= R^2``) and of ``mean(z y)`` (``|z_j y| <= R Y``)."""
    return (2.0 * row_bound * row_bound / n_samples, 2.0 * row_bound * y_bound / n_samples)


def check_gram_statistics(n_samples, row_bound, y_bound, row_name):
    """Refuse bounds whose Gram statistics would be rounded to whole subnormal steps;
    ``row_name`` is the estimator's name of the row bound (for the message)."""
    per_gram, per_cross = gram_statistic_sensitivities(n_samples, row_bound, y_bound)
    if not (per_gram >= TINY and per_cross >= TINY):
        raise ValueError(
            f"{row_name}={row_bound:.3g} and y_bound={y_bound:.3g} with n={n_samples} "
            f"make one record's share of the Gram statistics (2 R^2/n = {per_gram:.3g}, "
            f"2 R Y/n = {per_cross:.3g}) smaller than {TINY:.0e}: floating point would "
            "round them to whole subnormal steps, and the radius would multiply that "
            "rounding beyond the sensitivity. Rescale X and y by public constants so that "
            f"{row_name} and y_bound are near 1 (or pass fewer rows per call)."
        )
