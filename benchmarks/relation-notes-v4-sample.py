"""Seeded sample of link arcs for relation-notes-v4 (run once, before any question was written and
before any retrieval over these arcs): a fourth held-out set for the relation lane's notes profile
on the obsidian-hub vault.

    python benchmarks/relation-notes-v4-sample.py     # writes benchmarks/relation-notes-v4-arcs.jsonl

**One exclusion of v2 and v3 is relaxed here.** Under v3's exclusions the vault has no unseen link
left (v3 found 65 candidate arcs and used them all), so notes of earlier sets' **dev** questions MAY
now be ends of a v4 arc: the notes profile, the in-link lexicon, the subject rule, the name matching
and the hub damping were chosen on those questions, so v4 is held out in its arcs, not in its notes.
What stays excluded is every arc an earlier question could have taught something about:
  (a) every arc drawn by notes-v1 (50), relation-notes-v1 (84), -v2 (67) or -v3 (25), reserve
      included;
  (b) the reverse of any such arc (B -> A when A -> B was drawn);
  (c) any arc whose two ends were both ends of one earlier question, in either order (its anchor and
      one of its targets; every question with an anchor of notes-v1, relation-notes-v1, -v2, -v3,
      both splits).
Everything else is relation-notes-v1's candidate rules unchanged (imported through v2's
`candidate_arcs`: vault parsers, word minimums, no README/CONTRIBUTING, no listing page): 884 arcs
under those rules, 644 candidates after (a)-(c).
Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked so that a note is the target
of at most one arc, the source of at most MAX_PER_SOURCE, never both: N_ARCS arcs, then N_RESERVE
reserve arcs used in order only for an arc skipped (with a reason) in relation-notes-v4-skips.json.
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
_spec = importlib.util.spec_from_file_location("relation_notes_v3_sample", HERE / "relation-notes-v3-sample.py")
rn3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn3)
rn2 = rn3.rn2
nv1 = rn3.nv1

SEED = 8311
N_ARCS, N_RESERVE = 60, 10
MAX_PER_SOURCE = rn3.MAX_PER_SOURCE
OUT = HERE / "relation-notes-v4-arcs.jsonl"
RN3_ARCS = HERE / "relation-notes-v3-arcs.jsonl"
QUESTION_SETS = (HERE / "notes-v1.jsonl", HERE / "relation-notes-v1.jsonl", HERE / "relation-notes-v2.jsonl",
                 HERE / "relation-notes-v3.jsonl")


def arcs_before() -> set[tuple[str, str]]:
    """(a) Every arc (source, target) notes-v1 and relation-notes-v1 to -v3 sampled, reserve included."""
    return rn3.arcs_before() | {(r["source"], r["target"]) for r in rn2._rows(RN3_ARCS)}


def pairs_asked() -> set[frozenset[str]]:
    """(c) {anchor, target} of every earlier question with an anchor (all four sets, both splits)."""
    return {frozenset((q["anchor"], t["doc"])) for path in QUESTION_SETS for q in rn2._rows(path)
            if q.get("anchor") for t in q["targets"] if t["doc"] != q["anchor"]}


def excluded(source: str, target: str) -> str | None:
    """Which of v4's exclusions (a), (b), (c) the arc source -> target falls under, else None."""
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
