"""BEIR and JSONL loaders: what they read, what they ignore, and the errors they give."""

from __future__ import annotations

import json

import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.corpus.beir import beir_split, load_qrels, load_queries
from sidelight.corpus.jsonl import load_jsonl_corpus
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
