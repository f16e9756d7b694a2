"""`search_channels`: independent lanes for one query, side by side, never fused (NGR dual-lane contract).

The envelope holds the query, one result per lane (lexical, relation, and dense when the index
has vectors), `agreement_node_ids` (ids present in at least two lanes, ascending; every lane
keeps its own copy, rank and score) and `descriptions` written for an LLM reader. There is no
cross-lane score, no combined list and no winner: scores compare only within a lane.

* lexical: BM25 alone (exactly the `bm25` method); calls no dense or graph code; no paths.
* dense: cosine alone (exactly the `dense` method); no paths.
* relation: see `sidelight.lanes.relation` (entry ranking picks seeds only; each hit has its path).

Every lane stores its own trace (`StateStore.new_trace`: query, channel, hits, credited paths,
params, time) and returns its trace id. Feedback (`record_success`) is attributed by the trace id
alone: a relation trace reinforces exactly the credited path of the named hit; a lexical or dense
trace records the success and changes no edge. Searching never changes a weight.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..feedback.state import FeedbackResult
from ..results import Hit
from ..structures.ranking import top_k
from ..methods import check_params
from .relation import relation_hits, relation_params, relation_rank, trace_rows

if TYPE_CHECKING:
    from ..index import Index

DESCRIPTIONS = {
    "lexical": ("Lexical lane (BM25 only): records whose name or text explicitly matches the query words. "
                "Best for direct lookups of a named thing. Scores are BM25 and compare only within this lane."),
    "relation": ("Relation lane (graph edges only): only records linked through one or more stored edges to "
                 "the records the query names (and its top lexical/dense matches). The score ranks what the "
                 "edges reached and compares only within this lane; its parts are shown with each hit: graph "
                 "(activation along the edges), hop, type (reached along the edge types the question's wording "
                 "asks for), context (the linking sentence holds the rest of the question), text (BM25 of the "
                 "record against the rest of the question) and dense (its cosine to the question). With "
                 "rank=activation the score is graph activation alone. Every hit shows the edge path that "
                 "reached it; an edge says the records are linked, not that one is equivalent to, implies or "
                 "confirms the other. is_seed marks a hit that was also a starting record."),
    "dense": ("Dense lane (embedding cosine only): records whose text is close in meaning to the query even "
              "without shared words. Scores are cosines and compare only within this lane."),
    "agreement_node_ids": ("Ids that appear in more than one lane. Agreement is not a combined score: each lane "
                           "keeps its own rank and score, and no lane is preferred."),
    "feedback": ("Inspect the lanes yourself and decide which records are useful; being retrieved does not mean "
                 "a record was selected, validated or used. When you actually use a record, report back the "
                 "trace_id of the lane you took it from together with its node id (record_success / "
                 "`sidelight feedback INDEX TRACE NODE`). Only a relation-lane success strengthens that hit's "
                 "edge path; a lexical or dense success is recorded without changing any edge. A node can only "
                 "be credited through a trace that returned it. Searching alone never changes any weight."),
}


@dataclass(frozen=True)
class LaneResult:
    """One lane's answer: its own trace id, its channel, its hits (best first) and its parameters."""

    trace_id: str
    channel: str
    hits: list[Hit]
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"trace_id": self.trace_id, "channel": self.channel, "hits": [h.to_dict() for h in self.hits],
                "params": self.params}

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]


@dataclass(frozen=True)
class ChannelsResult:
    """The dual-lane envelope (JSON via `to_dict` / `to_json`)."""

    query: str
    lexical: LaneResult
    relation: LaneResult
    agreement_node_ids: list[str]
    descriptions: dict
    dense: LaneResult | None = None
    coverage: tuple[int, int] | None = None  # a sharded index's (shards that answered, shards)

    def lanes(self) -> list[LaneResult]:
        return [lane for lane in (self.lexical, self.dense, self.relation) if lane is not None]

    def to_dict(self) -> dict:
        out = envelope(self.query, self.lexical, self.dense, self.relation, self.descriptions)
        if self.coverage is not None:
            out["partial"], out["coverage"] = self.coverage[0] < self.coverage[1], "%d/%d" % self.coverage
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)


def agreement(lanes: list[LaneResult | None]) -> list[str]:
    """Ids in at least two lanes, ascending (each lane keeps its own rank and score)."""
    counts: dict[str, int] = {}
    for lane in lanes:
        for i in set(lane.ids if lane is not None else ()):
            counts[i] = counts.get(i, 0) + 1
    return sorted(i for i, c in counts.items() if c >= 2)


def envelope(query: str, lexical: LaneResult, dense: LaneResult | None, relation: LaneResult | None,
             descriptions: dict) -> dict:
    """The dual-lane envelope every interface returns (the Python API, the CLI, HTTP and MCP).

    `dense` is left out when there is no dense lane; `relation` is None when it was cut.
    """
    out: dict = {"query": query, "lexical": lexical.to_dict()}
    if dense is not None:
        out["dense"] = dense.to_dict()
    out["relation"] = relation.to_dict() if relation is not None else None
    out["agreement_node_ids"] = agreement([lexical, dense, relation])
    out["descriptions"] = dict(descriptions)
    return out


def _plain_lane(index: "Index", query: str, channel: str, ranking, params: dict) -> LaneResult:
    hits = index.hits(ranking)
    rows = [{"node_id": h.id, "rank": h.rank, "score": h.score} for h in hits]
    return LaneResult(index.state.new_trace(query, channel, rows, params), channel, hits, params)


def lexical_lane(index: "Index", query: str, limit: int = 10) -> LaneResult:
    """BM25 alone (the `bm25` method, ties by ascending id), stored as a lexical trace."""
    ranking = top_k(index.lexical.bm25_scores(query), limit, index.id_rank)
    params = {"method": "bm25", "limit": limit, "bm25": index.lexical.params.to_dict()}
    return _plain_lane(index, query, "lexical", ranking, params)


def dense_lane(index: "Index", query: str, limit: int = 10,
               scores: np.ndarray | None = None) -> LaneResult:
    """Cosine alone (the `dense` method), stored as a dense trace."""
    from ..methods.dense import require_dense

    store = require_dense(index)
    cos = store.scores(query) if scores is None else scores
    params = {"method": "dense", "limit": limit, "model": store.identity.get("name", store.spec)}
    return _plain_lane(index, query, "dense", top_k(cos, limit, index.id_rank, positive_only=False), params)


def relation_lane(index: "Index", query: str, limit: int = 10, dense_scores: np.ndarray | None = None,
                  dense: bool = True, **params) -> LaneResult:
    """Records reached through graph edges (see `sidelight.methods.relation`), stored as a relation trace.

    `params` are the `relation` method's (`rank`, `n_seeds`, `hops`, `decay`, `dense_seeds`, the
    query-aware weights), checked against its declaration; `dense=False` keeps vectors out of it."""
    ranking = relation_rank(index, query, limit, params, dense_scores, dense)
    params = relation_params(index, ranking, limit)
    trace_id = index.state.new_trace(query, "relation", trace_rows(index, ranking), params)
    return LaneResult(trace_id, "relation", relation_hits(index, ranking), params)


def search_channels(index: "Index", query: str, limit: int = 10, dense: bool | None = None,
                    **relation) -> ChannelsResult:
    """Every lane for `query`, each with `limit` hits and its own trace; nothing is fused.

    `dense`: None (default) adds the dense lane, and dense relation seeds, when the index has
    vectors; False leaves dense out entirely; True requires vectors. `relation`: the relation
    lane's parameters (`rank="activation"`, `hops=1`, ...; see `sidelight.methods.relation`).
    """
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InputError(f"limit must be an integer >= 1, got {limit!r}")
    relation = check_params("relation", relation)  # before any lane stores a trace
    use_dense = index.dense is not None if dense is None else bool(dense)
    lexical = lexical_lane(index, query, limit)
    dense_result, cos = None, None
    if use_dense:
        from ..methods.dense import require_dense

        cos = require_dense(index).scores(query)
        dense_result = dense_lane(index, query, limit, cos)
    relation = relation_lane(index, query, limit, cos, use_dense, **relation)
    descriptions = {k: v for k, v in DESCRIPTIONS.items() if k != "dense" or use_dense}
    return ChannelsResult(query, lexical, relation, agreement([lexical, dense_result, relation]), descriptions,
                          dense_result)


def record_success(index: "Index", trace_id: str, node_id: str) -> FeedbackResult:
    """Record that `node_id`, returned by trace `trace_id`, was actually used (see `StateStore.record_success`).

    Relation trace: exactly that hit's credited path is strengthened. Lexical/dense trace: recorded,
    no edge changes. Unknown trace, or a node that trace did not return: InputError. Idempotent.
    """
    return index.state.record_success(trace_id, node_id)
