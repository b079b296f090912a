"""Potentials of noisy mirror descent: inverse mirror maps, feasibility, the constrained
step against scipy.optimize, Psi_max, and the Gaussian widths against Monte Carlo."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sklearn_dpol._core import mirror_descent as md

# (constraint, n_dims, group_size): p = 2 uses the Euclidean fallback on the L1
# ball, p >= 4 the q-norm potential; groups with one, two and several blocks.
CASES = [
    ("l2", 1, None), ("l2", 6, None),
    ("l1", 2, None), ("l1", 5, None), ("l1", 12, None),
    ("simplex", 2, None), ("simplex", 7, None),
    ("group_l1", 4, 4), ("group_l1", 4, 2), ("group_l1", 7, 2), ("group_l1", 12, 3),
]
IDS = [f"{c}-p{p}-g{g}" for c, p, g in CASES]


def random_point(potential, rng):
    """A random point of the unit set (strictly inside the simplex's orthant)."""
    if potential.name == "simplex":
        return rng.dirichlet(np.ones(potential.n_dims))
    x = rng.normal(size=potential.n_dims) * rng.uniform(0.01, 3.0)
    return potential.step(x)


@pytest.mark.parametrize("constraint,p,group_size", CASES, ids=IDS)
def test_mirror_map_and_inverse_are_exact_inverses(constraint, p, group_size):
    potential = md.make_potential(constraint, p, group_size)
    rng = np.random.default_rng(p)
    for _ in range(200):
        u = random_point(potential, rng)
        np.testing.assert_allclose(potential.inverse(potential.mirror(u)), u, rtol=1e-10,
                                   atol=1e-14)
        z = rng.normal(size=p) * rng.choice([1e-3, 1.0, 30.0])
        np.testing.assert_allclose(potential.mirror(potential.inverse(z)), z, rtol=1e-10,
                                   atol=1e-14)


@pytest.mark.parametrize("constraint,p,group_size", CASES, ids=IDS)
def test_psi_max_bounds_psi_on_the_set_and_is_attained(constraint, p, group_size):
    potential = md.make_potential(constraint, p, group_size)
    rng = np.random.default_rng(1)
    values = [potential.value(random_point(potential, rng)) for _ in range(300)]
    assert max(values) <= potential.psi_max * (1 + 1e-12)
    vertex = np.zeros(p)
    vertex[0] = 1.0
    assert potential.value(vertex) == pytest.approx(potential.psi_max, rel=1e-12)
    assert potential.value(potential.start()) == pytest.approx(0.0, abs=1e-12)


def _scipy_step(potential, v):
    """``argmin_{u in set} <v, u> + Psi(u)`` by SLSQP, with smooth reformulations."""
    p = potential.n_dims
    name = potential.name
    if name == "l1":  # u = a - b with a, b >= 0 and sum(a + b) <= 1
        def obj(ab):
            u = ab[:p] - ab[p:]
            return v @ u + potential.value(u)
        cons = [{"type": "ineq", "fun": lambda ab: 1.0 - ab.sum()}]
        res = minimize(obj, np.full(2 * p, 0.1 / p), method="SLSQP", constraints=cons,
                       bounds=[(0, None)] * (2 * p), options={"ftol": 1e-14, "maxiter": 1000})
        return res.x[:p] - res.x[p:]
    if name == "group_l1":  # epigraph: t_j >= ||u_j||, sum t <= 1
        starts = potential.block_starts()
        m = starts.size - 1

        def obj(ut):
            return v @ ut[:p] + potential.value(ut[:p])
        cons = [{"type": "ineq", "fun": lambda ut: 1.0 - ut[p:].sum()}]
        for j in range(m):
            cons.append({"type": "ineq", "fun": lambda ut, j=j: ut[p + j] - np.sqrt(
                np.sum(ut[starts[j]:starts[j + 1]] ** 2) + 1e-20)})
        x0 = np.concatenate([np.full(p, 0.01), np.full(m, 0.5 / m)])
        res = minimize(obj, x0, method="SLSQP", constraints=cons,
                       bounds=[(None, None)] * p + [(0, None)] * m,
                       options={"ftol": 1e-14, "maxiter": 1000})
        return res.x[:p]
    if name == "simplex":
        cons = [{"type": "eq", "fun": lambda u: u.sum() - 1.0}]
        res = minimize(lambda u: v @ u + potential.value(u), np.full(p, 1.0 / p),
                       method="SLSQP", constraints=cons, bounds=[(1e-300, 1)] * p,
                       options={"ftol": 1e-14, "maxiter": 1000})
        return res.x
    cons = [{"type": "ineq", "fun": lambda u: 1.0 - u @ u}]
    res = minimize(lambda u: v @ u + potential.value(u), np.zeros(p), method="SLSQP",
                   constraints=cons, options={"ftol": 1e-14, "maxiter": 1000})
    return res.x


@pytest.mark.parametrize("constraint,p,group_size",
                         [c for c in CASES if c[1] <= 7], ids=[i for c, i in zip(CASES, IDS)
                                                               if c[1] <= 7])
@pytest.mark.parametrize("scale", [0.05, 3.0])  # the constraint inactive / active
def test_constrained_step_is_the_argmin(constraint, p, group_size, scale):
    potential = md.make_potential(constraint, p, group_size)
    rng = np.random.default_rng(7)
    for _ in range(3):
        v = scale * rng.normal(size=p)
        ours = potential.step(-v)
        reference = _scipy_step(potential, v)
        if constraint == "simplex":
            reference = np.maximum(reference, 0) / np.maximum(reference, 0).sum()
        else:  # SLSQP may end a little outside the set: scale it back in
            reference = reference / max(1.0, potential.set_norm(reference))

        def objective(u):
            return v @ u + potential.value(u)
        assert potential.set_norm(ours) <= 1.0 + 1e-12
        assert objective(ours) <= objective(reference) + 1e-9
        if objective(reference) <= objective(ours) + 1e-7:  # scipy converged
            np.testing.assert_allclose(ours, reference, atol=2e-4)


@pytest.mark.parametrize("constraint,p,group_size", CASES, ids=IDS)
def test_every_iterate_of_a_long_noisy_run_stays_in_the_set(constraint, p, group_size):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, p)) * 5
    y = rng.normal(size=30) * 5
    result = md.mirror_descent(
        X, y, None, None, loss="huber", huber_threshold=1.0, constraint=constraint,
        radius=2.0, group_size=group_size, data_norm=1.0, y_bound=1.0, intercept=True,
        epsilon=0.5, delta=1e-6, rng=rng, n_steps=2000, step_size=0.5,
        record_iterates=True)
    potential = md.make_potential(constraint, p, group_size)
    iterates = result.iterates
    assert iterates.shape == (2000, p + 1)
    assert np.all(np.abs(iterates[:, -1]) <= 1.0)
    for u in iterates[:, :p]:
        if constraint == "simplex":
            assert np.all(u >= 0) and abs(u.sum() - 1.0) <= 1e-12
        else:
            assert potential.set_norm(u) <= 1.0 + 1e-12
    assert potential.set_norm(result.coef / 2.0) <= 1.0 + 1e-12
    # The iterates move: the noise is not swallowed by the steps.
    assert np.ptp(iterates, axis=0).max() > 0.1


@pytest.mark.parametrize("constraint,p,group_size,sampler", [
    ("l2", 7, None, lambda b: np.linalg.norm(b, axis=1)),
    ("l1", 9, None, lambda b: np.max(np.abs(b), axis=1)),
    ("simplex", 30, None, lambda b: np.max(np.abs(b), axis=1)),
    ("group_l1", 10, 3, lambda b: np.max(np.stack(
        [np.linalg.norm(b[:, s:s + 3], axis=1) for s in range(0, 10, 3)]), axis=0)),
])
def test_gaussian_width_matches_monte_carlo(constraint, p, group_size, sampler):
    potential = md.make_potential(constraint, p, group_size)
    draws = sampler(np.random.default_rng(0).normal(size=(400_000, p)))
    assert potential.gaussian_width == pytest.approx(draws.mean(), rel=5e-3)
    assert potential.set_l2_diameter == 1.0


def test_l1_potential_constants():
    small = md.make_potential("l1", 3)
    assert (small.q, small.c, small.psi_max) == (2.0, 1.0, 0.5)  # Euclidean fallback
    p = 100
    big = md.make_potential("l1", p)
    log_k = np.log(2 * p)
    assert big.q == pytest.approx(log_k / (log_k - 1))
    assert big.psi_max == pytest.approx(1 / (4 * (big.q - 1)))
    assert big.q / (big.q - 1) == pytest.approx(log_k)  # the dual exponent is ln k


def test_group_potential_constants():
    many = md.make_potential("group_l1", 20, 2)
    m = 10
    assert many.power == pytest.approx(1 + 1 / np.log(m))
    assert many.xi == pytest.approx(1 / (np.e * np.log(m)))
    assert (md.make_potential("group_l1", 4, 2).xi, md.make_potential("group_l1", 4, 9).xi) \
        == (0.5, 1.0)
