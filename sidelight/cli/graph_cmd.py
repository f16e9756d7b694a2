"""`sidelight channels` (independent lanes, never fused) and `sidelight feedback` (credit a used hit)."""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import InputError
from ..index import Index
from .args import add_json, add_top_k, check_top_k
from .output import console, fmt, parse_params, print_json, table

if TYPE_CHECKING:
    from ..serve.engine import Service

CLI_MAX_LIMIT = 10_000  # hits per lane a local user may ask for (HTTP keeps its own, smaller cap)
DENSE_WAIT_S = 300.0  # a CLI call waits this long for the dense query model before answering without it


def register(sub) -> None:
    p = sub.add_parser("channels", help="lexical, relation (and dense) lanes for one query, side by side, each with its trace id",
                       description="Every lane answers on its own; nothing is fused, nothing is ranked across lanes.")
    p.add_argument("index", type=Path)
    p.add_argument("query")
    add_top_k(p, 10, "hits per lane", old=("--limit",))
    p.add_argument("--no-dense", action="store_true", help="leave the dense lane (and dense seeds) out")
    p.add_argument("-r", "--relation", action="append", default=[], metavar="KEY=VALUE",
                   help="a relation lane parameter (`sidelight methods` lists them under `relation`), e.g. rank=activation")
    add_json(p, "print the JSON envelope instead of the tables")
    p.set_defaults(func=run_channels)

    f = sub.add_parser("feedback", help="record that a hit of a trace was actually used (relation: strengthens its path)")
    f.add_argument("index", type=Path)
    f.add_argument("trace", help="the trace id of the lane the record was taken from")
    f.add_argument("node", help="the record id (node id) that was used")
    add_json(f, "print the recorded credit as JSON")
    f.set_defaults(func=run_feedback)


def render_path(path: list[dict]) -> str:
    """`a -[type w]-> b -[type w]-> c` for a list of path edges."""
    parts = [path[0]["source"]] if path else []
    for e in path:
        parts.append(f"-[{e['type']} {e['weight']:g}]-> {e['target']}")
    return " ".join(parts)


def render_parts(parts: dict) -> str:
    """Score parts that count, e.g. `graph 1 text 0.82 dense 0.4`."""
    return " ".join(f"{k} {v:.2g}" for k, v in parts.items() if v) or "-"


def cli_service(index: Index) -> "Service":
    """The service every interface uses, for one CLI call: logged as "cli", no per-lane cap beyond sanity,
    and the dense query model loaded before the call (a CLI call waits for it instead of falling back)."""
    from ..serve.engine import Service  # the server's code loads only for the commands that use it

    service = Service(index, interface="cli", max_limit=CLI_MAX_LIMIT).start()
    service.wait_dense(DENSE_WAIT_S)
    return service


def run_channels(args: argparse.Namespace) -> int:
    from ..lanes.budget import MAX_BUDGET_MS
    from ..serve.validate import ApiError

    k = check_top_k(args)
    service = cli_service(Index.load(args.index))
    try:
        out = service.channels(args.query, k, MAX_BUDGET_MS, dense=not args.no_dense,
                               relation=parse_params(args.relation, "--relation"))
    except ApiError as exc:
        raise InputError(exc.message) from None
    finally:
        service.close()
    if args.json:
        print_json(out)
        return 0
    print_channels(out)
    if out.get("state"):
        print(f"note: {out['state']['note']}")
    return 0


def print_channels(envelope: dict) -> None:
    """Each lane of a channels envelope as its own table, relation hits with their edge paths; nothing is merged."""
    agree = set(envelope["agreement_node_ids"])
    lanes = [n for n in envelope.get("descriptions", {}) if isinstance(envelope.get(n), dict) and "hits" in envelope[n]]
    for name in lanes:  # every lane the answer has, in the registry's order
        lane = envelope[name]
        console.print(f"[bold]{name} lane[/bold]  trace {lane['trace_id']}")
        if name == "relation":
            anchors = [a["id"] + (f" (named \"{a['name']}\")" if a["why"] == "name" else f" ({a['why']} seed)")
                       for a in lane["params"].get("anchors", [])]
            cue = lane["params"].get("cue")
            console.print(f"[dim]relation seeds: {fmt(', '.join(anchors) or 'none')}"
                          + (f"; cue \"{cue['phrase']}\" -> {', '.join(cue['types']) or 'no edge type'}" if cue else "")
                          + "[/dim]")
        hits = lane["hits"]
        if not hits:
            console.print(f"[dim]no {name} hit[/dim]")
        elif all("path" in h for h in hits):  # hits reached along edges: show the score parts and the path
            rows = [(h["rank"], h["id"] + (" *" if h["id"] in agree else ""), h["title"][:30], h["score"],
                     render_parts(h.get("parts", {})), render_path(h["path"])) for h in hits]
            table(None, ["rank", "id", "title", "score", "parts", "path"], rows, [True, False, False, True, False, False])
        else:
            plain = [(h["rank"], h["id"] + (" *" if h["id"] in agree else ""), h["score"], h["title"][:60])
                     for h in hits]
            table(None, ["rank", "id", "score", "title"], plain, [True, False, True, False])
    for missing in envelope.get("missing_lanes", []):
        console.print(f"[dim]{missing['channel']} lane left out: {missing['reason']}[/dim]")
    console.print("[dim]* in more than one lane. Scores compare only within a lane. Report back the trace id "
                  "and node id you actually used: sidelight feedback INDEX TRACE NODE[/dim]")


def run_feedback(args: argparse.Namespace) -> int:
    from ..serve.engine import Service
    from ..serve.validate import ApiError

    service = Service(Index.load(args.index), interface="cli")
    try:
        res = service.feedback(args.trace, args.node)
    except ApiError as exc:
        raise InputError(exc.message) from None
    finally:
        service.close()
    if args.json:
        print_json(res)
        return 0
    where = f"{res['node_id']} (rank {res['rank']}) from {res['channel']} trace {res['trace_id']}"
    changes = res["changed_edges"]
    if res["already_recorded"]:
        print(f"already recorded: {where}; nothing changed")
    elif not changes:
        print(f"recorded: {where}; no edge changed")
    else:
        print(f"recorded: {where}; {len(changes)} edge(s) strengthened:")
        for c in changes:
            print(f"  {c['source']} -[{c['type']}]-> {c['target']}: {c['old_weight']:.4g} -> {c['new_weight']:.4g}")
    return 0
