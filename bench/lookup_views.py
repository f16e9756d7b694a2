"""Views of a word (issue 46): lookup scored by gloss + names + hypernyms' names, on development descriptions only.

Every sense of all of WordNet (`wordnet-all`) is scored cos(q, gloss) + a * cos(q, names) + b *
cos(q, hypernyms' names) (`sidelight/index/views.py`), the 100 best senses become words as
`lookup` and the lab rank them (`word_ranking`, a word by its best sense) with the prior at its
default (`DEFAULT_PRIORS["dense"]`), and the intended word's rank is read. a = b = 0 is today's
default lookup. Development descriptions only: all of describe-v1 (its test split is spent) and
describe-v2's dev split; describe-v2's test split is never read. The grid point of best MRR@10
(ties to the smaller a + b, then smaller a) is the pick; it and the best point with a view on are
compared with a = b = 0 by a paired bootstrap over families (MRR@10 and acc@10; 10,000 resamples,
seed 0).

    SIDELIGHT_CACHE=.cache .venv/bin/python bench/lookup_views.py --dense .cache/models/wordnet-all-gcide \
        --json bench/results/lookup-views.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, wordnet_index, write_json  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
DEV = [("describe-v1", None), ("describe-v2", "dev")]  # (benchmark, split kept; None: all of it)
DEPTH = 100
GRID = [0.0, 0.1, 0.25, 0.5, 1.0]  # each view's weight


def dev_questions(corpus) -> list[tuple[str, str, str]]:
    """(family, description, intended word) of every development description (never describe-v2 test)."""
    from sidelight.lab.benchmark import load_describe_benchmark

    out = []
    for name, split in DEV:
        b = load_describe_benchmark(BENCHMARKS / f"{name}.jsonl", corpus)
        out += [(f"{name}/{b.family[q]}", b.queries[q], b.intended_name[q])
                for q in b.queries if split is None or b.split[q] == split]
    return out


def scores(ranks: list[int]) -> dict:
    """acc@1/10/100, MRR@10 and the median rank (a word not among those read counts as 101)."""
    n, srt = len(ranks), sorted(ranks)
    return {"n": n, "hit@1": sum(r <= 1 for r in srt) / n, "hit@10": sum(r <= 10 for r in srt) / n,
            "hit@100": sum(r <= DEPTH for r in srt) / n, "mrr@10": sum(1 / r for r in srt if r <= 10) / n,
            "median_rank": (srt[(n - 1) // 2] + srt[n // 2]) / 2}


def by_family(families: list[str], values: list[float]) -> np.ndarray:
    """Mean of `values` per family, families in sorted order (the bootstrap's unit)."""
    groups: dict[str, list[float]] = {}
    for f, v in zip(families, values):
        groups.setdefault(f, []).append(v)
    return np.array([np.mean(groups[f]) for f in sorted(groups)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--dense", default="minilm", metavar="MODEL_SPEC", help="the index's model (default lookup's)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from sidelight.index.lookup import DEFAULT_PRIORS, word_ranking
    from sidelight.index.views import Views, combine, view_cosines, view_vectors
    from sidelight.lab.densecache import dense_store
    from sidelight.lab.stats import paired_bootstrap
    from sidelight.structures.ranking import top_k

    index = wordnet_index()
    index.dense, info = dense_store(index.corpus, args.dense, threads=args.threads, progress=True)
    vectors = view_vectors(index, progress=True)
    questions = dev_questions(index.corpus)
    prior = DEFAULT_PRIORS["dense"]
    grid = [Views(a, b) for a in GRID for b in GRID]
    qvecs = index.dense.embedder().encode([t for _, t, _ in questions], kind="query")
    gloss = np.asarray(index.dense.vectors)
    ranks: dict[Views, list[int]] = {v: [] for v in grid}
    records = index.corpus.records
    for (_, _, target), q in zip(questions, qvecs):
        g, n, h = view_cosines(vectors, gloss, q)
        for v in grid:
            r = top_k(combine(g, n, h, v), DEPTH, index.id_rank, positive_only=False)
            pairs = ((records[p], float(s)) for p, s in zip(r.positions, r.scores))
            rank = word_ranking(pairs, DEPTH, target, prior)[1]
            ranks[v].append(rank if rank is not None and rank <= DEPTH else DEPTH + 1)
    table = {v: scores(ranks[v]) for v in grid}
    base = Views()
    order = sorted(grid, key=lambda v: (-round(table[v]["mrr@10"], 9), v.names + v.hypernyms, v.names))
    best, best_on = order[0], next(v for v in order if v.on)  # the pick; the best with a view on
    families = [f for f, _, _ in questions]

    def interval(metric, best: Views) -> dict:
        a = by_family(families, [metric(r) for r in ranks[base]])
        b = by_family(families, [metric(r) for r in ranks[best]])
        res = paired_bootstrap(a, b, 10_000, 0, 0.95)
        return {"mean": res.mean_difference, "low": res.low, "high": res.high, "families": int(a.size),
                "up": int((b > a).sum()), "down": int((b < a).sum())}

    rows = [[f"{v.names:g}", f"{v.hypernyms:g}", s["n"], f"{s['mrr@10']:.3f}", f"{s['hit@1']:.1%}",
             f"{s['hit@10']:.1%}", f"{s['hit@100']:.1%}", s["median_rank"]] for v, s in table.items()]
    print_table(["names", "hypernyms", "n", "MRR@10", "acc@1", "acc@10", "acc@100", "median rank"], rows)
    compare = {}
    for label, v in (("best", best), ("best_with_views", best_on)):
        compare[label] = {"views": v.to_dict(), "mrr@10": interval(lambda r: 1 / r if r <= 10 else 0.0, v),
                          "hit@10": interval(lambda r: float(r <= 10), v)}
        print(f"{label}: names {v.names:g}, hypernyms {v.hypernyms:g}; minus names 0, hypernyms 0 (paired family "
              f"bootstrap, 95%): " + "; ".join(f"{m} {c['mean']:+.4f} [{c['low']:+.4f}, {c['high']:+.4f}] "
                                                f"({c['up']} up, {c['down']} down)"
                                                for m, c in compare[label].items() if m != "views"))
    out = {"records": len(index.corpus), "dense": args.dense, "dense_key": info["key"], "prior": prior,
           "dev": [f"{n} {s or 'all'}" for n, s in DEV], "depth": DEPTH,
           "grid": [{"views": v.to_dict(), **table[v]} for v in grid], "best": best.to_dict(),
           "best_against_default": compare,
           "ranks": {f"{v.names:g},{v.hypernyms:g}": ranks[v] for v in (base, best, best_on)}}
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
