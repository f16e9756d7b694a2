"""Lexical speed and memory: sidelight against bm25s (numpy and numba), rank_bm25 and tantivy.

    python bench/lexical.py [--json OUT] [--quick] [--rounds N] [--corpora scifact,scifact-x20,scifact-x200]
                            [--systems sidelight,bm25s,bm25s-numba,rank_bm25,tantivy]

Every (system, corpus) pair runs in its own fresh child process (`--child SYSTEM CORPUS`), one
thread each (NUMBA/OMP/MKL/OPENBLAS/RAYON_NUM_THREADS=1), so peak memory (VmHWM) is that
system's alone (plus the corpus texts and the interpreter, the same for all). The order of the
systems is rotated every round; the table shows medians over rounds, as ratios to bm25s.

Corpora: SciFact (BEIR, 5,183 docs), "scifact-x20" (103,660 docs) and "scifact-x200"
(1,036,600 docs): all SciFact document tokens (lowercase ASCII alphanumerics of title + text)
are pooled; for each of 20 (200) copies the pool is shuffled with numpy's default_rng(SEED) and
cut into documents of the original lengths, in corpus order (the first 20 copies of x200 are
x20). So every copy has SciFact's exact token counts and document lengths, but words land in
documents at random. Cached under the sidelight cache dir. "wordnet-all" is real text: the
117,659 WordNet 3.0 synsets (Debian's wordnet-base) as `sidelight index wordnet-all` indexes
them (lemmas twice, then the gloss), queried with the same 300 SciFact queries (speed only).

sidelight builds a whole index folder on disk (`Index.write`: records, postings in blocks, BM25
weights, graph, manifest with hashes), then opens it (`Index.load`, memory-mapped) in the same
child and answers from the mapped files: `build_s` and `build_mb` (peak memory when the build
is done) are the write's; `open_ms` and `first_ms` the open and the first query after it;
`disk_mb` the folder's size; `kernels_s` the loading of its compiled (numba) kernels before the
build, timed apart as tantivy's import is (the first build of a process pays it once);
`build_cpu_s` (every system) is the CPU time of the build, all threads of the child (sidelight
splits each chunk's tokenizing and counting between 2 threads, writes its records beside them
and hashes files in parallel; tantivy runs 1 indexing thread plus its own merge threads): when
it is about `build_s`, the child had about one core of the host to itself;
`qps_threads` (every system) is the same queries from 2 Python threads; on scifact-x200,
`exact` counts queries whose pruned top-10 equals exhaustive scoring (`bm25_scores` + `top_k`).
The peers build in RAM (tantivy: `Index(schema)` without a path) and keep no records.

Queries: the 300 SciFact test queries for every corpus, one at a time, raw string to top-10,
tokenization included, in 10 / 5 / 1 / 3 timed passes (scifact / x20 / x200 / wordnet-all); `qps` is the
median pass's (`qps_passes` lists them: this machine's share of the host moves within seconds,
and a median pass is steadier than one long clock); 5 untimed warm-up queries first (numba
compiles then). Everyone gets
the same tokens: lowercase ASCII alphanumerics, no stemming, no stop words, k1=1.2, b=0.75;
query terms count once. bm25s: token lists (method "lucene", same ranking as sidelight's
default "robertson"); rank_bm25: BM25Okapi on token lists (its idf differs, speed only);
tantivy: its default tokenizer on the raw documents (also splits on non-alphanumerics and
lowercases), queries passed as the space-joined tokens, in-RAM index, 1 writer thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import median, now, peak_mb, print_table, run_child, write_json  # noqa: E402

SYSTEMS = ["sidelight", "bm25s", "bm25s-numba", "rank_bm25", "tantivy"]
CORPORA = ["scifact", "scifact-x20", "scifact-x200", "wordnet-all"]
SEED = 20240611
COPIES = {"scifact-x20": 20, "scifact-x200": 200}
N_DOCS = {"scifact": "5,183", "scifact-x20": "103,660", "scifact-x200": "1,036,600", "wordnet-all": "117,659"}
K = 10
WARMUP = 5
RANK_BM25_CAP = {"scifact": 300, "scifact-x20": 20, "wordnet-all": 20}  # rank_bm25 scans every document per term
REPEAT = {"scifact": 10, "scifact-x20": 5, "scifact-x200": 1, "wordnet-all": 3}  # timed passes over the 300 queries
ON_X200 = ["sidelight", "bm25s-numba", "tantivy"]  # the others take too long for a far-off reference
AS_LIMIT = 22 << 30  # address-space cap of a scifact-x200 child: a peer that needs more fails in its row
TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def query_tokens(text: str) -> list[str]:
    return list(dict.fromkeys(tokens(text)))


# ---- data ------------------------------------------------------------------------------------
def scifact_texts() -> tuple[list[str], list[str]]:
    from sidelight.config import dataset_path
    from sidelight.corpus.beir import load_beir_corpus

    corpus = load_beir_corpus(dataset_path("scifact"))
    return [r.id for r in corpus.records], [corpus.indexed_text(r) for r in corpus.records]


def test_queries() -> list[str]:
    from sidelight.config import dataset_path
    from sidelight.corpus.beir import beir_split

    return list(beir_split(dataset_path("scifact"), "test")[0].values())


def copies_path(name: str) -> Path:
    from sidelight.config import cache_dir

    return cache_dir() / "bench" / f"scifact-x{COPIES[name]}-seed{SEED}.tsv"


def make_copies(name: str) -> Path:
    """Build (once) a reshuffled corpus described in the module docstring."""
    import numpy as np

    path = copies_path(name)
    if path.exists():
        return path
    ids, texts = scifact_texts()
    docs = [tokens(t) for t in texts]
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    words: dict[str, int] = {}
    pool = np.fromiter((words.setdefault(w, len(words)) for d in docs for w in d), dtype=np.int64,
                       count=int(lengths.sum()))
    vocab = np.array(list(words), dtype=object)
    cuts = np.cumsum(lengths)[:-1]
    rng = np.random.default_rng(SEED)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="ascii") as f:
        for c in range(COPIES[name]):
            for doc_id, chunk in zip(ids, np.split(vocab[rng.permutation(pool)], cuts)):
                f.write(f"{doc_id}#{c}\t{' '.join(chunk.tolist())}\n")
    os.replace(tmp, path)
    return path


def load_corpus(name: str) -> tuple[list[str], list[str]]:
    if name == "scifact":
        return scifact_texts()
    if name == "wordnet-all":
        from sidelight.corpus.sources import load_source

        corpus = load_source("wordnet-all")
        return [r.id for r in corpus.records], [corpus.indexed_text(r) for r in corpus.records]
    ids, texts = [], []
    with open(copies_path(name), encoding="ascii") as f:
        for line in f:
            i, t = line.rstrip("\n").split("\t", 1)
            ids.append(i)
            texts.append(t)
    return ids, texts


def qps_threads(search, queries: list[str], threads: int = 2) -> float:
    """Queries per second of `search` called from `threads` Python threads (one query per call)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        t0 = now()
        list(pool.map(search, queries))
        return len(queries) / (now() - t0)


# ---- systems: build(ids, texts) -> ((wall, cpu) seconds, search(query) -> top-10 positions, extra, after) ---
def started() -> tuple[float, float]:
    """The wall clock and this process's CPU time (all threads) now."""
    return now(), time.process_time()


def spent(t0: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU seconds since `started()` gave t0."""
    return now() - t0[0], time.process_time() - t0[1]


def build_sidelight(ids, texts):
    import tempfile

    from sidelight.corpus import Corpus, Record
    from sidelight.index import Index
    from sidelight.index.index import warm_kernels

    corpus = Corpus("bench", [Record(i, "", t) for i, t in zip(ids, texts)])
    folder = Path(tempfile.mkdtemp(prefix="sidelight-bench-")) / "idx"
    t0 = now()
    warm_kernels()  # numba loads its cached machine code: the analogue of importing tantivy, timed apart
    kernels = now() - t0
    t0 = started()
    Index.write(corpus, folder, progress=False)
    built = spent(t0)
    extra = {"build_mb": peak_mb(), "disk_mb": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6,
             "kernels_s": kernels}
    del corpus
    t0 = now()
    index = Index.load(folder)
    extra["open_ms"] = (now() - t0) * 1000
    lex, id_rank = index.lexical, index.id_rank
    t0 = now()
    lex.bm25_top(test_queries()[0], K, id_rank)
    extra["first_ms"] = (now() - t0) * 1000

    def search(q):
        return lex.bm25_top(q, K, id_rank).positions

    def after(queries):  # untimed by the caller's loop: threads, exactness, clean-up
        from sidelight.structures.ranking import top_k

        extra["qps_threads"] = qps_threads(search, queries)
        extra["exact"] = sum(
            np.array_equal(lex.bm25_top(q, K, id_rank).positions, top_k(lex.bm25_scores(q), K, id_rank).positions)
            for q in queries)
        import shutil

        shutil.rmtree(folder.parent, ignore_errors=True)

    import numpy as np

    return built, search, extra, after


def _build_bm25s(backend):
    def build(ids, texts):
        import bm25s

        t0 = started()
        ret = bm25s.BM25(k1=1.2, b=0.75, method="lucene", backend=backend)
        ret.index([tokens(t) for t in texts], show_progress=False)
        built = spent(t0)

        def search(q):
            docs, _ = ret.retrieve([query_tokens(q)], k=K, show_progress=False, n_threads=1)
            return docs[0]

        extra = {"build_mb": peak_mb()}

        def after(queries):
            extra["qps_threads"] = qps_threads(search, queries)

        return built, search, extra, after

    return build


def build_rank_bm25(ids, texts):
    import numpy as np
    from rank_bm25 import BM25Okapi

    t0 = started()
    bm = BM25Okapi([tokens(t) for t in texts], k1=1.2, b=0.75)
    built = spent(t0)

    def search(q):
        s = bm.get_scores(query_tokens(q))
        top = np.argpartition(-s, K)[:K]
        return top[np.argsort(-s[top], kind="stable")]

    return built, search, {"build_mb": peak_mb()}, None


def build_tantivy(ids, texts):
    import tantivy

    t0 = started()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name="default", index_option="freq")
    schema = sb.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for t in texts:
        writer.add_document(tantivy.Document(body=t))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    built = spent(t0)

    def search(q):
        query = index.parse_query(" ".join(query_tokens(q)), ["body"])
        return [addr for _, addr in searcher.search(query, K).hits]

    extra = {"build_mb": peak_mb()}

    def after(queries):
        extra["qps_threads"] = qps_threads(search, queries)

    return built, search, extra, after


BUILDERS = {"sidelight": build_sidelight, "bm25s": _build_bm25s("numpy"), "bm25s-numba": _build_bm25s("numba"),
            "rank_bm25": build_rank_bm25, "tantivy": build_tantivy}


def child(system: str, corpus: str) -> dict:
    if corpus == "scifact-x200":
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    ids, texts = load_corpus(corpus)
    queries = test_queries()
    cap = RANK_BM25_CAP.get(corpus) if system == "rank_bm25" else None
    gc.collect()
    try:
        (built, cpu), search, extra, after = BUILDERS[system](ids, texts)
    except MemoryError:
        return {"failed": f"ran out of its {AS_LIMIT >> 30} GB address space while building"}
    del ids, texts
    gc.collect()
    for q in queries[:WARMUP]:
        search(q)
    timed = queries[:cap] if cap else queries
    passes = []  # queries/s of each pass: the median pass stands, a pass slowed by the host does not
    for _ in range(1 if cap else REPEAT[corpus]):
        t0 = now()
        for q in timed:
            search(q)
        passes.append(len(timed) / (now() - t0))
    if after is not None:
        after(queries)
    return {"qps": median(passes), "qps_passes": passes, "build_s": built, "build_cpu_s": cpu, "peak_mb": peak_mb(),
            "queries": len(timed) * len(passes), **extra}


# ---- correctness: sidelight vs bm25s top-10 on SciFact --------------------------------------------
def agreement() -> tuple[float, float, int]:
    """Share of SciFact test queries with identical top-10 lists (and identical top-10 sets)."""
    import bm25s

    ids, texts = scifact_texts()
    _, search, _, _ = build_sidelight(ids, texts)
    ret = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    ret.index([tokens(t) for t in texts], show_progress=False)
    same = same_set = 0
    queries = test_queries()
    for q in queries:
        ours = list(search(q))
        docs, scores = ret.retrieve([query_tokens(q)], k=K, show_progress=False, n_threads=1)
        theirs = [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]
        same += ours == theirs
        same_set += set(ours) == set(theirs)
    return same / len(queries), same_set / len(queries), len(queries)


# ---- main ------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="OUT", help="write {system: {corpus: {qps, build_s, peak_mb, ...}}}")
    ap.add_argument("--quick", action="store_true", help="SciFact only, 1 round (smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds on SciFact (default 3; 1 with --quick)")
    ap.add_argument("--x20-rounds", type=int, default=2, help="rounds on scifact-x20 and wordnet-all (default 2)")
    ap.add_argument("--x200-rounds", type=int, default=1, help="rounds on scifact-x200 (default 1)")
    ap.add_argument("--corpora", default=",".join(CORPORA), help=f"comma-separated, of {', '.join(CORPORA)}")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    ap.add_argument("--child", nargs=2, metavar=("SYSTEM", "CORPUS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    corpora = [c for c in args.corpora.split(",") if c] if not args.quick else ["scifact"]
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        ap.error(f"unknown corpus {unknown[0]!r}; choose from {', '.join(CORPORA)}")
    chosen = [s for s in args.systems.split(",") if s]
    unknown = sorted(set(chosen) - set(SYSTEMS))
    if unknown:
        ap.error(f"unknown system {unknown[0]!r}; choose from {', '.join(SYSTEMS)}")
    n_rounds = {"scifact": args.rounds or (1 if args.quick else 3), "scifact-x20": args.x20_rounds,
                "scifact-x200": args.x200_rounds, "wordnet-all": args.x20_rounds}
    rounds = {c: n_rounds[c] for c in CORPORA if c in corpora}
    for corpus in rounds:
        if corpus in COPIES:
            t0 = now()
            make_copies(corpus)
            print(f"{corpus} corpus: {copies_path(corpus)} ({now() - t0:.1f} s)", file=sys.stderr)
    results: dict[str, dict[str, list[dict]]] = {s: {c: [] for c in rounds} for s in SYSTEMS}
    script = str(Path(__file__).resolve())
    t_start = now()
    for corpus, n in rounds.items():
        systems = [s for s in (ON_X200 if corpus == "scifact-x200" else SYSTEMS) if s in chosen]
        for r in range(n):
            order = systems[r % len(systems):] + systems[:r % len(systems)]
            for system in order:
                if system == "rank_bm25" and corpus != "scifact" and r > 0:
                    continue  # slow to build; one round is enough for a far-off reference
                try:
                    res = run_child(script, [system, corpus], timeout=3600)
                except RuntimeError as exc:  # killed or crashed: say so in its row
                    res = {"failed": str(exc).splitlines()[-1][:120]}
                results[system][corpus].append(res)
                shown = (f"{res['qps']:9.1f} q/s  build {res['build_s']:6.2f} s  peak {res['peak_mb']:6.0f} MB"
                         if "failed" not in res else f"FAILED: {res['failed']}")
                print(f"[{now() - t_start:6.1f}s] {corpus} round {r + 1}/{n} {system:12s} {shown}",
                      file=sys.stderr, flush=True)

    keys = ("qps", "build_s", "build_cpu_s", "kernels_s", "peak_mb", "build_mb", "qps_threads", "open_ms", "first_ms", "disk_mb",
            "exact")
    summary = {}
    for s, per in results.items():
        for c, runs in per.items():
            ok = [x for x in runs if "failed" not in x]
            if ok:
                summary.setdefault(s, {})[c] = {key: median([x[key] for x in ok]) for key in keys if key in ok[0]}
                summary[s][c]["rounds"] = runs  # each child's own figures, in the order they ran
            elif runs:
                summary.setdefault(s, {})[c] = {"failed": runs[0]["failed"]}
    for corpus in rounds:
        base_name = "bm25s" if corpus != "scifact-x200" else "tantivy"
        base = summary.get(base_name, {}).get(corpus, {})
        rows = []
        for s in SYSTEMS:
            m = summary.get(s, {}).get(corpus)
            if m is None:
                continue
            if "failed" in m:
                rows.append([s, "failed: " + m["failed"][:60]] + [""] * 11)
                continue

            def ratio(key, m=m):
                return f"{m[key] / base[key]:.2f}x" if key in base and base[key] else "-"

            opt = (lambda key, fmt, m=m: format(m[key], fmt) if key in m else "-")
            rows.append([s, f"{m['qps']:,.0f}", ratio("qps"), opt("qps_threads", ",.0f"), f"{m['build_s']:.2f}",
                         ratio("build_s"), opt("build_cpu_s", ".2f"), opt("build_mb", ",.0f"), ratio("build_mb"), f"{m['peak_mb']:,.0f}",
                         opt("open_ms", ".1f"), opt("first_ms", ".1f"), opt("disk_mb", ",.0f")])
        print(f"\n{corpus} ({N_DOCS[corpus]} docs, 300 test queries, top-{K}, 1 thread; median of {rounds[corpus]} "
              f"round(s); ratios to {base_name})")
        print_table(["system", "q/s", "vs", "q/s 2 thr", "build s", "vs", "build CPU s", "build MB", "vs", "peak MB", "open ms",
                     "1st q ms", "disk MB"], rows)
        kernels = summary.get("sidelight", {}).get(corpus, {}).get("kernels_s")
        if kernels is not None:
            print(f"sidelight loaded its compiled kernels in {kernels:.2f} s before its build clock started")
        exact = summary.get("sidelight", {}).get(corpus, {}).get("exact")
        if exact is not None:
            print(f"sidelight pruned top-{K} = exhaustive scoring on {exact:.0f} of 300 queries")
    print("\nnotes: build MB / peak MB = child VmHWM when the build is done / at the end, incl. interpreter and "
          f"corpus texts; rank_bm25 timed on 300 queries on scifact, {RANK_BM25_CAP['scifact-x20']} on the larger corpora "
          "(1 round); "
          "tantivy uses its default tokenizer; 5 warm-up queries untimed (numba JIT); sidelight's build writes "
          "its index folder to disk, the peers build in RAM")
    same, same_set, nq = agreement()
    print(f"correctness: sidelight vs bm25s (float64) top-{K} on SciFact test: {same:.1%} identical lists, "
          f"{same_set:.1%} identical sets ({nq} queries)")
    if args.json:
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
