"""The one place where released values get their noise.

Every central release goes through :func:`gaussian_release`; the user-side
randomisers of the local protocols go through :func:`laplace_release` and
:func:`gaussian_release` too. The release is *floating-point safe*
(``doc/privacy.md``, "Floating-point-safe releases"): with ``gamma`` the power
of two in ``(sigma 2^-29, sigma 2^-28]`` and the public integer
``S = floor(sigma / gamma) + 2``, a coordinate ``v`` is released as

    gamma * floor(v / gamma + 1/2 + S * Z),   Z an exact N(0, 1) (or Laplace) variate,

computed from random bits by integer arithmetic only (:mod:`._exact_kernels`).
That integer is the Gaussian mechanism with noise ``gamma * S >= sigma + gamma``
followed by rounding, so the released double carries nothing beyond the
mechanism's output: no low-order bits of ``v`` survive, whatever the
floating-point values involved. ``v / gamma`` is clamped to ``+-2^62`` (a
contraction) and truncated to ``2^-64``; the extra ``gamma`` of noise pays for
that truncation whenever the release's ``mu = sensitivity / sigma`` is at least
``sqrt(d) 2^-63``.

Inside :func:`recording_releases` each call is also logged as ``(values,
sigma, postprocess)``: the exact distribution of that release up to the grid,
which the audit replays many times instead of refitting (honest when the
values before noise do not depend on earlier noise, as for the uncorrupted
iterates of IGD).
"""

import math
import threading
from contextlib import contextmanager

import numpy as np

_recorder = threading.local()

# Grid resolution: gamma in (scale 2^-(GRID_BITS+1), scale 2^-GRID_BITS].
GRID_BITS = 28
SMALLEST_SCALE = 1e-290
_LARGEST = np.finfo(np.float64).max


def noise_grid(scale):
    """``(gamma, S)`` for a noise scale: gamma a power of two, ``gamma * S >= scale + gamma``.

    Depends on the public scale only.
    """
    scale = float(scale)
    if not (math.isfinite(scale) and scale >= SMALLEST_SCALE):
        raise ValueError(
            f"noise scale {scale!r} is not supported: it must be finite and at least "
            f"{SMALLEST_SCALE:g}.")
    _, exponent = math.frexp(scale)            # 2^(e-1) <= scale < 2^e
    gamma = math.ldexp(1.0, exponent - 1 - GRID_BITS)
    multiplier = int(math.floor(scale / gamma)) + 2
    return gamma, multiplier


def released_scale(scale):
    """The noise scale actually added: ``gamma * S`` (at least ``scale``)."""
    if scale == 0:
        return 0.0
    gamma, multiplier = noise_grid(scale)
    return gamma * multiplier


def _exact_release(values, scale, rng, gaussian):
    from . import _exact_kernels as kernels

    gamma, multiplier = noise_grid(scale)
    flat = np.ravel(values)
    # In the kernel (_exact_kernels._on_grid): c = v / gamma is exact (gamma =
    # 2^j) unless it overflows; clamping to +-2^62 is a contraction, so the
    # sensitivity does not grow. A NaN (never produced by the library's kernels)
    # is mapped to 0, a data-independent value. gamma K is clipped to the
    # finite doubles: post-processing, a huge noise scale must not overflow.
    released = np.empty(flat.shape[0], dtype=np.float64)
    kernels.release_values_chunked(flat, gamma, multiplier, gaussian,
                                   kernels.generator_state(rng), released)
    return released.reshape(np.shape(values))


def gaussian_release(values, sigma, rng, postprocess=None):
    """``postprocess(values + N(0, sigma'^2 I))`` on the noise grid; ``sigma = 0`` adds nothing.

    ``sigma' = gamma S`` is at least ``sigma`` (:func:`released_scale`).
    ``postprocess`` must not look at the data: it is applied to the noisy
    values only (for example a projection onto a public set).
    """
    # Released values are float64 whatever came in.
    values = np.asarray(values, dtype=np.float64)
    log = getattr(_recorder, "log", None)
    if log is not None:
        log.append((values.copy(), float(sigma), postprocess))
    if sigma > 0:
        noisy = _exact_release(values, sigma, rng, gaussian=True)
    else:
        noisy = values.copy()
    return noisy if postprocess is None else postprocess(noisy)


def laplace_release(values, scale, rng):
    """``values + Laplace(scale')`` per coordinate on the noise grid (``scale' >= scale``).

    ``scale = inf`` is refused; ``scale = 0`` adds nothing.
    """
    values = np.asarray(values, dtype=np.float64)
    if scale > 0:
        return _exact_release(values, scale, rng, gaussian=False)
    return values.copy()


def sampler_state(rng):
    """The exact sampler's generator state for ``rng``.

    A numpy ``Generator`` gives a fresh state drawn from it (reproducible from
    its seed); a state array (``uint64``, length 4) is used as it is and
    advanced in place, so that a sequence of reports shares one stream of
    random bits, exactly as the protocol kernels do.
    """
    if isinstance(rng, np.ndarray):
        if rng.dtype != np.uint64 or rng.shape != (4,):
            raise ValueError("a sampler state is a uint64 array of length 4.")
        return rng
    from . import _exact_kernels

    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return _exact_kernels.generator_state(rng)


@contextmanager
def recording_releases():
    """Log every :func:`gaussian_release` made by this thread in the block."""
    previous = getattr(_recorder, "log", None)
    _recorder.log = []
    try:
        yield _recorder.log
    finally:
        _recorder.log = previous
