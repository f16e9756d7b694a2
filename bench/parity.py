"""Rankings of every registered method, written to JSON, and compared rank for rank with a reference.

A refactor must not change what users get. This script ranks the SciFact test queries and the
FOLDOC concept benchmark with every method the registry lists (default parameters, top 10) and
writes ids and scores per query. `--compare REF.json` then prints, per corpus and method, how
many queries rank identically (ids in order) and the largest score difference.

The reference comes from the code before the change, run by this same script:

    git worktree add /tmp/old 43ac9da
    .venv/bin/python bench/parity.py --code /tmp/old --json bench/results/parity-before.json
    .venv/bin/python bench/parity.py --json bench/results/parity-after.json \
        --compare bench/results/parity-before.json

Dense vectors are encoded once per corpus (MiniLM int8) and cached under .cache/parity/, so both
runs rank over the same vectors; only the module that holds `DenseStore` differs between versions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
if "--code" in sys.argv:  # rank with another checkout; an editable install would win over PYTHONPATH
    sys.meta_path = [f for f in sys.meta_path if "editable" not in type(f).__module__
                     and "editable" not in (getattr(f, "__module__", "") or "")]
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])

from _common import print_table, write_json  # noqa: E402

import sidelight  # noqa: E402
from sidelight.config import cache_dir, dataset_path  # noqa: E402
from sidelight.corpus.beir import beir_split, load_beir_corpus  # noqa: E402
from sidelight.corpus.foldoc import load_foldoc  # noqa: E402
from sidelight.index import Index  # noqa: E402

try:  # this version's layout
    from sidelight.methods import available_methods, get_method
    from sidelight.structures.dense import DenseStore
except ImportError:  # the layout before the layered core
    from sidelight.lanes.dense import DenseStore
    from sidelight.lanes.methods import available_methods, get_method

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "foldoc-concepts-v1.jsonl"
DEPTH = 10
SKIP = {"dense-ann"}  # needs an HNSW graph built with `--ann`; bench/ann.py measures it


def corpora() -> dict:
    folder = dataset_path("scifact")
    queries, _ = beir_split(folder, "test")
    foldoc_queries = {o["qid"]: o["query"] for o in map(json.loads, BENCHMARK.read_text().splitlines()) if o}
    return {"scifact": (load_beir_corpus(folder), queries), "foldoc": (load_foldoc(), foldoc_queries)}


def with_vectors(index: Index, name: str) -> Index:
    """Attach MiniLM vectors, encoded once per corpus content and cached on disk."""
    from sidelight.models.embedder import Embedder

    emb = Embedder.from_spec("minilm", threads=2)
    path = cache_dir() / "parity" / f"{name}-{index.corpus.content_hash()[:16]}.npy"
    if path.is_file():
        vectors = np.load(path)
    else:
        texts = [index.corpus.indexed_text(r) for r in index.corpus.records]
        vectors = emb.encode(texts, kind="doc", progress=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    index.dense = DenseStore(vectors, emb.identity, "minilm", 0, 2, emb)
    return index


def rank_all(index: Index, queries: dict[str, str], only: set[str] | None = None) -> dict:
    out = {}
    for method in sorted((set(available_methods()) - SKIP) & (only or set(available_methods()))):
        m = get_method(method)
        runs = {}
        for qid in sorted(queries):
            r = m.rank(index, queries[qid], DEPTH)
            runs[qid] = [[str(index.ids[p]), float(s)] for p, s in zip(r.positions, r.scores)]
        out[method] = runs
        print(f"  {method}: {len(runs)} queries", file=sys.stderr)
    return out


def compare(after: dict, before: dict) -> tuple[list[list], bool]:
    rows, same = [], True
    for corpus in sorted(set(before) | set(after)):
        for method in sorted(set(before.get(corpus, {})) | set(after.get(corpus, {}))):
            a, b = after.get(corpus, {}).get(method), before.get(corpus, {}).get(method)
            if a is None or b is None:
                rows.append([corpus, method, "missing " + ("after" if a is None else "before"), "", ""])
                same = False
                continue
            qids = sorted(set(a) | set(b))
            equal = sum([h[0] for h in a.get(q, [])] == [h[0] for h in b.get(q, [])] for q in qids)
            diff = max((abs(x[1] - y[1]) for q in qids for x, y in zip(a.get(q, []), b.get(q, []))), default=0.0)
            same &= equal == len(qids)
            rows.append([corpus, method, f"{equal}/{len(qids)}", f"{diff:.2e}", "yes" if equal == len(qids) else "NO"])
    return rows, same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True, help="write the rankings here")
    ap.add_argument("--compare", type=Path, help="a reference written by this script (e.g. before a refactor)")
    ap.add_argument("--methods", help="comma-separated methods to rank (default: every registered one)")
    ap.add_argument("--code", type=Path, help="rank with the sidelight package of this checkout (e.g. a git worktree)")
    args = ap.parse_args()
    rankings = {"sidelight": str(Path(sidelight.__file__).parent), "depth": DEPTH}
    for name, (corpus, queries) in corpora().items():
        print(f"{name}: {len(corpus)} records, {len(queries)} queries", file=sys.stderr)
        only = set(args.methods.split(",")) if args.methods else None
        rankings[name] = rank_all(with_vectors(Index.build(corpus, progress=False), name), queries, only)
    write_json(args.json, rankings)
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    def corpora_of(d: dict) -> dict:  # the rankings per corpus, without the `made_by` stamp write_json adds
        return {k: v for k, v in d.items() if isinstance(v, dict) and k != "made_by"}

    rows, same = compare(corpora_of(rankings), corpora_of(before))
    print_table(["corpus", "method", "identical queries", "max |score diff|", "same"], rows)
    print("every ranking identical" if same else "RANKINGS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
