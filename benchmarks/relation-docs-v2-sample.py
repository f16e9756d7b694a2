"""Seeded sample of link arcs for relation-docs-v2 (run once, before any question was written and
before any retrieval over these arcs): a second held-out set for the relation lane on the Python 3.11
HTML documentation, after relation-docs-v1's questions were written and scored.

    python benchmarks/relation-docs-v2-sample.py     # writes benchmarks/relation-docs-v2-arcs.jsonl

relation-docs-v1-sample.py's rules, imported unchanged (the corpus as the lab reads it, PY_SKIP pages,
hubs, MIN_WORDS, MIN_WORDS_SENTENCE, one arc per (A, B), MAX_PER_SOURCE, the pick rules and the
`ask` alternation), with a new seed and wider exclusions: neither end of an arc is
  * a page of a dev python-docs question of notes-v1 (relation-docs-v1's `used_before`), or
  * a page of any arc relation-docs-v1 drew (all 70: its 60 arcs, the skipped one included, and its
    10 reserve arcs, the one asked and the 9 never asked), whatever the split of its question;
and no arc relation-docs-v1 drew (reserve included) is drawn again (implied by the page rule, kept
as its own filter so the check can name it). No rule of v1 is relaxed, so the pool is small: 117
candidate arcs (76 source pages, 78 target pages), of which the pick rules keep 57, fewer than N_ARCS,
so there is no reserve and a skipped arc is not replaced. (Excluding only the pages of the 61 arcs
relation-docs-v1 asked or skipped, not its 9 unused reserve arcs, would give 146 candidates.)
Candidates sorted (A, line, B), shuffled by
random.Random(SEED); picked so that a page is the target of at most one arc, the source of at most
MAX_PER_SOURCE, never both: N_ARCS arcs, then N_RESERVE reserve arcs used in order only for an arc
skipped (with a reason) in relation-docs-v2-skips.json. Position i asks `relation-in` (anchor B,
target A) when i is odd, else `relation-out` (anchor A, target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("relation_docs_v1_sample", HERE / "relation-docs-v1-sample.py")
rd1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rd1)
nv1 = rd1.nv1

SEED = 7297
N_ARCS, N_RESERVE = rd1.N_ARCS, rd1.N_RESERVE
MAX_PER_SOURCE = rd1.MAX_PER_SOURCE
COLL = rd1.COLL
OUT = HERE / "relation-docs-v2-arcs.jsonl"
RD1_ARCS = HERE / "relation-docs-v1-arcs.jsonl"
load = rd1.load


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def arcs_before() -> set[tuple[str, str]]:
    """Every arc (source, target) relation-docs-v1 drew, reserve included."""
    return {(r["source"], r["target"]) for r in _rows(RD1_ARCS)}


def used_before() -> set[str]:
    """Pages of dev python-docs questions of notes-v1, and both ends of every relation-docs-v1 arc."""
    return rd1.used_before() | {p for arc in arcs_before() for p in arc}


def candidate_arcs(corpus, skip: set[str]) -> list[dict]:
    """relation-docs-v1's candidates over `skip`, less the arcs relation-docs-v1 drew."""
    old = arcs_before()
    return [a for a in rd1.candidate_arcs(corpus, skip) if (a["source"], a["target"]) not in old]


def main() -> int:
    rng = random.Random(SEED)
    corpus = load()
    skip = used_before()
    arcs = candidate_arcs(corpus, skip)
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
    print(f"{len(corpus.records)} records, {n_cand} candidate arcs -> {len(picked)} "
          f"(incl. {max(0, len(picked) - N_ARCS)} reserve); {len(skip)} pages excluded (dev python-docs "
          f"questions of notes-v1, every relation-docs-v1 arc), {len(arcs_before())} relation-docs-v1 arcs "
          f"not drawn again", file=sys.stderr)
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
