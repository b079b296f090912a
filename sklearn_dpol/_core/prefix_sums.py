"""Private prefix sums of a stream of vectors: binary trees of Gaussian node sums.

A tree over stream positions ``1..H`` has one node per dyadic block
``(k 2^h, (k+1) 2^h]`` at level ``h``. Every node that is ever used gets its
exact sum plus independent ``N(0, sigma^2 I)`` noise, drawn once and reused,
through :func:`~sklearn_dpol._core.noise.gaussian_release`. A record lies in
exactly one block per level, and only blocks that are complete by position
``H`` are ever noised, so a record is in at most ``H.bit_length()`` noised
nodes (``floor(log2 H) + 1``; seed 002 says ``log T``, the notes
``ceil(log2 T) + 1``, one too many whenever ``H`` is not a power of two).
The release of every node is one Gaussian mechanism with GDP parameter
``sqrt(levels) * Delta / sigma`` (``doc/privacy.md``, section 3); ``sigma``
carries the stream layer's rounding allowance ``(1 + 1e-3)`` (section 55.8).

Two estimators of the prefix ``W_t = sum_{s <= t} w_s`` share that budget:

* :class:`DyadicTree`: ``W_t`` is the sum of the noisy blocks of ``t``'s
  binary expansion (one per set bit).
* :class:`HonakerTree`: every complete node is (in law) noised, and each is
  replaced by the inverse-variance combination of its own value and its
  children's estimates (Honaker 2015, bottom-up online form), which roughly
  halves the variance of high nodes.

Both draw lazily (``doc/privacy.md``, sections 48 and 50): a call draws the
sum of its new blocks' estimates as one Gaussian, and the estimate of a kept
part of an earlier call's blocks, given what was drawn of them, only when a
release needs it: at most two draws a call, the law of the tree that noises
every node.

:class:`EpochTree` serves a stream of unknown length: epoch ``k`` covers
positions ``[2^k, 2^(k+1))`` with its own tree of ``k + 1`` levels and noise
``sqrt(k + 1) (1 + 1e-3) Delta / mu``; a record lies in one epoch, so the infinite
release is ``mu``-GDP (Chan, Shi and Song 2011, with Gaussian noise).
"""

import copy
import math

import numpy as np

from .noise import SMALLEST_SCALE, gaussian_release


def tree_levels(horizon):
    """Levels whose nodes can complete within ``horizon`` positions: noised nodes per record."""
    return int(horizon).bit_length()


def dyadic_blocks(t):
    """The blocks ``(level, start, end]`` of ``t``'s binary expansion, highest first."""
    blocks, start = [], 0
    for level in range(int(t).bit_length() - 1, -1, -1):
        if t >> level & 1:
            blocks.append((level, start, start + (1 << level)))
            start += 1 << level
    return blocks


def honaker_relative_variances(n_levels):
    """Variance of Honaker's estimate of a node at levels ``0..n_levels-1``, over ``sigma**2``.

    A leaf has ``sigma^2``; a node at level ``h`` combines its own value
    (``sigma^2``) with the sum of its two children (``2 v_{h-1}``), so
    ``v_h = 1 / (1/sigma^2 + 1/(2 v_{h-1}))``, which tends to ``sigma^2 / 2``.
    The ratio ``v_h / sigma^2`` is also the weight of the node's own value.
    """
    ratios = [1.0]
    for _ in range(1, n_levels):
        ratios.append(1.0 / (1.0 + 1.0 / (2.0 * ratios[-1])))
    return np.array(ratios)


class _Group:
    """The blocks that one call completed (in stream order), and what is known of them.

    Block ``i``'s estimate is ``base[i] + centre[i] + F_i``: ``base`` a function of
    earlier releases (public), ``centre`` a linear function of the data (its own rows,
    and those of the old blocks it absorbed), ``F_i`` an independent ``N(0, V_i
    sigma^2 I)``. Only the sum of the first ``k`` estimates, ``known``, has been
    drawn; the first ``k`` blocks are those still in the expansion.
    """

    _LISTS = ("levels", "starts", "ends", "exact", "base", "centre", "variance")

    def leading(self, j):
        """The group's first ``j`` blocks (a new object: groups are never changed)."""
        twin = _Group()
        for name in self._LISTS:
            setattr(twin, name, getattr(self, name)[:j])
        twin.k, twin.known = j, self.known
        return twin


class HonakerTree:
    """Prefix sums from Honaker's inverse-variance node estimates, drawn lazily.

    Parameters
    ----------
    dim : int
        Length of the summed vectors.
    sigma : float
        Standard deviation of each node's noise (0 adds none).
    horizon : int
        Last position; the tree raises instead of going past it.

    The estimates are those of the bottom-up online form (every complete node
    noised; each replaced by the inverse-variance combination of its own value
    and its children's estimates, Honaker 2015). A release reads only the
    estimates of the blocks of ``t``'s binary expansion, and the estimate of a
    block that completes in a batch is the old blocks' estimates it contains,
    times known weights, plus an independent Gaussian made of the noise of
    every node not complete before the batch (``doc/privacy.md``, section 48).
    Nothing is drawn that a release does not read (section 50): a call draws
    the *sum* of its new blocks' estimates (one Gaussian), and the estimate of
    a leading part of an earlier call's blocks only when a later release keeps
    that part and drops the rest (one Gaussian, conditioned on the sum already
    drawn: a Brownian bridge). The weighted estimates of the dropped blocks,
    which the next block absorbs, are drawn within that block's own Gaussian.
    A call costs at most two draws, whatever its size; the joint law of the
    releases is that of the tree that noises every node.
    """

    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma, self.horizon = dim, float(sigma), int(horizon)
        self.t = 0
        self.ratios = self._ratios(tree_levels(horizon))
        self.groups = []    # the groups holding t's expansion, in stream order

    @staticmethod
    def _ratios(n_levels):
        return honaker_relative_variances(n_levels)

    def advance(self, stats, lo, hi, rng):
        """Append rows ``lo:hi`` of ``stats`` and return the noisy prefix sum."""
        t0, t1 = self.t, self.t + (hi - lo)
        _check_horizon(t1, self.horizon)
        wanted = dyadic_blocks(t1)
        kept = sum(1 for _, _, end in wanted if end <= t0)
        groups, dropped = self._keep(kept, rng)
        group = _Group()
        group.levels, group.starts, group.ends = [], [], []
        group.exact, group.base, group.centre, group.variance = [], [], [], []
        for level, start, end in wanted[kept:]:
            variance, weights = self.fresh_part(level, start, t0)
            # Only the block's own rows: those of the batch, and its old blocks' exact sums.
            exact = stats.sum(lo + max(start, t0) - t0, lo + end - t0)
            centre = exact.copy()
            base = None
            for old_start, weight in weights.items():
                old_exact = dropped[old_start][0]
                exact += old_exact
                centre += (1.0 - weight) * old_exact
            if any(weights.values()):
                # sum_o c_o est(o): its public part, its data part, and the variance of
                # what the dropped blocks' sums drawn so far leave undetermined.
                base, data, extra = self._absorbed(weights, dropped)
                centre += data
                variance += extra
            group.levels.append(level)
            group.starts.append(start)
            group.ends.append(end)
            group.exact.append(exact)
            group.base.append(base)
            group.centre.append(centre)
            group.variance.append(variance)
        group.k = len(group.levels)
        group.known = _summed((b for b in group.base if b is not None), self.dim)
        group.known += self._release(_summed(group.centre, self.dim), sum(group.variance), rng)
        groups.append(group)
        self.groups, self.t = groups, t1
        return _summed((g.known for g in groups), self.dim)

    def _release(self, centre, variance, rng):
        scale = self.sigma * math.sqrt(max(variance, 0.0))
        if 0.0 < scale < SMALLEST_SCALE:
            # V < 1 may take a scale the sampler accepts below its smallest grid:
            # more noise is as private (sigma near 1e-290 only).
            scale = SMALLEST_SCALE
        return gaussian_release(centre, scale, rng)

    def _keep(self, kept, rng):
        """The groups of the first ``kept`` blocks of ``t``'s expansion, the one cut short
        bridged to its kept part; and, for each dropped block (by start), ``(exact, group,
        index, first, unresolved)``: its group as it was, the group's first dropped index
        and the drawn sum of the group's dropped estimates (its known sum less the kept
        part's)."""
        groups, dropped, seen = [], {}, 0
        for group in self.groups:
            keep = min(max(kept - seen, 0), group.k)
            unresolved = group.known
            if keep == group.k:
                groups.append(group)
            elif keep:
                twin = self._bridged(group, keep, rng)
                groups.append(twin)
                unresolved = group.known - twin.known
            for i in range(keep, group.k):
                dropped[group.starts[i]] = (group.exact[i], group, i, keep, unresolved)
            seen += group.k
        return groups, dropped

    def _bridged(self, group, j, rng):
        """``group`` with only its first ``j`` blocks: the sum of their estimates drawn
        given the sum of the first ``k`` (Gaussian conditioning; section 50)."""
        k = group.k
        whole = sum(group.variance[:k])
        part = sum(group.variance[:j])
        beta = part / whole
        base_part = _summed((b for b in group.base[:j] if b is not None), self.dim)
        base_whole = _summed((b for b in group.base[:k] if b is not None), self.dim)
        # (1 - beta) (kept part) - beta (the rest): two sums of disjoint blocks' rows
        centre = ((1.0 - beta) * _summed(group.centre[:j], self.dim)
                  - beta * _summed(group.centre[j:k], self.dim))
        twin = group.leading(j)
        twin.known = (base_part + beta * (group.known - base_whole)
                      + self._release(centre, part * (whole - part) / whole, rng))
        return twin

    def _absorbed(self, weights, dropped):
        """``sum_o c_o est(o)`` over the dropped blocks ``o``, as ``(public, data,
        variance)``: its mean given what was drawn of their groups splits into a function
        of earlier releases and a linear function of the data; ``variance`` (in units of
        ``sigma^2``) is what remains, independent of everything drawn (section 50)."""
        public, data, variance = np.zeros(self.dim), np.zeros(self.dim), 0.0
        by_group = {}
        for start, weight in weights.items():
            _, group, i, first, unresolved = dropped[start]
            entry = by_group.setdefault(id(group), (group, first, unresolved, {}))
            entry[3][i] = weight
        for group, first, unresolved, coefficient in by_group.values():
            members = range(first, group.k)
            a = [coefficient.get(i, 0.0) for i in members]
            if all(ai == a[0] for ai in a):
                # c times the drawn sum itself (one block, or equal weights): nothing to draw
                public += a[0] * unresolved
                continue
            v = [group.variance[i] for i in members]
            total = sum(v)
            beta = sum(ai * vi for ai, vi in zip(a, v)) / total
            base_sum = _summed((group.base[i] for i in members if group.base[i] is not None),
                               self.dim)
            for ai, i in zip(a, members):
                if group.base[i] is not None:
                    public += ai * group.base[i]
                data += ai * group.centre[i]
            public += beta * (unresolved - base_sum)
            data -= beta * _summed((group.centre[i] for i in members), self.dim)
            variance += (sum(ai * ai * vi for ai, vi in zip(a, v))
                         - sum(ai * vi for ai, vi in zip(a, v)) ** 2 / total)
        return public, data, max(variance, 0.0)

    def fresh_part(self, level, start, t0):
        """``(V, weights)`` of the block at ``(level, start)`` when positions up to ``t0`` are old.

        Its Honaker estimate is ``exact + sum_o weights[o] noise(o) + fresh``: ``noise(o)``
        that of the estimate of the old block starting at ``o`` (a block of ``t0``'s
        expansion), ``fresh`` a Gaussian of variance ``V sigma^2`` made of the noise of
        every node not complete at ``t0`` (independent of everything drawn before).
        """
        size = 1 << level
        if start + size <= t0:                 # an old block (one of t0's expansion)
            return 0.0, {start: 1.0}
        if start >= t0:                         # no old row: the whole subtree is fresh
            return float(self.ratios[level]), {}
        # It straddles t0: w (own value + z) + (1 - w) (left + right), recursively.
        own = float(self.ratios[level])
        left_var, left = self.fresh_part(level - 1, start, t0)
        right_var, right = self.fresh_part(level - 1, start + size // 2, t0)
        weights = {key: (1.0 - own) * weight for key, weight in {**left, **right}.items()}
        return own**2 + (1.0 - own)**2 * (left_var + right_var), weights

    def snapshot(self):
        """A copy to advance: ``advance`` replaces arrays and never writes into them."""
        twin = copy.copy(self)
        twin.groups = list(self.groups)     # groups are never changed, only replaced
        return twin

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix sum at ``t``."""
        set_bits = [h for h in range(int(t).bit_length()) if t >> h & 1]
        return float(self.sigma**2 * self.ratios[set_bits].sum())


class DyadicTree(HonakerTree):
    """Prefix sums over positions ``1..horizon`` from the noisy blocks of ``t``'s expansion.

    Same parameters as :class:`HonakerTree`. Every node gets its exact sum plus
    its own ``N(0, sigma^2 I)``; the prefix at ``t`` is the sum of the blocks of
    ``t``'s binary expansion. It is :class:`HonakerTree` with every node's
    weight on its own value equal to 1 (no combination with the children), so
    it draws as lazily: at most two Gaussians a call.
    """

    @staticmethod
    def _ratios(n_levels):
        return np.ones(n_levels)

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix sum at ``t``."""
        return self.sigma**2 * bin(int(t)).count("1")


TREES = {"tree": DyadicTree, "honaker": HonakerTree}


class KnownHorizonPrefixSums:
    """One tree over a stream of at most ``horizon`` positions, ``mu``-GDP in all.

    ``sigma = sqrt(levels) * (1 + 1e-3) * sensitivity / mu`` with ``levels =
    horizon.bit_length()`` (the rounding allowance, section 55.8).
    """

    def __init__(self, dim, sensitivity, mu, horizon, estimator):
        self.mu = float(mu)
        self.levels = tree_levels(horizon)
        self.sigma = _node_sigma(sensitivity, mu, self.levels)
        self.tree = TREES[estimator](dim, self.sigma, horizon)

    @property
    def t(self):
        return self.tree.t

    def snapshot(self):
        """A copy to advance, leaving this one untouched (cheap: no array is copied)."""
        twin = copy.copy(self)
        twin.tree = self.tree.snapshot()
        return twin

    def advance(self, stats, rng):
        return self.tree.advance(stats, 0, stats.n_rows, rng)

    def prefix_variance(self, t):
        return self.tree.prefix_variance(t)

    def current_variance(self):
        """Per-coordinate variance of the last released prefix."""
        return self.tree.prefix_variance(self.t)

    def spent_fraction(self):
        """``(spent mu / mu)**2``: a record so far lies in at most ``t.bit_length()`` noised nodes."""
        return min(self.t.bit_length(), self.levels) / self.levels


class EpochTree:
    """Prefix sums for a stream of unknown length, ``mu``-GDP however long it runs.

    Epoch ``k`` holds positions ``[2^k, 2^(k+1))`` in its own tree of ``k + 1``
    levels with ``sigma_k = sqrt(k + 1) * (1 + 1e-3) * sensitivity / mu``. A completed
    epoch contributes its noisy total (the root, or its Honaker estimate).
    """

    def __init__(self, dim, sensitivity, mu, estimator):
        self.dim, self.sensitivity, self.mu, self.estimator = dim, sensitivity, float(mu), estimator
        self.t = 0
        self.closed_total = np.zeros(dim)   # noisy totals of the completed epochs
        self.closed_variance = 0.0          # and the variance of that sum, per coordinate
        self.epoch, self.tree = -1, None

    def advance(self, stats, rng):
        lo, released = 0, None
        while lo < stats.n_rows:
            if self.tree is None or self.tree.t == self.tree.horizon:
                self._open_next_epoch()
            hi = min(stats.n_rows, lo + self.tree.horizon - self.tree.t)
            local = self.tree.advance(stats, lo, hi, rng)
            self.t += hi - lo
            lo = hi
            released = self.closed_total + local
            if self.tree.t == self.tree.horizon:
                self.closed_total = released
                self.closed_variance += self.tree.prefix_variance(self.tree.t)
        return released

    def snapshot(self):
        """A copy to advance, leaving this one untouched (cheap: no array is copied)."""
        twin = copy.copy(self)
        twin.tree = None if self.tree is None else self.tree.snapshot()
        return twin

    def _open_next_epoch(self):
        self.epoch += 1
        levels = self.epoch + 1
        sigma = _node_sigma(self.sensitivity, self.mu, levels)
        self.tree = TREES[self.estimator](self.dim, sigma, 1 << self.epoch)

    def current_variance(self):
        """Per-coordinate variance of the last released prefix (cheap: kept as it goes)."""
        if self.tree is None:
            return 0.0
        if self.tree.t == self.tree.horizon:
            return self.closed_variance
        return self.closed_variance + self.tree.prefix_variance(self.tree.t)

    def prefix_variance(self, t):
        """Per-coordinate variance at ``t``, for the tree as it would be built (no data needed)."""
        epoch = int(t).bit_length() - 1
        variance = 0.0
        for k in range(epoch):
            variance += self._epoch_tree(k).prefix_variance(1 << k)
        return variance + self._epoch_tree(epoch).prefix_variance(t - (1 << epoch) + 1)

    def _epoch_tree(self, k):
        return TREES[self.estimator](1, _node_sigma(self.sensitivity, self.mu, k + 1), 1 << k)

    @property
    def sigma(self):
        """Node noise of the current epoch (0 before the first record)."""
        return 0.0 if self.tree is None else self.tree.sigma

    def spent_fraction(self):
        """Every record of a completed epoch may have all its nodes noised: the full budget."""
        return 1.0 if self.t else 0.0


def _summed(arrays, dim):
    """``sum(arrays, np.zeros(dim))`` in one fresh array: the same additions, in order."""
    total = np.zeros(dim)
    for array in arrays:
        total += array
    return total


def _node_sigma(sensitivity, mu, levels):
    """``sqrt(levels) (1 + a) Delta / mu``: ``a`` the stream layer's rounding allowance,
    which covers the rounding of the node sums and of the lazy draws' means for every
    call that ``privacy/_streams.py::check_rounding`` lets through (section 55.8)."""
    from ..privacy._streams import ROUNDING_ALLOWANCE

    if math.isinf(mu):
        return 0.0
    return math.sqrt(levels) * (1.0 + ROUNDING_ALLOWANCE) * sensitivity / mu


def _check_horizon(t, horizon):
    if t > horizon:
        raise ValueError(
            f"This stream would reach {t} samples, past its horizon of {horizon}: the "
            "noise was calibrated for at most horizon samples. Start a new stream with "
            "fit, or use horizon=None (an unbounded stream) for streams of unknown length."
        )
