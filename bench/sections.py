"""Section-level BM25 on notes-v1 **dev**: which document score, and which section pick, name the right section?

    python bench/sections.py [--json bench/results/sections-dev.json]

For both collections (the indexes `bench/collection.py` builds: section windows, MiniLM), every
method of the grid ranks the dev questions' documents; reported: document MRR@10 and hit@3, and
section@3 (a top-3 target document whose picked section is the target section, or inside it;
pooled over both collections' section questions) for two section picks:

- `picker`: the hit's best passage as every interface shows it (`index.passages`, mix 0.5), and
- `global`: the section that scored best in the collection-wide section BM25 (`methods.sections`),
  mixed 50/50 with the section windows' cosine as the picker mixes them, and
- `parents`: the picker with each section read with its title and parent headings (the dense
  lane's window text), still scored within the document.

Selection happens here, on dev; the test split is the lab's, scored once.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import print_table, write_json  # noqa: E402
from collection import QUESTIONS, build, section_hit  # noqa: E402

from sidelight.corpus.passages import sections_of, window_texts  # noqa: E402
from sidelight.index.passages import PassageSettings, QueryTerms, section_cosines, with_passages  # noqa: E402
from sidelight.methods.sections import section_index  # noqa: E402

GRID = ([("bm25", {}), ("hybrid-linear", {"alpha": 0.3, "norm": "zscore"}), ("hybrid-linear", {"alpha": 0.5, "norm": "zscore"}), ("best", {})]
        + [("bm25-sections", {"mix": m}) for m in (0.0, 0.25, 0.5, 0.75)]
        + [("hybrid-sections", {"mix": m, "alpha": a, "norm": "zscore"}) for m in (0.25, 0.5, 0.75) for a in (0.3, 0.5, 0.7)])


class Pick:
    def __init__(self, section: str):
        self.section = section


def global_pick(index, position: int, query: str, units: np.ndarray, vector) -> Pick:
    """The record's section with the best 50/50 mix of collection-wide section BM25 (over its max in
    the record) and section-window cosine (min-max in the record), as `index.passages` mixes them."""
    record = index.corpus.records[position]
    sections = sections_of(record)
    si = section_index(index)
    mine = np.flatnonzero(si.owner == position)
    lex = np.zeros(len(sections))
    for u in mine:
        lex[min(si.section[u], len(sections) - 1)] = max(lex[min(si.section[u], len(sections) - 1)], units[u])
    score = lex / lex.max() if lex.max() > 0 else lex
    dense = section_cosines(index, position, vector, len(sections))
    if dense is not None:
        score = 0.5 * score + 0.5 * dense
    return Pick(sections[int(np.argmax(score))].path)


def parents_pick(index, position: int, terms: QueryTerms, vector) -> Pick:
    """`index.passages`' pick with each section read as the dense lane reads it (the document's title
    and the section's parent headings before its text), not its text alone."""
    record = index.corpus.records[position]
    sections = sections_of(record)
    texts = dict(window_texts(record))
    words = [[t for _, _, t in terms.words(texts.get(s.index, ""))] for s in sections]
    lex = terms.bm25(words)
    score = lex / lex.max() if lex.max() > 0 else np.zeros(len(sections))
    return Pick(sections[int(np.argmax(_with_dense(index, position, score, vector)))].path)


def _with_dense(index, position: int, score: np.ndarray, vector) -> np.ndarray:
    if vector is None:
        return score
    owned, cos = index.dense.window_cosines(position, vector)
    if not len(owned):
        return score
    best = np.full(len(score), -np.inf)
    np.maximum.at(best, np.minimum(owned, len(score) - 1), cos)
    seen = np.isfinite(best)
    lo, hi = best[seen].min(), best[seen].max()
    dense = np.where(seen, (best - lo) / (hi - lo) if hi > lo else 1.0, 0.0)
    return 0.5 * score + 0.5 * dense


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="bench/results/sections-dev.json")
    args = ap.parse_args()
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    totals: dict[str, dict] = {}
    for name in ("obsidian-hub", "python-docs"):
        index = build(name, True)
        qs = [q for q in questions if q["collection"] == name and q["split"] == "dev"]
        vectors = {q["qid"]: index.dense.encode_query(q["query"]) for q in qs}
        for method, params in GRID:
            label = method + "".join(f" {k}={v}" for k, v in params.items())
            t = totals.setdefault(label, {"rr": [], "hit3": [], "picker": 0, "global": 0, "parents": 0, "n_section": 0})
            for q in qs:
                hits = list(index.search(q["query"], method, 10, **params))
                if q.get("anchor"):
                    hits = [h for h in hits if h.id != q["anchor"]]
                docs = {x["doc"] for x in q["targets"]}
                ranks = [i + 1 for i, h in enumerate(hits) if h.id in docs]
                t["rr"].append(1 / ranks[0] if ranks else 0.0)
                t["hit3"].append(bool(ranks and ranks[0] <= 3))
                targets = [x for x in q["targets"] if x.get("section")]
                if not targets:
                    continue
                t["n_section"] += 1
                top = [h for h in hits[:3] if h.id in {x["doc"] for x in targets}]
                shown = with_passages(index, top, q["query"], PassageSettings(mix=0.5))
                t["picker"] += any(section_hit(h.passage, x["section"]) for h in shown for x in targets
                                   if x["doc"] == h.id)
                units = section_index(index).lexical.bm25_scores(q["query"])
                picks = [(h, global_pick(index, index.corpus.position[h.id], q["query"], units, vectors[q["qid"]]))
                         for h in top]
                t["global"] += any(section_hit(p, x["section"]) for h, p in picks for x in targets if x["doc"] == h.id)
                terms = QueryTerms(index, q["query"])
                picks = [(h, parents_pick(index, index.corpus.position[h.id], terms, vectors[q["qid"]])) for h in top]
                t["parents"] += any(section_hit(p, x["section"]) for h, p in picks for x in targets if x["doc"] == h.id)
            print(f"{name} {label}", file=sys.stderr)
    rows, out = [], {"split": "dev", "collections": ["obsidian-hub", "python-docs"], "results": {}}
    for label, t in totals.items():
        r = {"mrr@10": float(np.mean(t["rr"])), "hit@3": float(np.mean(t["hit3"])), "n": len(t["rr"]),
             "section@3 picker": t["picker"] / t["n_section"], "section@3 global": t["global"] / t["n_section"],
             "section@3 parents": t["parents"] / t["n_section"],
             "n_section": t["n_section"]}
        out["results"][label] = r
        rows.append([label, f"{r['mrr@10']:.3f}", f"{r['hit@3']:.3f}", f"{r['section@3 picker']:.3f}",
                     f"{r['section@3 global']:.3f}", f"{r['section@3 parents']:.3f}", r["n"], r["n_section"]])
    print_table(["method (dev, both collections)", "MRR@10", "hit@3", "section@3 picker", "section@3 global", "section@3 parents", "n",
                 "n section"], rows)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
