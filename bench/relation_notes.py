"""The relation lane on notes: notes-v1's relation questions (obsidian-hub), **dev** split only.

    python bench/relation_notes.py [--vectors sections|whole|none] [--json OUT]

Scores, per question kind (relation-out: a note the question names links to the target;
relation-in: the target links to it), MRR@10 and hit@10 of BM25, dense (when the index has vectors)
and the relation lane, the lane "before" (the dictionary profile: no hub damping, out-links only,
no named part, i.e. the lane as relation-v1/v2 chose it) and "after" (the notes profile,
`sidelight.methods.relation.PROFILES`), plus a small grid around the notes profile from which its
values were picked. hubs@10: the share of questions whose top 10 holds one of the 1% most
linked-to notes (by in-degree) that is not a target. The note a question names (its anchor) is dropped from every ranking, as the
lab does (`exclude_anchor`). The test split is the lab's (protocols/notes-v1-obsidian.json), never
scored here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import print_table, write_json  # noqa: E402

from sidelight.index import Index  # noqa: E402

QUESTIONS = HERE.parent / "benchmarks" / "notes-v1.jsonl"
KINDS = ("relation-out", "relation-in")
BEFORE = {"hub_damping": 0.0, "direction": "out", "name_weight": 0.0}
GRID = [{"hub_damping": h, "direction": d, "name_weight": w}
        for h in (0.0, 0.5, 1.0, 2.0) for d in ("out", "cue", "both") for w in (0.0, 1.0, 2.0)]


def load(vectors: str) -> Index:
    """The obsidian-hub index bench/collection.py builds (cached under .cache/bench-collection)."""
    if vectors == "none":
        cache = HERE.parent / ".cache" / "bench-collection" / "obsidian-hub-bm25"
        if cache.is_dir():
            return Index.load(cache)
        from sidelight.config import data_dir
        from sidelight.corpus.folder import load_folder
        return Index.write(load_folder(data_dir() / "obsidian-hub"), cache)
    from collection import build
    return build("obsidian-hub", vectors == "sections")


def hubs(index: Index) -> set[str]:
    """The 1% most linked-to records (in-degree, self loops aside; ties by id)."""
    import numpy as np

    g = index.graph
    real = g.sources != g.indices
    indeg = np.bincount(g.indices[real], minlength=g.n_nodes)
    order = np.lexsort((index.id_rank, -indeg))[:max(1, g.n_nodes // 100)]
    return {index.ids[i] for i in order}


def score(index: Index, questions: list[dict], method: str, params: dict, hub: set[str] = frozenset()) -> dict:
    """MRR@10, hit@10 and hubs@10 per kind and overall (anchor dropped, then the top 10)."""
    per: dict[str, list[float]] = {k: [] for k in (*KINDS, "all")}
    with_hub: dict[str, list[bool]] = {k: [] for k in (*KINDS, "all")}
    for q in questions:
        hits = [h for h in index.search(q["query"], method, 11, **params) if h.id != q["anchor"]][:10]
        docs = {t["doc"] for t in q["targets"]}
        ranks = [i for i, h in enumerate(hits, start=1) if h.id in docs]
        rr = 1 / ranks[0] if ranks else 0.0
        h = any(x.id in hub and x.id not in docs for x in hits)
        for k in (q["kind"], "all"):
            per[k].append(rr)
            with_hub[k].append(h)
    return {k: {"mrr@10": sum(v) / len(v), "hit@10": sum(x > 0 for x in v) / len(v),
                "hubs@10": sum(with_hub[k]) / len(v), "n": len(v), "rr": v} for k, v in per.items() if v}


def intervals(results: dict, candidate: str, baselines: list[str]) -> dict:
    """Paired bootstrap 95% interval of the candidate's MRR@10 minus each baseline's, over all
    questions (10,000 resamples, seed 0): 22 dev questions give wide intervals."""
    import numpy as np

    from sidelight.lab.stats import paired_bootstrap

    out = {}
    for b in baselines:
        r = paired_bootstrap(np.array(results[b]["all"]["rr"]), np.array(results[candidate]["all"]["rr"]))
        out[b] = {"difference": r.mean_difference, "ci": [r.low, r.high]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", default="sections", choices=["sections", "whole", "none"],
                    help="the index's vectors: section windows (the default folder index), whole documents, none")
    ap.add_argument("--grid", action="store_true", help="also score the grid the notes profile was picked from")
    ap.add_argument("--json", default="bench/results/relation_notes.json")
    args = ap.parse_args()
    questions = [q for q in map(json.loads, QUESTIONS.read_text(encoding="utf-8").splitlines())
                 if q["collection"] == "obsidian-hub" and q["kind"] in KINDS and q["split"] == "dev"]
    index = load(args.vectors)
    runs = [("bm25", "bm25", {})] + ([("dense", "dense", {})] if index.dense is not None else [])
    runs += [("relation before (dictionary profile)", "relation", BEFORE),
             ("relation after (notes profile)", "relation", {})]
    if args.grid:
        runs += [(" ".join(f"{k}={v}" for k, v in g.items()), "relation", g) for g in GRID]
    out = {"split": "dev", "vectors": args.vectors, "n": len(questions), "results": {}}
    rows, hub = [], hubs(index)
    out["hubs"] = sorted(hub)
    for label, method, params in runs:
        r = score(index, questions, method, params, hub)
        out["results"][label] = {"method": method, "params": params, **r}
        rows.append([label, *(f"{r[k]['mrr@10']:.3f} / {r[k]['hit@10']:.2f}" for k in (*KINDS, "all")),
                     f"{r['all']['hubs@10']:.2f}"])
    counts = ", ".join(f"{k} {sum(q['kind'] == k for q in questions)}" for k in KINDS)
    print(f"notes-v1 obsidian-hub relation questions, dev: {len(questions)} ({counts}); vectors: {args.vectors}")
    print_table(["run", *(f"{k} MRR@10 / hit@10" for k in KINDS), "all MRR@10 / hit@10", "hubs@10"], rows)
    after = "relation after (notes profile)"
    out["intervals"] = intervals(out["results"], after, [lab for lab, _, _ in runs[:len(runs) - (len(GRID) if args.grid else 0)]
                                                          if lab != after])
    for b, d in out["intervals"].items():
        print(f"{after} - {b}: {d['difference']:+.3f} MRR@10, 95% CI [{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}]")
    write_json(args.json, out)


if __name__ == "__main__":
    main()
