"""Mechanical checks of relation-v2 questions against their arcs: relation-v1's rules, v2's files.

    python benchmarks/relation-v2-check.py [QUESTIONS.jsonl ...]

Default: benchmarks/relation-v2.jsonl, which must hold one question per arc of the quota (96 FOLDOC,
66 WordNet arcs) after skips (relation-v2-skips.json). The rules (fields, 5-30 tokens, no target
name, no anchor name in a `describes` question, no 4-token run of the target's text) are
relation-v1-check.py's, loaded from it. Exit 1 with one line per failure.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("relation_v1_check", HERE / "relation-v1-check.py")
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)
rules.ARCS = HERE / "relation-v2-arcs.jsonl"
rules.SKIPS = HERE / "relation-v2-skips.json"



def main(argv: list[str]) -> int:
    load = lambda f: [json.loads(line) for line in Path(f).read_text(encoding="utf-8").splitlines() if line.strip()]
    skips = json.loads(rules.SKIPS.read_text(encoding="utf-8")) if rules.SKIPS.exists() else {}
    want = rules.expected(load(rules.ARCS), skips)
    rows = [r for f in (argv or [HERE / "relation-v2.jsonl"]) for r in load(f)]
    bad = rules.check(rows, want, complete=not argv)
    for line in bad:
        print(line)
    for corpus in rules.QUOTA:
        ov = sorted(rules.overlap(rules.tokens(r["query"]), want[r["qid"]]["target"]["text"]) for r in rows
                    if r.get("corpus") == corpus and r.get("qid") in want)
        if ov:
            print(f"{corpus}: {len(ov)} questions; content-word overlap with the target's text median {ov[len(ov) // 2]:.0%}")
    print("OK" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
