"""The built-in lanes, registered in this order: lexical (BM25 alone), dense (cosine alone), relation (edges alone).

Each stores its own trace (`StateStore.new_trace`: query, channel, hits, credited paths, params)
and answers with `Results` carrying that trace id. The dense lane offers its cosines to the lanes
after it ("dense_scores"): the relation lane seeds from them when they arrived in time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..methods import check_params
from ..results import Results
from ..structures.ranking import Ranking, top_k
from .budget import LEXICAL_ONLY, Budget
from .registry import GRAPH, TERMS, VECTORS, BaseLane, LaneContext, register
from .relation import relation_hits, relation_params, relation_rank, trace_rows

LEXICAL = ("Lexical lane (BM25 only): records whose name or text explicitly matches the query words. "
           "Best for direct lookups of a named thing. Scores are BM25 and compare only within this lane.")
DENSE = ("Dense lane (embedding cosine only; when the index has vectors and the model is loaded): records whose "
         "text is close in meaning to the query even without shared words. Scores are cosines and compare only "
         "within this lane.")
RELATION = ("Relation lane (graph edges only): only records linked through one or more stored edges to "
            "the records the query names (and its top lexical/dense matches). The score ranks what the "
            "edges reached and compares only within this lane; its parts are shown with each hit: graph "
            "(activation along the edges), hop, type (reached along the edge types the question's wording "
            "asks for), context (the linking sentence holds the rest of the question), text (BM25 of the "
            "record against the rest of the question) and dense (its cosine to the question). With "
            "rank=activation the score is graph activation alone. Every hit shows the edge path that "
            "reached it; an edge says the records are linked, not that one is equivalent to, implies or "
            "confirms the other. is_seed marks a hit that was also a starting record. Its parameters are the "
            "`relation` method's (relation={\"rank\": \"activation\"}, hops, n_seeds, ...).")


def plain_answer(context: LaneContext, query: str, channel: str, ranking: Ranking,
                 params: dict[str, Any]) -> Results:
    """A ranking as a lane's `Results`, its hits stored as a trace of `channel` (no paths)."""
    index = context.index
    hits = index.hits(ranking)
    rows = [{"node_id": h.id, "rank": h.rank, "score": h.score} for h in hits]
    return Results(hits, query, channel, trace_id=index.state.new_trace(query, channel, rows, params), params=params)


@dataclass(frozen=True)
class LexicalLane(BaseLane):
    """BM25 alone (exactly the `bm25` method, ties by ascending id); calls no dense or graph code."""

    def run(self, context: LaneContext, query: str, limit: int, budget: Budget | None) -> Results:
        index = context.index
        ranking = top_k(index.lexical.bm25_scores(query), limit, index.id_rank)
        params = {"method": "bm25", "limit": limit, "bm25": index.lexical.params.to_dict()}
        return plain_answer(context, query, self.name, ranking, params)


@dataclass(frozen=True)
class DenseLane(BaseLane):
    """Cosine alone (exactly the `dense` method); offers its cosines to later lanes as "dense_scores"."""

    def run(self, context: LaneContext, query: str, limit: int, budget: Budget | None) -> Results:
        from ..methods.dense import require_dense

        index = context.index
        store = require_dense(index)
        cos = store.scores(query)
        context.offer("dense_scores", cos)
        params = {"method": "dense", "limit": limit, "model": store.identity.get("name", store.spec)}
        return plain_answer(context, query, self.name, top_k(cos, limit, index.id_rank, positive_only=False), params)


@dataclass(frozen=True)
class RelationLane(BaseLane):
    """Records reached through graph edges (`sidelight.methods.relation`), each hit with its edge path;
    seeds from the dense lane's cosines when they arrived, else from BM25 alone."""

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return check_params("relation", dict(params))

    def run(self, context: LaneContext, query: str, limit: int, budget: Budget | None) -> Results:
        index = context.index
        cos = context.shared.get("dense_scores")
        ranking = relation_rank(index, query, limit, dict(context.params), cos, cos is not None)
        params = relation_params(index, ranking, limit)
        trace_id = index.state.new_trace(query, self.name, trace_rows(index, ranking), params)
        return Results(relation_hits(index, ranking), query, self.name, trace_id=trace_id, params=params)


LEXICAL_LANE = register(LexicalLane("lexical", LEXICAL, frozenset({TERMS}), floor=True))
DENSE_LANE = register(DenseLane("dense", DENSE, frozenset({VECTORS}), optional=True, fallback=LEXICAL_ONLY))
RELATION_LANE = register(RelationLane("relation", RELATION, frozenset({GRAPH})))
