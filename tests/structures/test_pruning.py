"""Exact top-k with MaxScore pruning (used from 32,768 records on) equals full scoring."""

from __future__ import annotations

import numpy as np

from sidelight.structures import lexical, lexical_store
from sidelight.structures.lexical import LexicalIndex
from sidelight.structures.ranking import top_k


def test_pruned_top_k_equals_full_scoring():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(3000)]
    zipf = 1.0 / np.arange(1, len(words) + 1)
    zipf /= zipf.sum()
    n = lexical_store.PRUNE_MIN_DOCS + 1000
    lengths = rng.integers(5, 40, size=n)
    draws = rng.choice(len(words), size=int(lengths.sum()), p=zipf)
    texts, pos = [], 0
    for L in lengths:
        texts.append(" ".join(words[i] for i in draws[pos:pos + L]))
        pos += L
    texts[5] = texts[6]  # an exact tie
    lex = LexicalIndex.build(texts)
    id_rank = rng.permutation(n)
    for qi in range(40):
        q = " ".join(words[i] for i in rng.choice(len(words), size=rng.integers(1, 8), p=zipf))
        for k in (1, 10, 100):
            pruned = lex.bm25_top(q, k, id_rank)
            full = top_k(lex.bm25_scores(q), k, id_rank)
            assert pruned.positions.tolist() == full.positions.tolist()
            assert np.array_equal(pruned.scores, full.scores)


def test_pruned_top_k_when_every_record_is_touched():
    """Two query terms cover all records between them and a third adds to every other one: the
    pruned kernel's list of touched records is full before the last postings are read (hand-made:
    every record has two tokens, every term a df of n/2, so all weights tie)."""
    n = lexical_store.PRUNE_MIN_DOCS + 2
    texts = [("a " if i < n // 2 else "b ") + ("c" if i % 2 == 0 else "d") for i in range(n)]
    lex = LexicalIndex.build(texts)
    id_rank = np.arange(n)[::-1].copy()
    for _ in range(lexical._kernels.WARM_AFTER + 1):  # past the gate: the compiled kernel when numba is installed
        lex.bm25_top("a b c", 10, id_rank)
    for k in (1, 10, n):
        pruned = lex.bm25_top("a b c", k, id_rank)
        full = top_k(lex.bm25_scores("a b c"), k, id_rank)
        assert pruned.positions.tolist() == full.positions.tolist()
        assert np.array_equal(pruned.scores, full.scores)
    even = np.arange(0, n, 2)  # a or b, plus c: the best records; ties by id_rank, the highest positions first
    assert lex.bm25_top("a b c", 3, id_rank).positions.tolist() == even[::-1][:3].tolist()
