"""MI-OGD's protocol kernel releases the same bits as before session 32's fusion of its row
passes (doc/privacy.md 56.8): the learner's state, the played iterates' sum
and the generator's final state, digested, on a grid of (n, d, sigma, loss, feedback,
intercept, step, radius, seeds, calls), recorded from main at 8b70a6a (the unfused kernel).

The kernel is also checked against the per-user path (the public randomiser, one user at a
time: ``run_protocol_python``) on a smaller grid, so that the digests are not the only
reference.

``python tests/test_s32n_protocol_digests.py`` prints the digests of the code it imports.
"""

import hashlib

import numpy as np
import pytest

from sklearn_dpol._core import mi_ogd
from sklearn_dpol._core.local_randomizers import sphere_directions
from sklearn_dpol._core.noise import sampler_state
from sklearn_dpol.linear_model import MutualInformationPrivateOGDRegressor

LOSSES = ("squared", "huber", "absolute")


def _data(n, d, seed, spread):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * spread / np.sqrt(d)
    if n > 3:
        X[1] *= 50.0                       # a row far outside the ball (clipped)
        X[2] = 0.0                         # a zero row
        X[3] *= 1e306 / max(np.abs(X[3]).max(), 1e-300)  # the overflowing squared norm
    y = rng.normal(size=n) * 1.5
    return X, y


def _cases():
    cases = []
    k = 0
    for d in (1, 3, 7, 64, 65, 1000):
        for sigma in (0.0, 1e-3, 0.37, 6.0, 1e4, 1e300):
            for feedback in ("full", "bandit"):
                n = 40 if d == 1000 else 120
                cases.append(dict(n=n, d=d, sigma=sigma, feedback=feedback,
                                  loss=LOSSES[k % 3], intercept=k % 4 != 3,
                                  anytime=k % 5 != 2, radius=(0.05, 0.8, 40.0)[k % 3],
                                  clip_norm=(0.3, 1.0, 25.0)[k % 3], spread=(0.5, 2.0)[k % 2],
                                  seed=k, calls=1 + k % 3))
                k += 1
    return cases


def run_case(case):
    """The kernel on one case: ``(theta, w_sum, final state)``, ``calls`` calls in a row."""
    X, y = _data(case["n"], case["d"], case["seed"], case["spread"])
    n_dims = case["d"] + int(case["intercept"])
    learner = mi_ogd.LazyOGDLearner(n_dims, radius=case["radius"], eta=0.7,
                                    anytime=case["anytime"])
    state = sampler_state(np.random.default_rng(1000 + case["seed"]))
    rng = np.random.default_rng(2000 + case["seed"])
    bandit = case["feedback"] == "bandit"
    directions = (sphere_directions(rng, case["n"], n_dims) if bandit
                  else np.zeros((0, n_dims)))
    exploration = 0.4 if bandit else 1.0
    F = mi_ogd.loss_bound(case["loss"], 1.3, case["radius"] + exploration, 1.0, 2.0,
                          case["intercept"]) if bandit else 0.0
    cuts = np.linspace(0, case["n"], case["calls"] + 1).astype(int)
    for a, b in zip(cuts[:-1], cuts[1:]):
        mi_ogd.run_protocol(learner, X[a:b], y[a:b], state,
                            directions[a:b] if bandit else directions,
                            loss=case["loss"], huber_threshold=1.3, data_norm=1.0, y_bound=2.0,
                            intercept=case["intercept"], feedback=case["feedback"],
                            clip_norm=case["clip_norm"], exploration=exploration,
                            loss_bound=F, sigma=case["sigma"])
    return learner.theta, learner.w_sum, state


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:24]


def case_digest(case):
    return _digest(*run_case(case))


ESTIMATORS = [
    dict(n=3000, d=1000, params={}),
    dict(n=500, d=50, params=dict(loss="huber", fit_intercept=False)),
    dict(n=500, d=20, params=dict(feedback="bandit", epsilon=2.0)),
    dict(n=400, d=9, params=dict(sigma=0.05, epsilon=None, average=False, radius=3.0)),
]


def estimator_digest(spec):
    X, y = _data(spec["n"], spec["d"], 77, 1.0)
    reg = MutualInformationPrivateOGDRegressor(random_state=5, data_norm=1.5, y_bound=2.0,
                                               **spec["params"])
    half = spec["n"] // 2
    reg.fit(X[:half], y[:half]).partial_fit(X[half:], y[half:])
    return _digest(reg.coef_, np.atleast_1d(reg.intercept_), reg._learner.theta,
                   reg._learner.w_sum)


# Recorded from main at 8b70a6a (before the fused kernel):
# python tests/test_s32n_protocol_digests.py
CASE_DIGESTS = [
    "db5ec37e311c97557fda2298",
    "f4e45bbbea31ba657ad2657d",
    "4d67d1a9864439a4eb190a10",
    "cc8f3f7b73a47a0e6d687105",
    "19a0473699b32dbcc7be22cb",
    "9a7517a5cb5ca126b8fff435",
    "052bf15285776e4146c979ef",
    "de72976d7e5c13284db85afc",
    "e0496c2efc92a8d41acccde3",
    "4233fb0ea8d97c3457d72662",
    "271ddc4fd4021a7ee020f8b5",
    "b611af18b4dd57304e2aaabc",
    "64403d011162f7c5e8940896",
    "0a36f3eaada3eb8a057e3e3a",
    "70613d610898fd4b55b2189b",
    "d2d57f2ab7abae1af94ecbaf",
    "0103c86423175e86b4feeae0",
    "2a33f34b21a5a7c7e985f42b",
    "c30d0dbaacd8bbf48153f3f8",
    "1786f88328c150642ae8f940",
    "19fc0b2c997c6af434ed362b",
    "cd2e329f6a99301a0351fa73",
    "a82157eab39f14917278561b",
    "bfc180f439bf180f6460adb9",
    "b1d6862d60a3e6e1b40ab94a",
    "80e1811fda6a99210e439f26",
    "f57e036059d338713f005c91",
    "4ec2fe2de358207b13aff5f1",
    "24eb0647b9543d7a43c46f4c",
    "e0bcca2a968a695f74740db8",
    "fc3b93aabc4436258972f5b9",
    "57bc1ad4dbe82b164f8e5651",
    "7487255b6d0830580471ade6",
    "7a0002806b4b02b9d04f36f4",
    "41042373ec7f6e44777f7ea1",
    "ae4b68f9ec4d4a9d79a47756",
    "35f5a6a0f5ab53bdd13911e5",
    "3cc477cf5a0e1f772dc87cd9",
    "50a17009badf472d0b425868",
    "1c406f357cd29414d93eaedf",
    "44192d1aa77996abb980d833",
    "6878d493ef39c6611c54cb93",
    "15ae894d3dd31779d7886457",
    "93ad37c9d9e35ee936c09612",
    "c80f7e726e5afab96f7e266f",
    "167ad6075f544b468f4dfde3",
    "f7a1353892a0c23d70912fa4",
    "8f921145cdec5ed63301813e",
    "6c551440ed2ac08c243b246d",
    "35ac2db897341b31d5140bea",
    "f9db2c4584d1275dbbdc824d",
    "4f01b3479d57e74d17382090",
    "c4c1e89d85e4929f91de5dea",
    "40c5fe2defadd5767c1916d0",
    "dfb0e7ccd30db5008d2db106",
    "e0bedc9f63295f5dbb56c14b",
    "228dd333c7da6c9c97854a61",
    "2e60958207539bdc47d74cb0",
    "594e159d1cd1effd294e954d",
    "355797b877b454c1552b274f",
    "66fd76b4a283aa47ce1d43e7",
    "c2fbd8169fca6f1784420416",
    "ec3104efdc015d48403ef36f",
    "f5b9805023fd6ae24c0623fe",
    "6765f2cbe3d8fdd855724f6d",
    "49dc2a8c29d2a0a518a9f98b",
    "35110d6fd1ad6ecbc432062f",
    "ee10518458ef474fb4de82c1",
    "5970e2bf3981a80f687e82b7",
    "e412f5a8212f4829d818891f",
    "e738a19375671d11298bd278",
    "bfda20bbd713b9af6dcb56f5",
]
ESTIMATOR_DIGESTS = [
    "0bb4e01426fb3a9335552120",
    "764f3552340d67359921a884",
    "b9d3562e7ccb66c48175fa51",
    "6f34e00c7791445020b4aaf7",
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
    print("]\nESTIMATOR_DIGESTS = [")
    for spec in ESTIMATORS:
        print(f'    "{estimator_digest(spec)}",')
    print("]")


def _per_user(X, y, state, sigma, clip_norm, radius, intercept=True):
    """The protocol one user at a time: the learner object plays, the per-user kernel
    ``user_full_report`` (the public randomiser's ``gaussian_report``) reports."""
    from sklearn_dpol._core import _exact_kernels, _mi_kernels

    learner = mi_ogd.LazyOGDLearner(X.shape[1] + int(intercept), radius=radius, eta=0.7,
                                    anytime=True)
    ws = _exact_kernels.workspace()
    report = np.empty(learner.n_dims)
    for i in range(X.shape[0]):
        _mi_kernels.user_full_report(learner.predict(), X[i], y[i], intercept,
                                     mi_ogd._LOSS_CODES["huber"], 1.3, 1.0, 2.0, clip_norm,
                                     sigma, ws, state, report)
        learner.update(report)
    return learner


def _kernel(X, y, state, sigma, clip_norm, radius, intercept=True):
    learner = mi_ogd.LazyOGDLearner(X.shape[1] + int(intercept), radius=radius, eta=0.7,
                                    anytime=True)
    mi_ogd.run_protocol(learner, X, y, state, np.zeros((0, learner.n_dims)), loss="huber",
                        huber_threshold=1.3, data_norm=1.0, y_bound=2.0, intercept=intercept,
                        feedback="full", clip_norm=clip_norm, exploration=1.0, loss_bound=0.0,
                        sigma=sigma)
    return learner


def _assert_same_learner(a, b):
    for (name, u), (_, v) in zip(sorted(a.state().items()), sorted(b.state().items())):
        np.testing.assert_array_equal(np.asarray(u).view(np.int64) if np.ndim(u) else u,
                                      np.asarray(v).view(np.int64) if np.ndim(v) else v,
                                      err_msg=name)


@pytest.mark.parametrize("d", [1, 2, 9, 300])
def test_kernel_is_the_per_user_path(d):
    rng = np.random.default_rng(d)
    X, y = _data(60, d, d, 2.0)
    for sigma in (1e-9, 0.05, 3.0, 1e9):
        seed = int(rng.integers(1 << 30))
        s1 = sampler_state(np.random.default_rng(seed))
        s2 = sampler_state(np.random.default_rng(seed))
        _assert_same_learner(_kernel(X, y, s1, sigma, 0.8, 1.5),
                             _per_user(X, y, s2, sigma, 0.8, 1.5))
        np.testing.assert_array_equal(s1, s2)


@pytest.mark.parametrize("first", ["tail", "tie"])
def test_a_report_off_the_usual_path_is_the_per_user_report(first):
    """The first user's first variate forged off the fused round's usual path (a tail piece:
    the round gives up and the unfused path runs from the same state; a tie of V with its
    column's threshold: still usual, through the state array): the same learner and
    generator state as the per-user path."""
    from test_s31i_direct_report import N_BOXES, _bits_word, forged_state

    from sklearn_dpol._core import _exact_kernels as kernels

    X, y = _data(30, 12, 4, 2.0)
    for trial in range(6):
        if first == "tail":
            column = N_BOXES
            words = (0, _bits_word(column, trial % 2, 5 + trial, trial), 12345 + trial)
        else:
            column = 17 + trial
            words = (int(kernels._NORMAL_TAU64[column]), _bits_word(column, trial % 2, 3, trial),
                     987654321 * (trial + 1))
        s1 = forged_state(*words)
        s2 = s1.copy()
        _assert_same_learner(_kernel(X, y, s1, 0.7, 0.8, 1.5), _per_user(X, y, s2, 0.7, 0.8, 1.5))
        np.testing.assert_array_equal(s1, s2)
