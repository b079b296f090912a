"""Matrix-factorization continual release of prefix sums: square-root Toeplitz and BLT.

The prefix sums of a stream of vectors ``x_1, x_2, ...`` (one per step) are
``A x`` with ``A`` the lower-triangular matrix of ones. A factorization
``A = B C`` with lower-triangular Toeplitz ``C`` releases ``y = C x + z``,
``z ~ N(0, sigma^2 I)`` (the only values that touch the data, each
``y_t`` one :func:`~sklearn_dpol._core.noise.gaussian_release` of the exact
``(C x)_t``), and publishes ``B y = A x + B z``: post-processing. Under
replace-one neighbours a record is in one step ``j``, so ``C x`` moves by
``C[:, j] (x_j - x'_j)`` and its L2 sensitivity is ``Delta * max_j ||C[:, j]||``,
the column norm of column 0 for a Toeplitz ``C`` (later columns are its
truncations). Derivation: ``doc/privacy.md``, section "Matrix-factorization
continual release".

* :class:`SqrtToeplitzPrefixSums`: ``B = C = A^(1/2)``, coefficients
  ``f_k = binom(2k, k) / 4^k`` (Fichtenberger, Henzinger and Upadhyay 2023).
  Streaming it keeps every past step: ``O(t * dim)`` memory, ``O(t * dim)`` work
  per step.
* :class:`BLTPrefixSums`: ``C`` is a buffered linear Toeplitz matrix
  ``c_0 = 1, c_k = sum_i omega_i theta_i^(k-1)`` (Dvijotham, McMahan, Pillutla,
  Steinke and Thakurta 2024). Both ``C x`` and ``C^-1 y`` stream with one
  buffer per ``theta_i``: ``O(buffers * dim)`` memory and work per step. With
  ``0 < theta_i < 1`` the column norm stays bounded for an infinite stream, which
  is how ``horizon=None`` is served.

One step is one call of ``advance`` (one batch); its vector is the sum of the
batch's rows, which is a sum of its own rows only.
"""

import copy
import functools
import math

import numpy as np

from .noise import gaussian_release

# Relative margin on computed column norms: they are sums of floating-point
# squares, and the bound must not fall below the exact value by rounding.
_NORM_MARGIN = 1e-9
# The horizon (in steps) a BLT for an unbounded stream is fitted for; beyond it
# its error grows linearly in t (doc/privacy.md).
UNBOUNDED_DESIGN_STEPS = 1 << 12
DEFAULT_BUFFERS = 4


def sqrt_coefficients(n):
    """``f_0 .. f_(n-1)`` of ``(1 - z)^(-1/2)``: ``f_k = f_(k-1) (1 - 1/(2k))``."""
    k = np.arange(1, n, dtype=np.float64)
    return np.concatenate([[1.0], np.cumprod(1.0 - 0.5 / k)])


def sqrt_column_norm(n):
    """``max_j ||C[:, j]||`` of the ``n x n`` square root of ``A`` (column 0)."""
    return float(math.sqrt(math.fsum(sqrt_coefficients(n) ** 2)) * (1 + _NORM_MARGIN))


def _blt_polynomials(omega, theta):
    """``C(z) = P(z) / Q(z)`` in increasing powers of ``z`` (``P[0] = Q[0] = 1``)."""
    Q = np.poly(theta)                      # prod_i (1 - theta_i z)
    P = Q.copy()                            # + z sum_i omega_i prod_(j != i) (1 - theta_j z)
    for i in range(len(theta)):
        P[1:] += omega[i] * np.poly(np.delete(theta, i))
    return P, Q


def blt_coefficients(omega, theta, n):
    """First ``n`` Toeplitz coefficients of ``C`` and of ``C^-1`` for BLT parameters."""
    from scipy.signal import lfilter

    omega, theta = np.asarray(omega, float), np.asarray(theta, float)
    P, Q = _blt_polynomials(omega, theta)
    impulse = np.zeros(n)
    impulse[0] = 1.0
    return lfilter(P, Q, impulse), lfilter(Q, P, impulse)


def blt_column_norm(omega, theta, n=None):
    """Column-0 norm of the BLT ``C`` over ``n`` steps (``None``: an infinite stream).

    ``||C[:, 0]||^2 = 1 + sum_(i,j) omega_i omega_j (1 - (theta_i theta_j)^(n-1))
    / (1 - theta_i theta_j)``, in closed form, with a relative margin for rounding.
    """
    omega, theta = np.asarray(omega, float), np.asarray(theta, float)
    products = np.outer(theta, theta)
    if n is None:
        geometric = 1.0 / (1.0 - products)
    else:
        # (1 - p^(n-1)) / (1 - p) without cancellation: -expm1((n-1) log p) / (1 - p).
        geometric = -np.expm1((n - 1) * np.log(products)) / (1.0 - products)
    total = 1.0 + float(np.sum(np.outer(omega, omega) * geometric))
    return math.sqrt(total) * (1 + _NORM_MARGIN)


def _blt_losses(omega, theta, n, unbounded, mean):
    c, r = blt_coefficients(omega, theta, n)
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(c))):
        return math.inf
    b = np.cumsum(r)
    variances = np.cumsum(b * b)
    error = float(variances.mean() if mean else variances[-1])
    sens = blt_column_norm(omega, theta, None if unbounded else n)
    return sens * sens * error


@functools.lru_cache(maxsize=32)
def fit_blt(n, buffers=DEFAULT_BUFFERS, unbounded=False, mean=False):
    """BLT parameters ``(omega, theta)`` minimising the error over ``n`` steps.

    The loss is ``sensitivity^2 * error``, the error being the variance of the
    last prefix (the max over ``t``; ``mean=True``: the mean over ``t``), and the
    sensitivity the column norm over ``n`` steps (``unbounded=True``: over an
    infinite stream). Data-free: a function of public ``n`` only. Starts from a
    sum-of-exponentials fit of ``f_k ~ 1 / sqrt(pi k)`` (log-spaced rates) and
    refines with Nelder-Mead then L-BFGS.
    """
    from scipy.optimize import minimize

    n = int(n)
    rates = np.exp(np.linspace(math.log(1.0 / n), 0.0, buffers))
    h = math.log(n) / max(buffers - 1, 1)
    theta0 = np.exp(-rates)
    omega0 = h / math.pi * np.sqrt(rates) * np.exp(-rates)

    def unpack(params):
        theta = 1.0 / (1.0 + np.exp(-params[buffers:]))
        return np.exp(params[:buffers]), theta

    def loss(params):
        omega, theta = unpack(params)
        if not np.all((theta > 0) & (theta < 1)):
            return 1e300
        value = _blt_losses(omega, theta, n, unbounded, mean)
        return math.log(value) if math.isfinite(value) and value > 0 else 1e300

    start = np.concatenate([np.log(omega0), np.log(theta0 / (1.0 - theta0))])
    best = minimize(loss, start, method="Nelder-Mead",
                    options={"maxiter": 400 * buffers, "xatol": 1e-6, "fatol": 1e-9})
    refined = minimize(loss, best.x, method="L-BFGS-B")
    params = refined.x if refined.fun <= best.fun else best.x
    omega, theta = unpack(params)
    return tuple(float(v) for v in omega), tuple(float(v) for v in theta)


# BLT parameters (omega, theta) fitted offline by fit_blt(2^e) for e = 4..16, and
# fit_blt(2^12, unbounded=True) for horizon=None (data-free; regenerate with
# ``{e: fit_blt(1 << e) for e in range(4, 17)}``). Max-error loss against the square
# root's: 1.0000 up to 2^8, 1.0012 at 2^12, 1.0091 at 2^16 (tests check <= 1.01).
_BLT_TABLE = {
    4: (
        (0.1982069703127018, 0.050483263747131, 0.15803447850204214, 0.09324808745313311),
        (0.974191070700317, 0.8544654269885376, 0.7102164694092672, 0.28531671783651413),
    ),
    5: (
        (0.10423469264745752, 0.1136909075327236, 0.1582163960503778, 0.12370675998261721),
        (0.9929514320401537, 0.9374451078143095, 0.7679795527285749, 0.3570216328196679),
    ),
    6: (
        (0.10506157603365714, 0.12035754732702747, 0.15343321497578585, 0.12101842831383136),
        (0.9933090985089109, 0.9328770905886409, 0.7590207730140162, 0.3515168261403389),
    ),
    7: (
        (0.08306235080725906, 0.10621353094980655, 0.16135175264586776, 0.14899446571814662),
        (0.99589094691728, 0.9558250408663654, 0.8152336959548563, 0.40823633028397277),
    ),
    8: (
        (0.06876722013376771, 0.10588413870201895, 0.1817398539768194, 0.14409933875511033),
        (0.9972824637294987, 0.9660777679715483, 0.823456607080124, 0.3779359858381768),
    ),
    9: (
        (0.049747702207649624, 0.08219456075962736, 0.16659075465238754, 0.2000377395899119),
        (0.9985916116802951, 0.9815663845846402, 0.8910232961674611, 0.5031998978385266),
    ),
    10: (
        (0.03716222531296673, 0.06900063222115711, 0.16006355025369362, 0.23052709949677352),
        (0.9992291777839979, 0.9888952793312524, 0.9217919658510604, 0.562691211982665),
    ),
    11: (
        (0.027602937013739587, 0.05730762464658801, 0.1506672560563775, 0.2580074820918179),
        (0.9995825370764657, 0.9933739582851376, 0.9443729245716919, 0.6181505083265681),
    ),
    12: (
        (0.020472374659444858, 0.04735127097630866, 0.1397437151833623, 0.28137724077464155),
        (0.9997746915747159, 0.9960469389442478, 0.9604874033610258, 0.668088811459582),
    ),
    13: (
        (0.015164408721689207, 0.03899206295128085, 0.12806864913265842, 0.30011665496863205),
        (0.999878795941714, 0.9976426065703777, 0.9719430796052801, 0.7131197452740875),
    ),
    14: (
        (0.011215610542658258, 0.03195884274250371, 0.11611071499470564, 0.31482359186245384),
        (0.9999349537812336, 0.9985934941193402, 0.9801587078824108, 0.752583415455211),
    ),
    15: (
        (0.00836628753190931, 0.02645849575653261, 0.10737805148043589, 0.32418115334484454),
        (0.9999646472717993, 0.9991560771303105, 0.9853923115581259, 0.7825473968898591),
    ),
    16: (
        (0.0062739592472743685, 0.021215821236384772, 0.09092400834361314, 0.32693885500436415),
        (0.9999804132199394, 0.9994842343904045, 0.990176035561891, 0.8221695828435525),
    ),
    'unbounded': (
        (0.029963936242829944, 0.05941599745952389, 0.15254541342681507, 0.25245103178333483),
        (0.9995576899799077, 0.9927007636459292, 0.9403406842773598, 0.6073662854513306),
    ),
}
_BLT_TABLE_EXPONENTS = (4, 16)


def blt_parameters(horizon):
    """Stored BLT parameters for a stream of at most ``horizon`` steps (``None``: unbounded).

    The entry of the smallest power of two ``>= horizon`` (at least ``2^4``, at most
    ``2^16``: longer streams reuse it, their error growing past ``2^16`` steps). The
    caller computes the column norm for the actual horizon, so any entry is private.
    """
    if horizon is None:
        return _BLT_TABLE["unbounded"]
    low, high = _BLT_TABLE_EXPONENTS
    exponent = min(max((int(horizon) - 1).bit_length(), low), high)
    return _BLT_TABLE[exponent]


# -- final-weighted dense factorization for short known horizons --------------------

#: Largest number of steps of a :func:`final_weighted_factorization` (computed on first
#: use, about 0.1 s at 64 steps and 1 s at 128 with one BLAS thread; longer streams use
#: BLT).
DENSE_MAX_STEPS = 128
_DENSE_ITERATIONS = 2000
_DENSE_TOLERANCE = 1e-10


def final_weights(n):
    """Workload weights of :func:`final_weighted_factorization`: 1, ..., 1, ``sqrt(n - 1)``.

    The objective ``sum_t w_t^2 Var_t`` then puts as much weight on the last
    prefix sum (the model a stream ends with) as on all earlier ones together.
    """
    w = np.ones(int(n))
    w[-1] = math.sqrt(max(int(n) - 1, 1))
    return w


def _psd_sqrt(M):
    eigenvalues, eigenvectors = np.linalg.eigh(M)
    return (eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))) @ eigenvectors.T


@functools.lru_cache(maxsize=8)
def final_weighted_factorization(n):
    """``(C, B)``, ``A = B C`` with lower-triangular ``C`` minimising a weighted error (public ``n``).

    The workload weights are :func:`final_weights`; see :func:`weighted_factorization`.
    Both arrays are read-only.
    """
    n = int(n)
    if not 1 <= n <= DENSE_MAX_STEPS:
        raise ValueError(f"a final-weighted factorization is computed for 1 to "
                         f"{DENSE_MAX_STEPS} steps; got {n}.")
    return weighted_factorization(tuple(final_weights(n) ** 2))


@functools.lru_cache(maxsize=8)
def weighted_factorization(squared_weights):
    """``(C, B)``, ``A = B C`` with lower-triangular ``C`` minimising ``sum_t w_t^2 Var_t``.

    ``X = C^T C`` minimises ``tr(A^T W^2 A X^-1)`` subject to ``diag(X) = 1``
    (Denisov, McMahan, Rush, Smith and Thakurta 2022, section 4; ``W^2`` the
    diagonal ``squared_weights``, a tuple of public numbers, one per step), by
    the fixed point of the dual ``v <- diag((V^(1/2) G V^(1/2))^(1/2))``,
    ``G = A^T W^2 A``, ``V = diag(v)``, and
    ``X = V^(-1/2) (V^(1/2) G V^(1/2))^(1/2) V^(-1/2)``. ``C`` is the
    lower-triangular factor of ``X`` (``J X J = L L^T``, ``C = J L^T J`` with ``J``
    the reversal), ``B = A C^-1`` (lower-triangular: release ``t`` reads
    ``y_1 .. y_t`` only). Data-free. The calibration never relies on the
    optimisation having converged: it reads the column norms of the returned
    ``C`` (:func:`dense_column_norm`). Both arrays are read-only.
    """
    from scipy.linalg import solve_triangular

    from ._threads import single_blas_thread

    w2 = np.asarray(squared_weights, dtype=np.float64)
    n = len(w2)
    if not (1 <= n <= DENSE_MAX_STEPS and np.all(np.isfinite(w2)) and np.all(w2 > 0)):
        raise ValueError(f"need 1 to {DENSE_MAX_STEPS} positive finite weights; got {n}.")
    A = np.tril(np.ones((n, n)))
    G = A.T @ (w2[:, np.newaxis] * A)
    with single_blas_thread():
        v = _dual_fixed_point(G)
        s = np.sqrt(v)
        X = _psd_sqrt(s[:, np.newaxis] * G * s) / np.outer(s, s)
        X = (X + X.T) / 2.0
        L = np.linalg.cholesky(X[::-1, ::-1])
        C = np.tril(L.T[::-1, ::-1])
        B = np.tril(solve_triangular(C, A.T, trans="T", lower=True).T)   # A C^-1
    for array in (C, B):
        array.setflags(write=False)
    return C, B


def _dual_fixed_point(G):
    """``v`` with ``v = diag((V^(1/2) G V^(1/2))^(1/2))``, ``V = diag(v)``, by iteration from 1.

    At most ``_DENSE_ITERATIONS`` steps, stopping when ``v`` moves by at most
    ``_DENSE_TOLERANCE`` relatively. Any ``v > 0`` it returns is usable: the
    factorization reads the column norms of what it builds, and the dual bound
    of :func:`anytime_lower_bound` holds for every ``v > 0``.
    """
    v = np.ones(len(G))
    for _ in range(_DENSE_ITERATIONS):
        s = np.sqrt(v)
        updated = np.diag(_psd_sqrt(s[:, np.newaxis] * G * s)).copy()
        done = np.max(np.abs(updated - v)) <= _DENSE_TOLERANCE * np.max(v)
        v = updated
        if done:
            break
    return v


def last_release_variance(C, B):
    """``||B[-1]||^2 max_j ||C[:, j]||^2``: the last prefix's variance per unit sensitivity and mu."""
    return float(np.sum(B[-1] ** 2) * np.max(np.sum(C * C, axis=0)))


# -- the unbounded dense stream: a minimax block, then BLT ---------------------------

#: Steps of the dense block an unbounded ``"dense"`` stream starts with (then BLT).
ANYTIME_STEPS = DENSE_MAX_STEPS


def anytime_weights(n, rounds=40):
    """Squared workload weights of the dense block of an unbounded stream (offline, public).

    The weights ``lambda_t / D_t`` whose :func:`weighted_factorization` minimises
    ``max_(t <= n) Var_t / D_t``, ``D_t`` the last-release variance of the
    known-horizon default for ``t`` steps (:func:`final_weighted_factorization`):
    the stream that does not know its length is as close as possible, at every
    length, to the one that does. Multiplicative weights on ``lambda``
    (``lambda_t <- lambda_t (Var_t / D_t)^2``, normalised), ``rounds`` rounds
    of the fixed point. About 20 s a round at ``n = 128``: run offline, stored
    in :data:`_ANYTIME_WEIGHTS` (``tests/test_stream_mechanisms.py`` checks the
    stored ratios; doc/privacy.md, "Unbounded streams: a minimax dense block").
    """
    n = int(n)
    D = np.array([last_release_variance(*final_weighted_factorization(t))
                  for t in range(1, n + 1)])
    lam = np.full(n, 1.0 / n)
    for _ in range(int(rounds)):
        w2 = lam / D
        C, B = weighted_factorization(tuple(w2 / w2.max()))
        norm2 = float(np.max(np.sum(C * C, axis=0)))
        ratio = np.sum(B * B, axis=1) * norm2 / D
        lam = lam * ratio**2
        lam /= lam.sum()
    w2 = lam / D
    return w2 / w2.max()


#: ``anytime_weights(ANYTIME_STEPS)`` (40 rounds), computed offline: the block's variance is
#: 2.2794 times the known-horizon default's at every ``t <= 128`` (to within 1e-4).
_ANYTIME_WEIGHTS = (
    1.0, 0.4251295909108969, 0.35640139080352995, 0.3176847591933165, 0.29145389969321867,
    0.27194894261564695, 0.2566060929854473, 0.24407205990436912, 0.23354991394075766,
    0.22453300979553287, 0.21668043732205555, 0.20975252438413636, 0.2035747832009628,
    0.1980165081694685, 0.19297743953896346, 0.1883791132162394, 0.18415905783936645,
    0.18026678854692715, 0.17666097166726716, 0.17330737421721304, 0.1701773524616672,
    0.1672467188215654, 0.16449487955280595, 0.16190416938411353, 0.15945933200369197,
    0.15714710962636844, 0.15495591567965147, 0.15287557107802321, 0.15089709014257213,
    0.14901250524745263, 0.14721472225556573, 0.14549740043287449, 0.143854852188779,
    0.14228195872569152, 0.14077409878801914, 0.1393270881225804, 0.13793712779776085,
    0.13660075988433407, 0.13531482928514219, 0.1340764507284497, 0.13288298011768193,
    0.13173198957269946, 0.13062124561347227, 0.12954869002226188, 0.12851242304708174,
    0.12751068851561895, 0.1265418607402001, 0.1256044328720976, 0.12469700655128031,
    0.1238182827244389, 0.1229670533798727, 0.12214219422657928, 0.12134265809540831,
    0.12056746906217629, 0.11981571710075388, 0.1190865533431997, 0.11837918577310276,
    0.11769287538788986, 0.1170269326772557, 0.11638071450904254, 0.1157536213258548,
    0.11514509456012902, 0.11455461440919995, 0.11398169774627379, 0.11342589631847477,
    0.11288679514570234, 0.11236401104380275, 0.1118571914243044, 0.11136601316200383,
    0.11089018169012477, 0.11042943024746928, 0.10998351921275046, 0.10955223568216634,
    0.10913539309017535, 0.10873283108134575, 0.10834441542766164, 0.10797003820446081,
    0.10760961802176892, 0.10726310052967993, 0.10693045899886945, 0.10661169519974902,
    0.10630684038661725, 0.10601595661847736, 0.10573913823071386, 0.1054765136957766,
    0.10522824770130917, 0.10499454369436714, 0.10477564673630249, 0.10457184693435612,
    0.10438348331826214, 0.1042109484523594, 0.10405469368686586, 0.10391523537037209,
    0.1037931620249053, 0.10368914273100992, 0.10360393702587149, 0.10353840643927777,
    0.10349352822558995, 0.10347041153520876, 0.10347031678705285, 0.10349467879738031,
    0.1035451346441703, 0.10362355750941596, 0.10373209786873619, 0.10387323423909256,
    0.10404983599221321, 0.10426524188568886, 0.10452335925381803, 0.10482879040929469,
    0.10518699584212855, 0.10560450739408747, 0.10608921076096191, 0.10665072584634554,
    0.10730092775520217, 0.10805467480889147, 0.10893084905866335, 0.10995388212598137,
    0.11115606080797655, 0.11258113545325399, 0.11429020790668155, 0.11637183876285738,
    0.11896052158720269, 0.12227326835437734, 0.12669019290844558, 0.1329606096126128,
    0.14286654855965591, 0.1624962061607488, 0.2732157559252688,
)


def anytime_lower_bound(n):
    """``(lower, upper)``: certified bounds on the least largest ratio any unbounded stream can have.

    Over the first ``n`` steps, the ratio of a mechanism's variance at ``t`` to the
    known-horizon default's ``D_t``. ``upper`` is :func:`anytime_weights`' block's
    largest ratio; ``lower`` the Lagrangian dual of the weighted problem at its
    weights, ``2 tr((V^(1/2) G V^(1/2))^(1/2)) - sum(v)`` with ``G = A^T diag(lambda / D)
    A`` (valid for any ``v > 0``; doc/privacy.md, "Unbounded streams", 38.1). Offline:
    about as slow as :func:`anytime_weights`.
    """
    n = int(n)
    D = np.array([last_release_variance(*final_weighted_factorization(t))
                  for t in range(1, n + 1)])
    w2 = anytime_weights(n)
    C, B = weighted_factorization(tuple(w2))
    upper = float(np.max(np.sum(B * B, axis=1) * np.max(np.sum(C * C, axis=0)) / D))
    lam = w2 * D / np.sum(w2 * D)
    A = np.tril(np.ones((n, n)))
    G = A.T @ ((lam / D)[:, np.newaxis] * A)
    v = _dual_fixed_point(G)                # any v > 0 gives a valid bound
    s = np.sqrt(v)
    eigenvalues = np.linalg.eigvalsh(s[:, np.newaxis] * G * s)
    lower = 2.0 * float(np.sum(np.sqrt(np.clip(eigenvalues, 0.0, None)))) - float(np.sum(v))
    return lower, upper


def anytime_factorization():
    """``(C, B)`` of the dense block (:data:`ANYTIME_STEPS` steps) of an unbounded stream."""
    return weighted_factorization(_ANYTIME_WEIGHTS)


def dense_column_norm(C, t=None):
    """``max_j ||C[:t, j]||`` (all rows for ``None``), with a relative margin for rounding."""
    rows = C if t is None else C[:int(t)]
    return float(np.sqrt(np.max(np.sum(rows * rows, axis=0)))) * (1 + _NORM_MARGIN)


class _StepMechanism:
    """Common state of the step mechanisms: one step per ``advance``."""

    granularity = "step"

    def __init__(self, dim, sigma, horizon):
        self.dim, self.sigma = int(dim), float(sigma)
        self.horizon = None if horizon is None else int(horizon)
        self.t = 0          # steps released
        self.n_rows = 0     # rows in them

    def _check_step(self):
        if self.horizon is not None and self.t + 1 > self.horizon:
            raise ValueError(
                f"This stream would take a step past its horizon of {self.horizon} "
                "steps: the noise was calibrated for at most horizon steps. Start a new "
                "stream with fit, or use horizon=None for streams of unknown length."
            )

    def snapshot(self):
        """A copy to advance: ``advance`` never writes into what this state reads.

        It replaces its arrays, or writes in place into rows or slots this state
        does not read (:class:`_StepRows`, :class:`_BLTSlots`).
        """
        return copy.copy(self)


class _StepRows:
    """The exact step sums and the noisy releases of a known-horizon stream, one row per step.

    Preallocated ``(horizon, dim)`` arrays (untouched rows cost no memory), so a
    step writes its two rows in place and reads the first ``t`` rows as one
    contiguous block: the same products as stacking the steps, without copying
    all of them on every step. A state with ``t`` steps reads rows ``:t`` only,
    and a step writes row ``t``, so the state a snapshot was taken from stays
    intact; ``owner[k]`` (the token of the step that wrote row ``k``) detects a
    state whose rows a sibling's step wrote over (the state of a call dropped
    and retried), which raises instead of returning wrong sums.
    """

    def __init__(self, horizon, dim):
        self.horizon = int(horizon)
        capacity = min(self.horizon, 16)
        self.steps = np.empty((capacity, int(dim)))     # exact step sums (private)
        self.noisy = np.empty((capacity, int(dim)))     # released y_1..y_t
        self.owner = [None] * self.horizon

    def check(self, tokens):
        if any(self.owner[k] is not token for k, token in enumerate(tokens)):
            raise RuntimeError(
                "This stream state was superseded: another continuation of an earlier "
                "state wrote over its steps. Continue the stream from its latest state.")

    def append(self, tokens, step_sum):
        """Check the state, write row ``t``'s exact sum; the new state's tokens."""
        self.check(tokens)
        t = len(tokens)
        if t == len(self.steps):
            # Double the rows (amortised O(dim) a step; a long horizon is not reserved
            # up front). Every state shares this object, so all see the new arrays.
            capacity = min(2 * t, self.horizon)
            for name in ("steps", "noisy"):
                grown = np.empty((capacity, self.steps.shape[1]))
                grown[:t] = getattr(self, name)
                setattr(self, name, grown)
        self.steps[t] = step_sum
        token = object()
        self.owner[t] = token
        return tokens + (token,)


class SqrtToeplitzPrefixSums(_StepMechanism):
    """Prefix sums by the square-root factorization ``B = C = A^(1/2)`` (known horizon).

    Parameters
    ----------
    dim : int
        Length of the summed vectors.
    sigma : float
        Standard deviation of the noise on each ``(C x)_t`` (0 adds none).
    horizon : int
        Largest number of steps.
    """

    def __init__(self, dim, sigma, horizon):
        super().__init__(dim, sigma, horizon)
        self._rows = _StepRows(horizon, dim)   # exact step sums and released y_1..y_t
        self._tokens = ()

    def advance_step(self, step_sum, n_rows, rng):
        """Append one step's exact sum; return the released prefix sum."""
        self._check_step()
        rows = self._rows
        tokens = rows.append(self._tokens, np.asarray(step_sum, dtype=np.float64))
        t = len(tokens)
        f = sqrt_coefficients(t)[::-1]
        exact = f @ rows.steps[:t]                       # (C x)_t from the steps only
        rows.noisy[t - 1] = gaussian_release(exact, self.sigma, rng)
        self._tokens = tokens
        self.t += 1
        self.n_rows += int(n_rows)
        return f @ rows.noisy[:t]                         # (B y)_t

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix at step ``t``: ``sigma^2 sum_(k<t) f_k^2``."""
        return self.sigma**2 * float(np.sum(sqrt_coefficients(max(int(t), 1)) ** 2)) if t else 0.0


def _buffer_step():
    """The numba kernel of the BLT buffer update (numba is loaded on first use only)."""
    from ._stream_kernels import blt_buffer_step

    return blt_buffer_step


class _BLTSlots:
    """Two slots of BLT buffers shared by a mechanism and its snapshots, written in place.

    ``owner[s]`` is the token of the mechanism whose state slot ``s`` holds. A
    step of a mechanism in slot ``s`` writes slot ``1 - s`` and takes a new
    token, so the mechanism it was snapshotted from (slot ``s``) stays valid: a
    failed call, which drops the advanced snapshot, changes nothing. A state is
    superseded once a later state's step writes over its slot (the grandchild of
    a snapshot chain); reading it then raises instead of returning wrong sums.
    """

    def __init__(self, n_buffers, dim):
        self.exact = np.zeros((2, n_buffers, dim))
        self.inverse = np.zeros((2, n_buffers, dim))
        self.scratch = np.empty(dim)
        self.owner = [None, None]


class BLTPrefixSums(_StepMechanism):
    """Prefix sums by a buffered linear Toeplitz ``C`` and ``B = A C^-1``.

    Parameters
    ----------
    dim : int
        Length of the summed vectors.
    sigma : float
        Standard deviation of the noise on each ``(C x)_t``.
    omega, theta : sequence of float
        BLT parameters, ``0 < theta_i < 1``.
    horizon : int or None
        Largest number of steps; ``None`` for an unbounded stream.
    """

    def __init__(self, dim, sigma, omega, theta, horizon):
        super().__init__(dim, sigma, horizon)
        self.omega = np.asarray(omega, dtype=np.float64)
        self.theta = np.asarray(theta, dtype=np.float64)
        # Two slots of buffers, written in place (no new arrays per step): slot ``s`` holds
        # exact_buffers = sum_(s<t) theta^(t-1-s) x_s (private) and inverse_buffers =
        # sum_(s<t) theta^(t-1-s) w_s, w = C^-1 y. A step reads its slot and writes the
        # other, so the mechanism it was snapshotted from keeps its state until the
        # step after (a failed call changes nothing; see :class:`_BLTSlots`).
        self._slots = _BLTSlots(len(self.theta), self.dim)
        self._slot, self._token = 0, object()
        self._slots.owner[0] = self._token
        self.released = np.zeros(self.dim)          # running sum of w: the released prefix
        # The same recursion on the impulse (public scalars): b_(t-1) and sum_(k<t) b_k^2,
        # so that the variance of each release costs O(buffers), not O(t).
        self._impulse_buffers = np.zeros(len(self.theta))
        self._b, self._b_squares = 0.0, 0.0

    @property
    def exact_buffers(self):
        return self._slots.exact[self._current_slot()]

    @property
    def inverse_buffers(self):
        return self._slots.inverse[self._current_slot()]

    def _current_slot(self):
        if self._slots.owner[self._slot] is not self._token:
            raise RuntimeError(
                "This BLT stream state was superseded: a stream continued from a later "
                "state wrote over its buffers. Continue the stream from its latest state.")
        return self._slot

    def advance_step(self, step_sum, n_rows, rng):
        """Append one step's exact sum; return the released prefix sum (a new array)."""
        self._check_step()
        x = np.asarray(step_sum, dtype=np.float64)
        slots, old = self._slots, self._current_slot()
        new = 1 - old
        E, I = slots.exact[old], slots.inverse[old]
        scratch = slots.scratch
        exact = np.matmul(self.omega, E, out=scratch)
        exact = np.add(x, exact, out=scratch)                 # (C x)_t
        y = gaussian_release(exact, self.sigma, rng)
        w = np.matmul(self.omega, I, out=scratch)
        w = np.subtract(y, w, out=y)                          # (C^-1 y)_t, since C w = y
        # The other slot becomes this step's state (theta * buffers + x, and + w, in
        # one pass); the old slot stays intact.
        _buffer_step()(self.theta, E, I, x, w, slots.exact[new], slots.inverse[new])
        self._token = object()
        slots.owner[new], self._slot = self._token, new
        self.released = self.released + w
        r = (1.0 if self.t == 0 else 0.0) - float(self.omega @ self._impulse_buffers)
        self._impulse_buffers = self.theta * self._impulse_buffers + r
        self._b += r
        self._b_squares += self._b * self._b
        self.t += 1
        self.n_rows += int(n_rows)
        return self.released

    def current_variance(self):
        """Per-coordinate variance of the last release, kept as the stream goes."""
        return self.sigma**2 * self._b_squares

    def prefix_variance(self, t):
        """Per-coordinate variance at step ``t``: ``sigma^2 sum_(k<t) b_k^2``, ``b = cumsum(C^-1)``."""
        t = int(t)
        if not t:
            return 0.0
        _, r = blt_coefficients(self.omega, self.theta, t)
        return self.sigma**2 * float(np.sum(np.cumsum(r) ** 2))


class StepEpochs:
    """Step mechanisms one after the other, each on its own epoch of steps.

    ``make_epoch(k)`` builds epoch ``k``'s mechanism, whose ``horizon`` is the
    epoch's number of steps (``None``: the epoch never closes), calibrated at the
    full ``mu``: a record lies in one epoch, so the whole infinite stream is
    ``mu``-GDP (a block-diagonal ``C``). A closed epoch contributes its last
    released prefix. The unbounded square root restarts on epochs of ``1, 2, 4,
    ...`` steps; the unbounded dense stream is a dense block, then BLT.
    """

    granularity = "step"

    def __init__(self, make_epoch):
        self.make_epoch = make_epoch   # k -> epoch k's mechanism (its horizon: its steps)
        self.t, self.n_rows, self.epoch, self.current = 0, 0, -1, None
        self.closed_total, self.closed_variance = None, 0.0
        self.horizon = None

    def advance_step(self, step_sum, n_rows, rng):
        if self.current is None or self.current.t == self.current.horizon:
            if self.current is not None:
                self.closed_variance += self.current.prefix_variance(self.current.t)
            self.epoch += 1
            self.current = self.make_epoch(self.epoch)
        local = self.current.advance_step(step_sum, n_rows, rng)
        closed = np.zeros_like(local) if self.closed_total is None else self.closed_total
        released = closed + local
        if self.current.t == self.current.horizon:
            self.closed_total = released
        self.t += 1
        self.n_rows += int(n_rows)
        return released

    @property
    def sigma(self):
        return 0.0 if self.current is None else self.current.sigma

    def current_variance(self):
        """Per-coordinate variance of the last release: closed epochs plus the current one."""
        if self.current is None:
            return 0.0
        current = getattr(self.current, "current_variance", None)
        local = current() if current is not None else self.current.prefix_variance(
            self.current.t)
        return self.closed_variance + local

    def snapshot(self):
        twin = copy.copy(self)
        twin.current = None if self.current is None else self.current.snapshot()
        return twin

    def prefix_variance(self, t):
        """The closed epochs' last variances plus the variance within the epoch of step ``t``."""
        t, variance, k = int(t), 0.0, 0
        while t > 0:
            epoch = self.make_epoch(k)
            if epoch.horizon is None or t <= epoch.horizon:
                return variance + epoch.prefix_variance(t)
            variance += epoch.prefix_variance(epoch.horizon)
            t -= epoch.horizon
            k += 1
        return variance


class DensePrefixSums(_StepMechanism):
    """Prefix sums by a dense lower-triangular factorization ``A = B C`` (known horizon).

    Parameters
    ----------
    dim : int
        Length of the summed vectors.
    sigma : float
        Standard deviation of the noise on each ``(C x)_t``.
    C, B : ndarray of shape (horizon, horizon)
        Lower-triangular factors, ``B C = A``.
    """

    def __init__(self, dim, sigma, C, B):
        super().__init__(dim, sigma, len(C))
        self.C, self.B = C, B
        self._rows = _StepRows(len(C), dim)    # exact step sums and released y_1..y_t
        self._tokens = ()

    def advance_step(self, step_sum, n_rows, rng):
        """Append one step's exact sum; return the released prefix sum."""
        self._check_step()
        t, rows = self.t, self._rows
        tokens = rows.append(self._tokens, np.asarray(step_sum, dtype=np.float64))
        exact = self.C[t, :t + 1] @ rows.steps[:t + 1]        # (C x)_t from the steps only
        rows.noisy[t] = gaussian_release(exact, self.sigma, rng)
        self._tokens = tokens
        self.t += 1
        self.n_rows += int(n_rows)
        return self.B[t, :t + 1] @ rows.noisy[:t + 1]          # (B y)_t

    def prefix_variance(self, t):
        """Per-coordinate noise variance of the prefix at step ``t``: ``sigma^2 ||B[t-1, :t]||^2``."""
        t = int(t)
        return self.sigma**2 * float(np.sum(self.B[t - 1, :t] ** 2)) if t else 0.0
