"""Does the relation lane's in-link wording fire on relation-notes-v1's **dev** relation-in questions?

    python bench/relation_notes_cues.py [--json OUT]

For each dev relation-in question: whether the lane (notes profile, the index bench/collection.py
builds with section windows) spreads backwards from a named note (`backward_from`), the notes it
took as named, and the target's rank in its top 10. Dev only: the test split was scored once
(results/runs/relation-notes-v1) and is not ranked here.
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

from sidelight.methods.relation import relation_rank  # noqa: E402

QUESTIONS = HERE.parent / "benchmarks" / "relation-notes-v1.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="bench/results/relation_notes_cues.json")
    args = ap.parse_args()
    from collection import build
    index = build("obsidian-hub", True)
    rows, out = [], []
    for q in (json.loads(x) for x in QUESTIONS.read_text(encoding="utf-8").splitlines() if x.strip()):
        if q["split"] != "dev" or q["kind"] != "relation-in":
            continue
        r = relation_rank(index, q["query"], 10, {})
        hits = [index.ids[h.node] for h in r.hits]
        target = q["targets"][0]["doc"]
        rank = hits.index(target) + 1 if target in hits else None
        named = [index.ids[a.position] for a in r.anchors if a.why == "name"]
        back = bool(r.params.get("backward_from"))
        out.append({"qid": q["qid"], "backward": back, "rank": rank, "named": named,
                    "anchor_named": q["anchor"] in named})
        rows.append([q["qid"], "yes" if back else "no", "yes" if q["anchor"] in named else "no",
                     rank or "-", q["query"][:60]])
    print_table(["qid", "backward", "anchor named", "rank", "question"], rows)
    for back in (True, False):
        sub = [o for o in out if o["backward"] == back]
        if sub:
            top = sum(o["rank"] is not None for o in sub)
            mrr = sum(1 / o["rank"] for o in sub if o["rank"]) / len(sub)
            print(f"backward {'fired' if back else 'not fired'}: {len(sub)} questions, "
                  f"target in top 10: {top}, MRR@10 (per question) {mrr:.3f}")
    write_json(args.json, {"split": "dev", "kind": "relation-in", "questions": out})


if __name__ == "__main__":
    main()
