"""Does adapting MiniLM to a collection help the default on a user's folder? notes-v1 **dev** only.

    python bench/collection_adapt.py --model obsidian-hub=.cache/models/DIR [--model python-docs=DIR]
        [--alphas 0.1 0.2 0.5] [--json bench/results/collection-adapt.json]

`sidelight adapt` trains MiniLM by inverse cloze on the collection alone (no question is read) and
exports int8. For each collection given a model, this compares the section-window index
`bench/collection.py` builds (stock int8 MiniLM) with a copy of it whose vectors are re-encoded
with the adapted model, as `sidelight dense IDX --model DIR` does (the same section windows;
cached under .cache/bench-collection/NAME-sections-MODELNAME). Scored both ways: the default
(hybrid-linear, alpha 0.3, z-scores) and dense alone, document-level MRR@10 and hit@3 over the dev
questions (the anchor note left out of the hits, as bench/collection.py does), and the paired
bootstrap interval of adapted − stock over the benchmark's families (the lab's unit: a family's
questions averaged, families resampled; `sidelight.lab.stats.paired_bootstrap`, 10,000 resamples,
seed 0). `--alphas` adds hybrid-linear z-score rows at other weights, both ways (the default's
alpha, BM25's share, was chosen on dev with stock vectors; a better dense lane may want less). The test
split is the lab's, scored once; never here. With several collections, a pooled row too (questions
weighted alike, the families of every collection resampled together).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import print_table, write_json  # noqa: E402
from collection import COLLECTIONS, QUESTIONS, build, first_target  # noqa: E402

from sidelight.index import Index  # noqa: E402
from sidelight.lab.stats import paired_bootstrap  # noqa: E402
from sidelight.structures.dense import Passages  # noqa: E402

METHODS = {"default": ("hybrid-linear", {"alpha": 0.3, "norm": "zscore"}), "dense": ("dense", {})}
N_RESAMPLES, SEED = 10_000, 0


def adapted_index(name: str, model: Path) -> Index:
    """The section-window index with its vectors re-encoded by `model` (built once, then cached)."""
    stock = HERE.parent / ".cache" / "bench-collection" / f"{name}-sections"
    path = stock.with_name(f"{name}-sections-{model.name}")
    if path.is_dir():
        return Index.load(path)
    build(name, True)  # make sure the stock index exists
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(stock, tmp, ignore=shutil.ignore_patterns(".lock*"))
    t = time.perf_counter()
    with Index.edit(tmp) as index:
        index.add_dense(str(model), 32, 2, progress=True, passages=Passages(64, sections=True))
    print(f"{name}: re-encoded with {model} in {time.perf_counter() - t:.0f}s", file=sys.stderr)
    os.replace(tmp, path)
    return Index.load(path)


def per_question(index: Index, questions: list[dict], method: str, params: dict) -> dict[str, dict]:
    """qid -> {"rr": reciprocal rank of the first target document in the top 10, "hit3": it is in the top 3}."""
    out = {}
    for q in questions:
        _, rank = first_target(index, q, method, params)
        out[q["qid"]] = {"rr": 1 / rank if rank else 0.0, "hit3": float(bool(rank and rank <= 3))}
    return out


def family_means(scores: dict[str, dict], family: dict[str, str], key: str) -> list[float]:
    """Mean of `key` per family, families in sorted order (the bootstrap's unit)."""
    groups: dict[str, list[float]] = {}
    for qid in sorted(scores):
        groups.setdefault(family[qid], []).append(scores[qid][key])
    return [math.fsum(groups[f]) / len(groups[f]) for f in sorted(groups)]


def model_summary(model: Path) -> dict:
    m = json.loads((model / "adapt.json").read_text(encoding="utf-8"))
    t = m["training"]
    return {"path": str(model), "corpus": m["corpus"], "pairs": t["pairs"], "steps": t["steps"],
            "stopped_by": t["stopped_by"], "train_s": t["train_s"], "total_s": m["total_s"],
            "seed": t["config"]["seed"], "loss_first": t["loss_first"], "loss_last": t["loss_last"],
            "export": {k: m["export"][k] for k in ("weights", "mean_cosine", "min_cosine") if k in m["export"]},
            "onnx_sha256": m["onnx_sha256"]}


def summarise(where: str, label: str, per: dict[str, dict], family: dict[str, str], res: dict, rows: list,
              diffs: list, per_query: bool) -> None:
    """`label`'s stock and adapted MRR@10 and hit@3 over `family`'s questions, and the paired family
    bootstrap of adapted - stock, into `res` (the JSON), `rows` and `diffs` (the two printed tables)."""
    n = len(family)
    for variant in ("stock", "adapted"):
        mrr, hit3 = (math.fsum(s[k] for s in per[variant].values()) / n for k in ("rr", "hit3"))
        res["scores"][f"{variant} | {label}"] = {"mrr@10": mrr, "hit@3": hit3,
                                                 **({"per_query": per[variant]} if per_query else {})}
        rows.append([where, variant, label, f"{mrr:.4f}", f"{hit3:.4f}", n])
    for key, metric in (("rr", "mrr@10"), ("hit3", "hit@3")):
        b = paired_bootstrap(family_means(per["stock"], family, key), family_means(per["adapted"], family, key),
                             N_RESAMPLES, SEED)
        res["adapted_minus_stock"][f"{label} | {metric}"] = {"mean": b.mean_difference, "low": b.low, "high": b.high}
        diffs.append([where, label, metric, f"{b.mean_difference:+.4f}", f"[{b.low:+.4f}, {b.high:+.4f}]",
                      res["n_families"]])


def pool(methods: dict, pooled: dict, family: dict[str, str], rows: list, diffs: list) -> dict:
    """Every collection's questions together (question-weighted figures; families pooled for the interval)."""
    res = {"n": len(family), "n_families": len(set(family.values())), "scores": {}, "adapted_minus_stock": {}}
    for label in methods:
        per = {variant: pooled[(label, variant)] for variant in ("stock", "adapted")}
        summarise("pooled", label, per, family, res, rows, diffs, per_query=False)
    return res


def parse_models(values: list[str], ap: argparse.ArgumentParser) -> dict[str, Path]:
    models = {}
    for v in values:
        name, sep, folder = v.partition("=")
        if not sep or name not in COLLECTIONS:
            ap.error(f"--model takes COLLECTION=DIR with COLLECTION one of {', '.join(COLLECTIONS)}; got {v!r}")
        if not (Path(folder) / "adapt.json").is_file():
            ap.error(f"--model {v}: {folder} is not an adapted model folder (no adapt.json)")
        models[name] = Path(folder).resolve()
    return models


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", required=True, metavar="COLLECTION=DIR",
                    help="an adapted model folder for a collection (repeat for each collection)")
    ap.add_argument("--alphas", type=float, nargs="*", default=[], metavar="A",
                    help="also score hybrid-linear z-scores at these alphas (BM25's share), both ways")
    ap.add_argument("--split", default="dev", choices=["dev"], help="dev only: test is the lab's, scored once")
    ap.add_argument("--json", default="bench/results/collection-adapt.json")
    args = ap.parse_args()
    models = parse_models(args.model, ap)
    if any(not 0 <= a <= 1 for a in args.alphas):
        ap.error("--alphas: each weight must be in [0, 1]")
    methods = {**METHODS, **{f"hybrid-linear alpha={a:g}": ("hybrid-linear", {"alpha": a, "norm": "zscore"})
                             for a in args.alphas}}
    all_q = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    pooled: dict[tuple[str, str], dict] = {}  # (method label, variant) -> "collection/qid" -> scores
    pooled_family: dict[str, str] = {}
    rows, diffs, out = [], [], {"split": args.split, "n_resamples": N_RESAMPLES, "seed": SEED, "results": {}}
    for name, model in models.items():
        questions = [q for q in all_q if q["collection"] == name and q["split"] == args.split]
        family = {q["qid"]: q["family"] for q in questions}
        pooled_family.update({f"{name}/{qid}": f"{name}/{f}" for qid, f in family.items()})
        indexes = {"stock": build(name, True), "adapted": adapted_index(name, model)}
        res: dict = {"model": model_summary(model), "n": len(questions), "n_families": len(set(family.values())),
                     "scores": {}, "adapted_minus_stock": {}}
        for label, (method, params) in methods.items():
            per = {variant: per_question(index, questions, method, params) for variant, index in indexes.items()}
            for variant in per:
                pooled.setdefault((label, variant), {}).update({f"{name}/{q}": v for q, v in per[variant].items()})
            summarise(name, label, per, family, res, rows, diffs, per_query=True)
        out["results"][name] = res
    if len(models) > 1:
        out["pooled"] = pool(methods, pooled, pooled_family, rows, diffs)
    print_table(["collection", "vectors", "method", "MRR@10", "hit@3", "n"], rows)
    print()
    print_table(["collection", "method", "metric", "adapted - stock", "95% family bootstrap", "families"], diffs)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
