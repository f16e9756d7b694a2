"""Per question kind (relation-out, relation-in) figures of the committed held-out run
results/runs/relation-notes-v1: MRR@10 and hit@10 (family means, as the lab reports them) and the
protocol's contrasts with the lab's paired family bootstrap and sign-flip test, restricted to the
families that have questions of that kind.

    python bench/relation_notes_heldout.py [--run results/runs/relation-notes-v1] [--json OUT]

It reads only the stored per-query scores of the run (test/result.json), the protocol and the
benchmark: nothing is ranked or re-scored, so the test split stays scored once. The lab's own
report gives per-kind MRR@10 but its intervals only over all questions; these are exploratory.
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

from sidelight.lab.analysis import contrast, family_vector  # noqa: E402
from sidelight.lab.benchmark import load_collection_benchmark  # noqa: E402
from sidelight.lab.packed import read_json  # noqa: E402  (result.json may be stored as result.json.xz)

KINDS = ("relation-out", "relation-in")
METRICS = ("mrr@10", "hit@10")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default=str(HERE.parent / "results" / "runs" / "relation-notes-v1"))
    ap.add_argument("--json", default="bench/results/relation_notes_heldout.json")
    args = ap.parse_args()
    run = Path(args.run)
    proto = json.loads((HERE.parent / "protocols" / "relation-notes-v1.json").read_text())
    bench = load_collection_benchmark(HERE.parent / "benchmarks" / "relation-notes-v1.jsonl",
                                      select=proto["benchmark"]["select"])
    res = read_json(run / "test" / "result.json")
    stats = proto["statistics"]
    per = {lab: m["per_query"] for lab, m in res["methods"].items()}
    pairs = [(proto["primary_contrast"]["baseline"], proto["primary_contrast"]["candidate"])]
    pairs += [(c["baseline"], c["candidate"]) for c in proto["contrasts"]]
    out: dict = {"run": str(run.relative_to(HERE.parent)) if run.is_absolute() else str(run),
                 "split": "test", "kinds": {}}
    for kind in KINDS:
        qs = {q for q in next(iter(per.values())) if bench.type[q] == kind}
        fams = sorted({bench.family[q] for q in qs})
        rows, figs = [], {}
        for lab in per:
            s = {q: v for q, v in per[lab].items() if q in qs}
            figs[lab] = {m: float(family_vector(bench, s, m, fams).mean()) for m in METRICS}
            rows.append([lab, f"{figs[lab]['mrr@10']:.3f}", f"{figs[lab]['hit@10']:.3f}"])
        print(f"\n{kind}: {len(qs)} questions, {len(fams)} families (test)")
        print_table(["method", "MRR@10", "hit@10"], rows)
        cons = []
        for base, cand in pairs:
            b = {q: v for q, v in per[base].items() if q in qs}
            c = {q: v for q, v in per[cand].items() if q in qs}
            r = contrast(bench, b, c, "mrr@10", stats, fams)
            cons.append({"baseline": base, "candidate": cand, **r})
        print_table(["candidate - baseline (MRR@10)", "diff", "95% interval", "p", "+/-/="],
                    [[f"{c['candidate']} - {c['baseline']}", f"{c['difference']:+.3f}",
                      f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]", f"{c['p_sign_flip']:.3f}",
                      f"{c['families_up']}/{c['families_down']}/{c['families_same']}"] for c in cons])
        out["kinds"][kind] = {"n_queries": len(qs), "n_families": len(fams), "methods": figs, "contrasts": cons}
    write_json(args.json, out)


if __name__ == "__main__":
    main()
