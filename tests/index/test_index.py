"""Index folders: round trip, atomic writes, corrupt or foreign folders, incremental add/delete."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sidelight.corpus import Corpus
from sidelight.errors import IndexFormatError, InputError
from sidelight.index import Index, store

QUERIES = ["vitamin d bone density", "cancer cells immune response", "mitochondria aging", "zzzz unknownterm"]


def _scores(index: Index, q: str) -> dict[str, float]:
    s = index.lexical.bm25_scores(q)
    return {index.ids[i]: s[i] for i in np.flatnonzero(s)}


def test_round_trip_gives_identical_rankings(tmp_path, scifact_index):
    path = scifact_index.save(tmp_path / "idx")
    loaded = Index.load(path)
    for q in QUERIES:
        assert loaded.search(q, k=20) == scifact_index.search(q, k=20)
    assert loaded.manifest["corpus"]["hash"] == scifact_index.corpus.content_hash()


def test_corrupt_foreign_and_partial_indexes_are_refused(tmp_path, toy_corpus):
    path = Index.build(toy_corpus, progress=False).save(tmp_path / "idx")
    tf = store.data_folder(path) / "lexical" / "tf_data.npy"
    raw = bytearray(tf.read_bytes())
    raw[-1] ^= 0xFF
    tf.write_bytes(bytes(raw))
    with pytest.raises(IndexFormatError, match="corrupt"):
        Index.load(path)

    path = Index.build(toy_corpus, progress=False).save(tmp_path / "idx2")
    manifest = json.loads((store.data_folder(path) / "manifest.json").read_text())
    manifest["version"] = 999
    (store.data_folder(path) / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFormatError, match="version 999"):
        Index.load(path)

    (store.data_folder(path) / "manifest.json").write_text("{not json")
    with pytest.raises(IndexFormatError, match="corrupt manifest"):
        Index.load(path)
    with pytest.raises(IndexFormatError, match="not a sidelight index"):
        Index.load(tmp_path)


@pytest.mark.parametrize("where", ["manifest", "records"])
def test_failed_write_leaves_the_old_index_untouched(tmp_path, toy_corpus, monkeypatch, where):
    """A failure while the manifest is written, or in the records writer (a worker thread beside
    the lexical build), leaves the old index as it was and no temporary generation behind."""
    import sidelight.index.index as index_module

    index = Index.build(toy_corpus, progress=False)
    path = index.save(tmp_path / "idx")
    before = Index.load(path).search("cat", k=5)
    generations = sorted(p.name for p in path.iterdir())

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(*((store, "write_manifest") if where == "manifest" else (index_module, "write_records")), boom)
    with pytest.raises(RuntimeError, match="disk full"):
        index.save(path)
    assert Index.load(path).search("cat", k=5) == before
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # no temp folder left behind
    assert sorted(p.name for p in path.iterdir()) == generations


@pytest.fixture(scope="module")
def split_corpora(scifact_corpus):
    recs = scifact_corpus.records[:1500]
    return Corpus("base", recs[:1200]), recs[1200:], Corpus("full", recs)


def test_incremental_add_equals_full_rebuild(tmp_path, split_corpora):
    base, extra, full = split_corpora
    index = Index.build(base, progress=False)
    index.add(extra)
    index.save(tmp_path / "idx")
    index = Index.load(tmp_path / "idx")
    rebuilt = Index.build(full, progress=False)
    for q in QUERIES:
        a, b = _scores(index, q), _scores(rebuilt, q)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-12)
        assert index.search(q, k=10) == rebuilt.search(q, k=10)


def test_incremental_delete_equals_full_rebuild(split_corpora):
    _, _, full = split_corpora
    gone = [r.id for r in full.records[::7]]
    index = Index.build(full, progress=False)
    index.delete(gone)
    rebuilt = Index.build(Corpus("rest", [r for r in full.records if r.id not in set(gone)]), progress=False)
    assert index.corpus.ids == rebuilt.corpus.ids
    for q in QUERIES:
        a, b = _scores(index, q), _scores(rebuilt, q)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-12)


def test_add_and_delete_refuse_bad_ids(toy_corpus):
    index = Index.build(toy_corpus, progress=False)
    with pytest.raises(InputError, match="already in the index"):
        index.add([toy_corpus.records[0]])
    with pytest.raises(InputError, match="unknown record id 'nope'"):
        index.delete(["nope"])
