"""`Index.search_many` against one `search` call per query: the same hits, and the time each takes.

SciFact's 300 test queries, top 10, per method (dense methods when MiniLM vectors are cached by
bench/parity.py, else skipped). Every query's hits must equal its `search` call's hit for hit.

    .venv/bin/python bench/batch.py --json bench/results/batch.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import now, print_table, write_json  # noqa: E402

from sidelight.config import cache_dir, dataset_path  # noqa: E402
from sidelight.corpus.beir import beir_split, load_beir_corpus  # noqa: E402
from sidelight.index import Index  # noqa: E402

REPEATS = 3  # best of three, each method warmed once first


def best_time(fn) -> float:
    fn()
    times = []
    for _ in range(REPEATS):
        t = now()
        fn()
        times.append(now() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args()
    folder = dataset_path("scifact")
    queries, _ = beir_split(folder, "test")
    index = Index.build(load_beir_corpus(folder), progress=False)
    methods = ["bm25", "tfidf", "bm25+ppr"]
    cached = sorted((cache_dir() / "parity").glob(f"scifact-{index.corpus.content_hash()[:16]}.npy"))
    if cached:
        import numpy as np

        from sidelight.models.embedder import Embedder
        from sidelight.structures.dense import DenseStore

        emb = Embedder.from_spec("minilm", threads=2)
        index.dense = DenseStore(np.load(cached[0]), emb.identity, "minilm", 0, 2, emb)
        methods += ["dense", "rrf"]
    rows, out = [], {"queries": len(queries), "k": 10, "methods": {}}
    for m in methods:
        many = index.search_many(queries, 10, m)
        same = all(many[q] == index.search(text, m, 10) for q, text in queries.items())
        t_one = best_time(lambda: [index.search(text, m, 10) for text in queries.values()])
        t_many = best_time(lambda: index.search_many(queries, 10, m))
        out["methods"][m] = {"identical": same, "search_s": t_one, "search_many_s": t_many}
        rows.append([m, "yes" if same else "NO", f"{t_one * 1e3:.1f}", f"{t_many * 1e3:.1f}", f"{t_one / t_many:.2f}x"])
    print_table(["method", "identical hits", "300 x search (ms)", "search_many (ms)", "speed-up"], rows)
    write_json(args.json, out)
    return 0 if all(v["identical"] for v in out["methods"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
