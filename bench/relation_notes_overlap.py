"""How many of a relation set's questions touch a note an earlier set's dev questions used (issue 43).

    python bench/relation_notes_overlap.py [--set relation-notes-v4] [--earlier notes-v1 relation-notes-v1 ...]

relation-notes-v4 relaxed one exclusion of the earlier sets (benchmarks/relation-notes-v4-sample.py):
a note of an earlier dev question may be an end of its arcs. This counts, per split, the set's
questions whose anchor or target is such a note (the anchor and targets of every dev relation
question of the earlier sets). It reads benchmark files only: no retrieval.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import print_table, write_json  # noqa: E402

BENCH = HERE.parent / "benchmarks"
EARLIER = ("notes-v1", "relation-notes-v1", "relation-notes-v2", "relation-notes-v3")


def rows(name: str) -> list[dict]:
    return [json.loads(x) for x in (BENCH / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def ends(q: dict) -> set[str]:
    return {q["anchor"], *(t["doc"] for t in q["targets"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="relation-notes-v4")
    ap.add_argument("--earlier", nargs="*", default=list(EARLIER))
    ap.add_argument("--json", default="bench/results/relation-notes-overlap.json")
    args = ap.parse_args()
    seen = {n for name in args.earlier for q in rows(name)
            if q["split"] == "dev" and q["kind"].startswith("relation") and q.get("anchor") for n in ends(q)}
    qs = rows(args.set)
    table, out = [], {"set": args.set, "earlier": args.earlier, "earlier_dev_notes": len(seen), "splits": {}}
    for split in ("dev", "test", "all"):
        chosen = [q for q in qs if split == "all" or q["split"] == split]
        touching = [q["qid"] for q in chosen if ends(q) & seen]
        out["splits"][split] = {"questions": len(chosen), "touching": len(touching), "qids": touching}
        table.append([split, len(chosen), len(touching)])
    print_table(["split", "questions", "touching an earlier dev note"], table)
    print(f"earlier dev notes: {len(seen)}")
    write_json(args.json, out)


if __name__ == "__main__":
    main()
