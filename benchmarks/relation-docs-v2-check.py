"""Mechanical checks of the relation-docs-v2 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-docs-v2-arcs.jsonl), the skips, relation-docs-v1's arcs and
the Python docs' pages (read as the lab reads them: relation-docs-v1-sample.py's `load`).

    python benchmarks/relation-docs-v2-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-docs-v2.jsonl. Exit 1 with one line per failure. relation-docs-v1's
checks (benchmarks/relation-docs-v1-check.py), imported and pointed at this set: its arcs, skips,
seed (split = sha256(f"7297:{family}") first byte even -> dev) and sampler (relation-docs-v2-sample.py:
its `used_before` is the forbidden pages, its `candidate_arcs` the candidates); fields, every question
follows its picked arc, every main arc asked or skipped with a reason, 5-35 tokens, no name or heading
of a target as a token run, no run of 4 content tokens shared with a target's text, no page in both
splits. v1's qid rule (RD\\d{3}) is replaced by this set's (RE\\d{3}, unique); nothing else of v1 is
dropped (v1's "page of a dev python-docs question of notes-v1" failure here means any page v2's sampler
excludes: those, and both ends of every relation-docs-v1 arc). Two more, named on their own:
  * no page of any relation-docs-v1 arc (reserve included) is an anchor or a target;
  * no question follows an arc relation-docs-v1 drew (reserve included).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rd1c = _load("relation_docs_v1_check", "relation-docs-v1-check.py")
smp = _load("relation_docs_v2_sample", "relation-docs-v2-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-docs-v2.jsonl"
ARCS = HERE / "relation-docs-v2-arcs.jsonl"
SKIPS = HERE / "relation-docs-v2-skips.json"
# relation-docs-v1's checks, pointed at this set: sampler (forbidden pages, candidates), seed, files
rd1c.smp = smp
rd1c.SEED = rd1c.rc1.SEED = SEED
rd1c.QUESTIONS, rd1c.ARCS, rd1c.SKIPS = QUESTIONS, ARCS, SKIPS
split_of = rd1c.split_of
_v1_check = rd1c.check


def check_qids(rows: list[dict]) -> list[str]:
    """Failures: a qid outside RE\\d{3}, or one used twice (v1's rule with this set's prefix)."""
    seen: set[str] = set()
    bad = []
    for r in rows:
        qid = r.get("qid")
        if not (isinstance(qid, str) and re.fullmatch(r"RE\d{3}", qid)) or qid in seen:
            bad.append(f"{qid}: bad or duplicate qid (v2 qids are RE\\d{{3}})")
        seen.add(qid)
    return bad


def check_v1_disjoint(rows: list[dict], arcs: list[dict]) -> list[str]:
    """Failures: a page of a relation-docs-v1 arc as anchor or target; a question on a v1 arc."""
    old = smp.arcs_before()
    old_pages = {p for arc in old for p in arc}
    by_pos = {a["position"]: a for a in arcs}
    bad = []
    for r in rows:
        pages = [r.get("anchor"), *(t.get("doc") for t in r.get("targets") or () if isinstance(t, dict))]
        for page in pages:
            if page in old_pages:
                bad.append(f"{r.get('qid')}: {page!r} is a page of a relation-docs-v1 arc")
        a = by_pos.get(r.get("arc"))
        if a is not None and (a["source"], a["target"]) in old:
            bad.append(f"{r.get('qid')}: arc {a['position']} was drawn by relation-docs-v1")
    for a in arcs:
        if (a["source"], a["target"]) in old:
            bad.append(f"arc {a['position']}: drawn by relation-docs-v1")
        for page in (a["source"], a["target"]):
            if page in old_pages:
                bad.append(f"arc {a['position']}: {page!r} is a page of a relation-docs-v1 arc")
    return bad


def check(rows: list[dict], arcs: list[dict], skips: dict[str, str]) -> list[str]:
    """relation-docs-v1's failures (its RD qid rule swapped for RE), then this set's two more."""
    v1_qid = {f"{r.get('qid')}: bad or duplicate qid" for r in rows}
    bad = [x for x in _v1_check(rows, arcs, skips) if x not in v1_qid]
    return check_qids(rows) + bad + check_v1_disjoint(rows, arcs)


rd1c.check = check


def main(argv: list[str]) -> int:
    return rd1c.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
