"""Do probe questions rank methods as human questions do? notes-v1 **dev** only, obsidian-hub.

    python bench/probe_agreement.py --index IDX --probe PROBE.jsonl [--auto RUNDIR] [--json OUT]

Scores every candidate of `sidelight lab auto` (BM25, TF-IDF, bm25+ppr, and with vectors dense,
RRF and hybrid-linear over alpha x norm) by MRR@10 on the probe's dev questions and on notes-v1's
obsidian-hub dev questions, over the same index; prints both, their Spearman rank correlation
(scipy), and whether lab auto's pick (from RUNDIR/auto.json) is notes-v1 dev's best or inside a
paired bootstrap interval of best minus pick (seed 0, 2000 resamples). notes-v1's test split is
never read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from bench._common import write_json
from sidelight.index import Index

NOTES = HERE.parent / "benchmarks" / "notes-v1.jsonl"
GRAPH = [("bm25+ppr", {"alpha": a, "lam": lam}) for a in (0.5, 0.8) for lam in (0.1, 0.25, 0.5)]
DENSE = [("dense", {}), ("rrf", {})] + [("hybrid-linear", {"alpha": a, "norm": n})
                                       for a in (0.3, 0.5, 0.7) for n in ("minmax", "zscore")]


def rr(index: Index, rows: list[dict], method: str, params: dict) -> np.ndarray:
    out = []
    for q in rows:
        hits = [h for h in index.search(q["query"], method, 11, **params) if h.id != q.get("anchor")][:10]
        docs = {t["doc"] for t in q["targets"]}
        ranks = [i + 1 for i, h in enumerate(hits) if h.id in docs]
        out.append(1 / ranks[0] if ranks else 0.0)
    return np.array(out)


def label(method: str, params: dict) -> str:
    return method + ("[" + ",".join(f"{k}={params[k]}" for k in sorted(params)) + "]" if params else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--probe", type=Path, required=True)
    ap.add_argument("--auto", type=Path, help="a lab auto run folder (its auto.json names the pick)")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "probe-agreement.json")
    a = ap.parse_args()
    index = Index.load(a.index)
    probe = [r for r in map(json.loads, a.probe.read_text().splitlines()) if r["split"] == "dev"]
    notes = [r for r in map(json.loads, NOTES.read_text().splitlines())
             if r["split"] == "dev" and r.get("collection") == "obsidian-hub"]
    settings = [("bm25", {}), ("tfidf", {}), *GRAPH, *(DENSE if index.dense is not None else [])]
    rows, notes_rr = [], {}
    for method, params in settings:
        p, n = rr(index, probe, method, params), rr(index, notes, method, params)
        notes_rr[label(method, params)] = n
        rows.append({"method": label(method, params), "probe_dev_mrr@10": float(p.mean()),
                     "notes_dev_mrr@10": float(n.mean())})
        print(f"{rows[-1]['method']:<40} probe dev {p.mean():.4f}   notes-v1 dev {n.mean():.4f}", flush=True)
    rho, pval = spearmanr([r["probe_dev_mrr@10"] for r in rows], [r["notes_dev_mrr@10"] for r in rows])
    out = {"index": str(a.index), "probe": str(a.probe), "n_probe_dev": len(probe), "n_notes_dev": len(notes),
           "methods": rows, "spearman": float(rho), "spearman_p": float(pval)}
    print(f"Spearman rho {rho:.4f} (p {pval:.3g}) over {len(rows)} settings; {len(probe)} probe dev, "
          f"{len(notes)} notes-v1 dev questions (obsidian-hub)")
    probe_best = max(rows, key=lambda r: r["probe_dev_mrr@10"])["method"]
    pick = probe_best
    if a.auto is not None:
        p = json.loads((a.auto / "auto.json").read_text())["pick"]
        pick = label(p["method"], p["params"])
    if pick in notes_rr:
        best = max(rows, key=lambda r: r["notes_dev_mrr@10"])["method"]
        diff = notes_rr[best] - notes_rr[pick]
        rng = np.random.default_rng(0)
        boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(2000)]
        lo, hi = np.percentile(boots, [2.5, 97.5])
        out["pick"] = {"pick": pick, "notes_best": best, "best_minus_pick": float(diff.mean()),
                       "ci95": [float(lo), float(hi)], "is_best": pick == best, "within_interval": bool(lo <= 0)}
        print(f"pick {pick}: notes-v1 dev best is {best}; best - pick {diff.mean():+.4f} "
              f"[{lo:+.4f}, {hi:+.4f}] -> " + ("the best" if pick == best else
                                               "within the interval" if lo <= 0 else "outside the interval"))
    write_json(a.json, out)
    print(f"-> {a.json}")


if __name__ == "__main__":
    main()
