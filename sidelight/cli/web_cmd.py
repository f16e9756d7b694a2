"""`sidelight export-web`: the index as a static page that searches in the reader's browser."""

from __future__ import annotations

import argparse
from pathlib import Path

from .args import add_output
from .output import table


def register(sub) -> None:
    p = sub.add_parser("export-web", help="write a static page that searches the index in the browser",
                       description="Write SITE/: open SITE/index.html from disk or any static host; BM25, TF-IDF, "
                                   "RRF, bm25+ppr, the relation lane and (with vectors) the dense lane run in a "
                                   "Web Worker on the reader's device, and no request leaves the page.")
    p.add_argument("index", type=Path)
    add_output(p, "the site folder to write (atomically): new, empty, or an earlier export with --force",
               required=True)
    p.add_argument("--lab", type=Path, metavar="RUN_DIR", help="a lab run dir: its latest report.html goes with the page")
    p.add_argument("--snippet", type=int, default=400,
                   help="characters of each record's text the page shows (0: whole texts; default 400)")
    p.add_argument("--vectors", choices=("float32", "float16"), default="float32",
                   help="stored vector type: float32 reproduces Python's dense rankings; float16 halves them")
    p.add_argument("--max-mb", type=float, default=None, help="refuse a page larger than this (default 256 MB)")
    p.add_argument("--force", action="store_true", help="replace an earlier export in the same folder")
    p.add_argument("--link-template", metavar="URL",
                   help="where a hit's title links: {path} and {anchor} are replaced (URL-encoded), e.g. "
                        "'obsidian://open?vault=NAME&file={path}' or 'https://site/{path}#{anchor}' "
                        "(default: the file's path, relative to the page)")
    p.add_argument("--lean", action="store_true",
                   help="BM25, TF-IDF and the graph lanes only: no model and no ONNX runtime in the page "
                        "(the page then needs no model download: see the README for its size)")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    from ..web.export import DEFAULT_MAX_MB, export_web

    r = export_web(args.index, args.output, lab=args.lab, snippet=args.snippet, vectors=args.vectors,
                   max_mb=DEFAULT_MAX_MB if args.max_mb is None else args.max_mb, force=args.force,
                   link_template=args.link_template, lean=args.lean)
    rows = [(name, f"{size / 1e6:,.2f}") for name, size in sorted(r.files.items(), key=lambda kv: -kv[1])[:8]]
    table(f"{args.output}: the largest of {len(r.files)} files", ["file", "MB"], rows, [False, True])
    print(f"wrote {args.output}/index.html: {r.total_bytes / 1e6:,.1f} MB, methods {', '.join(r.methods)}; "
          f"exported in {r.seconds:.1f} s. Open it from disk or any static host: nothing is fetched.")
    return 0
