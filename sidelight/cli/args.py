"""One vocabulary for every command's flags, defined once.

- `-k/--top-k K`      how many results a command returns or prints;
- `--json`            print JSON on stdout (instead of the table), never a file;
- `-o/--output PATH`  write a file (or a folder) at PATH.

Old spellings (`--limit`, `--show`, `--k`, `--depth`, `--out`, `--into`, `--json PATH`, certify's `-k`) keep working
for one release: they do what they did and print one line `sidelight: warning: OLD is deprecated; use NEW` on stderr.
They are hidden from `--help`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError

TOP_K = "-k/--top-k"
OUTPUT = "-o/--output"


def warn_deprecated(old: str, new: str) -> None:
    print(f"sidelight: warning: {old} is deprecated; use {new}", file=sys.stderr)


class DeprecatedAlias(argparse.Action):
    """An old spelling of another option: stores into the same dest, and says on stderr what replaced it."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        warn_deprecated(option_string, self.new)
        setattr(namespace, self.dest, values)


def add_deprecated(p: argparse.ArgumentParser | argparse._ActionsContainer, old: str, dest: str, new: str,
                   type=None) -> None:
    """Accept `old` as a hidden, warning spelling of the option `new` (stored in `dest`)."""
    p.add_argument(old, dest=dest, action=DeprecatedAlias, new=new, type=type, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)


def add_top_k(p: argparse.ArgumentParser, default: int, help: str, old: tuple[str, ...] = ()) -> None:
    """`-k/--top-k K` (into `args.top_k`), with `old` spellings kept as deprecated aliases."""
    p.add_argument("-k", "--top-k", dest="top_k", type=int, default=default, metavar="K",
                   help=f"{help}; default {default}")
    for o in old:
        add_deprecated(p, o, "top_k", TOP_K, int)


def add_filter(p: argparse.ArgumentParser) -> None:
    """`--filter KEY=VALUE` (repeatable, into `args.filter`): keep records whose metadata matches exactly."""
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="only records whose metadata KEY equals VALUE (repeat for more keys), e.g. pos=noun")


def check_top_k(args: argparse.Namespace) -> int:
    """`args.top_k`, refused below 1 (exit 2, one line)."""
    if args.top_k < 1:
        raise InputError(f"{TOP_K} must be >= 1, got {args.top_k}")
    return args.top_k


class _Output(argparse.Action):
    """`-o/--output PATH`: also refuses a different path given through the old `--json PATH`."""

    def __call__(self, parser, namespace, values, option_string=None):
        via_json = getattr(namespace, "_output_via_json", None)
        if via_json is not None and via_json != values:
            parser.error(f"{OUTPUT} {values} and --json {via_json} name two different files; give only {OUTPUT}")
        setattr(namespace, self.dest, values)


def add_output(p: argparse.ArgumentParser, help: str, required: bool = False, old: tuple[str, ...] = ()) -> None:
    """`-o/--output PATH` (into `args.output`), with `old` spellings kept as deprecated aliases.

    A required output with old spellings is a required group of one visible option, so `--out PATH` alone
    still satisfies it (and giving both is refused by argparse)."""
    target = p.add_mutually_exclusive_group(required=True) if required and old else p
    target.add_argument("-o", "--output", dest="output", type=Path, metavar="PATH", action=_Output,
                        required=required and not old, default=None if not (required and old) else argparse.SUPPRESS,
                        help=help)
    for o in old:
        add_deprecated(target, o, "output", f"{OUTPUT} PATH", Path)


class _Json(argparse.Action):
    """`--json` bare: JSON on stdout. `--json PATH` (the old form, where allowed): `-o/--output PATH`, with a warning."""

    def __init__(self, option_strings, dest, legacy_path: bool = False, **kwargs):
        self.legacy_path = legacy_path
        super().__init__(option_strings, dest, nargs="?" if legacy_path else 0, const=True, default=False, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if values is True or values == []:
            setattr(namespace, self.dest, True)
            return
        path = Path(values)
        warn_deprecated("--json PATH", f"{OUTPUT} PATH (--json alone prints JSON on stdout)")
        given = getattr(namespace, "output", None)
        if given is not None and given != path:
            parser.error(f"--json {path} and {OUTPUT} {given} name two different files; give only {OUTPUT}")
        namespace._output_via_json = path
        namespace.output = path


def add_json(p: argparse.ArgumentParser, help: str = "print JSON on stdout instead of the table",
             legacy_path: bool = False) -> None:
    """`--json` (into `args.json`, a bool). With `legacy_path`, the old `--json PATH` still writes PATH."""
    if legacy_path:
        help += f" (the old --json PATH still writes PATH, deprecated: use {OUTPUT} PATH)"
    p.add_argument("--json", dest="json", action=_Json, legacy_path=legacy_path, metavar="PATH", help=help)


def add_passage_flags(p: argparse.ArgumentParser) -> None:
    """`--passages [--stride N] [--no-passage-title]`: long records keep their further windows (MaxP)."""
    p.add_argument("--passages", action="store_true",
                   help="also encode every window after the first of records longer than the model's window; "
                        "a record's dense score is then its best window's cosine (MaxP)")
    p.add_argument("--stride", type=int, default=64, help="with --passages: wordpieces neighbouring windows share")
    p.add_argument("--no-passage-title", action="store_true",
                   help="with --passages: windows after the first do not start with the record's title")


def passages_of(args: argparse.Namespace):
    """The `Passages` the flags ask for, or None."""
    from ..structures.dense import Passages

    if not args.passages:
        if args.stride != 64 or args.no_passage_title:
            raise InputError("--stride and --no-passage-title need --passages")
        return None
    return Passages(args.stride, not args.no_passage_title)


def dense_summary(dense, n_records: int) -> str:
    """One line on an index's dense vectors: model, truncation, windows."""
    line = (f"dense: {dense.identity['name']} dim {dense.identity['dim']}, {dense.truncated_docs} of {n_records} "
            f"records truncated at {dense.identity['max_length']} tokens")
    if dense.passages is not None and dense.passages.sections:
        line += (f"; {dense.window_count} section windows (stride {dense.passages.stride}): every word "
                 f"is in a window, a record scores by its best")
    elif dense.passages is not None:
        line += (f"; {dense.window_count} further windows (stride {dense.passages.stride}"
                 f"{', after the title' if dense.passages.title else ''}), scored by their best window")
    return line
