"""`sidelight serve` (HTTP API + lab page), `sidelight mcp` (MCP server) and `sidelight log` (the query log)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sqlite3
from pathlib import Path

from ..errors import IndexFormatError, InputError
from ..index import Index, store
from ..index.index import warm_kernels
from .args import add_json, add_top_k, check_top_k
from .state_cmd import add_retention_args, retention_of
from .output import console, print_json, table


def register(sub) -> None:
    p = sub.add_parser("serve", help="serve the HTTP API and the lab page for an index (loopback by default)",
                       description="HTTP API (see /openapi.json) and the interactive lab page at /.")
    p.add_argument("index", type=Path)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--lab", type=Path, metavar="DIR", help="a lab run dir: its latest report.html is shown on the page")
    p.add_argument("--site", type=Path, metavar="DIR",
                   help="a page `sidelight export-web` wrote for this index, served at /site/: it searches in the "
                        "browser and offers feedback through this server")
    p.add_argument("--budget-ms", type=int, default=None, help="default time budget per request (ms)")
    p.add_argument("--ray", metavar="auto|ADDRESS", default=None,
                   help="a sharded index: serve each shard from a Ray actor (auto: the cluster running here, "
                        "else a local one; needs pip install 'sidelight[ray]')")
    _access_args(p)
    add_retention_args(p)
    p.set_defaults(func=run_serve)

    m = sub.add_parser("mcp", help="serve the lanes as MCP tools for an LLM client (stdio, or --http PORT)")
    m.add_argument("index", type=Path)
    m.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="address for --http (default loopback)")
    _access_args(m)
    add_retention_args(m)
    m.set_defaults(func=run_mcp)

    lg = sub.add_parser("log", help="print the query log (HTTP, MCP and CLI calls) of an index")
    lg.add_argument("index", type=Path)
    add_top_k(lg, 20, "newest calls to print", old=("--limit",))
    add_json(lg)
    lg.set_defaults(func=run_log)


TOKEN_ENV = "SIDELIGHT_TOKEN"
MIN_TOKEN_CHARS = 16


def _access_args(p) -> None:
    p.add_argument("--token", default=None, help=f"access token required on every HTTP request (Authorization: "
                   f"Bearer TOKEN); default ${TOKEN_ENV}; required to bind beyond loopback")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="a further name the Host header may give (repeatable; '*' checks no Host)")


def _access(args, what: str = "sidelight serve") -> tuple[str | None, list[str] | None]:
    """(access token, Host names allowed) for binding `args.host`; no token beyond loopback: InputError (exit 2)."""
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable()
                              or " " in token):
        raise InputError(f"the access token must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
                         "without spaces")
    loop = _is_loopback(args.host)
    if not loop and token is None:
        raise InputError(f"{what} on {args.host} is reachable beyond loopback and needs an access token: pass "
                         f"--token TOKEN or set {TOKEN_ENV} (e.g. python -c 'import secrets; "
                         "print(secrets.token_urlsafe(32))')")
    if "*" in args.allow_host:
        if token is None:  # any Host: a DNS-rebinding page could read the page token and POST
            raise InputError(f"--allow-host '*' checks no Host header, so any web page could reach {what} through "
                             f"DNS rebinding; it needs an access token: pass --token TOKEN or set {TOKEN_ENV}")
        return token, None
    from ..serve.guard import LOOPBACK_HOSTS, host_name

    bound = args.host.strip("[]").lower()
    hosts = {*LOOPBACK_HOSTS, *(host_name(h) for h in args.allow_host), f"[{bound}]" if ":" in bound else bound}
    if bound in ("0.0.0.0", "::"):  # every interface: this machine's names and addresses
        hosts |= _machine_names()
    return token, sorted(hosts)


def _machine_names() -> set[str]:
    """This machine's names and the addresses of its interfaces (as a Host header gives them)."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    try:
        names |= set(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    names |= {f"[{a}]" if ":" in a else a for a in interface_addresses()}
    return {n for n in names if n}


def interface_addresses() -> set[str]:
    """Every address of this machine's network interfaces (Linux: IPv4 by ioctl, IPv6 from /proc)."""
    out: set[str] = set()
    try:
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _, name in socket.if_nameindex():
                try:
                    packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
                    out.add(socket.inet_ntoa(packed[20:24]))
                except OSError:
                    continue  # an interface without an IPv4 address
    except (ImportError, OSError):
        pass
    try:
        with open("/proc/net/if_inet6") as f:
            for line in f:
                raw = line.split()[0]
                out.add(str(ipaddress.IPv6Address(int(raw, 16))))
    except (OSError, ValueError, IndexError):
        pass
    return out


def check_port(port: int | None, flag: str) -> None:
    """A TCP port 0..65535 (0: any free port), else a one-line InputError."""
    if port is not None and not 0 <= port <= 65535:
        raise InputError(f"{flag} must be a TCP port 0..65535, got {port}")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _service(args, interface: str):
    from ..lanes.budget import DEFAULT_BUDGET_MS
    from ..serve.engine import Service

    try:
        index = Index.load(args.index)
        if getattr(args, "ray", None):
            from ..index.ray_shards import serve_on_ray

            serve_on_ray(index, args.ray)
        warm_kernels()  # a server takes its start-up cost before the first request, not during it
        return Service(index, interface=interface, lab_dir=getattr(args, "lab", None),
                       default_budget_ms=getattr(args, "budget_ms", None) or DEFAULT_BUDGET_MS)
    except sqlite3.DatabaseError as exc:
        raise IndexFormatError(f"{args.index / 'state.sqlite'} is not a usable SQLite database ({exc}); move it "
                               "aside to start with no traces and an empty query log, or restore it") from None


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..serve.app import create_app

    check_port(args.port, "--port")
    token, hosts = _access(args, "sidelight serve")
    service = _service(args, "http")
    if args.site is not None:
        from ..web.export import check_site_of

        exported = check_site_of(args.site, service.index).get("index_generation")
        now = store.current_generation(args.index)
        if exported != now:
            console.print(f"note: {args.site} was exported from {exported}, the index is now at {now}: re-export it "
                          f"so that the page ranks what the server ranks")
    from ..serve.retention import RetentionThread

    service.retention = RetentionThread(service, retention_of(args)).start()  # bounded state (docs: retention)
    from ..web.served import served_page

    app = create_app(service, allowed_hosts=hosts, access_token=token, site=args.site, page=served_page(service))
    console.print(f"sidelight serve: {len(service.index.corpus)} records on http://{args.host}:{args.port}/  "
                  f"(API: /openapi.json, readiness: /health)")
    if args.site is not None:
        console.print(f"the exported page: http://{args.host}:{args.port}/site/")
    if token is not None:
        console.print("access token required: header 'Authorization: Bearer TOKEN'; a browser opens /?token=TOKEN once")
    from ..serve.shutdown import exit_now, exit_on_sigterm

    exit_on_sigterm(service)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    exit_now(service, 0)  # see sidelight.serve.shutdown: never finalize around a loading model
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    from ..serve.mcp_server import run

    check_port(args.http, "--http")
    token, hosts = _access(args, "sidelight mcp --http") if args.http is not None else (None, None)
    from ..serve.retention import RetentionThread

    service = _service(args, "mcp")
    service.retention = RetentionThread(service, retention_of(args)).start()
    from ..serve.shutdown import exit_now, exit_on_sigterm

    exit_on_sigterm(service)
    run(service, http_port=args.http, host=args.host, allowed_hosts=hosts, access_token=token)
    exit_now(service, 0)  # stdin closed or the HTTP server stopped: see sidelight.serve.shutdown
    return 0


def run_log(args: argparse.Namespace) -> int:
    from ..lanes.querylog import QueryLog

    limit = check_top_k(args)
    state = args.index / "state.sqlite"
    if not store.is_index_folder(args.index) and not state.exists():
        raise InputError(f"{args.index}: not an index folder")
    from ..store.sqlite import ReadOnlyStateError, copy_read_only

    try:
        log = QueryLog(state)
    except ReadOnlyStateError:  # a read-only folder: read the log from a private copy
        import tempfile

        copy = Path(tempfile.mkdtemp(prefix="sidelight-log-")) / "state.sqlite"
        copy_read_only(state, copy)
        log = QueryLog(copy)
    rows = log.entries(limit)
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
