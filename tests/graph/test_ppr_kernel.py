"""The PPR walk's fast paths (numba kernel, relabelled scipy fallback) against the original scipy loop:
bit-identical vectors, masses within 1e-12, the numpy fallback and its env switch."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from sidelight.errors import MissingDataError
from sidelight.graph import PPRGraph, empty_graph, ppr_boost, ppr_vector
from sidelight.graph import ppr_kernel
from sidelight.graph.ppr import select_seeds

HAVE_NUMBA = ppr_kernel.BACKEND == "numba"


def reference_walk(text, g, alpha, n_seeds=20, iterations=20, tie_rank=None):
    """The walk as written before the kernel: scipy csr_matvec per step on original ids."""
    t = np.asarray(text, np.float64)
    seeds = select_seeds(t, n_seeds, tie_rank)
    p = np.zeros(g.n)
    if not len(seeds):
        return p, [0.0]
    s_vals = t[seeds] / t[seeds].sum()
    p[seeds] = s_vals
    masses = [float(p.sum())]
    beta, di = 1.0 - alpha, g._dangling_idx
    buf = np.empty(g.n)
    for _ in range(iterations):
        dangling_mass = float(p[di].sum()) if len(di) else 0.0
        q = g.matvec(p, buf)
        q *= beta
        q[seeds] += (alpha + beta * dangling_mass) * s_vals
        p, buf = q, p
        masses.append(float(p.sum()))
    return p, masses


@pytest.fixture(params=["numba", "numpy"])
def backend(request, monkeypatch):
    if request.param == "numba" and not HAVE_NUMBA:
        pytest.skip(f"numba kernel unavailable: {ppr_kernel.REASON}")
    monkeypatch.setattr(ppr_kernel, "BACKEND", request.param)
    return request.param


def random_adjacency(n, m, seed, symmetric, weighted, isolated=0.1):
    """Random sparse graph; ~`isolated` of the nodes get no out-links (dangling)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    w = rng.uniform(0.25, 4.0, len(src)) if weighted else np.ones(len(src))
    if symmetric:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    dead = rng.random(n) < isolated
    keep = ~dead[src]
    a = sp.coo_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n)).tocsr()
    a.data[:] = np.where(a.data > 0, a.data if weighted else 1.0, 0.0)  # duplicates summed: back to 1
    return a


def random_text(n, seed, frac=0.3):
    rng = np.random.default_rng(seed)
    t = np.where(rng.random(n) < frac, rng.exponential(2.0, n), 0.0)
    t[rng.integers(0, n, 5)] = -1.0
    t[rng.integers(0, n)] = 2.5  # at least one seed
    return t


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("alpha", [0.5, 0.8, 0.15])
def test_bit_identical_to_the_scipy_loop_on_random_graphs(backend, seed, alpha):
    n = [50, 300, 2000, 7][seed % 4]
    a = random_adjacency(n, 3 * n, seed, symmetric=seed % 2 == 0, weighted=seed % 3 == 0)
    g = PPRGraph(a)
    assert g.dangling.any() or n == 7
    assert (g.layout().scaled is None) == (seed % 3 == 0)  # unit weights take the pre-scaled kernel
    for q in range(3):
        t = random_text(n, 1000 * seed + q)
        p_ref, m_ref = reference_walk(t, g, alpha)
        p = ppr_vector(t, g, alpha)
        assert np.array_equal(p, p_ref)
        p2, masses = ppr_vector(t, g, alpha, return_mass=True)
        assert np.array_equal(p2, p_ref) and masses == m_ref
        assert len(masses) == 21 and max(abs(x - 1.0) for x in masses) < 1e-12


@pytest.mark.parametrize("iterations", [0, 1, 2, 7])
def test_iteration_counts_and_seed_counts(backend, iterations):
    g = PPRGraph(random_adjacency(400, 1200, 3, symmetric=True, weighted=False))
    t = random_text(400, 9)
    for n_seeds in (1, 5, 20, 400):
        p_ref, m_ref = reference_walk(t, g, 0.5, n_seeds, iterations)
        p, masses = ppr_vector(t, g, 0.5, n_seeds, iterations, return_mass=True)
        assert np.array_equal(p, p_ref) and masses == m_ref


def test_empty_graph_everything_dangles(backend):
    n = 20000  # all nodes dangling: the pairwise dangling sum runs over > 8192 entries
    g = PPRGraph(empty_graph(n))
    t = random_text(n, 4, frac=0.5)
    p_ref, m_ref = reference_walk(t, g, 0.5)
    p, masses = ppr_vector(t, g, 0.5, return_mass=True)
    assert np.array_equal(p, p_ref) and masses == m_ref


def test_tie_rank_and_boost(backend):
    g = PPRGraph(random_adjacency(500, 1500, 5, symmetric=False, weighted=True))
    t = np.round(random_text(500, 6), 1)
    tie = np.random.default_rng(0).permutation(500)
    p_ref, _ = reference_walk(t, g, 0.8, tie_rank=tie)
    assert np.array_equal(ppr_vector(t, g, 0.8, tie_rank=tie), p_ref)
    f = ppr_boost(t, g, 0.8, 0.25, tie_rank=tie)
    assert np.array_equal(f, (1.0 - 0.25) * (t / t.max()) + 0.25 * (p_ref / p_ref.max()))


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba kernel unavailable")
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000, 8191, 8193, 82115])
def test_kernel_pairwise_sum_is_numpys(size):
    rng = np.random.default_rng(size)
    a = rng.exponential(1.0, size + 50) * 10.0 ** rng.integers(-8, 8, size + 50)
    idx = np.sort(rng.choice(size + 50, size, replace=False))
    assert ppr_kernel.pairwise_sum(a, idx) == a[idx].sum()


def test_layout_is_a_relabelling_of_the_transition():
    g = PPRGraph(random_adjacency(300, 900, 2, symmetric=False, weighted=True))
    lay = g.layout()
    assert np.array_equal(np.sort(lay.perm), np.arange(300)) and np.array_equal(lay.iperm[lay.perm], np.arange(300))
    counts = np.diff(lay.indptr)
    assert np.all(counts[:-1] >= counts[1:])
    m = sp.csr_matrix((lay.data, lay.indices, lay.indptr), shape=(300, 300)).toarray()
    assert np.array_equal(m, g.transition_t.toarray()[np.ix_(lay.perm, lay.perm)])
    assert np.array_equal(lay.perm[lay.dangling], g._dangling_idx)
    assert g.layout() is lay


def test_wordnet_queries_match_the_scipy_loop(backend):
    try:
        from sidelight.corpus.wordnet import load_wordnet_nouns
        from sidelight.graph.store import Graph

        corpus = load_wordnet_nouns()
    except MissingDataError as exc:
        pytest.skip(str(exc))
    g = PPRGraph(Graph.from_corpus(corpus).undirected())
    assert g.layout().scaled is not None
    rng = np.random.default_rng(11)
    for q in range(4):
        t = np.zeros(g.n)
        hits = rng.choice(g.n, 40, replace=False)
        t[hits] = np.round(rng.exponential(5.0, 40), 2)  # rounding makes seed ties
        p_ref, m_ref = reference_walk(t, g, 0.5)
        p, masses = ppr_vector(t, g, 0.5, return_mass=True)
        assert np.array_equal(p, p_ref) and masses == m_ref
        assert max(abs(x - 1.0) for x in masses) < 1e-12


def test_env_switch_selects_the_numpy_fallback():
    code = ("from sidelight.graph import ppr_kernel as k; import numpy as np, scipy.sparse as sp;"
            "from sidelight.graph import ppr_vector;"
            "p = ppr_vector(np.array([1.0, 0, 2]), sp.csr_matrix(np.ones((3, 3))), 0.5);"
            "print(k.BACKEND, k.enabled(), k._K is None, repr(k.REASON), round(p.sum(), 12))")
    env = dict(os.environ, SIDELIGHT_KERNELS="numpy")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["numpy", "False", "True", "'disabled", "by", "SIDELIGHT_KERNELS=numpy'", "1.0"]
