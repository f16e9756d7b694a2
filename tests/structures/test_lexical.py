"""BM25 and TF-IDF against peers (bm25s, scikit-learn) and hand-computed toy cases."""

from __future__ import annotations

import math

import bm25s
import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.structures.lexical import BM25Params, LexicalIndex
from sidelight.text import TokenizerConfig


def _bm25s_for(index: Index, method: str) -> bm25s.BM25:
    tok = index.lexical.tokenizer
    ret = bm25s.BM25(k1=1.2, b=0.75, method=method, dtype="float64")
    ret.index([tok(index.corpus.indexed_text(r)) for r in index.corpus.records], show_progress=False)
    return ret


def _query_tokens(index: Index, text: str) -> list[str]:
    return [t for t in dict.fromkeys(index.lexical.tokenizer(text)) if t in index.lexical.term_id]


@pytest.mark.parametrize("variant", ["lucene", "atire"])
def test_bm25_scores_equal_bm25s_on_scifact(scifact_corpus, scifact_test, variant):
    index = Index.build(scifact_corpus, params=BM25Params(variant=variant), progress=False)
    peer = _bm25s_for(index, variant)
    queries, _ = scifact_test
    for text in list(queries.values())[:60]:
        ours = index.lexical.bm25_scores(text)
        theirs = peer.get_scores(_query_tokens(index, text))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


def test_default_robertson_is_lucene_times_k1_plus_1(scifact_index, scifact_corpus, scifact_test):
    lucene = Index.build(scifact_corpus, params=BM25Params(variant="lucene"), progress=False)
    for text in list(scifact_test[0].values())[:20]:
        np.testing.assert_allclose(scifact_index.lexical.bm25_scores(text), 2.2 * lucene.lexical.bm25_scores(text),
                                   rtol=1e-12, atol=0)


def test_bm25_hand_computed():
    # Two docs: "a b" and "a a c"; N=2, avgdl=2.5, k1=1.2, b=0.75.
    corpus = Corpus("t", [Record("x", "", "a b"), Record("y", "", "a a c")])
    lex = Index.build(corpus, progress=False).lexical
    idf_a = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))
    idf_b = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    norm_x = 1.2 * (1 - 0.75 + 0.75 * 2 / 2.5)
    norm_y = 1.2 * (1 - 0.75 + 0.75 * 3 / 2.5)
    expect_x = idf_a * 1 * 2.2 / (1 + norm_x) + idf_b * 1 * 2.2 / (1 + norm_x)
    expect_y = idf_a * 2 * 2.2 / (2 + norm_y)
    np.testing.assert_allclose(lex.bm25_scores("a b"), [expect_x, expect_y], rtol=1e-12)


def test_query_terms_count_once(scifact_index):
    lex = scifact_index.lexical
    np.testing.assert_array_equal(lex.bm25_scores("vitamin vitamin d"), lex.bm25_scores("vitamin d"))


def test_ties_break_by_ascending_id_and_only_positive_scores(toy_corpus):
    index = Index.build(toy_corpus, progress=False)
    hits = index.search("cat mat", k=10)
    assert [h.id for h in hits[:2]] == ["d0", "d1"]  # identical records: d0 < d1 although d1 comes first
    assert hits[0].score == hits[1].score
    assert all(h.score > 0 for h in hits) and "d4" not in {h.id for h in hits}
    assert [h.id for h in index.search("fish", k=10)] == ["d4"]


def test_unknown_terms_give_empty_result_and_empty_query_is_an_error(toy_corpus):
    index = Index.build(toy_corpus, progress=False)
    assert index.search("zebra quagga", k=10) == []
    for bad in ("", "   "):
        with pytest.raises(InputError, match="empty query"):
            index.search(bad)


def test_tfidf_cosine_equals_sklearn(scifact_corpus, scifact_test):
    corpus = Corpus("sub", scifact_corpus.records[:800])
    index = Index.build(corpus, progress=False)
    tok = index.lexical.tokenizer
    vec = TfidfVectorizer(tokenizer=tok, lowercase=False, token_pattern=None, sublinear_tf=True,
                          smooth_idf=True, norm="l2")
    docs = vec.fit_transform([corpus.indexed_text(r) for r in corpus.records])
    for text in list(scifact_test[0].values())[:40]:
        q = vec.transform([" ".join(dict.fromkeys(tok(text)))])
        expected = (docs @ q.T).toarray().ravel()
        np.testing.assert_allclose(index.lexical.tfidf_scores(text), expected, rtol=0, atol=1e-12)


def test_stopwords_and_stemming_change_terms():
    lex = LexicalIndex.build(["The runners were running"], TokenizerConfig(stopwords="lucene-en-v1", stem="english"))
    assert sorted(lex.vocab) == ["run", "runner", "were"]


@pytest.mark.parametrize("config", [TokenizerConfig(), TokenizerConfig(min_length=2, stopwords="nltk-en-v1", stem="english")])
def test_fast_counting_equals_the_tokenizer_text_by_text(config):
    from collections import Counter

    from sidelight.text import Tokenizer

    rng = np.random.default_rng(3)
    alphabet = list("abcXYZ019 .,-_é£ßİ\t\n") + ["the ", "running ", "naïve ", "Ünïcode "]
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 60))) for _ in range(300)]
    lex = LexicalIndex.build(texts, config)
    tok = Tokenizer(config)
    for row, text in enumerate(texts):
        got = {lex.vocab[j]: int(c) for j, c in zip(lex.tf[row].indices, lex.tf[row].data)}
        assert got == dict(Counter(tok(text)))


@pytest.mark.parametrize("config", [TokenizerConfig(), TokenizerConfig(min_length=3, stopwords="lucene-en-v1", stem="english")])
def test_a_batch_of_words_gets_the_terms_the_tokenizer_gives_each(config):
    from sidelight.text import Tokenizer

    words = ["the", "running", "a", "runners", "x1", "0", "naive", "the", "studies", "is", "running", "abc123"]
    one_by_one = Tokenizer(config)
    assert Tokenizer(config).terms_of_words(words) == [(one_by_one(w) or [None])[0] for w in words]
