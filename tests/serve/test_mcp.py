"""MCP: `sidelight mcp INDEX` as a subprocess, driven by the official SDK's stdio client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


def _command(index: Path) -> StdioServerParameters:
    script = Path(sys.executable).with_name("sidelight")
    if script.exists():
        return StdioServerParameters(command=str(script), args=["mcp", str(index)])
    return StdioServerParameters(command=sys.executable,
                                 args=["-c", "import sys; from sidelight.cli import main; sys.exit(main())",
                                       "mcp", str(index)])


def _data(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def test_stdio_session(foldoc_copy):
    async def session():
        async with Client(_command(foldoc_copy), read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"search_channels", "record_success", "search", "read", "links"} <= set(tools)
            # listed only where the index can serve them: FOLDOC has no certificate and is no dictionary of senses
            assert not {"connections", "reveal", "lookup"} & set(tools)
            desc = tools["search_channels"].description
            assert "trace_id" in desc and "not mean selected, validated or used" in desc
            assert "node_id" in tools["record_success"].description

            res = await client.list_resources()
            uri = next(str(r.uri) for r in res.resources if "readiness" in str(r.uri))
            ready = json.loads((await client.read_resource(uri)).contents[0].text)
            assert ready["ready"] is True and ready["index"]["records"] > 10_000 and "bm25" in ready["methods"]

            # a generous budget: this test is about the protocol, not speed (a loaded machine must not cut a lane)
            env = _data(await client.call_tool("search_channels", {"query": "garbage collection", "limit": 10, "budget_ms": 60_000}))
            rel = env["relation"]
            assert env["lexical"]["trace_id"] != rel["trace_id"] and rel["hits"]
            hit = rel["hits"][0]
            credited = {(e["source"], e["target"], e["type"]): e["weight"] for e in hit["path"]}

            fb = _data(await client.call_tool("record_success", {"trace_id": rel["trace_id"], "node_id": hit["id"]}))
            assert fb["channel"] == "relation" and fb["changed_edges"]
            changed = {(c["source"], c["target"], c["type"]): c for c in fb["changed_edges"]}
            assert set(changed) == set(credited)

            # a second call sees the strengthened edge in the relation lane's path weights
            env2 = _data(await client.call_tool("search_channels", {"query": "garbage collection", "limit": 10, "budget_ms": 60_000}))
            seen = {(e["source"], e["target"], e["type"]): e["weight"]
                    for h in env2["relation"]["hits"] for e in h["path"]}
            shared = set(seen) & set(changed)
            assert shared, "the credited path is still in the relation lane"
            for k in shared:
                assert seen[k] == pytest.approx(changed[k]["new_weight"]) and seen[k] > credited[k]

            bad = await client.call_tool("record_success", {"trace_id": "0" * 32, "node_id": hit["id"]})
            assert bad.is_error and "unknown_trace" in bad.content[0].text
            s = _data(await client.call_tool("search", {"query": "lisp", "method": "bm25", "k": 3}))
            assert len(s["hits"]) == 3

    anyio.run(session)
    from sidelight.lanes.querylog import QueryLog

    rows = QueryLog(foldoc_copy / "state.sqlite").entries(50, interface="mcp")
    ops = [r["operation"] for r in rows]
    assert ops.count("channels") >= 2 and "feedback" in ops and "search" in ops
    assert all(r["interface"] == "mcp" for r in rows)
