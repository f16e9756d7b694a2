"""`sidelight channels` (independent lanes, never fused) and `sidelight feedback` (credit a used hit)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..index import Index
from ..lanes.channels import record_success
from ..serve.querylog import QueryLog
from .args import add_json, add_top_k, check_top_k
from .output import console, fmt, print_json, table


def register(sub) -> None:
    p = sub.add_parser("channels", help="lexical, relation (and dense) lanes for one query, side by side, each with its trace id",
                       description="Every lane answers on its own; nothing is fused, nothing is ranked across lanes.")
    p.add_argument("index", type=Path)
    p.add_argument("query")
    add_top_k(p, 10, "hits per lane", old=("--limit",))
    p.add_argument("--no-dense", action="store_true", help="leave the dense lane (and dense seeds) out")
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


def run_channels(args: argparse.Namespace) -> int:
    k = check_top_k(args)
    index = Index.load(args.index)
    t = time.perf_counter()
    result = index.search_channels(args.query, k, dense=False if args.no_dense else None)
    QueryLog.for_index(index).append(
        "cli", "channels", args.query, total_ms=(time.perf_counter() - t) * 1000.0,
        lanes=[{"channel": lane.channel, "trace_id": lane.trace_id, "hits": len(lane.hits)} for lane in result.lanes()])
    if args.json:
        print_json(result.to_dict())
        return 0
    print_channels(result)
    return 0


def print_channels(result) -> None:
    """Each lane as its own table, relation hits with their edge paths; nothing is merged."""
    agree = set(result.agreement_node_ids)
    for lane in result.lanes():
        console.print(f"[bold]{lane.channel} lane[/bold]  trace {lane.trace_id}")
        if lane.channel == "relation":
            seeds = ", ".join(lane.params.get("seeds", [])) or "none"
            console.print(f"[dim]relation seeds: {fmt(seeds)}[/dim]")
        if not lane.hits:
            console.print(f"[dim]no {lane.channel} hit[/dim]")
        elif lane.channel == "relation":
            rows = [(h["rank"], h["id"] + (" *" if h["id"] in agree else ""), h["score"], render_path(h["path"]))
                    for h in lane.hits]
            table(None, ["rank", "id", "activation", "path"], rows, [True, False, True, False])
        else:
            rows = [(h["rank"], h["id"] + (" *" if h["id"] in agree else ""), h["score"], h["title"][:60])
                    for h in lane.hits]
            table(None, ["rank", "id", "score", "title"], rows, [True, False, True, False])
    console.print("[dim]* in more than one lane. Scores compare only within a lane. Report back the trace id "
                  "and node id you actually used: sidelight feedback INDEX TRACE NODE[/dim]")


def run_feedback(args: argparse.Namespace) -> int:
    index = Index.load(args.index)
    res = record_success(index, args.trace, args.node)
    QueryLog.for_index(index).append("cli", "feedback", None, lanes=[
        {"channel": res.channel, "trace_id": res.trace_id, "node_id": res.node_id, "credited": len(res.changed_edges)}])
    changes = [{"source": c.source_id, "target": c.target_id, "type": c.type,
                "old_weight": c.base_weight + c.delta_before, "new_weight": c.weight_after}
               for c in res.changed_edges]
    if args.json:
        print_json({"trace_id": res.trace_id, "node_id": res.node_id, "channel": res.channel, "rank": res.rank,
                    "already_recorded": res.already_recorded, "changed_edges": changes})
        return 0
    if res.already_recorded:
        print(f"already recorded: {res.node_id} from {res.channel} trace {res.trace_id}; nothing changed")
    elif not changes:
        print(f"recorded: {res.node_id} (rank {res.rank}) from {res.channel} trace {res.trace_id}; no edge changed")
    else:
        print(f"recorded: {res.node_id} (rank {res.rank}) from {res.channel} trace {res.trace_id}; "
              f"{len(changes)} edge(s) strengthened:")
        for c in changes:
            print(f"  {c['source']} -[{c['type']}]-> {c['target']}: {c['old_weight']:.4g} -> {c['new_weight']:.4g}")
    return 0
