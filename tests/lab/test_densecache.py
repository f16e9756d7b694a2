"""Dense vectors in lab runs: encoded once, reused by dev, test and reproduce, keyed on corpus and model;
borrowed settings (`params_from`) equal the dev-selected setting of the named method. A fake encoder
stands in for the real model."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest

from sidelight.corpus.model import Corpus
from sidelight.corpus.sources import load_source
from sidelight.errors import InputError
from sidelight.lab import densecache
from sidelight.lab.audit import audit
from sidelight.lab.protocol import load_protocol
from sidelight.lab.report import write_report
from sidelight.lab.runner import freeze, read_json, reproduce, run_split
from sidelight.models.embedder import Embedder

from tests.lab.test_runner import make_lab

ENCODED: list[tuple[str, int]] = []  # (model spec, number of documents) per document encoding


class FakeEmbedder:
    """Hashed bag of words, L2-normalised; the spec picks the hash salt and the identity."""

    dim = 32
    max_length = 64

    def __init__(self, spec: str):
        self.spec = spec
        self.truncated_docs = self.truncated_queries = 0
        sha = hashlib.sha256(spec.encode()).hexdigest()
        self.identity = {"name": spec, "onnx_sha256": sha, "tokenizer_sha256": sha[::-1], "dim": self.dim,
                         "max_length": self.max_length, "pooling": "mean", "normalize": True}

    def encode(self, texts, batch_size=32, kind="doc", progress=False):
        if kind == "doc":
            ENCODED.append((self.spec, len(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.sha256((self.spec + w).encode()).hexdigest(), 16) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def count_tokens(self, text):
        return len(text.split()) + 2

    def encode_windows(self, texts, titles=None, stride=0, batch_size=32, progress=False):
        """One further window per text of more than 6 words: its last 6 words."""
        ENCODED.append((self.spec + ":windows", len(texts)))
        owner = [i for i, t in enumerate(texts) if len(t.split()) > 6]
        tails = [" ".join(texts[i].split()[-6:]) for i in owner]
        return np.asarray(owner, dtype=np.int64), self.encode(tails, kind="window")


@pytest.fixture(autouse=True)
def fake_model(monkeypatch, tmp_path):
    monkeypatch.setattr(Embedder, "from_spec", classmethod(lambda cls, spec="minilm", threads=2: FakeEmbedder(spec)))
    monkeypatch.setenv("SIDELIGHT_CACHE", str(tmp_path / "cache"))
    ENCODED.clear()
    yield


def dense_lab(root, model="fake-a"):
    path = make_lab(root)
    d = json.loads(path.read_text())
    d["index"]["dense"] = model
    d["methods"] = [{"name": "bm25"},
                    {"name": "bm25+ppr", "grid": {"alpha": [0.5, 0.8], "lam": [0.1, 0.25, 0.5]}},
                    {"name": "dense", "exploratory": True},
                    {"name": "dense+ppr", "params_from": "bm25+ppr", "exploratory": True},
                    {"name": "rrf", "exploratory": True}]
    d["selection"] = {"metric": "mrr@10", "tie_break": {"bm25+ppr": [["lam", "asc"], ["alpha", "desc"]]}}
    d["primary_contrast"] = {"baseline": "bm25", "candidate": "bm25+ppr"}
    d["contrasts"] = [{"baseline": "dense", "candidate": "dense+ppr"}]
    path.write_text(json.dumps(d))
    return path


def test_dense_cache_reused_by_dev_test_and_reproduce(tmp_path):
    lab = dense_lab(tmp_path / "lab")
    out = tmp_path / "run"
    rec = freeze(lab, out)
    assert rec["dense_model"]["onnx_sha256"] == FakeEmbedder("fake-a").identity["onnx_sha256"]
    assert ENCODED == []  # freezing pins the model; it encodes nothing
    run_split(lab, "dev", out)
    run_split(lab, "test", out)
    assert ENCODED == [("fake-a", 40)]  # dev encoded, test reused
    dev, test = read_json(out / "dev" / "result.json"), read_json(out / "test" / "result.json")
    assert dev["setup"]["corpus_encoding"]["status"] == "encoded" and "corpus_encoding_s" in dev["setup"]
    assert test["setup"]["corpus_encoding"]["status"] == "cached" and "corpus_encoding_s" not in test["setup"]
    assert test["setup"]["corpus_encoding"]["first_encode_s"] == dev["setup"]["corpus_encoding"]["encode_s"]
    diffs, _ = reproduce(lab, out, tmp_path / "again")
    assert diffs == [] and ENCODED == [("fake-a", 40)]  # reproduce reused it too
    # the cache holds one entry: the vectors and their key, nothing split-dependent
    entries = list((tmp_path / "cache" / "lab-dense").iterdir())
    assert len(entries) == 1 and sorted(p.name for p in entries[0].iterdir()) == ["dense.json", "vectors.npy"]
    meta = json.loads((entries[0] / "dense.json").read_text())
    assert set(meta["key_parts"]) == {"version", "corpus_hash", "texts_sha256", "n_texts", "model", "doc_prefix",
                                      "batch_size"}
    assert "dev" not in json.dumps(meta["key_parts"]) and "test" not in json.dumps(meta["key_parts"])
    # the dense rows are marked exploratory; the named extra contrast is there; audit and report agree
    assert test["methods"]["dense"]["exploratory"] and not test["methods"]["bm25+ppr"]["exploratory"]
    assert any(c["baseline"] == "dense" and c["candidate"] == "dense+ppr" and c["role"] == "exploratory"
               for c in test["contrasts"])
    assert [c["role"] for c in test["contrasts"]].count("primary") == 1
    assert audit(out)["agree"]
    write_report(out)
    md = (out / "report.md").read_text()
    assert "dense · exploratory" in md and "corpus encoding cached" in md


def test_borrowed_setting_equals_the_selected_setting(tmp_path):
    lab = dense_lab(tmp_path / "lab")
    out = tmp_path / "run"
    freeze(lab, out)
    sel = run_split(lab, "dev", out)["selected"]["bm25+ppr"]
    run_split(lab, "test", out)
    for split in ("dev", "test"):
        m = read_json(out / split / "result.json")["methods"]
        assert {k: m["dense+ppr"]["params"][k] for k in sel} == sel
        assert {k: m["bm25+ppr"]["params"][k] for k in sel} == sel
        assert m["dense+ppr"]["params_from"] == "bm25+ppr"
    p = load_protocol(lab)
    runnable, _ = p.check_methods()
    borrowed = next(s for s in p.settings(runnable, {"bm25+ppr": {"alpha": 0.8, "lam": 0.25}}) if s.label == "dense+ppr")
    assert borrowed.params == {"alpha": 0.8, "lam": 0.25}


@pytest.mark.parametrize("bad, match", [({"params_from": "bm25"}, "no grid"),
                                        ({"params_from": "bm25+ppr", "params": {"lam": 0.3}}, "also sets")])
def test_borrowing_must_be_unambiguous(tmp_path, bad, match):
    lab = dense_lab(tmp_path / "lab")
    d = json.loads(lab.read_text())
    d["methods"][3] = {"name": "dense+ppr", **bad}
    lab.write_text(json.dumps(d))
    with pytest.raises(InputError, match=match):
        load_protocol(lab).check_methods()


def test_cache_key_follows_corpus_text_and_model(tmp_path):
    make_lab(tmp_path / "lab")
    corpus = load_source(str(tmp_path / "lab" / "corpus.jsonl"))
    root = tmp_path / "c"
    a, ia = densecache.dense_store(corpus, "fake-a", root=root)
    b, ib = densecache.dense_store(corpus, "fake-a", root=root)
    assert (ia["status"], ib["status"]) == ("encoded", "cached") and ia["key"] == ib["key"]
    assert np.array_equal(a.vectors, b.vectors) and len(ENCODED) == 1
    _, ic = densecache.dense_store(corpus, "fake-b", root=root)  # another model
    assert ic["status"] == "encoded" and ic["key"] != ia["key"]
    corpus.title_weight = 2  # same records, different encoded text
    _, id_ = densecache.dense_store(corpus, "fake-a", root=root)
    assert id_["status"] == "encoded" and id_["key"] not in (ia["key"], ic["key"])
    recs = [dataclasses.replace(corpus.records[0], text=corpus.records[0].text + " changed"), *corpus.records[1:]]
    corpus = Corpus(corpus.name, recs, corpus.edges, title_weight=1)  # another corpus
    _, ie = densecache.dense_store(corpus, "fake-a", root=root)
    assert ie["status"] == "encoded" and ie["key"] not in (ia["key"], ic["key"], id_["key"])
    assert len(ENCODED) == 4
    # a damaged entry is not trusted: it is re-encoded and replaced
    vec = root / ie["key"] / "vectors.npy"
    vec.write_bytes(vec.read_bytes()[:-8] + b"\0" * 8)
    _, ig = densecache.dense_store(corpus, "fake-a", root=root)
    assert ig["status"] == "encoded" and len(ENCODED) == 5
    assert densecache.dense_store(corpus, "fake-a", root=root)[1]["status"] == "cached"


def test_passage_windows_are_cached_beside_the_vectors(tmp_path):
    """A variant with passages: the windows are encoded once (dev), reused (test), keyed on the passage
    settings, and a damaged windows entry is encoded again; the variant scores by a record's best window."""
    from sidelight.structures.dense import Passages

    make_lab(tmp_path / "lab")
    corpus = load_source(str(tmp_path / "lab" / "corpus.jsonl"))
    root = tmp_path / "c"
    plain, _ = densecache.dense_store(corpus, "fake-a", root=root)
    a, ia = densecache.dense_store(corpus, "fake-a", root=root, passages=Passages(8, False))
    b, ib = densecache.dense_store(corpus, "fake-a", root=root, passages=Passages(8, False))
    assert (ia["windows"]["status"], ib["windows"]["status"]) == ("encoded", "cached")
    assert ENCODED == [("fake-a", 40), ("fake-a:windows", 40)]
    assert np.array_equal(a.window_owner, b.window_owner) and np.array_equal(a.windows, b.windows)
    q = a.vectors[3]
    want = plain.scores_of(q)  # oracle: the larger of a record's own cosine and its window's
    for i, o in enumerate(a.window_owner):
        want[o] = max(want[o], float(a.windows[i] @ q))
    assert len(a.window_owner) > 0 and np.allclose(a.scores_of(q), want)
    _, ic = densecache.dense_store(corpus, "fake-a", root=root, passages=Passages(16, False))
    assert ic["windows"]["status"] == "encoded" and ic["windows"]["key"] != ia["windows"]["key"]
    w = root / f"{ia['windows']['key']}-windows" / "windows.npy"
    w.write_bytes(w.read_bytes()[:-8] + b"\0" * 8)
    _, id_ = densecache.dense_store(corpus, "fake-a", root=root, passages=Passages(8, False))
    assert id_["windows"]["status"] == "encoded"
