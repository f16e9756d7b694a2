"""Seeded sample of link arcs for relation-notes-v1 (run once, before any question was written and
before any retrieval over these arcs): a held-out set for the relation lane on the obsidian-hub
vault, disjoint from every note notes-v1's arcs use (its 40 arcs and 10 reserve arcs, both ends).

    python benchmarks/relation-notes-v1-sample.py     # writes benchmarks/relation-notes-v1-arcs.jsonl

Reads the vault with notes-v1-sample.py's parsers (visible lines, wikilinks, names, listings).
An arc A -> B: a non-embed [[wikilink]] in A's visible text (outside code, comments, the hub
footer and template lines), resolved by file name, where
  * A is not README/CONTRIBUTING, not a listing page (notes-v1's rule) and has >= 15 body words
    (notes-v1's count), so it says why it links;
  * B is not A, not README/CONTRIBUTING, not a listing page, and has >= 5 body words (so its role
    can be described without its name);
  * neither end is a note of any notes-v1 arc (relation questions, reserve included).
Candidates sorted (A, line, B), shuffled by random.Random(SEED); picked in that order so that a
note is the target of at most one picked arc, the source of at most MAX_PER_SOURCE, never both
(the split goes by source note, so no note is in both splits): N_ARCS arcs, then N_RESERVE reserve arcs used in
order only for an arc skipped (with a reason) in relation-notes-v1-skips.json. Position i asks
`relation-in` (anchor B, target A) when i is odd, else `relation-out` (anchor A, target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("notes_v1_sample", HERE / "notes-v1-sample.py")
nv1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nv1)

SEED = 4343
N_ARCS, N_RESERVE = 70, 14
MIN_WORDS_TARGET = 5
MIN_WORDS_SOURCE = 15
MAX_PER_SOURCE = 2
OUT = HERE / "relation-notes-v1-arcs.jsonl"
NV1_TARGETS = HERE / "notes-v1-targets.jsonl"


def used_by_notes_v1() -> set[str]:
    rows = [json.loads(x) for x in NV1_TARGETS.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r[k] for r in rows if r["kind"] == "arc" for k in ("source", "target")}


def main() -> int:
    rng = random.Random(SEED)
    docs = nv1.hub_docs()
    skip = used_by_notes_v1()
    by_stem: dict[str, list[str]] = {}
    for rel in docs:
        by_stem.setdefault(Path(rel).stem.lower(), []).append(rel)

    def usable(rel: str) -> bool:
        return rel.split("/")[0] not in ("CONTRIBUTING.md", "README.md") and not nv1.hub_listing(rel, docs[rel])

    sources = {a for a in docs if usable(a) and a not in skip and nv1.hub_body_words(docs[a]) >= MIN_WORDS_SOURCE}
    targets = {b for b in docs if usable(b) and b not in skip and nv1.hub_body_words(docs[b]) >= MIN_WORDS_TARGET}
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
    print(f"{len(sources)} sources, {len(targets)} targets, {len(arcs)} candidate arcs -> {len(picked)} "
          f"(incl. {N_RESERVE} reserve); {len(skip)} notes-v1 arc notes excluded", file=sys.stderr)
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
