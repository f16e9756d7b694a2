"""Opening an index maps it instead of parsing it: same answers as the built index, nothing parsed
in bulk, and corruption caught cheaply on open or in full by `sidelight check`."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidelight.cli import main
from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import IndexFormatError
from sidelight.index import Index, store
from sidelight.index.records import RecordFile, record_line
from sidelight.index.store import HEAD_BYTES
from sidelight.structures import lexical_store

QUERIES = ["vitamin d bone density", "cancer cells immune response", "mitochondria aging", "zzzz unknownterm"]


@pytest.fixture(scope="module")
def saved(scifact_index, tmp_path_factory):
    return scifact_index.save(tmp_path_factory.mktemp("open") / "idx")


def test_an_opened_index_holds_what_was_built(saved, scifact_index):
    opened = Index.load(saved)
    assert list(opened.corpus.records) == list(scifact_index.corpus.records)
    assert opened.corpus.ids == scifact_index.corpus.ids
    assert list(opened.titles) == [r.title for r in scifact_index.corpus.records]
    assert np.array_equal(opened.id_rank, scifact_index.id_rank)
    a, b = opened.lexical, scifact_index.lexical
    assert a.vocab == b.vocab and a.n_terms == b.n_terms
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(a.bm25, name), getattr(b.bm25, name))
    assert (a.tf != b.tf).nnz == 0 and np.array_equal(a.df, b.df) and a.avgdl == b.avgdl
    for q in QUERIES:
        for method in ("bm25", "tfidf"):
            assert opened.search(q, method, k=20) == scifact_index.search(q, method, k=20)


@pytest.mark.parametrize("before_dict", [10**9, 5])
def test_the_sorted_vocabulary_finds_every_term_and_no_other(saved, scifact_index, monkeypatch, before_dict):
    monkeypatch.setattr(lexical_store, "_LOOKUPS_BEFORE_DICT", before_dict)
    lex = Index.load(saved).lexical
    for t, i in list(scifact_index.lexical.term_id.items())[::7]:
        assert lex.find_term(t) == i
    for t in ("", "zzzzqq", "a" * 50):
        assert lex.find_term(t) is scifact_index.lexical.term_id.get(t)
    assert (lex.vocabulary._term_id is None) == (before_dict > 10**6)  # binary search, then the dict once it paid


def test_opening_and_searching_parse_no_record(saved, monkeypatch):
    def refuse(self, line, i):
        raise AssertionError("a record was parsed")

    monkeypatch.setattr(RecordFile, "_parse", refuse)
    opened = Index.load(saved)
    hits = opened.search(QUERIES[0], k=5).hits
    assert len(hits) == 5 and all(h.title for h in hits)
    assert len(opened.corpus) == 5183


def test_add_and_delete_on_an_opened_index_equal_a_rebuild(tmp_path):
    recs = [Record(f"r{i}", f"title {i}", f"body words {i} shared") for i in range(6)]
    edges = [Edge("r0", "r1"), Edge("r2", "r3", context="see r3")]
    path = Index.build(Corpus("t", recs[:4], edges), progress=False).save(tmp_path / "idx")
    with Index.edit(path) as index:
        index.add(recs[4:], [Edge("r4", "r0")])
    with Index.edit(path) as index:
        index.delete(["r1"])
    opened = Index.load(path)
    rebuilt = Index.build(Corpus("t", [r for r in recs if r.id != "r1"], [edges[1], Edge("r4", "r0")]),
                          progress=False)
    assert list(opened.corpus.records) == list(rebuilt.corpus.records)
    assert list(opened.corpus.edges) == list(rebuilt.corpus.edges)
    assert opened.corpus.edges[0].context == "see r3"
    assert opened.search("shared words", k=10) == rebuilt.search("shared words", k=10)


def _flip(path, at):
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_file_changed_after_build_is_caught_on_open_or_by_check(saved, tmp_path, capsys):
    folder = store.data_folder(saved)
    big = max(folder.rglob("*.npy"), key=lambda p: p.stat().st_size)
    assert big.stat().st_size > 2 * HEAD_BYTES
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(saved, copy)
    gen = store.data_folder(copy)
    target = gen / big.relative_to(folder)
    _flip(target, target.stat().st_size - 1)  # past the head: only the full re-hash sees it
    Index.load(copy)
    assert main(["check", str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"{target.relative_to(gen)} does not match its recorded sha256" in err and "Traceback" not in err

    _flip(target, 10)  # in the head: opening refuses
    with pytest.raises(IndexFormatError, match="does not match its recorded sha256"):
        Index.load(copy)
    target.write_bytes(target.read_bytes()[:-8])  # truncated
    with pytest.raises(IndexFormatError, match="bytes, its manifest says"):
        Index.load(copy)


def test_check_reports_a_whole_index(saved, capsys):
    assert main(["check", str(saved)]) == 0
    assert "every sha256 matches" in capsys.readouterr().out


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=200, deadline=None)
@given(_text, _text, _text, st.lists(_text, max_size=3),
       st.dictionaries(_text, st.one_of(_text, st.integers(), st.none()), max_size=3))
def test_record_lines_and_the_content_hash_are_json_dumps(rid, title, text, aliases, metadata):
    r = Record(rid, title, text, metadata, tuple(aliases))
    assert record_line(r).decode() == json.dumps({"id": rid, "title": title, "text": text, "metadata": metadata,
                                         "aliases": aliases}, ensure_ascii=False)
    line = [rid, title, text, aliases] + ([dict(sorted(metadata.items()))] if metadata else [])
    expected = hashlib.sha256(json.dumps(line, ensure_ascii=False).encode() + b"\n"
                              + b"--edges--\n").hexdigest()
    assert Corpus("c", [r]).content_hash() == expected


def test_an_opened_index_still_reads_its_records_after_later_writes_prune_its_generation(tmp_path, toy_corpus):
    path = Index.build(toy_corpus, progress=False).save(tmp_path / "idx")
    opened = Index.load(path)
    first = store.current_generation(path)
    for _ in range(3):
        opened.save(path)
    assert not (path / first).exists()  # pruned: the object reads from its mappings and open files
    assert list(opened.corpus.records) == list(toy_corpus.records)
    assert list(opened.corpus.edges) == list(toy_corpus.edges)
    expected = Index.build(toy_corpus, progress=False).search("cat mat", k=3)
    assert opened.search("cat mat", k=3) == expected == Index.load(path).search("cat mat", k=3)
    assert len(expected) == 3
