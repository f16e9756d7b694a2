"""Latency of `sidelight lookup` over all of WordNet (`wordnet-all`): p50/p95 per description, one thread.

Descriptions are a fixed handful written for timing only (not a quality benchmark); each is looked
up REPEATS times after one warm-up pass. The index is built once and cached under .cache/indexes.
With `--dense MODEL_SPEC` the index also holds that model's vectors (from the lab's vector cache,
encoded once) and `--method` may be a dense or fused one; a dense lookup's time includes encoding
the description (one ONNX Runtime thread, no query-vector cache).

    .venv/bin/python bench/lookup.py --json bench/results/lookup.json
    .venv/bin/python bench/lookup.py --dense .cache/models/wordnet-all-gcide --method dense --json OUT
    .venv/bin/python bench/lookup.py --dense .cache/models/wordnet-all-gcide --method dense \
        --views names=0.5,hypernyms=0.25 --json OUT   # views of a word (sidelight/index/views.py)

With `--views` the view vectors are made (or read from their cache) and the weighted matrix built
before the warm-up, so the times are those of a lookup on a loaded index.

With `--choose` (and `--dense`) it times nothing and instead scores every method of `CHOICES` at every
prior weight of `PRIORS` on all of describe-v1 (now development data: its test split is spent), as
the lab ranks words (100 records, `word_ranking`), and prints the table `lookup`'s defaults were
chosen from: best MRR@10, ties to the smaller weight, then to the earlier method.

    .venv/bin/python bench/lookup.py --dense minilm --choose --json bench/results/lookup-choice.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SINGLE_THREAD, now, print_table, wordnet_index, write_json  # noqa: E402

os.environ.update(SINGLE_THREAD)


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
#: the methods a lookup default could be, with fixed settings (describe-v1's dev picks for the fusions)
CHOICES = [("dense", {}), ("bm25", {}), ("rrf", {"weights": [0.25, 1.0]}),
           ("hybrid-linear", {"alpha": 0.1, "norm": "minmax"}), ("hybrid-linear", {"alpha": 0.5, "norm": "minmax"})]
PRIORS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]
DESCRIBE = Path(__file__).resolve().parent.parent / "benchmarks" / "describe-v1.jsonl"


def choose(index, out: dict) -> list[list]:
    """Score `CHOICES` x `PRIORS` on all of describe-v1; rows of the choice table, best first."""
    from sidelight.lab.benchmark import load_describe_benchmark
    from sidelight.index.lookup import word_ranking
    from sidelight.methods import get_method

    bench = load_describe_benchmark(DESCRIBE, index.corpus)
    scored = []
    for order, (name, params) in enumerate(CHOICES):
        method = get_method(name, **params)
        ranked = {q: method.rank(index, text, 100) for q, text in bench.queries.items()}
        for prior in PRIORS:
            ranks = []
            for q, r in ranked.items():
                pairs = ((index.corpus.records[p], float(s)) for p, s in zip(r.positions, r.scores))
                ranks.append(word_ranking(pairs, 100, bench.intended_name[q], prior)[1])
            n = len(ranks)
            hit = lambda c: sum(1 for x in ranks if x is not None and x <= c) / n  # noqa: E731
            mrr = sum(1 / x for x in ranks if x is not None and x <= 10) / n
            srt = sorted(x if x is not None else float("inf") for x in ranks)
            median = (srt[(n - 1) // 2] + srt[n // 2]) / 2
            median = None if median == float("inf") else median  # most targets not among the words read
            scored.append((-round(mrr, 6), prior, order, name, params, mrr, hit(1), hit(10), hit(100), median, n))
    scored.sort(key=lambda t: t[:3])
    out["choice"] = [{"method": t[3], "params": t[4], "prior": t[1], "mrr@10": t[5], "hit@1": t[6], "hit@10": t[7],
                      "hit@100": t[8], "median_rank": t[9], "n": t[10]} for t in scored]
    return [[t[3] + (f" {json.dumps(t[4])}" if t[4] else ""), t[1], f"{t[5]:.3f}", f"{t[6]:.1%}", f"{t[7]:.1%}",
             f"{t[8]:.1%}", "-" if t[9] is None else t[9]] for t in scored]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--method", default="bm25")
    ap.add_argument("-p", "--param", action="append", default=[], metavar="NAME=JSON", help="method parameter")
    ap.add_argument("--dense", default=None, metavar="MODEL_SPEC")
    ap.add_argument("--views", default=None, metavar="names=W,hypernyms=W", help="lookup's view weights")
    ap.add_argument("--choose", action="store_true", help="score the default's candidates on describe-v1 instead")
    args = ap.parse_args()
    params = {k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)}
    index = wordnet_index()
    if args.dense:
        from sidelight.lab.densecache import dense_store

        index.dense, _ = dense_store(index.corpus, args.dense, threads=1, progress=True)
    if args.choose:
        out = {"records": len(index.corpus), "dense": args.dense, "benchmark": str(DESCRIBE.name)}
        print_table(["method", "prior", "MRR@10", "acc@1", "acc@10", "acc@100", "median rank"], choose(index, out))
        write_json(args.json, out)
        return 0
    if args.views:
        from sidelight.index.views import Views, view_vectors

        views = Views.parse(args.views)
        view_vectors(index, progress=True)
        params["views"] = views
    rows = []
    out = {"records": len(index.corpus), "k": args.k, "repeats": REPEATS, "method": args.method,
           "params": {k: v.to_dict() if k == "views" else v for k, v in params.items()}, "dense": args.dense,
           "pos": {}}
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
