"""`sidelight adapt` (fine-tune the embedder for one index) and `sidelight dense` (re-encode an index)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..adapt import AdaptConfig, adapt
from ..corpus.beir import load_queries, read_qrels
from ..errors import InputError
from ..index import Index
from .args import add_output, add_passage_flags, dense_summary, passages_of


def register(sub) -> None:
    p = sub.add_parser("adapt", help="fine-tune the embedding model for an index's corpus (needs sidelight[adapt])",
                       description="Self-supervised from the corpus (inverse cloze: a sentence or clause -> the rest "
                                   "of its record, the record's names cut out), plus supervised pairs from training "
                                   "qrels when given; writes an int8 ONNX model folder for `index --dense` / `dense --model`.")
    p.add_argument("index", type=Path)
    add_output(p, "model folder to write (new or empty; an earlier adapted model with --force)", required=True)
    p.add_argument("--train-queries", type=Path, help="BEIR queries.jsonl holding the training queries")
    p.add_argument("--train-qrels", type=Path, help="qrels TSV of the training split only (never test)")
    defaults = AdaptConfig()
    p.add_argument("--minutes", type=float, default=defaults.minutes,
                   help=f"training budget in minutes (pairs before and the export after add about 20 s); "
                        f"default {defaults.minutes:g}; ignored with --steps")
    p.add_argument("--steps", type=int, default=None,
                   help="train exactly this many optimizer steps (the learning rate decays to zero at the last), "
                        "however long they take: the same settings give the same model on an idle or a loaded "
                        "machine; the budget is ignored")
    p.add_argument("--batch-size", type=int, default=defaults.batch_size)
    p.add_argument("--max-length", type=int, default=defaults.max_length, help="wordpieces per training text")
    p.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    p.add_argument("--max-pairs", type=int, default=defaults.max_pairs, help="self-supervised pairs drawn from the corpus")
    p.add_argument("--no-hard-negatives", action="store_true", help="in-batch negatives only")
    p.add_argument("--mini-batch", type=int, default=defaults.mini_batch,
                   help="encode this many texts at a time (GradCache: the same loss in a fraction of the "
                        f"memory); 0: the whole batch at once; default {defaults.mini_batch}")
    p.add_argument("--keep-anchor", type=float, default=defaults.keep_anchor,
                   help=f"share of cloze positives that keep their anchor sentence; default {defaults.keep_anchor:g}")
    p.add_argument("--teacher", choices=["gcide"], default=None,
                   help="pairs from another dictionary instead of inverse cloze: its definitions -> the index's "
                        "senses of the word (WordNet-copied senses and benchmark wordings left out)")
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument("--threads", type=int, default=defaults.threads)
    p.add_argument("--force", action="store_true", help="replace an earlier adapted model in the folder")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run_adapt)

    d = sub.add_parser("dense", help="(re-)encode an index's records with an embedding model",
                       description="Replace the index's dense vectors (a new generation; the old stays until it is published).")
    d.add_argument("index", type=Path)
    d.add_argument("--model", required=True, metavar="MODEL_SPEC", help="'minilm', a model folder (e.g. from `adapt`), or hf:ORG/NAME@REV")
    d.add_argument("--threads", type=int, default=2)
    d.add_argument("--batch-size", type=int, default=32)
    add_passage_flags(d)
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    d.set_defaults(func=run_dense)


def run_adapt(args: argparse.Namespace) -> int:
    if (args.train_queries is None) != (args.train_qrels is None):
        raise InputError("--train-queries and --train-qrels go together")
    cfg = AdaptConfig(minutes=args.minutes, steps=args.steps, batch_size=args.batch_size, max_length=args.max_length,
                      learning_rate=args.learning_rate, max_pairs=args.max_pairs,
                      hard_negatives=not args.no_hard_negatives, keep_anchor=args.keep_anchor, mini_batch=args.mini_batch,
                      seed=args.seed, threads=args.threads, teacher=args.teacher)
    index = Index.load(args.index)
    queries = load_queries(args.train_queries) if args.train_queries else None
    qrels = read_qrels(args.train_qrels, set(index.corpus.ids))[0] if args.train_qrels else None
    m = adapt(index, args.output, cfg, queries, qrels, progress=not args.quiet, force=args.force)
    t, e = m["training"], m["export"]
    print(f"adapted on {t['pairs']} pairs ({json.dumps(t['by_source'])}): {t['steps']} of {t['planned_steps']} steps "
          f"in {t['train_s']:.0f}s (stopped by {t['stopped_by']}), loss {t['loss_first'] or 0:.3f} -> {t['loss_last'] or 0:.3f}; "
          f"{e['weights']} export, cosine with the torch model >= {e['min_cosine']:.4f} -> {args.output}")
    return 0


def run_dense(args: argparse.Namespace) -> int:
    for flag, value in (("--threads", args.threads), ("--batch-size", args.batch_size)):
        if value < 1:
            raise InputError(f"{flag} must be >= 1, got {value}")
    passages = passages_of(args)
    with Index.edit(args.index) as index:
        index.add_dense(args.model, args.batch_size, args.threads, progress=not args.quiet, passages=passages)
    print(f"{dense_summary(index.dense, len(index.corpus))} -> {args.index}")
    return 0
