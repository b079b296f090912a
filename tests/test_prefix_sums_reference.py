"""The trees' releases against a straightforward reference.

The references below are the trees as they were before the per-row speed work
(issue 19 item 3): every array summed with ``sum(..., np.zeros(dim))``, the
nodes of a level stacked with ``np.vstack`` and paired by slicing, Honaker's
combination ``w * noisy + (1 - w) * children`` with every node noised, the
dyadic tree noising each block of the expansion. The trees now draw lazily
(``doc/privacy.md`` sections 48 and 50: a call's new blocks as one sum, and a
kept part of an earlier call's blocks only when a release needs it, conditioned
on what was drawn): their releases must have the references' *law*. Every
release is linear in the noise, so the law is pinned exactly by tagging each
draw with its own unit vector (the covariance of the releases across calls, to
rounding), and the exact part by noise-off runs.
"""

import copy

import numpy as np
import pytest

from sklearn_dpol._core import prefix_sums
from sklearn_dpol._core.noise import gaussian_release
from sklearn_dpol._core.prefix_sums import (
    EpochTree,
    KnownHorizonPrefixSums,
    dyadic_blocks,
    honaker_relative_variances,
    tree_levels,
)
from sklearn_dpol._core.qftl import PackedStatistics
from sklearn_dpol._core.stream_mechanisms import RowVectors


class ReferenceDyadicTree:
    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma, self.horizon = dim, float(sigma), int(horizon)
        self.t = 0
        self.blocks = {}
        self.tails = {0: np.zeros(dim)}

    def advance(self, stats, lo, hi, rng):
        t0, t1 = self.t, self.t + (hi - lo)
        wanted = dyadic_blocks(t1)
        new = [block for block in wanted if not self._stored(*block)]
        slices, previous = [], t0
        for _, _, end in new:
            slices.append(stats.sum(lo + previous - t0, lo + end - t0))
            previous = end
        blocks = {level: self.blocks[level] for level, start, end in wanted
                  if self._stored(level, start, end)}
        for index, (level, start, end) in enumerate(new):
            exact = slices[0] + self.tails[start] if index == 0 else slices[index]
            blocks[level] = (start, end, gaussian_release(exact, self.sigma, rng))
        batch_total = sum(slices, np.zeros(self.dim))
        tails = {0: self.tails[0] + batch_total}
        new_ends = [end for _, _, end in new]
        for _, end, _ in blocks.values():
            if end in new_ends:
                tails[end] = sum(slices[new_ends.index(end) + 1:], np.zeros(self.dim))
            else:
                tails[end] = self.tails[end] + batch_total
        self.tails, self.blocks, self.t = tails, blocks, t1
        return sum((block[2] for block in blocks.values()), np.zeros(self.dim))

    def _stored(self, level, start, end):
        block = self.blocks.get(level)
        return block is not None and block[0] == start and block[1] == end

    def prefix_variance(self, t):
        return self.sigma**2 * bin(int(t)).count("1")


class ReferenceHonakerTree:
    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma, self.horizon = dim, float(sigma), int(horizon)
        self.t = 0
        self.ratios = honaker_relative_variances(tree_levels(horizon))
        self.pending = {}

    def advance(self, stats, lo, hi, rng):
        t0, t1 = self.t, self.t + (hi - lo)
        exact = stats.atoms(lo, hi)
        estimate = gaussian_release(exact, self.sigma, rng)
        first, level = t0, 0
        while len(exact):
            if first % 2:
                left_exact, left_estimate = self.pending.pop(level)
                exact = np.vstack([left_exact, exact])
                estimate = np.vstack([left_estimate, estimate])
                first -= 1
            if len(exact) % 2:
                self.pending[level] = (exact[-1], estimate[-1])
                exact, estimate = exact[:-1], estimate[:-1]
            if len(exact):
                parent_exact = exact[0::2] + exact[1::2]
                children = estimate[0::2] + estimate[1::2]
                noisy = gaussian_release(parent_exact, self.sigma, rng)
                w = self.ratios[level + 1]
                exact, estimate = parent_exact, w * noisy + (1.0 - w) * children
            first //= 2
            level += 1
        self.t = t1
        released = np.zeros(self.dim)
        for pending in self.pending.values():
            released += pending[1]
        return released

    def prefix_variance(self, t):
        set_bits = [h for h in range(int(t).bit_length()) if t >> h & 1]
        return float(self.sigma**2 * self.ratios[set_bits].sum())


REFERENCES = {"tree": ReferenceDyadicTree, "honaker": ReferenceHonakerTree}


def _schedule(seed, n_calls):
    rng = np.random.default_rng(seed)
    sizes = rng.choice([1, 1, 2, 3, 5, 7, 16, 31, 64, 100], size=n_calls)
    return [int(s) for s in sizes]


def _releases(mechanism, batches, rng):
    out = []
    for batch in batches:
        out.append(mechanism.advance(batch, rng))
    return out


def _batches(kind, sizes, seed, d=4):
    rng = np.random.default_rng(seed)
    batches = []
    for m in sizes:
        X = rng.standard_normal((m, d))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
        y = np.clip(rng.standard_normal(m), -1, 1)
        if kind == "packed":
            weights = None if m % 2 else rng.uniform(0, 1, m)
            batches.append(PackedStatistics(X, y, intercept=1.0, weights=weights))
        else:
            batches.append(RowVectors(np.hstack([X, y[:, None]])))
    return batches


class _Tags:
    """``gaussian_release``'s stand-in: node ``k`` (one row of the values) gets ``sigma e_k``.

    A release is then its exact part plus ``sum_k c_k e_k``: row ``c`` of the releases
    gives each draw's coefficient, and ``C C^T`` is the covariance of the releases
    across calls in units of one coordinate's variance.
    """

    def __init__(self, width):
        self.width, self.count = width, 0

    def __call__(self, values, sigma, rng, postprocess=None):
        values = np.array(values, dtype=np.float64)
        rows = values.reshape(-1, values.shape[-1])
        for row in rows:
            row[self.width + self.count] += sigma
            self.count += 1
        return rows.reshape(values.shape)


def _tagged_releases(monkeypatch, tree_class, sizes, horizon, data, width, sigma_mu=(0.7, 1.3)):
    # (the class is run under the key "honaker": any tree class, the stream layer's way in)
    """Releases of a dim-``width + slots`` stream whose first ``width`` coordinates are ``data``."""
    slots = 2 * sum(sizes) + 64
    tags = _Tags(width)
    monkeypatch.setattr(prefix_sums, "gaussian_release", tags)
    monkeypatch.setitem(globals(), "gaussian_release", tags)
    monkeypatch.setitem(prefix_sums.TREES, "honaker", tree_class)
    dim = width + slots
    sensitivity, mu = sigma_mu
    mech = (EpochTree(dim, sensitivity, mu, "honaker") if horizon is None
            else KnownHorizonPrefixSums(dim, sensitivity, mu, horizon, "honaker"))
    out, variances, start = [], [], 0
    for m in sizes:
        rows = np.zeros((m, dim))
        rows[:, :width] = data[start:start + m]
        start += m
        out.append(mech.advance(RowVectors(rows), None))
        variances.append(mech.current_variance())
    monkeypatch.undo()
    return np.array(out), tags.count, np.array(variances)


@pytest.mark.parametrize("estimator", ["tree", "honaker"])
@pytest.mark.parametrize("horizon", [None, 700])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_trees_releases_have_the_reference_law(monkeypatch, estimator, horizon, seed):
    """The same covariance of the released prefixes across calls as the reference (every
    node noised, or every block of the expansion), so the same Gaussian law; the same
    exact part; and at most two draws a call (doc/privacy.md, sections 48 and 50)."""
    sizes = _schedule(seed, 24)
    data = np.random.default_rng(seed).standard_normal((sum(sizes), 3))
    ours_class = prefix_sums.TREES[estimator]
    ours, ours_draws, variances = _tagged_releases(monkeypatch, ours_class, sizes, horizon,
                                                   data, 3)
    ref, ref_draws, _ = _tagged_releases(monkeypatch, REFERENCES[estimator], sizes, horizon,
                                         data, 3)
    noise_ours, noise_ref = ours[:, 3:], ref[:, 3:]
    covariance = noise_ours @ noise_ours.T
    np.testing.assert_allclose(covariance, noise_ref @ noise_ref.T, rtol=1e-12, atol=1e-12)
    # each call's variance is the one the mechanism reports
    np.testing.assert_allclose(np.diag(covariance), variances, rtol=1e-12)
    # the exact part: the prefix sums of the data, whatever the noise
    np.testing.assert_allclose(ours[:, :3], np.cumsum(data, axis=0)[np.cumsum(sizes) - 1],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours[:, :3], ref[:, :3], rtol=1e-12, atol=1e-12)
    # at most two draws a call (a known horizon: one tree call per stream call), fewer
    # than the new blocks of the calls' ends that the reference noises
    ends = np.cumsum(sizes)
    new_blocks = sum(sum(1 for _, _, end in dyadic_blocks(t1) if end > t0)
                     for t0, t1 in zip(np.r_[0, ends[:-1]], ends))
    if horizon is not None:
        assert ours_draws <= 2 * len(sizes)
        assert ours_draws < new_blocks <= ref_draws
    assert ours_draws < ref_draws


def test_the_law_test_catches_a_bridge_that_ignores_what_was_drawn(monkeypatch):
    """Positive control: a kept part drawn afresh (as if nothing of it had been drawn
    with its call's sum) has the right variance at each call, but the wrong
    covariance across calls."""

    class FreshBridge(prefix_sums.DyadicTree):
        def _bridged(self, group, j, rng):
            twin = group.copy()
            twin.k = j
            twin.known = self._release(prefix_sums._summed(group.centre[:j], self.dim),
                                       sum(group.variance[:j]), rng)
            return twin

    sizes = _schedule(5, 24)
    data = np.zeros((sum(sizes), 1))
    ours, _, variances = _tagged_releases(monkeypatch, FreshBridge, sizes, 700, data, 1)
    ref, _, _ = _tagged_releases(monkeypatch, ReferenceDyadicTree, sizes, 700, data, 1)
    np.testing.assert_allclose(np.diag(ours[:, 1:] @ ours[:, 1:].T),
                               np.diag(ref[:, 1:] @ ref[:, 1:].T), rtol=1e-12)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(ours[:, 1:] @ ours[:, 1:].T, ref[:, 1:] @ ref[:, 1:].T,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("wrong", ["variance", "weights"])
def test_honaker_law_test_catches_a_wrong_weight(monkeypatch, wrong):
    """Positive controls: an estimate whose fresh part has the wrong variance, or whose old
    blocks have the wrong weights, is caught by the covariance (the exact part stays right
    whatever the weights: only the law can catch them)."""

    class WrongHonaker(prefix_sums.HonakerTree):
        def fresh_part(self, level, start, t0):
            variance, weights = super().fresh_part(level, start, t0)
            if wrong == "variance":
                return variance * (1.0 + 1e-6), weights
            return variance, {key: w * (1.0 + 1e-6) for key, w in weights.items()}

    sizes = _schedule(5, 24)
    data = np.zeros((sum(sizes), 1))
    ours, _, _ = _tagged_releases(monkeypatch, WrongHonaker, sizes, 700, data, 1)
    ref, _, _ = _tagged_releases(monkeypatch, ReferenceHonakerTree, sizes, 700, data, 1)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(ours[:, 1:] @ ours[:, 1:].T, ref[:, 1:] @ ref[:, 1:].T,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("estimator", ["tree", "honaker"])
def test_snapshots_do_not_share_what_advance_writes(estimator):
    """A snapshot advanced twice from the same state releases the same thing both times."""
    batches = _batches("packed", [3, 5, 1, 7, 2, 9], 4)
    mech = EpochTree(batches[0].dim, 0.7, 1.3, estimator)
    rng = np.random.default_rng(0)
    for batch in batches[:4]:
        mech.advance(batch, rng)
    state = copy.deepcopy(rng.bit_generator.state)
    first = [mech.snapshot() for _ in range(2)]
    released = []
    for twin in first:
        rng.bit_generator.state = copy.deepcopy(state)
        released.append([twin.advance(batch, rng).tobytes() for batch in batches[4:]])
    assert released[0] == released[1]


@pytest.mark.parametrize("intercept", [None, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_packed_atoms_are_the_stacked_products(intercept, weighted, sparse):
    """Each row's atom: ``(x_i x_j) * scale`` then ``x_i * y``, bit for bit, and the
    atoms of a slice sum to its packed sum."""
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(5)
    X = rng.standard_normal((9, 5))
    X[X < -0.5] = 0.0
    y = rng.standard_normal(9)
    w = rng.uniform(0, 1, 9) if weighted else None
    stats = PackedStatistics(csr_matrix(X) if sparse else X, y, intercept=intercept, weights=w)
    rows = X[2:8] if intercept is None else np.hstack([X[2:8], np.full((6, 1), intercept)])
    outer = rows[:, stats.upper[0]] * rows[:, stats.upper[1]] * stats.scale
    expected = np.hstack([outer, rows * y[2:8, np.newaxis]])
    if weighted:
        expected *= w[2:8, np.newaxis]
    atoms = stats.atoms(2, 8)
    assert atoms.shape == (6, stats.dim)
    assert atoms.tobytes() == expected.tobytes()
    np.testing.assert_allclose(atoms.sum(axis=0), stats.sum(2, 8), rtol=1e-12, atol=1e-12)


def test_honaker_accepts_the_node_scales_the_dyadic_tree_accepts():
    """A block's scale is ``sigma sqrt(V)`` with ``V < 1``: at a node scale just above the
    sampler's smallest grid it is raised to that grid (more noise), never refused."""
    from sklearn_dpol._core.noise import SMALLEST_SCALE

    # values within the grid's 2^62 steps (larger ones are clamped, section 14)
    batches = [RowVectors(b.rows * 1e-285) for b in _batches("rows", [3, 5, 8], 0)]
    exact = sum(b.sum(0, b.n_rows) for b in batches)
    for tree_class in (prefix_sums.DyadicTree, prefix_sums.HonakerTree):
        tree = tree_class(batches[0].dim, 1.2 * SMALLEST_SCALE, 16)
        rng = np.random.default_rng(0)
        for batch in batches:
            released = tree.advance(batch, 0, batch.n_rows, rng)
        assert not np.array_equal(released, exact)              # noise was added
        np.testing.assert_allclose(released, exact, rtol=1e-3)  # of scale 1e-290
