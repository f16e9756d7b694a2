"""Issue 42 item 5: HTTP and MCP share one typed request model per call, so they refuse the same
arguments with the same code and the same one-line message (official MCP SDK client; HTTP via the
test client). Oracle: JSON types as JSON Schema defines them (a boolean is not an integer, a string
is not a number) and the declared ranges (`validate.MAX_K`, the `relation` method's `hops` in 1..4)."""

from __future__ import annotations

import anyio
import pytest

from sidelight.serve.app import create_app
from sidelight.serve.engine import Service

from .conftest import api_client, hand_index

pytest.importorskip("mcp")

# (MCP tool, HTTP route, arguments, the code both must answer)
REFUSED = [
    ("search", "/api/search", {"query": "alpha", "k": True}, "bad_k"),
    ("search", "/api/search", {"query": "alpha", "k": "5"}, "bad_k"),
    ("search", "/api/search", {"query": "alpha", "k": 2.0}, "bad_k"),
    ("search", "/api/search", {"query": "alpha", "k": 0}, "k_out_of_range"),
    ("search", "/api/search", {"query": "alpha", "k": 101}, "k_out_of_range"),
    ("search", "/api/search", {"query": "alpha", "k": None}, "bad_k"),
    ("search", "/api/search", {"query": 7}, "bad_query"),
    ("search", "/api/search", {"k": 3}, "missing_query"),
    ("search", "/api/search", {"query": "alpha", "method": None}, "bad_method"),
    ("search", "/api/search", {"query": "alpha", "snippet_chars": True}, "bad_snippet_chars"),
    ("search", "/api/search", {"query": "alpha", "params": '{"alpha": 0.8}', "method": "bm25+ppr"}, "bad_params"),
    ("search", "/api/search", {"query": "alpha", "params": {"alpha": "0.8"}, "method": "bm25+ppr"}, "bad_params"),
    ("search", "/api/search", {"query": "alpha", "params": {"n_seeds": True}, "method": "bm25+ppr"}, "bad_params"),
    ("search", "/api/search", {"query": "alpha", "params": {"alpha": 2}, "method": "bm25+ppr"}, "bad_params"),
    ("search", "/api/search", {"query": "alpha", "params": {"nope": 1}, "method": "bm25+ppr"}, "bad_params"),
    ("search", "/api/search", {"query": "alpha", "filter": '{"pos": "noun"}'}, "bad_filter"),
    ("search", "/api/search", {"query": "alpha", "filter": {"pos": 5}}, "bad_filter"),
    ("search", "/api/search", {"query": "alpha", "surprise": 1}, "unknown_field"),
    ("search_channels", "/api/channels", {"query": "alpha", "limit": True}, "bad_limit"),
    ("search_channels", "/api/channels", {"query": "alpha", "limit": "3"}, "bad_limit"),
    ("search_channels", "/api/channels", {"query": "alpha", "limit": 51}, "limit_out_of_range"),
    ("search_channels", "/api/channels", {"query": "alpha", "dense": "yes"}, "bad_dense"),
    ("search_channels", "/api/channels", {"query": "alpha", "dense": 1}, "bad_dense"),
    ("search_channels", "/api/channels", {"query": "alpha", "dense": "maybe"}, "bad_dense"),
    ("search_channels", "/api/channels", {"query": "alpha", "relation": {"hops": "2"}}, "bad_relation"),
    ("search_channels", "/api/channels", {"query": "alpha", "relation": {"hops": 9}}, "bad_relation"),
    ("search_channels", "/api/channels", {"query": "alpha", "relation": {"rank": "best"}}, "bad_relation"),
    ("search_channels", "/api/channels", {"query": "alpha", "surprise": 1}, "unknown_field"),
    ("record_success", "/api/feedback", {"trace_id": 5, "node_id": "a"}, "bad_trace_id"),
    ("record_success", "/api/feedback", {"trace_id": "0" * 32}, "missing_node_id"),
    ("record_success", "/api/feedback", {"trace_id": "0" * 32, "node_id": "a", "weight": 9}, "unknown_field"),
]
ACCEPTED = [
    ("search", "/api/search", {"query": "alpha", "k": 5}),
    ("search", "/api/search", {"query": "alpha", "method": "bm25+ppr", "params": {"alpha": 0.8, "n_seeds": 3}}),
    ("search", "/api/search", {"query": "alpha", "method": "bm25+ppr", "params": {"alpha": 1}}),  # an int is a number
    ("search", "/api/search", {"query": "alpha", "filter": {"pos": "noun"}}),
    ("search_channels", "/api/channels", {"query": "alpha", "limit": 3, "dense": False}),
    ("search_channels", "/api/channels", {"query": "alpha", "relation": {"hops": 1, "rank": "activation"}}),
]


def _both(calls):
    """[(HTTP response, MCP CallToolResult)] for each (tool, route, args), over one service."""
    from mcp import Client

    from sidelight.serve.mcp_server import build_server

    svc = Service(hand_index())
    client = api_client(create_app(svc))
    out = []

    async def session():
        async with Client(build_server(svc)) as c:
            for tool, route, args in calls:
                out.append((client.post(route, json=args), await c.call_tool(tool, args)))

    anyio.run(session)
    svc.close()
    return out


def test_http_and_mcp_refuse_alike():
    answers = _both([(t, r, a) for t, r, a, _ in REFUSED])
    for (tool, _, args, code), (http, mcp) in zip(REFUSED, answers):
        assert http.status_code == 400, (args, http.json())
        err = http.json()["error"]
        assert err["code"] == code, (args, err)
        assert "\n" not in err["message"] and err["message"]
        assert mcp.is_error, (tool, args, mcp)
        assert mcp.content[0].text == f"{code}: {err['message']}", (tool, args)


def test_http_and_mcp_accept_alike():
    for (tool, _, args), (http, mcp) in zip(ACCEPTED, _both(ACCEPTED)):
        assert http.status_code == 200, (args, http.json())
        assert not mcp.is_error, (tool, args, mcp.content[0].text)


def test_a_service_refusal_is_the_same_message_too():
    """What only the service can know (no such trace) reads alike as well: no SDK prefix on the MCP side."""
    calls = [("record_success", "/api/feedback", {"trace_id": "0" * 32, "node_id": "a"})]
    (http, mcp), = _both(calls)
    err = http.json()["error"]
    assert http.status_code == 404 and err["code"] == "unknown_trace"
    assert mcp.is_error and mcp.content[0].text == f"unknown_trace: {err['message']}"
