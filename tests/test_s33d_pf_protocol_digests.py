"""ParameterFree's protocol kernels release the same bits as before session 33's fast round
for the sampled-coordinate randomiser (doc/privacy.md 57.8): the learner's state, the played
iterates' sum and the generator's final state, digested, on a grid of (method, d, weights,
budgets, sample weights, loss, intercept, prior, seeds, calls), recorded from main at 633b2f6
(before the change).

The grid reaches every branch of the fast round and of the general path it must equal: every
coordinate private (the fast round) or one public (the general path), uniform and skewed
budget splits, a budget without a rung (reports all 0), ``epsilon = inf`` and NaN budgets
in the same call (per-user budgets), users of weight 0, rows whose gradient is clipped, a zero
row and one of magnitude 1e306, ``d = 1`` and lengths around the four lanes of the sums.

``python tests/test_s33d_pf_protocol_digests.py`` prints the digests of the code it imports.
"""

import hashlib

import numpy as np
import pytest

from sklearn_dpol import ParameterFreeLocalDPRegressor
from sklearn_dpol._core import parameter_free as pf
from sklearn_dpol._core.local_randomizers import LocalSampledCoordinateRandomizer
from sklearn_dpol._core.noise import sampler_state


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    X[1] *= 40.0                                  # a clipped gradient
    X[2] = 0.0                                    # a zero row
    X[3] *= 1e306 / max(np.abs(X[3]).max(), 1e-300)   # a row of magnitude 1e306
    y = X[:, 0] * 0.7 + 0.3 * rng.normal(size=n)
    y[3] = 0.5
    return X, y


def _cases():
    cases = []
    k = 0
    for d in (1, 3, 4, 5, 8, 51):
        for split in ("uniform", "skewed", "public"):
            for budgets in ("one", "mixed", "tiny"):
                cases.append(dict(d=d, split=split, budgets=budgets,
                                  method=("reduction", "coordinate")[k % 5 == 4],
                                  loss=("absolute", "huber")[k % 2],
                                  intercept=k % 4 != 3, prior=("improper", "conjugate")[k % 3 == 1],
                                  weighted=k % 3 == 2, seed=k, calls=1 + k % 3))
                k += 1
    return cases


def run_case(case):
    """The kernel on one case: the learner's arrays and the final generator state."""
    n = 90
    X, y = _data(n, case["d"], case["seed"])
    n_dims = case["d"] + int(case["intercept"])
    rng = np.random.default_rng(500 + case["seed"])
    if case["split"] == "uniform":
        weights = np.full(n_dims, 1.0 / n_dims)
    else:
        weights = rng.uniform(0.05, 1.0, n_dims) ** 3
        if case["split"] == "public" and n_dims > 1:
            weights[n_dims // 2] = 0.0
        weights /= weights.sum()
    if case["budgets"] == "one":
        eps = np.full(n, 1.0)
    elif case["budgets"] == "tiny":
        eps = np.full(n, 1e-30)                   # no rung: every report is 0
    else:
        eps = rng.choice([0.3, 1.0, 4.0, np.inf, 1e-30, np.nan], size=n)
    sample_weight = (np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0, 1, n))
                     if case["weighted"] else None)
    learner = pf.make_learner(case["method"], n_dims, G=np.sqrt(n_dims) * 0.8,
                              prior=case["prior"], b=1.3)
    state = sampler_state(np.random.default_rng(1000 + case["seed"]))
    sampled = LocalSampledCoordinateRandomizer(weights)
    cuts = np.linspace(0, n, case["calls"] + 1).astype(int)
    for a, b in zip(cuts[:-1], cuts[1:]):
        pf.run_protocol(learner, X[a:b], y[a:b], eps[a:b], weights, state,
                        loss=case["loss"], huber_threshold=0.4, intercept=case["intercept"],
                        sampled=sampled,
                        sample_weight=None if sample_weight is None else sample_weight[a:b])
    arrays = ([learner.scalars, learner.z] if case["method"] == "reduction"
              else [learner.L, learner.S])
    return (*arrays, learner.w_sum, state)


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:24]


def case_digest(case):
    return _digest(*run_case(case))


ESTIMATORS = [
    dict(n=3000, d=50, params={}),
    dict(n=600, d=7, params=dict(fit_intercept=False, loss="huber", prior="conjugate")),
    dict(n=600, d=9, params=dict(randomizer="sampled_coordinate", epsilon=0.2,
                                 feature_weights=np.linspace(1.0, 3.0, 10))),
]


def estimator_digest(spec):
    X, y = _data(spec["n"], spec["d"], 77)
    reg = ParameterFreeLocalDPRegressor(random_state=5, **spec["params"])
    half = spec["n"] // 2
    reg.fit(X[:half], y[:half]).partial_fit(X[half:], y[half:])
    return _digest(reg.coef_, np.atleast_1d(reg.intercept_), reg._learner.w_sum,
                   *(v for k, v in sorted(vars(reg._learner).items())
                     if isinstance(v, np.ndarray)))


# Recorded from main at 633b2f6 (before the fast sampled round):
# python tests/test_s33d_pf_protocol_digests.py
CASE_DIGESTS = [
    "b65176d5c15aa811515f335d",
    "1dc4f44c0bef4bef910a35fb",
    "07623f906cbaf235150362f6",
    "ca73b84887495283a94d8f84",
    "d36ff6e47883748bcb69b37d",
    "3cbbb209e068f083efe4c323",
    "ec91b6752c7a592fe5c94b7d",
    "71a39e58da6c126bdd2d5fe7",
    "531465ad433f5114d79a7fe1",
    "66ba0ebbe54d35f47cfd4149",
    "671b810cf8b3623578ee028f",
    "602e8175195d04bd13d22f88",
    "751bc75e6da1d87c40c91743",
    "c6a8b8c78125f7617ab5ed11",
    "2352b27daee3abf2bcd00297",
    "11d9e84cd25e005490845c32",
    "20ecdaa5ea0da607f25ee093",
    "0952c918436d3f25fe14424e",
    "e322d0dffa2d1a4427fbfc88",
    "365e1aa82f66f85311e9c482",
    "a18873a006abba7fb079d51a",
    "d21568f3a440208d868bc727",
    "d30ba557a4072feffae7dd68",
    "cdc3724a1fdbaf3e9046e01c",
    "ba650b4c6ad95042bfe220ab",
    "80dcf4c432928293fa0131c8",
    "cfe784b0f89b91d05e3440af",
    "0bda1d5b61ff27e10963e552",
    "9366e10242ebb14b38653b29",
    "bc67e832b31035623f0474e2",
    "e6493cccb86fd1efe157a725",
    "f528dfb5e3d83e96fb1959ac",
    "33de92ce52a2750b166c76ce",
    "1ba7f46a65c4a91e338e49a4",
    "5c15adfefe7fe9b1ded745c6",
    "88063d94c44002ac5787c6e7",
    "0a44ca2b2811002b8fd9c116",
    "5840d4d77cf014ee73202cc9",
    "aad68c57a7475bc1dc921939",
    "2985fc3b842e9a67f09f1003",
    "632be5e744d82278b600067f",
    "22ba6dec9697441e03b712e0",
    "84f1f2710e8b2bbe237dbd78",
    "f1469cf1839a43b89b8738cb",
    "1ee4268093171d3cdb293da6",
    "51f7dc42b140c98a344a75f7",
    "8519c7de49a9d388860f193c",
    "804fb4bfdcd286082d2ceb0e",
    "bc2a2b32e4b7068197a2dd88",
    "71f729ad78065cb7d31d6574",
    "bf0fbbc2e3a1add32927d99d",
    "f00372ce4365c5a4d145e874",
    "4fa7287625bef92ed2469031",
    "a1891522230a259a537e8012",
]

ESTIMATOR_DIGESTS = [
    "aca69bca2c3309b77e6b4f8b",
    "51b1a7c747eeffe1dfc18d33",
    "6b9ec595ec8c32391944cd4b",
]


@pytest.mark.parametrize("i", range(len(_cases())))
def test_protocol_kernel_releases_the_recorded_bits(i):
    assert case_digest(_cases()[i]) == CASE_DIGESTS[i]


@pytest.mark.parametrize("i", range(len(ESTIMATORS)))
def test_estimator_fits_the_recorded_model(i):
    assert estimator_digest(ESTIMATORS[i]) == ESTIMATOR_DIGESTS[i]


def test_the_grid_is_recorded_in_full():
    assert len(CASE_DIGESTS) == len(_cases()) and len(ESTIMATOR_DIGESTS) == len(ESTIMATORS)


if __name__ == "__main__":
    print("CASE_DIGESTS = [")
    for case in _cases():
        print(f'    "{case_digest(case)}",')
    print("]\n\nESTIMATOR_DIGESTS = [")
    for spec in ESTIMATORS:
        print(f'    "{estimator_digest(spec)}",')
    print("]")
