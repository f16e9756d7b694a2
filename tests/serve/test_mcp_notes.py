"""An LLM's session over a folder of notes with the official MCP SDK client: search the lanes, read the
section a hit names, follow its links, report the record used; over stdio and over MCP's HTTP transport."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from sidelight.cli import main  # noqa: E402

NOTES = {
    "Gardening.md": "# Gardening\n\nTomatoes need sun. See [[Watering]] for the can, and [[Pests#Slugs|slugs]].\n",
    "Watering.md": "# Watering\n\nWater early in the morning with a can. Back to [[Gardening]].\n",
    "Pests.md": "# Pests\n\n## Slugs\n\nSlugs eat lettuce at night. Beer traps help.\n\n## Aphids\n\n"
                "Ladybirds eat aphids.\n",
}
CLI = ["-c", "import sys; from sidelight.cli import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def notes_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notes")
    for rel, text in NOTES.items():
        (root / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / rel).write_text(text, encoding="utf-8")
    assert main(["index", str(root / "vault"), "-o", str(root / "idx"), "-q"]) == 0
    return root / "idx"


def _data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content if result.structured_content is not None else json.loads(result.content[0].text)


async def _session(client) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"search_channels", "read", "links", "record_success"} <= tools
    reply = await client.call_tool("search_channels", {"query": "slugs eating lettuce", "limit": 5})
    env = _data(reply)
    assert "descriptions" not in env  # they travel once, in the tool description
    text = reply.content[0].text  # what the model reads: compact JSON of the same reply
    assert json.loads(text) == env and "\n" not in text and '": ' not in text
    assert "timings_ms" not in env and all("parts" not in h for h in (env["relation"] or {}).get("hits", []))
    hit = env["lexical"]["hits"][0]
    assert hit["id"] == "Pests.md"
    passage = hit["passage"]
    assert passage["section"] == "Pests > Slugs" and passage["location"] == {"path": "Pests.md", "lines": [3, 5],
                                                                             "anchor": "slugs"}
    assert "lettuce" in passage["snippet"]
    section = _data(await client.call_tool("read", {"id": f"{hit['id']}#{passage['section']}"}))
    assert section["text"].startswith("Slugs") and "Beer traps help." in section["text"]
    assert [o["section"] for o in section["outline"]] == ["Pests", "Pests > Slugs", "Pests > Aphids"]
    found = _data(await client.call_tool("links", {"id": "Pests.md"}))
    assert [(x["id"], x["section"]) for x in found["links_in"]] == [("Gardening.md", "Slugs")]  # the heading the link names, as written
    assert "Tomatoes need sun." in found["links_in"][0]["context"] or "slugs" in found["links_in"][0]["context"]
    rel = env["relation"]
    if rel and rel["hits"]:
        fb = _data(await client.call_tool("record_success", {"trace_id": rel["trace_id"], "node_id": rel["hits"][0]["id"]}))
        assert fb["channel"] == "relation"
    fb = _data(await client.call_tool("record_success", {"trace_id": env["lexical"]["trace_id"], "node_id": "Pests.md"}))
    assert fb["channel"] == "lexical" and fb["changed_edges"] == []
    bad = await client.call_tool("read", {"id": "Nowhere.md"})
    assert bad.is_error and "not_found" in bad.content[0].text


def test_stdio_session_reads_what_it_found(notes_index):
    async def run():
        async with Client(StdioServerParameters(command=sys.executable, args=[*CLI, "mcp", str(notes_index)]),
                          read_timeout_seconds=60) as client:
            await _session(client)

    anyio.run(run)


def test_http_session_reads_what_it_found(notes_index):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, *CLI, "mcp", str(notes_index), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        async def run():
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                await _session(client)

        anyio.run(run)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
