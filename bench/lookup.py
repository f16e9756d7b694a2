"""Latency of `sidelight lookup` over all of WordNet (`wordnet-all`): p50/p95 per description, one thread.

Descriptions are a fixed handful written for timing only (not a quality benchmark); each is looked
up REPEATS times after one warm-up pass. The index is built once and cached under .cache/indexes.
With `--dense MODEL_SPEC` the index also holds that model's vectors (from the lab's vector cache,
encoded once) and `--method` may be a dense or fused one; a dense lookup's time includes encoding
the description (one ONNX Runtime thread, no query-vector cache).

    .venv/bin/python bench/lookup.py --json bench/results/lookup.json
    .venv/bin/python bench/lookup.py --dense .cache/models/wordnet-all-adapted --method dense --json OUT
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SINGLE_THREAD, now, print_table, write_json  # noqa: E402

os.environ.update(SINGLE_THREAD)

from sidelight.config import cache_dir  # noqa: E402
from sidelight.corpus.sources import load_source  # noqa: E402
from sidelight.errors import IndexFormatError  # noqa: E402
from sidelight.index import Index  # noqa: E402

DESCRIPTIONS = [
    "a tower by the sea with a bright lamp that warns ships",
    "the part of a flower that makes pollen",
    "to walk slowly without a goal",
    "a small room where food is kept cold",
    "feeling tired after a long journey across time zones",
    "a tool for cutting wood with a row of sharp teeth",
    "very happy and excited",
    "in a careful and quiet way",
]
REPEATS = 20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--method", default="bm25")
    ap.add_argument("-p", "--param", action="append", default=[], metavar="NAME=JSON", help="method parameter")
    ap.add_argument("--dense", default=None, metavar="MODEL_SPEC")
    args = ap.parse_args()
    params = {k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)}
    path = cache_dir() / "indexes" / "wordnet-all-lexical"
    try:
        index = Index.load(path)
        if index.corpus.content_hash() != load_source("wordnet-all").content_hash() or index.corpus.alias_weight != 1:
            raise IndexFormatError("stale")
    except IndexFormatError:
        index = Index.build(load_source("wordnet-all"), progress=False)
        index.save(path, force=True)
    if args.dense:
        from sidelight.lab.densecache import dense_store

        index.dense, _ = dense_store(index.corpus, args.dense, threads=1, progress=True)
    rows = []
    out = {"records": len(index.corpus), "k": args.k, "repeats": REPEATS, "method": args.method, "params": params,
           "dense": args.dense, "pos": {}}
    for pos in (None, "noun"):
        for d in DESCRIPTIONS:
            index.lookup(d, args.k, method=args.method, pos=pos, **params)  # warm-up
        times = []
        for _ in range(REPEATS):
            for d in DESCRIPTIONS:
                t = now()
                index.lookup(d, args.k, method=args.method, pos=pos, **params)
                times.append((now() - t) * 1e3)
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        out["pos"][pos or "all"] = {"p50_ms": p50, "p95_ms": p95, "n": len(times)}
        rows.append([pos or "all", len(times), f"{p50:.2f}", f"{p95:.2f}"])
    print_table(["pos", "lookups", "p50 ms", "p95 ms"], rows)
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
