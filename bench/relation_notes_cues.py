"""Which in-link wording turns the relation lane backwards, on relation-notes-v1's and -v2's **dev** questions?

    python bench/relation_notes_cues.py [--grid] [--rules verbs,pronoun,...] [--sets v1,v2] [--json OUT]

For each dev question of each set (`--sets`, default both) (relation-out and relation-in) the lane (notes profile, the index
bench/collection.py builds with section windows) ranks it with the in-link patterns `--rules`
(`sidelight.methods.relation_notes.RULES`; default: the lane's `INWARD_RULES`); per question: whether
it spread backwards from a named note (`backward_from`), whether the anchor was named, the target's
rank in the top 10. `--grid` ranks every rule set of the ablation (the hand list of relation-notes-v1,
the lexicon's verbs, then each further pattern) and prints MRR@10 per kind; the lexicon's default
patterns were chosen from it on v1 dev; the "subject" gate (issue 43: the lexicon fires only when the
asked-for note is the verb's subject) on v1 and v2 dev together. Dev only: both test splits were scored
once (results/runs/relation-notes-v1, relation-notes-v2).
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

from sidelight.methods import relation_notes  # noqa: E402
from sidelight.methods.relation import relation_rank  # noqa: E402

SETS = {"v1": HERE.parent / "benchmarks" / "relation-notes-v1.jsonl",
        "v2": HERE.parent / "benchmarks" / "relation-notes-v2.jsonl"}
GRID = (("list-v1",), ("verbs",), ("verbs", "pronoun"), ("verbs", "pronoun", "passive"),
        ("verbs", "pronoun", "passive", "agent"), ("verbs", "pronoun", "agent"),
        ("verbs", "subject"), ("verbs", "pronoun", "subject"), ("verbs", "pronoun", "passive", "agent", "subject"))


def score(index, questions: list[dict], rules: tuple[str, ...]) -> list[dict]:
    """Per question: backward or not, the anchor named or not, the target's rank (None past 10)."""
    lane_rules, relation_notes.INWARD_RULES = relation_notes.INWARD_RULES, rules  # the lane reads them at rank time
    out = []
    try:
        for q in questions:
            r = relation_rank(index, q["query"], 10, {})
            hits = [index.ids[h.node] for h in r.hits]
            target = q["targets"][0]["doc"]
            named = [index.ids[a.position] for a in r.anchors if a.why == "name"]
            out.append({"qid": q["qid"], "kind": q["kind"], "backward": bool(r.params.get("backward_from")),
                        "rank": hits.index(target) + 1 if target in hits else None,
                        "anchor_named": q["anchor"] in named, "query": q["query"]})
    finally:
        relation_notes.INWARD_RULES = lane_rules
    return out


def mrr(rows: list[dict]) -> float:
    return sum(1 / o["rank"] for o in rows if o["rank"]) / len(rows) if rows else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", help="comma-separated in-link patterns (default: the lane's INWARD_RULES)")
    ap.add_argument("--grid", action="store_true", help="every rule set of the ablation")
    ap.add_argument("--sets", default="v1,v2", help="comma-separated relation-notes versions (dev splits)")
    ap.add_argument("--json", default="bench/results/relation_notes_cues.json")
    args = ap.parse_args()
    names = args.sets.split(",")
    if set(names) - set(SETS):
        sys.exit(f"unknown set(s) {sorted(set(names) - set(SETS))}; choose from {', '.join(SETS)}")
    default = tuple(args.rules.split(",")) if args.rules else relation_notes.INWARD_RULES
    bad = set(default) - set(relation_notes.RULES)
    if bad:
        sys.exit(f"unknown rule(s) {sorted(bad)}; choose from {', '.join(relation_notes.RULES)}")
    from collection import build
    index = build("obsidian-hub", True)
    dev = {}
    for name in names:
        qs = [json.loads(x) for x in SETS[name].read_text(encoding="utf-8").splitlines() if x.strip()]
        dev[name] = [q for q in qs if q["split"] == "dev"]
    sets = list(GRID) if args.grid else [default]
    table, result = [], {"split": "dev", "questions": {n: len(d) for n, d in dev.items()}, "runs": []}
    for rules in sets:
        per = {n: score(index, d, rules) for n, d in dev.items()}
        groups = {**per, "all": [o for rows in per.values() for o in rows]} if len(per) > 1 else per
        run: dict = {"rules": list(rules), "mrr@10": {}, "questions": per}
        for g, rows in groups.items():
            ins = [o for o in rows if o["kind"] == "relation-in"]
            outs = [o for o in rows if o["kind"] == "relation-out"]
            table.append([g, "+".join(rules), f"{mrr(outs):.3f}", f"{mrr(ins):.3f}", f"{mrr(rows):.3f}",
                          f"{sum(o['backward'] for o in ins)}/{len(ins)}",
                          f"{sum(o['backward'] for o in outs)}/{len(outs)}"])
            run["mrr@10"][g] = {"relation-out": mrr(outs), "relation-in": mrr(ins), "all": mrr(rows)}
        result["runs"].append(run)
    if not args.grid:
        print_table(["qid", "kind", "backward", "anchor named", "rank", "question"],
                    [[o["qid"], o["kind"], "yes" if o["backward"] else "no", "yes" if o["anchor_named"] else "no",
                      o["rank"] or "-", o["query"][:60]] for rows in result["runs"][0]["questions"].values()
                     for o in rows])
    print_table(["dev set", "in-link patterns", "out MRR@10", "in MRR@10", "all MRR@10", "in: backward",
                 "out: backward"], table)
    write_json(args.json, result)


if __name__ == "__main__":
    main()
