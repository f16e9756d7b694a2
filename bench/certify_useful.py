"""Are certified connections any good? Usefulness proxies without a human panel.

For each corpus the certificate is built as `sidelight certify` builds it (chunks and SAE cached in
``cache_dir()/indexes/<name>-serendipity``), then its certified pairs are compared with three other
pair sets of interest, on a proxy of usefulness:

* **held-out links** (FOLDOC, WordNet): a seeded 10% of the undirected links is hidden, the
  certificate is run on the remaining graph, and a pair is *useful* when it is a hidden link;
* **co-relevance** (SciFact): a pair is *useful* when both abstracts are relevant to one training
  claim (train qrels only);

against: the placebo passes (pooled over the placebo corpora), the same number of **top-kinship**
pairs (plain similarity: the most similar population pairs that the distance rule allows: graph
distance >= 3 on the remaining graph, or, without links, not among each other's 10 nearest), and
the base rate over all population pairs. Then the **seated passages** of `connections` (dial 28)
for a query set (FOLDOC concept benchmark queries, the first claims of SciFact's queries.jsonl):
*unexpected* when the seated record is in neither the BM25 top 50 nor the dense top 50 for the
query (a primitive baseline's top list), *useful* by the proxy above for its (floor record, seated
record) pair. Reported: the unexpected share, SRDP (Ge et al. 2010: seated items that are unexpected and useful, over seated
items) and serendipity@k (Kotkov et al.: per query, unexpected and useful seated items over the k
seats offered, averaged over queries).

    .venv/bin/python bench/certify_useful.py --json bench/results/certify-useful.json [--datasets foldoc scifact]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from _common import print_table, write_json  # noqa: E402
from certify import index_for, queries_for  # noqa: E402

HIDE_SHARE, HIDE_SEED, DIAL, TOP = 0.10, 20261202, 28, 50


def keys(a, b, n: int) -> np.ndarray:
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return np.minimum(a, b) * n + np.maximum(a, b)


def hide_links(adj: sp.csr_matrix, share: float, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """(the graph without a seeded `share` of its undirected links, keys of the hidden links)."""
    up = sp.triu(adj, k=1).tocoo()
    rng = np.random.default_rng(seed)
    hide = rng.random(len(up.row)) < share
    kept = sp.coo_matrix((np.ones(int((~hide).sum())), (up.row[~hide], up.col[~hide])), shape=adj.shape)
    return (kept + kept.T).tocsr(), keys(up.row[hide], up.col[hide], adj.shape[0])


def co_relevant(index, split: str = "train") -> np.ndarray:
    """Keys of record pairs relevant to one claim of the split."""
    from sidelight.config import dataset_path
    from sidelight.corpus.beir import beir_split

    _, qrels = beir_split(dataset_path("scifact"), split)
    pos = index.corpus.position
    out = []
    for rel in qrels.values():
        docs = sorted(pos[d] for d, g in rel.items() if g > 0 and d in pos)
        out += [keys(x, y, len(index.corpus)) for i, x in enumerate(docs) for y in docs[i + 1:]]
    return np.unique(np.array(out, np.int64)) if out else np.zeros(0, np.int64)


def top_kinship(vectors, population, n_pairs: int, allowed) -> tuple[np.ndarray, np.ndarray]:
    """The `n_pairs` most similar population pairs that `allowed(a, b)` lets through."""
    from sidelight.serendipity.rules import kinship_neighbours

    table = kinship_neighbours(vectors, population, 60)
    a = np.repeat(population, table.shape[1])
    b = table[population].ravel()
    k = np.unique(keys(a, b, len(vectors)))
    a, b = k // len(vectors), k % len(vectors)
    kin = np.einsum("ij,ij->i", vectors[a], vectors[b])
    order = np.lexsort((b, a, -kin))
    got_a, got_b = [], []
    for s in range(0, len(order), 4096):
        i = order[s:s + 4096]
        ok = allowed(a[i], b[i])
        got_a += a[i][ok].tolist()
        got_b += b[i][ok].tolist()
        if len(got_a) >= n_pairs:
            break
    return np.array(got_a[:n_pairs], np.int64), np.array(got_b[:n_pairs], np.int64)


def share(pair_keys: np.ndarray, truth: np.ndarray) -> dict:
    hits = int(np.isin(pair_keys, truth).sum())
    return {"pairs": int(len(pair_keys)), "useful": hits, "share": hits / len(pair_keys) if len(pair_keys) else None}


def seats(ser, queries: list[str], truth: np.ndarray) -> dict:
    """Unexpectedness, SRDP and serendipity@k of the passages `connections` seats for each query."""
    from sidelight.serendipity.db import SerDB
    from sidelight.serendipity.reveal import connections, reveal

    index, n = ser.index, len(ser.index.corpus)
    pos = index.corpus.position
    db = SerDB.for_index(index)
    session = f"bench-{time.time_ns()}"
    seated = unexpected = useful = both = 0
    per_query = []
    for q in queries:
        res = connections(ser, q, dial=DIAL, session_id=session, seed=42, db=db)
        shown = reveal(db, res["trace_id"], hashlib.sha256(b"bench: no answer").hexdigest())["seated"]
        top = {pos[h.id] for h in index.search(q, "bm25", TOP)}
        if index.dense is not None:
            top |= {pos[h.id] for h in index.search(q, "dense", TOP)}
        hits = 0
        for s in shown:
            u = s["position"] not in top
            g = bool(np.isin(keys([pos[s["floor_end"]]], [s["position"]], n), truth)[0])
            seated, unexpected, useful, both = seated + 1, unexpected + u, useful + g, both + (u and g)
            hits += u and g
        per_query.append(hits / DIAL)
    return {"queries": len(queries), "seats_offered_per_query": DIAL, "seated": seated,
            "unexpected_share": unexpected / seated if seated else None, "useful_share": useful / seated if seated else None,
            "srdp": both / seated if seated else None, "serendipity_at_k": float(np.mean(per_query)) if per_query else None,
            "baseline": f"BM25 top {TOP}" + (f" and dense top {TOP}" if index.dense is not None else "")}


def evaluate(name: str, queries: int) -> dict:
    from sidelight.index import Index
    from sidelight.serendipity.certify import run_certificate, word_tokens
    from sidelight.serendipity.chunks import record_text
    from sidelight.serendipity.rules import graph_distances, kinship_neighbours, near_by_kinship
    from sidelight.serendipity.store import Serendipity

    ser = Serendipity(Index.load(index_for(name, 1.0))).ensure(progress=True, certificate=False)
    index, recs = ser.index, ser.index.corpus.records
    vec, _ = ser.record_vectors()
    n, cfg = len(recs), ser.config.cert
    chunk_record = np.asarray(ser.chunks.record)
    population = np.flatnonzero(np.bincount(chunk_record, minlength=n) >= cfg.min_chunks)
    if index.graph.n_edges:
        adj, truth = hide_links(index.graph.undirected(), HIDE_SHARE, HIDE_SEED)
        proxy = f"hidden link ({HIDE_SHARE:.0%} of the undirected links, seed {HIDE_SEED})"

        def allowed(a, b):
            d = graph_distances(adj, a, b, cfg.max_hops)
            return (d < 0) | (d >= cfg.min_distance)
    else:
        adj, truth = None, co_relevant(index)
        proxy = "co-relevant (both relevant to one SciFact training claim)"
        table = kinship_neighbours(vec, population, cfg.neighbour_rule)

        def allowed(a, b):
            return ~near_by_kinship(table, a, b, cfg.neighbour_rule)

    t0 = time.perf_counter()
    cert = run_certificate(chunk_record, n, ser.codes, vec, adj, lambda r: word_tokens(record_text(recs[r])),
                           ser.resolutions(), cfg, progress=True)
    seconds = round(time.perf_counter() - t0, 1)
    s = cert.summary
    certified = keys(cert.pairs["a"], cert.pairs["b"], n)
    rows = {"certified": share(certified, truth),
            "placebo passes": share(keys(cert.placebo["a"], cert.placebo["b"], n), truth),
            "top-kinship": share(keys(*top_kinship(vec, population, len(certified), allowed), n), truth)}
    in_pop = int((np.isin(truth // n, population) & np.isin(truth % n, population)).sum())
    all_pairs = len(population) * (len(population) - 1) // 2
    rows["all population pairs"] = {"pairs": all_pairs, "useful": in_pop, "share": in_pop / max(all_pairs, 1)}
    out = {"proxy": proxy, "certificate": {k: s[k] for k in ("candidates", "target_passes", "placebo_mean",
                                                              "placebo_target_ratio", "placebo_target_ratio_ci",
                                                              "verdict", "graph")},
           "certificate_seconds": seconds, "pairs": rows}
    if cert.passed:
        ser.certificate, ser.meta["certificate"] = cert, {"id": f"bench-useful-{name}"}
        out["seats"] = seats(ser, queries_for(name, queries), truth)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", type=Path)
    p.add_argument("--datasets", nargs="+", default=["foldoc", "scifact"])
    p.add_argument("--queries", type=int, default=50)
    args = p.parse_args()
    out = {"settings": {"hide_share": HIDE_SHARE, "hide_seed": HIDE_SEED, "dial": DIAL, "baseline_top": TOP,
                        "queries": args.queries}, "datasets": {}}
    for name in args.datasets:
        r = out["datasets"][name] = evaluate(name, args.queries)
        c = r["certificate"]
        print(f"\n{name}: certificate {c['verdict'].upper()}, {c['target_passes']} certified, placebo/target "
              f"{c['placebo_target_ratio']}; useful = {r['proxy']}")
        print_table(["pairs", "n", "useful", "share"],
                    [[k, v["pairs"], v["useful"], f"{v['share']:.5f}" if v["share"] is not None else "-"]
                     for k, v in r["pairs"].items()])
        if "seats" in r:
            print(f"seated passages: {r['seats']}")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
