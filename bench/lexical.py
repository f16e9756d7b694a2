"""Lexical speed and memory: sidelight against bm25s (numpy and numba), rank_bm25 and tantivy.

    python bench/lexical.py [--json OUT] [--quick] [--rounds N]

Every (system, corpus) pair runs in its own fresh child process (`--child SYSTEM CORPUS`), one
thread each (NUMBA/OMP/MKL/OPENBLAS/RAYON_NUM_THREADS=1), so peak memory (VmHWM) is that
system's alone (plus the corpus texts and the interpreter, the same for all). The order of the
systems is rotated every round; the table shows medians over rounds, as ratios to bm25s.

Corpora: SciFact (BEIR, 5,183 docs) and "scifact-x20" (103,660 docs): all SciFact document
tokens (lowercase ASCII alphanumerics of title + text) are pooled; for each of 20 copies the
pool is shuffled with numpy's default_rng(SEED) and cut into documents of the original lengths,
in corpus order. So every copy has SciFact's exact token counts and document lengths, but words
land in documents at random. Cached under the sidelight cache dir.

Queries: the 300 SciFact test queries for both corpora, one at a time, raw string to top-10,
tokenization included; 5 untimed warm-up queries first (numba compiles then). Everyone gets
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import median, now, peak_mb, print_table, run_child, write_json  # noqa: E402

SYSTEMS = ["sidelight", "bm25s", "bm25s-numba", "rank_bm25", "tantivy"]
CORPORA = ["scifact", "scifact-x20"]
SEED = 20240611
COPIES = 20
K = 10
WARMUP = 5
RANK_BM25_CAP = {"scifact": None, "scifact-x20": 20}  # rank_bm25 scans every document per term
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


def x20_path() -> Path:
    from sidelight.config import cache_dir

    return cache_dir() / "bench" / f"scifact-x{COPIES}-seed{SEED}.tsv"


def make_x20() -> Path:
    """Build (once) the reshuffled 20x corpus described in the module docstring."""
    import numpy as np

    path = x20_path()
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
        for c in range(COPIES):
            for doc_id, chunk in zip(ids, np.split(vocab[rng.permutation(pool)], cuts)):
                f.write(f"{doc_id}#{c}\t{' '.join(chunk.tolist())}\n")
    os.replace(tmp, path)
    return path


def load_corpus(name: str) -> tuple[list[str], list[str]]:
    if name == "scifact":
        return scifact_texts()
    ids, texts = [], []
    with open(x20_path(), encoding="ascii") as f:
        for line in f:
            i, t = line.rstrip("\n").split("\t", 1)
            ids.append(i)
            texts.append(t)
    return ids, texts


# ---- systems: build(ids, texts) -> search(query) -> top-10 positions ----------------------------
def build_sidelight(ids, texts):
    from sidelight.corpus import Corpus, Record
    from sidelight.index import Index

    corpus = Corpus("bench", [Record(i, "", t) for i, t in zip(ids, texts)])
    t0 = now()
    index = Index.build(corpus, progress=False)
    built = now() - t0
    lex, id_rank = index.lexical, index.id_rank
    return built, lambda q: lex.bm25_top(q, K, id_rank).positions


def _build_bm25s(backend):
    def build(ids, texts):
        import bm25s

        t0 = now()
        ret = bm25s.BM25(k1=1.2, b=0.75, method="lucene", backend=backend)
        ret.index([tokens(t) for t in texts], show_progress=False)
        built = now() - t0

        def search(q):
            docs, _ = ret.retrieve([query_tokens(q)], k=K, show_progress=False, n_threads=1)
            return docs[0]

        return built, search

    return build


def build_rank_bm25(ids, texts):
    import numpy as np
    from rank_bm25 import BM25Okapi

    t0 = now()
    bm = BM25Okapi([tokens(t) for t in texts], k1=1.2, b=0.75)
    built = now() - t0

    def search(q):
        s = bm.get_scores(query_tokens(q))
        top = np.argpartition(-s, K)[:K]
        return top[np.argsort(-s[top], kind="stable")]

    return built, search


def build_tantivy(ids, texts):
    import tantivy

    t0 = now()
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
    built = now() - t0

    def search(q):
        query = index.parse_query(" ".join(query_tokens(q)), ["body"])
        return [addr for _, addr in searcher.search(query, K).hits]

    return built, search


BUILDERS = {"sidelight": build_sidelight, "bm25s": _build_bm25s("numpy"), "bm25s-numba": _build_bm25s("numba"),
            "rank_bm25": build_rank_bm25, "tantivy": build_tantivy}


def child(system: str, corpus: str) -> dict:
    ids, texts = load_corpus(corpus)
    queries = test_queries()
    cap = RANK_BM25_CAP[corpus] if system == "rank_bm25" else None
    gc.collect()
    built, search = BUILDERS[system](ids, texts)
    for q in queries[:WARMUP]:
        search(q)
    timed = queries[:cap] if cap else queries
    t0 = now()
    for q in timed:
        search(q)
    secs = now() - t0
    return {"qps": len(timed) / secs, "build_s": built, "peak_mb": peak_mb(), "queries": len(timed)}


# ---- correctness: sidelight vs bm25s top-10 on SciFact --------------------------------------------
def agreement() -> tuple[float, float, int]:
    """Share of SciFact test queries with identical top-10 lists (and identical top-10 sets)."""
    import bm25s

    ids, texts = scifact_texts()
    _, search = build_sidelight(ids, texts)
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
    ap.add_argument("--json", metavar="OUT", help="write {system: {corpus: {qps, build_s, peak_mb}}}")
    ap.add_argument("--quick", action="store_true", help="SciFact only, 1 round (smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds on SciFact (default 3; 1 with --quick)")
    ap.add_argument("--x20-rounds", type=int, default=2, help="rounds on scifact-x20 (default 2)")
    ap.add_argument("--child", nargs=2, metavar=("SYSTEM", "CORPUS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    rounds = {"scifact": args.rounds or (1 if args.quick else 3)}
    if not args.quick:
        rounds["scifact-x20"] = args.x20_rounds
        t0 = now()
        make_x20()
        print(f"scifact-x20 corpus: {x20_path()} ({now() - t0:.1f} s)", file=sys.stderr)
    results: dict[str, dict[str, list[dict]]] = {s: {c: [] for c in rounds} for s in SYSTEMS}
    script = str(Path(__file__).resolve())
    t_start = now()
    for corpus, n in rounds.items():
        for r in range(n):
            order = SYSTEMS[r % len(SYSTEMS):] + SYSTEMS[:r % len(SYSTEMS)]
            for system in order:
                if system == "rank_bm25" and corpus == "scifact-x20" and r > 0:
                    continue  # slow to build; one round is enough for a far-off reference
                res = run_child(script, [system, corpus])
                results[system][corpus].append(res)
                print(f"[{now() - t_start:6.1f}s] {corpus} round {r + 1}/{n} {system:12s} "
                      f"{res['qps']:9.1f} q/s  build {res['build_s']:6.2f} s  peak {res['peak_mb']:6.0f} MB",
                      file=sys.stderr, flush=True)

    summary = {s: {c: {key: median([x[key] for x in runs]) for key in ("qps", "build_s", "peak_mb")}
                   for c, runs in per.items() if runs} for s, per in results.items()}
    for corpus in rounds:
        base = summary["bm25s"][corpus]
        rows = []
        for s in SYSTEMS:
            m = summary[s][corpus]
            rows.append([s, f"{m['qps']:,.0f}", f"{m['qps'] / base['qps']:.2f}x", f"{m['build_s']:.2f}",
                         f"{m['build_s'] / base['build_s']:.2f}x", f"{m['peak_mb']:,.0f}",
                         f"{m['peak_mb'] / base['peak_mb']:.2f}x"])
        n_docs = "5,183" if corpus == "scifact" else "103,660"
        print(f"\n{corpus} ({n_docs} docs, 300 test queries, top-{K}, 1 thread; median of {rounds[corpus]} "
              f"round(s); ratios to bm25s)")
        print_table(["system", "q/s", "vs", "build s", "vs", "peak MB", "vs"], rows)
    print("\nnotes: peak MB = child VmHWM incl. interpreter and corpus texts; rank_bm25 timed on "
          f"{RANK_BM25_CAP['scifact-x20']} queries on scifact-x20 (1 round); tantivy uses its default tokenizer; "
          "5 warm-up queries untimed (numba JIT)")
    same, same_set, nq = agreement()
    print(f"correctness: sidelight vs bm25s (float64) top-{K} on SciFact test: {same:.1%} identical lists, "
          f"{same_set:.1%} identical sets ({nq} queries)")
    if args.json:
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
