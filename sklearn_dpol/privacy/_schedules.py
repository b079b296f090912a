"""Budget schedules for streams of releases.

A stream releases a model after each ``partial_fit`` call. Release ``r`` is a
Gaussian mechanism with normalised sensitivity ``a_r = Delta_r / sigma_r``, and
the whole stream is ``sqrt(sum_r a_r**2)``-GDP (exact, also under adaptive
composition). A schedule is a non-decreasing ``W`` on sample counts with
``W(0) = 0`` and ``W(t) <= 1`` for every ``t``: a release that covers the
samples ``(t_prev, t]`` gets ``a_r**2 = mu**2 * (W(t) - W(t_prev))``, so the
releases sum to at most ``mu**2`` however the stream is cut into calls. Noise is
therefore paid per release: one release after 1,000 samples gets the share of
all 1,000, where 1,000 row-by-row releases split the same share 1,000 ways.
"""

import math
from numbers import Integral

__all__ = ["AnytimeSchedule", "KnownHorizonSchedule"]


class KnownHorizonSchedule:
    """Uniform budget over a stream of at most ``horizon`` samples.

    ``W(t) = t / horizon``: each sample buys the same share of ``mu**2``.
    Asking for a share beyond the horizon raises ``ValueError`` instead of
    silently spending more than the budget.

    Parameters
    ----------
    horizon : int
        The largest number of samples the stream may contain.

    See Also
    --------
    AnytimeSchedule : The schedule for a stream of unknown length.

    Examples
    --------
    >>> from sklearn_dpol.privacy import KnownHorizonSchedule
    >>> schedule = KnownHorizonSchedule(horizon=1000)
    >>> schedule.share(0, 250)  # a first release covering 250 samples
    0.25
    >>> schedule.cumulative_share(1000)
    1.0
    """

    def __init__(self, horizon):
        if isinstance(horizon, bool) or not isinstance(horizon, Integral) or horizon < 1:
            raise ValueError(f"horizon must be an integer >= 1; got {horizon!r}.")
        self.horizon = int(horizon)

    def cumulative_share(self, n_samples):
        """Fraction of ``mu**2`` spent once ``n_samples`` samples are released.

        Parameters
        ----------
        n_samples : int
            Samples released so far, ``0 <= n_samples <= horizon``.

        Returns
        -------
        share : float
            ``n_samples / horizon``.
        """
        n_samples = _check_count(n_samples)
        if n_samples > self.horizon:
            raise ValueError(
                f"The stream would reach {n_samples} samples, past its horizon of "
                f"{self.horizon}: releasing it would overspend the privacy budget. "
                "Call fit to start a new stream, or set horizon=None (an anytime "
                "schedule) or a larger horizon before the stream starts."
            )
        return n_samples / self.horizon

    def share(self, start, stop):
        """Fraction of ``mu**2`` for a release covering samples ``(start, stop]``.

        Parameters
        ----------
        start, stop : int
            Samples released before this release, and after it.

        Returns
        -------
        share : float
            ``(stop - start) / horizon``. Raises ``ValueError`` when ``stop``
            passes the horizon.
        """
        self.cumulative_share(stop)  # raises past the horizon
        if _check_count(start) > stop:
            raise ValueError(f"stop ({stop}) must be >= start ({start}).")
        return (stop - start) / self.horizon

    def __repr__(self):
        return f"KnownHorizonSchedule(horizon={self.horizon})"


class AnytimeSchedule:
    """Budget for a stream of unknown, possibly infinite, length.

    ``W(t) = 1 - (1 + ln(1 + t)) ** (-gamma)``: the per-sample share decays like
    ``gamma / (t (1 + ln t) ** (1 + gamma))``, summable, so every finite prefix
    and the infinite stream stay within the budget. ``gamma`` trades early
    against late releases; the regret proxy is minimised near
    ``gamma = 1 / ln ln T`` for a typical length ``T``, and the default 0.5
    is within a few percent of that for ``T`` between 1e4 and 1e7.

    Parameters
    ----------
    gamma : float, default=0.5
        Decay exponent, ``> 0``.

    See Also
    --------
    KnownHorizonSchedule : Less noise per release when the length is known.

    Examples
    --------
    >>> from sklearn_dpol.privacy import AnytimeSchedule
    >>> schedule = AnytimeSchedule()
    >>> round(schedule.share(0, 1000), 4)  # the first 1,000 samples
    0.6444
    >>> round(schedule.cumulative_share(10**6), 4)  # never reaches 1
    0.7402
    """

    def __init__(self, gamma=0.5):
        if not (isinstance(gamma, (int, float)) and 0 < gamma < math.inf):
            raise ValueError(f"gamma must be a finite number > 0; got {gamma!r}.")
        self.gamma = float(gamma)

    def cumulative_share(self, n_samples):
        """Fraction of ``mu**2`` spent once ``n_samples`` samples are released.

        Parameters
        ----------
        n_samples : int
            Samples released so far, ``>= 0``.

        Returns
        -------
        share : float
            ``1 - (1 + ln(1 + n_samples)) ** (-gamma)``, below 1 for every
            finite stream.
        """
        n_samples = _check_count(n_samples)
        # -expm1(-g * log1p(ln(1+t))) = 1 - (1 + ln(1+t))**(-g), accurate near 0.
        return -math.expm1(-self.gamma * math.log1p(math.log1p(n_samples)))

    def share(self, start, stop):
        """Fraction of ``mu**2`` for a release covering samples ``(start, stop]``.

        Computed as ``A**-g * (1 - (B/A)**-g)`` with ``A = 1 + ln(1 + start)``
        and ``B/A = 1 + ln((1 + stop)/(1 + start)) / A``, so that it stays
        accurate (and positive) far into the stream, where the difference of
        two cumulative shares would cancel to zero.

        Parameters
        ----------
        start, stop : int
            Samples released before this release, and after it.

        Returns
        -------
        share : float
            ``W(stop) - W(start)``, computed without cancellation.
        """
        start, stop = _check_count(start), _check_count(stop)
        if stop < start:
            raise ValueError(f"stop ({stop}) must be >= start ({start}).")
        base = 1.0 + math.log1p(start)
        growth = math.log1p(math.log1p((stop - start) / (1.0 + start)) / base)
        return base ** (-self.gamma) * -math.expm1(-self.gamma * growth)

    def __repr__(self):
        return f"AnytimeSchedule(gamma={self.gamma})"


def _check_count(n_samples):
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 0:
        raise ValueError(f"a sample count must be an integer >= 0; got {n_samples!r}.")
    return int(n_samples)
