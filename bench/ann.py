"""dense-ann (usearch HNSW + exact rescoring) against exact `dense`: recall@10 and query latency.

    .venv/bin/python bench/ann.py [--json OUT] [--n-synthetic 200000] [--index PATH] [--quick]

recall@10 = share of the exact `dense` top-10 positions found in the `dense-ann` top-10, averaged
over queries. Latency: `Method.rank(index, query, 10)` per query with the query vector cached
(MiniLM query encoding, the same for both methods, is left out), numpy BLAS and usearch on one
thread, one warm-up query, 3 passes over the queries, p50/p95 over all timings.

SciFact: the cached MiniLM index (no re-encoding); the graph is built over its stored vectors;
the 300 test queries (vectors from the query cache shared with bench/dense.py and bench/fusion.py);
also nDCG@10 of both methods on those queries. Synthetic: N x 384 unit vectors and 300 unit queries,
all i.i.d. Gaussian then normalised (`numpy.random.default_rng(0)`): the hard case for a graph index
(no cluster structure, the top-10 barely separated from the rest). Build: default `AnnParams`
(threads=1, reproducible); the synthetic graph may be built with `--build-threads 2` (faster, not
byte-reproducible). Each block also sweeps `expansion_search` (ef at query time).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from _common import print_table, write_json  # noqa: E402

from sidelight.methods import get_method  # noqa: E402
from sidelight.methods.dense import DenseStore  # noqa: E402
from sidelight.structures.ann import FILE, AnnParams  # noqa: E402

now = time.perf_counter
DIM = 384
SEED = 0


def blas_one():
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


class VectorIndex:
    """The two attributes the dense methods read from an Index: `dense` and `id_rank`."""

    def __init__(self, vectors: np.ndarray):
        self.dense = DenseStore(vectors, {"name": "synthetic", "dim": vectors.shape[1]}, "synthetic")
        self.id_rank = np.arange(len(vectors), dtype=np.int64)  # ids in position order


def set_queries(index, qvecs: np.ndarray) -> list[str]:
    index.dense.encode_query = lambda text: qvecs[int(text)]
    return [str(i) for i in range(len(qvecs))]


def compare(index, queries: list[str], ann_variants: dict[str, dict], passes: int = 3) -> list[dict]:
    """recall@10 of each dense-ann variant against exact dense, and p50/p95 latency of every method."""
    methods = {"dense (exact)": get_method("dense")}
    methods.update({label: get_method("dense-ann", **p) for label, p in ann_variants.items()})
    exact = [set(methods["dense (exact)"].rank(index, q, 10).positions.tolist()) for q in queries]
    rows = []
    with blas_one():
        for label, m in methods.items():
            m.rank(index, queries[0], 10)  # warm-up (opens the graph)
            times, recall = [], []
            for _ in range(passes):
                for q in queries:
                    t0 = now()
                    m.rank(index, q, 10)
                    times.append((now() - t0) * 1e3)
            for q, e in zip(queries, exact):
                recall.append(len(e & set(m.rank(index, q, 10).positions.tolist())) / 10)
            rows.append({"method": label, "params": dict(m.params), "recall@10": float(np.mean(recall)),
                         "min_recall@10": float(np.min(recall)), "p50_ms": float(np.percentile(times, 50)),
                         "p95_ms": float(np.percentile(times, 95)), "n_timings": len(times)})
            print(f"  {label:<34} recall@10 {rows[-1]['recall@10']:.4f}  p50 {rows[-1]['p50_ms']:.3f} ms",
                  file=sys.stderr)
    return rows


def build_and_size(store: DenseStore, params: AnnParams) -> dict:
    t0 = now()
    store.build_ann(params)
    build_s = now() - t0
    with tempfile.TemporaryDirectory() as tmp:
        store.ann().save(Path(tmp))
        size = (Path(tmp) / FILE).stat().st_size
    return {"build_s": round(build_s, 2), "file_mb": round(size / 2**20, 1), "params": params.to_dict(),
            "vectors_mb": round(store.vectors.nbytes / 2**20, 1)}


def variants(es_list: list[int]) -> dict[str, dict]:
    out = {"dense-ann (defaults)": {}}
    for es in es_list:
        out[f"dense-ann expansion_search={es}"] = {"expansion_search": es}
    out["dense-ann candidates=10 (no oversampling)"] = {"candidates": 10}
    return out


def scifact(args) -> dict:
    from dense import (  # bench/dense.py: same query-vector cache
        cached_query_vectors,
        qrels_in,
    )

    from sidelight.corpus.beir import load_queries
    from sidelight.index import Index
    from sidelight.lab.evaluate import evaluate_method

    index = Index.load(args.index)
    queries = load_queries(args.data / "queries.jsonl")
    known = set(index.corpus.ids)
    train = qrels_in(args.data / "qrels" / "train.tsv", known)
    test = qrels_in(args.data / "qrels" / "test.tsv", known)
    test_ids = sorted(test)
    vecs = cached_query_vectors(index, [queries[q] for q in list(train) + test_ids], args.cache)
    if args.quick:
        test_ids = test_ids[:100]
    qvecs = np.stack([vecs[queries[q]] for q in test_ids])
    info = build_and_size(index.dense, AnnParams())
    qtexts = set_queries(index, qvecs)
    print(f"SciFact: {len(index.ids)} records, graph built in {info['build_s']} s", file=sys.stderr)
    rows = compare(index, qtexts, variants(args.expansion_search))
    quality = {}
    qmap = {q: str(i) for i, q in enumerate(test_ids)}
    for name in ("dense", "dense-ann"):
        r = evaluate_method(index, get_method(name), qmap, {q: test[q] for q in test_ids}, ["ndcg@10"],
                            depth=10, progress=False)
        quality[name] = r.metrics["ndcg@10"]
    return {"records": len(index.ids), "queries": len(test_ids), "query_set": "SciFact test (all with qrels)",
            **info, "rows": rows, "ndcg@10": quality}


def synthetic(args) -> dict:
    rng = np.random.default_rng(SEED)
    n = args.n_synthetic
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    qvecs = rng.standard_normal((args.synthetic_queries, DIM), dtype=np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    index = VectorIndex(vectors)
    info = build_and_size(index.dense, AnnParams(threads=args.build_threads))
    print(f"synthetic: {n} x {DIM}, graph built in {info['build_s']} s ({args.build_threads} thread(s))",
          file=sys.stderr)
    rows = compare(index, set_queries(index, qvecs), variants(args.expansion_search))
    return {"records": n, "dim": DIM, "queries": len(qvecs),
            "generator": f"numpy default_rng({SEED}): standard_normal float32 rows, L2-normalised; "
                         f"then {len(qvecs)} queries the same way", **info, "rows": rows}


def table(title: str, block: dict) -> None:
    print(f"\n{title}: {block['records']} records, {block['queries']} queries; graph build {block['build_s']} s "
          f"({block['params']['threads']} thread(s)), file {block['file_mb']} MB (vectors {block['vectors_mb']} MB)")
    base = block["rows"][0]["p50_ms"]
    print_table(["method", "recall@10", "min", "p50 ms", "p95 ms", "speed-up p50"],
                [[r["method"], f"{r['recall@10']:.4f}", f"{r['min_recall@10']:.1f}", f"{r['p50_ms']:.3f}",
                  f"{r['p95_ms']:.3f}", f"{base / r['p50_ms']:.1f}x"] for r in block["rows"]])
    if "ndcg@10" in block:
        print("nDCG@10 (test): " + ", ".join(f"{k} {v:.4f}" for k, v in block["ndcg@10"].items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, default=Path(".cache/indexes/scifact-minilm"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    ap.add_argument("--cache", type=Path, default=Path(".cache/fusion"), help="query vector cache (shared)")
    ap.add_argument("--n-synthetic", type=int, default=200_000)
    ap.add_argument("--synthetic-queries", type=int, default=300)
    ap.add_argument("--build-threads", type=int, default=1, help="threads for the synthetic graph build")
    ap.add_argument("--expansion-search", type=lambda s: [int(x) for x in s.split(",")], default=[256, 512],
                    help="extra expansion_search values to sweep (comma list)")
    ap.add_argument("--no-scifact", action="store_true")
    ap.add_argument("--no-synthetic", action="store_true")
    ap.add_argument("--quick", action="store_true", help="100 SciFact queries, 20k synthetic records")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.quick:
        args.n_synthetic = min(args.n_synthetic, 20_000)
    import usearch

    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
           "platform": platform.platform(), "python": platform.python_version(), "usearch": usearch.__version__,
           "numpy": np.__version__, "load_start": list(os.getloadavg()), "defaults": AnnParams().to_dict(),
           "dense_ann_defaults": dict(get_method("dense-ann").params),
           "recall": "mean over queries of |exact top-10 & ann top-10| / 10",
           "latency": "Method.rank(..., 10), cached query vector, 1 thread, 3 passes, p50/p95"}
    t0 = now()
    if not args.no_scifact:
        out["scifact"] = scifact(args)
        table("SCIFACT (MiniLM vectors from the cached index)", out["scifact"])
    if not args.no_synthetic:
        out["synthetic"] = synthetic(args)
        table(f"SYNTHETIC ({DIM}-d i.i.d. unit vectors, seed {SEED})", out["synthetic"])
    out["load_end"] = list(os.getloadavg())
    out["runtime_s"] = round(now() - t0, 1)
    print(f"\nruntime {out['runtime_s']} s; load {out['load_start'][0]:.2f} -> {out['load_end'][0]:.2f} "
          f"on {os.cpu_count()} shared CPUs (absolute times are upper bounds)")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
