"""Fuzzing the loaders: any bytes, any JSON lines give either a valid result or a SidelightError, never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidelight.corpus import Corpus
from sidelight.corpus.beir import load_queries, read_qrels
from sidelight.corpus.jsonl import load_jsonl_corpus, read_edges
from sidelight.errors import SidelightError

FUZZ = settings(max_examples=100, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))

# text made of the characters that matter to the parsers: separators, digits, quotes, braces, odd code points
_CHARS = st.sampled_from(list("ab q1n2 \t\t\n\n\r{}[]\":,.-+eE0_") + ["\x00", "\u00e9", "\u2028", "\ufeff", "\U0001f600"])
TEXTISH = st.lists(_CHARS, max_size=120).map("".join)
BYTES = st.one_of(st.binary(max_size=200), TEXTISH.map(lambda s: s.encode("utf-8")),
                  st.tuples(TEXTISH, st.binary(min_size=1, max_size=3), TEXTISH)
                  .map(lambda t: t[0].encode() + t[1] + t[2].encode()))

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**30), st.floats(allow_nan=False),
                    st.sampled_from(["", "a", "b", "n1", "a b", "x\ty"]), st.text(max_size=8))
JSON_VALUE = st.recursive(_SCALAR, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                          st.dictionaries(st.text(max_size=4), kids, max_size=3)),
                          max_leaves=8)
_KEYS = st.sampled_from(["id", "_id", "text", "title", "name", "aliases", "metadata", "other"])
JSON_OBJECT = st.dictionaries(_KEYS, JSON_VALUE, max_size=6)
JSON_LINES = st.lists(st.one_of(JSON_OBJECT.map(json.dumps), JSON_VALUE.map(json.dumps), TEXTISH),
                      max_size=6).map(lambda lines: ("\n".join(lines) + "\n").encode("utf-8"))


def _write(data: bytes, name: str) -> tuple[tempfile.TemporaryDirectory, Path]:
    tmp = tempfile.TemporaryDirectory()
    path = Path(tmp.name) / name
    path.write_bytes(data)
    return tmp, path


def _only_sidelight_errors(load, data: bytes, name: str):
    """Run `load(path)`; return its result, or None when it raised a SidelightError."""
    tmp, path = _write(data, name)
    try:
        with tmp:
            return load(path)
    except SidelightError as exc:
        assert str(exc), "an error must say something"
        return None


def _check_corpus(corpus: Corpus | None) -> None:
    if corpus is None:
        return
    ids = set(corpus.ids)
    assert len(ids) == len(corpus.records)
    for r in corpus.records:
        assert isinstance(r.id, str) and r.id and isinstance(r.title, str) and isinstance(r.text, str)
        assert isinstance(r.metadata, dict) and all(isinstance(a, str) for a in r.aliases)
    for e in corpus.edges:
        assert e.source in ids and e.target in ids and e.weight > 0
    corpus.content_hash()


def _load_corpus_with_edges(edges: bytes):
    def load(path: Path) -> Corpus:
        path.with_suffix(".edges.tsv").write_bytes(edges)
        return load_jsonl_corpus(path)
    return load


def _check_qrels(result) -> None:
    if result is None:
        return
    qrels, form = result
    assert form in ("tab-separated", "whitespace-separated")
    for qid, docs in qrels.items():
        assert isinstance(qid, str) and qid
        assert all(isinstance(d, str) and d and isinstance(g, int) for d, g in docs.items())


def _check_queries(queries) -> None:
    if queries is not None:
        assert all(isinstance(q, str) and q and isinstance(t, str) for q, t in queries.items())


@FUZZ
@given(st.one_of(BYTES, JSON_LINES), st.one_of(BYTES, st.just(b"n1\tn2\n")))
def test_jsonl_corpus_loader(records, edges):
    _check_corpus(_only_sidelight_errors(_load_corpus_with_edges(edges), records, "recs.jsonl"))


@FUZZ
@given(BYTES)
def test_edges_loader(data):
    result = _only_sidelight_errors(read_edges, data, "e.edges.tsv")
    if result is not None:
        edges, form = result
        assert form in ("tab-separated", "whitespace-separated")
        assert all(e.source and e.target and e.weight > 0 for e in edges)


@FUZZ
@given(st.one_of(BYTES, JSON_LINES))
def test_queries_loader(data):
    _check_queries(_only_sidelight_errors(load_queries, data, "queries.jsonl"))


@FUZZ
@given(BYTES, st.booleans())
def test_qrels_loader(data, with_ids):
    known = {"a", "b", "n1", "a b"} if with_ids else None
    _check_qrels(_only_sidelight_errors(lambda p: read_qrels(p, known), data, "qrels.tsv"))


@pytest.mark.parametrize("data", [b"", b"\n\n", b"\xff\xfe", b"query-id\tcorpus-id\tscore\n", "1" * 5000 + "\n",
                                  b"[" * 100_000 + b"\n", b'{"id": "a", "text": "x", "aliases": "abc"}\n'])
def test_known_awkward_inputs(data):
    data = data.encode() if isinstance(data, str) else data
    _check_corpus(_only_sidelight_errors(load_jsonl_corpus, data, "r.jsonl"))
    _check_queries(_only_sidelight_errors(load_queries, data, "q.jsonl"))
    _check_qrels(_only_sidelight_errors(read_qrels, data, "qrels.tsv"))
    _only_sidelight_errors(read_edges, data, "e.tsv")
