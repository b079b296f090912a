"""The fast paths of QFTL streams keep the model and the checks of the slow ones (issue 19)."""


import numpy as np
import pytest

from sklearn_dpol import PrivateQFTLRegressor
from sklearn_dpol._base import validated_stream_batch
from sklearn_dpol._core import qftl, sets
from sklearn_dpol.privacy import _streams as streams


def eigh_model(V, u, n, alpha, R, B, noise_std):
    """The model as ridge_from_statistics defined it before the fast paths (one eigh)."""
    ceiling = n * R * R
    floor = min(qftl.noise_spectral_norm(noise_std, len(u)), ceiling)
    values, vectors = np.linalg.eigh(V)
    values = np.clip(values, floor, ceiling) + n * alpha
    u = sets.project(sets.L2, u, n * R * B)
    return vectors @ ((vectors.T @ u) / values)


def noisy_statistics(rng, n, d, std, spike=0.0):
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X[:, 0] += spike * (1.0 - np.abs(X[:, 0]))   # one strong direction
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X.sum(axis=1), -1, 1)
    G = rng.standard_normal((d, d)) * std
    V = X.T @ X + (G + G.T) / 2.0   # the packing: std on the diagonal, std / sqrt 2 off it
    u = X.T @ y + rng.standard_normal(d) * std
    return V, u


def solve(V, u, n, std, monkeypatch=None, eigh_allowed=True):
    if not eigh_allowed:
        def refuse(*_, **__):
            raise AssertionError("the fast path fell back to eigh")
        monkeypatch.setattr(np.linalg, "eigh", refuse)
    try:
        return qftl.ridge_from_statistics(V, u, n, 0.01, 1.0, 1.0, std)
    finally:
        if monkeypatch is not None:
            monkeypatch.undo()


@pytest.mark.parametrize("d", [5, 40, 150])
def test_no_eigenvalue_clipped_solves_by_cholesky(d, monkeypatch):
    rng = np.random.default_rng(d)
    n, std = 200 * d, 0.5
    V, u = noisy_statistics(rng, n, d, std)
    values = np.linalg.eigvalsh(V)
    floor = qftl.noise_spectral_norm(std, d)
    assert floor < values[0] and values[-1] < n          # case (A)
    expected = eigh_model(V, u, n, 0.01, 1.0, 1.0, std)
    got = solve(V, u, n, std, monkeypatch, eigh_allowed=False)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("seed", range(4))
def test_few_eigenvalues_above_the_floor_solve_by_lanczos(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    d, n, std = 160, 300, 4.0
    V, u = noisy_statistics(rng, n, d, std, spike=3.0)
    values = np.linalg.eigvalsh(V)
    floor = qftl.noise_spectral_norm(std, d)
    assert 1 <= np.sum(values > floor) <= 4 and values[0] < floor   # case (B)
    expected = eigh_model(V, u, n, 0.01, 1.0, 1.0, std)
    got = solve(V, u, n, std, monkeypatch, eigh_allowed=False)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())


def test_floor_at_the_ceiling_is_a_scaled_u(monkeypatch):
    rng = np.random.default_rng(1)
    d, n, std = 30, 20, 5.0      # noise floor above n R^2: every eigenvalue at the ceiling
    V, u = noisy_statistics(rng, n, d, std)
    expected = eigh_model(V, u, n, 0.01, 1.0, 1.0, std)
    got = solve(V, u, n, std, monkeypatch, eigh_allowed=False)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("d", [20, 120])
def test_mixed_spectra_fall_back_to_eigh(d):
    """Eigenvalues on both sides of the floor in numbers: the certificates refuse, eigh solves."""
    rng = np.random.default_rng(3)
    n, std = 8 * d, 1.0
    V, u = noisy_statistics(rng, n, d, std)
    floor = qftl.noise_spectral_norm(std, d)
    values = np.linalg.eigvalsh(V)
    assert np.sum(values < floor) >= 2 and np.sum(values > floor) >= 6
    expected = eigh_model(V, u, n, 0.01, 1.0, 1.0, std)
    np.testing.assert_allclose(solve(V, u, n, std), expected, rtol=1e-10,
                               atol=1e-12 * np.abs(expected).max())


def test_noise_free_statistics_keep_the_eigh_solve():
    rng = np.random.default_rng(4)
    V, u = noisy_statistics(rng, 30, 50, 0.0)       # rank 30 < 50: eigenvalues clipped at 0
    expected = eigh_model(V, u, 30, 0.01, 1.0, 1.0, 0.0)
    np.testing.assert_array_equal(solve(V, u, 30, 0.0), expected)


def test_stream_models_match_the_eigh_model():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 110))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X.sum(axis=1), -1, 1)
    reg = PrivateQFTLRegressor(random_state=0)
    for lo in range(0, 3000, 300):
        reg.partial_fit(X[lo:lo + 300], y[lo:lo + 300])
        n, na, std, alpha, R, B, nf, scaling, _ = reg._released_solve
        V, u = qftl.unpack(reg._released_statistics, na)
        w = eigh_model(V, u, n, alpha, R, B, std)
        np.testing.assert_allclose(reg.coef_, w[:nf], rtol=1e-9,
                                   atol=1e-12 * np.abs(w).max())
        assert reg.intercept_ == pytest.approx(w[nf] * scaling, rel=1e-9,
                                               abs=1e-12 * np.abs(w).max())


# -- validation ------------------------------------------------------------------------

def fitted_stream(**params):
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(40, 3))
    y = np.clip(X.sum(axis=1), -1, 1)
    reg = PrivateQFTLRegressor(random_state=0, **params).partial_fit(X[:10], y[:10])
    return reg, X, y


def test_fast_validation_accepts_only_what_validate_data_returns_unchanged():
    reg, X, y = fitted_stream()
    assert validated_stream_batch(reg, X[10:20], y[10:20]) is not None
    bad = [
        (X[10:20].astype(np.float32), y[10:20]),
        (X[10:20], y[10:20].astype(np.float32)),
        (X[10:20].astype(">f8"), y[10:20]),
        (X[10:20, :2], y[10:20]),
        (X[10:20], y[10:19]),
        (X[10:10], y[10:10]),
        (X[10:20].tolist(), y[10:20]),
        (X[10:20], y[10:20, None]),
        (np.where(np.arange(30).reshape(10, 3) == 4, np.nan, X[10:20]), y[10:20]),
        (X[10:20], np.where(np.arange(10) == 3, np.inf, y[10:20])),
    ]
    for Xb, yb in bad:
        assert validated_stream_batch(reg, Xb, yb) is None


@pytest.mark.parametrize("case", ["nan_X", "inf_y", "features", "empty"])
def test_later_calls_raise_what_validate_data_raises(case):
    reg, X, y = fitted_stream()
    Xb, yb = X[10:20].copy(), y[10:20].copy()
    if case == "nan_X":
        Xb[2, 1] = np.nan
        match = "Input X contains NaN"
    elif case == "inf_y":
        yb[3] = np.inf
        match = "Input y contains infinity"
    elif case == "features":
        Xb = Xb[:, :2]
        match = "features"
    else:
        Xb, yb = Xb[:0], yb[:0]
        match = "0 sample"
    before = reg._released_statistics
    with pytest.raises(ValueError, match=match):
        reg.partial_fit(Xb, yb)
    assert reg._released_statistics is before


def test_feature_names_still_warn_on_later_calls():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-0.5, 0.5, size=(20, 2)), columns=["a", "b"])
    y = np.clip(X.sum(axis=1).to_numpy(), -1, 1)
    reg = PrivateQFTLRegressor(random_state=0).partial_fit(X[:10], y[:10])
    with pytest.warns(UserWarning, match="feature names"):
        reg.partial_fit(X.to_numpy()[10:], y[10:])


def test_fast_and_full_validation_release_the_same_stream():
    """A stream fed float64 arrays (fast path) and one fed lists (full path): same releases."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(40, 3))
    y = np.clip(X.sum(axis=1), -1, 1)
    fast = PrivateQFTLRegressor(random_state=0)
    full = PrivateQFTLRegressor(random_state=0)
    for lo in range(0, 40, 10):
        fast.partial_fit(X[lo:lo + 10], y[lo:lo + 10])
        full.partial_fit(X[lo:lo + 10].tolist(), y[lo:lo + 10].tolist())
        np.testing.assert_array_equal(fast._released_statistics, full._released_statistics)
    assert fast.privacy_ == full.privacy_


# -- the rounding check, cleared ahead -------------------------------------------------

@pytest.mark.parametrize("name", ["blt", "sqrt"])
def test_the_first_call_past_the_allowance_is_refused(name, monkeypatch):
    """Clearing calls ahead never lets through a call the one check would refuse."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(100, 2))
    y = np.clip(X.sum(axis=1), -1, 1)
    reg = PrivateQFTLRegressor(random_state=0, prefix_sums=name)
    reg.partial_fit(X[:5], y[:5])
    fraction = qftl.ATOM_COORDINATE_FRACTION
    ratios = [streams.rounding_ratio(reg._stream, k, 5, fraction) for k in range(1, 12)]
    assert all(a < b for a, b in zip(ratios, ratios[1:]))
    # Calls up to 6 pass; call 7 is past the allowance.
    monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", (ratios[5] + ratios[6]) / 2)
    for call in range(2, 7):
        reg.partial_fit(X[5 * call:5 * call + 5], y[5 * call:5 * call + 5])
    assert reg._stream.t == 6
    with pytest.raises(ValueError, match="rounding"):
        reg.partial_fit(X[50:55], y[50:55])
    assert reg._stream.t == 6
    # A larger batch is checked at its own size.
    monkeypatch.setattr(streams, "ROUNDING_ALLOWANCE", ratios[6] * 1.01)
    with pytest.raises(ValueError, match="rounding"):
        reg.partial_fit(X[50:60], y[50:60])
    reg.partial_fit(X[50:55], y[50:55])
    assert reg._stream.t == 7


def _spectrum(rng, d, floor, top):
    """A symmetric matrix with a bulk below ``floor`` and eigenvalues ``top`` above it."""
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    values = np.concatenate([rng.uniform(-0.95, 0.95, d - len(top)) * floor, top])
    V = (Q * values) @ Q.T
    return (V + V.T) / 2.0, Q[:, d - len(top):]


def test_warm_start_keeps_the_model_and_carries_the_ritz_vectors(monkeypatch):
    rng = np.random.default_rng(7)
    d, n, std = 160, 300, 4.0
    V1, u1 = noisy_statistics(np.random.default_rng(0), n, d, std, spike=3.0)
    G = rng.standard_normal((d, d)) * 0.3
    V2 = V1 + (G + G.T) / 2.0       # the next release: the same data, more noise
    warm = {}
    first = qftl.ridge_from_statistics(V1, u1, n, 0.01, 1.0, 1.0, std, warm=warm)
    hint = warm["ritz"]
    assert hint is not None and hint.shape[0] == d and hint.shape[1] >= 1
    np.testing.assert_allclose(first, eigh_model(V1, u1, n, 0.01, 1.0, 1.0, std), rtol=1e-10,
                               atol=1e-12 * np.abs(first).max())
    monkeypatch.setattr(np.linalg, "eigh", lambda *_, **__: pytest.fail("fell back to eigh"))
    got = qftl.ridge_from_statistics(V2, u1, n, 0.01, 1.0, 1.0, std, warm=warm)
    monkeypatch.undo()
    expected = eigh_model(V2, u1, n, 0.01, 1.0, 1.0, std)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())
    assert warm["ritz"] is not hint


@pytest.mark.parametrize("kind", ["stale", "garbage", "wrong_shape"])
def test_a_wrong_warm_start_is_refused_by_the_certificate(kind, monkeypatch):
    rng = np.random.default_rng(3)
    d, n, std = 160, 10_000, 4.0
    floor = qftl.noise_spectral_norm(std, d)
    # One eigenvalue far above the floor (found at once) and one just above it
    # (found late): a hint with one vector lets the certificate be tried early,
    # before the second is found, and it must refuse.
    V, top = _spectrum(rng, d, floor, np.array([1.02 * floor, 30.0 * floor]))
    u = rng.standard_normal(d) * 10.0
    hint = {
        "stale": top[:, 1:] + 0.01 * rng.standard_normal((d, 1)),
        "garbage": rng.standard_normal((d, 1)),
        "wrong_shape": rng.standard_normal((d + 1, 2)),
    }[kind]
    warm = {"ritz": hint}
    verdicts = []
    certified = qftl._deflation_certified

    def spy(*args):
        verdicts.append(certified(*args))
        return verdicts[-1]

    monkeypatch.setattr(qftl, "_deflation_certified", spy)
    got = qftl.ridge_from_statistics(V, u, n, 0.01, 1.0, 1.0, std, warm=warm)
    monkeypatch.undo()
    expected = eigh_model(V, u, n, 0.01, 1.0, 1.0, std)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())
    assert verdicts and verdicts[-1]
    if kind == "stale":
        assert False in verdicts        # the early certificate was tried and refused
    assert warm["ritz"].shape == (d, 2)  # both eigenpairs above the floor, recorded


@pytest.mark.parametrize("m", [1, 2, 8, 40, 100])
def test_top_of_tridiagonal_matches_the_full_eigendecomposition(m):
    """The Lanczos check's few top eigenpairs are those of eigh_tridiagonal (every floor)."""
    from scipy.linalg import eigh_tridiagonal

    rng = np.random.default_rng(m)
    diagonal, off = rng.standard_normal(m), rng.uniform(0.1, 1.0, m - 1)
    values, vectors = eigh_tridiagonal(diagonal, off)
    for floor in (values[-1] + 1.0, values[-1] - 1e-9, np.median(values), values[0] - 1.0):
        for wanted in (1, 3):
            smallest, top, small = qftl._top_of_tridiagonal(diagonal, off, floor, wanted)
            q = len(top)
            assert q == m or top[0] <= floor          # the largest value below the floor is in
            assert np.count_nonzero(top > floor) == np.count_nonzero(values > floor)
            np.testing.assert_allclose(smallest, values[0], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(top, values[m - q:], rtol=1e-12, atol=1e-12)
            # Unit eigenvectors, up to sign (the values are simple here).
            np.testing.assert_allclose(np.abs(small), np.abs(vectors[:, m - q:]), atol=1e-9)
