"""The learners' fixed-order sums (``_core/_sum_kernels.py``) round as written.

A reassociated reduction rounds by how the compiler vectorises it in each
caller; these sums must give the bits of the written order everywhere, so the
tests compare them with the same order evaluated in Python, bit for bit, and
check that the order is not the sequential one (a positive control: the
sequential sum differs on these inputs).
"""

import numpy as np
import pytest

from sklearn_dpol._core import _mi_kernels, _pf_kernels
from sklearn_dpol._core._sum_kernels import LANES, lane_dot


def _lane_order(a, b):
    """The module's order, in Python floats."""
    n = len(a)
    body = n - n % LANES
    lanes = [0.0] * LANES
    for j in range(0, body, LANES):
        for k in range(LANES):
            lanes[k] += float(a[j + k]) * float(b[j + k])
    total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    for j in range(body, n):
        total += float(a[j]) * float(b[j])
    return total


@pytest.mark.parametrize("n", list(range(0, 14)) + [50, 1001])
def test_lane_dot_is_the_written_order_bit_for_bit(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
    b = rng.standard_normal(n)
    assert lane_dot(a, b) == _lane_order(a, b)


def test_the_order_is_not_the_sequential_one():
    # positive control: on these inputs the sequential sum rounds differently
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(50):
        a = rng.standard_normal(37) * 10.0 ** rng.integers(-8, 8, 37)
        sequential = 0.0
        for x in a:
            sequential += float(x) * float(x)
        differs += lane_dot(a, a) != sequential
    assert differs > 0


def test_the_learners_have_no_reassociation():
    # fastmath would let LLVM reorder the sums again, by caller
    for kernel in (_mi_kernels.learner_predict, _pf_kernels.learner_reduction_update):
        assert not kernel.targetoptions.get("fastmath"), kernel


def test_mi_learner_projects_with_the_lane_norm():
    theta = np.random.default_rng(1).standard_normal(11) * 5.0
    out = np.empty(11)
    _mi_kernels.learner_predict(theta, 4, 0.3, True, 1.0, out)
    played = 0.3 / 2.0 * theta
    norm = np.sqrt(_lane_order(played, played))
    np.testing.assert_array_equal(out, played * (1.0 / norm) if norm > 1.0 else played)
