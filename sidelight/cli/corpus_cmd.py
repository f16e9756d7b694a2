"""`sidelight corpus stats SOURCE`: the Carrier-style corpus and graph table."""

from __future__ import annotations

import argparse

from ..corpus.sources import load_source
from .args import add_json


def register(sub) -> None:
    p = sub.add_parser("corpus", help="inspect a corpus")
    csub = p.add_subparsers(dest="corpus_command", required=True, metavar="ACTION")
    s = csub.add_parser("stats", help="records, arcs, pairs, degrees, isolated records, components")
    s.add_argument("source", help="'foldoc', 'wordnet' (nouns), 'wordnet-all', a BEIR folder, a JSONL file or a data set name")
    add_json(s)
    s.set_defaults(func=run_stats)


def run_stats(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from ..corpus.stats import format_stats_table, graph_stats
    from .output import console, print_json

    stats = graph_stats(load_source(args.source))
    if args.json:
        print_json(asdict(stats))
    else:
        console.print(format_stats_table(stats))
    return 0
