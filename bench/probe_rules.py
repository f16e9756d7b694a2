"""Which rule should turn `lab auto`'s probe dev scores into a default? Judged on notes-v1 **dev** only.

    python bench/probe_rules.py --pair PROBE_DEV_RUN NOTES_RUN [--pair ...] [--json OUT]

Each pair is a `lab auto` run folder that has scored its probe's dev split (the index's own vectors,
windows included) and the notes-v1 run over the same collection (questions people wrote; its dev split
scored every grid point, with section windows). Nothing is scored here and no test split is read.
A rule picks a setting from the probe's dev figures; the table shows the notes-v1 dev MRR@10 of the
setting each rule picks, beside notes-v1 dev's best and the global default of an index with vectors
(hybrid-linear, alpha 0.3, z-score, over the index's windows). Rules:

- `pooled`: the best overall probe dev MRR@10 (every question, family means: what lab auto did);
- `kinds`: the best mean over question kinds of the per-kind MRR@10 (each kind weighs the same);
- `link`: the best on link-context questions only (a sentence a person wrote about the target);
- `X+incumbent`: rule X, but the global default stays unless the picked setting beats it on that
  weighting with a paired 95% bootstrap interval above zero (seed 127300, 2,000 resamples: the lab's
  own `paired_bootstrap` over target documents for pooled and link, resampled within each kind for
  kinds). `pooled+incumbent` is what `lab auto` does now (`lab.pick`, `incumbent`).

The rewired controls are left out; `tfidf` is not among notes-v1's methods and is left out too, and so
are `auto` and `global-default` (copies of a grid point). The rule was chosen on runs made before lab
auto ranked the global default as a candidate of its own; the committed runs give the same dev figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from bench._common import write_json
from bench.probe_vs_notes import notes_names
from sidelight.lab.packed import read_json  # a committed run's result.json may be stored as result.json.xz
from sidelight.lab.stats import paired_bootstrap

METRIC = "mrr@10"
DEFAULT = ("hybrid-linear", {"alpha": 0.3, "norm": "zscore"})
SEED, RESAMPLES = 127300, 2000
INCUMBENT = "global-default"  # lab auto's own copy of the global default: the same setting as a hybrid-linear grid point
RULES = ["pooled", "kinds", "link", "pooled+incumbent", "kinds+incumbent", "link+incumbent"]


def setting(label: str, m: dict) -> str:
    """A comparable name: method[params] with the window variant spelled as notes-v1 spells it."""
    name = m.get("group") or label
    params = ",".join(f"{k}={v}" for k, v in sorted(m["params"].items()))
    return f"{name}[{params}]" if params else name


def family_scores(m: dict, fam: dict[str, str], kind: dict[str, str], weighting: str) -> dict[str, float]:
    """Mean MRR@10 per target document (the lab's family), or per (kind, document) for `kinds`."""
    groups: dict[str, list[float]] = {}
    for q, v in m["per_query"].items():
        if weighting == "link" and kind[q] != "link-context":
            continue
        groups.setdefault(f"{kind[q]}\t{fam[q]}" if weighting == "kinds" else fam[q], []).append(v[METRIC])
    return {k: math.fsum(xs) / len(xs) for k, xs in groups.items()}


def value(scores: dict[str, float], weighting: str) -> float:
    """pooled and link: mean over documents; kinds: mean over kinds of the mean over that kind's documents."""
    if weighting != "kinds":
        return math.fsum(scores.values()) / len(scores)
    by: dict[str, list[float]] = {}
    for key, v in scores.items():
        by.setdefault(key.split("\t")[0], []).append(v)
    return math.fsum(math.fsum(v) / len(v) for v in by.values()) / len(by)


def lower_bound(a: dict[str, float], b: dict[str, float], weighting: str) -> float:
    """Lower end of the 95% bootstrap interval of value(a) − value(b)."""
    keys = sorted(a)
    x, y = np.array([b[k] for k in keys]), np.array([a[k] for k in keys])
    if weighting != "kinds":
        return paired_bootstrap(x, y, RESAMPLES, SEED, 0.95).low
    rng = np.random.default_rng(SEED)
    strata = [np.array([i for i, k in enumerate(keys) if k.split("\t")[0] == kd])
              for kd in sorted({k.split("\t")[0] for k in keys})]
    d = y - x
    means = [np.mean([d[s[rng.integers(0, s.size, s.size)]].mean() for s in strata]) for _ in range(RESAMPLES)]
    return float(np.percentile(means, 2.5))


def pick(res: dict, fam: dict[str, str], kind: dict[str, str], rule: str) -> str:
    weighting, kept = rule.split("+")[0], rule.endswith("+incumbent")
    methods = {lab: m for lab, m in res["methods"].items()
               if not m.get("params_from") and lab not in ("tfidf", "auto") and (m.get("group") or lab) != INCUMBENT
               and (lab.endswith("]") or not m["params"])}
    scores = {setting(lab, m): family_scores(m, fam, kind, weighting) for lab, m in methods.items()}
    best = max(sorted(scores), key=lambda s: value(scores[s], weighting))
    default = setting(DEFAULT[0], {"params": DEFAULT[1], "group": DEFAULT[0]})
    if kept and best != default and lower_bound(scores[best], scores[default], weighting) <= 0:
        return default
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", nargs=2, type=Path, action="append", required=True, metavar=("PROBE_RUN", "NOTES_RUN"))
    ap.add_argument("--json", type=Path, default=HERE / "results" / "probe-rules.json")
    a = ap.parse_args()
    out: dict = {"metric": METRIC, "split": "dev", "collections": []}
    regret = {r: [] for r in RULES}
    for probe_run, notes_run in a.pair:
        res = read_json(probe_run / "dev" / "result.json")
        rows = [json.loads(x) for x in (probe_run / "probe.jsonl").read_text().splitlines() if x.strip()]
        fam, kind = {r["qid"]: r["family"] for r in rows}, {r["qid"]: r["kind"] for r in rows}
        notes = {setting(lab, m): m["overall"][METRIC] for lab, m in
                 read_json(notes_run / "dev" / "result.json")["methods"].items()
                 if not m.get("params_from") and (lab.endswith("]") or not m["params"])}
        best = max(sorted(notes), key=notes.get)
        as_notes = notes_names(probe_run)  # probe label -> notes-v1 label (windows: the `-sections` rows)

        def notes_name(probe_setting: str) -> str:
            name, bracket, params = probe_setting.partition("[")
            return as_notes(name) + bracket + params
        default = notes_name(setting(DEFAULT[0], {"params": DEFAULT[1], "group": DEFAULT[0]}))
        print(f"\n{probe_run.name} vs {notes_run.name} dev: best {best} {notes[best]:.4f}; "
              f"global default {default} {notes[default]:.4f}")
        print(f"{'rule':<18}{'probe pick':<44}{'notes-v1 dev':>13}{'− best':>9}{'− default':>11}")
        picks = {}
        for rule in RULES:
            p = notes_name(pick(res, fam, kind, rule))
            v = notes[p]
            picks[rule] = {"pick": p, "notes_dev": v, "minus_best": v - notes[best], "minus_default": v - notes[default]}
            regret[rule].append(notes[best] - v)
            print(f"{rule:<18}{p:<44}{v:>13.4f}{v - notes[best]:>+9.4f}{v - notes[default]:>+11.4f}")
        out["collections"].append({"probe_run": str(probe_run), "notes_run": str(notes_run), "notes_best": [best, notes[best]],
                                   "global_default": [default, notes[default]], "rules": picks})
    out["mean_regret"] = {r: sum(v) / len(v) for r, v in regret.items()}
    print("\nmean regret on notes-v1 dev (best − pick): " + ", ".join(f"{r} {v:.4f}" for r, v in out["mean_regret"].items()))
    write_json(a.json, out)


if __name__ == "__main__":
    main()
