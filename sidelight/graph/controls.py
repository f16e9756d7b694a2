"""Carrier R01's graph controls, each an adjacency the same `ppr_boost` accepts (except degree-only).

* `rewire`: degree-preserving double-edge swaps of the undirected simple graph;
* `empty_graph`: no edges at all (must reproduce the text ranking);
* `stored_direction`: the walk follows the stored edge direction instead of the projection;
* `degree_scores`: a query-independent ranking by undirected degree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..errors import InputError
from .store import Graph


@dataclass(frozen=True)
class RewireReport:
    """What a rewiring run did; `retained_overlap` = share of original edges still present."""

    seed: int
    n_nodes: int
    n_edges: int
    attempts: int
    accepted: int
    retained_overlap: float
    components_before: int
    components_after: int
    largest_component_before: int
    largest_component_after: int

    def to_dict(self) -> dict:
        return asdict(self)


def _simple_pairs(adjacency: sp.spmatrix) -> tuple[int, np.ndarray, np.ndarray]:
    """Unordered pairs u < v with a nonzero entry in either direction (self loops dropped)."""
    import scipy.sparse as sp
    a = sp.coo_matrix(adjacency)
    if a.shape[0] != a.shape[1]:
        raise InputError(f"controls: adjacency must be square, got {a.shape}")
    n = a.shape[0]
    keep = (a.row != a.col) & (a.data != 0)
    u = np.minimum(a.row[keep], a.col[keep]).astype(np.int64)
    v = np.maximum(a.row[keep], a.col[keep]).astype(np.int64)
    keys = np.unique(u * n + v) if len(u) else np.zeros(0, dtype=np.int64)
    return n, keys // max(n, 1), keys % max(n, 1)


def _symmetric(n: int, u: np.ndarray, v: np.ndarray) -> sp.csr_matrix:
    import scipy.sparse as sp
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    m.sort_indices()
    return m


def _components(m: sp.csr_matrix) -> tuple[int, int]:
    if m.shape[0] == 0:
        return 0, 0
    from scipy.sparse.csgraph import connected_components  # slow to import; most lanes never need it

    k, labels = connected_components(m, directed=False)
    return int(k), int(np.bincount(labels).max())


def rewire(adjacency_undirected: sp.spmatrix, seed: int, attempts_factor: int = 10) -> tuple[sp.csr_matrix, RewireReport]:
    """Degree-preserving double-edge swaps on the undirected simple graph.

    `attempts_factor * |E|` attempts, random numbers from `np.random.default_rng(seed)`. Each
    attempt picks two distinct edges (a,b),(c,d) uniformly and, with a fair coin, proposes
    (a,d),(c,b) or (a,c),(b,d); a proposal that would create a self loop or an edge already
    present is rejected (the attempt still counts). Every node keeps its degree exactly; the
    result is symmetric, weight 1, without self loops or multi-edges. The same input and seed
    give the same graph. Ten times |E| is an operational budget, not proof of uniform mixing.
    """
    n, u0, v0 = _simple_pairs(adjacency_undirected)
    m = len(u0)
    attempts = int(attempts_factor) * m if m >= 2 else 0
    rng = np.random.default_rng(seed)
    accepted = 0
    us, vs = u0.tolist(), v0.tolist()
    if attempts:
        present = set((u0 * n + v0).tolist())
        first = rng.integers(0, m, size=attempts).tolist()
        second = rng.integers(0, m - 1, size=attempts).tolist()  # shifted below to differ from `first`
        coins = rng.integers(0, 2, size=attempts).tolist()
        for i, j, coin in zip(first, second, coins):
            if j >= i:
                j += 1
            a, b, c, d = us[i], vs[i], us[j], vs[j]
            if coin:
                c, d = d, c
            # proposal: (a, d) and (c, b)
            if a == d or c == b:
                continue
            k1 = a * n + d if a < d else d * n + a
            k2 = c * n + b if c < b else b * n + c
            if k1 == k2 or k1 in present or k2 in present:
                continue
            present.discard(a * n + b if a < b else b * n + a)
            present.discard(c * n + d if c < d else d * n + c)
            present.add(k1)
            present.add(k2)
            us[i], vs[i] = (a, d) if a < d else (d, a)
            us[j], vs[j] = (c, b) if c < b else (b, c)
            accepted += 1
    u1, v1 = np.asarray(us, dtype=np.int64), np.asarray(vs, dtype=np.int64)
    before, after = _symmetric(n, u0, v0), _symmetric(n, u1, v1)
    retained = float(np.isin(u0 * n + v0, u1 * n + v1).mean()) if m else 1.0
    cb, lb = _components(before)
    ca, la = _components(after)
    report = RewireReport(int(seed), n, m, attempts, accepted, retained, cb, ca, lb, la)
    return after, report


def empty_graph(n: int) -> sp.csr_matrix:
    """n nodes, no edges: every node dangles, so p == s and the text ranking is reproduced."""
    import scipy.sparse as sp
    return sp.csr_matrix((int(n), int(n)), dtype=np.float64)


def stored_direction(graph: Graph) -> sp.csr_matrix:
    """The directed adjacency as stored: pairs u -> v (u != v, parallel edges merged), weight 1.

    Weight 1 matches Carrier's unweighted walk; the row-normalised walk then follows stored
    direction only, and nodes without out-links dangle (their mass returns to the seeds).
    """
    import scipy.sparse as sp
    d = graph.directed(weighted=False).tocoo()
    keep = d.row != d.col
    m = sp.csr_matrix((np.ones(int(keep.sum())), (d.row[keep], d.col[keep])), shape=d.shape)
    m.sort_indices()
    return m


def degree_scores(adjacency: sp.spmatrix, text_scores: np.ndarray | None = None) -> np.ndarray:
    """Carrier's "degree only" control: every node scored by its undirected degree (distinct
    neighbours, self loops ignored), regardless of the query.

    `text_scores` is accepted only so the control has the same call shape as the others; its
    values are ignored (only its length is checked). Isolated nodes score 0 and so are never
    ranked under positive-only ranking.
    """
    n, u, v = _simple_pairs(adjacency)
    if text_scores is not None and len(text_scores) != n:
        raise InputError(f"controls: {len(text_scores)} text scores for {n} nodes")
    return (np.bincount(u, minlength=n) + np.bincount(v, minlength=n)).astype(np.float64)
