"""The relation lane: `methods.relation.relation_rank` as `Hit`s with their evidence, and its trace rows.

Ranking, seeds, anchors and cues live in `sidelight.methods.relation` (the lab ranks the same
function as the `relation` method). Here each hit becomes a `Hit` whose evidence holds what a
reader needs to see why it is there: the seed its credited path starts from, `is_seed`, the edge
path (with each edge's context sentence when the corpus kept one), the score parts, and
`links_to_seed` when the hit was reached backwards (it links to the note the question names).
"""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from ..graph.relation import trace_hits
from ..methods.relation import SEED_RULE, RelationRanking, relation_rank, relation_seeds
from ..results import Hit

if TYPE_CHECKING:
    from ..index import Index

__all__ = ["SEED_RULE", "relation_hits", "relation_params", "relation_rank", "relation_seeds",
           "trace_rows"]


def relation_hits(index: "Index", ranking: RelationRanking) -> list[Hit]:
    """Relation hits as `Hit`s: score = the mode's score, with their seed, is_seed, edge path and score parts."""
    ids, recs, edges = index.ids, index.corpus.records, index.corpus.edges
    out = []
    for h, parts in zip(ranking.hits, ranking.parts):
        path = []
        for e in h.path:
            step = {"edge_id": e.edge_id, "source": ids[e.source], "target": ids[e.target], "type": e.type,
                    "weight": e.weight}
            if edges[e.edge_id].context:
                step["context"] = edges[e.edge_id].context
            path.append(step)
        # `activation` is the internal graph hit's name for the score the ranking mode gave it
        out.append(Hit(ids[h.node], h.rank, h.activation, recs[h.node].title,
                       {"links_to_seed": True} if h.backward else {}, seed=ids[h.seed],
                       is_seed=h.is_seed, path=tuple(path), parts=parts))
    return out


def relation_params(index: "Index", ranking: RelationRanking, limit: int) -> dict[str, Any]:
    """What the lane reports besides its hits: parameters, the seeds and why each was used, the cue."""
    p = ranking.params
    out = {"limit": limit, **{k: p[k] for k in ("rank", "n_seeds", "hops", "decay")},
           "dense_seeds": p["dense_seeds"], "seed_rule": SEED_RULE,
           "seeds": [index.ids[a.position] for a in ranking.anchors],
           "anchors": [{"id": index.ids[a.position], "why": a.why, **({"name": a.name} if a.name else {}),
                        **({"cue": a.cue} if a.cue else {})} for a in ranking.anchors],
           "weights": "base" if ranking.weights is None else "base+overlay"}
    if p["rank"] == "query-aware":
        out.update({"cue": ranking.cue, "residual": ranking.residual,
                    **{k: p[k] for k in ("max_anchors", "hop_weight", "type_weight", "context_weight",
                                         "text_weight", "dense_weight", "profile", "hub_damping", "direction",
                                         "name_weight", "agree_weight", "kind_weight", "names", "inward")},
                    **({"backward_from": p["backward_from"]} if "backward_from" in p else {})})
    return out


def trace_rows(index: "Index", ranking: RelationRanking) -> list[dict[str, Any]]:
    """Relation hits as `StateStore.new_trace` stores them (credited paths with base weights)."""
    return trace_hits(ranking.hits, index.ids, index.graph)
