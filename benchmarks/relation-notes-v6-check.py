"""Mechanical checks of the relation-notes-v6 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-notes-v6-arcs.jsonl), the skips, the earlier sets' files
and the vault's files.

    python benchmarks/relation-notes-v6-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-notes-v6.jsonl. Exit 1 with one line per failure. relation-notes-v5's
checks, imported (relation-notes-v5-check.py, through it v4's, v3's, v2's and v1's) and run on
relation-notes-v6's arcs, skips and seed: fields, qids RN\\d{3}, every question follows its picked
arc, 5-35 tokens, no name or heading of a target as a token run, no run of 4 content tokens shared
with a target's text, split by sha256 of the source note, no note in both splits. v4's exclusion
check is run against v6's exclusions (relation-notes-v6-sample.py's `excluded`): (a) no arc notes-v1
or relation-notes-v1 to -v5 drew, reserve included; (b) not the reverse of one; (c) not an
anchor-target pair of any earlier question, in either order. Notes of earlier questions may be
anchors or targets here. And qids are RN6xx.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rc5 = _load("relation_notes_v5_check", "relation-notes-v5-check.py")
rc4, rc1 = rc5.rc4, rc5.rc1
smp = _load("relation_notes_v6_sample", "relation-notes-v6-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-notes-v6.jsonl"
ARCS = HERE / "relation-notes-v6-arcs.jsonl"
SKIPS = HERE / "relation-notes-v6-skips.json"
# v5's (and through it v4's and v1's) checks, pointed at this set: its seed (split_of), arcs, skips;
# v4's exclusion check reads `rc4.smp.excluded`, so it is pointed at v6's sampler (v6's exclusions,
# a superset of v5's)
rc1.SEED = SEED
rc1.ARCS, rc1.SKIPS = ARCS, SKIPS
rc1.smp.SEED = SEED
rc4.SEED, rc4.QUESTIONS, rc4.ARCS, rc4.SKIPS = SEED, QUESTIONS, ARCS, SKIPS
rc4.smp = smp
rc5.SEED, rc5.QUESTIONS, rc5.ARCS, rc5.SKIPS = SEED, QUESTIONS, ARCS, SKIPS
rc5.smp = smp
split_of = rc1.split_of
check_exclusions = rc4.check_exclusions


def check_qids(rows: list[dict]) -> list[str]:
    """Failures: a qid outside RN601... (v6's numbers)."""
    return [f"{r.get('qid')}: v6 qids are RN6xx" for r in rows
            if not (isinstance(r.get("qid"), str) and re.fullmatch(r"RN6\d\d", r["qid"]))]


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else QUESTIONS
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    arcs = [json.loads(x) for x in ARCS.read_text(encoding="utf-8").splitlines() if x.strip()]
    extra = check_qids(rows) + check_exclusions(rows, arcs)
    for line in extra:
        print(line)
    rc = rc1.main([str(path)])
    return 1 if rc or extra else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
