"""Dev only: is a fusion of more lanes worth a method? ranx fusions of the rankings a lab run stored.

A lab run folder keeps every method's depth-`depth` dev ranking with scores (`RUN/dev/rankings/`).
This script fuses chosen labels with ranx (weighted sum of z-scored or min-max scores over each
ranking, and RRF with k = 60), searches the sum's weights on a grid, and prints dev nDCG@10 for every
subset of the labels, so that the gain of a third lane is read against the same search over two.
Test rankings are never read; nothing here is a held-out figure (the grid's best is optimistic).

    .venv/bin/python bench/fuse_runs.py runs/scifact-adapt-v2 --protocol protocols/scifact-adapt-v2.json \
        --labels bm25 dense-adapted-maxp dense --json bench/results/fuse-runs-scifact.json
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_json  # noqa: E402

from sidelight.lab.protocol import load_protocol  # noqa: E402
from sidelight.lab.runner import read_rankings  # noqa: E402

METRIC = "ndcg@10"
NORMS = {"zscore": "zmuv", "minmax": "min-max"}


def weight_grid(n: int, step: float) -> list[tuple[float, ...]]:
    """Every weight vector on the simplex with this step, each weight > 0."""
    k = round(1 / step)
    return [tuple(c / k for c in combo) for combo in itertools.product(range(1, k), repeat=n) if sum(combo) == k]


def main() -> int:
    from ranx import Qrels, Run, evaluate, fuse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=Path, help="a lab run folder whose dev split has been run")
    ap.add_argument("--protocol", type=Path, required=True)
    ap.add_argument("--labels", nargs="+", required=True, help="method labels of the run to fuse (2 or more)")
    ap.add_argument("--step", type=float, default=0.1, help="weight grid step")
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args()
    protocol = load_protocol(args.protocol)
    dev = protocol.load_benchmark(protocol.load_corpus()).subset("dev")
    qrels = Qrels({q: {d: int(g) for d, g in rel.items()} for q, rel in dev.qrels.items()})
    stored = read_rankings(args.run / "dev" / "rankings")
    missing = [lab for lab in args.labels if lab not in stored]
    if missing or len(args.labels) < 2:
        ap.error(f"need 2 or more labels the run stored; missing {missing}, stored {sorted(stored)}")
    runs = {lab: Run({q: dict(zip(row["ids"], map(float, row["scores"]))) for q, row in stored[lab].items()
                      if q in dev.queries}, name=lab) for lab in args.labels}
    out: dict = {"run": str(args.run), "metric": METRIC, "queries": len(dev.queries), "step": args.step,
                 "single": {lab: float(evaluate(qrels, runs[lab], METRIC)) for lab in args.labels}, "fused": []}
    rows = [[lab, "-", "-", f"{v:.4f}"] for lab, v in out["single"].items()]
    for n in range(2, len(args.labels) + 1):
        for subset in itertools.combinations(args.labels, n):
            for kind in [*NORMS, "rrf"]:
                best = None
                rrf = kind == "rrf"
                for weights in ([(1.0,) * n] if rrf else weight_grid(n, args.step)):
                    fused = fuse([runs[lab] for lab in subset], norm="rank" if rrf else NORMS[kind],
                                 method="rrf" if rrf else "wsum", params={"k": 60} if rrf else {"weights": list(weights)})
                    value = float(evaluate(qrels, fused, METRIC))
                    if best is None or value > best[0]:  # ties: the first weights of the grid
                        best = (value, weights)
                out["fused"].append({"labels": list(subset), "fusion": kind, "weights": list(best[1]), METRIC: best[0]})
                rows.append([" + ".join(subset), kind, ", ".join(f"{w:g}" for w in best[1]), f"{best[0]:.4f}"])
    print_table(["labels", "fusion", "dev-best weights", f"dev {METRIC}"], rows)
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
