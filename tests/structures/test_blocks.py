"""The block build writes the very files the in-memory build saves (SciFact and FOLDOC, several
blocks and term ranges, other tokenizers and BM25 variants), and `Index.write` the same folder
as `Index.build(...).save(...)`."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.corpus.foldoc import load_foldoc
from sidelight.index import Index, store
from sidelight.structures import kernels
from sidelight.structures.blocks import build_lexical_folder
from sidelight.structures.lexical import BM25Params, LexicalIndex
from sidelight.text import TokenizerConfig


def _same_files(a, b, skip=()):
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    differ = [n for n in names if n not in skip and (a / n).read_bytes() != (b / n).read_bytes()]
    assert differ == []


@pytest.fixture(scope="module")
def foldoc_texts():
    c = load_foldoc()
    return [c.indexed_text(r) for r in c.records]


@pytest.mark.parametrize("block,budget,compiled", [(4096, 1 << 24, True), (1000, 150_000, True),
                                                   (1000, 150_000, False), (1, 10_000_000, True)])
def test_blocks_write_the_files_of_the_in_memory_build_scifact(tmp_path, scifact_corpus, block, budget, compiled,
                                                               monkeypatch):
    """With numba (when installed) and on the numpy path (`compiled=False`)."""
    if not compiled:
        monkeypatch.setattr(kernels, "enabled", lambda: False)
    texts = [scifact_corpus.indexed_text(r) for r in scifact_corpus.records]
    if block == 1:
        texts = texts[:300]
    meta = LexicalIndex.build(texts).save(tmp_path / "memory")
    assert build_lexical_folder(texts, tmp_path / "blocks", block=block, budget=budget) == meta
    _same_files(tmp_path / "memory", tmp_path / "blocks")


@pytest.mark.parametrize("tok,params", [
    (TokenizerConfig(), BM25Params()),
    (TokenizerConfig(min_length=2, stopwords="lucene-en-v1", stem="english"), BM25Params(0.9, 0.4, "atire")),
    (TokenizerConfig(), BM25Params(variant="lucene")),
])
def test_blocks_write_the_files_of_the_in_memory_build_foldoc(tmp_path, foldoc_texts, tok, params):
    texts = foldoc_texts * 3  # past the size from which top-k prunes: dense rows of common terms too
    meta = LexicalIndex.build(texts, tok, params).save(tmp_path / "memory")
    assert build_lexical_folder(texts, tmp_path / "blocks", tok, params, block=20_000, budget=3_000_000) == meta
    _same_files(tmp_path / "memory", tmp_path / "blocks")
    opened = LexicalIndex.load(tmp_path / "blocks", meta, len(texts))
    assert opened.store.dense.shape[0] > 0
    memory = LexicalIndex.build(texts, tok, params)
    ids = np.arange(len(texts))
    for q in ("a language for lisp machines", "the protocol of the internet", "unix"):
        a, b = opened.bm25_top(q, 10, ids), memory.bm25_top(q, 10, ids)
        assert np.array_equal(a.positions, b.positions) and np.array_equal(a.scores, b.scores)


def test_an_empty_corpus_and_empty_records(tmp_path):
    for texts in ([], ["", "the", ""]):
        folder = tmp_path / str(len(texts))
        meta = LexicalIndex.build(texts).save(folder.with_suffix(".m"))
        assert build_lexical_folder(texts, folder) == meta
        _same_files(folder.with_suffix(".m"), folder)


def test_index_write_equals_build_then_save(tmp_path, toy_corpus):
    built = Index.build(toy_corpus, progress=False).save(tmp_path / "a")
    written = Index.write(toy_corpus, tmp_path / "b", progress=False)
    _same_files(store.data_folder(built), store.data_folder(written.path), skip={"manifest.json"})
    assert written.search("lisp", k=5) == Index.load(built).search("lisp", k=5)
    assert Index.write(Corpus("one", [Record("x", "X", "words")]), tmp_path / "c", progress=False).search(
        "words").ids == ["x"]
