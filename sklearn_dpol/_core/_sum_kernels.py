"""Sums whose rounding does not depend on the compiler (numba kernels).

Imported lazily by the learners' kernels (``_mi_kernels``, ``_pf_kernels``), so
``import sklearn_dpol`` does not load numba.

A reduction compiled with ``fastmath={"reassoc"}`` is vectorised by LLVM in
whatever order suits the code around it, so the same function, inlined into two
different callers, may round differently (one ulp of a learner's state: enough
to break the tests that hold a protocol kernel bit for bit equal to its per-user
reference). The sums here are written in four lanes with a fixed order instead:
lane ``k`` holds the terms ``j = k mod 4`` of the first ``4 floor(n / 4)``, the
lanes are combined as ``(l0 + l1) + (l2 + l3)``, then the remaining terms are
added in order. Without ``reassoc`` LLVM may still pack the four lanes into one
vector register (each lane keeps its own order), but never reorders a lane, so
every caller gets the same bits. Learners read the sums of public (already
noisy) reports: the order is a matter of rounding, not of privacy.
"""

from numba import njit

from ._kernel_cache import refresh as _refresh_kernel_cache

_refresh_kernel_cache()  # before any kernel is compiled or loaded: see _kernel_cache

#: The lanes of every fixed-order sum.
LANES = 4


@njit(cache=True, nogil=True, inline="always")
def lane_total(l0, l1, l2, l3):
    """The four lanes' partial sums combined in the one fixed order."""
    return (l0 + l1) + (l2 + l3)


@njit(cache=True, nogil=True)
def lane_dot(a, b):
    """``sum_j a[j] b[j]`` in the fixed order of this module (``a``, ``b`` of equal length)."""
    n = a.shape[0]
    body = n - n % LANES
    l0 = l1 = l2 = l3 = 0.0
    for j in range(0, body, LANES):
        l0 += a[j] * b[j]
        l1 += a[j + 1] * b[j + 1]
        l2 += a[j + 2] * b[j + 2]
        l3 += a[j + 3] * b[j + 3]
    total = lane_total(l0, l1, l2, l3)
    for j in range(body, n):
        total += a[j] * b[j]
    return total
