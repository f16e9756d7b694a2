"""Mechanical checks of the relation-notes-v4 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-notes-v4-arcs.jsonl), the skips, the earlier sets' files
and the vault's files.

    python benchmarks/relation-notes-v4-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-notes-v4.jsonl. Exit 1 with one line per failure. relation-notes-v3's
checks, imported (relation-notes-v3-check.py, through it v2's and v1's) and run on relation-notes-v4's
arcs, skips and seed: fields, qids RN\\d{3}, every question follows its picked arc, 5-35 tokens, no
name or heading of a target as a token run, no run of 4 content tokens shared with a target's text,
split by sha256 of the source note, no note in both splits. One change, as in the sampler: v1's
"note of a notes-v1 arc" check (v3: a note of an earlier dev relation question) is replaced by v4's
exclusions, checked on each question's arc (relation-notes-v4-sample.py's `excluded`): (a) no arc
notes-v1 or relation-notes-v1 to -v3 drew, reserve included; (b) not the reverse of one; (c) not
an anchor-target pair of any earlier question, in either order. Notes of earlier dev questions may
be anchors or targets here. And qids are RN3xx.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).parent


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rc1 = _load("relation_notes_v3_check", "relation-notes-v3-check.py").rc1
smp = _load("relation_notes_v4_sample", "relation-notes-v4-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-notes-v4.jsonl"
ARCS = HERE / "relation-notes-v4-arcs.jsonl"
SKIPS = HERE / "relation-notes-v4-skips.json"
# relation-notes-v1's checks, pointed at this set: its seed (split_of), arcs, skips; no forbidden notes
# (v4 allows notes of earlier dev questions; its exclusions are on arcs, checked by check_exclusions)
rc1.SEED = SEED
rc1.ARCS, rc1.SKIPS = ARCS, SKIPS
rc1.smp = SimpleNamespace(used_by_notes_v1=set, SEED=SEED)
split_of = rc1.split_of
WHY = {"a": "was drawn by an earlier set", "b": "is the reverse of an arc an earlier set drew",
       "c": "joins the anchor and a target of an earlier question"}


def check_exclusions(rows: list[dict], arcs: list[dict]) -> list[str]:
    """Failures: a question on an arc under v4's exclusions (a), (b) or (c)."""
    by_pos = {a["position"]: a for a in arcs}
    bad = []
    for r in rows:
        a = by_pos.get(r.get("arc"))
        if a is not None and (why := smp.excluded(a["source"], a["target"])):
            bad.append(f"{r.get('qid')}: arc {a['position']} {WHY[why]} ({why})")
    return bad


def check_qids(rows: list[dict]) -> list[str]:
    """Failures: a qid outside RN301... (v4's numbers)."""
    return [f"{r.get('qid')}: v4 qids are RN3xx" for r in rows
            if not (isinstance(r.get("qid"), str) and re.fullmatch(r"RN3\d\d", r["qid"]))]


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
