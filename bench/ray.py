"""Sharded indexes on Ray: build and encode with 1 and 2 workers, and the query fan-out's cost.

    python bench/ray.py [--json OUT] [--parts build,encode,query] [--shards N]

Every configuration runs in a fresh child process (its own local Ray instance of `workers` CPUs,
on the loopback address); this machine has 2 cores, so 2x is the ceiling of any speed-up.

- build: the 1M-document corpus of `bench/lexical.py` ("scifact-x200", 1,036,600 documents,
  cached TSV), a lexical index of `--shards` shards (default 2), written in this process
  (`ShardedIndex.write_sharded`, shards counted one after another) and on Ray (`builders=ray_builders`:
  one counting task and one writing task per shard) with 1 and 2 worker CPUs. Seconds, ratio to
  in-process, the driver's peak memory, the folder's size. The 1M index built on 2 workers is then
  served on Ray: BM25 top-10 p50/p95 over the 300 SciFact test queries (their words occur there).
- encode: SciFact's 5,183 records through MiniLM int8: `DenseStore.build` in this process with 1
  and 2 ONNX threads, and `ray_encode` (Ray Data `map_batches`, one encoder actor per worker, one
  thread each) with 1 and 2 workers. Seconds and records/s.
- query: SciFact with MiniLM vectors (the demo's cached index), 300 test queries, for bm25, dense,
  rrf and bm25+ppr: p50/p95 ms on the unsharded index, on the sharded index in this process, and
  through the Ray fan-out (one actor per shard, 2 CPUs); query vectors cached, so encoding is
  not in any figure. Overhead = Ray p50 - unsharded p50; rankings checked equal on every query.

The JSON also holds the per-shard figures `docs/scale.md`'s sizing table is computed from.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# this file is named ray.py: its folder goes last on the path, so `import ray` finds Ray itself
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]
sys.path.insert(0, str(HERE.parent))
try:  # Ray itself, imported before a helper (bench/lexical.py) puts this folder first again
    import ray  # noqa: F401
except ImportError:
    sys.exit("bench/ray.py needs the Ray extra: pip install 'sidelight[ray]'")

from _common import median, now, peak_mb, print_table, write_json  # noqa: E402

PARTS = ["build", "encode", "query"]
METHODS = ["bm25", "dense", "rrf", "bm25+ppr"]
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # local Ray on the loopback address


def pct(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(values, q))


def run_child(args: list[str], timeout: float = 3600) -> dict:
    import subprocess

    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise RuntimeError(f"child {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def start_ray(workers: int):
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    return ray


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


# ---- children ---------------------------------------------------------------------------------------
def child_build(how: str, workers: int, n_shards: int) -> dict:
    from lexical import load_corpus, make_copies, test_queries

    from sidelight.corpus import Corpus, Record
    from sidelight.index.sharded import ShardedIndex

    make_copies("scifact-x200")
    ids, texts = load_corpus("scifact-x200")
    corpus = Corpus("x200", [Record(i, "", t) for i, t in zip(ids, texts)], checked=True)
    del ids, texts
    builders = None
    if how == "ray":
        from sidelight.index.ray_shards import ray_builders

        start_ray(workers)
        builders = ray_builders
    folder = Path(tempfile.mkdtemp(prefix="sidelight-bench-ray-")) / "idx"
    t0 = now()
    index = ShardedIndex.write_sharded(corpus, folder, n_shards, progress=False, builders=builders)
    out = {"seconds": now() - t0, "driver_peak_mb": peak_mb(), "disk_mb": folder_mb(folder),
           "records": len(corpus), "shard_records": index.manifest["shards"]["records"],
           "shard_disk_mb": [folder_mb(folder / "shards" / str(s)) for s in range(n_shards)]}
    if how == "ray" and workers == 2:  # serve the 1M index on Ray: BM25 through the fan-out
        from sidelight.index.ray_shards import serve_on_ray

        serve_on_ray(index)
        qs = test_queries()
        for q in qs[:20]:
            index.search(q, "bm25")
        times = []
        for q in qs:
            t = now()
            index.search(q, "bm25")
            times.append((now() - t) * 1000)
        out["bm25_ms"] = {"p50": median(times), "p95": pct(times, 95)}
    shutil.rmtree(folder.parent, ignore_errors=True)
    return out


def scifact_texts() -> list[str]:
    from sidelight.config import dataset_path
    from sidelight.corpus.beir import load_beir_corpus

    corpus = load_beir_corpus(dataset_path("scifact"))
    return [corpus.indexed_text(r) for r in corpus.records]


def child_encode(how: str, workers: int) -> dict:
    texts = scifact_texts()
    t0 = now()
    if how == "ray":
        from sidelight.index.ray_shards import ray_encode

        start_ray(workers)
        t0 = now()  # the encoding, not Ray's start
        store = ray_encode(texts, "minilm", workers, batch_size=32, threads=1)
    else:
        from sidelight.structures.dense import DenseStore

        store = DenseStore.build(texts, "minilm", 32, workers, progress=False)
    seconds = now() - t0
    return {"seconds": seconds, "records_per_s": len(texts) / seconds, "records": len(texts),
            "dim": int(store.vectors.shape[1])}


def scifact_dense_index():
    """The demo's cached SciFact index with MiniLM vectors (built and cached when missing)."""
    from sidelight.config import cache_dir, dataset_path
    from sidelight.corpus.beir import load_beir_corpus
    from sidelight.errors import IndexFormatError
    from sidelight.index import Index
    from sidelight.structures.dense import DenseStore

    folder = cache_dir() / "indexes" / "scifact-minilm"
    try:
        return Index.load(folder)
    except IndexFormatError:
        corpus = load_beir_corpus(dataset_path("scifact"))
        dense = DenseStore.build([corpus.indexed_text(r) for r in corpus.records], "minilm")
        return Index.write(corpus, folder, dense=dense, force=True)


def child_query(n_shards: int) -> dict:
    from _common import cached_query_vectors, use_cached_vectors
    from lexical import test_queries

    from sidelight.config import cache_dir
    from sidelight.index.index import warm_kernels
    from sidelight.index.ray_shards import serve_on_ray
    from sidelight.index.sharded import ShardedIndex

    one = scifact_dense_index()
    queries = test_queries()
    vectors = cached_query_vectors(one, queries, cache_dir() / "bench")
    folder = Path(tempfile.mkdtemp(prefix="sidelight-bench-ray-")) / "idx"
    sharded = ShardedIndex.write_sharded(one.corpus, folder, n_shards, dense=one.dense, progress=False)
    for index in (one, sharded):
        use_cached_vectors(index, vectors)
    warm_kernels()

    def timed(index, method):
        for q in queries[:10]:
            index.search(q, method)
        times, runs = [], []
        for q in queries:
            t = now()
            runs.append(index.search(q, method))
            times.append((now() - t) * 1000)
        return times, runs

    rows = {}
    for method in METHODS:
        rows[method] = {}
        base_times, base = timed(one, method)
        local_times, local = timed(sharded, method)
        rows[method]["one"] = {"p50": median(base_times), "p95": pct(base_times, 95)}
        rows[method]["sharded"] = {"p50": median(local_times), "p95": pct(local_times, 95)}
        rows[method]["equal_local"] = sum(a.ids == b.ids for a, b in zip(base, local))
    start_ray(2)
    serve_on_ray(sharded)
    for method in METHODS:
        ray_times, on_ray = timed(sharded, method)
        _, base = timed(one, method)
        rows[method]["ray"] = {"p50": median(ray_times), "p95": pct(ray_times, 95)}
        rows[method]["equal_ray"] = sum(a.ids == b.ids for a, b in zip(base, on_ray))
        rows[method]["overhead_ms"] = rows[method]["ray"]["p50"] - rows[method]["one"]["p50"]
    shutil.rmtree(folder.parent, ignore_errors=True)
    return {"shards": n_shards, "queries": len(queries), "methods": rows}


# ---- sizing -------------------------------------------------------------------------------------------
SHARD_RECORDS = 2_000_000  # records per shard in the sizing table
NODE_GIB, NODE_CORES = 64, 16  # the node the table sizes for
DENSE_BYTES = 384 * 4  # one MiniLM vector (float32)


def sizing(out: dict) -> list[dict]:
    """The sizing table of docs/scale.md, from measured figures only (assumptions in its notes)."""
    b1, b2, enc, q = out["build"]["ray-1"], out["build"]["ray-2"], out["encode"]["ray-1"], out["query"]["methods"]
    shard_bytes = 1e6 * sum(b2["shard_disk_mb"]) / b2["records"]  # per record, lexical + its records
    coord_bytes = 1e6 * (b2["disk_mb"] - sum(b2["shard_disk_mb"])) / b2["records"]
    build_rate = b1["records"] / b1["seconds"]  # records per second per worker
    per_shard_bm25 = b2["bm25_ms"]["p50"] * SHARD_RECORDS / max(b2["shard_records"])  # linear in postings
    overhead = q["bm25"]["overhead_ms"]
    rows = []
    for total in (10_000_000, 100_000_000, 1_000_000_000):
        shards = -(-total // SHARD_RECORDS)
        shard_gib = SHARD_RECORDS * (shard_bytes + DENSE_BYTES) / 2**30
        per_node = max(1, min(NODE_CORES, int(0.75 * NODE_GIB // shard_gib)))
        rows.append({"records": total, "shards": shards, "shard_gib": shard_gib, "shards_per_node": per_node,
                     "nodes": -(-shards // per_node), "coordinator_gib": total * coord_bytes / 2**30,
                     "build_worker_hours": total / build_rate / 3600,
                     "encode_worker_hours": total / enc["records_per_s"] / 3600,
                     "bm25_p50_ms": per_shard_bm25 + overhead})
    return rows


def print_sizing(rows: list[dict]) -> None:
    print_table(["records", "shards", "GiB/shard", "shards/node", "nodes", "coordinator GiB",
                 "lexical build worker-h", "dense encode worker-h", "BM25 p50 ms"],
                [[f"{r['records']:,}", r["shards"], f"{r['shard_gib']:.1f}", r["shards_per_node"], r["nodes"],
                  f"{r['coordinator_gib']:.0f}", f"{r['build_worker_hours']:.1f}", f"{r['encode_worker_hours']:,.0f}",
                  f"{r['bm25_p50_ms']:.0f}"] for r in rows])


# ---- the parent -------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {','.join(PARTS)}")
    ap.add_argument("--shards", type=int, default=2, help="shards of the 1M build (default 2)")
    ap.add_argument("--query-shards", type=int, default=3, help="shards of the SciFact query index (default 3)")
    ap.add_argument("--sizing", metavar="JSON", help="only print the sizing table of an earlier run's JSON")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.sizing:  # recomputed from the measured figures, under this file's assumptions
        print_sizing(sizing(json.loads(Path(args.sizing).read_text())))
        return 0
    if args.child:
        kind, *rest = args.child
        fn = {"build": lambda: child_build(rest[0], int(rest[1]), int(rest[2])),
              "encode": lambda: child_encode(rest[0], int(rest[1])),
              "query": lambda: child_query(int(rest[0]))}[kind]
        print(json.dumps(fn()))
        return 0
    parts = [p for p in args.parts.split(",") if p]
    # a run of some parts keeps the other parts' figures of an earlier run in the same JSON
    out: dict = json.loads(Path(args.json).read_text()) if args.json and Path(args.json).is_file() else {}
    out["machine"] = {"cores": os.cpu_count()}
    if "build" in parts:
        build = {}
        for how, workers in (("local", 1), ("ray", 1), ("ray", 2)):
            name = "in-process" if how == "local" else f"ray-{workers}"
            print(f"build 1M documents, {args.shards} shards: {name} ...", file=sys.stderr)
            build[name] = run_child(["build", how, str(workers), str(args.shards)])
        base = build["in-process"]["seconds"]
        print_table(["1M build", "seconds", "vs in-process", "driver peak MB", "disk MB"],
                    [[k, f"{v['seconds']:.1f}", f"{base / v['seconds']:.2f}x", f"{v['driver_peak_mb']:,.0f}",
                      f"{v['disk_mb']:,.0f}"] for k, v in build.items()])
        if "bm25_ms" in build["ray-2"]:
            b = build["ray-2"]["bm25_ms"]
            print(f"1M index on Ray (2 workers, {args.shards} shards): BM25 top-10 p50 {b['p50']:.1f} ms, "
                  f"p95 {b['p95']:.1f} ms")
        out["build"] = build
    if "encode" in parts:
        enc = {}
        for how, workers in (("local", 1), ("local", 2), ("ray", 1), ("ray", 2)):
            name = f"in-process-{workers}t" if how == "local" else f"ray-{workers}"
            print(f"encode SciFact: {name} ...", file=sys.stderr)
            enc[name] = run_child(["encode", how, str(workers)])
        base = enc["in-process-1t"]["seconds"]
        print_table(["SciFact encoding", "seconds", "records/s", "vs in-process 1 thread"],
                    [[k, f"{v['seconds']:.1f}", f"{v['records_per_s']:.1f}", f"{base / v['seconds']:.2f}x"]
                     for k, v in enc.items()])
        out["encode"] = enc
    if "query" in parts:
        print(f"queries: SciFact, {args.query_shards} shards ...", file=sys.stderr)
        q = run_child(["query", str(args.query_shards)])
        print_table(["method", "one p50", "one p95", "sharded p50", "ray p50", "ray p95", "overhead ms", "equal"],
                    [[m, f"{r['one']['p50']:.2f}", f"{r['one']['p95']:.2f}", f"{r['sharded']['p50']:.2f}",
                      f"{r['ray']['p50']:.2f}", f"{r['ray']['p95']:.2f}", f"{r['overhead_ms']:.2f}",
                      f"{r['equal_ray']}/{q['queries']}"] for m, r in q["methods"].items()])
        out["query"] = q
    if all(p in out for p in PARTS):
        out["sizing"] = sizing(out)
        print_sizing(out["sizing"])
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
