"""The MiniLM embedder against oracles that do not share its code."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sidelight.errors import IndexFormatError, InputError
from sidelight.models import Embedder, check_identity, resolve_model

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def emb():
    return Embedder.from_spec("minilm", threads=2)


@pytest.fixture(scope="module")
def ref():
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def test_reference_is_for_this_model(emb, ref):
    assert ref["onnx_sha256"] == emb.identity["onnx_sha256"]
    assert ref["tokenizer_sha256"] == emb.identity["tokenizer_sha256"]


def test_a_text_gets_its_own_vector_in_any_batch(emb, ref):
    texts = [r["text"] for r in ref["rows"]]
    alone = np.stack([emb.encode([t])[0] for t in texts])
    assert emb.batch_invariant  # the bundled graph: batched and alone agree exactly
    assert np.array_equal(emb.encode(texts, batch_size=3), alone)


def test_matches_independent_reference_vectors(emb, ref):
    texts = [r["text"] for r in ref["rows"]]
    expected = np.array([r["vector"] for r in ref["rows"]], dtype=np.float64)
    got = emb.encode(texts, batch_size=4)
    cos = (got * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    assert np.all(cos > 0.999), cos
    assert [emb.count_tokens(t) for t in texts] == [r["tokens_before_truncation"] for r in ref["rows"]]


def test_published_similarities(emb, ref):
    # fp32 PyTorch figures from the sentence-transformers docs; int8 weights move them ~0.003.
    pub = ref["published"]
    v = emb.encode(pub["texts"])
    sims = v @ v.T
    for pair, want in pub["cosine"].items():
        i, j = map(int, pair.split("-"))
        assert abs(sims[i, j] - want) < 0.01, (pair, sims[i, j], want)


def test_shape_dtype_unit_norm(emb):
    v = emb.encode(["a", "", "Protein folding at scale.", "x " * 400])
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    empty = emb.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_batching_and_order_match_one_at_a_time(emb, ref):
    texts = [r["text"] for r in ref["rows"]] + ["short", "a somewhat longer sentence about cells"]
    singles = np.vstack([emb.encode([t], batch_size=1) for t in texts])
    for bs in (3, 32):
        np.testing.assert_allclose(emb.encode(texts, batch_size=bs), singles, atol=1e-5)


def test_truncation_counters():
    e = Embedder.from_spec("minilm", threads=1)
    long_text = " ".join(["cell"] * 1000)
    e.encode([long_text, "a short one"], kind="doc")
    assert (e.truncated_docs, e.truncated_queries) == (1, 0)
    e.encode([long_text, long_text, "short query"], kind="query")
    assert (e.truncated_docs, e.truncated_queries) == (1, 2)
    # the cap counts [CLS] and [SEP]: 254 words + 2 = 256 fits, 255 + 2 does not
    e.reset_counters()
    e.encode([" ".join(["cat"] * 254)])
    assert e.truncated_docs == 0
    e.encode([" ".join(["cat"] * 255)])
    assert e.truncated_docs == 1
    # truncated text == its first 254 words: nothing beyond the cap leaks in
    a = e.encode([" ".join(["cat"] * 254) + " dog" * 50])
    b = e.encode([" ".join(["cat"] * 254)])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_threads_do_not_change_vectors(emb, ref):
    texts = [r["text"] for r in ref["rows"]]
    one = Embedder(resolve_model("minilm"), threads=1)
    np.testing.assert_allclose(one.encode(texts), emb.encode(texts), atol=1e-5)


def test_query_and_doc_prefixes(tmp_path):
    files = resolve_model("minilm")
    folder = tmp_path / "prefixed"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(files.onnx_path)
    (folder / "tokenizer.json").symlink_to(files.tokenizer_path)
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "document": "passage: "}})
    )
    e = Embedder.from_spec(str(folder), threads=1)
    plain = Embedder(files, threads=1)
    np.testing.assert_allclose(e.encode(["vitamin d"], kind="query"), plain.encode(["query: vitamin d"]), atol=1e-5)
    np.testing.assert_allclose(e.encode(["vitamin d"], kind="doc"), plain.encode(["passage: vitamin d"]), atol=1e-5)
    assert not np.allclose(e.encode(["vitamin d"], kind="query"), plain.encode(["vitamin d"]), atol=1e-3)


def test_bad_arguments(emb):
    with pytest.raises(InputError):
        emb.encode("not a list")
    with pytest.raises(InputError):
        emb.encode(["ok", 3])
    with pytest.raises(InputError):
        emb.encode(["ok"], kind="passage")
    with pytest.raises(InputError):
        emb.encode(["ok"], batch_size=0)


def test_progress_bar_counts_every_text(emb, monkeypatch):
    import contextlib

    import sidelight.models.embedder as mod

    seen = []

    @contextlib.contextmanager
    def recorder(total, description, enabled=True):
        seen.append((total, description, enabled))
        yield lambda n=1: seen.append(n)

    monkeypatch.setattr(mod, "progress_bar", recorder)
    v = emb.encode(["one", "two", "three"], batch_size=2, progress=True)
    assert v.shape == (3, 384)
    assert seen == [(3, "encoding docs", True), 2, 1]


def test_identity_and_check(emb):
    ident = emb.identity
    assert ident == {
        "name": "all-MiniLM-L6-v2-onnx-int8",
        "onnx_sha256": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        "tokenizer_sha256": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "dim": 384,
        "max_length": 256,
        "pooling": "mean",
        "normalize": True,
    }
    json.dumps(ident)  # a manifest can store it
    check_identity(dict(ident), ident)
    check_identity({**ident, "name": "renamed copy"}, ident)  # a label, not the model

    other = {**ident, "name": "bge-small", "onnx_sha256": "ab" * 32, "dim": 512}
    with pytest.raises(IndexFormatError) as err:
        check_identity(other, ident)
    msg = str(err.value)
    assert "index was built with model bge-small (sha abababababab" in msg
    assert "this query uses all-MiniLM-L6-v2-onnx-int8 (sha 8199be6f699a" in msg
    assert "dim" in msg
    with pytest.raises(IndexFormatError, match="max_length"):
        check_identity({**ident, "max_length": 128}, ident)
    with pytest.raises(IndexFormatError, match="tokenizer_sha256"):
        check_identity({k: v for k, v in ident.items() if k != "tokenizer_sha256"}, ident)
    with pytest.raises(IndexFormatError):
        check_identity(None, ident)
