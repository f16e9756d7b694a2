"""How far re-weighting the relation lane's parts can go on FOLDOC (issue 13), on development data only.

The query-aware lane scores a reached record by a weighted sum of eight parts
(`sidelight.methods.relation.PARTS`). relation-v2's dev split picked the weights from a small grid.
This study fits the weights instead: a pairwise logistic regression (the target against every
other reached record of its question, no intercept, scikit-learn) on all 96 FOLDOC questions of
relation-v1 (its test split was scored long ago, so it is development data now), then scores
MRR@10 on relation-v2's 32 FOLDOC dev questions. Same anchors, seeds and parts as the dev-picked
setting (hops 1, context 2, text 1, dense 8, anchor 2), the anchor dropped from each ranking as
in the lab. relation-v2's test split is not read.

    .venv/bin/python bench/relation_fit.py --json bench/results/relation-fit.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_json  # noqa: E402

from sidelight.lab.protocol import load_protocol  # noqa: E402
from sidelight.lab.runner import Context  # noqa: E402
from sidelight.methods import check_params  # noqa: E402
from sidelight.methods.relation import PARTS, relation_rank  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PICKED = {"rank": "query-aware", "hops": 1, "context_weight": 2.0, "text_weight": 1.0, "dense_weight": 8.0,
          "anchor_weight": 2.0}  # relation-v2-foldoc's dev pick; the other weights at their defaults
SETS = {"train": ("relation-v1.jsonl", ("dev", "test")), "dev": ("relation-v2.jsonl", ("dev",))}
C_GRID = (0.01, 0.1, 1.0, 10.0)


def questions(name: str) -> list[dict]:
    path, splits = SETS[name]
    rows = [json.loads(line) for line in (ROOT / "benchmarks" / path).read_text(encoding="utf-8").splitlines()]
    return [q for q in rows if q["corpus"] == "foldoc" and q["split"] in splits]


def parts_of(index, q: dict) -> tuple[np.ndarray, np.ndarray]:
    """(reached records x parts, which row is the target) for one question; the anchor dropped, as the lab does."""
    r = relation_rank(index, q["query"], None, PICKED)
    keep = [j for j, h in enumerate(r.hits) if index.ids[h.node] != q.get("anchor_id")]
    X = np.array([[r.parts[j][k] for k in PARTS] for j in keep]).reshape(-1, len(PARTS))
    y = np.array([index.ids[r.hits[j].node] == q["intended_id"] for j in keep], dtype=bool)
    return X, y


def mrr10(data: list[tuple[np.ndarray, np.ndarray]], w: np.ndarray) -> float:
    """MRR@10 of ranking each question's reached records by X @ w, ties by the lane's own order."""
    out = []
    for X, y in data:
        order = np.lexsort((np.arange(len(X)), -(X @ w)))
        hit = np.flatnonzero(y[order])
        out.append(1.0 / (hit[0] + 1) if len(hit) and hit[0] < 10 else 0.0)
    return float(np.mean(out))


def main() -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args()
    index = Context(load_protocol(ROOT / "protocols" / "relation-v2-foldoc.json")).index
    data = {name: [parts_of(index, q) for q in questions(name)] for name in SETS}
    declared = check_params("relation", PICKED)  # the pick over the declared defaults
    picked = np.array([1.0] + [declared[f"{k}_weight"] for k in PARTS[1:]])  # graph's weight is 1
    X, y = [], []
    for Xq, yq in data["train"]:
        if yq.any():
            d = Xq[yq][0] - Xq[~yq]
            X += [d, -d]
            y += [np.ones(len(d)), np.zeros(len(d))]
    X, y = np.vstack(X), np.concatenate(y)
    rows = [{"weights": "dev-picked grid point", "C": None, **dict(zip(PARTS, picked.tolist())),
             "train_mrr@10": mrr10(data["train"], picked), "dev_mrr@10": mrr10(data["dev"], picked)}]
    for c in C_GRID:
        w = LogisticRegression(C=c, fit_intercept=False, max_iter=5000).fit(X, y).coef_[0]
        w = w / np.abs(w).max()
        rows.append({"weights": "fitted on relation-v1", "C": c, **dict(zip(PARTS, w.round(4).tolist())),
                     "train_mrr@10": mrr10(data["train"], w), "dev_mrr@10": mrr10(data["dev"], w)})
    print_table(["weights", "C", *PARTS, "v1 MRR@10", "v2 dev MRR@10"],
                [[r["weights"], r["C"] or "", *(f"{r[k]:.2f}" for k in PARTS), f"{r['train_mrr@10']:.4f}",
                  f"{r['dev_mrr@10']:.4f}"] for r in rows])
    write_json(args.json, {"train": {"questions": len(data["train"]), "pairs": len(y)},
                           "dev": {"questions": len(data["dev"])}, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
