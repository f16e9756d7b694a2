"""Do passages help the dense lane on SciFact? MaxP over overlapping windows against the first window.

    python bench/passages.py [--models minilm,.cache/models/scifact-adapted] [--stride 64] [--json OUT]

3,681 of SciFact's 5,183 abstracts are longer than MiniLM's 256-wordpiece window, so today the
dense lane sees only their first window ("FirstP"). Here each record longer than the window is
also encoded as the tokenizer's overflowing windows (`stride` wordpieces of overlap, [CLS] and
[SEP] in each), with or without the title in front, and a record's dense score is the largest
cosine over its windows ("MaxP"). The first window's vector is the index's own (from the lab's
vector cache), so FirstP is exactly today's lane.

Scored on the **dev** queries only (the 209 train queries the pilot's seed 45110 leaves out of
its 600 fit ones, as `protocols/scifact-adapt.json`): this decides whether passages are worth
building, so it must not look at test. For each model and variant: dense alone and the best
hybrid-linear setting of the protocol's grid (alpha 0.2-0.6, z-score or min-max), nDCG@10.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from _common import print_table, write_json  # noqa: E402

from sidelight.config import dataset_path  # noqa: E402
from sidelight.corpus.sources import load_source  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.lab.benchmark import load_beir_benchmark  # noqa: E402
from sidelight.lab.densecache import dense_store  # noqa: E402
from sidelight.lab.evaluate import evaluate_method  # noqa: E402
from sidelight.methods import get_method  # noqa: E402

DEV = {"split": "train", "seed": 45110, "n_fit": 600}
GRID = [(a, n) for a in (0.2, 0.3, 0.4, 0.5, 0.6) for n in ("zscore", "minmax")]


def windows(emb, texts: list[str], titles: list[str], stride: int, with_title: bool) -> tuple[np.ndarray, np.ndarray]:
    """(owner record of each extra window, unit vectors of the extra windows): every window after the first."""
    tok = emb.tokenizer
    tok.enable_truncation(max_length=emb.max_length, stride=stride)
    try:
        encs = tok.encode_batch(texts)
    finally:
        tok.enable_truncation(max_length=emb.max_length)
    owner, extra = [], []
    for i, e in enumerate(encs):
        for o in e.overflowing:
            owner.append(i)
            if with_title:  # the window's own characters, after the title, encoded as a text
                spans = [(a, b) for (a, b), s in zip(o.offsets, o.special_tokens_mask) if not s]
                extra.append(f"{titles[i]} {texts[i][spans[0][0]:spans[-1][1]]}")
            else:
                extra.append(o)
    if with_title:
        vectors = emb.encode(extra, kind="doc", progress=True)
    else:  # the windows' own wordpieces, longest first in batches (as `Embedder.encode`)
        order = np.argsort([-len(o.ids) for o in extra], kind="stable")
        vectors = np.empty((len(extra), emb.dim), dtype=np.float32)
        for s in range(0, len(extra), 32):
            idx = order[s:s + 32]
            vectors[idx] = emb._run_encodings([extra[i] for i in idx])
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.asarray(owner, dtype=np.int64), vectors


def maxp(store, owner: np.ndarray, extra: np.ndarray):
    """`scores_of` for the store: the largest cosine over a record's first and extra windows."""
    first = store.scores_of

    def scores_of(q: np.ndarray) -> np.ndarray:
        s = first(q)
        np.maximum.at(s, owner, np.einsum("ij,j->i", extra, q.astype(np.float32)).astype(np.float64))
        return s

    return scores_of


def evaluate(index: Index, queries: dict, qrels: dict) -> dict:
    dense = evaluate_method(index, get_method("dense"), queries, qrels, ["ndcg@10"], depth=100, progress=False)
    hybrid = {(a, n): evaluate_method(index, get_method("hybrid-linear", alpha=a, norm=n), queries, qrels,
                                      ["ndcg@10"], depth=100, progress=False).metrics["ndcg@10"] for a, n in GRID}
    (a, n), best = max(hybrid.items(), key=lambda kv: (kv[1], -kv[0][0]))
    return {"dense": dense.metrics["ndcg@10"], "hybrid": best, "alpha": a, "norm": n}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="minilm,.cache/models/scifact-adapted")
    ap.add_argument("--stride", type=int, default=64, help="wordpieces shared by neighbouring windows")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)

    corpus = load_source("scifact")
    bench = load_beir_benchmark(dataset_path("scifact"), "test", dev=DEV).subset("dev")
    queries, qrels = bench.queries, bench.qrels
    index = Index.build(corpus, progress=False)
    texts = [corpus.indexed_text(r) for r in corpus.records]
    titles = [r.title for r in corpus.records]
    rows, out = [], {"queries": len(queries), "stride": args.stride, "models": {}}
    for spec in args.models.split(","):
        store, info = dense_store(corpus, spec)
        index.dense = store
        first = store.scores_of
        res = {"truncated_docs": info["truncated_docs"], "FirstP": evaluate(index, queries, qrels)}
        for with_title in (False, True):
            t0 = time.perf_counter()
            owner, extra = windows(store.embedder(), texts, titles, args.stride, with_title)
            label = "MaxP+title" if with_title else "MaxP"
            store.scores_of = maxp(store, owner, extra)
            res[label] = {**evaluate(index, queries, qrels), "windows": len(owner),
                          "encode_s": round(time.perf_counter() - t0, 1)}
            store.scores_of = first
        out["models"][spec] = res
        for label in ("FirstP", "MaxP", "MaxP+title"):
            r = res[label]
            rows.append([spec, label, r.get("windows", 0), f"{r['dense']:.4f}", f"{r['hybrid']:.4f}",
                         f"{r['alpha']} {r['norm']}"])
    print(f"\nSciFact dev ({len(queries)} train queries outside the 600 fit ones), nDCG@10, stride {args.stride}")
    print_table(["model", "records as", "extra windows", "dense", "best hybrid-linear", "alpha, norm"], rows)
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
