"""`sidelight serve` (HTTP API + lab page), `sidelight mcp` (MCP server) and `sidelight log` (the query log)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from ..errors import InputError
from ..index import Index
from .output import console, print_json, table


def register(sub) -> None:
    p = sub.add_parser("serve", help="serve the HTTP API and the lab page for an index (loopback by default)",
                       description="HTTP API (see /openapi.json) and the interactive lab page at /.")
    p.add_argument("index", type=Path)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--lab", type=Path, metavar="DIR", help="a lab run dir: its latest report.html is shown on the page")
    p.add_argument("--budget-ms", type=int, default=None, help="default time budget per request (ms)")
    p.set_defaults(func=run_serve)

    m = sub.add_parser("mcp", help="serve the lanes as MCP tools for an LLM client (stdio, or --http PORT)")
    m.add_argument("index", type=Path)
    m.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="address for --http (default loopback)")
    m.set_defaults(func=run_mcp)

    lg = sub.add_parser("log", help="print the query log (HTTP, MCP and CLI calls) of an index")
    lg.add_argument("index", type=Path)
    lg.add_argument("--limit", type=int, default=20)
    lg.add_argument("--json", action="store_true")
    lg.set_defaults(func=run_log)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _service(args, interface: str):
    from ..serve.budget import DEFAULT_BUDGET_MS
    from ..serve.engine import Service

    index = Index.load(args.index)
    return Service(index, interface=interface, lab_dir=getattr(args, "lab", None),
                   default_budget_ms=getattr(args, "budget_ms", None) or DEFAULT_BUDGET_MS)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..serve.app import LOOPBACK_HOSTS, create_app

    service = _service(args, "http")
    loop = _is_loopback(args.host)
    if not loop:
        print(f"sidelight: warning: binding {args.host}, which is not loopback: the API has no authentication",
              file=sys.stderr)
    app = create_app(service, allowed_hosts=LOOPBACK_HOSTS if loop else None)
    console.print(f"sidelight serve: {len(service.index.corpus)} records on http://{args.host}:{args.port}/  "
                  f"(API: /openapi.json, readiness: /health)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    from ..serve.mcp_server import run

    if args.http is not None and not _is_loopback(args.host):
        print(f"sidelight: warning: MCP over HTTP on {args.host}, which is not loopback", file=sys.stderr)
    run(_service(args, "mcp"), http_port=args.http, host=args.host)
    return 0


def run_log(args: argparse.Namespace) -> int:
    from ..serve.querylog import QueryLog

    if args.limit < 1:
        raise InputError(f"--limit must be >= 1, got {args.limit}")
    state = args.index / "state.sqlite"
    if not (args.index / "manifest.json").exists() and not state.exists():
        raise InputError(f"{args.index}: not an index folder")
    log = QueryLog(state)
    rows = log.entries(args.limit)
    if args.json:
        print_json({"total": log.count(), "entries": rows})
        return 0
    table(f"query log of {args.index} ({log.count()} calls, newest first)",
          ["time", "via", "op", "query / trace", "lanes", "ms", "fallback", "status"],
          [(r["created_at"][:19].replace("T", " "), r["interface"], r["operation"], (r["query"] or "")[:50],
            ",".join(str(x.get("channel")) for x in r["lanes"]),
            "" if r["total_ms"] is None else f"{r['total_ms']:.1f}",
            (r["fallback"] or "") + (" partial" if r["partial"] else ""),
            str(r["status"]) + (f" {r['error'][:40]}" if r["error"] else ""))
           for r in rows], [False, False, False, False, False, True, False, False])
    if not rows:
        print("no call logged yet")
    return 0
