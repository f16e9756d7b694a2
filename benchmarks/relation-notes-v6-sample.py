"""Seeded sample of link arcs for relation-notes-v6 (run once, before any question was written and
before any retrieval over these arcs): a sixth held-out set for the relation lane's notes profile
on the obsidian-hub vault.

    python benchmarks/relation-notes-v6-sample.py     # writes benchmarks/relation-notes-v6-arcs.jsonl

relation-notes-v5-sample.py's rules (imported: relation-notes-v1's candidate rules through v2's
`candidate_arcs`, the per-source cap, v4's and v5's exclusions), with a new seed and relation-notes-v5
added to the sets whose arcs are excluded. As in v4 and v5, notes of earlier questions (either split)
MAY be ends of a v6 arc; what stays excluded is every arc an earlier question could have taught
something about:
  (a) every arc drawn by notes-v1, relation-notes-v1 to -v4 (v5's list) or relation-notes-v5 (70),
      reserve included;
  (b) the reverse of any such arc (B -> A when A -> B was drawn);
  (c) any arc whose two ends were both ends of one earlier question, in either order (its anchor and
      one of its targets; every question with an anchor of notes-v1 and relation-notes-v1 to -v5,
      both splits).
Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked so that a note is the target
of at most one arc, the source of at most MAX_PER_SOURCE, never both: N_ARCS arcs, then N_RESERVE
reserve arcs used in order only for an arc skipped (with a reason) in relation-notes-v6-skips.json.
Position i asks `relation-in` (anchor B, target A) when i is odd, else `relation-out` (anchor A,
target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("relation_notes_v5_sample", HERE / "relation-notes-v5-sample.py")
rn5 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn5)
rn2 = rn5.rn2
nv1 = rn5.nv1

SEED = 6607
N_ARCS, N_RESERVE = 60, 10
MAX_PER_SOURCE = rn5.MAX_PER_SOURCE
OUT = HERE / "relation-notes-v6-arcs.jsonl"
RN5_ARCS = HERE / "relation-notes-v5-arcs.jsonl"
RN5_QUESTIONS = HERE / "relation-notes-v5.jsonl"


def arcs_before() -> set[tuple[str, str]]:
    """(a) Every arc (source, target) notes-v1 and relation-notes-v1 to -v5 sampled, reserve included."""
    return rn5.arcs_before() | {(r["source"], r["target"]) for r in rn2._rows(RN5_ARCS)}


def pairs_asked() -> set[frozenset[str]]:
    """(c) {anchor, target} of every earlier question with an anchor (six sets, both splits)."""
    return rn5.pairs_asked() | {frozenset((q["anchor"], t["doc"])) for q in rn2._rows(RN5_QUESTIONS)
                                if q.get("anchor") for t in q["targets"] if t["doc"] != q["anchor"]}


def excluded(source: str, target: str) -> str | None:
    """Which of v6's exclusions (a), (b), (c) the arc source -> target falls under, else None."""
    old = arcs_before()
    if (source, target) in old:
        return "a"
    if (target, source) in old:
        return "b"
    if frozenset((source, target)) in pairs_asked():
        return "c"
    return None


def main() -> int:
    rng = random.Random(SEED)
    docs = nv1.hub_docs()
    old, asked = arcs_before(), pairs_asked()
    every = rn2.candidate_arcs(docs, set())
    arcs = [a for a in every if (a["source"], a["target"]) not in old and (a["target"], a["source"]) not in old
            and frozenset((a["source"], a["target"])) not in asked]
    n_cand = len(arcs)
    rng.shuffle(arcs)
    n_out: dict[str, int] = {}
    used_t, picked = set(), []
    for arc in arcs:
        a, b = arc["source"], arc["target"]
        if n_out.get(a, 0) >= MAX_PER_SOURCE or b in used_t or b in n_out or a in used_t:
            continue
        n_out[a] = n_out.get(a, 0) + 1
        used_t.add(b)
        picked.append(arc)
        if len(picked) == N_ARCS + N_RESERVE:
            break
    print(f"{len(every)} arcs under v1's rules, {n_cand} candidates after (a) {len(old)} earlier arcs, (b) their "
          f"reverses and (c) {len(asked)} anchor-target pairs of earlier questions -> {len(picked)} picked "
          f"(incl. {max(0, len(picked) - N_ARCS)} reserve)", file=sys.stderr)
    with OUT.open("w", encoding="utf-8") as f:
        for j, arc in enumerate(picked):
            arc["position"] = j
            arc["reserve"] = j >= N_ARCS
            arc["ask"] = "relation-in" if j % 2 else "relation-out"
            f.write(json.dumps(arc, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
