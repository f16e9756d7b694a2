"""The relation lane (NGR): records linked by graph edges to the query's entry records.

Seed rule (fixed, documented): the top `n_seeds` (default 5) POSITIVE BM25 hits, ties by
ascending id, followed by the top `n_seeds` positive dense cosines that are not already seeds
(only when the index holds dense vectors and `use_dense` is on). Entry scores choose the seeds
and nothing else: every seed starts with activation 1.0 and no entry score enters a relation
score or rank. No positive entry hit, no seed, an empty lane.

From the seeds, `sidelight.graph.relation.spread` carries activation along DIRECTED out-edges
for `hops` (default 2) hops with local competition and `decay` (default 0.5) per hop, over the
CURRENT effective weights (base + the learned overlay in `index.state`, clipped as in
`StateStore.overlay_for`). Searching never writes the overlay.

Returned: only nodes reached through >= 1 edge with positive activation, ranked by raw activation
desc then id asc. A seed that ANOTHER seed reaches through edges is returned too (NGR: "a
positive graph node reached through at least one edge"), flagged `is_seed`; a seed's own
activation coming back to it never counts. Every hit carries its credited edge path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..graph.relation import RelationHit, edge_shares, spread, trace_hits
from ..results import Hit
from ..structures.ranking import top_k

if TYPE_CHECKING:
    from ..index import Index

RELATION_DEFAULTS = dict(n_seeds=5, hops=2, decay=0.5)
SEED_RULE = ("top n_seeds positive BM25 hits (ties: ascending id), then the top n_seeds positive dense cosines "
             "not already seeds (when the index has dense vectors); entry scores choose seeds only")


def relation_seeds(index: "Index", query: str, n_seeds: int = 5, dense_scores: np.ndarray | None = None,
                   use_dense: bool = True) -> list[int]:
    """Seed positions by the seed rule above; `dense_scores` reuses cosines already computed."""
    if n_seeds < 1:
        raise InputError(f"relation: n_seeds must be >= 1, got {n_seeds}")
    seeds = top_k(index.lexical.bm25_scores(query), n_seeds, index.id_rank).positions.tolist()
    if use_dense and (dense_scores is not None or index.dense is not None):
        if dense_scores is None:
            dense_scores = index.dense.scores(query)
        for p in top_k(np.asarray(dense_scores, dtype=np.float64), n_seeds, index.id_rank).positions.tolist():
            if p not in seeds:
                seeds.append(p)
    return seeds


def effective_weights(index: "Index") -> tuple[np.ndarray | None, np.ndarray]:
    """(per-slot weights, or None for the base weights; their edge shares) with the current overlay.

    The overlay is read on every call; weights and shares are rebuilt only when it changed.
    """
    rows = index.state.overlay()
    key = tuple(sorted(rows.items()))

    def build() -> tuple[np.ndarray | None, np.ndarray]:
        w = index.state.overlay_for(index.graph, index.ids) if rows else None
        return w, edge_shares(index.graph, index.graph.weights if w is None else w)

    return index.memo("relation-weights", key, build)


def relation_run(index: "Index", query: str, limit: int | None = 10, n_seeds: int = 5, hops: int = 2,
                 decay: float = 0.5, dense_scores: np.ndarray | None = None,
                 use_dense: bool = True) -> tuple[list[RelationHit], list[int], np.ndarray | None]:
    """(hits, seed positions, weights used or None for base) without storing a trace."""
    seeds = relation_seeds(index, query, n_seeds, dense_scores, use_dense)
    weights, share = effective_weights(index)
    if not seeds:
        return [], seeds, weights
    hits = spread(index.graph, seeds, hops=hops, decay=decay, weights=weights, tie_rank=index.id_rank, limit=limit,
                  share=share)
    return hits, seeds, weights


def relation_hits(index: "Index", hits: list[RelationHit]) -> list[Hit]:
    """Relation hits as `Hit`s: score = raw activation; evidence = seed, is_seed and the edge path."""
    ids, recs = index.ids, index.corpus.records
    return [Hit(ids[h.node], h.rank, h.activation, recs[h.node].title, {
        "seed": ids[h.seed], "is_seed": h.is_seed,
        "path": [{"edge_id": e.edge_id, "source": ids[e.source], "target": ids[e.target], "type": e.type,
                  "weight": e.weight} for e in h.path],
    }) for h in hits]


def trace_rows(index: "Index", hits: list[RelationHit]) -> list[dict]:
    """Relation hits as `StateStore.new_trace` stores them (credited paths with base weights)."""
    return trace_hits(hits, index.ids, index.graph)
