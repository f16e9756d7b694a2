"""Graph methods in the registry (Carrier's PPR boost and controls) and the index's graph component."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import IndexFormatError, InputError
from sidelight.graph import degree_scores, ppr_boost, rewire
from sidelight.index import Index, store
from sidelight.methods import available_methods, get_method
from sidelight.methods.graph import (
    PPR_DEFAULTS,
    PPR_GRID,
    rewire_reports,
    rewired_adjacency,
    select_ppr_setting,
)
from sidelight.structures.ranking import top_k

FOLDOC_QUERIES = ["garbage collection", "object-oriented programming language", "virtual memory paging",
                  "compiler optimisation", "ethernet network protocol", "regular expression", "unix shell",
                  "lisp interpreter", "relational database query", "file transfer"]
GRAPH_METHODS = ["bm25+ppr", "dense+ppr", "bm25+ppr:empty", "bm25+ppr:stored", "bm25+ppr:rewire", "degree"]


@pytest.fixture(scope="module")
def foldoc():
    from sidelight.corpus.foldoc import load_foldoc

    return Index.build(load_foldoc(), progress=False)


def small() -> Corpus:
    recs = [Record("r3", "lisp", "lisp language"), Record("r1", "scheme", "scheme language lisp dialect"),
            Record("r2", "garbage", "memory reclaim"), Record("r4", "lonely", "nothing links here")]
    return Corpus("small", recs, [Edge("r3", "r2"), Edge("r1", "r3"), Edge("r1", "r2", "see", 2.0)])


def test_methods_are_registered_with_carriers_defaults():
    names = available_methods()
    assert set(GRAPH_METHODS) <= set(names)
    m = get_method("bm25+ppr")
    assert m.params == {"alpha": 0.5, "lam": 0.1, "n_seeds": 20, "iterations": 20} == PPR_DEFAULTS
    assert get_method("bm25+ppr:rewire").params["seed"] == 1
    with pytest.raises(InputError, match="no parameter"):
        get_method("bm25+ppr", beta=1)


def test_bm25_ppr_is_carriers_rule_with_id_ties():
    ix = Index.build(small(), progress=False)
    text = ix.lexical.bm25_scores("lisp")
    expected = top_k(ppr_boost(text, ix.graph.undirected(), 0.5, 0.1, 20, 20, ix.id_rank), None, ix.id_rank)
    got = get_method("bm25+ppr").rank(ix, "lisp", None)
    assert got.positions.tolist() == expected.positions.tolist()
    assert np.array_equal(got.scores, expected.scores)
    # r2 has no query term but is linked to both seeds: the walk ranks it
    assert "r2" in [ix.ids[p] for p in got.positions]
    assert "r2" not in [h.id for h in ix.search("lisp", "bm25", k=10)]
    # other settings go through the same rule
    got = get_method("bm25+ppr", alpha=0.8, lam=0.5).rank(ix, "lisp", None)
    assert np.allclose(got.scores, ppr_boost(text, ix.graph.undirected(), 0.8, 0.5, 20, 20, ix.id_rank)[got.positions])


def test_empty_edge_control_reproduces_bm25_ranks_on_foldoc(foldoc):
    for q in FOLDOC_QUERIES:
        bm25 = foldoc.search(q, "bm25", k=None)
        empty = foldoc.search(q, "bm25+ppr:empty", k=None)
        assert [h.id for h in empty] == [h.id for h in bm25], q
        assert len(bm25) > 20


def test_bm25_ppr_changes_some_foldoc_ranking(foldoc):
    changed = [q for q in FOLDOC_QUERIES
               if [h.id for h in foldoc.search(q, "bm25+ppr", k=10)] != [h.id for h in foldoc.search(q, "bm25", k=10)]]
    assert changed
    stored = [q for q in FOLDOC_QUERIES
              if [h.id for h in foldoc.search(q, "bm25+ppr:stored", k=10)] != [h.id for h in foldoc.search(q, "bm25+ppr", k=10)]]
    assert stored  # the stored-direction walk is a different graph


def test_rewire_method_preserves_degrees_and_is_cached(foldoc):
    und = foldoc.graph.undirected()
    adj = rewired_adjacency(foldoc, 7)
    assert np.array_equal(np.diff(adj.indptr), np.diff(und.indptr))
    assert (adj != adj.T).nnz == 0 and adj.diagonal().sum() == 0
    rep = rewire_reports(foldoc)[7]
    assert rep.seed == 7 and rep.n_edges == und.nnz // 2 and rep.attempts == 10 * rep.n_edges
    assert 0 < rep.accepted and rep.retained_overlap < 0.5
    hits = foldoc.search("garbage collection", "bm25+ppr:rewire", k=10, seed=7)
    assert hits == foldoc.search("garbage collection", "bm25+ppr:rewire", k=10, seed=7)
    assert rewired_adjacency(foldoc, 7) is adj  # cached per (index, seed)
    # the method uses exactly that adjacency
    text = foldoc.lexical.bm25_scores("garbage collection")
    expected = top_k(ppr_boost(text, adj, 0.5, 0.1, 20, 20, foldoc.id_rank), 10, foldoc.id_rank)
    assert [h.id for h in hits] == [foldoc.ids[p] for p in expected.positions]


def test_rewire_cache_follows_graph_rebuilds():
    ix = Index.build(small(), progress=False)
    a1 = rewired_adjacency(ix, 3)
    assert set(rewire_reports(ix)) == {3}
    ix.add([Record("r5", "extra", "lisp again")], [Edge("r5", "r4")])
    assert rewire_reports(ix) == {}
    a2 = rewired_adjacency(ix, 3)
    assert a2.shape == (5, 5) and a1.shape == (4, 4)
    _, ref = rewire(ix.graph.undirected(), 3)
    assert rewire_reports(ix)[3] == ref


def test_degree_method_is_query_independent(foldoc):
    deg = degree_scores(foldoc.graph.undirected())
    a = foldoc.search("garbage collection", "degree", k=20)
    b = foldoc.search("anything else", "degree", k=20)
    assert a == b
    assert [h.id for h in a] == [foldoc.ids[p] for p in top_k(deg, 20, foldoc.id_rank).positions]
    with pytest.raises(InputError, match="empty query"):
        foldoc.search("  ", "degree")


def test_dense_ppr_needs_vectors():
    ix = Index.build(small(), progress=False)
    with pytest.raises(InputError, match="no dense vectors"):
        ix.search("lisp", "dense+ppr")


def test_grid_and_selection_tie_rule():
    assert PPR_GRID == [(0.5, 0.1), (0.5, 0.25), (0.5, 0.5), (0.8, 0.1), (0.8, 0.25), (0.8, 0.5)]
    scores = {s: 0.5 for s in PPR_GRID}
    assert select_ppr_setting(scores) == (0.8, 0.1)  # all tied: lower lam, then higher alpha
    scores[(0.5, 0.25)] = 0.6
    assert select_ppr_setting(scores) == (0.5, 0.25)
    scores[(0.8, 0.25)] = 0.6
    assert select_ppr_setting(scores) == (0.8, 0.25)
    scores[(0.5, 0.1)] = 0.6
    assert select_ppr_setting(scores) == (0.5, 0.1)
    with pytest.raises(InputError):
        select_ppr_setting({})
    with pytest.raises(InputError, match="not finite"):
        select_ppr_setting({(0.5, 0.1): float("nan")})


# ---- the index's graph component -------------------------------------------------------------
def test_index_graph_saved_loaded_and_rebuilt(tmp_path):
    ix = Index.build(small(), progress=False)
    assert ix.graph.n_nodes == 4 and ix.graph.n_edges == 3
    assert ix.ppr_graph is ix.ppr_graph and ix.ppr_graph.n == 4
    path = ix.save(tmp_path / "idx")
    assert (store.data_folder(path) / "graph" / "graph.json").is_file()
    manifest = json.loads((store.data_folder(path) / "manifest.json").read_text())
    assert manifest["graph"] == {"nodes": 4, "edges": 3, "types": ["link", "see"]}
    assert "graph/indices.npy" in manifest["files"]
    loaded = Index.load(path)
    assert isinstance(loaded.graph.indices, np.memmap)
    for name in ("indptr", "indices", "weights", "types", "edge_ids"):
        assert np.array_equal(getattr(loaded.graph, name), getattr(ix.graph, name))
    for m in ("bm25+ppr", "bm25+ppr:stored", "degree"):
        assert loaded.search("lisp", m) == ix.search("lisp", m)
    old_ppr = loaded.ppr_graph
    loaded.delete(["r3"])
    assert loaded.graph.n_nodes == 3 and loaded.graph.n_edges == 1  # only r1 -see-> r2 is left
    assert loaded.ppr_graph is not old_ppr
    loaded.add([Record("r9", "nine", "lisp nine")], [Edge("r9", "r1", "see")])
    assert loaded.graph.n_edges == 2
    loaded.save(path)
    again = Index.load(path)
    assert again.graph.n_edges == 2 and again.manifest["graph"]["edges"] == 2


def test_index_without_graph_folder_is_refused(tmp_path):
    import shutil

    ix = Index.build(small(), progress=False)
    path = ix.save(tmp_path / "idx")
    manifest = json.loads((store.data_folder(path) / "manifest.json").read_text())
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("graph/")}
    (store.data_folder(path) / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(store.data_folder(path) / "graph")
    with pytest.raises(IndexFormatError):
        Index.load(path)


def test_state_lives_in_the_index_folder_and_survives_rewrites(tmp_path):
    ix = Index.build(small(), progress=False)
    r = ix.search_channels("lisp", 5)  # unsaved: a temporary state
    tmp_state = ix.state.path
    assert tmp_state.exists() and not str(tmp_state).startswith(str(tmp_path))
    path = ix.save(tmp_path / "idx")
    assert ix.state.path == path / "state.sqlite"
    assert ix.state.get_trace(r.relation.trace_id).query == "lisp"  # carried over on first save
    res = ix.state.record_success(r.relation.trace_id, r.relation.hits[0]["id"])
    assert res.changed_edges
    loaded = Index.load(path)  # state is outside the manifest hashes
    assert loaded.state.overlay() == ix.state.overlay() != {}
    loaded.add([Record("r7", "seven", "seven")])
    loaded.save(path)  # a rewrite keeps the state
    assert Index.load(path).state.overlay() == ix.state.overlay()
    assert Index.load(path).state.successes() == [(r.relation.trace_id, r.relation.hits[0]["id"])]


def test_temporary_state_is_removed_with_the_index():
    import gc

    ix = Index.build(small(), progress=False)
    folder = ix.state.path.parent
    assert folder.is_dir()
    del ix
    gc.collect()
    assert not folder.exists()
