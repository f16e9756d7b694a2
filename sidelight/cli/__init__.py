"""The `sidelight` command: one module per command group, each registering its subcommands."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys

from ..errors import SidelightError, describe_os_error
from .ranges import check_ranges
from . import (adapt_cmd, collection_cmd, corpus_cmd, eval_cmd, graph_cmd, index_cmd, lab_cmd, search_cmd, serendipity_cmd,
               serve_cmd, state_cmd, web_cmd)

GROUPS = [index_cmd, collection_cmd, adapt_cmd, search_cmd, eval_cmd, corpus_cmd, graph_cmd, lab_cmd, serve_cmd, state_cmd,
          serendipity_cmd, web_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sidelight", description="Retrieval in separate lanes, with a lab to measure them.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def _check_texts(args: argparse.Namespace) -> None:
    """Query words given on the command line must be Unicode text: bytes that are not UTF-8 reach Python
    as lone surrogates, which no trace, log or terminal can store; refuse them here, once for every command."""
    from ..serve.validate import unicode_problem

    for name in ("query", "description"):
        value = getattr(args, name, None)
        problem = unicode_problem(value) if isinstance(value, str) else None
        if problem:
            raise SidelightError(f"the {name} {problem}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_texts(args)
        check_ranges(args)  # every numeric option within its declared range (cli/ranges.py)
        return int(args.func(args) or 0)
    except SidelightError as exc:
        print(f"sidelight: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `sidelight ... --json | head`: the reader left early; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a full disk, a read-only folder, a path through a file: one line, never a traceback
        print(f"sidelight: error: {describe_os_error(exc)}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # the state file refused a write (full disk, read-only): one line
        print(f"sidelight: error: the state file (state.sqlite) refused the operation ({exc})", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
