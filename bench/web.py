"""The exported page (`sidelight export-web`) in headless Chromium: size, load, query time, parity.

    python bench/web.py [--json bench/results/web.json] [--loads 3] [--screenshot docs/web-page.png]
    python bench/web.py --lean INDEX [INDEX_WITH_VECTORS] [--json bench/results/web-lean.json]

Two sites, each opened from disk (file://) in Debian's Chromium, the worker on one thread:

- scifact: the demo's index with MiniLM vectors (`.cache/indexes/scifact-minilm`, built if
  missing), BEIR SciFact's 300 test queries;
- foldoc: the lab's FOLDOC index (min length 2, Lucene stop list; protocols/foldoc-carrier-v2)
  with MiniLM vectors from the lab's dense cache (encoded once if missing), the FOLDOC
  benchmark's held-out (test) split.

Per site: the exported size (total and per payload); page load to first search, the median of
`--loads` fresh loads: time to parse the data scripts, decode, set up the index in the worker,
set up the model (onnxruntime-web compile + session), and the first search (ms since navigation
start); p50/p90 query time per method over the queries, each query encoded in the page (encode
timed apart from ranking); parity with Python for every method on every query (Python's query
vectors on both sides: same top-10 ids in order, scores within 1e-6 relative, same relation
paths); the cosine of the page's own query vectors to Python's on 20 queries; and the same dense
parity with `--vectors float16`, which halves the vectors: how many top-10 lists differ from
Python's (its scores differ from Python's float32 cosines by design).

With `--lean`: the page of an index exported full and with `--lean` (BM25 and the graph lanes,
no model, no ONNX runtime): size and navigation start -> first search done over every method
the page offers (median of `--loads`; the full page waits for its model first).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from _common import print_table, write_json  # noqa: E402

from sidelight.config import dataset_path  # noqa: E402
from sidelight.corpus.beir import beir_split  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.web.export import export_web  # noqa: E402
from sidelight.web.parity import (chromium, compare, encode_check, open_page, page_rankings,  # noqa: E402
                                  python_rankings)

REPO = HERE.parent
CACHE = REPO / ".cache" / "bench" / "web"
METHODS = ["bm25", "tfidf", "rrf-lexical", "bm25+ppr", "relation", "dense", "rrf"]


def scifact() -> tuple[Index, list[str]]:
    path = REPO / ".cache" / "indexes" / "scifact-minilm"
    if not path.exists():
        from sidelight.corpus.beir import load_beir_corpus

        index = Index.build(load_beir_corpus(dataset_path("scifact")))
        index.add_dense()
        index.save(path)
    return Index.load(path), list(beir_split(dataset_path("scifact"), "test")[0].values())


def foldoc() -> tuple[Index, list[str]]:
    path = CACHE / "foldoc-idx"
    if not path.exists():
        from sidelight.corpus.foldoc import load_foldoc
        from sidelight.lab.densecache import dense_store
        from sidelight.text import TokenizerConfig

        corpus = load_foldoc()
        lexical = Index.build(corpus, TokenizerConfig(min_length=2, stopwords="lucene-en-v1"), progress=False)
        store, _ = dense_store(corpus, progress=True)
        Index(corpus, lexical.lexical, dense=store, graph=lexical.graph).save(path)
    rows = [json.loads(line) for line in (REPO / "benchmarks" / "foldoc-concepts-v1.jsonl").open()]
    return Index.load(path), [r["query"] for r in rows if r["split"] == "test"]


def load_times(driver, site: Path, loads: int) -> dict:
    """Median over fresh loads of each load stage (ms) and of navigation start -> first search done."""
    runs = []
    for _ in range(loads):
        driver.get("about:blank")
        t = open_page(driver, site, model=True)
        if "error" in t:
            raise RuntimeError(f"{site}: {t['error']}")
        t["first_search_ms"] = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.sidelight.search('a first question', window.sidelight.manifest.methods_offered, 10)"
            ".then(() => done(performance.now()), (e) => done(-1));")
        runs.append(t)
    return {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}


def query_times(driver, queries: list[str], methods: list[str]) -> dict:
    """Per method: p50/p90 ms of ranking (and of `encode`, the page encoding the query), one query at a time."""
    rows = driver.execute_async_script(
        "const [queries, methods] = arguments, done = arguments[arguments.length - 1];"
        "(async () => { const out = []; for (const q of queries)"
        " out.push((await window.sidelight.search(q, methods, 10)).timings); return out; })()"
        ".then(done, (e) => done({error: String(e)}));", queries, methods)
    if isinstance(rows, dict):
        raise RuntimeError(rows["error"])
    keys = [k for k in ("encode", *methods) if k in rows[0]]
    return {k: {"p50_ms": round(float(np.percentile([r[k] for r in rows], 50)), 2),
                "p90_ms": round(float(np.percentile([r[k] for r in rows], 90)), 2)} for k in keys}


def measure(name: str, index: Index, queries: list[str], driver, loads: int, shot: Path | None) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"web-{name}-"))
    report = export_web(index.path, work / "site")
    methods = [m for m in METHODS if m in report.methods]
    vectors = index.dense.embedder().encode(queries, kind="query")
    out = {"records": len(index.corpus), "queries": len(queries), "methods": methods,
           "export_s": round(report.seconds, 2), "site_mb": round(report.total_bytes / 1e6, 2),
           "files_mb": {k: round(v / 1e6, 3) for k, v in sorted(report.files.items(), key=lambda kv: -kv[1])[:6]}}
    out["load_ms"] = load_times(driver, work / "site", loads)
    parity = compare(python_rankings(index, queries, methods, 10, vectors),
                     page_rankings(driver, queries, methods, 10, vectors))
    out["parity"] = {"comparisons": parity.comparisons, "mismatches": len(parity.mismatches),
                     "examples": [f"{m} {queries[i]!r}: {why}" for m, i, why in parity.mismatches[:5]]}
    out["encode_cosine_min"] = round(min(encode_check(driver, index, queries[:20])), 6)
    out["query_ms"] = query_times(driver, queries, methods)
    if shot is not None:
        driver.set_window_size(1400, 1100)
        driver.execute_script("document.getElementById('q').value = arguments[0];"
                              "document.getElementById('go').click();", queries[3])
        import time

        time.sleep(3)
        shot.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(shot))
    half = export_web(index.path, work / "site16", vectors="float16")
    open_page(driver, work / "site16")
    dense = [m for m in ("dense", "rrf") if m in methods]
    p16 = compare(python_rankings(index, queries, dense, 10, vectors), page_rankings(driver, queries, dense, 10, vectors))
    out["float16"] = {"site_mb": round(half.total_bytes / 1e6, 2), "comparisons": p16.comparisons,
                      "top10_differs": sum(why.startswith("ids") for _, _, why in p16.mismatches),
                      "scores_differ": sum(why.startswith("scores") for _, _, why in p16.mismatches)}
    return out


def one_vector_copy(path: Path) -> Path:
    """A copy of the index at `path` with one MiniLM vector per record (the page scores no section
    windows, which a folder's notes get by default), built once under .cache/bench/web."""
    index = Index.load(path)
    if index.dense is not None and index.dense.passages is None:
        return path
    copy = CACHE / f"{path.name}-one-vector"
    if not copy.exists():
        import sidelight.index.index as built

        keep, built.section_passages = built.section_passages, lambda corpus, stride=64: None
        try:  # a bench copy: one window per record, the first 256 wordpieces
            index.add_dense(progress=False)
        finally:
            built.section_passages = keep
        index.save(copy)
    return copy


def lean_vs_full(paths: list[Path], driver, loads: int) -> dict:
    """Size (MB) and load-to-first-search (ms) of the full and the --lean export of each index."""
    out = {}
    work = Path(tempfile.mkdtemp(prefix="web-lean-"))
    for n, path in enumerate(one_vector_copy(p) for p in paths):
        for lean in (False, True):
            site = work / f"site{n}{'-lean' if lean else ''}"
            report = export_web(path, site, lean=lean)
            out[f"{path.name}{' --lean' if lean else ''}"] = {
                "index": str(path), "methods": report.methods, "site_mb": round(report.total_bytes / 1e6, 2),
                "load_ms": load_times(driver, site, loads)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    ap.add_argument("--loads", type=int, default=3, help="fresh page loads per site (median)")
    ap.add_argument("--screenshot", type=Path, default=None, help="save the FOLDOC page after a search here (PNG)")
    ap.add_argument("--sites", default="scifact,foldoc")
    ap.add_argument("--lean", type=Path, nargs="+", default=None, metavar="INDEX",
                    help="only compare the full and the --lean export of these indexes")
    args = ap.parse_args()
    if args.lean:
        with chromium() as driver:
            res = lean_vs_full(args.lean, driver, args.loads)
        print_table(["export", "methods", "MB", "index set-up ms", "model ms", "first search ms"],
                    [[k, len(r["methods"]), r["site_mb"], r["load_ms"]["index_setup_ms"],
                      r["load_ms"].get("model_setup_ms", "-"), r["load_ms"]["first_search_ms"]] for k, r in res.items()])
        if args.json:
            write_json(args.json, {"lean_vs_full": res, "chromium": "Debian chromium, headless, worker on 1 thread"})
        return 0
    sites = {"scifact": scifact, "foldoc": foldoc}
    results = {}
    with chromium() as driver:
        for name in args.sites.split(","):
            index, queries = sites[name]()
            results[name] = measure(name, index, queries, driver, args.loads,
                                    args.screenshot if name == "foldoc" else None)
            print(f"{name}: done", file=sys.stderr)
    rows = []
    for name, r in results.items():
        L = r["load_ms"]
        rows.append([name, r["records"], r["site_mb"], L["download_ms"], L["decode_ms"], L["index_setup_ms"],
                     L.get("model_setup_ms", "-"), L["first_search_ms"],
                     f"{r['parity']['comparisons']}/{r['parity']['mismatches']}", r["encode_cosine_min"],
                     f"{r['float16']['comparisons']}/{r['float16']['top10_differs']}"])
    print_table(["site", "records", "MB", "scripts ms", "decode ms", "index ms", "model ms", "first search ms",
                 "parity cmp/mismatch", "min cos", "float16 dense cmp/top-10 differs"], rows)
    print()
    names = list(results)
    keys = ["encode", *METHODS]
    print_table(["p50 ms (p90)", *names], [[k, *(f"{results[n]['query_ms'][k]['p50_ms']} ({results[n]['query_ms'][k]['p90_ms']})"
                                              if k in results[n]["query_ms"] else "-" for n in names)] for k in keys])
    if args.json:
        write_json(args.json, {"sites": results, "chromium": "Debian chromium, headless, worker on 1 thread"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
