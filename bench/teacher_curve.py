"""Training curve of the GCIDE teacher (issue 46): dev top-10 and MRR@10 against training minutes.

Each point is a model made by `sidelight adapt IDX -o MODEL --teacher gcide --mini-batch 0 --minutes M`
(seed 0; the learning-rate schedule fits the budget, so every budget is its own run, not a checkpoint
of a longer one); 0 minutes is frozen MiniLM. Every model encodes all of WordNet (`wordnet-all`,
117,659 senses; the lab's vector cache, so `sidelight lab` reuses the vectors) and is scored on the
development descriptions only: all of describe-v1 (its test split is spent) and describe-v2's dev
split, never describe-v2's test split. Words are ranked as the lab and `lookup` rank them (100 senses
by `dense`, then words, `word_ranking`), with the prior off and at `DEFAULT_PRIORS["dense"]`.

A model folder that is missing is trained first with `--train` (a 20-minute budget is 18 training
minutes: `sidelight adapt`'s default). It also audits the training pairs' leak check: how many
teacher senses were dropped for sharing a run of 4 tokens with a describe-v1/v2 description, and
that no kept anchor shares one.

    SIDELIGHT_CACHE=.cache .venv/bin/python bench/teacher_curve.py --model 5=.cache/models/wordnet-all-gcide-5m \
        --model 18=.cache/models/wordnet-all-gcide --train --json bench/results/teacher-curve.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, wordnet_index, write_json  # noqa: E402

from sidelight.corpus.sources import load_source  # noqa: E402
from sidelight.index import Index  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
DEV = [("describe-v1", None), ("describe-v2", "dev")]  # (benchmark, split kept; None: all of it)
DEPTH = 100
TRAIN_FLAGS = {"teacher": "gcide", "mini_batch": 0, "seed": 0}


def dev_questions(corpus) -> list[tuple[str, str, str]]:
    """(benchmark, description, intended word) of every development description."""
    from sidelight.lab.benchmark import load_describe_benchmark

    out = []
    for name, split in DEV:
        b = load_describe_benchmark(BENCHMARKS / f"{name}.jsonl", corpus)
        out += [(name, b.queries[q], b.intended_name[q]) for q in b.queries if split is None or b.split[q] == split]
    return out


def scores(ranks: list[int | None]) -> dict:
    """acc@1/10/100, MRR@10 and the median rank (a word not among those read counts as 101)."""
    n = len(ranks)
    srt = sorted(r if r is not None and r <= DEPTH else DEPTH + 1 for r in ranks)
    return {"n": n, "hit@1": sum(r <= 1 for r in srt) / n, "hit@10": sum(r <= 10 for r in srt) / n,
            "hit@100": sum(r <= DEPTH for r in srt) / n, "mrr@10": sum(1 / r for r in srt if r <= 10) / n,
            "median_rank": (srt[(n - 1) // 2] + srt[n // 2]) / 2}


def evaluate(index: Index, questions: list[tuple[str, str, str]], priors: list[float]) -> dict:
    """Scores of the index's dense vectors on `questions`, by prior and by benchmark."""
    from sidelight.index.lookup import word_ranking
    from sidelight.methods import get_method

    dense = get_method("dense")
    ranked = [(name, target, index.rank(dense, text, DEPTH)) for name, text, target in questions]
    out = {}
    for prior in priors:
        ranks = {name: [] for name, _ in DEV}
        for name, target, r in ranked:
            pairs = ((index.corpus.records[p], float(s)) for p, s in zip(r.positions, r.scores))
            ranks[name].append(word_ranking(pairs, DEPTH, target, prior)[1])
        out[str(prior)] = {"all": scores([x for v in ranks.values() for x in v]),
                           **{name: scores(v) for name, v in ranks.items()}}
    return out


def leak_audit(index: Index) -> dict:
    """The teacher's usable senses, those dropped as leaks, and a re-check that no kept anchor leaks."""
    from sidelight.adapt.teacher import benchmark_descriptions, leaks, runs, usable_senses

    descriptions = benchmark_descriptions()
    usable, dropped = usable_senses(index, load_source("gcide"), descriptions)
    banned = set().union(*(runs(d) for d in descriptions))
    texts = {d.lower().strip() for d in descriptions}
    return {"descriptions": len(descriptions), "usable_teacher_senses": len(usable), "dropped_as_leaks": dropped,
            "kept_anchors_leaking": sum(leaks(a, banned) for a, *_ in usable),
            "kept_anchors_equal_to_a_description": sum(a.lower().strip() in texts for a, *_ in usable)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--model", action="append", default=[], metavar="MINUTES=FOLDER",
                    help="a teacher model and its training budget in minutes (repeatable)")
    ap.add_argument("--train", action="store_true", help="train the model folders that are missing")
    ap.add_argument("--priors", type=float, nargs="+", default=None,
                    help="prior weights to score (default: 0 and DEFAULT_PRIORS['dense'])")
    ap.add_argument("--no-audit", action="store_true", help="skip the leak audit")
    args = ap.parse_args()
    from sidelight.index.lookup import DEFAULT_PRIORS
    from sidelight.lab.densecache import dense_store

    index = wordnet_index()
    questions = dev_questions(index.corpus)
    priors = sorted(set(args.priors or []) | {0.0, DEFAULT_PRIORS["dense"]})
    points = [(0.0, "minilm")] + sorted((float(m), f) for m, f in (s.split("=", 1) for s in args.model))
    out: dict = {"records": len(index.corpus), "dev": [f"{n} {s or 'all'}" for n, s in DEV], "points": []}
    for minutes, spec in points:
        manifest = None
        if spec != "minilm":
            folder = Path(spec)
            if not (folder / "adapt.json").is_file():
                if not args.train:
                    raise SystemExit(f"teacher_curve: {folder} has no model; pass --train to make it")
                from sidelight.adapt import AdaptConfig, adapt

                adapt(index, folder, AdaptConfig(minutes=minutes, **TRAIN_FLAGS), progress=False)
            import json

            manifest = json.loads((folder / "adapt.json").read_text(encoding="utf-8"))["training"]
            if manifest["config"]["minutes"] != minutes or manifest["config"]["teacher"] != "gcide":
                raise SystemExit(f"teacher_curve: {folder} was trained with {manifest['config']['minutes']} "
                                 f"minutes, teacher {manifest['config']['teacher']}, not {minutes}, gcide")
        index.dense, info = dense_store(index.corpus, spec, threads=2, progress=False)
        point = {"minutes": minutes, "model": spec, "steps": manifest["steps"] if manifest else 0,
                 "pairs_seen": manifest["examples"] if manifest else 0,
                 "train_s": manifest["train_s"] if manifest else 0.0, "scores": evaluate(index, questions, priors)}
        out["points"].append(point)
    if not args.no_audit:
        out["leak_audit"] = leak_audit(index)
    rows = [[f"{p['minutes']:g}", p["steps"], p["pairs_seen"], prior, s["all"]["n"], f"{s['all']['mrr@10']:.3f}",
             f"{s['all']['hit@1']:.1%}", f"{s['all']['hit@10']:.1%}", f"{s['all']['hit@100']:.1%}",
             s["all"]["median_rank"], f"{s['describe-v1']['hit@10']:.1%}", f"{s['describe-v2']['hit@10']:.1%}"]
            for p in out["points"] for prior, s in p["scores"].items()]
    print_table(["minutes", "steps", "pairs", "prior", "n", "MRR@10", "acc@1", "acc@10", "acc@100", "median",
                 "v1 acc@10", "v2 dev acc@10"], rows)
    if "leak_audit" in out:
        print("leak audit:", out["leak_audit"])
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
