"""Issue 42 item 5: HTTP and MCP share one typed request model per call, so they refuse the same
arguments with the same code and the same one-line message (official MCP SDK client; HTTP via the
test client). Oracle: JSON types as JSON Schema defines them (a boolean is not an integer, a string
is not a number) and the declared ranges (`validate.MAX_K`, the `relation` method's `hops` in 1..4)."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import pytest

from sidelight.lanes.registry import BaseLane
from sidelight.results import Hit, Results
from sidelight.serve.app import create_app
from sidelight.serve.engine import Service

from .conftest import api_client, hand_index


@dataclass(frozen=True)
class FirstLane(BaseLane):
    """A toy optional lane registered by a test alone: the first record, always."""

    def run(self, context, query, limit, budget):
        rec = context.index.corpus.records[0]
        trace = context.index.state.new_trace(query, self.name, [{"node_id": rec.id, "rank": 1, "score": 1.0}], {})
        return Results([Hit(rec.id, 1, 1.0, rec.title)], query, self.name, trace_id=trace, params={})

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


def dictionary():
    """A toy dictionary index (senses with a part of speech), where the lookup tool is offered."""
    from sidelight.corpus import Corpus, Record
    from sidelight.index import Index

    senses = [Record("n:1", "beacon", "a tower with a light that warns ships", {"pos": "noun"}, ("lighthouse",)),
              Record("n:2", "lamp", "a device that gives light", {"pos": "noun"}),
              Record("a:4", "bright", "emitting much light", {"pos": "adjective"})]
    return Index.build(Corpus("dict", senses, []), progress=False)


LOOKUP_REFUSED = [
    ("lookup", "/api/lookup", {"query": "light", "prior": "0.5"}, "bad_prior"),
    ("lookup", "/api/lookup", {"query": "light", "prior": True}, "bad_prior"),
    ("lookup", "/api/lookup", {"query": "light", "pos": 5}, "bad_pos"),
    ("lookup", "/api/lookup", {"query": "light", "pos": "thing"}, "bad_pos"),
    ("lookup", "/api/lookup", {"query": "light", "k": "3"}, "bad_k"),
    ("lookup", "/api/lookup", {"query": "light", "method": 5}, "bad_method"),
]
LOOKUP_ACCEPTED = [("lookup", "/api/lookup", {"query": "light that warns ships", "pos": "noun", "prior": 0}),
                   ("lookup", "/api/lookup", {"query": "light", "k": 2, "method": None, "pos": None})]


def test_lookup_over_http_and_mcp_alike():
    answers = _both([(t, r, a) for t, r, a, _ in LOOKUP_REFUSED] + LOOKUP_ACCEPTED, dictionary)
    for (_, _, args, code), (http, mcp) in zip(LOOKUP_REFUSED, answers):
        err = http.json()["error"]
        assert http.status_code == 400 and err["code"] == code, (args, err)
        assert mcp.is_error and mcp.content[0].text == f"{code}: {err['message']}", args
    for (_, _, args), (http, mcp) in zip(LOOKUP_ACCEPTED, answers[len(LOOKUP_REFUSED):]):
        assert http.status_code == 200 and not mcp.is_error, (args, http.text)
        assert http.json()["results"][0]["word"] == mcp.structured_content["results"][0]["word"]


def _both(calls, make_index=hand_index):
    """[(HTTP response, MCP CallToolResult)] for each (tool, route, args), over one service."""
    from mcp import Client

    from sidelight.serve.mcp_server import build_server

    svc = Service(make_index())
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


# ---- the OpenAPI document is generated from the same models ----------------------------------------------

def _validator(doc: dict, schema: dict):
    """A JSON Schema 2020-12 validator (the `jsonschema` package, independent of pydantic) of `schema`,
    resolving the document's #/components/schemas references."""
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    registry = Registry().with_resource("urn:doc", Resource.from_contents(doc, default_specification=DRAFT202012))
    return jsonschema.Draft202012Validator({"$ref": "urn:doc" + schema["$ref"]} if "$ref" in schema else schema,
                                           registry=registry)


def _answer_schema(doc: dict, path: str, verb: str, status: str = "200") -> dict:
    return doc["paths"][path][verb]["responses"][status]["content"]["application/json"]["schema"]


def _body_schema(doc: dict, path: str) -> dict:
    return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_every_generated_schema_is_valid_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    from sidelight.serve.openapi import openapi_document

    doc = openapi_document()
    for name, schema in doc["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(schema)
    for ops in doc["paths"].values():
        for op in ops.values():
            for p in op.get("parameters", []):
                jsonschema.Draft202012Validator.check_schema(p.get("schema") or p["content"]["application/json"]["schema"])


def test_request_schemas_refuse_and_accept_what_the_models_do():
    """The documented body schemas, read by jsonschema, agree with the models on the cases above (except
    2.0 for an integer: JSON Schema counts it an integer, the models do not; and the method-specific
    checks of `params`, which the schema offers as any method's parameters)."""
    from sidelight.serve.openapi import openapi_document

    doc = openapi_document()
    for _, route, args, code in REFUSED:
        if args.get("k") == 2.0 or code == "bad_params" and isinstance(args.get("params"), dict):
            continue
        assert not _validator(doc, _body_schema(doc, route)).is_valid(args), (route, args)
    for _, route, args in ACCEPTED:
        assert _validator(doc, _body_schema(doc, route)).is_valid(args), (route, args)


def test_real_answers_match_the_generated_schemas():
    from sidelight.serve.openapi import openapi_document

    svc = Service(hand_index())
    client = api_client(create_app(svc))
    doc = client.get("/openapi.json").json()
    assert doc == openapi_document()
    chan = client.post("/api/channels", json={"query": "alpha engine", "limit": 3})
    calls = [("/api/channels", "post", chan),
             ("/api/search", "post", client.post("/api/search", json={"query": "alpha", "k": 3})),
             ("/api/search", "get", client.get("/api/search?q=alpha&k=2&snippet_chars=0")),
             ("/api/feedback", "post", client.post("/api/feedback", json={
                 "trace_id": chan.json()["relation"]["trace_id"], "node_id": chan.json()["relation"]["hits"][0]["id"]})),
             ("/api/traces/{trace_id}", "get", client.get(f"/api/traces/{chan.json()['lexical']['trace_id']}")),
             ("/api/edges", "post", client.post("/api/edges", json={"edges": [{"source": "a", "target": "b",
                                                                                 "type": "link"}]})),
             ("/api/methods", "get", client.get("/api/methods")), ("/health", "get", client.get("/health")),
             ("/api/log", "get", client.get("/api/log?limit=5")), ("/api/token", "get", client.get("/api/token"))]
    for path, verb, r in calls:
        assert r.status_code == 200, (path, r.text)
        v = _validator(doc, _answer_schema(doc, path, verb))
        assert not list(v.iter_errors(r.json())), (path, [e.message for e in v.iter_errors(r.json())][:3])
    assert chan.json()["relation"]["hits"][0]["path"], "a relation hit with its path was checked"
    refused = client.post("/api/search", json={"query": "alpha", "k": "5"})
    assert refused.status_code == 400
    assert _validator(doc, _answer_schema(doc, "/api/search", "post", "400")).is_valid(refused.json())
    # the oracle can fail: an answer without its required keys, or with a wrong type, is refused
    v = _validator(doc, _answer_schema(doc, "/api/channels", "post"))
    broken = dict(chan.json())
    broken.pop("agreement_node_ids")
    assert not v.is_valid(broken)
    assert not v.is_valid({**chan.json(), "partial": "no"})
    svc.close()


def test_get_parameters_and_mcp_schemas_come_from_the_models():
    from mcp import Client

    from sidelight.serve.mcp_server import build_server
    from sidelight.serve.openapi import openapi_document
    from sidelight.serve.validate import MAX_K

    doc = openapi_document()
    get = {p["name"]: p for p in doc["paths"]["/api/search"]["get"]["parameters"]}
    assert set(get) == {"q", "method", "k", "budget_ms", "params", "filter", "snippet_chars"}
    assert get["k"]["schema"]["maximum"] == MAX_K and get["q"]["required"] is True
    assert "content" in get["params"]  # JSON text in the URL
    relation = doc["components"]["schemas"]["ChannelsRequest"]["properties"]["relation"]
    assert doc["components"]["schemas"][relation["$ref"].split("/")[-1]]["properties"]["hops"]["maximum"] == 4

    svc = Service(hand_index())
    tools = {}

    async def session():
        async with Client(build_server(svc)) as c:
            tools.update({t.name: t.input_schema for t in (await c.list_tools()).tools})

    anyio.run(session)
    svc.close()
    search = tools["search"]
    body = doc["components"]["schemas"]["SearchRequest"]
    assert search["additionalProperties"] is False and set(search["properties"]) == set(body["properties"])
    for key in ("k", "snippet_chars", "budget_ms", "query"):
        assert search["properties"][key] == body["properties"][key], key


def test_an_optional_lane_registered_later_gets_its_switch_in_the_request_model():
    """The channels request is built from the lane registry: an optional lane registered in this test
    alone can be left out with NAME: false (a JSON boolean, nothing else), and the OpenAPI body says so."""
    from sidelight.lanes.registry import registered
    from sidelight.serve.openapi import openapi_document

    with registered(FirstLane("first", "Toy lane: the first record, always.", optional=True)):
        svc = Service(hand_index())
        client = api_client(create_app(svc))
        assert client.post("/api/channels", json={"query": "alpha"}).json()["first"]["hits"][0]["id"] == "a"
        assert "first" not in client.post("/api/channels", json={"query": "alpha", "first": False}).json()
        bad = client.post("/api/channels", json={"query": "alpha", "first": "no"}).json()["error"]
        assert bad["code"] == "bad_first" and bad["message"] == "first must be true or false (a JSON boolean), got 'no'"
        body = openapi_document()["components"]["schemas"]["ChannelsRequest"]["properties"]
        assert body["first"]["type"] == "boolean" and body["first"]["default"] is True
        svc.close()
    assert "first" not in openapi_document()["components"]["schemas"]["ChannelsRequest"]["properties"]


def test_an_optional_lane_registered_later_is_switched_over_mcp_too():
    from mcp import Client

    from sidelight.lanes.registry import registered
    from sidelight.serve.mcp_server import build_server

    with registered(FirstLane("first", "Toy lane: the first record, always.", optional=True)):
        svc = Service(hand_index())
        http = api_client(create_app(svc)).post("/api/channels", json={"query": "alpha", "first": "no"}).json()
        got = {}

        async def session():
            async with Client(build_server(svc)) as c:
                got["on"] = await c.call_tool("search_channels", {"query": "alpha"})
                got["off"] = await c.call_tool("search_channels", {"query": "alpha", "first": False})
                got["bad"] = await c.call_tool("search_channels", {"query": "alpha", "first": "no"})
                got["schema"] = {t.name: t.input_schema for t in (await c.list_tools()).tools}["search_channels"]

        anyio.run(session)
        svc.close()
    assert got["on"].structured_content["first"]["hits"][0]["id"] == "a"
    assert "first" not in got["off"].structured_content
    assert got["bad"].is_error and got["bad"].content[0].text == f"bad_first: {http['error']['message']}"
    assert got["schema"]["properties"]["first"]["type"] == "boolean"
