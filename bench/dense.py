"""Dense lane, hybrid and floor on SciFact: setup costs, query latency, and the floor's default scorer.

    .venv/bin/python bench/dense.py [--json OUT] [--quick] [--full] [--index PATH]

Setup (reported apart from query time): index load, MiniLM model load, corpus encoding rate on
a fixed sample of 300 documents (`random.Random(0).sample`, `--full`: the whole corpus, 2 threads
only), and the lexical index build. Each with 1 and 2 ONNX Runtime intra-op threads (one
inter-op thread, sequential execution; numpy's BLAS pool capped to the same count).

Latency: 100 of the 300 SciFact test queries (`random.Random(45109).sample(sorted(test ids), 100)`,
as the pilot), methods dense, bm25, rrf, learned (when registered) and floor (default scorer, no
deadline), top 10. Three passes; the method order rotates every pass; each pass runs every query
through every method. A query's time covers tokenization, MiniLM query encoding (live, not cached),
full-corpus scoring, fusion, the floor's second stage and sorting; not evaluation. One untimed
warm-up query per method first. p50/p95 are over all 3 x 100 timings. The 2 CPUs are shared with
other jobs: the 1-minute load average is printed before and after every block.

Encoding race (`--vs-sentence-transformers OUR_MODEL_DIR`, nothing else runs): the first 600 SciFact
abstracts through sentence-transformers fp32 (torch CPU), the bundled MiniLM and our int8 export
(`sidelight adapt INDEX --minutes 0 -o DIR`), 2 threads each, alternating; see bench/_encoding.py.

Quality (query vectors cached; does not time anything): the floor with each offline second stage
(dense, fusion = learned logistic or its RRF fallback, rrf) on the 209 SciFact dev queries (the
train-split queries `learned.split_train` leaves out of fitting), nDCG@10, next to dense, bm25, rrf,
learned over the full corpus. The dev winner is compared with `floor.DEFAULT_SCORER`; then the
300 test queries are run once (not with --quick).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from _common import cached_query_vectors, print_table, use_cached_vectors, write_json  # noqa: E402

from sidelight.corpus.beir import load_qrels, load_queries  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.lab.evaluate import evaluate_method  # noqa: E402
from sidelight.methods import available_methods, get_method  # noqa: E402
from sidelight.methods import floor as floor_mod  # noqa: E402

now = time.perf_counter
METRICS = ["ndcg@10", "recall@5", "recall@100", "mrr@10"]
LATENCY_SEED = 45109
ENCODE_SEED = 0
FLOOR_SCORERS = ["dense", "fusion", "rrf"]  # offline second stages; order = tie preference


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def pct(values, q) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


# ---- query vectors (same cache key as bench/fusion.py, so both share one file) ---------------------
def qrels_in(path: Path, known: set[str]) -> dict[str, dict[str, int]]:
    """Qrels restricted to records in the index (the full SciFact index holds them all)."""
    out = {q: {d: g for d, g in docs.items() if d in known} for q, docs in load_qrels(path).items()}
    return {q: docs for q, docs in out.items() if docs}


def use_live(index: Index) -> None:
    index.dense.__dict__.pop("encode_query", None)


# ---- threads -----------------------------------------------------------------------------------------
def set_threads(index: Index, threads: int):
    """Load MiniLM with `threads` intra-op threads into the index's dense store; returns load seconds."""
    from sidelight.models.embedder import Embedder, check_identity

    t0 = now()
    emb = Embedder.from_spec(index.dense.spec, threads=threads)
    check_identity(index.dense.identity, emb.identity)
    dt = now() - t0
    index.dense._embedder = emb
    index.dense.threads = threads
    return emb, dt


def blas_limit(threads: int):
    try:
        from threadpoolctl import threadpool_limits

        return threadpool_limits(threads)
    except ImportError:  # pragma: no cover
        import contextlib

        return contextlib.nullcontext()


# ---- setup costs ---------------------------------------------------------------------------------------
def setup_costs(index: Index, threads_list, n_sample: int | None) -> dict:
    corpus = index.corpus
    n = len(corpus.records)
    if n_sample is None or n_sample >= n:
        pos = list(range(n))
    else:
        pos = sorted(random.Random(ENCODE_SEED).sample(range(n), n_sample))
    texts = [corpus.indexed_text(corpus.records[p]) for p in pos]
    out = {"encode_sample_docs": len(texts), "encode_sample": "all" if len(pos) == n else
           f"random.Random({ENCODE_SEED}).sample(range({n}), {len(pos)})", "by_threads": {}}
    for t in threads_list:
        with blas_limit(t):
            l0 = load1()
            emb, load_s = set_threads(index, t)
            emb.encode(texts[:8], batch_size=8, kind="doc")  # warm-up
            emb.reset_counters()
            t0 = now()
            emb.encode(texts, batch_size=32, kind="doc")
            enc_s = now() - t0
            out["by_threads"][str(t)] = {
                "model_load_s": round(load_s, 3), "encode_s": round(enc_s, 2),
                "docs_per_s": round(len(texts) / enc_s, 1), "truncated": emb.truncated_docs,
                "corpus_encode_estimate_s": round(n / (len(texts) / enc_s), 1),
                "load_before": l0, "load_after": load1()}
            print(f"  encode {len(texts)} docs, {t} thread(s): {len(texts) / enc_s:.1f} docs/s "
                  f"(load {l0} -> {load1()})", file=sys.stderr)
    from sidelight.index import Index as _Index

    t0 = now()
    _Index.build(corpus, progress=False)
    out["lexical_build_s"] = round(now() - t0, 2)
    return out


# ---- latency ----------------------------------------------------------------------------------------------
def latency(index: Index, method_params: dict[str, dict], queries: list[str], threads_list, passes: int) -> dict:
    use_live(index)
    methods = list(method_params)
    res: dict = {}
    for t in threads_list:
        with blas_limit(t):
            set_threads(index, t)
            ms = {m: get_method(m, **method_params[m]) for m in methods}
            for m in methods:  # warm-up: model sessions, scorer construction, learned model load
                ms[m].rank(index, queries[0], 10)
            times: dict[str, list[float]] = {m: [] for m in methods}
            l0 = load1()
            t_block = now()
            for p in range(passes):
                order = methods[p % len(methods):] + methods[:p % len(methods)]
                for m in order:
                    meth = ms[m]
                    for q in queries:
                        t0 = now()
                        meth.rank(index, q, 10)
                        times[m].append((now() - t0) * 1e3)
            # stage split of the floor (one extra untimed-for-table pass)
            split = {"stage_one_ms": [], "stage_two_ms": [], "n_candidates": [], "n_lexical": []}
            for q in queries:
                fl = floor_mod.floor_from_params(index, q, ms["floor"].params)
                for key in split:
                    split[key].append(getattr(fl, key))
            res[str(t)] = {
                "load_before": l0, "load_after": load1(), "block_s": round(now() - t_block, 1),
                "methods": {m: {"p50_ms": round(pct(v, 50), 2), "p95_ms": round(pct(v, 95), 2),
                                "mean_ms": round(float(np.mean(v)), 2), "n": len(v)} for m, v in times.items()},
                "floor_split": {k: round(float(np.median(v)), 2) for k, v in split.items()},
            }
            print(f"  latency {t} thread(s): load {l0} -> {load1()}", file=sys.stderr)
    return res


# ---- quality ------------------------------------------------------------------------------------------------
def quality(index: Index, queries: dict, qrels: dict, variants: list[tuple[str, str, dict]]) -> list[dict]:
    rows = []
    for label, name, params in variants:
        t0 = now()
        r = evaluate_method(index, get_method(name, **params), queries, qrels, METRICS, depth=100, progress=False)
        row = {"label": label, "method": name, "params": params, **r.metrics, "seconds": round(now() - t0, 1)}
        if name == "floor":  # how often the pool holds the judged documents at all
            pos = index.corpus.position
            inpool, total, lex = 0, 0, []
            fparams = get_method("floor", **params).params
            sc = floor_mod._cached_scorer(index, fparams)
            for qid, text in queries.items():
                fl = floor_mod.floor_from_params(index, text, fparams)
                members = set(fl.order.tolist())
                rel = [pos[d] for d, g in qrels.get(qid, {}).items() if g > 0 and d in pos]
                inpool += sum(p in members for p in rel)
                total += len(rel)
                lex.append(fl.n_lexical)
            row["pool_recall"] = inpool / max(total, 1)
            row["mean_lexical_added"] = float(np.mean(lex))
            row["queries_with_rare_terms"] = int(sum(x > 0 for x in lex))
            row["scorer_name"] = sc.name
        rows.append(row)
        print(f"  {label:<28} ndcg@10 {row['ndcg@10']:.4f}", file=sys.stderr)
    return rows


def quality_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print_table(["variant", "nDCG@10", "R@5", "R@100", "MRR@10", "pool recall"],
                [[r["label"], f"{r['ndcg@10']:.4f}", f"{r['recall@5']:.4f}", f"{r['recall@100']:.4f}",
                  f"{r['mrr@10']:.4f}", f"{r['pool_recall']:.4f}" if "pool_recall" in r else ""] for r in rows])


# ---- main ----------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, default=Path(".cache/indexes/scifact-minilm"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    ap.add_argument("--cache", type=Path, default=Path(".cache/fusion"), help="query vector cache (shared with fusion.py)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--quick", action="store_true", help="20 latency queries, 100-doc encode sample, dev only")
    ap.add_argument("--full", action="store_true", help="encode the whole corpus (2 threads) for the rate")
    ap.add_argument("--latency-queries", type=int, default=None)
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--vs-sentence-transformers", type=Path, metavar="OUR_MODEL_DIR", default=None,
                    help="only the encoding race (bench/_encoding.py) against this exported model folder")
    ap.add_argument("--learned-model", type=Path, default=None,
                    help="learned fusion model JSON for `learned` and the floor's fusion scorer (default: shipped)")
    args = ap.parse_args(argv)
    t_start = now()
    threads_list = [1, 2]
    import onnxruntime

    out: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
                 "platform": platform.platform(), "python": platform.python_version(),
                 "onnxruntime": onnxruntime.__version__, "load_start": list(os.getloadavg()),
                 "quick": args.quick}
    if args.vs_sentence_transformers is not None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise SystemExit("the encoding race needs the adapt extra: pip install 'sidelight[adapt]'")
        from _encoding import race

        out["encoding_race"] = res = race(args.data, args.vs_sentence_transformers)
        print_table(["path", "docs/s", "x st-fp32", "cos min", "cos mean", "rounds docs/s"],
                    [[k, f"{v['docs_per_s']:.1f}", f"{v['speed_vs_st']:.2f}", f"{v['cos_min']:.4f}", f"{v['cos_mean']:.4f}",
                      " ".join(f"{r:.1f}" for r in v["all_docs_per_s"])] for k, v in res["paths"].items()])
        out["load_end"] = list(os.getloadavg())
        if args.json:
            write_json(args.json, out)
        return 0

    t0 = now()
    index = Index.load(args.index)
    out["setup"] = {"index_load_s": round(now() - t0, 2)}
    if index.dense is None:
        raise SystemExit(f"{args.index} has no dense vectors")
    out["index"] = {"path": str(args.index), "records": len(index.ids), "dense": index.dense.identity,
                    "truncated_docs": index.dense.truncated_docs}
    queries = load_queries(args.data / "queries.jsonl")
    known = set(index.corpus.ids)
    train = qrels_in(args.data / "qrels" / "train.tsv", known)
    test_ids = sorted(qrels_in(args.data / "qrels" / "test.tsv", known))  # ids only until the test stage
    from sidelight.lab.fit_learned import split_train

    fit_ids, dev_ids = split_train(load_qrels(args.data / "qrels" / "train.tsv"))  # split over all 809 ids
    dev_ids = [q for q in dev_ids if q in train]

    # ---- setup costs
    print("setup costs ...", file=sys.stderr)
    n_sample = None if args.full else (100 if args.quick else 300)
    out["setup"].update(setup_costs(index, [2] if args.full else threads_list, n_sample))

    # ---- quality on dev (cached query vectors), then test once
    reg = dict(available_methods())
    learned_params: dict = {}
    if "learned" in reg:
        from sidelight.methods.learned import LearnedModel

        try:
            LearnedModel.load(args.learned_model)
            learned_params = {"model": str(args.learned_model)} if args.learned_model else {}
            print(f"learned model: {args.learned_model or 'shipped'}")
        except (OSError, ValueError) as exc:  # no shipped weights yet: skip the method, say so
            print(f"learned: no model ({exc.__class__.__name__}); method skipped, floor fusion falls back to RRF")
            reg.pop("learned")
    out["learned_model"] = (learned_params.get("model") or "shipped") if "learned" in reg else None
    if not args.no_quality:
        vecs = cached_query_vectors(index, [queries[q] for q in list(train) + test_ids], args.cache)
        use_cached_vectors(index, vecs)
        base = [(m, m, learned_params if m == "learned" else {}) for m in ("dense", "bm25", "rrf", "learned") if m in reg]
        floors = [(f"floor scorer={s}", "floor", {"scorer": s, **(learned_params if s == "fusion" else {})})
                  for s in FLOOR_SCORERS]
        floors.append(("floor fusion, no lexical channel", "floor",  # ablation, not a candidate default
                       {"scorer": "fusion", "rare_terms": 0, **learned_params}))
        dev_q = {q: queries[q] for q in dev_ids}
        dev_rows = quality(index, dev_q, {q: train[q] for q in dev_ids}, base + floors)
        out["dev"] = dev_rows
        quality_table(f"DEV ({len(dev_ids)} train-split queries not used for fitting `learned`)", dev_rows)
        frows = [r for r in dev_rows if r["method"] == "floor" and r["label"].startswith("floor scorer=")]
        best = max(frows, key=lambda r: (r["ndcg@10"], -FLOOR_SCORERS.index(r["params"]["scorer"])))
        winner = best["params"]["scorer"]
        out["dev_winner"] = {"scorer": winner, "scorer_name": best["scorer_name"], "ndcg@10": best["ndcg@10"],
                             "default": floor_mod.DEFAULT_SCORER, "matches_default": winner == floor_mod.DEFAULT_SCORER}
        print(f"\ndev winner among floor scorers: {winner} ({best['scorer_name']}, nDCG@10 {best['ndcg@10']:.4f}); "
              f"DEFAULT_SCORER = {floor_mod.DEFAULT_SCORER!r} -> {'matches' if winner == floor_mod.DEFAULT_SCORER else 'DIFFERS'}")
        if not args.quick:
            test_qrels = qrels_in(args.data / "qrels" / "test.tsv", known)
            test_rows = quality(index, {q: queries[q] for q in test_qrels}, test_qrels, base + floors)
            out["test"] = test_rows
            quality_table(f"TEST ({len(test_qrels)} queries, run once after the dev choice)", test_rows)

    # ---- latency
    print("latency ...", file=sys.stderr)
    n_lat = args.latency_queries or (20 if args.quick else 100)
    lat_ids = random.Random(LATENCY_SEED).sample(sorted(test_ids), n_lat)
    lat_q = [queries[q] for q in lat_ids]
    methods = [m for m in ("dense", "bm25", "rrf", "learned", "floor") if m in reg]
    out["latency_protocol"] = {"queries": n_lat, "selection": f"random.Random({LATENCY_SEED}).sample(sorted(test_ids), {n_lat})",
                               "passes": 3, "rotation": "method order rotates by one each pass", "k": 10,
                               "floor": {"scorer": floor_mod.DEFAULT_SCORER, "pool": floor_mod.DEFAULT_POOL,
                                         "n": floor_mod.DEFAULT_N, "deadline": None},
                               "query_encoding": "live (not cached)"}
    mparams = {m: dict(learned_params) if m in ("learned", "floor") else {} for m in methods}
    out["latency"] = latency(index, mparams, lat_q, threads_list, 3)

    # ---- table
    s = out["setup"]
    print(f"\nSETUP (apart from query time; index load {s['index_load_s']} s, lexical build {s['lexical_build_s']} s)")
    print_table(["threads", "model load s", f"encode docs/s ({s['encode_sample_docs']} docs)", "est. corpus encode s", "load"],
                [[t, v["model_load_s"], v["docs_per_s"], v["corpus_encode_estimate_s"],
                  f"{v['load_before']}->{v['load_after']}"] for t, v in s["by_threads"].items()])
    print(f"\nQUERY LATENCY (ms; {n_lat} test queries x 3 rotated passes, top 10, live query encoding)")
    rows = []
    for m in methods:
        row = [m]
        for t in threads_list:
            v = out["latency"][str(t)]["methods"][m]
            row += [f"{v['p50_ms']:.1f}", f"{v['p95_ms']:.1f}"]
        rows.append(row)
    print_table(["method"] + [f"{h} {t}t" for t in threads_list for h in ("p50", "p95")], rows)
    for t in threads_list:
        L = out["latency"][str(t)]
        print(f"  {t} thread(s): load {L['load_before']} -> {L['load_after']}, floor median stage one "
              f"{L['floor_split']['stage_one_ms']} ms, stage two {L['floor_split']['stage_two_ms']} ms, "
              f"{L['floor_split']['n_candidates']} candidates ({L['floor_split']['n_lexical']} lexical)")
    out["load_end"] = list(os.getloadavg())
    out["runtime_s"] = round(now() - t_start, 1)
    print(f"\nruntime {out['runtime_s']} s; {os.cpu_count()} CPUs shared with other jobs (load {out['load_start'][0]:.2f} "
          f"at start, {out['load_end'][0]:.2f} at end): absolute times are upper bounds, ratios are more robust")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
