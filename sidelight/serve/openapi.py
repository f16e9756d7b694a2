"""The OpenAPI document of the HTTP API (`GET /openapi.json`): every route, body and answer."""

from __future__ import annotations

from .. import __version__ as VERSION
from ..lanes import budget as B
from ..lanes.registry import lanes
from .validate import (
    DEFAULT_DIAL,
    MAX_BODY_BYTES,
    MAX_DIAL,
    MAX_EDGES,
    MAX_JSON_DEPTH,
    MAX_K,
    MAX_LIMIT,
    MAX_NOTE_CHARS,
    MAX_QUERY_CHARS,
    PAGE_TOKEN_HEADER,
)


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _ok(schema: str, desc: str = "OK") -> dict:
    return {"description": desc, "content": {"application/json": {"schema": _ref(schema)}}}


_ERR = {"description": "refused: see error.code", "content": {"application/json": {"schema": _ref("Error")}}}


def _op(summary: str, ok: str, errors: tuple[int, ...] = (400,), body: str | None = None, params: list | None = None,
        desc: str | None = None) -> dict:
    op: dict = {"summary": summary, "responses": {"200": _ok(ok), **{str(s): _ERR for s in errors}}}
    if desc:
        op["description"] = desc
    if body:  # a POST: the CSRF checks of `_check_post`
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(body)}}}
        params = [*(params or []), {"name": PAGE_TOKEN_HEADER, "in": "header", "required": True,
                                    "schema": {"type": "string"}, "description": "the page token (GET /api/token)"}]
        op["responses"].update({"403": _ERR, "415": _ERR})
    if params:
        op["parameters"] = params
    return op


def _q(name: str, schema: dict, required: bool = False, desc: str = "") -> dict:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": desc}


QUERY = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}
BUDGET = {"type": "integer", "minimum": B.MIN_BUDGET_MS, "maximum": B.MAX_BUDGET_MS, "default": B.DEFAULT_BUDGET_MS,
          "description": "time budget for the call in ms; stages that do not fit are skipped or cut and labelled"}
TRACE = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
LABELS = {"budget_ms": {"type": "integer"}, "elapsed_ms": {"type": "number"},
          "fallback": {"type": ["string", "null"], "description": "path taken when a stage was replaced, e.g. 'lexical-only'"},
          "partial": {"type": "boolean", "description": "true when the time budget cut or skipped a stage"},
          "stages": {"type": "array", "items": _ref("Stage")}, "timings_ms": {"type": "object"}}


def openapi_document() -> dict:
    PARAMS = {"type": "object", "description": "the method's declared parameters (GET /api/methods lists them)"}
    gp_search = [_q("q", QUERY, True, "query"), _q("method", {"type": "string", "default": "bm25"}),
                 _q("k", {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10}), _q("budget_ms", BUDGET),
                 _q("params", {"type": "string", "description": "the method's parameters as a JSON object"})]
    FILTER = {"type": "object", "additionalProperties": {"type": "string"},
              "description": "only records whose metadata KEY equals VALUE, e.g. {\"pos\": \"noun\"}"}
    gp_search.append(_q("filter", {"type": "string", "description": "the metadata filter as a JSON object"}))
    gp_floor = [_q("q", QUERY, True, "query"), _q("n", {"type": "integer", "minimum": 1, "maximum": MAX_K}),
                _q("budget_ms", BUDGET)]
    read_only = "Read-only: the GET form stores nothing (no trace, no query-log row); POST logs the call."
    paths = {
        "/health": {"get": _op("Readiness: index loaded, dense model state, certificate status", "Health", ())},
        "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
        "/": {"get": {"summary": "The lab page (self-contained HTML)", "responses": {"200": {"description": "HTML"}}}},
        "/api/token": {"get": _op(f"The page token every POST sends as {PAGE_TOKEN_HEADER}", "PageToken", ())},
        "/api/methods": {"get": _op("Ranking methods by name", "Methods", ())},
        "/api/search": {
            "get": _op("Top-k hits of one named method", "SearchResult", (400, 422), params=gp_search,
                       desc=read_only),
            "post": _op("Top-k hits of one named method", "SearchResult", (400, 413, 422), body="SearchRequest",
                        desc="A dense method falls back to BM25 (fallback 'lexical-only') while the model loads, "
                             "and to BM25 with partial=true when it does not finish within the budget.")},
        "/api/lookup": {
            "get": _op("Words for a description (reverse dictionary), ranked by their best sense", "LookupResult",
                       (400, 422), params=[_q("q", QUERY, True, "the description"),
                                           _q("k", {"type": "integer", "minimum": 1, "maximum": MAX_K}),
                                           _q("method", {"type": "string"}), _q("pos", {"type": "string"})],
                       desc=read_only),
            "post": _op("Words for a description (reverse dictionary), ranked by their best sense", "LookupResult",
                        (400, 413, 422), body="LookupRequest")},
        "/api/channels": {
            "post": _op(f"Independent lanes ({', '.join(lane.name for lane in lanes())}), each with its own trace id",
                        "ChannelsResult",
                        (400, 413), body="ChannelsRequest",
                        desc="Never fused: no cross-lane score. Stores one trace per lane (POST only). While the "
                             "dense model loads, the answer has lexical and relation lanes only and says fallback "
                             "'lexical-only'.")},
        "/api/feedback": {"post": _op("Record that a hit of a trace was used (relation: strengthens its credited path)",
                                      "FeedbackResult", (400, 404, 413, 422), body="FeedbackRequest")},
        "/api/traces/{trace_id}": {"get": _op("A stored trace", "Trace", (400, 404), params=[
            {"name": "trace_id", "in": "path", "required": True, "schema": TRACE}])},
        "/api/edges": {"post": _op("Current weights of edges (base, learned delta, effective)", "EdgeWeights",
                                   (400, 413), body="EdgesRequest")},
        "/api/floor": {"get": _op("The floor (dense pool reranked under the budget)", "Labelled", (400, 422),
                                  params=gp_floor, desc=read_only),
                       "post": _op("The floor (dense pool reranked under the budget)", "Labelled", (400, 422),
                                   body="FloorRequest")},
        "/api/connections": {"post": _op("Connections with a dial (serendipity lane): floor + seated passages mixed "
                                         "in blind; the panel is withheld until /api/reveal", "Labelled",
                                         (400, 409, 501), body="ConnectionsRequest")},
        "/api/reveal": {"post": _op("Reveal the connections panel after the answer's SHA-256 is recorded", "Labelled",
                                    (400, 404, 409), body="RevealRequest")},
        "/api/verdicts": {"post": _op("Record a human verdict on a connection", "Labelled", (400, 404),
                                      body="VerdictRequest")},
        "/api/stats": {"get": _op("Corpus graph statistics and degree histogram", "Stats", ())},
        "/api/report": {"get": _op("The latest lab report under --lab DIR", "Report", ())},
        "/lab/report": {"get": {"summary": "The latest lab report as HTML",
                                "responses": {"200": {"description": "HTML"}, "404": _ERR}}},
        "/api/log": {"get": _op("The query log (newest first)", "Log", (400,), params=[
            _q("limit", {"type": "integer", "minimum": 1, "maximum": 10000, "default": 50})])},
    }
    lane = {"type": "object", "properties": {"trace_id": TRACE, "channel": {"type": "string"},
                                             "hits": {"type": "array", "items": {"type": "object"}},
                                             "params": {"type": "object"}}}
    schemas = {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["status", "code", "message"],
            "properties": {"status": {"type": "integer"}, "code": {"type": "string"}, "message": {"type": "string"}}}}},
        "Stage": {"type": "object", "properties": {"stage": {"type": "string"},
                                                   "status": {"enum": ["done", "skipped", "cut"]},
                                                   "reason": {"type": "string"}, "ms": {"type": "number"}}},
        "Labelled": {"type": "object", "properties": LABELS},
        "Health": {"type": "object", "properties": {
            "status": {"enum": ["ok", "starting", "degraded"]}, "ready": {"type": "boolean"},
            "index": {"type": "object"}, "dense": {"type": "object"}, "certificate": {"type": "object"}}},
        "Methods": {"type": "object", "properties": {"methods": {"type": "object"}}},
        "PageToken": {"type": "object", "properties": {"header": {"const": PAGE_TOKEN_HEADER},
                                                       "token": {"type": "string"}}},
        "SearchRequest": {"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
            "query": QUERY, "method": {"type": "string", "default": "bm25"},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10}, "budget_ms": BUDGET,
            "params": PARAMS, "filter": FILTER}},
        "LookupRequest": {"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
            "query": QUERY, "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10},
            "method": {"type": "string", "default": "bm25"},
            "pos": {"type": "string", "enum": ["noun", "verb", "adjective", "adverb"]}}},
        "LookupResult": {"type": "object", "properties": {
            "query": {"type": "string"}, "method": {"type": "string"}, "results": {"type": "array", "items": {
                "type": "object", "properties": {"word": {"type": "string"}, "rank": {"type": "integer"},
                                                 "score": {"type": "number"}, "synsets": {"type": "array"}}}}}},
        "SearchResult": {"type": "object", "properties": {
            "query": {"type": "string"}, "method": {"type": "string"}, "method_used": {"type": "string"},
            "k": {"type": "integer"}, "hits": {"type": "array", "items": {"type": "object"}}, **LABELS}},
        "ChannelsRequest": {"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
            "query": QUERY, "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10},
            "budget_ms": BUDGET, "dense": {"type": "boolean", "default": True,
                                           "description": "false leaves the dense lane out (true/false; "
                                                          "the strings true/false, 1/0, yes/no also do)"}}},
        "ChannelsResult": {"type": "object", "properties": {
            "query": {"type": "string"},
            **{x.name: {"description": x.description, **(lane if x.optional or x.floor else {"oneOf": [lane, {"type": "null"}]})}
               for x in lanes()},
            "agreement_node_ids": {"type": "array", "items": {"type": "string"}},
            "missing_lanes": {"type": "array", "items": {"type": "object"}},
            "descriptions": {"type": "object"}, **LABELS}},
        "FeedbackRequest": {"type": "object", "required": ["trace_id", "node_id"], "additionalProperties": False,
                            "properties": {"trace_id": TRACE, "node_id": {"type": "string", "minLength": 1}}},
        "FeedbackResult": {"type": "object", "properties": {
            "trace_id": TRACE, "node_id": {"type": "string"}, "channel": {"type": "string"}, "rank": {"type": "integer"},
            "already_recorded": {"type": "boolean"}, "note": {"type": "string"},
            "changed_edges": {"type": "array", "items": {"type": "object", "properties": {
                "source": {"type": "string"}, "target": {"type": "string"}, "type": {"type": "string"},
                "old_weight": {"type": "number"}, "new_weight": {"type": "number"}}}}}},
        "Trace": {"type": "object"},
        "EdgesRequest": {"type": "object", "required": ["edges"], "properties": {"edges": {
            "type": "array", "minItems": 1, "maxItems": MAX_EDGES, "items": {"type": "object", "required": ["source", "target", "type"]}}}},
        "EdgeWeights": {"type": "object", "properties": {"edges": {"type": "array", "items": {"type": "object"}}}},
        "FloorRequest": {"type": "object", "required": ["query"], "properties": {
            "query": QUERY, "n": {"type": "integer", "minimum": 1, "maximum": MAX_K}, "budget_ms": BUDGET}},
        "ConnectionsRequest": {"type": "object", "required": ["query"], "properties": {
            "query": QUERY, "dial": {"type": "integer", "minimum": 0, "maximum": MAX_DIAL, "default": DEFAULT_DIAL,
                                     "description": f"seats offered: 0 none, 1 one, up to {MAX_DIAL}"},
            "session_id": {"type": "string"}, "budget_ms": BUDGET}},
        "RevealRequest": {"type": "object", "required": ["trace_id", "answer_sha256"], "properties": {
            "trace_id": TRACE, "answer_sha256": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}}},
        "VerdictRequest": {"type": "object", "required": ["a_id", "b_id", "marker", "verdict", "who"], "properties": {
            "a_id": {"type": "string"}, "b_id": {"type": "string"}, "marker": {"type": "integer", "minimum": 0},
            "verdict": {"type": "string", "description": "useful or not useful (the verdict spellings the CLI accepts work too)"},
            "who": {"type": "string"}, "note": {"type": "string", "maxLength": MAX_NOTE_CHARS}, "trace_id": TRACE}},
        "Stats": {"type": "object"}, "Report": {"type": "object"},
        "Log": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object"}},
                                                 "total": {"type": "integer"}}},
    }
    return {"openapi": "3.1.0",
            "info": {"title": "sidelight", "version": VERSION,
                     "description": "Retrieval in separate lanes (never fused), feedback by trace id, time budgets "
                                    "with labelled fallbacks. Request bodies are limited to "
                                    f"{MAX_BODY_BYTES} bytes (413 above) and {MAX_JSON_DEPTH} levels of nesting. "
                                    f"Every POST needs the header {PAGE_TOKEN_HEADER} (GET /api/token), "
                                    "content-type application/json and, when it sends Origin, this server's origin. "
                                    "A server bound beyond loopback needs its access token on every request "
                                    "(Authorization: Bearer TOKEN)."},
            "paths": paths, "components": {"schemas": schemas, "securitySchemes": {
                "accessToken": {"type": "http", "scheme": "bearer",
                                "description": "required when the server was started with --token / SIDELIGHT_TOKEN"},
                "pageToken": {"type": "apiKey", "in": "header", "name": PAGE_TOKEN_HEADER}}}}
