"""Mechanical checks of the relation-docs-v3 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-docs-v3-arcs.jsonl), the skips, the earlier sets' files
and the Python docs' pages (read as the lab reads them: relation-docs-v1-sample.py's `load`).

    python benchmarks/relation-docs-v3-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-docs-v3.jsonl. Exit 1 with one line per failure. relation-docs-v2's
checks (benchmarks/relation-docs-v2-check.py, and through it relation-docs-v1's), imported and pointed
at this set: its arcs, skips, seed (split = sha256(f"6133:{family}") first byte even -> dev) and
sampler (relation-docs-v3-sample.py: its `candidate_arcs` the candidates, its `used_before` the
forbidden pages, none under v3's relaxed rule); fields, every question follows its picked arc, every
main arc asked or skipped with a reason (skips replaced by reserve arcs in order), 5-35 tokens, no
name or heading of a target as a token run, no run of 4 content tokens shared with a target's text,
no page in both splits. Two changes, as in the sampler:
  * v2's "no page of a relation-docs-v1 arc" check is dropped (pages may repeat here); in its place
    v3's exclusions, checked on every arc and every question's arc (relation-docs-v3-sample.py's
    `excluded`): (a) no arc relation-docs-v1 or -v2 drew, reserve included; (b) not the reverse of
    one; (c) not an anchor-target pair of an earlier python-docs question, in either order;
  * qids are RD3xx (RD301...), unique (v2's RE rule, this set's numbers).
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


rd2c = _load("relation_docs_v2_check", "relation-docs-v2-check.py")
rd1c = rd2c.rd1c
smp = _load("relation_docs_v3_sample", "relation-docs-v3-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-docs-v3.jsonl"
ARCS = HERE / "relation-docs-v3-arcs.jsonl"
SKIPS = HERE / "relation-docs-v3-skips.json"
# relation-docs-v1's checks (as v2's check holds them), pointed at this set: sampler, seed, files
rd1c.smp = smp
rd1c.SEED = rd1c.rc1.SEED = SEED
rd1c.QUESTIONS, rd1c.ARCS, rd1c.SKIPS = QUESTIONS, ARCS, SKIPS
split_of = rd1c.split_of
WHY = {"a": "was drawn by relation-docs-v1 or -v2", "b": "is the reverse of an arc relation-docs-v1 or -v2 drew",
       "c": "joins the anchor and a target of an earlier python-docs question"}


def check_qids(rows: list[dict]) -> list[str]:
    """Failures: a qid outside RD3xx, or one used twice."""
    seen: set[str] = set()
    bad = []
    for r in rows:
        qid = r.get("qid")
        if not (isinstance(qid, str) and re.fullmatch(r"RD3\d\d", qid)) or qid in seen:
            bad.append(f"{qid}: bad or duplicate qid (v3 qids are RD3xx)")
        seen.add(qid)
    return bad


def check_exclusions(rows: list[dict], arcs: list[dict]) -> list[str]:
    """Failures: an arc, or a question's arc, under v3's exclusions (a), (b) or (c)."""
    by_pos = {a["position"]: a for a in arcs}
    bad = [f"arc {a['position']}: {WHY[why]} ({why})" for a in arcs if (why := smp.excluded(a["source"], a["target"]))]
    for r in rows:
        a = by_pos.get(r.get("arc"))
        if a is not None and (why := smp.excluded(a["source"], a["target"])):
            bad.append(f"{r.get('qid')}: arc {a['position']} {WHY[why]} ({why})")
    return bad


def check(rows: list[dict], arcs: list[dict], skips: dict[str, str]) -> list[str]:
    """relation-docs-v1's failures (through v2's check module; its qid rule swapped for RD3xx), then
    v3's exclusions in place of v2's page disjointness."""
    v1_qid = {f"{r.get('qid')}: bad or duplicate qid" for r in rows}
    bad = [x for x in rd2c._v1_check(rows, arcs, skips) if x not in v1_qid]
    return check_qids(rows) + bad + check_exclusions(rows, arcs)


rd1c.check = check


def main(argv: list[str]) -> int:
    return rd2c.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
