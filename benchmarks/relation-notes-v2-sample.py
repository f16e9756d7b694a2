"""Seeded sample of link arcs for relation-notes-v2 (run once, before any question was written and
before any retrieval over these arcs): a second held-out set for the relation lane's notes profile
on the obsidian-hub vault, after relation-notes-v1's test split was spent.

    python benchmarks/relation-notes-v2-sample.py     # writes benchmarks/relation-notes-v2-arcs.jsonl

relation-notes-v1-sample.py's rules (imported: its vault parsers, word minimums and per-source
cap), with a new seed and these exclusions: neither end of an arc is a note of a **dev** relation
question of notes-v1 (where the notes profile was chosen) or of relation-notes-v1 (where the in-link
lexicon was chosen), and no arc of either set (notes-v1's 50 arcs, relation-notes-v1's 84, reserve
included) is drawn again. Notes of their test questions may return in new arcs: nothing was chosen
on them. (Excluding every note of both sets' arcs leaves no candidate arc at all: 497 candidates,
every one touching a note of relation-notes-v1.) Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked so that a note
is the target of at most one arc, the source of at most MAX_PER_SOURCE, never both: N_ARCS arcs,
then N_RESERVE reserve arcs used in order only for an arc skipped (with a reason) in
relation-notes-v2-skips.json. Position i asks `relation-in` (anchor B, target A) when i is odd,
else `relation-out` (anchor A, target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("relation_notes_v1_sample", HERE / "relation-notes-v1-sample.py")
rn1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn1)
nv1 = rn1.nv1

SEED = 4344
N_ARCS, N_RESERVE = 60, 7
MAX_PER_SOURCE = rn1.MAX_PER_SOURCE
OUT = HERE / "relation-notes-v2-arcs.jsonl"
RN1_ARCS = HERE / "relation-notes-v1-arcs.jsonl"
DEV_SETS = (HERE / "notes-v1.jsonl", HERE / "relation-notes-v1.jsonl")


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def used_before() -> set[str]:
    """Every anchor and target of a dev relation question of notes-v1 and relation-notes-v1."""
    return {n for path in DEV_SETS for q in _rows(path) if q["split"] == "dev" and q["kind"].startswith("relation")
            for n in (q["anchor"], *(t["doc"] for t in q["targets"]))}


def arcs_before() -> set[tuple[str, str]]:
    """Every arc (source, target) notes-v1 and relation-notes-v1 sampled, reserve included."""
    rows = [r for r in _rows(rn1.NV1_TARGETS) if r["kind"] == "arc"] + _rows(RN1_ARCS)
    return {(r["source"], r["target"]) for r in rows}


def candidate_arcs(docs: dict[str, list[str]], skip: set[str]) -> list[dict]:
    """relation-notes-v1's candidate arcs (its rules, see its docstring) among notes not in `skip`."""
    by_stem: dict[str, list[str]] = {}
    for rel in docs:
        by_stem.setdefault(Path(rel).stem.lower(), []).append(rel)

    def usable(rel: str) -> bool:
        return rel.split("/")[0] not in ("CONTRIBUTING.md", "README.md") and not nv1.hub_listing(rel, docs[rel])

    sources = {a for a in docs if usable(a) and a not in skip and nv1.hub_body_words(docs[a]) >= rn1.MIN_WORDS_SOURCE}
    targets = {b for b in docs if usable(b) and b not in skip and nv1.hub_body_words(docs[b]) >= rn1.MIN_WORDS_TARGET}
    arcs = []
    for a in sorted(sources):
        seen = set()
        for i, text, code in nv1.visible_lines(docs[a]):
            if code or nv1.TEMPLATE_LINE.match(text):
                continue
            for m in nv1.WIKILINK.finditer(text):
                if m.group(1):
                    continue
                b = nv1.resolve_link(m.group(2), by_stem)
                if b and b != a and b in targets and b not in seen:
                    seen.add(b)
                    arcs.append({"kind": "arc", "collection": "obsidian-hub", "source": a, "target": b,
                                 "link": m.group(0), "line": i + 1})
    return arcs


def main() -> int:
    rng = random.Random(SEED)
    docs = nv1.hub_docs()
    skip = used_before()
    old = arcs_before()
    arcs = [a for a in candidate_arcs(docs, skip) if (a["source"], a["target"]) not in old]
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
    print(f"{len(arcs)} candidate arcs -> {len(picked)} (incl. {N_RESERVE} reserve); {len(skip)} notes of "
          f"dev relation questions of notes-v1 and relation-notes-v1, {len(old)} earlier arcs not drawn again", file=sys.stderr)
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
