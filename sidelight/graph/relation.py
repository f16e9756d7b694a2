"""The NGR relation lane: anchored spreading activation with local competition.

Seeds are node positions chosen from an entry ranking; entry scores choose seeds only and never
enter relation scores (each seed starts with activation 1.0). From each seed, activation spreads
along DIRECTED out-edges for at most `hops` hops. At every node the outgoing activation is shared
among its out-edges in proportion to their effective weights (local competition) and multiplied
by `decay` per hop:

    a_h[v] = sum over edges u->v of  a_{h-1}[u] * decay * w(u->v) / sum_{u->x} w(u->x)

(walk semantics: a node may be passed through more than once). A node's raw activation is the
sum over seeds and hops h >= 1 of what arrives at it, excluding activation that a seed sends back
to itself: no zero-hop hits, and a seed appears only if ANOTHER seed reaches it through edges
(`RelationHit.is_seed` marks that case so a caller can drop it). Self-loop edges and zero-weight
edges carry nothing and take no share. Hits are ranked by raw activation desc, then tie rank
(default node position) asc.

Each hit carries its credited path: the edges of its single strongest contribution, i.e. the
max-product walk from any seed (ties: fewer hops, then lower seed tie rank, then lower CSR slots
along the way, decided hop by hop). That path, and nothing else, is what feedback may reinforce.

Backward reach (`activate_in`): the same spreading over the reversed graph, i.e. from a seed to the
records that LINK TO it ("which notes link to X"). A record's share of what a seed sends back is
w(r->seed) / (sum of the seed's in-weights): inverse in-degree spreading. Its credited path is
given in the stored direction (hit -> ... -> seed), so feedback reinforces edges that exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from .store import EdgeRef, Graph


@dataclass(frozen=True)
class RelationHit:
    """A node reached through >= 1 edge: raw activation, rank (1-based), credited edge path."""

    node: int
    activation: float
    rank: int
    path: tuple[EdgeRef, ...]
    is_seed: bool = False
    backward: bool = False  # reached against the edges' direction: the path runs hit -> ... -> seed

    @property
    def seed(self) -> int:
        """The seed the credited path starts from (ends at, for a backward hit)."""
        return self.path[-1].target if self.backward else self.path[0].source

    @property
    def hops(self) -> int:
        return len(self.path)


@dataclass
class _Layer:
    nodes: np.ndarray      # distinct nodes reached at this hop (ascending)
    act: np.ndarray        # summed activation per node
    best: np.ndarray       # strongest single-walk contribution per node
    back_slot: np.ndarray  # CSR slot of the last edge of that walk
    back_idx: np.ndarray   # index of its predecessor in the previous layer


def _effective(graph: Graph, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return graph.weights
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (graph.n_edges,):
        raise InputError(f"relation: {w.shape} weights for {graph.n_edges} edges")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InputError("relation: effective edge weights must be finite and >= 0")
    return w


def edge_shares(graph: Graph, weights: np.ndarray | None = None) -> np.ndarray:
    """Per CSR slot: w / (sum of the source's out-weights), 0 for self loops and zero weights."""
    w = _effective(graph, weights).copy()
    w[graph.sources == graph.indices] = 0.0
    totals = np.bincount(graph.sources, weights=w, minlength=graph.n_nodes)
    denom = totals[graph.sources]
    out = np.zeros_like(w)
    np.divide(w, denom, out=out, where=denom > 0)
    return out


def _expand(graph: Graph, share: np.ndarray, prev: _Layer, decay: float) -> _Layer | None:
    starts, ends = graph.indptr[prev.nodes], graph.indptr[prev.nodes + 1]
    lens = ends - starts
    if not lens.sum():
        return None
    owner = np.repeat(np.arange(len(prev.nodes)), lens)
    slots = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())
    f = share[slots] * decay
    keep = f > 0
    owner, slots, f = owner[keep], slots[keep], f[keep]
    if not len(slots):
        return None
    tgt = graph.indices[slots]
    act = prev.act[owner] * f
    best = prev.best[owner] * f
    nodes, inv = np.unique(tgt, return_inverse=True)
    summed = np.bincount(inv, weights=act, minlength=len(nodes))
    order = np.lexsort((slots, -best, inv))  # per target: strongest walk first, then lower slot
    first = order[np.r_[True, inv[order][1:] != inv[order][:-1]]]
    return _Layer(nodes, summed, best[first], slots[first], owner[first])


@dataclass
class Activation:
    """Every node reached through >= 1 edge with positive activation (ascending position), with
    the raw activation, whether it is a seed, and the credited path of each (built on demand)."""

    nodes: np.ndarray
    activation: np.ndarray
    is_seed: np.ndarray
    last_slot: np.ndarray  # CSR slot of the credited path's last edge (the edge into the node)
    hops: np.ndarray  # edges on the credited path
    _graph: Graph
    _weights: np.ndarray
    _runs: list[list[_Layer]]
    _where: np.ndarray  # per node: (run, hop, index in that layer) of its credited walk
    _forward: tuple[Graph, np.ndarray] | None = None  # backward reach: the stored graph and its weights

    def __len__(self) -> int:
        return len(self.nodes)

    def path(self, j: int) -> tuple[EdgeRef, ...]:
        """The credited path of the j-th node (max-product walk; see the module docstring)."""
        run, hop, i = (int(x) for x in self._where[j])
        layers, slots = self._runs[run], []
        for lh in range(hop, 0, -1):
            slots.append(int(layers[lh].back_slot[i]))
            i = int(layers[lh].back_idx[i])
        if self._forward is not None:  # reversed-graph slots -> the stored edges, hit -> ... -> seed
            fwd, w = self._forward
            return tuple(fwd.edge_ref(int(self._graph.edge_ids[k]), w) for k in slots)
        return tuple(self._graph.edge_ref(k, self._weights) for k in reversed(slots))

    def hit(self, j: int, rank: int, score: float | None = None) -> RelationHit:
        """The j-th node as a `RelationHit` at `rank` (score: its raw activation unless given)."""
        a = float(self.activation[j]) if score is None else float(score)
        return RelationHit(int(self.nodes[j]), a, rank, self.path(j), bool(self.is_seed[j]),
                           self._forward is not None)


def activate(graph: Graph, seeds: list[int], hops: int = 2, decay: float = 0.5, weights: np.ndarray | None = None,
             tie_rank: np.ndarray | None = None, share: np.ndarray | None = None) -> Activation:
    """Anchored spreading activation from `seeds` (node positions): every reached node, unranked.

    `weights` (one per CSR slot) replaces the base weights, e.g. base + learned overlay delta;
    `share` is `edge_shares(graph, weights)` when the caller keeps it (computed here otherwise),
    or any per-slot share vector (a type-masked one, say). Duplicate seeds count once. A seed
    without usable out-edges contributes nothing.
    """
    if hops < 1:
        raise InputError(f"relation: hops must be >= 1, got {hops}")
    if not 0.0 < decay <= 1.0:
        raise InputError(f"relation: decay must lie in (0, 1], got {decay}")
    n = graph.n_nodes
    uniq: list[int] = []
    for s in seeds:
        s = int(s)
        if not 0 <= s < n:
            raise InputError(f"relation: seed {s} outside 0..{n - 1}")
        if s not in uniq:
            uniq.append(s)
    w = _effective(graph, weights)
    share = edge_shares(graph, w) if share is None else share
    tr = np.arange(n) if tie_rank is None else np.asarray(tie_rank)
    runs: list[list[_Layer]] = []
    parts = []  # per (seed, hop): nodes, activation, best contribution, hop, seed tie rank, run, index, last slot
    for s in uniq:
        layers = [_Layer(np.array([s]), np.ones(1), np.ones(1), np.full(1, -1), np.full(1, -1))]
        for h in range(1, hops + 1):
            nxt = _expand(graph, share, layers[-1], decay)
            if nxt is None:
                break
            layers.append(nxt)
            idx = np.flatnonzero(nxt.nodes != s)  # a seed's own activation coming back is not a relation hit
            k = len(idx)
            parts.append((nxt.nodes[idx], nxt.act[idx], nxt.best[idx], np.full(k, h), np.full(k, tr[s]),
                          np.full(k, len(runs)), idx, nxt.back_slot[idx]))
        runs.append(layers)
    empty = np.zeros(0, dtype=np.int64)
    if not parts:
        return Activation(empty, np.zeros(0), np.zeros(0, dtype=bool), empty, empty, graph, w, runs,
                          np.zeros((0, 3), int))
    node, act, best, hop, seed_tr, run, idx, slot = (np.concatenate(c) for c in zip(*parts))
    nodes, inv = np.unique(node, return_inverse=True)
    total = np.bincount(inv, weights=act, minlength=len(nodes))
    order = np.lexsort((seed_tr, hop, -best, inv))  # per node: strongest, then fewer hops, then seed
    first = order[np.r_[True, inv[order][1:] != inv[order][:-1]]]
    pos = total > 0
    nodes, total, first = nodes[pos], total[pos], first[pos]
    return Activation(nodes, total, np.isin(nodes, uniq), slot[first], hop[first], graph, w, runs,
                      np.stack([run[first], hop[first], idx[first]], axis=1))


def reversed_graph(graph: Graph) -> Graph:
    """The graph with every edge turned around; its `edge_ids` are the stored graph's CSR slots."""
    return Graph.from_arrays(graph.n_nodes, graph.indices, graph.sources, graph.weights, graph.types,
                             graph.type_names)


def activate_in(graph: Graph, rev: Graph, seeds: list[int], hops: int = 2, decay: float = 0.5,
                weights: np.ndarray | None = None, tie_rank: np.ndarray | None = None,
                share: np.ndarray | None = None) -> Activation:
    """Backward reach from `seeds`: `activate` over `rev = reversed_graph(graph)`; `weights` are the
    stored graph's per-slot weights, `share` (optional) the reversed graph's shares. `last_slot`
    and paths name the stored graph's slots (see the module docstring)."""
    w = _effective(graph, weights)
    a = activate(rev, seeds, hops, decay, w[rev.edge_ids], tie_rank, share)
    a.last_slot = rev.edge_ids[a.last_slot]
    a._forward = (graph, w)
    return a


@dataclass
class Reach:
    """Forward and backward activations as one candidate set: per node the summed activation, and
    the credited path of the side that gave it more (forward on ties)."""

    nodes: np.ndarray
    activation: np.ndarray
    is_seed: np.ndarray
    last_slot: np.ndarray
    hops: np.ndarray
    backward: np.ndarray
    _parts: tuple[Activation, Activation]
    _index: np.ndarray  # per node: its index in the side that credits it

    def __len__(self) -> int:
        return len(self.nodes)

    def hit(self, j: int, rank: int, score: float | None = None) -> RelationHit:
        side = self._parts[int(self.backward[j])]
        a = float(self.activation[j]) if score is None else float(score)
        return replace(side.hit(int(self._index[j]), rank), activation=a, is_seed=bool(self.is_seed[j]))


def merge(fwd: Activation, bwd: Activation, scale: float = 1.0) -> Reach:
    """`fwd` and `scale` x `bwd` over the union of their nodes (see `Reach`)."""
    nodes = np.union1d(fwd.nodes, bwd.nodes)
    fi, bi = np.searchsorted(nodes, fwd.nodes), np.searchsorted(nodes, bwd.nodes)
    fa, ba = np.zeros(len(nodes)), np.zeros(len(nodes))
    fa[fi], ba[bi] = fwd.activation, scale * bwd.activation
    back = ba > fa
    idx = np.zeros(len(nodes), dtype=np.int64)
    idx[fi] = np.arange(len(fwd.nodes))
    idx[bi[back[bi]]] = np.flatnonzero(back[bi])
    last, hops, seed = np.zeros(len(nodes), dtype=np.int64), np.zeros(len(nodes), dtype=np.int64), np.zeros(len(nodes), bool)
    last[fi], hops[fi] = fwd.last_slot, fwd.hops
    last[bi[back[bi]]], hops[bi[back[bi]]] = bwd.last_slot[back[bi]], bwd.hops[back[bi]]
    seed[fi] |= fwd.is_seed
    seed[bi] |= bwd.is_seed
    return Reach(nodes, fa + ba, seed, last, hops, back, (fwd, bwd), idx)


def spread(graph: Graph, seeds: list[int], hops: int = 2, decay: float = 0.5, weights: np.ndarray | None = None,
           tie_rank: np.ndarray | None = None, limit: int | None = None,
           share: np.ndarray | None = None) -> list[RelationHit]:
    """NGR's ranking of `activate(...)`: raw activation desc, then tie rank asc; see the module docstring."""
    a = activate(graph, seeds, hops, decay, weights, tie_rank, share)
    tr = np.arange(graph.n_nodes) if tie_rank is None else np.asarray(tie_rank)
    ranked = np.lexsort((tr[a.nodes], -a.activation))
    if limit is not None:
        ranked = ranked[:limit]
    return [a.hit(j, r) for r, j in enumerate(ranked.tolist(), start=1)]


def trace_hits(hits: list[RelationHit], ids: Sequence[str] | np.ndarray, graph: Graph) -> list[dict]:
    """Relation hits in the form `StateStore.new_trace` stores: record ids, rank, raw activation and
    the credited path as edge keys (source id, target id, type) with the weight that was used and
    the base weight (the reinforcement rule needs the base)."""
    out = []
    for h in hits:
        out.append({
            "node_id": ids[h.node],
            "rank": h.rank,
            "score": h.activation,
            "path": [{"source": ids[e.source], "target": ids[e.target], "type": e.type,
                      "weight": e.weight, "base_weight": float(graph.weights[e.slot])} for e in h.path],
        })
    return out
