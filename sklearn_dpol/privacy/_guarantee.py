"""The guarantee object every fitted estimator exposes as ``privacy_``."""

import math
from dataclasses import dataclass

__all__ = ["PrivacyGuarantee"]


@dataclass(frozen=True)
class PrivacyGuarantee:
    """What a fitted estimator has made public, and the guarantee that covers it.

    Instances are immutable; estimators replace them after each release.

    Parameters
    ----------
    epsilon, delta : float
        The ``(epsilon, delta)``-DP guarantee. ``epsilon=inf`` means no
        privacy (no noise was added).
    mu : float
        The Gaussian DP parameter the guarantee is derived from (exact:
        ``epsilon`` is the smallest value with ``delta(epsilon; mu) <= delta``),
        or ``nan`` for mechanisms not accounted in GDP.
    neighbouring : str
        The neighbouring relation: ``"replace-one"`` (data sets that differ in
        one record, replaced by an arbitrary other record).
    mechanism : str
        How the noise is calibrated.
    released : str
        What is public: the values the guarantee covers.
    n_releases : int
        How many releases (models) the guarantee covers so far.
    n_records : int
        How many records the guarantee covers so far.
    records : str
        Which records: those passed to ``fit``, or those passed to
        ``partial_fit`` since the stream started.
    spent_mu : float
        GDP parameter of the releases made so far. For a stream it grows
        towards ``mu`` as the stream goes on; for one release it equals ``mu``.
    budget : str
        How far the guarantee extends: ``"this release"``, ``"the stream up to
        its horizon of H samples"`` or ``"the stream, however long"``.

    See Also
    --------
    gaussian_epsilon : The ``epsilon`` of a ``mu``-GDP guarantee at a ``delta``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpol import PrivateQFTLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(1000, 3))
    >>> model = PrivateQFTLRegressor(epsilon=1.0, random_state=0).fit(X, X.sum(axis=1) / 3)
    >>> guarantee = model.privacy_
    >>> guarantee.epsilon, guarantee.delta, guarantee.n_releases
    (1.0, 1e-06, 1)
    >>> print(guarantee)
    (1, 1e-06)-DP [0.2367-GDP] under replace-one neighbours for the records passed to fit ...
    """

    epsilon: float
    delta: float
    mu: float
    neighbouring: str
    mechanism: str
    released: str
    n_releases: int
    n_records: int
    records: str
    spent_mu: float
    budget: str

    @property
    def is_private(self):
        """True when ``epsilon`` is finite."""
        return math.isfinite(self.epsilon)

    def __str__(self):
        gdp = "" if math.isnan(self.mu) else f" [{self.mu:.4g}-GDP]"
        return (
            f"({self.epsilon:.4g}, {self.delta:.3g})-DP{gdp} under "
            f"{self.neighbouring} neighbours for {self.records} "
            f"({self.n_records} records, {self.n_releases} release(s)); "
            f"covers {self.budget}; released: {self.released}; "
            f"mechanism: {self.mechanism}."
        )
