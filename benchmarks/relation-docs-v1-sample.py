"""Seeded sample of link arcs for relation-docs-v1 (run once, before any question was written and
before any retrieval over these arcs): a held-out set for the relation lane on a second collection,
the Python 3.11 HTML documentation, read as the lab reads it (protocols/notes-v1-python.json's
corpus: source /usr/share/doc/python3.11/html, exclude ["_sources/"], sidelight.corpus.folder), so
record ids and link sentences are the ones the lab scores.

    python benchmarks/relation-docs-v1-sample.py     # writes benchmarks/relation-docs-v1-arcs.jsonl

An arc A -> B is a link occurrence in A's record (`metadata["links"]`, resolved as `load_folder`
resolves it) to a different record B, where
  * neither A nor B is a page notes-v1 left out of its python-docs sample (notes-v1-sample.py's
    PY_SKIP: index, genindex, search, glossary, contents, copyright, bugs, about, license, download,
    py-modindex, every */index.html, whatsnew/, includes/, changelog);
  * B is not a hub: linked from at most HUB_SHARE of the pages PY_SKIP keeps (edges of
    `load_folder`; the changelog and what's-new pages link to most pages, so counting them would
    make 320 of the 530 records hubs);
  * both pages have >= MIN_WORDS record words (notes-v1's 150 for python-docs), so the source says
    why it links and the target's role can be told without its name;
  * the link's sentence (the reader's `context`) has >= MIN_WORDS_SENTENCE words and is not B's title
    (a table-of-contents entry gives B no role to ask by);
  * neither end is a page of a **dev** python-docs question of notes-v1 (where notes-v1-python's
    methods were chosen; notes-v1 has no python-docs relation question and drew no python-docs arc,
    so this is the adaptation of relation-notes-v2's exclusion to this collection).
One arc per (A, B): the first qualifying link occurrence. Candidates sorted (A, line, B), shuffled by
random.Random(SEED); picked in that order so that a page is the target of at most one picked arc,
the source of at most MAX_PER_SOURCE, never both (the split goes by source page, so no page is in
both splits): N_ARCS arcs, then N_RESERVE reserve arcs used in order only for an arc skipped (with a
reason) in relation-docs-v1-skips.json. Position i asks `relation-in` (anchor B, target A) when i is
odd, else `relation-out` (anchor A, target B).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("notes_v1_sample", HERE / "notes-v1-sample.py")
nv1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nv1)

SEED = 6163
N_ARCS, N_RESERVE = 60, 10
MIN_WORDS = nv1.MIN_WORDS_PY
MIN_WORDS_SENTENCE = 10
HUB_SHARE = 0.02
MAX_PER_SOURCE = 2
COLL = "python-docs"
PROTOCOL = HERE.parent / "protocols" / "notes-v1-python.json"
OUT = HERE / "relation-docs-v1-arcs.jsonl"
NOTES_V1 = HERE / "notes-v1.jsonl"


def corpus_spec() -> tuple[str, list[str]]:
    """The folder and exclude globs of notes-v1-python's corpus, reused exactly."""
    spec = json.loads(PROTOCOL.read_text(encoding="utf-8"))["corpus"]
    return spec["source"], list(spec["exclude"])


def load():
    from sidelight.corpus.folder import load_folder
    source, exclude = corpus_spec()
    return load_folder(source, exclude)


def used_before() -> set[str]:
    """Every page of a dev python-docs question of notes-v1 (target or anchor)."""
    rows = [json.loads(x) for x in NOTES_V1.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {d for q in rows if q["collection"] == COLL and q["split"] == "dev"
            for d in ((q["anchor"],) if q["anchor"] else ()) + tuple(t["doc"] for t in q["targets"])}


def hubs(corpus) -> set[str]:
    """Records linked from more than HUB_SHARE of the pages PY_SKIP keeps (counting those pages only)."""
    into: dict[str, set[str]] = defaultdict(set)
    for e in corpus.edges:
        if e.source != e.target and not nv1.PY_SKIP.search(e.source):
            into[e.target].add(e.source)
    cap = HUB_SHARE * sum(1 for r in corpus.records if not nv1.PY_SKIP.search(r.id))
    return {b for b, srcs in into.items() if len(srcs) > cap}


def candidate_arcs(corpus, skip: set[str]) -> list[dict]:
    from sidelight.corpus.links import Resolver
    recs = {r.id: r for r in corpus.records}
    resolver = Resolver(recs)
    hub = hubs(corpus)

    def usable(rid: str) -> bool:
        return (not nv1.PY_SKIP.search(rid) and rid not in skip
                and len(recs[rid].text.split()) >= MIN_WORDS)

    arcs = []
    for a in sorted(recs):
        if not usable(a):
            continue
        seen = set()
        for link in recs[a].metadata.get("links", ()):
            b, _ = resolver.resolve(a, link)
            if b is None or b == a or b in seen or b in hub or not usable(b) or link.get("kind") == "embed":
                continue
            ctx = " ".join(str(link.get("context", "")).split())
            title = recs[b].title.split(" — Python")[0].strip()
            if len(ctx.split()) < MIN_WORDS_SENTENCE or ctx == title:
                continue
            seen.add(b)
            arcs.append({"kind": "arc", "collection": COLL, "source": a, "target": b,
                         "href": link["target"] + (f"#{link['anchor']}" if link.get("anchor") else ""),
                         "line": link["line"], "context": ctx})
    arcs.sort(key=lambda x: (x["source"], x["line"], x["target"]))
    return arcs


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
    print(f"{len(corpus.records)} records, {len(hubs(corpus))} hubs, {n_cand} candidate arcs -> {len(picked)} "
          f"(incl. {N_RESERVE} reserve); {len(skip)} pages of dev python-docs questions of notes-v1 excluded",
          file=sys.stderr)
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
