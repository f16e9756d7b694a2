"""The query-aware relation lane on a hand-built typed graph (oracle: answers worked out by hand).

    tree -hyponym-> mangrove, oak        oak -hypernym-> tree      tree -part-meronym-> trunk
    tree -member-holonym-> forest        swamp -hyponym-> marsh

"a kind of tree that grows in swamps": "kind of" precedes the name "tree", so the wanted edges
are hyponyms of tree; the residual question is "grows swamps", which only mangrove's text holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.lanes.channels import record_success, search_channels
from sidelight.methods import get_method
from sidelight.methods.relation import relation_rank
from sidelight.methods.relation_cues import find_cues
from sidelight.structures.names import name_tokens
from sidelight.text import TokenizerConfig


def typed_corpus() -> Corpus:
    recs = [Record("t0", "tree", "a tall woody plant"),
            Record("t1", "mangrove", "tropical plant of salt marshes and swamps"),
            Record("t2", "oak", "a plant with acorns on dry hills"),
            Record("t3", "trunk", "the main stem that holds up the crown"),
            Record("t4", "forest", "land covered with many plants"),
            Record("t5", "swamp", "wet low land"),
            Record("t6", "marsh", "low land that floods", aliases=("fen",))]
    edges = [Edge("t0", "t1", "hyponym"), Edge("t0", "t2", "hyponym"), Edge("t2", "t0", "hypernym"),
             Edge("t0", "t3", "part-meronym"), Edge("t0", "t4", "member-holonym"), Edge("t5", "t6", "hyponym")]
    return Corpus("typed", recs, edges)


@pytest.fixture
def typed():
    return Index.build(typed_corpus(), TokenizerConfig(stopwords="lucene-en-v1"), progress=False)


def ids(index, r):
    return [index.ids[h.node] for h in r.hits]


def test_cue_picks_edge_types_by_where_the_name_stands(typed):
    r = relation_rank(typed, "a kind of tree that grows in swamps", 10)
    assert r.cue == {"phrase": "kind of", "anchor": "tree", "types": ["hyponym", "instance-hyponym"]}
    assert r.residual == "grows swamps"
    assert [(typed.ids[a.position], a.why, a.cue) for a in r.anchors if a.why == "name"] == [
        ("t0", "name", "kind of"), ("t5", "name", "")]
    assert ids(typed, r)[0] == "t1"  # hyponym of tree (type 1) and the only text match
    parts = dict(zip(ids(typed, r), r.parts))
    assert parts["t1"]["type"] == 1.0 and parts["t1"]["text"] == 1.0 and parts["t1"]["hop"] == 1.0
    assert parts["t2"]["type"] == 1.0 and parts["t2"]["text"] == 0.0
    assert parts["t3"]["type"] == 0.0 and parts["t4"]["type"] == 0.0
    assert "t0" not in ids(typed, r) and "t5" not in ids(typed, r)  # what the question names is no answer
    # the name before the cue takes the reverse types: oak -hypernym-> tree
    r = relation_rank(typed, "an oak is a kind of what", 10)
    assert r.cue["types"] == ["hypernym", "instance-hypernym"] and ids(typed, r)[0] == "t0"
    # a question word after the cue: the asked-for record follows, the named one before is the anchor
    r = relation_rank(typed, "an oak is one kind of what broader marsh plant", 10)
    assert r.cue == {"phrase": "kind of", "anchor": "oak", "types": ["hypernym", "instance-hypernym"]}
    r = relation_rank(typed, "the part of a tree that holds up the crown", 10)
    assert r.cue["types"] == ["part-meronym"] and ids(typed, r)[0] == "t3"


def test_aliases_anchor_and_no_cue_means_no_type_part(typed):
    r = relation_rank(typed, "what lies beyond the fen", 10)
    assert r.cue is None and [typed.ids[a.position] for a in r.anchors if a.why == "name"] == ["t6"]
    assert all(p["type"] == 0.0 for p in r.parts)


def test_every_hit_is_reached_through_an_edge_with_its_score_parts(typed):
    for q in ["a kind of tree that grows in swamps", "what is part of a tree", "plant land"]:
        for rank in ("query-aware", "activation"):
            weights = {"anchor_weight": 1.5, "seed_weight": 0.5} if rank == "query-aware" else {}
            r = relation_rank(typed, q, None, {"rank": rank, **weights})
            for h, parts in zip(r.hits, r.parts):
                assert h.path and h.path[-1].target == h.node and h.path[0].source in [a.position for a in r.anchors]
                if rank == "query-aware":
                    want = (parts["graph"] + sum(parts[k] for k in ("hop", "type", "context", "text"))
                            + 2 * parts["dense"] + 1.5 * parts["anchor"] + 0.5 * parts["seed"])
                    assert h.activation == pytest.approx(want)  # default weights: 1, dense 2
            scores = [h.activation for h in r.hits]
            assert scores == sorted(scores, reverse=True)


def test_the_anchor_part_is_the_named_records_fit_passed_along_its_direct_edges(typed):
    q = "tall woody tree or wet swamp land"  # names tree (t0) and swamp (t5); no vectors: fit = BM25
    bm25 = typed.lexical.bm25_scores(q)
    tree, swamp = (list(typed.ids).index(i) for i in ("t0", "t5"))
    assert bm25[tree] > bm25[swamp] > 0
    r = relation_rank(typed, q, None, {"seed_weight": 1.0})
    parts = dict(zip(ids(typed, r), r.parts))
    for t in ("t1", "t2", "t3", "t4"):  # tree's direct targets take tree's fit, the best: 1
        assert parts[t]["anchor"] == pytest.approx(1.0)
    assert parts["t6"]["anchor"] == pytest.approx(bm25[swamp] / bm25[tree], abs=1e-6)  # swamp -> marsh
    # a question naming nothing: no anchor part; the entry seeds' fit goes to their direct targets
    r = relation_rank(typed, "wet low land", None)
    assert all(p["anchor"] == 0.0 for p in r.parts)
    assert dict(zip(ids(typed, r), r.parts))["t6"]["seed"] == 1.0


def test_the_best_fitting_named_records_are_the_anchors_whichever_word_named_them():
    recs = [Record(f"p{i}", "place", text) for i, text in enumerate(["a point in space", "a job", "a seat"])]
    recs += [Record("m", "mashhad", "a holy city in northeastern iran"), Record("c", "city", "a large town")]
    corpus = Corpus("places", recs, [Edge("m", "c", "instance-hypernym")])
    index = Index.build(corpus, TokenizerConfig(stopwords="lucene-en-v1"), progress=False)
    # "kind of place": the cue speaks of the word "place", whose three senses fit the question worst
    r = relation_rank(index, "what kind of place is mashhad, holy to the people of iran", 10,
                      {"max_anchors": 2, "anchor_weight": 1.0})
    assert index.ids[r.anchors[0].position] == "m" and len([a for a in r.anchors if a.why == "name"]) == 2
    assert ids(index, r) == ["c"] and r.parts[0]["anchor"] == 1.0


def test_the_method_ranks_what_the_lane_returns(typed):
    for q in ["a kind of tree that grows in swamps", "the part of a tree", "land"]:
        for rank in ("query-aware", "activation"):
            lane = search_channels(typed, q, 10, rank=rank).relation
            ranking = get_method("relation", rank=rank).rank(typed, q, 10)
            assert lane.ids == [typed.ids[p] for p in ranking.positions]
            assert [h.score for h in lane.hits] == pytest.approx(ranking.scores.tolist())
            assert lane.params["rank"] == rank and all("parts" in h for h in lane.hits)


def test_feedback_moves_the_credited_record_up_and_searching_writes_nothing(typed):
    q, paraphrase = "a kind of tree", "which type of tree"
    first = search_channels(typed, q, 10).relation
    assert first.ids[:2] == ["t1", "t2"]  # mangrove and oak tie on every part; ids break the tie
    overlay = typed.state.overlay()
    search_channels(typed, paraphrase, 10)
    assert typed.state.overlay() == overlay == {}
    res = record_success(typed, first.trace_id, "t2")
    assert [(c.source_id, c.target_id, c.type) for c in res.changed_edges] == [("t0", "t2", "hyponym")]
    for text in (q, paraphrase):
        again = search_channels(typed, text, 10).relation
        assert again.ids[:2] == ["t2", "t1"], text
        assert again.params["weights"] == "base+overlay"


def test_cue_finder_and_bad_parameters(typed):
    assert [c["phrase"] for c, _ in find_cues(name_tokens("made of what kind of stone"))] == ["made of", "kind of"]
    assert find_cues(name_tokens("nothing relational here")) == []
    with pytest.raises(InputError, match="rank"):
        search_channels(typed, "tree", 10, rank="best")
    with pytest.raises(InputError, match="hop_weight"):
        get_method("relation", hop_weight=-1)
    assert relation_rank(typed, "zzz unknown words", 10).hits == []
    with pytest.raises(InputError, match="dense_weigth"):
        relation_rank(typed, "tree", 10, {"dense_weigth": 1.0})
    with pytest.raises(InputError, match="limit"):
        search_channels(typed, "tree", None)
    before = typed.state.trace_ids()
    with pytest.raises(InputError, match="hops"):
        search_channels(typed, "tree", 5, hops=0)  # refused before any lane stores a trace
    assert typed.state.trace_ids() == before
    assert np.array_equal(get_method("relation").rank(typed, "zzz", 10).positions, np.zeros(0, dtype=np.int64))
