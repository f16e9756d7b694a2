"""Seeded sample of link arcs for relation-notes-v3 (run once, before any question was written and
before any retrieval over these arcs): a third held-out set for the relation lane's notes profile
on the obsidian-hub vault, after relation-notes-v2's test split was spent.

    python benchmarks/relation-notes-v3-sample.py     # writes benchmarks/relation-notes-v3-arcs.jsonl

relation-notes-v2-sample.py's rules (imported: relation-notes-v1's vault parsers, word minimums and
per-source cap, through v2's `candidate_arcs`), with a new seed and these exclusions: neither end of
an arc is a note of a **dev** relation question of notes-v1, relation-notes-v1 or relation-notes-v2
(where the notes profile, the in-link lexicon and the subject rule were chosen or tried), and no arc
of notes-v1 (50 arcs), relation-notes-v1 (84) or relation-notes-v2 (67), reserve included, is drawn
again. Notes of their test questions may return in new arcs: nothing was chosen on them. No rule of
v1 or v2 is relaxed, so the pool is small: 65 candidate arcs (26 source notes, 52 target notes), of
which the pick rules below keep 25, fewer than N_ARCS, so there is no reserve and a skipped arc is
not replaced. (Allowing notes of relation-notes-v2's dev questions would give 168 candidates;
dropping every dev-note exclusion, 683.) Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked so that
a note is the target of at most one arc, the source of at most MAX_PER_SOURCE, never both: N_ARCS
arcs, then N_RESERVE reserve arcs used in order only for an arc skipped (with a reason) in
relation-notes-v3-skips.json. Position i asks `relation-in` (anchor B, target A) when i is odd, else
`relation-out` (anchor A, target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("relation_notes_v2_sample", HERE / "relation-notes-v2-sample.py")
rn2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn2)
nv1 = rn2.nv1

SEED = 5357
N_ARCS, N_RESERVE = 60, 10
MAX_PER_SOURCE = rn2.MAX_PER_SOURCE
OUT = HERE / "relation-notes-v3-arcs.jsonl"
RN2_ARCS = HERE / "relation-notes-v2-arcs.jsonl"
DEV_SETS = (*rn2.DEV_SETS, HERE / "relation-notes-v2.jsonl")


def used_before() -> set[str]:
    """Every anchor and target of a dev relation question of notes-v1, relation-notes-v1 and -v2."""
    return {n for path in DEV_SETS for q in rn2._rows(path) if q["split"] == "dev" and q["kind"].startswith("relation")
            for n in (q["anchor"], *(t["doc"] for t in q["targets"]))}


def arcs_before() -> set[tuple[str, str]]:
    """Every arc (source, target) notes-v1, relation-notes-v1 and relation-notes-v2 sampled, reserve included."""
    return rn2.arcs_before() | {(r["source"], r["target"]) for r in rn2._rows(RN2_ARCS)}


def main() -> int:
    rng = random.Random(SEED)
    docs = nv1.hub_docs()
    skip = used_before()
    old = arcs_before()
    arcs = [a for a in rn2.candidate_arcs(docs, skip) if (a["source"], a["target"]) not in old]
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
    print(f"{len(arcs)} candidate arcs -> {len(picked)} (incl. {max(0, len(picked) - N_ARCS)} reserve); {len(skip)} "
          f"notes of dev relation questions of notes-v1, relation-notes-v1 and relation-notes-v2, {len(old)} earlier "
          f"arcs not drawn again", file=sys.stderr)
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
