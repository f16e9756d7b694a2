"""The `sidelight` command: one module per command group, each registering its subcommands."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import SidelightError
from . import adapt_cmd, collection_cmd, corpus_cmd, eval_cmd, graph_cmd, index_cmd, lab_cmd, search_cmd, serendipity_cmd, serve_cmd, web_cmd

GROUPS = [index_cmd, collection_cmd, adapt_cmd, search_cmd, eval_cmd, corpus_cmd, graph_cmd, lab_cmd, serve_cmd, serendipity_cmd, web_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sidelight", description="Retrieval in separate lanes, with a lab to measure them.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SidelightError as exc:
        print(f"sidelight: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `sidelight ... --json | head`: the reader left early; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
