"""The relation lane's weights on every relation **dev** question of two collections (issue 43).

    python bench/relation_dev_grid.py [--vary name=v1,v2,... ...] [--set name=v ...] [--json OUT]

Questions: the relation questions (relation-out, relation-in) of the dev splits of notes-v1 (whose
vault questions chose the notes profile), relation-notes-v1 to -v4 (the Obsidian hub vault) and
relation-docs-v1 and -v2 (the Python 3.11 docs); their test splits are the lab's, scored once. Indexes: the
section-window indexes bench/collection.py builds (cached). For the lane at its defaults (plus
`--set`), then with one parameter at a time changed to each value of its `--vary` list, the mean
reciprocal rank in the top 10 per collection (the note a question names dropped, as the lab does)
and their mean: a setting is worth keeping only if it helps on both collections.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import print_table, write_json  # noqa: E402

BENCH = HERE.parent / "benchmarks"
SETS = {"obsidian-hub": ("notes-v1", "relation-notes-v1", "relation-notes-v2", "relation-notes-v3", "relation-notes-v4"),
        "python-docs": ("notes-v1", "relation-docs-v1", "relation-docs-v2")}
VARY = ("text_weight=0.5,2,4", "dense_weight=1,4", "context_weight=0.5,2,4", "name_weight=1,4",
        "hub_damping=0,0.25,1", "hop_weight=0.5,2", "anchor_weight=1", "seed_weight=1", "hops=1")


def value(text: str) -> float | int | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse(pairs: list[str]) -> dict[str, list]:
    out = {}
    for pair in pairs:
        name, _, values = pair.partition("=")
        out[name] = [value(v) for v in values.split(",") if v]
    return out


def questions(collection: str) -> list[dict]:
    rows = [json.loads(line) for name in SETS[collection]
            for line in (BENCH / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in rows if q["split"] == "dev" and q["kind"].startswith("relation")
            and q.get("collection", collection) == collection]


def mrr(index, qs: list[dict], params: dict) -> tuple[float, list[float]]:
    per = []
    for q in qs:
        ids = [h.id for h in index.search(q["query"], "relation", 11, **params) if h.id != q.get("anchor")][:10]
        targets = {t["doc"] for t in q["targets"]}
        per.append(next((1 / (i + 1) for i, d in enumerate(ids) if d in targets), 0.0))
    return sum(per) / len(per), per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vary", nargs="*", default=list(VARY), help="name=v1,v2: values to try one at a time")
    ap.add_argument("--set", nargs="*", default=[], help="name=v: the base setting's changes from the defaults")
    ap.add_argument("--json", default="bench/results/relation-dev-grid.json")
    args = ap.parse_args()
    from collection import build

    base = {k: v[0] for k, v in parse(args.set).items()}
    settings = [("base", base)] + [(f"{k}={v}", {**base, k: v}) for k, vs in parse(args.vary).items() for v in vs]
    data = {c: (build(c, True), questions(c)) for c in SETS}
    rows, out = [], {"split": "dev", "questions": {c: len(qs) for c, (_, qs) in data.items()}, "base": base,
                     "settings": []}
    for label, params in settings:
        scores = {c: mrr(index, qs, params) for c, (index, qs) in data.items()}
        means = {c: s[0] for c, s in scores.items()}
        both = sum(means.values()) / len(means)
        rows.append([label, *(f"{means[c]:.4f}" for c in SETS), f"{both:.4f}"])
        out["settings"].append({"label": label, "params": params, "mrr@10": means, "mean": both,
                                "per_question": {c: s[1] for c, s in scores.items()}})
        print(rows[-1], file=sys.stderr, flush=True)
    print_table(["setting", *(f"{c} ({len(qs)})" for c, (_, qs) in data.items()), "mean"], rows)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
