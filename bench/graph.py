"""Graph lane latency: the NGR relation lane and Carrier's PPR boost on FOLDOC and WordNet nouns.

For each corpus the index is built in memory (state in a temporary file, no dense vectors), then
~200 queries are timed warm (20 warm-up queries first, not counted): record titles drawn with
`random.Random(SEED).sample` over records whose title has a token the lexical index knows, each
put in a relation question by turns ("a kind of T", "what is part of T", "T", "what is T made of").

* relation: `run_lane(index, "relation", q, limit=10)` as `search_channels` runs it, query-aware (the
  default): name anchors (automaton built before timing), cue, BM25 top-5 entry seeds, overlay
  read, 2-hop spread, the typed spread, residual BM25 and link context over the reached records,
  credited paths of the top 10, trace written to SQLite.
* relation_activation: the same lane with NGR's raw activation ranking (`rank=activation`).
* relation_rank: the query-aware ranking without storing a trace (`relation_rank`).
* ppr: the `bm25+ppr` method, top 10 (BM25 + 20-iteration PPR over the undirected projection).
* bm25: the `bm25` method, top 10, for reference.

    .venv/bin/python bench/graph.py --json /tmp/graph-bench.json [--corpora foldoc,wordnet] [--queries 200]

Writes {corpus: {"relation": {"p50_ms", "p95_ms"}, "ppr": {...}, ...}} (plus sizes).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.lanes.channels import run_lane  # noqa: E402
from sidelight.methods.relation import relation_rank  # noqa: E402
from sidelight.methods.relation_cues import name_matcher  # noqa: E402
from sidelight.methods import get_method  # noqa: E402

SEED = 20240917
WARMUP = 20
TEMPLATES = ("a kind of {}", "what is part of {}", "{}", "what is {} made of")
LOADERS = {
    "foldoc": lambda: __import__("sidelight.corpus.foldoc", fromlist=["x"]).load_foldoc(),
    "wordnet": lambda: __import__("sidelight.corpus.wordnet", fromlist=["x"]).load_wordnet_nouns(),
}


def queries_for(index: Index, n: int) -> list[str]:
    rng = random.Random(SEED)
    titles = [r.title for r in index.corpus.records]
    out = []
    for t in rng.sample(titles, min(len(titles), 4 * n)):
        if len(index.lexical.query_terms(t)) if t.strip() else 0:
            out.append(TEMPLATES[len(out) % len(TEMPLATES)].format(t))
        if len(out) == n + WARMUP:
            break
    return out


def timed(fn, queries: list[str]) -> dict:
    for q in queries[:WARMUP]:
        fn(q)
    ms = []
    for q in queries[WARMUP:]:
        t = time.perf_counter()
        fn(q)
        ms.append((time.perf_counter() - t) * 1000)
    a = np.asarray(ms)
    return {"p50_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "mean_ms": round(float(a.mean()), 3), "n": len(ms)}


def bench_corpus(name: str, n_queries: int) -> dict:
    t = time.perf_counter()
    corpus = LOADERS[name]()
    index = Index.build(corpus, progress=False)
    build_s = time.perf_counter() - t
    qs = queries_for(index, n_queries)
    bm25, ppr = get_method("bm25"), get_method("bm25+ppr")
    _ = index.ppr_graph, name_matcher(index)  # built once per index, outside the timings
    res = {
        "records": len(corpus), "edges": len(corpus.edges), "undirected_pairs": index.graph.undirected().nnz // 2,
        "build_s": round(build_s, 2),
        "relation": timed(lambda q: run_lane(index, "relation", q, 10), qs),
        "relation_activation": timed(lambda q: run_lane(index, "relation", q, 10, rank="activation"), qs),
        "relation_rank": timed(lambda q: relation_rank(index, q, 10), qs),
        "ppr": timed(lambda q: ppr.rank(index, q, 10), qs),
        "bm25": timed(lambda q: bm25.rank(index, q, 10), qs),
    }
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--corpora", default="foldoc,wordnet")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    out = {}
    rows = []
    for name in args.corpora.split(","):
        r = bench_corpus(name, args.queries)
        out[name] = r
        for lane in ("relation", "relation_activation", "relation_rank", "ppr", "bm25"):
            rows.append([f"{name} {lane}", r[lane]["p50_ms"], r[lane]["p95_ms"], r[lane]["n"]])
        print(f"{name}: {r['records']} records, {r['edges']} edges, built in {r['build_s']} s", file=sys.stderr)
    print_table(["corpus lane", "p50 ms", "p95 ms", "queries"], rows)
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
