"""The mu that Honaker's tree attains on the first record of a stream (doc/privacy.md, 48).

Shared by the QFTL and DP-FTRL audits; derived from the tree's structure, independently of
``HonakerTree.fresh_part``.
"""

import math

from sklearn_dpol._core.prefix_sums import honaker_relative_variances


def honaker_first_record_fraction(levels):
    """mu attained on the first record of a stream released row by row, over the tree's mu.

    Honaker's tree draws each new block's estimate as one Gaussian (doc/privacy.md,
    section 48). Row by row, the block ``(h, 0, 2^h)`` completes at ``t = 2^h`` with every
    position but the last old: its estimate is ``w_h (exact + z) + (1 - w_h) (old left
    half + right half)``, the right half again a level-``h-1`` block whose last leaf only
    is new. So the first record's weight in the released centre is ``w_h`` and the fresh
    variance is ``S_h = w_h^2 + (1 - w_h)^2 S_{h-1}``, ``S_0 = 1``: the record's squared mu
    is ``sum_h w_h^2 / S_h`` node units, against ``levels`` for the tree.
    """
    w = honaker_relative_variances(levels)
    fresh, total = 1.0, 1.0
    for h in range(1, levels):
        fresh = w[h] ** 2 + (1.0 - w[h]) ** 2 * fresh
        total += w[h] ** 2 / fresh
    return math.sqrt(total / levels)
