"""Passages (MaxP): long records keep their further windows; a record scores by its best window."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.models import Embedder
from sidelight.structures.dense import DenseStore, Passages

FILLER = " ".join(f"the committee met on day {i} and discussed the weather report once more." for i in range(40))
TAIL = "At the end a volcano erupted and molten lava flowed down into the sea."


@pytest.fixture(scope="module")
def emb():
    return Embedder.from_spec("minilm", threads=2)


def _corpus() -> Corpus:
    return Corpus("toy", [Record("long", "Minutes", f"{FILLER} {TAIL}"),
                          Record("short", "Gardens", "tomatoes, soil and water."),
                          Record("other", "Weather", "rain, wind and a weather report."),
                          Record("long2", "More minutes", f"{FILLER} {FILLER}")])


def test_windows_follow_the_tokenizers_overflow_arithmetic(emb):
    """Each window after the first holds max_length - 2 wordpieces, `stride` shared with the one before:
    a text of n wordpieces (specials excluded) has ceil((n - w) / (w - stride)) further windows."""
    texts = [FILLER, FILLER + " " + FILLER, "short text"]
    w = emb.max_length - 2
    for stride in (0, 64):
        owner, vectors = emb.encode_windows(texts, None, stride)
        for i, t in enumerate(texts):
            n = emb.count_tokens(t) - 2
            assert int((owner == i).sum()) == max(0, math.ceil((n - w) / (w - stride)))
        assert np.all(np.diff(owner) >= 0) and vectors.shape == (len(owner), emb.dim)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    with pytest.raises(InputError, match="stride"):
        emb.encode_windows(texts, None, emb.max_length)


def test_a_record_scores_by_its_best_window(emb):
    corpus = _corpus()
    texts, titles = [corpus.indexed_text(r) for r in corpus.records], [r.title for r in corpus.records]
    before = emb.truncated_docs
    store = DenseStore.build(texts, "minilm", passages=Passages(64, True), titles=titles, progress=False)
    assert emb.truncated_docs == before  # another embedder instance; and windows never count as truncations
    assert store.truncated_docs == 2 and set(store.window_owner.tolist()) == {0, 3}
    q = emb.encode(["volcano eruption and lava"], kind="query")[0]
    # oracle: encode every window of record 0 by hand from the tokenizer's own windows, take the best cosine
    owner, windows = emb.encode_windows(texts, titles, 64)
    first = emb.encode(texts)
    best = max([float(first[0] @ q)] + [float(v @ q) for v in windows[owner == 0]])
    got = store.scores_of(q)
    assert got[0] == pytest.approx(best, abs=1e-6)
    assert got[1] == pytest.approx(float(first[1] @ q), abs=1e-6)  # a short record: its one vector
    flat = DenseStore.build(texts, "minilm", progress=False).scores_of(q)
    assert got[0] > flat[0] + 0.05  # the tail about lava lies past the first window
    assert np.argmax(got) == 0 and np.argmax(flat) != 0


def test_passages_survive_save_load_add_and_delete(tmp_path, emb):
    corpus = _corpus()
    index = Index(corpus, Index.build(corpus, progress=False).lexical)
    index.add_dense("minilm", progress=False, passages=Passages(32, True))
    q = emb.encode(["volcano eruption and lava"], kind="query")[0]
    want = index.dense.scores_of(q)
    index.save(tmp_path / "idx")
    loaded = Index.load(tmp_path / "idx")
    assert isinstance(loaded.dense.windows, np.memmap) and loaded.dense.passages == Passages(32, True)
    assert np.array_equal(loaded.dense.scores_of(q), want)
    with Index.edit(tmp_path / "idx") as ix:
        ix.delete(["long"])
        ix.add([Record("long3", "Late minutes", f"{FILLER} {TAIL}")])
    edited = Index.load(tmp_path / "idx")
    # oracle: the same records indexed from scratch
    fresh = Index(edited.corpus, Index.build(edited.corpus, progress=False).lexical)
    fresh.add_dense("minilm", progress=False, passages=Passages(32, True))
    assert np.array_equal(edited.dense.window_owner, fresh.dense.window_owner)
    assert np.allclose(edited.dense.scores_of(q), fresh.dense.scores_of(q), atol=1e-6)


def test_cli_builds_and_refuses(tmp_path, capsys):
    src = tmp_path / "c.jsonl"
    src.write_text("".join(json.dumps({"id": r.id, "title": r.title, "text": r.text}) + "\n" for r in _corpus().records))
    assert main(["index", str(src), "-o", str(tmp_path / "idx"), "--dense", "minilm", "--passages", "-q"]) == 0
    assert "further windows (stride 64, after the title)" in capsys.readouterr().out
    assert main(["search", str(tmp_path / "idx"), "volcano eruption and lava", "-m", "dense", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hits"][0]["id"] == "long"
    for args, needle in ((["index", str(src), "-o", str(tmp_path / "i2"), "--passages"], "--passages needs --dense"),
                         (["index", str(src), "-o", str(tmp_path / "i3"), "--dense", "minilm", "--stride", "8"],
                          "need --passages"),
                         (["export-web", str(tmp_path / "idx"), "-o", str(tmp_path / "site")], "further windows")):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err, (args, err)
