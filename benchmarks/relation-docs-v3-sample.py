"""Seeded sample of link arcs for relation-docs-v3 (run once, before any question was written and
before any retrieval over these arcs): a third held-out set for the relation lane on the Python 3.11
HTML documentation, after relation-docs-v2's questions were written and scored.

    python benchmarks/relation-docs-v3-sample.py     # writes benchmarks/relation-docs-v3-arcs.jsonl

**v2's page exclusion is relaxed here.** v2's rule carried one step further (relation-docs-v2-sample.py's
exclusions plus every page of any relation-docs-v2 arc at either end, no v1 or v2 arc drawn again)
leaves **0** candidate arcs: each of v2's 117 candidates touches a page of a v2 arc
(`strict_candidates`, counted on every run). So, as relation-notes-v4 did for the vault, pages of
earlier sets MAY be ends of a v3 arc (pages of relation-docs-v1 and -v2 arcs, of notes-v1's dev
python-docs questions): the lane's hub damping 0.15 was chosen on relation dev questions,
relation-docs-v1's among them, so v3 is held out in its arcs, not in its pages (all 60 questions
touch a page of an earlier set; 59 a page of a v1 or v2 arc). What stays excluded is every arc an
earlier question could have taught something about:
  (a) every arc drawn by relation-docs-v1 (70) or -v2 (57), reserve included;
  (b) the reverse of any such arc (B -> A when A -> B was drawn);
  (c) any arc whose two ends were both ends of one earlier question, in either order (its anchor and
      one of its targets; every python-docs question with an anchor of notes-v1, relation-docs-v1
      and -v2, both splits; notes-v1 has none on this collection, and v1's and v2's pairs are arcs
      of (a), so (c) adds nothing today and is kept so the check can name it).
Everything else is relation-docs-v1-sample.py's candidate rules unchanged, imported through v2's
module (the corpus as the lab reads it, PY_SKIP pages, hubs, MIN_WORDS, MIN_WORDS_SENTENCE, one arc
per (A, B)): 646 arcs under those rules with no page excluded, of which 127 were drawn before and
10 are reverses of those, so 509 candidates after (a)-(c); the pick rules keep 70 (60 + 10 reserve).
Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked so that a page is the target
of at most one arc, the source of at most MAX_PER_SOURCE, never both: N_ARCS arcs, then N_RESERVE
reserve arcs used in order only for an arc skipped (with a reason) in relation-docs-v3-skips.json.
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
_spec = importlib.util.spec_from_file_location("relation_docs_v2_sample", HERE / "relation-docs-v2-sample.py")
rd2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rd2)
rd1 = rd2.rd1
nv1 = rd2.nv1

SEED = 6133
N_ARCS, N_RESERVE = rd1.N_ARCS, rd1.N_RESERVE
MAX_PER_SOURCE = rd1.MAX_PER_SOURCE
COLL = rd1.COLL
OUT = HERE / "relation-docs-v3-arcs.jsonl"
RD2_ARCS = HERE / "relation-docs-v2-arcs.jsonl"
QUESTION_SETS = (HERE / "notes-v1.jsonl", HERE / "relation-docs-v1.jsonl", HERE / "relation-docs-v2.jsonl")
load = rd1.load


def arcs_before() -> set[tuple[str, str]]:
    """(a) Every arc (source, target) relation-docs-v1 and -v2 drew, reserve included."""
    return rd2.arcs_before() | {(r["source"], r["target"]) for r in rd2._rows(RD2_ARCS)}


def pairs_asked() -> set[frozenset[str]]:
    """(c) {anchor, target} of every earlier python-docs question with an anchor (both splits)."""
    return {frozenset((q["anchor"], t["doc"])) for path in QUESTION_SETS for q in rd2._rows(path)
            if q["collection"] == COLL and q.get("anchor") for t in q["targets"] if t["doc"] != q["anchor"]}


def excluded(source: str, target: str) -> str | None:
    """Which of v3's exclusions (a), (b), (c) the arc source -> target falls under, else None."""
    old = arcs_before()
    if (source, target) in old:
        return "a"
    if (target, source) in old:
        return "b"
    if frozenset((source, target)) in pairs_asked():
        return "c"
    return None


def used_before() -> set[str]:
    """Pages no v3 arc may touch: none under the relaxed rule (pages may repeat; see the docstring)."""
    return set()


def candidate_arcs(corpus, skip: set[str]) -> list[dict]:
    """relation-docs-v1's candidates over `skip`, less the arcs under (a), (b) or (c)."""
    old, asked = arcs_before(), pairs_asked()
    return [a for a in rd1.candidate_arcs(corpus, skip)
            if (a["source"], a["target"]) not in old and (a["target"], a["source"]) not in old
            and frozenset((a["source"], a["target"])) not in asked]


def strict_candidates(corpus) -> list[dict]:
    """Candidates under v2's rule carried one step: no page of a v1 or v2 arc or of a dev notes-v1
    python-docs question, no v1 or v2 arc drawn again (0 on these docs: why the rule is relaxed)."""
    v2_pages = {p for arc in arcs_before() for p in arc}
    old = arcs_before()
    return [a for a in rd1.candidate_arcs(corpus, rd2.used_before() | v2_pages)
            if (a["source"], a["target"]) not in old]


def main() -> int:
    rng = random.Random(SEED)
    corpus = load()
    n_strict = len(strict_candidates(corpus))
    n_every = len(rd1.candidate_arcs(corpus, used_before()))
    arcs = candidate_arcs(corpus, used_before())
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
    print(f"{len(corpus.records)} records; {n_strict} candidate arcs under v2's page rule carried one step "
          f"(so relaxed); {n_every} arcs under v1's rules with no page excluded, {n_cand} candidates after "
          f"(a) {len(arcs_before())} earlier arcs, (b) their reverses and (c) {len(pairs_asked())} "
          f"anchor-target pairs of earlier questions -> {len(picked)} picked "
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
