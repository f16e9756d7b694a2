"""Sharded indexes in this process: the oracle is the same corpus indexed in one piece.

Every shard's BM25 weight of a posting is the unsharded index's and a query's terms are summed
in the same order, so rankings must be equal and scores within 1e-9; add/delete must equal a
rebuild; a writer that dies before the coordinator publishes must leave the old index whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import InputError
from sidelight.index import Index, store
from sidelight.index.sharded import ShardedIndex, shard_of

REPO = Path(__file__).resolve().parents[2]


def assert_same(a, b, tol: float = 1e-9) -> None:
    assert a.ids == b.ids
    assert [h.rank for h in a] == [h.rank for h in b]
    assert np.allclose([h.score for h in a], [h.score for h in b], rtol=0, atol=tol)


def test_shard_of_is_stable_and_spreads():
    ids = [f"doc{i}" for i in range(3000)]
    a = shard_of(ids, 4)
    assert a.tolist() == shard_of(list(ids), 4).tolist()  # a pure function of the id
    counts = np.bincount(a, minlength=4)
    assert counts.min() > 600  # ~750 each: a hash, not a range
    assert shard_of(["x"], 1).tolist() == [0]


def test_layout_and_collection_statistics(tmp_path, toy_corpus):
    sh = ShardedIndex.write_sharded(toy_corpus, tmp_path / "idx", 2, progress=False)
    one = Index.build(toy_corpus, progress=False)
    m = sh.manifest
    assert m["kind"] == "sharded" and m["shards"]["count"] == 2
    assert m["lexical"]["collection"] == {"records": 5, "total_length": float(one.lexical.doc_len.sum())}
    assert sum(m["shards"]["records"]) == 5
    for s in range(2):  # each shard is an ordinary index folder with its own records
        shard = Index.load(tmp_path / "idx" / "shards" / str(s))
        assert shard.corpus.ids == [i for i, a in zip(toy_corpus.ids, shard_of(toy_corpus.ids, 2)) if a == s]
        assert shard.lexical.n_scored == 5 and shard.lexical.avgdl == one.lexical.avgdl
        for t in shard.lexical.vocab:  # df of every term is the collection's
            assert shard.lexical.df[shard.lexical.term_id[t]] == one.lexical.df[one.lexical.term_id[t]]
    assert_same(one.search("cat mat", "bm25"), sh.search("cat mat", "bm25"))


@pytest.fixture(scope="module")
def scifact_queries(scifact_test):
    return scifact_test[0]  # the 300 test queries


@pytest.fixture(scope="module")
def scifact_sharded(scifact_corpus, tmp_path_factory):
    return ShardedIndex.write_sharded(scifact_corpus, tmp_path_factory.mktemp("sf") / "idx", 3, progress=False)


@pytest.mark.parametrize("method", ["bm25", "tfidf", "rrf-lexical", "bm25+ppr"])
def test_scifact_every_test_query_equals_one_index(method, scifact_index, scifact_sharded, scifact_queries):
    one = scifact_index.search_many(scifact_queries, 10, method)
    three = scifact_sharded.search_many(scifact_queries, 10, method)
    assert len(one) == 300
    for q in scifact_queries:
        assert_same(one[q], three[q])
        assert three[q].coverage == (3, 3) and not three[q].partial


@pytest.fixture(scope="module")
def foldoc_pair(tmp_path_factory):
    from sidelight.corpus.foldoc import load_foldoc

    corpus = load_foldoc()
    return Index.build(corpus, progress=False), ShardedIndex.write_sharded(corpus, tmp_path_factory.mktemp("fd") / "idx", 3,
                                                                   progress=False)


def foldoc_test_queries() -> list[str]:
    rows = [json.loads(line) for line in (REPO / "benchmarks" / "foldoc-concepts-v1.jsonl").open()]
    return [r["query"] for r in rows if r["split"] == "test"]


def test_foldoc_relation_lane_equals_one_index(foldoc_pair):
    one, sharded = foldoc_pair
    queries = foldoc_test_queries()
    assert len(queries) >= 50
    for q in queries:
        a, b = one.search_channels(q, 10), sharded.search_channels(q, 10)
        ra, rb = a.relation.hits, b.relation.hits
        assert [h.id for h in ra] == [h.id for h in rb], q
        assert [h["path"] for h in ra] == [h["path"] for h in rb], q
        assert np.allclose([h.score for h in ra], [h.score for h in rb], rtol=0, atol=1e-9)
        assert b.to_dict()["coverage"] == "3/3" and b.to_dict()["partial"] is False
        assert_same(one.search(q, "relation"), sharded.search(q, "relation"))


def test_add_and_delete_equal_a_rebuild(tmp_path, scifact_corpus):
    records = list(scifact_corpus.records)[:400]
    base, extra = records[:360], records[360:]
    path = tmp_path / "idx"
    ShardedIndex.write_sharded(Corpus("sf", base), path, 3, progress=False)
    with Index.edit(path) as index:
        index.add(extra, [Edge(extra[0].id, base[0].id)])
    gone = [base[5].id, extra[3].id, base[100].id]
    with Index.edit(path) as index:
        index.delete(gone)
    edited = Index.load(path)
    final = [r for r in records if r.id not in set(gone)]
    final_corpus = Corpus("sf", final, [Edge(extra[0].id, base[0].id)])
    rebuilt = ShardedIndex.write_sharded(final_corpus, tmp_path / "rebuilt", 3, progress=False)
    one = Index.build(final_corpus, progress=False)
    assert edited.corpus.ids == one.corpus.ids
    assert edited.manifest["lexical"]["collection"] == rebuilt.manifest["lexical"]["collection"]
    for q in ("cancer cells", "vitamin d", "protein folding in bacteria", records[7].title):
        for m in ("bm25", "tfidf", "bm25+ppr"):
            assert_same(rebuilt.search(q, m), edited.search(q, m))
            assert_same(one.search(q, m), edited.search(q, m))


def test_a_writer_that_dies_before_publishing_leaves_the_old_index(tmp_path, toy_corpus, monkeypatch):
    path = tmp_path / "idx"
    ShardedIndex.write_sharded(toy_corpus, path, 2, progress=False)
    before = Index.load(path).search("cat", "bm25")
    pins = Index.load(path).manifest["shards"]["generations"]

    def crash(*args):
        raise RuntimeError("killed")

    import sidelight.index.sharded as sharded

    with monkeypatch.context() as m:  # the shards are written, then the coordinator's generation dies
        m.setattr(sharded, "write_records", crash)
        with pytest.raises(RuntimeError):
            with Index.edit(path) as index:
                index.add([Record("d9", "Cat food", "cat cat cat food")])
    assert store.current_generation(path / "shards" / "0") != pins[0] or \
        store.current_generation(path / "shards" / "1") != pins[1]  # the shards moved on ...
    after = Index.load(path)  # ... but the coordinator pins the old generations
    assert after.manifest["shards"]["generations"] == pins
    assert_same(before, after.search("cat", "bm25"))
    with Index.edit(path) as index:  # the next writer sets the shards back first, then writes
        index.add([Record("d9", "Cat food", "cat cat cat food")])
    one = Index.build(Corpus("toy", [*toy_corpus.records, Record("d9", "Cat food", "cat cat cat food")],
                             toy_corpus.edges), progress=False)
    assert_same(one.search("cat", "bm25"), Index.load(path).search("cat", "bm25"))


def test_what_needs_the_matrices_is_refused_clearly(tmp_path, toy_corpus):
    sh = ShardedIndex.write_sharded(toy_corpus, tmp_path / "idx", 2, progress=False)
    with pytest.raises(InputError, match="stays on the shards"):
        sh.search("cat", "bm25+rm3")
    with pytest.raises(InputError, match="saved only in place"):
        sh.save(tmp_path / "elsewhere")


def test_cli_index_shards_and_search(tmp_path, capsys):
    src = tmp_path / "toy.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "title": t, "text": x}) + "\n"
                           for i, (t, x) in enumerate([("Cats", "the cat sat"), ("Dogs", "a dog and a cat"),
                                                       ("Fish", "fish swim"), ("Birds", "birds fly")])))
    assert main(["index", str(src), "-o", str(tmp_path / "idx"), "--shards", "2", "-q"]) == 0
    assert "in 2 shards" in capsys.readouterr().out
    assert main(["search", str(tmp_path / "idx"), "cat", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["coverage"] == "2/2" and out["partial"] is False
    assert [h["id"] for h in out["hits"]] == [h.id for h in Index.build(
        Index.load(tmp_path / "idx").corpus, progress=False).search("cat")]
    for bad in (["--shards", "0"], ["--ray", "auto"], ["--shards", "2", "--ann", "--dense", "minilm"]):
        assert main(["index", str(src), "-o", str(tmp_path / "other"), *bad]) == 2
        assert "Traceback" not in capsys.readouterr().err
