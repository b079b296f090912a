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
``sqrt(levels) * Delta / sigma`` (``doc/privacy.md``, section 3).

Two estimators of the prefix ``W_t = sum_{s <= t} w_s`` share that budget:

* :class:`DyadicTree`: ``W_t`` is the sum of the noisy blocks of ``t``'s
  binary expansion (one per set bit). Only those blocks need noise, so a batch
  costs its block sums (BLAS) plus ``O(m log H)`` draws.
* :class:`HonakerTree`: every complete node is (in law) noised, and each is
  replaced by the inverse-variance combination of its own value and its
  children's estimates (Honaker 2015, bottom-up online form), which roughly
  halves the variance of high nodes. The estimates of a batch's new blocks are
  drawn directly, one Gaussian each: the same law, the cost of
  :class:`DyadicTree`.

:class:`EpochTree` serves a stream of unknown length: epoch ``k`` covers
positions ``[2^k, 2^(k+1))`` with its own tree of ``k + 1`` levels and noise
``sqrt(k + 1) Delta / mu``; a record lies in one epoch, so the infinite
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


class DyadicTree:
    """Prefix sums over positions ``1..horizon`` from the noisy blocks of ``t``'s expansion.

    Parameters
    ----------
    dim : int
        Length of the summed vectors.
    sigma : float
        Standard deviation of each node's noise (0 adds none).
    horizon : int
        Last position; the tree raises instead of going past it.
    """

    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma, self.horizon = dim, float(sigma), int(horizon)
        self.t = 0
        self.blocks = {}                    # level -> (start, end, noisy sum)
        # Exact sum of the rows after each stored block's end (and after 0):
        # the head of the next block to start there. A node's exact value is
        # only ever a sum of its own rows, so a record outside it cannot move
        # it, not even by rounding.
        self.tails = {0: np.zeros(dim)}

    def advance(self, stats, lo, hi, rng):
        """Append rows ``lo:hi`` of ``stats`` and return the noisy prefix sum."""
        t0, t1 = self.t, self.t + (hi - lo)
        _check_horizon(t1, self.horizon)
        wanted = dyadic_blocks(t1)
        new = [block for block in wanted if not self._stored(*block)]
        # The new blocks end inside this batch, in increasing order, the last at t1.
        slices, previous = [], t0
        for _, _, end in new:
            slices.append(stats.sum(lo + previous - t0, lo + end - t0))
            previous = end
        blocks = {level: self.blocks[level] for level, start, end in wanted
                  if self._stored(level, start, end)}
        for index, (level, start, end) in enumerate(new):
            # The first new block starts at or before t0, at a stored end.
            exact = slices[0] + self.tails[start] if index == 0 else slices[index]
            blocks[level] = (start, end, gaussian_release(exact, self.sigma, rng))
        self.tails = self._advanced_tails(blocks, new, slices)
        self.blocks, self.t = blocks, t1
        return _summed((block[2] for block in blocks.values()), self.dim)

    def snapshot(self):
        """A copy to advance: ``advance`` replaces arrays and never writes into them."""
        twin = copy.copy(self)
        twin.blocks, twin.tails = dict(self.blocks), dict(self.tails)
        return twin

    def _advanced_tails(self, blocks, new, slices):
        batch_total = _summed(slices, self.dim)
        tails = {0: self.tails[0] + batch_total}
        new_ends = [end for _, _, end in new]
        for _, end, _ in blocks.values():
            if end in new_ends:
                tails[end] = _summed(slices[new_ends.index(end) + 1:], self.dim)
            else:
                tails[end] = self.tails[end] + batch_total
        return tails

    def _stored(self, level, start, end):
        block = self.blocks.get(level)
        return block is not None and block[0] == start and block[1] == end

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix sum at ``t``."""
        return self.sigma**2 * bin(int(t)).count("1")


class HonakerTree:
    """Prefix sums from Honaker's inverse-variance node estimates.

    Same parameters as :class:`DyadicTree`. The estimates are those of the
    bottom-up online form (every complete node noised; each replaced by the
    inverse-variance combination of its own value and its children's estimates,
    Honaker 2015), drawn without noising every node: a release only ever reads
    the estimates of the blocks of ``t``'s binary expansion (its prefix, and the
    left children that later parents combine), and the estimate of a block that
    completes in a batch is the old blocks' estimates it contains, times known
    weights, plus one fresh Gaussian: the weighted noise of every node of the
    block that was not complete before the batch. That part is drawn once, with
    its variance (``doc/privacy.md``, section 48). A batch costs the noise of
    the new blocks of its end's expansion, like :class:`DyadicTree`, instead of
    ``2 m`` node releases.
    """

    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma, self.horizon = dim, float(sigma), int(horizon)
        self.t = 0
        self.ratios = honaker_relative_variances(tree_levels(horizon))
        self.pending = {}   # level -> (exact, estimate) of the block of t's expansion there

    def advance(self, stats, lo, hi, rng):
        """Append rows ``lo:hi`` of ``stats`` and return the noisy prefix sum."""
        t0, t1 = self.t, self.t + (hi - lo)
        _check_horizon(t1, self.horizon)
        old = {start: self.pending[level] for level, start, _ in dyadic_blocks(t0)}
        pending = {level: self.pending[level] for level, _, end in dyadic_blocks(t1)
                   if end <= t0}
        for level, start, end in dyadic_blocks(t1):
            if end <= t0:
                continue
            variance, weights = self.fresh_part(level, start, t0)
            # Only the block's own rows: those of the batch, and its old blocks' exact sums.
            exact = stats.sum(lo + max(start, t0) - t0, lo + end - t0)
            centre = exact.copy()
            for old_start, weight in weights.items():
                old_exact = old[old_start][0]
                exact += old_exact
                centre += (1.0 - weight) * old_exact
            scale = self.sigma * math.sqrt(variance)
            if 0.0 < scale < SMALLEST_SCALE:
                # V < 1 may take a node scale the sampler accepts below its smallest
                # grid: more noise is as private (sigma near 1e-290 only).
                scale = SMALLEST_SCALE
            estimate = gaussian_release(centre, scale, rng)
            for old_start, weight in weights.items():
                estimate += weight * old[old_start][1]
            pending[level] = (exact, estimate)
        self.pending, self.t = pending, t1
        return _summed((pending[level][1] for level in sorted(pending, reverse=True)), self.dim)

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
        twin.pending = dict(self.pending)
        return twin

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix sum at ``t``."""
        set_bits = [h for h in range(int(t).bit_length()) if t >> h & 1]
        return float(self.sigma**2 * self.ratios[set_bits].sum())


TREES = {"tree": DyadicTree, "honaker": HonakerTree}


class KnownHorizonPrefixSums:
    """One tree over a stream of at most ``horizon`` positions, ``mu``-GDP in all.

    ``sigma = sqrt(levels) * sensitivity / mu`` with ``levels =
    horizon.bit_length()``.
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
    levels with ``sigma_k = sqrt(k + 1) * sensitivity / mu``. A completed
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
    if math.isinf(mu):
        return 0.0
    return math.sqrt(levels) * sensitivity / mu


def _check_horizon(t, horizon):
    if t > horizon:
        raise ValueError(
            f"This stream would reach {t} samples, past its horizon of {horizon}: the "
            "noise was calibrated for at most horizon samples. Start a new stream with "
            "fit, or use horizon=None (an unbounded stream) for streams of unknown length."
        )
