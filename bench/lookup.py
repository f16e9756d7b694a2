"""Latency of `sidelight lookup` over all of WordNet (`wordnet-all`): p50/p95 per description, one thread.

Descriptions are a fixed handful written for timing only (not a quality benchmark); each is looked
up REPEATS times after one warm-up pass. The index is built once and cached under .cache/indexes.

    .venv/bin/python bench/lookup.py --json bench/results/lookup.json
"""

from __future__ import annotations

import argparse
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
    args = ap.parse_args()
    path = cache_dir() / "indexes" / "wordnet-all-lexical"
    try:
        index = Index.load(path)
    except IndexFormatError:
        index = Index.build(load_source("wordnet-all"), progress=False)
        index.save(path)
    rows, out = [], {"records": len(index.corpus), "k": args.k, "repeats": REPEATS, "pos": {}}
    for pos in (None, "noun"):
        for d in DESCRIPTIONS:
            index.lookup(d, args.k, pos=pos)  # warm-up
        times = []
        for _ in range(REPEATS):
            for d in DESCRIPTIONS:
                t = now()
                index.lookup(d, args.k, pos=pos)
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
