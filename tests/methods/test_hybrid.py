"""Hybrid methods on hand-made toys: RRF, linear fusion, RM3 and dense PRF computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.lab.evaluate import evaluate_method
from sidelight.methods import get_method
from sidelight.methods.hybrid import lexical_variant, normalise, rm3_query
from sidelight.structures.dense import DenseStore

IDENTITY = {"name": "toy", "dim": 2}


def toy_index(vectors, query_vectors) -> Index:
    records = [Record("r1", "Alpha", "cat cat cat"), Record("r2", "Beta", "cat dog"),
               Record("r3", "Gamma", "dog bird"), Record("r4", "Delta", "fish")]
    index = Index.build(Corpus("toy", records), progress=False)
    index.dense = DenseStore(vectors=np.asarray(vectors, dtype=np.float32), identity=IDENTITY, spec="toy")
    index.dense.encode_query = lambda text: np.asarray(query_vectors[text], dtype=np.float32)
    return index


@pytest.fixture
def index() -> Index:
    # cosine with the query [1, 0]: r1 0, r2 0.6, r3 1, r4 0.8 -> dense ranks r3, r4, r2, r1
    return toy_index([[0, 1], [0.6, 0.8], [1, 0], [0.8, -0.6]], {"cat": [1, 0]})


def test_rrf_hand_computed(index):
    # BM25 "cat": r1 (tf 3) before r2 (tf 1); r3, r4 never match
    hits = index.search("cat", method="rrf", k=10)
    assert [h.id for h in hits] == ["r1", "r2", "r3", "r4"]
    expected = [1 / 61 + 1 / 64, 1 / 62 + 1 / 63, 1 / 61, 1 / 62]
    np.testing.assert_allclose([h.score for h in hits], expected, rtol=1e-12)


def test_weighted_rrf_hand_computed(index):
    hits = index.search("cat", method="rrf", k=10, weights=(1.0, 2.0))
    assert [h.id for h in hits] == ["r2", "r1", "r3", "r4"]
    np.testing.assert_allclose([h.score for h in hits], [1 / 62 + 2 / 63, 1 / 61 + 2 / 64, 2 / 61, 2 / 62],
                               rtol=1e-12)


def test_rrf_ties_by_ascending_id():
    # identical vectors and no lexical match for "zebra": all records tie -> ascending id
    index = toy_index([[1, 0]] * 4, {"zebra": [1, 0]})
    assert [h.id for h in index.search("zebra", method="rrf", k=4)] == ["r1", "r2", "r3", "r4"]
    with pytest.raises(InputError):
        index.search("zebra", method="rrf", weights=(1.0,))


def test_normalisations_hand_computed():
    x = np.array([0.0, 1.0, 3.0])
    np.testing.assert_allclose(normalise(x, "minmax"), [0, 1 / 3, 1])
    sd = np.sqrt(((0 - 4 / 3) ** 2 + (1 - 4 / 3) ** 2 + (3 - 4 / 3) ** 2) / 3)
    np.testing.assert_allclose(normalise(x, "zscore"), [(v - 4 / 3) / sd for v in x])
    assert normalise(np.ones(3), "zscore").tolist() == [0, 0, 0]
    with pytest.raises(InputError):
        normalise(x, "rank")


def test_hybrid_linear_minmax(index):
    bm = index.lexical.bm25_scores("cat")  # [s1, s2, 0, 0], s1 > s2 > 0
    s1, s2 = bm[0], bm[1]
    # minmax cosine [0, .6, 1, .8] stays as is; minmax BM25 is [1, s2/s1, 0, 0]
    want = {"r1": 0.5 * 1 + 0.5 * 0, "r2": 0.5 * s2 / s1 + 0.5 * 0.6, "r3": 0.5, "r4": 0.4}
    hits = index.search("cat", method="hybrid-linear", k=4, norm="minmax", alpha=0.5)
    assert {h.id: h.score for h in hits} == pytest.approx(want, rel=1e-6)


def test_dense_prf_rocchio_by_hand(index):
    # top-2 dense: r3 [1,0], r4 [.8,-.6]; centroid [.9,-.3]; q' ∝ .5[1,0] + .5[.9,-.3] = [.95, -.15]
    n = np.sqrt(0.95 ** 2 + 0.15 ** 2)
    hits = index.search("cat", method="dense-prf", k=4, dense_prf_docs=2, dense_prf_weight=0.5)
    want = {"r3": 0.95 / n, "r4": (0.76 + 0.09) / n, "r2": (0.57 - 0.12) / n, "r1": -0.15 / n}
    assert [h.id for h in hits] == ["r3", "r4", "r2", "r1"]
    assert {h.id: h.score for h in hits} == pytest.approx(want, rel=1e-6)
    # with no feedback documents it is plain dense
    assert [h.id for h in index.search("cat", method="dense-prf", k=4, dense_prf_docs=0)] == \
        [h.id for h in index.search("cat", method="dense", k=4)]


def test_rm3_weights_by_hand():
    records = [Record("a0", "", "cat whisker whisker"), Record("a1", "", "cat purr")]
    records += [Record(f"f{i}", "", f"filler{i}") for i in range(8)]
    index = Index.build(Corpus("rm3", records), progress=False)
    lex = index.lexical
    s = lex.bm25_scores("cat")
    s0, s1 = s[0], s[1]
    terms, w = rm3_query(lex, "cat", index.id_rank, fb_docs=2, fb_terms=2, orig_weight=0.5)
    got = {lex.vocab[t]: x for t, x in zip(terms, w)}
    # "cat" occurs in 2 of 10 records (> 10%): dropped from feedback, kept in the original query
    whisker, purr = 2 * s0 / 3, s1 / 2
    want = {"cat": 0.5, "whisker": 0.5 * whisker / (whisker + purr), "purr": 0.5 * purr / (whisker + purr)}
    assert got == pytest.approx(want, rel=1e-12)
    # the method ranks by the expanded query: a1 (cat, purr) and a0 (cat, whisker) only
    hits = index.search("cat", method="bm25+rm3", k=10, fb_docs=2, fb_terms=2)
    assert {h.id for h in hits} == {"a0", "a1"}
    assert rm3_query(lex, "cat", index.id_rank, fb_docs=0)[1].tolist() == [1.0]


def test_lexical_variant_stems_and_is_cached(index):
    assert index.search("cats", method="bm25") == []
    hits = index.search("cats", method="bm25+rm3", rm3=False, stopwords="lucene-en-v1", stem="english")
    assert [h.id for h in hits] == ["r1", "r2"]
    v = lexical_variant(index, "lucene-en-v1", "english")
    assert lexical_variant(index, "lucene-en-v1", "english") is v
    assert lexical_variant(index) is index.lexical
    assert lexical_variant(index, title_weight=2) is not index.lexical


def test_best_is_an_alias_with_its_pipeline_in_params(index):
    best = get_method("best")
    assert best.params["pipeline"] in {"rrf", "hybrid-linear", "learned", "bm25+rm3", "dense-prf"}
    res = evaluate_method(index, best, {"q": "cat"}, {"q": {"r2": 1}}, ["ndcg@10"], progress=False)
    assert res.to_json()["params"]["pipeline"] == best.params["pipeline"]
    name = best.params["pipeline"]
    target = get_method(name, **{k: v for k, v in best.params.items() if k != "pipeline"})
    assert [h.id for h in index.search("cat", method="best")] == \
        [index.ids[p] for p in target.rank(index, "cat", 10).positions]
    with pytest.raises(InputError):
        index.search("cat", method="best", pipeline="no-such-method")
