"""The floating-point allowance of a sensitivity bound on a sum of many records.

A release that sums ``n`` records' bounded terms (a mean gradient, scores, the QFTL
statistics) is computed in float64, in an order the library does not always control
(BLAS, compiled loops). Two neighbouring data sets' *computed* sums differ by the exact
difference of the replaced record's term plus the two rounding errors, each at most
``gamma_(n-1) sum_i ||t_i|| <= gamma_(n-1) n B`` for terms of norm at most ``B`` in any
summation order (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
section 4.2; per coordinate, then the triangle inequality for the L2 norm), with
``gamma_k = k u / (1 - k u)``, ``u = 2^-53``. Relative to the sensitivity ``Delta``
that is ``2 (B / Delta) n gamma_(n-1)`` (``B / Delta = 1/2`` for a mean gradient, whose
sensitivity is twice a record's bound). With the record's own term's rounding
(``1 + gamma_2``) and a division by ``n`` (``1 + u``), the computed sensitivity is at most
``sum_rounding_factor(n, B / Delta) * Delta`` (``doc/privacy.md`` section 54.8). At
``B / Delta = 1/2`` the factor is ``1 + 1.1e-12`` at ``n = 10^2``, ``1 + 1.1e-4`` at ``10^6``
and ``1.011`` at ``10^7``.
"""


UNIT_ROUNDOFF = 2.0 ** -53

__all__ = ["gamma", "sum_rounding_factor"]


def gamma(k):
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error of ``k`` roundings."""
    ku = k * UNIT_ROUNDOFF
    return ku / (1.0 - ku)


def sum_rounding_factor(n_terms, term_ratio=0.5):
    """``(1 + gamma_3) (1 + 2 term_ratio n gamma_(n-1))``, rounded up: the relative
    allowance on the replace-one sensitivity of a sum of ``n_terms`` bounded terms
    computed in floating point in any order (public: the count and a ratio of bounds).

    Parameters
    ----------
    n_terms : int
        The number of terms summed (rows, plus the columns of a matrix-vector product
        the release goes through).
    term_ratio : float, default=0.5
        A bound on one term's norm over the sensitivity (1/2 for the mean of
        per-record terms of a common bound).

    Returns
    -------
    factor : float
        At least 1.
    """
    n = max(int(n_terms), 1)
    if (n + 3) * UNIT_ROUNDOFF >= 1e-3:       # about 9e12 terms: no float64 sum is safe
        raise ValueError(
            f"{n} terms are too many to sum in float64 with a bounded rounding error.")
    factor = (1.0 + gamma(3)) * (1.0 + 2.0 * float(term_ratio) * n * gamma(n - 1))
    return factor * (1.0 + 4.0 * UNIT_ROUNDOFF)   # the evaluation of the factor itself
