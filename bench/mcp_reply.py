"""Bytes an LLM reads from `sidelight mcp` (issue 43 item 8), through the official MCP client over stdio.

    python bench/mcp_reply.py [--index .cache/bench-mcp/obsidian-hub] [--query "..."]

The index: the Obsidian hub vault, `sidelight index ../shared/data/obsidian-hub -o
.cache/bench-mcp/obsidian-hub -q` (BM25 and the graph; built here if missing). Measured: the
UTF-8 bytes of each tool reply's text content (the JSON the model reads) for `search_channels`
limit=5 with default snippets, with `snippet_chars=0`, and with what `lean()` removes put back
(lane descriptions, fixed parameters, score parts, timings: the same call through
`Service.channels`, indented as the SDK writes a reply, and compact as `compact()` writes it); `search` k=5; `read` of the top hit's section; `links` of the
top hit; `record_success`. A typical session (search_channels, read, links, record_success) is
summed and shown as approximate tokens = characters / 4 (a rule of thumb, not a tokenizer).
Writes bench/results/mcp_reply.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
from _common import print_table, write_json  # noqa: E402

CLI = ["-c", "import sys; from sidelight.cli import main; sys.argv[0] = 'sidelight'; sys.exit(main())"]
VAULT = REPO.parent / "shared" / "data" / "obsidian-hub"
GOAL = 6 * 1024


def text_of(result) -> str:
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    return result.content[0].text


def sdk_text(obj: dict) -> str:
    """A dict as the SDK puts it in a tool reply's text content."""
    import pydantic_core

    return pydantic_core.to_json(obj, fallback=str, indent=2).decode()


async def session(index: Path, query: str) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    out = {}
    params = StdioServerParameters(command=sys.executable, args=[*CLI, "mcp", str(index)], cwd=str(REPO))
    async with Client(params, read_timeout_seconds=120) as c:
        sc = text_of(await c.call_tool("search_channels", {"query": query, "limit": 5}))
        out["search_channels limit=5"] = sc
        out["search_channels limit=5 snippet_chars=0"] = text_of(
            await c.call_tool("search_channels", {"query": query, "limit": 5, "snippet_chars": 0}))
        out["search k=5"] = text_of(await c.call_tool("search", {"query": query, "k": 5}))
        lane = json.loads(sc)["lexical"]
        top = lane["hits"][0]
        anchor = (top.get("passage") or {}).get("location", {}).get("anchor")
        ref = f"{top['id']}#{anchor}" if anchor else top["id"]
        out["read (top hit's section)"] = text_of(await c.call_tool("read", {"id": ref}))
        out["links (top hit)"] = text_of(await c.call_tool("links", {"id": top["id"]}))
        out["record_success"] = text_of(await c.call_tool("record_success",
                                                         {"trace_id": lane["trace_id"], "node_id": top["id"]}))
        out["_ref"] = ref
    return out


def with_descriptions(index: Path, query: str) -> tuple[str, str]:
    """The channels reply as it was before `lean()` and `compact()`: same call, lane descriptions,
    parameters, score parts and timings kept; indented as the SDK writes it, and compact."""
    from sidelight.index import Index
    from sidelight.serve.engine import Service
    from sidelight.serve.mcp_server import SNIPPET_CHARS

    service = Service(Index.load(index), interface="mcp")
    try:
        out = service.channels(query, 5, None, True, None, SNIPPET_CHARS)
        return sdk_text(out), json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    finally:
        service.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, default=REPO / ".cache" / "bench-mcp" / "obsidian-hub")
    ap.add_argument("--query", default="sync my vault between devices")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "mcp_reply.json")
    args = ap.parse_args()
    if not args.index.exists():
        subprocess.run([sys.executable, *CLI, "index", str(VAULT), "-o", str(args.index), "-q"], check=True)
    texts = anyio.run(session, args.index, args.query)
    ref = texts.pop("_ref")
    before, before_compact = with_descriptions(args.index, args.query)
    texts["before: search_channels limit=5, nothing left out, indented"] = before
    texts["before: the same, compact JSON"] = before_compact
    sizes = {k: len(v.encode("utf-8")) for k, v in texts.items()}
    hits = {k: len(json.loads(v).get("lexical", {}).get("hits", [])) for k, v in texts.items()
            if k.startswith("search_channels")}
    typical = ["search_channels limit=5", "read (top hit's section)", "links (top hit)", "record_success"]
    chars = sum(len(texts[k]) for k in typical)
    rows = [[k, f"{b:,}", f"{len(texts[k]) / 4:,.0f}"] for k, b in sizes.items()]
    print(f"index {args.index}, query {args.query!r}, read {ref!r}")
    print_table(["reply", "bytes", "~tokens (chars/4)"], rows)
    print(f"typical session ({' → '.join(k.split(' ')[0] for k in typical)}): {chars:,} characters, "
          f"~{chars / 4:,.0f} tokens (characters/4)")
    ok = sizes["search_channels limit=5"] <= GOAL
    print(f"goal: search_channels limit=5 ≤ {GOAL:,} bytes: {'met' if ok else 'NOT met'}")
    write_json(args.json, {"index": str(args.index), "query": args.query, "read_ref": ref, "bytes": sizes,
                           "lexical_hits": hits, "typical_session": {"calls": typical, "characters": chars,
                                                                    "approx_tokens_chars_over_4": round(chars / 4)},
                           "goal_bytes": GOAL, "goal_met": ok})
    return 0


if __name__ == "__main__":
    sys.exit(main())
