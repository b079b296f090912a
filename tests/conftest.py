"""Shared fixtures and the hypothesis profile."""

import os

import numpy as np
import pytest
from hypothesis import settings

# CI explores the same examples on every run (a red CI must be reproducible);
# local runs keep drawing new ones.
# No per-example deadline: the first example of a test may compile numba
# kernels, and a busy machine must not turn timing into a failure.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

from sklearn_dpol._core import igd


@pytest.fixture
def noise_draws(monkeypatch):
    """Record the standard-normal draws of every release (noise / sigma)."""
    draws = []
    original = igd.release

    def spy(W, sigma, radius, rng):
        out = original(W, sigma, np.inf, rng)
        draws.append((out - W) / sigma)
        return out

    monkeypatch.setattr(igd, "release", spy)
    return draws
