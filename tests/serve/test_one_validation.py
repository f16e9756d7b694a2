"""Issue 45 item 9: MCP and HTTP refuse and accept the same numeric arguments (one validation, `check_int`)."""

from __future__ import annotations

import asyncio

import pytest

from sidelight.serve.app import create_app
from sidelight.serve.engine import Service
from sidelight.serve.mcp_server import build_server

from .conftest import api_client, hand_index


def _mcp(server, name: str, args: dict):
    """(ok, text) of one tool call."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        out = asyncio.run(server.call_tool(name, args))
        return True, out
    except ToolError as exc:
        return False, str(exc)


@pytest.mark.parametrize("k", [True, False, "5", 5, 2.0, 2.5, "abc", -1, 0, 101, None, [3]])
def test_search_k_same_answer_over_http_and_mcp(k):
    svc = Service(hand_index())
    client = api_client(create_app(svc))
    http = client.post("/api/search", json={"query": "alpha", "k": k})
    ok, text = _mcp(build_server(svc), "search", {"query": "alpha", "k": k})
    assert ok == (http.status_code == 200), (k, http.json(), text)
    if not ok:
        assert f"{http.json()['error']['code']}: " in text, (text, http.json())


@pytest.mark.parametrize("limit", [True, "3", 3, "x"])
def test_channels_limit_same_answer_over_http_and_mcp(limit):
    svc = Service(hand_index())
    client = api_client(create_app(svc))
    http = client.post("/api/channels", json={"query": "alpha", "limit": limit})
    ok, _ = _mcp(build_server(svc), "search_channels", {"query": "alpha", "limit": limit})
    assert ok == (http.status_code == 200)


# ---- --allow-host '*' and --host 0.0.0.0 --------------------------------------------------------------
def _ns(host="127.0.0.1", token=None, allow=()):
    import argparse

    return argparse.Namespace(host=host, token=token, allow_host=list(allow))


def test_wildcard_host_needs_a_token_even_on_loopback(monkeypatch):
    from sidelight.cli.serve_cmd import TOKEN_ENV, _access
    from sidelight.errors import InputError

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(InputError, match="DNS rebinding"):
        _access(_ns(allow=["*"]))
    assert _access(_ns(allow=["*"], token="t" * 20)) == ("t" * 20, None)


def test_every_interface_address_is_an_allowed_host():
    from sidelight.cli.serve_cmd import _access

    import shutil
    import subprocess

    if shutil.which("ip") is None:
        pytest.skip("needs iproute2's `ip` as the oracle")
    # the oracle: every address `ip -o addr` lists (iproute2, independent of sidelight's own reading)
    listed = {line.split()[3].split("/")[0] for line in
              subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout.splitlines()}
    v4 = {a for a in listed if ":" not in a}
    v6 = {f"[{a}]" for a in listed if ":" in a}
    _, hosts = _access(_ns(host="0.0.0.0", token="t" * 20))
    assert v4 and v4 <= set(hosts) and v6 <= set(hosts)
    client = api_client(create_app(Service(hand_index()), allowed_hosts=hosts, access_token="t" * 20),
                        headers={"Authorization": "Bearer " + "t" * 20})
    for addr in v4:
        assert client.get("/health", headers={"host": f"{addr}:8000"}).status_code == 200
    assert client.get("/health", headers={"host": "evil.example:8000"}).status_code == 400
