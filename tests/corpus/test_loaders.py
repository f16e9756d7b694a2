"""BEIR and JSONL loaders: what they read, what they ignore, and the errors they give."""

from __future__ import annotations

import json

import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.corpus.beir import beir_split, load_qrels, load_queries, read_qrels
from sidelight.corpus.jsonl import load_jsonl_corpus, read_edges, record_from_json
from sidelight.errors import InputError, MissingDataError


def test_scifact_counts_and_query_metadata_is_never_read(scifact_corpus, scifact_test, scifact_dir):
    assert len(scifact_corpus) == 5183
    queries, qrels = scifact_test
    assert len(queries) == 300 and sum(len(v) for v in qrels.values()) == 339
    assert all(isinstance(t, str) for t in queries.values())
    assert len(load_queries(scifact_dir / "queries.jsonl")) == 1109


def test_malformed_jsonl_names_file_and_line(tmp_path):
    p = tmp_path / "recs.jsonl"
    p.write_text('{"id": "a", "text": "ok"}\n\n{"id": "b", "text": broken}\n')
    with pytest.raises(InputError, match=r"recs\.jsonl:3: malformed JSON"):
        load_jsonl_corpus(p)
    p.write_text('{"id": "a"}\n')
    with pytest.raises(InputError, match=r"recs\.jsonl:1: record 'a' has no string 'text'"):
        load_jsonl_corpus(p)


def test_jsonl_with_edges_and_unknown_edge_id(tmp_path):
    p = tmp_path / "notes.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in [{"id": "a", "name": "A", "text": "x"},
                                                   {"id": "b", "title": "B", "text": "y"}]))
    (tmp_path / "notes.edges.tsv").write_text("source\ttarget\ttype\tweight\na\tb\tcites\t2.5\n")
    corpus = load_jsonl_corpus(p)
    assert corpus.records[0] == Record("a", "A", "x") and corpus.edges == [Edge("a", "b", "cites", 2.5)]
    (tmp_path / "notes.edges.tsv").write_text("a\tzzz\n")
    with pytest.raises(InputError, match="unknown record id 'zzz'"):
        load_jsonl_corpus(p)
    with pytest.raises(InputError, match="duplicate record id"):
        Corpus("dup", [Record("a", "", "x"), Record("a", "", "y")])


def test_qrels_unknown_record_id_and_missing_files(tmp_path):
    q = tmp_path / "qrels.tsv"
    q.write_text("query-id\tcorpus-id\tscore\n1\tdoc9\t1\n")
    with pytest.raises(InputError, match="unknown record id 'doc9'"):
        load_qrels(q, known_ids={"doc1"})
    assert load_qrels(q) == {"1": {"doc9": 1}}
    with pytest.raises(MissingDataError):
        beir_split(tmp_path / "nowhere")


def test_invalid_utf8_names_file_line_and_byte(tmp_path):
    p = tmp_path / "recs.jsonl"
    p.write_bytes(b'{"id": "a", "text": "ok"}\r\n{"id": "b", "text": "ok"}\n{"id": "c", "text": "\xe9"}\n')
    with pytest.raises(InputError, match=r"recs\.jsonl:3: invalid UTF-8 \(byte 0xe9"):
        load_jsonl_corpus(p)
    q = tmp_path / "qrels.tsv"
    q.write_bytes(b"q1\td1\t1\nq2\td\xff\t1\n")
    with pytest.raises(InputError, match=r"qrels\.tsv:2: invalid UTF-8"):
        load_qrels(q)


def test_aliases_are_a_list_of_strings_or_nothing():
    assert record_from_json({"id": "a", "text": "x", "aliases": ["b", "c"]}, "w").aliases == ("b", "c")
    assert record_from_json({"id": 7, "text": "x", "aliases": None}, "w") == Record("7", "", "x")
    for bad in (5, "abc", ["ok", None], {"a": "b"}):
        with pytest.raises(InputError, match=r"w: record 'a': 'aliases' must be a list of strings"):
            record_from_json({"id": "a", "text": "x", "aliases": bad}, "w")


def test_tab_separated_form_keeps_spaces_in_ids(tmp_path):
    q = tmp_path / "qrels.tsv"
    q.write_text("query-id\tcorpus-id\tscore\nq 1\tlisp machine\t1\r\nq 1\tlisp\t0\n")
    assert read_qrels(q) == ({"q 1": {"lisp machine": 1, "lisp": 0}}, "tab-separated")
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    assert read_qrels(q) == ({"q1": {"d1": 1, "d2": 0}}, "whitespace-separated")
    e = tmp_path / "e.tsv"
    e.write_text("source\ttarget\nlisp machine\tlisp\tsee also\n")
    edges, form = read_edges(e)
    assert edges == [Edge("lisp machine", "lisp", "see also")] and form == "tab-separated"
    e.write_text("a b cites 2\nb a\n")
    assert read_edges(e) == ([Edge("a", "b", "cites", 2.0), Edge("b", "a")], "whitespace-separated")
    e.write_text("lisp machine\tlisp\nb a\n")
    with pytest.raises(InputError, match=r"e\.tsv:1: field 'lisp machine' holds a space, but line 2 has no tab"):
        read_edges(e)


def test_duplicate_query_id_and_conflicting_judgement(tmp_path):
    p = tmp_path / "queries.jsonl"
    p.write_text('{"_id": "1", "text": "a"}\n{"_id": 1, "text": "b"}\n')
    with pytest.raises(InputError, match=r"queries\.jsonl:2: duplicate query id '1' \(also on line 1\)"):
        load_queries(p)
    q = tmp_path / "qrels.tsv"
    q.write_text("1\td1\t1\n1\td1\t1\n")
    assert load_qrels(q) == {"1": {"d1": 1}}  # the same judgement twice is harmless
    q.write_text("1\td1\t1\n1\td1\t2\n")
    with pytest.raises(InputError, match=r"qrels\.tsv:2: query '1' judges record 'd1' 2, but line 1 judged it 1"):
        load_qrels(q)
