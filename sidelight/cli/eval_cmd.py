"""`sidelight eval`: one method, a query file and qrels, a metrics table (and JSON / TREC run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..corpus.beir import load_queries, read_qrels
from ..errors import InputError
from ..index import Index
from ..lab.evaluate import DEFAULT_METRICS, evaluate_method, write_json, write_trec
from ..lab.metrics import parse_metric
from ..methods import get_method
from .args import OUTPUT, add_filter, add_json, add_output, add_top_k, check_top_k
from .output import parse_filter, parse_params, print_json, table


def register(sub) -> None:
    p = sub.add_parser("eval", help="evaluate a method on queries + qrels")
    p.add_argument("index", type=Path)
    p.add_argument("--queries", required=True, type=Path, help="queries JSONL (_id, text; metadata ignored)")
    p.add_argument("--qrels", required=True, type=Path, help="qrels TSV (query-id corpus-id score)")
    p.add_argument("-m", "--method", default="bm25", help="a method name (`sidelight methods` lists them)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a method parameter, e.g. -p stem=english -p alpha=0.8 (`sidelight methods` lists them)")
    add_filter(p)
    p.add_argument("--metrics", default=",".join(DEFAULT_METRICS), help="comma-separated, e.g. ndcg@10,mrr@10")
    add_top_k(p, 1000, "ranking depth: records ranked per query", old=("--depth",))
    add_json(p, "print the result (metrics, per-query values) as JSON instead of the table", legacy_path=True)
    add_output(p, "write the result as JSON to PATH")
    p.add_argument("--run", type=Path, metavar="PATH", help="write the ranking as a TREC run file to PATH")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=run_eval)


def _check_output(path: Path | None, flag: str) -> None:
    """An output file must be writable as a file: not a folder, and its folder must exist."""
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a folder; give a file name, e.g. {path / 'result.json'}")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {path}: folder {path.parent} does not exist")


def run_eval(args: argparse.Namespace) -> int:
    depth = check_top_k(args)
    metrics = [m.strip() for m in args.metrics.split(",")]
    for m in metrics:
        parse_metric(m)
    _check_output(args.output, OUTPUT)
    _check_output(args.run, "--run")
    method = get_method(args.method, **parse_params(args.param))
    index = Index.load(args.index)
    qrels, form = read_qrels(args.qrels, known_ids=set(index.corpus.ids))
    queries = load_queries(args.queries)
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise InputError(f"{args.qrels}: query id {missing[0]!r} has no text in {args.queries}")
    queries = {q: queries[q] for q in qrels}
    result = evaluate_method(index, method, queries, qrels, metrics, depth, progress=not args.quiet,
                             where=parse_filter(args.filter))
    if args.json:
        print_json(result.to_json())
    else:
        table(f"{result.method} on {len(queries)} queries", ["metric", "value"],
              sorted(result.metrics.items()), [False, True])
        if not args.quiet:
            print(f"qrels {args.qrels}: {sum(map(len, qrels.values()))} judgements, {form}")
    if args.output:
        write_json(result, args.output)
    if args.run:
        write_trec(result.run, args.run, result.method)
    return 0
