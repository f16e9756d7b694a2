"""Which method, and which passage rule, on a user's folder of documents? notes-v1 **dev** only.

    python bench/collection.py [--collection obsidian-hub|python-docs|all] [--split dev] [--json OUT]

Indexes each collection as `sidelight index FOLDER --dense minilm` does (section windows; the
vectors cached by the lab's dense cache), and a second time with whole-document vectors only (the
first 256 wordpieces, what a record per note gave before). For every method and setting it
reports, over the split's questions: document-level MRR@10 and hit@3 (a target document in the
top 3), and section@3: for questions with a target section, whether a top-3 hit's best passage
(`index.passages`) is that section (or inside it). Selection happens here, on dev; the test split
is scored once by the lab (`protocols/notes-v1-*.json`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import print_table, write_json  # noqa: E402

from sidelight.config import data_dir  # noqa: E402
from sidelight.corpus.folder import load_folder  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.index.passages import PassageSettings, with_passages  # noqa: E402
from sidelight.lab.densecache import dense_store  # noqa: E402
from sidelight.structures.dense import Passages  # noqa: E402

COLLECTIONS = {"obsidian-hub": lambda: data_dir() / "obsidian-hub",
               "python-docs": lambda: Path("/usr/share/doc/python3.11/html")}
EXCLUDE = {"python-docs": ("_sources/",)}  # Sphinx's copies of the pages' reST sources
QUESTIONS = HERE.parent / "benchmarks" / "notes-v1.jsonl"
SETTINGS = [("bm25", {}), ("dense", {}), ("rrf", {}), ("best", {})] + [
    ("hybrid-linear", {"alpha": a, "norm": n}) for a in (0.3, 0.5, 0.7) for n in ("minmax", "zscore")]


def norm(h: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", h.lower()).strip()


def section_hit(passage, target: list[str]) -> bool:
    """The passage is the target section or one inside it (its heading path holds the target's heading)."""
    return passage is not None and norm(target[-1]) in {norm(h) for h in passage.section.split(" > ")}


def first_target(index: Index, q: dict, method: str, params: dict) -> tuple[list, int | None]:
    """The question's top 10 hits (the note it names dropped) and the rank of its first target document."""
    hits = index.search(q["query"], method, 10, **params)
    if q.get("anchor"):
        hits = [h for h in hits if h.id != q["anchor"]]
    docs = {t["doc"] for t in q["targets"]}
    return hits, next((i + 1 for i, h in enumerate(hits) if h.id in docs), None)


def score(index: Index, questions: list[dict], method: str, params: dict, mix: float | None) -> dict:
    rr, hit3, sec, n_sec = [], [], 0, 0
    for q in questions:
        hits, rank = first_target(index, q, method, params)
        rr.append(1 / rank if rank else 0.0)
        hit3.append(bool(rank and rank <= 3))
        targets = [t for t in q["targets"] if t.get("section")]
        if targets and mix is not None:
            n_sec += 1
            top = [h for h in hits[:3] if h.id in {t["doc"] for t in targets}]
            shown = with_passages(index, top, q["query"], PassageSettings(mix=mix))
            sec += any(section_hit(h.passage, t["section"]) for h in shown for t in targets if t["doc"] == h.id)
    n = len(questions)
    return {"mrr@10": sum(rr) / n, "hit@3": sum(hit3) / n, "section@3": sec / n_sec if n_sec else None,
            "n": n, "n_section": n_sec}


def build(name: str, windows: bool) -> Index:
    folder = COLLECTIONS[name]()
    cache = HERE.parent / ".cache" / "bench-collection" / f"{name}-{'sections' if windows else 'whole'}"
    if cache.is_dir():
        return Index.load(cache)
    corpus = load_folder(folder, EXCLUDE.get(name, ()))
    print(corpus.report.summary(), file=sys.stderr)
    dense, _ = dense_store(corpus, "minilm", progress=True,
                           passages=Passages(64, sections=True) if windows else None)
    return Index.write(corpus, cache, dense=dense, progress=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection", default="all", choices=[*COLLECTIONS, "all"])
    ap.add_argument("--split", default="dev", choices=["dev"], help="dev only: test is the lab's, scored once")
    ap.add_argument("--json", default="bench/results/collection.json")
    args = ap.parse_args()
    names = list(COLLECTIONS) if args.collection == "all" else [args.collection]
    rows, out = [], {"split": args.split, "results": {}}
    all_q = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for name in names:
        questions = [q for q in all_q if q["collection"] == name and q["split"] == args.split]
        for windows in (False, True):
            index = build(name, windows)
            for method, params in SETTINGS:
                t = time.perf_counter()
                for mix in ([None] if not windows else [1.0, 0.5, 0.0]):
                    r = score(index, questions, method, params, mix if windows else 1.0)
                    label = method + "".join(f" {k}={v}" for k, v in params.items())
                    variant = "sections" if windows else "whole"
                    key = f"{name} | {variant} | {label}" + (f" | mix={mix}" if mix is not None else "")
                    out["results"][key] = r
                    rows.append([name, variant, label, "-" if mix is None else mix, f"{r['mrr@10']:.3f}",
                                 f"{r['hit@3']:.3f}", "-" if r["section@3"] is None else f"{r['section@3']:.3f}",
                                 r["n"]])
                print(f"{name} {method} {params}: {time.perf_counter() - t:.1f}s", file=sys.stderr)
    print_table(["collection", "vectors", "method", "passage mix", "MRR@10", "hit@3", "section@3", "n"], rows)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
