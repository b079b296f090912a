"""Progress output of ``verbose`` fits, in scikit-learn's style.

What may be printed is restricted by privacy, not by taste: progress counters
(epochs, steps, rows) and values the call has already released (the noise
scale, ``privacy_``). Not the elapsed time: objective perturbation's Newton
solve takes a data-dependent number of steps (``doc/privacy.md`` section 5), so
a printed time would be a release outside the guarantee. Never a loss, a norm or anything else computed
from a private iterate or from the data: a printed value is a release, and one
outside the guarantee. So the per-step lines come from counters only, and the
summary of a call is printed after the call succeeded, from its public
attributes (a call that fails prints no summary, as it releases nothing).
"""

import functools
import math
import time

# The public attributes a summary may read; anything else stays unprinted.
# ``max_calls_``: the calls a stream is calibrated for (a parameter or a parameter and the first
# batch's shape), stated from a stream's first call (review 128, item 7).
_SUMMARY_ATTRIBUTES = ("t_", "n_iter_", "noise_scale_", "max_calls_")


class Progress:
    """Counts one call's progress; prints only when ``verbose`` is set."""

    def __init__(self, verbose):
        self.enabled = bool(verbose)
        self.start = time.perf_counter()

    def elapsed(self):
        return time.perf_counter() - self.start

    def epoch(self, epoch, n_steps):
        """After a pass over the data: its number and the public step counter."""
        if self.enabled:
            print(f"-- Epoch {epoch}", flush=True)
            print(f"T: {n_steps}", flush=True)

    def steps(self, done, total):
        """After a chunk of optimisation steps (Frank-Wolfe, mirror descent)."""
        if self.enabled:
            print(f"-- Steps {done} / {total}", flush=True)

    def every(self, total, n_reports=10):
        """Steps between two reports: about ``n_reports`` lines per call."""
        return max(1, math.ceil(total / n_reports))


def reports_release(method):
    """Wrap ``fit`` / ``partial_fit``: a :class:`Progress` for the call, then a summary.

    The progress object is handed to the engine as ``self._progress`` for the
    duration of the call; the summary reads only the released attributes.
    """

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        progress = Progress(getattr(self, "verbose", 0))
        self._progress = progress
        try:
            result = method(self, X, *args, **kwargs)
        finally:
            self.__dict__.pop("_progress", None)
        if progress.enabled:
            _print_summary(self, method.__name__, _n_rows(X), progress.elapsed())
        return result

    return wrapper


def current_progress(estimator):
    """The :class:`Progress` of the running call (a silent one outside a call)."""
    return estimator.__dict__.get("_progress") or Progress(0)


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def _print_summary(estimator, method, n_rows, elapsed):
    """One line per released model, then scikit-learn's closing line."""
    guarantee = estimator.privacy_
    counters = [f"{n_rows} rows"]
    for name in _SUMMARY_ATTRIBUTES:
        value = getattr(estimator, name, None)
        if value is not None:
            counters.append(f"{name}={value:.4g}" if isinstance(value, float)
                            else f"{name}={value}")
    print(f"-- {type(estimator).__name__}.{method}: " + ", ".join(counters), flush=True)
    print(f"Released: ({guarantee.epsilon:.4g}, {guarantee.delta:.3g})-DP, "
          f"{guarantee.n_releases} release(s) over {guarantee.n_records} records "
          f"(covers {guarantee.budget})", flush=True)
    print("Training done (no time printed: it can depend on the data).", flush=True)
