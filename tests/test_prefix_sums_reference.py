"""The trees' releases equal, bit for bit, those of a straightforward reference.

The references below are the trees as they were before the per-row speed work
(issue 19 item 3): every array summed with ``sum(..., np.zeros(dim))``, the
nodes of a level stacked with ``np.vstack`` and paired by slicing, Honaker's
combination ``w * noisy + (1 - w) * children``. They make the same
``gaussian_release`` calls in the same order on the same exact values, so for a
fixed seed the released prefixes must be identical: any change to the nodes,
their noise or the estimator shows up here (and a change of the order of the
draws too).
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


@pytest.mark.parametrize("estimator", ["tree", "honaker"])
@pytest.mark.parametrize("horizon", [None, 1000])
@pytest.mark.parametrize("kind", ["rows", "packed"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trees_release_what_the_reference_releases(estimator, horizon, kind, seed,
                                                   monkeypatch):
    sizes = _schedule(seed, 24)
    horizon = None if horizon is None else sum(sizes) + 7
    batches = _batches(kind, sizes, seed)
    dim = batches[0].dim

    def build():
        if horizon is None:
            return EpochTree(dim, 0.7, 1.3, estimator)
        return KnownHorizonPrefixSums(dim, 0.7, 1.3, horizon, estimator)

    ours = _releases(build(), batches, np.random.default_rng(seed + 10))
    monkeypatch.setitem(prefix_sums.TREES, estimator, REFERENCES[estimator])
    reference = _releases(build(), batches, np.random.default_rng(seed + 10))
    assert len(ours) == len(reference) == len(sizes)
    for a, b in zip(ours, reference):
        assert a.tobytes() == b.tobytes()
    # The noise is there (the comparison is not between two noiseless sums).
    exact = np.cumsum([batch.sum(0, batch.n_rows) for batch in batches], axis=0)
    assert not np.allclose(ours[-1], exact[-1])


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
