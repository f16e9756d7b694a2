"""Carrier's PPR boost against hand computation and an independent dense power iteration."""

import numpy as np
import pytest
import scipy.sparse as sp

from sidelight.errors import InputError, NonFiniteScoreError
from sidelight.graph import PPRGraph, empty_graph, ppr_boost, ppr_vector, select_seeds
from sidelight.graph.ppr import seed_distribution


def dense_oracle(text, A, alpha, n_seeds=20, iterations=20):
    """Written from the published rule with dense matrices; shares no code with ppr.py."""
    text = np.asarray(text, float)
    n = len(text)
    pos = [i for i in range(n) if text[i] > 0]
    pos.sort(key=lambda i: (-text[i], i))
    seeds = pos[:n_seeds]
    s = np.zeros(n)
    for i in seeds:
        s[i] = text[i]
    s /= s.sum()
    A = np.asarray(A, float)
    P = np.zeros_like(A)
    dangling = np.zeros(n)
    for i in range(n):
        if A[i].sum() > 0:
            P[i] = A[i] / A[i].sum()
        else:
            dangling[i] = 1.0
    G = alpha * np.outer(s, np.ones(n)) + (1 - alpha) * (P.T + np.outer(s, dangling))
    p = s.copy()
    for _ in range(iterations):
        p = G @ p
    return p


def random_graph(n, m, seed, symmetric=True, weighted=False):
    rng = np.random.default_rng(seed)
    A = np.zeros((n, n))
    for _ in range(m):
        u, v = rng.integers(0, n, 2)
        if u != v:
            w = rng.uniform(0.5, 3) if weighted else 1.0
            A[u, v] = w
            if symmetric:
                A[v, u] = w
    return A


def test_dangling_mass_returns_to_seed_hand_computed():
    A = sp.csr_matrix(np.array([[0, 1.0], [0, 0]]))  # a -> b, b dangles
    p, mass = ppr_vector(np.array([3.0, 0.0]), A, alpha=0.5, iterations=3, return_mass=True)
    assert np.allclose(p, [0.625, 0.375], atol=1e-15)
    assert mass == pytest.approx([1, 1, 1, 1], abs=1e-15)
    p1 = ppr_vector(np.array([3.0, 0.0]), A, alpha=0.5, iterations=1)
    p2 = ppr_vector(np.array([3.0, 0.0]), A, alpha=0.5, iterations=2)
    assert np.allclose(p1, [0.5, 0.5]) and np.allclose(p2, [0.75, 0.25])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alpha", [0.5, 0.8, 0.15])
def test_matches_dense_power_iteration_and_mass_is_one(seed, alpha):
    n = 40
    A = random_graph(n, 60, seed, symmetric=seed % 2 == 0, weighted=seed % 3 == 0)
    rng = np.random.default_rng(100 + seed)
    text = np.where(rng.random(n) < 0.7, rng.exponential(2, n), 0.0)
    text[rng.integers(0, n, 3)] = -1.0  # negatives never seed
    p, mass = ppr_vector(text, sp.csr_matrix(A), alpha, n_seeds=20, iterations=20, return_mass=True)
    assert np.allclose(p, dense_oracle(text, A, alpha), atol=1e-13, rtol=0)
    assert len(mass) == 21
    assert max(abs(x - 1.0) for x in mass) < 1e-12


def test_seed_selection_top_positive_ties_by_position():
    t = np.array([0.0, 2.0, 5.0, 2.0, -3.0, 2.0, 1.0])
    assert select_seeds(t, 3).tolist() == [2, 1, 3]
    assert select_seeds(t, 20).tolist() == [2, 1, 3, 5, 6]
    assert select_seeds(t, 3, tie_rank=np.array([0, 9, 0, 8, 0, 1, 0])).tolist() == [2, 5, 3]
    s = seed_distribution(t, 3)
    assert s.sum() == pytest.approx(1.0) and np.allclose(s[[2, 1, 3]], [5 / 9, 2 / 9, 2 / 9])
    assert select_seeds(np.array([0.0, -1.0]), 20).tolist() == []


def test_boost_hand_computed_on_a_star():
    # 0 is the only text hit; it links to 1 and 2 (undirected), 3 is isolated with no score
    A = sp.csr_matrix(np.array([[0, 1, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0.0]]))
    text = np.array([4.0, 0.0, 0.0, 0.0])
    # alpha=0.5, 1 iteration: p = .5*s + .5*P^T s = [.5, .25, .25, 0]
    f = ppr_boost(text, A, alpha=0.5, lam=0.2, iterations=1)
    assert np.allclose(f, [0.8 * 1 + 0.2 * 1, 0.2 * 0.5, 0.2 * 0.5, 0.0])
    assert f[1] > 0 and f[3] == 0  # zero-text neighbours surface through the walk only


def test_no_positive_text_returns_text_unchanged():
    A = sp.csr_matrix(np.ones((3, 3)))
    t = np.array([0.0, -0.5, 0.0])
    out = ppr_boost(t, A, 0.5, 0.1)
    assert np.array_equal(out, t) and out is not t
    assert not ppr_vector(t, A, 0.5).any()


def test_non_finite_scores_fail_closed():
    A = sp.csr_matrix((3, 3))
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(NonFiniteScoreError):
            ppr_boost(np.array([1.0, bad, 0.0]), A, 0.5, 0.1)


def test_parameter_and_shape_checks():
    A = sp.csr_matrix((3, 3))
    with pytest.raises(InputError):
        ppr_boost(np.ones(4), A, 0.5, 0.1)
    with pytest.raises(InputError):
        ppr_boost(np.ones(3), A, 1.5, 0.1)
    with pytest.raises(InputError):
        ppr_boost(np.ones(3), A, 0.5, -0.1)


def ranks(scores):
    pos = np.flatnonzero(scores > 0)
    return pos[np.lexsort((pos, -scores[pos]))].tolist()


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("lam", [0.1, 0.25, 0.5])
def test_empty_edge_control_reproduces_text_ranking(seed, lam):
    rng = np.random.default_rng(seed)
    n = 500
    text = np.where(rng.random(n) < 0.4, np.round(rng.exponential(3, n), 1), 0.0)  # rounding makes ties
    for alpha in (0.5, 0.8):
        f = ppr_boost(text, empty_graph(n), alpha, lam)
        assert ranks(f) == ranks(text)
        base = (1 - lam) * text / text.max()
        assert ranks(f) == ranks(base)
        # the walk on an empty graph stays on s, so only seeds move, each exactly to text/max
        expected = base.copy()
        seeds = select_seeds(text)
        expected[seeds] = text[seeds] / text.max()
        assert np.allclose(f, expected, atol=1e-12, rtol=0)


def test_prepared_graph_is_reusable_and_equivalent():
    A = sp.csr_matrix(random_graph(30, 50, 7))
    g = PPRGraph(A)
    t = np.random.default_rng(1).exponential(1, 30)
    assert np.array_equal(ppr_boost(t, g, 0.5, 0.1), ppr_boost(t, A, 0.5, 0.1))
    assert np.array_equal(ppr_boost(t, g, 0.5, 0.1), ppr_boost(t, g, 0.5, 0.1))
