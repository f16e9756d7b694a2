"""`sidelight sync` (keep an index of a folder in step with the folder), `show` and `links` (read what was found)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.text import Text

from ..errors import InputError
from ..index import Index
from ..index.reading import PAGE_CHARS, links, read
from ..index.sync import SyncReport, sync
from .args import add_json
from .output import console, print_json, table


def register(sub) -> None:
    s = sub.add_parser("sync", help="apply a folder's added, changed, deleted and renamed documents to its index",
                       description="Compare the folder with the index by each file's sha256 and apply only the "
                                   "changes: changed documents are read and encoded again, their links replaced; "
                                   "links into deleted or renamed documents are reported. One atomic write.")
    s.add_argument("folder", type=Path, help="the folder the index was built from")
    s.add_argument("index", type=Path)
    add_folder_flags(s)
    s.add_argument("--watch", action="store_true", help="keep running, syncing after every change to the folder")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    s.set_defaults(func=run_sync)

    r = sub.add_parser("show", help="print a document or one section of it (ID#Heading), with its outline and links")
    r.add_argument("index", type=Path)
    r.add_argument("ref", metavar="ID[#SECTION]", help="a record id, or ID#Heading > Sub, ID#Heading or ID#anchor")
    r.add_argument("--page", type=int, default=1, help="page of a long text (default 1)")
    r.add_argument("--page-chars", type=int, default=PAGE_CHARS, help=f"characters per page (default {PAGE_CHARS})")
    add_json(r)
    r.set_defaults(func=run_show)

    lk = sub.add_parser("links", help="a record's links out and in, each with the sentence it sits in")
    lk.add_argument("index", type=Path)
    lk.add_argument("id")
    lk.add_argument("--hops", type=int, default=1, choices=(1, 2), help="2: also the records two links away")
    add_json(lk)
    lk.set_defaults(func=run_links)


def add_folder_flags(p: argparse.ArgumentParser) -> None:
    """`--exclude GLOB` (repeatable) and `--report FILE`: what a folder reader leaves out, and where it says why."""
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave out files whose path relative to the folder matches GLOB (repeatable; a "
                        ".sidelightignore file in the folder adds more)")
    p.add_argument("--report", type=Path, metavar="FILE",
                   help="write every skipped file and unresolved link, with the reason, to FILE")


def print_sync(report: SyncReport, index: Path, args: argparse.Namespace) -> None:
    print(f"{index}: {report.summary()}")
    for source, target in report.dangling[:10]:
        print(f"  link {source} -> {target}: its target was deleted or renamed")
    if len(report.dangling) > 10:
        print(f"  ... and {len(report.dangling) - 10} more (see --report)")
    if args.report is not None and report.reader is not None:
        args.report.write_text(report.reader.to_text(), encoding="utf-8")


def run_sync(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():
        raise InputError(f"{args.folder}: not a folder")
    print_sync(sync(args.index, args.folder, args.exclude), args.index, args)
    if not args.watch:
        return 0
    from watchfiles import watch

    print(f"watching {args.folder} (Ctrl-C to stop)", file=sys.stderr)
    for _ in watch(args.folder, debounce=500, recursive=True):
        print_sync(sync(args.index, args.folder, args.exclude), args.index, args)
    return 0


def run_show(args: argparse.Namespace) -> int:
    doc = read(Index.load(args.index), args.ref, args.page, args.page_chars)
    if args.json:
        print_json(doc)
        return 0
    where = doc.get("path", doc["id"]) + (":%d-%d" % tuple(doc["lines"]) if "lines" in doc else "")
    console.print(Text(doc["title"] or doc["id"], style="bold"), Text(f"  {where}", style="cyan"))
    if doc.get("section"):
        console.print(Text(f"> {doc['section']}", style="cyan"))
    if doc["pages"] > 1:
        console.print(Text(f"page {doc['page']} of {doc['pages']}", style="dim"))
    console.print(Text(doc["text"]))
    _print_links(doc)
    return 0


def run_links(args: argparse.Namespace) -> int:
    found = links(Index.load(args.index), args.id, args.hops)
    if args.json:
        print_json(found)
        return 0
    _print_links(found)
    if "two_hop" in found:
        table("two links away", ["id", "title", "via"], [(x["id"], x["title"], x["via"]) for x in found["two_hop"]])
    return 0


def _print_links(found: dict) -> None:
    for key, label in (("links_out", "links out"), ("links_in", "links in")):
        rows = [(x["id"] + (f"#{x['section']}" if x.get("section") else ""), x["type"], x["context"][:100])
                for x in found[key]]
        if rows:
            table(f"{label} ({len(rows)})", ["record", "type", "sentence"], rows)
