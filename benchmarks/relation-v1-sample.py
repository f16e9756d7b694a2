"""Draw the arcs of relation-v1 (seeded, before any question was written or any retrieval run).

Writes benchmarks/relation-v1-arcs.jsonl: one packet per arc with both records' texts, the edge
type and (FOLDOC) the sentence that makes the link. Question writers read these packets and
nothing else. Run once: `python benchmarks/relation-v1-sample.py`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from sidelight.corpus.foldoc import load_foldoc
from sidelight.corpus.wordnet import load_wordnet_nouns

SEED = 20261202
OUT = Path(__file__).with_name("relation-v1-arcs.jsonl")
N_FOLDOC = 96
#: WordNet noun arcs per edge type (stratified: hyponym/hypernym edges are most of the graph)
WORDNET_TYPES = {"hyponym": 10, "hypernym": 8, "instance-hyponym": 6, "instance-hypernym": 6,
                 "part-meronym": 8, "part-holonym": 6, "member-meronym": 6, "member-holonym": 5,
                 "substance-meronym": 5, "substance-holonym": 4, "antonym": 2}
#: extra arcs drawn after the first ones (positions past the quota). A writer may skip an arc only
#: with a written reason; the next unused reserve arc (WordNet: of the same edge type) takes its
#: place, its split and its form.
RESERVE = 0.25


def _words(text: str) -> int:
    return len(text.split())


def _packet(corpus: str, arc: str, i: int, edge, rec) -> dict:
    a, t = rec[edge.source], rec[edge.target]
    return {"arc": arc, "corpus": corpus, "position": i,
            "split": "dev" if i % 3 == 0 else "test",
            "form": "describes" if i % 4 == 3 else "names",
            "relation": edge.type, "context": edge.context,
            "anchor": {"id": a.id, "title": a.title, "aliases": list(a.aliases), "text": a.text},
            "target": {"id": t.id, "title": t.title, "aliases": list(t.aliases), "text": t.text}}


def foldoc_arcs(rng: random.Random) -> list[dict]:
    c = load_foldoc()
    rec = {r.id: r for r in c.records}
    ok = [e for e in c.edges if e.context and _words(rec[e.source].text) >= 12 and _words(rec[e.target].text) >= 12]
    n = N_FOLDOC + int(N_FOLDOC * RESERVE)
    seen, out = set(), []
    for e in rng.sample(ok, len(ok)):  # a seeded shuffle; one arc per anchor and per target
        if e.source in seen or e.target in seen:
            continue
        seen |= {e.source, e.target}
        out.append(e)
        if len(out) == n:
            break
    return [_packet("foldoc", f"RF{i + 1:03d}", i, e, rec) for i, e in enumerate(out)]


def wordnet_arcs(rng: random.Random) -> list[dict]:
    c = load_wordnet_nouns()
    rec = {r.id: r for r in c.records}
    by_type: dict[str, list] = {}
    for e in c.edges:
        if e.type in WORDNET_TYPES and _words(rec[e.source].text) >= 4 and _words(rec[e.target].text) >= 4:
            by_type.setdefault(e.type, []).append(e)
    picked = []
    for ty, n in WORDNET_TYPES.items():
        picked += [(ty, e) for e in rng.sample(by_type[ty], n + max(1, int(n * RESERVE)))]
    # the first n of each type are the arcs, the rest the reserve; interleave by a seeded shuffle
    first, reserve = [], []
    counts: dict[str, int] = {}
    for ty, e in picked:
        counts[ty] = counts.get(ty, 0) + 1
        (first if counts[ty] <= WORDNET_TYPES[ty] else reserve).append(e)
    rng.shuffle(first)
    rng.shuffle(reserve)
    return [_packet("wordnet", f"RW{i + 1:03d}", i, e, rec) for i, e in enumerate(first + reserve)]


def main() -> None:
    rng = random.Random(SEED)
    packets = foldoc_arcs(rng) + wordnet_arcs(rng)
    with open(OUT, "w", encoding="utf-8") as f:
        for p in packets:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"{len(packets)} arcs -> {OUT}")


if __name__ == "__main__":
    main()
