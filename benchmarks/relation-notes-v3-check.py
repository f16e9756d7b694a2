"""Mechanical checks of the relation-notes-v3 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-notes-v3-arcs.jsonl), the skips and the vault's files.

    python benchmarks/relation-notes-v3-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-notes-v3.jsonl. Exit 1 with one line per failure. relation-notes-v1's
checks, imported (through relation-notes-v2-check.py) and run on relation-notes-v3's arcs, skips and
seed: fields, qids RN\\d{3} (v3 numbers from RN201), every question follows its picked arc, 5-35
tokens, no name or heading of a target as a token run, no run of 4 content tokens shared with a
target's text, split by sha256 of the source note, no note in both splits; its "note of a notes-v1
arc" failure here means a note of a dev relation question of notes-v1, relation-notes-v1 or
relation-notes-v2 (relation-notes-v3-sample.py's `used_before`). Two more: qids are RN2xx, and no
question follows an arc any earlier set drew (v2's check, redone over `arcs_before`: notes-v1,
relation-notes-v1 and relation-notes-v2, reserve included).
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


rc1 = _load("relation_notes_v2_check", "relation-notes-v2-check.py").rc1
smp = _load("relation_notes_v3_sample", "relation-notes-v3-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-notes-v3.jsonl"
ARCS = HERE / "relation-notes-v3-arcs.jsonl"
SKIPS = HERE / "relation-notes-v3-skips.json"
# relation-notes-v1's checks, pointed at this set: its seed (split_of), arcs, skips and forbidden notes
rc1.SEED = SEED
rc1.ARCS, rc1.SKIPS = ARCS, SKIPS
rc1.smp = SimpleNamespace(used_by_notes_v1=smp.used_before, SEED=SEED)
split_of = rc1.split_of


def check_new_arcs(rows: list[dict], arcs: list[dict]) -> list[str]:
    """Failures: a question on an arc notes-v1, relation-notes-v1 or relation-notes-v2 already drew."""
    old = smp.arcs_before()
    by_pos = {a["position"]: a for a in arcs}
    return [f"{r.get('qid')}: arc {r.get('arc')} was drawn by notes-v1, relation-notes-v1 or relation-notes-v2"
            for r in rows if (a := by_pos.get(r.get("arc"))) is not None and (a["source"], a["target"]) in old]


def check_qids(rows: list[dict]) -> list[str]:
    """Failures: a qid outside RN201... (v3's numbers)."""
    return [f"{r.get('qid')}: v3 qids are RN2xx" for r in rows
            if not (isinstance(r.get("qid"), str) and re.fullmatch(r"RN2\d\d", r["qid"]))]


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else QUESTIONS
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    arcs = [json.loads(x) for x in ARCS.read_text(encoding="utf-8").splitlines() if x.strip()]
    extra = check_qids(rows) + check_new_arcs(rows, arcs)
    for line in extra:
        print(line)
    rc = rc1.main([str(path)])
    return 1 if rc or extra else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
