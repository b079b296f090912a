"""Shared fixtures and the hypothesis profile."""

import os

import numpy as np
import pytest
from hypothesis import settings

# CI explores the same examples on every run (a red CI must be reproducible);
# local runs keep drawing new ones.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

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
