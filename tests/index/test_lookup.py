"""Describe it, find it: words ranked by their best sense; the metadata filter on every method."""

from __future__ import annotations

import json

import anyio
import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Edge, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.index.lookup import DEFAULT_PRIOR, default_lookup_method, default_prior, rank_words, word_ranking
from sidelight.methods import get_method, method_specs
from sidelight.structures.dense import DenseStore

from tests.methods.test_hybrid import IDENTITY

SENSES = [  # a toy dictionary: one record per sense, the words as title and aliases
    Record("n:1", "beacon", "a tower with a light that warns ships", {"pos": "noun", "word_counts": [3, 40, 0]},
           ("lighthouse", "pharos")),
    Record("n:2", "lamp", "a device that gives light", {"pos": "noun"}, ("Lamp",)),
    Record("v:3", "beacon", "shine like a light that warns", {"pos": "verb"}),
    Record("a:4", "bright", "emitting much light", {"pos": "adjective"}, ("brilliant",)),
    Record("a:5", "aglow", "softly bright with light", {"pos": "adjective satellite"}),
]


@pytest.fixture
def dictionary() -> Index:
    return Index.build(Corpus("dict", SENSES, [Edge("n:1", "n:2"), Edge("a:5", "a:4", "similar-to")]), progress=False)


def test_a_word_scores_its_best_sense_and_lists_every_sense(dictionary):
    senses = dictionary.search("light that warns ships", k=10)
    words = dictionary.lookup("light that warns ships", k=10, prior=0)  # these senses carry counts: the default prior would re-score
    best = {}
    for h in senses:  # the oracle: every word of every ranked sense, first (best) score wins
        rec = dictionary.corpus.records[dictionary.corpus.position[h.id]]
        for w in (rec.title, *rec.aliases):
            best.setdefault(w.lower(), h.score)
    assert [(w.id.lower(), w.score) for w in words] == list(best.items())
    beacon = next(w for w in words if w.id == "beacon")
    assert [s["id"] for s in beacon["synsets"]] == [h.id for h in senses if h.id in ("n:1", "v:3")]
    assert beacon["synsets"][0]["gloss"] == "a tower with a light that warns ships"
    assert [w.id for w in words].count("lamp") + [w.id for w in words].count("Lamp") == 1  # case variants once
    assert [w.rank for w in words] == list(range(1, len(words) + 1))


def test_the_frequency_prior_reorders_the_first_pool_words_by_hand():
    tower = Record("n:1", "tower", "", {"word_counts": [0, 5]}, ("lighthouse",))
    ranked = [(tower, 0.9), (Record("n:2", "beacon", "", {"word_counts": [20]}), 0.85), (Record("n:3", "pharos", ""), 0.8)]
    order = lambda words: [(w.word, round(w.score, 4)) for w in words]  # noqa: E731
    assert order(rank_words(ranked, 10)) == [("tower", 0.9), ("lighthouse", 0.9), ("beacon", 0.85), ("pharos", 0.8)]
    # min-max over the pool: tower, lighthouse 1, beacon 0.5, pharos 0; prior part W ln(1+c) / ln 21:
    # lighthouse 1 + 0.1 ln 6 / ln 21 = 1.0589, beacon 0.5 + 0.1 = 0.6
    assert order(rank_words(ranked, 10, 0.1)) == [("lighthouse", 1.0589), ("tower", 1.0), ("beacon", 0.6),
                                                  ("pharos", 0.0)]
    # W = 0.6: lighthouse 1 + 0.6 ln 6 / ln 21 = 1.3531 > beacon 0.5 + 0.6 = 1.1 > tower 1
    assert [w.word for w in rank_words(ranked, 10, 0.6)] == ["lighthouse", "beacon", "tower", "pharos"]
    # a pool of 2 (tower, lighthouse: equal scores, min-max part 0; max count 5 in it): beacon stays behind
    assert order(rank_words(ranked, 2, 0.1)) == [("lighthouse", 0.1), ("tower", 0.0), ("beacon", 0.85),
                                                 ("pharos", 0.8)]
    assert word_ranking(ranked, 2, "Pharos", 0.1) == (["lighthouse", "tower"], 4)


def test_one_prior_weight_means_the_same_whatever_the_score_scale():
    recs = [Record("n:1", "tower", "", {"word_counts": [1]}), Record("n:2", "beacon", "", {"word_counts": [30]}),
            Record("n:3", "pharos", "", {"word_counts": [0]})]
    for scale, shift in ((1.0, 0.0), (0.01, 0.5), (40.0, -3.0)):  # cosines, RRF-sized, BM25-sized
        ranked = [(r, shift + scale * s) for r, s in zip(recs, (1.0, 0.8, 0.1))]
        assert [w.word for w in rank_words(ranked, 10, 0.3)] == ["beacon", "tower", "pharos"]  # 0.78+0.3 > 1+0.06
        assert [w.word for w in rank_words(ranked, 10, 0.1)] == ["tower", "beacon", "pharos"]  # 1.02 > 0.88


def test_a_prior_on_a_dictionary_without_frequencies_is_refused():
    index = Index.build(Corpus("bare", [Record("n:1", "beacon", "a light that warns ships")]), progress=False)
    with pytest.raises(InputError, match="word_counts"):
        index.lookup("light", prior=0.01)
    assert [w.id for w in index.lookup("light")] == ["beacon"]  # the default prior is off without counts


def test_a_dictionary_index_defaults_to_its_methods_prior_and_bm25_without_vectors():
    recs = [Record("n:1", "pharos", "a light tower", {"word_counts": [0]}),
            Record("n:2", "lighthouse", "a tower with a light", {"word_counts": [9]})]
    index = Index.build(Corpus("dict", recs), progress=False)
    assert default_lookup_method(index) == "bm25"
    assert (default_prior(index, "bm25"), default_prior(index, "dense"), default_prior(index, "rrf-lexical")) == \
        (0.0, DEFAULT_PRIOR, DEFAULT_PRIOR)
    scores = lambda res: [(w.id, w.score) for w in res]  # noqa: E731
    assert index.lookup("light tower").method == "bm25"
    assert scores(index.lookup("light tower")) == scores(index.lookup("light tower", prior=0))
    on = index.lookup("light tower", method="rrf-lexical")
    assert scores(on) == scores(index.lookup("light tower", method="rrf-lexical", prior=DEFAULT_PRIOR))
    assert scores(on) != scores(index.lookup("light tower", method="rrf-lexical", prior=0))


def test_part_of_speech_filter_counts_satellites_as_adjectives(dictionary):
    words = dictionary.lookup("light", k=10, pos="adjective")
    assert {w.id for w in words} == {"bright", "brilliant", "aglow"}
    assert {w.id for w in dictionary.lookup("light", k=10, pos="verb")} == {"beacon"}
    assert len(dictionary.lookup("light", k=2)) == 2
    with pytest.raises(InputError, match="pos must be one of"):
        dictionary.lookup("light", pos="pronoun")


def _toy_dense(index: Index) -> Index:
    rng = np.random.default_rng(7)
    v = rng.normal(size=(len(index.corpus), 4)).astype(np.float32)
    index.dense = DenseStore(v / np.linalg.norm(v, axis=1, keepdims=True), IDENTITY, "toy")
    index.dense.encode_query = lambda text: v[len(text) % len(v)]
    return index


@pytest.mark.parametrize("method", sorted(s.name for s in method_specs() if not {"ann"} & set(s.needs)
                                          and s.name != "floor"))
def test_the_filter_restricts_every_method_to_matching_records(dictionary, method):
    index = _toy_dense(dictionary)
    where = {"pos": ("adjective", "adjective satellite")}
    full = index.rank(get_method(method), "light that warns", None)
    admitted = [p for p in full.positions.tolist() if index.corpus.records[p].metadata["pos"] in where["pos"]]
    got = index.search("light that warns", method, 1, where=where)
    assert [index.corpus.position[h.id] for h in got] == admitted[:1]
    assert [h.id for h in index.search("light that warns", method, 10, where={"pos": "noun"})] == \
        [index.ids[p] for p in full.positions if index.corpus.records[p].metadata["pos"] == "noun"][:10]


def test_lookup_and_filter_from_the_cli_http_and_mcp(dictionary, tmp_path, capsys):
    from mcp import Client
    from starlette.testclient import TestClient

    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service
    from sidelight.serve.mcp_server import build_server

    path = dictionary.save(tmp_path / "dict")
    assert main(["lookup", str(path), "light that warns ships", "-k", "2", "--prior", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == "light that warns ships" and [r["word"] for r in out["results"]] == ["beacon", "lighthouse"]
    assert set(out["results"][0]) == {"word", "rank", "score", "synsets"} and out["results"][0]["synsets"][0]["gloss"]
    assert main(["lookup", str(path), "light that warns ships", "-k", "2", "--prior", "0.5", "--json"]) == 0
    with_prior = json.loads(capsys.readouterr().out)["results"]
    assert [r["word"] for r in with_prior] == ["lighthouse", "beacon"]  # one sense; 40 tagged uses against 3
    assert main(["lookup", str(path), "light that warns ships", "-k", "2", "--json"]) == 0  # bm25: default prior 0
    assert json.loads(capsys.readouterr().out)["results"] == out["results"]
    assert main(["lookup", str(path), "light", "--prior", "-1"]) == 2 and "prior" in capsys.readouterr().err
    assert main(["search", str(path), "light", "--filter", "pos=verb", "--json"]) == 0
    assert [h["id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["v:3"]
    service = Service(Index.load(path))
    with TestClient(create_app(service)) as client:
        r = client.get("/api/lookup", params={"q": "light that warns ships", "k": 2, "prior": 0})
        assert r.status_code == 200 and r.json()["results"] == out["results"]
        assert client.get("/api/lookup", params={"q": "light", "pos": "pronoun"}).json()["error"]["code"] == "bad_pos"
        r = client.get("/api/lookup", params={"q": "light that warns ships", "k": 2, "prior": 0.5})
        assert r.json()["results"] == with_prior
        r = client.get("/api/lookup", params={"q": "light", "prior": "lots"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_prior"
        r = client.get("/api/search", params={"q": "light", "filter": json.dumps({"pos": "verb"})})
        assert [h["id"] for h in r.json()["hits"]] == ["v:3"]

    async def session():
        async with Client(build_server(service)) as c:
            r = await c.call_tool("lookup", {"query": "light that warns ships", "k": 2, "prior": 0})
            assert not r.is_error and r.structured_content["results"] == out["results"]
            r = await c.call_tool("lookup", {"query": "light that warns ships", "k": 2, "prior": 0.5})
            assert not r.is_error and r.structured_content["results"] == with_prior

    anyio.run(session)
