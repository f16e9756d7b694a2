"""`sidelight adapt` on SciFact, FOLDOC and all of WordNet: wall time, peak memory, the export check.

Each corpus is adapted in its own child process (2 threads, adapt's defaults: an 18-minute training
budget, GradCache mini-batches of 16) and the model folder is kept under .cache/models/ for the lab
protocols that compare it (protocols/scifact-adapt-v2.json, foldoc-adapt.json, describe-v1.json;
the models of scifact-adapt, scifact-passages and foldoc-adapt were made before GradCache, with
`--minutes 20 --mini-batch 0`):

* scifact: 6,000 cloze pairs from the abstracts plus the SciFact *train* split's fit queries
  (`random.Random(45110).sample(sorted(train ids), 600)`, as the pilot; each judgement 4 times);
  the other 209 train queries stay out of training for dev selection, the test split is never read;
* foldoc: 40,000 cloze pairs from FOLDOC's records only (no benchmark query);
* wordnet-all: 20,000 cloze pairs (gloss -> the synset's words; half keep the gloss), 12 minutes.

    .venv/bin/python bench/adapt.py --json bench/results/adapt.json [--corpora scifact foldoc] [--minutes M]
        [--mini-batch N] [--steps N] [--model-name NAME] [--force]

With --steps N, training makes exactly N steps whatever the machine's load (the budget is ignored):
the way to remake a model whose step count is published (the SciFact models behind the lab's
re-scorings: `--corpora scifact --minutes 20 --mini-batch 0 --steps 134` and `--corpora scifact
--steps 123`).

An existing model folder is kept (its manifest is reported, without a fresh peak-memory figure)
unless --force. Without --steps, run nothing else heavy at the same time: the budget is wall time.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_json  # noqa: E402

from sidelight.config import cache_dir, dataset_path  # noqa: E402
from sidelight.corpus.beir import load_queries, read_qrels  # noqa: E402

CORPORA = {"scifact": ["--max-pairs", "6000"], "foldoc": ["--max-pairs", "40000"],
           "wordnet-all": ["--max-pairs", "20000", "--keep-anchor", "0.5", "--minutes", "12"]}
FIT_SEED, N_FIT = 45110, 600


def fit_split_files(out: Path) -> tuple[Path, Path]:
    """queries.jsonl and qrels.tsv holding only SciFact's 600 fit train queries."""
    folder = dataset_path("scifact")
    qrels, _ = read_qrels(folder / "qrels" / "train.tsv")
    fit = sorted(random.Random(FIT_SEED).sample(sorted(qrels), N_FIT))
    queries = load_queries(folder / "queries.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    (out / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": queries[q]}) + "\n" for q in fit))
    (out / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q in fit for d, g in sorted(qrels[q].items())))
    return out / "queries.jsonl", out / "qrels.tsv"


def run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of a child command, from GNU time."""
    t = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return time.monotonic() - t, int(proc.stderr.strip().splitlines()[-1]) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    ap.add_argument("--minutes", type=float, default=None, help="training budget (default: adapt's own)")
    ap.add_argument("--steps", type=int, default=None,
                    help="exactly this many training steps, the budget ignored (a model the machine's load cannot change)")
    ap.add_argument("--model-name", default=None, metavar="NAME",
                    help="write the model to .cache/models/NAME (default: CORPUS-adapted; one corpus only)")
    ap.add_argument("--mini-batch", type=int, default=None, help="GradCache mini-batch (default: adapt's own; 0: off)")
    ap.add_argument("--force", action="store_true", help="adapt again even where a model folder exists")
    args = ap.parse_args()
    if args.model_name is not None and len(args.corpora) != 1:
        ap.error("--model-name names one model: give one corpus")
    exe = str(Path(sys.executable).with_name("sidelight"))
    rows, out = [], {}
    for name in args.corpora:
        index = cache_dir() / "indexes" / name
        model = cache_dir() / "models" / (args.model_name or f"{name}-adapted")
        if not (index / "index.json").is_file():
            subprocess.run([exe, "index", name, "-o", str(index), "-q"], check=True)
        extra = list(CORPORA[name]) + (["--minutes", str(args.minutes)] if args.minutes is not None else [])
        extra += ["--mini-batch", str(args.mini_batch)] if args.mini_batch is not None else []
        extra += ["--steps", str(args.steps)] if args.steps is not None else []
        if name == "scifact":
            q, r = fit_split_files(cache_dir() / "adapt-data" / "scifact-fit")
            extra += ["--train-queries", str(q), "--train-qrels", str(r)]
        wall = peak = None
        if args.force or not (model / "adapt.json").is_file():
            wall, peak = run([exe, "adapt", str(index), "-o", str(model), "--force", "-q", *extra])
        m = json.loads((model / "adapt.json").read_text())
        t, e = m["training"], m["export"]
        out[name] = {"model": str(model), "wall_s": wall, "peak_mb": peak, "manifest": m}
        rows.append([name, t["pairs"], f"{t['steps']}/{t['planned_steps']}", f"{t['train_s'] / 60:.1f}",
                     "-" if wall is None else f"{wall / 60:.1f}", "-" if peak is None else f"{peak:,.0f}",
                     e["weights"], f"{e['mean_cosine']:.4f}", f"{e['min_cosine']:.4f}"])
    print_table(["corpus", "pairs", "steps", "train min", "wall min", "peak MB", "export", "mean cos", "min cos"], rows)
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
