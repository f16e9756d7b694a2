"""Does `lab auto`'s probe rank methods as the written benchmark's **test** split does? Committed runs only.

    python bench/probe_vs_notes.py [--auto results/runs/auto-obsidian-hub]
                                   [--notes results/runs/notes-v1-obsidian] [--json OUT]

Reads two committed lab runs over the same vault and scores nothing: the `lab auto` run (probe
questions) and the written benchmark's held-out run (notes-v1, questions people wrote). For every
method both runs scored (each at the setting its own dev split chose; the rewired controls and
`auto` left out) it prints probe test MRR@10, probe dev MRR@10 and the benchmark's test MRR@10, with
the Spearman and Kendall rank correlations (scipy) of probe test (and probe dev) against benchmark
test. Then the issue-48 check: is `lab auto`'s pick the benchmark test's best method, or within a
paired family-bootstrap interval of (best − pick), or above the global default? Intervals resample
the benchmark's families (its `test/result.json` per-query values, families from its frozen
benchmark file) with the protocol's seed and resample count; the script checks that the same code
reproduces a contrast the run stored. A pick's exact setting (alpha, norm) can only be looked up on
the benchmark's dev split, whose run folder scored every grid point; that is printed as well.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau, spearmanr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from bench._common import write_json
from sidelight.lab.packed import read_json  # a committed run's result.json may be stored as result.json.xz

METRIC = "mrr@10"
#: the benchmark method nearest the global default for an index with vectors (hybrid-linear, alpha 0.3,
#: section windows: README "The default method"; notes-v1's dev chose alpha 0.3 min-max for it); an
#: index without vectors searches with BM25 by default
DEFAULT, DEFAULT_LEXICAL = "hybrid-linear-sections", "bm25"
INCUMBENT = "global-default"  # lab auto's candidate for the global default at its fixed setting


def notes_names(auto: Path):
    """probe label -> notes-v1 label: a `lab auto` run that ranks with the index's windows (its dense
    methods read the `index` variant) compares with notes-v1's section-window rows, and its
    incumbent (the global default) with notes-v1's hybrid-linear over section windows."""
    proto = json.loads((auto / "protocol.json").read_text())
    windowed = any(m.get("dense") == "index" for m in proto["methods"])

    def name(lab: str) -> str:
        lab = "hybrid-linear" if lab == INCUMBENT else lab
        return f"{lab}-sections" if windowed and lab in ("dense", "rrf", "hybrid-linear") else lab
    return name


def load(run: Path, split: str) -> dict:
    return read_json(run / split / "result.json")


def families(notes: Path) -> dict[str, str]:
    """qid -> family, from the frozen benchmark file the run names (path relative to its protocol)."""
    freeze = json.loads((notes / "freeze.json").read_text())
    bench = HERE.parent / Path(freeze["protocol_path"]).parent / freeze["protocol_data"]["benchmark"]["path"]
    return {r["qid"]: r["family"] for r in map(json.loads, filter(str.strip, bench.read_text().splitlines()))}


def family_diff(res: dict, fam: dict[str, str], cand: str, base: str) -> np.ndarray:
    """Per-family mean of (cand − base) per-query MRR@10, families in sorted order."""
    a, b = res["methods"][cand]["per_query"], res["methods"][base]["per_query"]
    groups: dict[str, list[float]] = {}
    for q in sorted(a):
        groups.setdefault(fam[q], []).append(a[q][METRIC] - b[q][METRIC])
    return np.array([math.fsum(groups[f]) / len(groups[f]) for f in sorted(groups)])


def interval(d: np.ndarray, stats: dict) -> tuple[float, float, float]:
    """Mean and percentile family-bootstrap interval (as `sidelight lab audit` recomputes contrasts)."""
    idx = np.random.default_rng(int(stats["seed"])).integers(0, d.size, (int(stats["n_resamples"]), d.size))
    means = d[idx].mean(axis=1)
    if not d.any():
        return 0.0, 0.0, 0.0
    conf = float(stats["confidence"])
    lo, hi = np.percentile(means, [50 * (1 - conf), 100 - 50 * (1 - conf)])
    return float(d.mean()), float(lo), float(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--auto", type=Path, default=HERE.parent / "results" / "runs" / "auto-obsidian-hub")
    ap.add_argument("--notes", type=Path, default=HERE.parent / "results" / "runs" / "notes-v1-obsidian")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "probe-vs-notes-obsidian.json")
    a = ap.parse_args()
    probe_test, probe_dev = load(a.auto, "test"), load(a.auto, "dev")
    notes_test, notes_dev = load(a.notes, "test"), load(a.notes, "dev")
    controls = lambda res: {lab for lab, m in res["methods"].items() if m.get("params_from")}  # noqa: E731
    as_notes = notes_names(a.auto)
    common = [lab for lab in probe_test["methods"] if as_notes(lab) in notes_test["methods"]
              and lab not in controls(probe_test) | controls(notes_test) | {"auto", INCUMBENT}]
    rows = []
    for lab in common:
        p, n = probe_test["methods"][lab], notes_test["methods"][as_notes(lab)]
        rows.append({"method": lab, "notes_method": as_notes(lab), "probe_params": p["params"], "probe_test": p["overall"][METRIC],
                     "probe_dev": probe_dev["methods"][lab]["overall"][METRIC],
                     "notes_params": n["params"], "notes_test": n["overall"][METRIC]})
    print(f"{'method':<16}{'probe test':>12}{'probe dev':>12}{'notes-v1 test':>15}   settings (probe | notes-v1)")
    for r in rows:
        print(f"{r['method']:<16}{r['probe_test']:>12.4f}{r['probe_dev']:>12.4f}{r['notes_test']:>15.4f}   "
              f"{json.dumps(r['probe_params'])} | {json.dumps(r['notes_params'])}")
    notes = [r["notes_test"] for r in rows]
    corr = {}
    for probe_split in ("probe_test", "probe_dev"):
        xs = [r[probe_split] for r in rows]
        if len(rows) < 3 or len(set(xs)) < 2 or len(set(notes)) < 2:
            corr[probe_split] = None  # a rank correlation needs three methods and two distinct values per side
            print(f"{probe_split.replace('_', ' ')} vs notes-v1 test: no rank correlation over {len(rows)} "
                  f"method(s) ({', '.join(r['method'] for r in rows)}) with these values")
            continue
        rho, rho_p = spearmanr(xs, notes)
        tau, tau_p = kendalltau(xs, notes)
        corr[probe_split] = {"spearman": float(rho), "spearman_p": float(rho_p),
                             "kendall": float(tau), "kendall_p": float(tau_p)}
        print(f"{probe_split.replace('_', ' ')} vs notes-v1 test over {len(rows)} methods: Spearman {rho:+.3f} "
              f"(p {rho_p:.2f}), Kendall {tau:+.3f} (p {tau_p:.2f})")

    fam = families(a.notes)
    stats = {"seed": 127300, "n_resamples": 10_000, "confidence": 0.95,
             **json.loads((a.notes / "freeze.json").read_text())["protocol_data"].get("statistics", {})}
    stored = next(c for c in notes_test["contrasts"] if c["baseline"] == "hybrid-linear" and c["candidate"] == DEFAULT)
    mine = interval(family_diff(notes_test, fam, DEFAULT, "hybrid-linear"), stats)
    if max(abs(x - y) for x, y in zip(mine, (stored["difference"], stored["ci_low"], stored["ci_high"]))) > 1e-9:
        raise SystemExit(f"the bootstrap here does not reproduce the run's stored contrast: {mine} vs {stored}")

    probe_pick = probe_test["pick"]["chosen"]
    pick = as_notes(probe_pick)
    ranked = sorted((lab for lab in notes_test["methods"] if lab not in controls(notes_test)),
                    key=lambda lab: (-notes_test["methods"][lab]["overall"][METRIC], lab))
    best = ranked[0]
    out = {"auto": str(a.auto), "notes": str(a.notes), "metric": METRIC, "methods": rows, "correlation": corr,
           "notes_test_order": [[lab, notes_test["methods"][lab]["overall"][METRIC]] for lab in ranked]}
    check: dict = {"pick": pick, "pick_params": probe_test["methods"][probe_pick]["params"], "notes_best": best,
                   "is_best": pick == best}
    if pick in notes_test["methods"]:
        d, lo, hi = interval(family_diff(notes_test, fam, best, pick), stats)
        check["best_minus_pick"] = {"difference": d, "ci": [lo, hi]}
        check["within_interval"] = lo <= 0
        vectors = "dense" in json.loads((a.auto / "protocol.json").read_text())["index"]
        default = DEFAULT if vectors else DEFAULT_LEXICAL  # the global default of the index lab auto ran on
        d, lo, hi = interval(family_diff(notes_test, fam, pick, default), stats)
        check["pick_minus_default"] = {"default": default, "index_has_vectors": vectors, "difference": d, "ci": [lo, hi]}
        check["notes_params_of_pick_method"] = notes_test["methods"][pick]["params"]
    label = pick + "[" + ",".join(f"{k}={v}" for k, v in sorted(check["pick_params"].items())) + "]"
    grid = {lab: m["overall"][METRIC] for lab, m in notes_dev["methods"].items() if lab.startswith(pick + "[")}
    if label in grid:
        check["notes_dev_setting"] = {"setting": label, "value": grid[label], "best": max(grid, key=grid.get),
                                      "best_value": max(grid.values()), "rank": sorted(grid.values(), reverse=True).index(grid[label]) + 1,
                                      "of": len(grid)}
    out["pick_check"] = check
    print("notes-v1 test order: " + ", ".join(f"{lab} {v:.4f}" for lab, v in out["notes_test_order"]))
    print(f"pick {pick} {json.dumps(check['pick_params'])}: notes-v1 test best is {best}"
          + (" (the pick's method)" if check["is_best"] else ""))
    if "best_minus_pick" in check:
        b, p = check["best_minus_pick"], check["pick_minus_default"]
        print(f"  best - pick {b['difference']:+.4f} [{b['ci'][0]:+.4f}, {b['ci'][1]:+.4f}]; pick - {p['default']} "
              f"(the global default of an index {'with' if p['index_has_vectors'] else 'without'} vectors) "
              f"{p['difference']:+.4f} [{p['ci'][0]:+.4f}, {p['ci'][1]:+.4f}]; "
              f"notes-v1 ran the method at {json.dumps(check['notes_params_of_pick_method'])}")
    if "notes_dev_setting" in check:
        s = check["notes_dev_setting"]
        print(f"  the pick's own setting on notes-v1 dev: {s['setting']} {s['value']:.4f}, rank {s['rank']} of "
              f"{s['of']} (best {s['best']} {s['best_value']:.4f})")
    write_json(a.json, out)
    print(f"-> {a.json}")


if __name__ == "__main__":
    main()
