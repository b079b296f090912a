"""The one place where released values get their Gaussian noise.

Every estimator releases through :func:`gaussian_release`. Inside
:func:`recording_releases` each call is also logged as ``(values, sigma,
postprocess)``: the exact distribution of that release, which the audit
replays many times instead of refitting (honest when the values before noise
do not depend on earlier noise, as for the uncorrupted iterates of IGD).
"""

import threading
from contextlib import contextmanager

import numpy as np

_recorder = threading.local()


def gaussian_release(values, sigma, rng, postprocess=None):
    """``postprocess(values + N(0, sigma^2 I))``; ``sigma = 0`` adds nothing.

    ``postprocess`` must not look at the data: it is applied to the noisy
    values only (for example a projection onto a public set).
    """
    # Released values are float64 whatever came in: with extended precision the
    # low-order bits of values + noise would be those of the exact values.
    values = np.asarray(values, dtype=np.float64)
    log = getattr(_recorder, "log", None)
    if log is not None:
        log.append((values.copy(), float(sigma), postprocess))
    noisy = values + sigma * rng.standard_normal(values.shape) if sigma > 0 else values.copy()
    return noisy if postprocess is None else postprocess(noisy)


@contextmanager
def recording_releases():
    """Log every :func:`gaussian_release` made by this thread in the block."""
    previous = getattr(_recorder, "log", None)
    _recorder.log = []
    try:
        yield _recorder.log
    finally:
        _recorder.log = previous
