"""Traces and feedback: NGR attribution by trace provenance, bounded reinforcement, concurrency."""

import multiprocessing as mp
import sqlite3

import numpy as np
import pytest

from sidelight.errors import InputError, NonFiniteScoreError
from sidelight.feedback import CAP_FACTOR, ETA, StateStore
from sidelight.graph import Graph, spread, trace_hits

IDS = ["A", "B", "C", "D", "E"]


@pytest.fixture
def graph():
    # A -> B (3), A -> C (1), B -> D (1, cites), C -> D (1), D -> E (2)
    return Graph.from_arrays(5, [0, 0, 1, 2, 3], [1, 2, 3, 3, 4], [3.0, 1.0, 1.0, 1.0, 2.0],
                             ["link", "link", "cites", "link", "link"])


@pytest.fixture
def store(tmp_path):
    s = StateStore(tmp_path / "index" / "state.sqlite")
    yield s
    s.close()


def lexical_hits():
    return [{"node_id": "D", "rank": 1, "score": 7.5}, {"node_id": "A", "rank": 2, "score": 3.0}]


def relation_trace(store, graph, query="q"):
    hits = spread(graph, [0], hops=2)
    return store.new_trace(query, "relation", trace_hits(hits, IDS, graph), {"hops": 2, "decay": 0.5, "seeds": ["A"]})


def test_traces_roundtrip_and_wal(store, graph, tmp_path):
    lex = store.new_trace("what is d", "lexical", lexical_hits(), {"k1": 1.2})
    rel = relation_trace(store, graph, "what is d")
    assert lex != rel and len(lex) == 32
    t = store.get_trace(rel)
    assert (t.query, t.channel, t.params["seeds"]) == ("what is d", "relation", ["A"])
    assert [h["node_id"] for h in t.hits] == ["B", "D", "C"]
    assert t.hit("D")["path"] == [
        {"source": "A", "target": "B", "type": "link", "base_weight": 3.0, "weight": 3.0},
        {"source": "B", "target": "D", "type": "cites", "base_weight": 1.0, "weight": 1.0}]
    assert "path" not in store.get_trace(lex).hits[0]
    again = StateStore(tmp_path / "index" / "state.sqlite")
    assert set(again.trace_ids()) == {lex, rel}
    again.close()
    con = sqlite3.connect(tmp_path / "index" / "state.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_search_only_never_changes_weights(store, graph):
    for _ in range(3):
        store.new_trace("q", "lexical", lexical_hits())
        relation_trace(store, graph)
    assert store.overlay() == {}
    assert np.array_equal(store.overlay_for(graph, IDS), graph.weights)


def test_lexical_success_changes_no_edge(store, graph):
    lex = store.new_trace("q", "lexical", lexical_hits())
    res = store.record_success(lex, "D")
    assert res.channel == "lexical" and res.rank == 1 and not res.already_recorded and res.changed_edges == []
    assert store.overlay() == {}
    assert store.successes() == [(lex, "D")]


def test_relation_success_changes_exactly_the_credited_path(store, graph):
    rel = relation_trace(store, graph)
    before = store.overlay_for(graph, IDS)
    res = store.record_success(rel, "D")  # credited path A->B (3.0), B->D (1.0, cites)
    assert [(c.source_id, c.target_id, c.type) for c in res.changed_edges] == [("A", "B", "link"), ("B", "D", "cites")]
    assert [c.delta_after for c in res.changed_edges] == pytest.approx([ETA * 3.0, ETA * 1.0])
    after = store.overlay_for(graph, IDS)
    changed = np.flatnonzero(after != before)
    credited = sorted([int(graph.slots_of(0, 1)[0]), int(graph.slots_of(1, 3)[0])])
    assert changed.tolist() == credited
    assert after[credited].tolist() == pytest.approx([3.3, 1.1])
    assert np.array_equal(graph.weights, before)  # base weights untouched


def test_same_node_in_both_lanes_trace_decides(store, graph):
    lex = store.new_trace("q", "lexical", lexical_hits())
    rel = relation_trace(store, graph)
    assert store.record_success(lex, "D").changed_edges == []
    assert store.overlay() == {}
    assert len(store.record_success(rel, "D").changed_edges) == 2


def test_misuse_is_refused(store, graph):
    lex = store.new_trace("q", "lexical", lexical_hits())
    rel = relation_trace(store, graph)
    with pytest.raises(InputError, match="unknown trace"):
        store.record_success("0" * 32, "D")
    with pytest.raises(InputError, match="not a hit"):
        store.record_success(lex, "B")          # B only came from the relation lane
    with pytest.raises(InputError, match="not a hit"):
        store.record_success(rel, "A")          # A (the seed) came only from the lexical lane
    with pytest.raises(InputError):
        store.get_trace("nope")
    assert store.overlay() == {} and store.successes() == []


def test_repeat_success_is_idempotent(store, graph):
    rel = relation_trace(store, graph)
    first = store.record_success(rel, "B")
    second = store.record_success(rel, "B")
    assert not first.already_recorded and len(first.changed_edges) == 1
    assert second.already_recorded and second.changed_edges == []
    assert store.overlay() == {("A", "B", "link"): pytest.approx(ETA * 3.0)}
    assert store.successes() == [(rel, "B")]


def test_reinforcement_is_bounded(store, graph):
    for k in range(1, 61):
        rel = relation_trace(store, graph)
        store.record_success(rel, "B")
        delta = store.overlay()[("A", "B", "link")]
        assert delta == pytest.approx(3.0 * (CAP_FACTOR - 1) * (1 - (1 - ETA) ** k))
    w = store.overlay_for(graph, IDS)
    assert 3.0 < w[int(graph.slots_of(0, 1)[0])] < CAP_FACTOR * 3.0


def test_effective_weights_feed_the_relation_lane(store, graph):
    rel = relation_trace(store, graph)
    store.record_success(rel, "C")  # strengthens A->C only
    w = store.overlay_for(graph, IDS)
    base = {h.node: h.activation for h in spread(graph, [0])}
    learned = {h.node: h.activation for h in spread(graph, [0], weights=w)}
    assert learned[2] > base[2] and learned[1] < base[1]


def test_overlay_survives_rebuild_with_other_positions(store, graph):
    rel = relation_trace(store, graph)
    store.record_success(rel, "B")
    # same records in another order: E D C B A, edges re-authored over new positions
    ids2 = IDS[::-1]
    p = {r: i for i, r in enumerate(ids2)}
    g2 = Graph.from_arrays(5, [p["A"], p["A"]], [p["B"], p["C"]], [3.0, 1.0])
    w = store.overlay_for(g2, ids2)
    assert w[int(g2.slots_of(p["A"], p["B"])[0])] == pytest.approx(3.3)
    assert w[int(g2.slots_of(p["A"], p["C"])[0])] == 1.0


def test_hit_validation(store):
    with pytest.raises(InputError, match="no graph path"):
        store.new_trace("q", "lexical", [{"node_id": "A", "rank": 1, "score": 1.0,
                                          "path": [{"source": "B", "target": "A", "type": "link", "weight": 1}]}])
    with pytest.raises(InputError, match="zero-hop"):
        store.new_trace("q", "relation", [{"node_id": "A", "rank": 1, "score": 1.0}])
    with pytest.raises(InputError, match="contiguous"):
        store.new_trace("q", "relation", [{"node_id": "C", "rank": 1, "score": 1.0, "path": [
            {"source": "A", "target": "B", "type": "link", "weight": 1}, {"source": "D", "target": "C", "type": "link", "weight": 1}]}])
    with pytest.raises(NonFiniteScoreError):
        store.new_trace("q", "lexical", [{"node_id": "A", "rank": 1, "score": float("nan")}])
    with pytest.raises(InputError):
        store.new_trace("q", "lexical", [{"node_id": "A", "rank": 1, "score": 1.0}, {"node_id": "A", "rank": 2, "score": 0.5}])
    assert store.trace_ids() == []


# -- concurrency --------------------------------------------------------------------------------

def _writer(path, worker, n, shared_traces, out, barrier, inherited):
    # odd workers reuse the store object inherited through fork: it must open its own connection
    s = inherited if worker % 2 else StateStore(path)
    barrier.wait(timeout=60)
    made = []
    for i in range(n):
        made.append(s.new_trace(f"w{worker}-q{i}", "lexical", [{"node_id": "A", "rank": 1, "score": float(i)}]))
    fresh = [s.record_success(t, "B").already_recorded for t in shared_traces]
    s.close()
    out.put((made, fresh))


def test_concurrent_writers_lose_nothing(tmp_path, graph):
    path = tmp_path / "state.sqlite"
    s = StateStore(path)
    rels = [relation_trace(s, graph) for _ in range(6)]  # every one credits A->B
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    workers, n = 4, 100
    barrier = ctx.Barrier(workers)
    procs = [ctx.Process(target=_writer, args=(path, w, n, rels, out, barrier, s)) for w in range(workers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    made = [t for r in results for t in r[0]]
    assert len(made) == workers * n and len(set(made)) == workers * n
    assert set(made) | set(rels) == set(s.trace_ids())
    # each shared (trace, node) success was applied exactly once across all processes
    firsts = np.array([r[1] for r in results])  # already_recorded flags, workers x traces
    assert (~firsts).sum(axis=0).tolist() == [1] * len(rels)
    assert len(s.successes()) == len(rels)
    assert s.overlay()[("A", "B", "link")] == pytest.approx(3.0 * (1 - (1 - ETA) ** len(rels)))
    s.close()
