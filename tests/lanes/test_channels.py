"""NGR dual-lane contract (`search_channels`, traces, feedback): development gates 1, 3 and 5-12.

Hand-built graph with known answers (ids = positions' names):

    a -link 1-> b -link 1-> f        query "alpha"   seeds [a]
    a -part 3-> c -link 1-> d        query "zeta"    seeds [f], f has no out-edge: empty relation lane
    d -link 1-> a    e -link 1-> a   query "epsilon" seeds [e]

"alpha", 2 hops, decay .5 (shares at a: b 1/4, c 3/4):
    c = .5*3/4 = .375 [a->c];  d = .375*.5 = .1875 [a->c, c->d];  b = .5*1/4 = .125 [a->b];
    f = .125*.5 = .0625 [a->b, b->f]
Plus FOLDOC (built once per module) for parity, paths and determinism across processes.

The known answers are NGR's pure activation ranking (`rank="activation"`, through `ngr`); the
gates that hold for any ranking (lane independence, no cross-lane score, trace provenance,
feedback isolation, determinism) run in both modes.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import InputError
from sidelight.graph import spread
from sidelight.index import Index
from sidelight.lanes import channels as ch
from sidelight.lanes.channels import ChannelsResult, record_success, search_channels
from sidelight.structures.dense import DenseStore
from sidelight.lanes.relation import relation_seeds
from sidelight.methods.relation import RANKS

FOLDOC_QUERIES = ["garbage collection", "object-oriented programming language", "virtual memory paging",
                  "compiler optimisation", "ethernet network protocol", "regular expression", "unix shell"]
FORBIDDEN = ("combined", "fused", "fusion", "final", "winner", "overall", "best")


def hand_corpus() -> Corpus:
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel"),
            Record("c", "Gamma shaft", "shaft rod"), Record("d", "Delta bolt", "bolt screw"),
            Record("e", "Epsilon nut", "nut fastener"), Record("f", "Zeta sink", "sink drain")]
    edges = [Edge("a", "b"), Edge("a", "c", "part", 3.0), Edge("c", "d"), Edge("d", "a"), Edge("e", "a"),
             Edge("b", "f")]
    return Corpus("hand", recs, edges)


@pytest.fixture
def hand():
    return Index.build(hand_corpus(), progress=False)


@pytest.fixture(scope="module")
def foldoc():
    from sidelight.corpus.foldoc import load_foldoc

    return Index.build(load_foldoc(), progress=False)


def ngr(index: Index, query: str, limit: int, **kw) -> ChannelsResult:
    """The lanes with NGR's pure activation ranking in the relation lane."""
    return search_channels(index, query, limit, rank="activation", **kw)


def summary(lane):
    return [(h["id"], h["rank"], round(h["score"], 12), [(e["source"], e["target"], e["type"]) for e in h["path"]])
            for h in lane.hits]


def all_keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from all_keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from all_keys(v)


def without_trace_ids(d: dict) -> dict:
    d = json.loads(json.dumps(d))
    for lane in ("lexical", "relation", "dense"):
        if lane in d:
            d[lane].pop("trace_id")
    return d


# ---- hand-built graph: the known answers -------------------------------------------------------
def test_known_answers_and_envelope_shape(hand):
    r = ngr(hand, "alpha", 10)
    assert isinstance(r, ChannelsResult)
    assert [(h["id"], h["rank"]) for h in r.lexical.hits] == [("a", 1)]
    assert summary(r.relation) == [("c", 1, 0.375, [("a", "c", "part")]),
                                   ("d", 2, 0.1875, [("a", "c", "part"), ("c", "d", "link")]),
                                   ("b", 3, 0.125, [("a", "b", "link")]),
                                   ("f", 4, 0.0625, [("a", "b", "link"), ("b", "f", "link")])]
    assert r.relation.params["seeds"] == ["a"]
    assert r.agreement_node_ids == []
    d = r.to_dict()
    assert set(d) == {"query", "lexical", "relation", "agreement_node_ids", "descriptions"}  # no dense lane here
    assert d["lexical"]["channel"] == "lexical" and d["relation"]["channel"] == "relation"
    assert all("path" not in h for h in d["lexical"]["hits"])
    assert set(d["lexical"]["hits"][0]) == {"id", "rank", "score", "title"}
    edge = d["relation"]["hits"][1]["path"][1]
    assert set(edge) == {"edge_id", "source", "target", "type", "weight"} and edge["edge_id"] == 2
    assert json.loads(r.to_json()) == d


def test_directional_negative_gives_an_empty_relation_lane(hand):
    r = ngr(hand, "zeta", 10)  # f has only an incoming edge
    assert [h["id"] for h in r.lexical.hits] == ["f"] and not r.relation.hits
    assert r.relation.params["seeds"] == ["f"]
    r = ngr(hand, "nothingmatches", 10)
    assert not r.lexical.hits and not r.relation.hits and r.relation.params["seeds"] == []


def test_seeds_reached_from_other_seeds_are_returned_and_flagged(hand):
    # "alpha epsilon": seeds a and e; e -> a makes a a relation hit (through an edge), flagged is_seed
    r = ngr(hand, "alpha epsilon", 10)
    hits = {h["id"]: h for h in r.relation.hits}
    assert hits["a"]["is_seed"] and [(e["source"], e["target"]) for e in hits["a"]["path"]] == [("e", "a")]
    assert not hits["c"]["is_seed"]
    assert r.agreement_node_ids == ["a"]
    assert all(h["path"] for h in r.relation.hits)


# ---- gate 1 / 3: each lane equals its isolated run ---------------------------------------------
def _check_parity(index: Index, query: str, limit: int) -> ChannelsResult:
    r = ngr(index, query, limit)
    iso = index.search(query, "bm25", k=limit)
    assert [(h["id"], h["rank"], h["score"], h["title"]) for h in r.lexical.hits] == \
        [(h.id, h.rank, h.score, h.title) for h in iso]
    seeds = [index.corpus.position[h.id] for h in index.search(query, "bm25", k=5)]
    graph_only = spread(index.graph, seeds, hops=2, decay=0.5, tie_rank=index.id_rank, limit=limit)
    assert [(h["id"], h["rank"], h["score"]) for h in r.relation.hits] == \
        [(index.ids[g.node], g.rank, g.activation) for g in graph_only]
    assert [[e["edge_id"] for e in h["path"]] for h in r.relation.hits] == \
        [[e.edge_id for e in g.path] for g in graph_only]
    return r


def test_lane_parity_hand(hand):
    for q in ["alpha", "epsilon", "alpha epsilon", "zeta", "gear bolt"]:
        _check_parity(hand, q, 10)
        _check_parity(hand, q, 2)


def test_lane_parity_and_paths_foldoc(foldoc):
    nonempty = 0
    for q in FOLDOC_QUERIES:
        r = _check_parity(foldoc, q, 20)
        nonempty += bool(r.relation.hits)
        seeds = set(r.relation.params["seeds"])
        edges = foldoc.corpus.edges
        for h in r.relation.hits:  # gate 5: a real, contiguous edge path from a seed, never zero hops
            path = h["path"]
            assert 1 <= len(path) <= 2
            assert path[0]["source"] in seeds and path[-1]["target"] == h["id"]
            assert all(a["target"] == b["source"] for a, b in zip(path, path[1:]))
            for e in path:
                stored = edges[e["edge_id"]]
                assert (stored.source, stored.target, stored.type, stored.weight) == \
                    (e["source"], e["target"], e["type"], e["weight"])
            assert h["score"] > 0
            assert h["is_seed"] == (h["id"] in seeds)
        scores = [h["score"] for h in r.relation.hits]
        assert scores == sorted(scores, reverse=True)
    assert nonempty == len(FOLDOC_QUERIES)


def test_lexical_lane_calls_no_dense_or_graph_code(hand, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the lexical lane touched dense or graph retrieval")

    import sidelight.graph.relation as grel
    import sidelight.graph.ppr as gppr
    import sidelight.lanes.relation as lrel
    import sidelight.methods.relation as mrel

    for mod, name in [(grel, "spread"), (grel, "activate"), (mrel, "activate"), (gppr, "ppr_vector"),
                      (gppr, "ppr_boost"), (DenseStore, "scores"), (mrel, "relation_rank"), (lrel, "relation_rank"),
                      (mrel, "_entry_seeds"), (mrel, "name_matcher")]:
        monkeypatch.setattr(mod, name, boom)
    lane = ch.run_lane(hand, "lexical", "alpha", 10)
    assert [h["id"] for h in lane.hits] == ["a"]


# ---- gate 6: no cross-lane score, list or winner ----------------------------------------------
@pytest.mark.parametrize("rank", RANKS)
def test_no_combined_score_list_or_winner(foldoc, hand, rank):
    for index, q in [(hand, "alpha epsilon"), (foldoc, "garbage collection")]:
        d = search_channels(index, q, 10, rank=rank).to_dict()
        assert set(d) == {"query", "lexical", "relation", "agreement_node_ids", "descriptions"}
        assert all(isinstance(x, str) for x in d["agreement_node_ids"])
        keys = {k.lower() for k in all_keys({k: v for k, v in d.items() if k != "descriptions"})}
        assert not [k for k in keys if any(f in k for f in FORBIDDEN)]
        for lane in ("lexical", "relation"):
            assert set(d[lane]) == {"trace_id", "channel", "hits", "params"}


def test_descriptions_state_the_contract(hand):
    desc = search_channels(hand, "alpha", 5).descriptions
    assert set(desc) >= {"lexical", "relation", "feedback", "agreement_node_ids"}
    fb = desc["feedback"].lower()
    assert "trace_id" in fb and "node id" in fb and "does not mean" in fb and "never changes" in fb


# ---- gate 7: independent trace ids tied to the query -------------------------------------------
@pytest.mark.parametrize("rank", RANKS)
def test_trace_ids_distinct_and_tied_to_the_query(hand, rank):
    r1, r2 = search_channels(hand, "alpha", 10, rank=rank), search_channels(hand, "alpha", 10, rank=rank)
    ids = [r1.lexical.trace_id, r1.relation.trace_id, r2.lexical.trace_id, r2.relation.trace_id]
    assert len(set(ids)) == 4
    for r in (r1, r2):
        for lane in (r.lexical, r.relation):
            t = hand.state.get_trace(lane.trace_id)
            assert t.query == "alpha" and t.channel == lane.channel
            assert [h["node_id"] for h in t.hits] == lane.ids
    lex = hand.state.get_trace(r1.lexical.trace_id)
    assert all("path" not in h for h in lex.hits)
    rel = hand.state.get_trace(r1.relation.trace_id)
    assert [[(e["source"], e["target"]) for e in h["path"]] for h in rel.hits] == \
        [[(e["source"], e["target"]) for e in h["path"]] for h in r1.relation.hits]
    assert rel.params["seeds"] == ["a"] and rel.params["hops"] == 2


# ---- gates 8-11: weights and feedback attribution ----------------------------------------------
def weights(index):
    return index.state.overlay_for(index.graph, index.ids)


@pytest.mark.parametrize("rank", RANKS)
def test_search_never_changes_weights(foldoc, rank):
    before, overlay = weights(foldoc), foldoc.state.overlay()
    for q in FOLDOC_QUERIES:
        search_channels(foldoc, q, 10, rank=rank)
    assert np.array_equal(weights(foldoc), before) and foldoc.state.overlay() == overlay


@pytest.mark.parametrize("rank", RANKS)
def test_lexical_success_changes_no_edge(hand, rank):
    r = search_channels(hand, "alpha epsilon", 10, rank=rank)  # a is in both lanes
    before = weights(hand)
    res = record_success(hand, r.lexical.trace_id, "a")
    assert res.channel == "lexical" and res.changed_edges == [] and not res.already_recorded
    assert np.array_equal(weights(hand), before) and hand.state.overlay() == {}


def test_relation_success_strengthens_exactly_the_credited_path(hand):
    r = ngr(hand, "alpha", 10)
    before = weights(hand)
    res = record_success(hand, r.relation.trace_id, "d")  # credited path a -part-> c -link-> d
    after = weights(hand)
    changed = {int(hand.graph.edge_ids[s]) for s in np.flatnonzero(after != before)}
    assert changed == {1, 2}  # edge ids of a->c and c->d; every other edge untouched
    assert [(c.source_id, c.target_id, c.type) for c in res.changed_edges] == [("a", "c", "part"), ("c", "d", "link")]
    assert all(c.weight_after > c.base_weight for c in res.changed_edges)
    # idempotent
    again = record_success(hand, r.relation.trace_id, "d")
    assert again.already_recorded and again.changed_edges == []
    assert np.array_equal(weights(hand), after)
    # the next relation search uses the effective weights: a->c now 3.3 of 4.3
    r2 = ngr(hand, "alpha", 10)
    assert r2.relation.hits[0]["id"] == "c"
    assert r2.relation.hits[0]["score"] == pytest.approx(0.5 * 3.3 / 4.3)
    assert r2.relation.hits[0]["path"][0]["weight"] == pytest.approx(3.3)
    assert r2.relation.params["weights"] == "base+overlay"
    # ... and parity with an isolated graph-only run over the same effective weights
    g = spread(hand.graph, [0], 2, 0.5, weights=weights(hand), tie_rank=hand.id_rank)
    assert [(h["id"], h["score"]) for h in r2.relation.hits] == [(hand.ids[x.node], x.activation) for x in g]


@pytest.mark.parametrize("rank", RANKS)
def test_same_node_in_both_lanes_trace_decides(hand, rank):
    r = search_channels(hand, "alpha epsilon", 10, rank=rank)
    assert "a" in r.lexical.ids and "a" in r.relation.ids
    assert record_success(hand, r.lexical.trace_id, "a").changed_edges == []
    res = record_success(hand, r.relation.trace_id, "a")
    assert [(c.source_id, c.target_id) for c in res.changed_edges] == [("e", "a")]


@pytest.mark.parametrize("rank", RANKS)
def test_cross_lane_misuse_and_unknown_trace_are_refused(hand, rank):
    r = search_channels(hand, "alpha", 10, rank=rank)
    before = weights(hand)
    with pytest.raises(InputError, match="not a hit of trace"):
        record_success(hand, r.lexical.trace_id, "c")  # relation-only node through the lexical trace
    with pytest.raises(InputError, match="not a hit of trace"):
        record_success(hand, r.relation.trace_id, "a")  # lexical-only node (a seed) through the relation trace
    with pytest.raises(InputError, match="unknown trace"):
        record_success(hand, "0" * 32, "a")
    with pytest.raises(InputError, match="not a hit"):
        record_success(hand, r.relation.trace_id, "no-such-node")
    assert np.array_equal(weights(hand), before) and hand.state.successes() == []


# ---- gate 12: determinism within and across processes -------------------------------------------
_CHILD = """
import json, sys
from sidelight.corpus.foldoc import load_foldoc
from sidelight.index import Index
from sidelight.lanes.channels import search_channels
ix = Index.build(load_foldoc(), progress=False)
out = [search_channels(ix, q, 15, rank=sys.argv[2]).to_dict() for q in json.loads(sys.argv[1])]
print(json.dumps(out))
"""


@pytest.mark.parametrize("rank", RANKS)
def test_deterministic_across_runs_and_processes(foldoc, rank):
    mine = [without_trace_ids(search_channels(foldoc, q, 15, rank=rank).to_dict()) for q in FOLDOC_QUERIES]
    again = [without_trace_ids(search_channels(foldoc, q, 15, rank=rank).to_dict()) for q in FOLDOC_QUERIES]
    assert mine == again
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(FOLDOC_QUERIES), rank], capture_output=True,
                          text=True, timeout=300, check=True)
    theirs = [without_trace_ids(d) for d in json.loads(proc.stdout)]
    assert json.dumps(theirs, sort_keys=True) == json.dumps(mine, sort_keys=True)


# ---- dense lane (fake query encoder, vectors known) ------------------------------------------------
class FakeEmbedder:
    identity = {"name": "fake", "dim": 3}

    def encode(self, texts, kind="query", **kw):
        table = {"engine": [1.0, 0.0, 0.0], "fastener": [0.0, 1.0, 0.0]}
        return np.asarray([table.get(t, [0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)


def test_dense_lane_and_dense_seeds(hand):
    # unit vectors: a and b near "engine", e near "fastener"; f negative on every axis used
    vec = np.asarray([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0], [-1, 0, 0]], dtype=np.float32)
    hand.dense = DenseStore(vec, FakeEmbedder.identity, "fake", _embedder=FakeEmbedder())
    r = ngr(hand, "engine", 10)
    d = r.to_dict()
    assert set(d) == {"query", "lexical", "dense", "relation", "agreement_node_ids", "descriptions"}
    assert "dense" in r.descriptions
    iso = hand.search("engine", "dense", k=10)
    assert [(h["id"], h["rank"], h["score"]) for h in r.dense.hits] == [(h.id, h.rank, h.score) for h in iso]
    assert all("path" not in h for h in r.dense.hits)
    # seeds: BM25 top 5 ("engine" -> a), then positive cosines not yet seeds (b)
    assert r.relation.params["seeds"] == ["a", "b"] and r.relation.params["dense_seeds"]
    assert relation_seeds(hand, "engine", 5) == [0, 1]
    g = spread(hand.graph, [0, 1], 2, 0.5, tie_rank=hand.id_rank, limit=10)
    assert [(h["id"], h["score"]) for h in r.relation.hits] == [(hand.ids[x.node], x.activation) for x in g]
    assert hand.state.get_trace(r.dense.trace_id).channel == "dense"
    r2 = ngr(hand, "engine", 2)  # the dense lane ranks every record; cut it to a, b
    assert r2.dense.ids == ["a", "b"]
    with pytest.raises(InputError, match="not a hit"):
        record_success(hand, r2.dense.trace_id, "c")
    assert record_success(hand, r2.dense.trace_id, "b").changed_edges == []
    assert hand.state.overlay() == {}
    # dense=False leaves the dense lane and dense seeds out
    r = ngr(hand, "engine", 10, dense=False)
    assert r.dense is None and r.relation.params["seeds"] == ["a"]


def test_bad_arguments(hand):
    with pytest.raises(InputError, match="empty query"):
        search_channels(hand, "  ", 10)
    with pytest.raises(InputError, match="limit"):
        search_channels(hand, "alpha", 0)
    with pytest.raises(InputError, match="no dense vectors"):
        search_channels(hand, "alpha", 5, dense=True)
