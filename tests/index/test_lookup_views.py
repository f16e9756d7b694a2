"""Views of a word: a sense scored by its gloss, its names and its hypernyms' names (hand-computed toy ranks)."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.index.lookup import DEFAULT_VIEWS, default_views
from sidelight.index.views import Views, combine, hypernym_texts, names_text, view_cosines, view_vectors
from sidelight.structures.dense import DenseStore

IDENTITY = {"name": "toy-views", "dim": 4}
E = np.eye(4, dtype=np.float32)
QUERY = "a loyal pet that barks"
# gloss vectors (cosine with the query e0 in the comment)
GLOSS = np.array([[0, 0.6, 0.8, 0],  # n:1 pooch, doggy: 0
                  [0.8, 0.6, 0, 0],  # n:2 cat: 0.8
                  [0, 0, 1, 0],  # n:3 terrier (hypernym n:1): 0
                  [0.28, 0, 0, 0.96]], dtype=np.float32)  # n:4 pebble: 0.28
TEXTS = {QUERY: E[0], "pooch, doggy": E[0], "cat": E[1], "terrier": E[2], "pebble": E[3]}  # names cosines 1, 0, 0, 0
SENSES = [Record("n:1", "pooch", "a dog", {"pos": "noun", "word_counts": [1, 1]}, ("doggy",)),
          Record("n:2", "cat", "a small feline", {"pos": "noun", "word_counts": [1]}),
          Record("n:3", "terrier", "a small lively breed", {"pos": "noun", "word_counts": [1]}),
          Record("n:4", "pebble", "a small stone", {"pos": "noun", "word_counts": [1]})]


class ToyEmbedder:
    """Encodes the texts of `TEXTS` to their hand-set vectors and counts the texts it was asked for."""

    identity = IDENTITY
    batch_invariant = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts, batch_size=32, kind="doc", progress=False):
        self.asked += list(texts)
        return np.array([TEXTS[t] for t in texts], dtype=np.float32)


@pytest.fixture
def toy(tmp_path, monkeypatch) -> Index:
    monkeypatch.setenv("SIDELIGHT_CACHE", str(tmp_path / "cache"))
    index = Index.build(Corpus("toy-dict", SENSES, [Edge("n:3", "n:1", "hypernym"), Edge("n:1", "n:3", "hyponym")]),
                        progress=False)
    index.dense = DenseStore(GLOSS.copy(), IDENTITY, "toy", _embedder=ToyEmbedder())  # type: ignore[arg-type]
    return index


def ranked(index: Index, views, k: int = 10) -> list[tuple[str, float]]:
    return [(w.id, round(w.score, 4)) for w in index.lookup(QUERY, k, "dense", prior=0, views=views)]


def test_view_texts_are_the_names_and_the_hypernyms_names(toy):
    assert [names_text(r) for r in SENSES] == ["pooch, doggy", "cat", "terrier", "pebble"]
    assert hypernym_texts(toy.corpus) == ["", "", "pooch, doggy", ""]  # the hyponym edge is not a hypernym


def test_views_off_rank_by_the_gloss_alone_as_before(toy):
    # 0.8 cat, 0.28 pebble, then the two senses at 0 by ascending id: n:1 (pooch, doggy), n:3 terrier
    before = [("cat", 0.8), ("pebble", 0.28), ("pooch", 0.0), ("doggy", 0.0), ("terrier", 0.0)]
    assert ranked(toy, None) == ranked(toy, Views()) == ranked(toy, {"names": 0, "hypernyms": 0}) == before
    assert [(h.id, round(h.score, 4)) for h in toy.search(QUERY, "dense", 4)] == \
        [("n:2", 0.8), ("n:4", 0.28), ("n:1", 0.0), ("n:3", 0.0)]  # the oracle: the dense method's own ranking
    assert DEFAULT_VIEWS == Views() and default_views(toy, "dense") == Views()  # off unless chosen


def test_a_word_found_only_through_its_names_view(toy):
    # names 1: pooch 0 + 1 * 1 = 1.0 > cat 0.8 + 0 > pebble 0.28 > terrier 0: pooch from rank 3 to 1
    assert ranked(toy, Views(names=1)) == [("pooch", 1.0), ("doggy", 1.0), ("cat", 0.8), ("pebble", 0.28),
                                           ("terrier", 0.0)]
    assert [w for w, _ in ranked(toy, Views(names=1), k=1)] == ["pooch"]
    assert "pooch" not in [w for w, _ in ranked(toy, None, k=2)]


def test_a_word_found_only_through_its_hypernyms_names(toy):
    # hypernyms 1 (a sense without one takes its gloss): cat 0.8 + 0.8 = 1.6, terrier 0 + 1 = 1.0,
    # pebble 0.28 + 0.28 = 0.56, pooch 0 + 0 = 0: terrier from rank 5 to 2
    assert ranked(toy, Views(hypernyms=1)) == [("cat", 1.6), ("terrier", 1.0), ("pebble", 0.56), ("pooch", 0.0),
                                               ("doggy", 0.0)]
    # both at 1: cat 1.6; pooch 1.0 and terrier 1.0 tie, n:1 before n:3 by id; pebble 0.56
    assert ranked(toy, "names=1,hypernyms=1") == [("cat", 1.6), ("pooch", 1.0), ("doggy", 1.0), ("terrier", 1.0),
                                                  ("pebble", 0.56)]
    # half weights: cat 0.8 + 0.4 = 1.2, pooch 0.5, terrier 0.5, pebble 0.42
    assert ranked(toy, Views(0.5, 0.5)) == [("cat", 1.2), ("pooch", 0.5), ("doggy", 0.5), ("terrier", 0.5),
                                            ("pebble", 0.42)]


def test_the_bench_rule_is_the_matrix_lookup_scores(toy):
    v = view_vectors(toy)
    g, n, h = view_cosines(v, GLOSS, E[0])
    assert g.tolist() == pytest.approx([0, 0.8, 0, 0.28]) and n.tolist() == [1, 0, 0, 0]
    assert h.tolist() == pytest.approx([0, 0.8, 1, 0.28])
    s = combine(g, n, h, Views(0.25, 0.5))
    got = {w.id: w.score for w in toy.lookup(QUERY, 10, "dense", prior=0, views=Views(0.25, 0.5))}
    assert got["pooch"] == pytest.approx(s[0]) and got["cat"] == pytest.approx(s[1])
    assert got["terrier"] == pytest.approx(s[2]) and got["pebble"] == pytest.approx(s[3])


def test_view_vectors_are_cached_by_content(toy, tmp_path):
    view_vectors(toy)
    emb = toy.dense.embedder()
    assert emb.asked == ["pooch, doggy", "cat", "terrier", "pebble", "pooch, doggy"]  # unique texts, once each
    assert len(list((tmp_path / "cache" / "lookup-views").iterdir())) == 2
    fresh = Index.build(toy.corpus, progress=False)
    fresh.dense = DenseStore(GLOSS.copy(), IDENTITY, "toy", _embedder=ToyEmbedder())  # type: ignore[arg-type]
    view_vectors(fresh)
    assert fresh.dense.embedder().asked == []  # read from the cache


def test_bad_views_are_refused_in_one_line(toy, tmp_path, capsys):
    for views, match in (({"names": -1}, "names must be"),
                         ("names=lots", "must be a number"), ({"gloss": 1}, "unknown view 'gloss'"),
                         ({"names": 11}, r"\[0, 10\]"), ({"names": True}, "names must be"), ([1], "views must be")):
        with pytest.raises(InputError, match=match):
            toy.lookup(QUERY, views=views)
    with pytest.raises(InputError, match="method dense"):
        toy.lookup(QUERY, method="bm25", views=Views(names=1))
    bare = Index.build(toy.corpus, progress=False)
    with pytest.raises(InputError, match="vectors"):
        bare.lookup(QUERY, method="dense", views={"names": 1})
    path = bare.save(tmp_path / "dict")
    assert main(["lookup", str(path), "light", "--names-view", "-1"]) == 2 and "names-view" in capsys.readouterr().err
    assert main(["lookup", str(path), "light", "--hypernyms-view", "0.5"]) == 2
    assert "views" in capsys.readouterr().err
