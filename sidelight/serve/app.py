"""The HTTP API and the lab page (Starlette; run with uvicorn by `sidelight serve INDEX`).

Every answer is JSON; every refusal is ``{"error": {"status", "code", "message", ...}}`` with a
4xx status (501 when the index lacks a lane's data, e.g. no serendipity certificate). Bodies above `MAX_BODY_BYTES` are refused
with 413 before they are read whole. `/openapi.json` describes every route.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .. import __version__ as VERSION
from . import budget as B
from .engine import Service
from .page import PAGE_HTML
from .validate import MAX_DIAL, MAX_K, MAX_LIMIT, MAX_QUERY_CHARS, ApiError

MAX_BODY_BYTES = 64 * 1024
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def _error(status: int, code: str, message: str, **details) -> JSONResponse:
    return _json(ApiError(status, code, message, **details).to_dict(), status)


async def _body(request: Request) -> dict:
    """The JSON object body, refusing oversized (413) or malformed (400) bodies."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > MAX_BODY_BYTES:
                raise ApiError(413, "body_too_large", f"request body of {declared} bytes; at most {MAX_BODY_BYTES}",
                               max_bytes=MAX_BODY_BYTES)
        except ValueError:
            raise ApiError(400, "bad_content_length", "content-length is not a number") from None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, "body_too_large", f"request body over {MAX_BODY_BYTES} bytes", max_bytes=MAX_BODY_BYTES)
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    ctype = request.headers.get("content-type", "")
    if ctype and "json" not in ctype:
        raise ApiError(415, "unsupported_media_type", f"send a JSON body (content-type application/json), got {ctype!r}")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "bad_json", f"body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ApiError(400, "bad_json", "body must be a JSON object")
    return data


async def _args(request: Request) -> dict:
    """GET: query parameters (q is an alias of query). POST: the JSON body."""
    if request.method == "GET":
        args = dict(request.query_params)
        if "q" in args and "query" not in args:
            args["query"] = args.pop("q")
        return args
    return await _body(request)


def _only(args: dict, allowed: set[str]) -> dict:
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise ApiError(400, "unknown_field", f"unknown field {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}")
    return args


def create_app(service: Service, allowed_hosts: list[str] | None = None) -> Starlette:
    """The ASGI app over one `Service`. `allowed_hosts`: Host header check (DNS rebinding guard)."""

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE_HTML, headers={"cache-control": "no-store"})

    async def health(request: Request) -> Response:
        return _json(await run_in_threadpool(service.health))

    async def openapi(request: Request) -> Response:
        return _json(openapi_document())

    async def methods(request: Request) -> Response:
        return _json({"methods": await run_in_threadpool(service.methods)})

    async def search(request: Request) -> Response:
        a = _only(await _args(request), {"query", "method", "k", "budget_ms"})
        return _json(await run_in_threadpool(service.search, a.get("query"), a.get("method") or "bm25", a.get("k"),
                                             a.get("budget_ms")))

    async def channels(request: Request) -> Response:
        a = _only(await _args(request), {"query", "limit", "budget_ms", "dense"})
        dense = a.get("dense")
        if isinstance(dense, str):
            dense = dense.lower() not in ("0", "false", "no")
        return _json(await run_in_threadpool(service.channels, a.get("query"), a.get("limit"), a.get("budget_ms"),
                                             dense))

    async def feedback(request: Request) -> Response:
        a = _only(await _body(request), {"trace_id", "node_id"})
        return _json(await run_in_threadpool(service.feedback, a.get("trace_id"), a.get("node_id")))

    async def trace(request: Request) -> Response:
        return _json(await run_in_threadpool(service.trace, request.path_params["trace_id"]))

    async def edges(request: Request) -> Response:
        a = _only(await _body(request), {"edges"})
        return _json(await run_in_threadpool(service.edges, a.get("edges")))

    async def floor(request: Request) -> Response:
        a = _only(await _args(request), {"query", "n", "budget_ms"})
        return _json(await run_in_threadpool(service.floor, a.get("query"), a.get("n"), a.get("budget_ms")))

    async def connections(request: Request) -> Response:
        a = _only(await _args(request), {"query", "dial", "budget_ms", "session_id"})
        return _json(await run_in_threadpool(service.connections, a.get("query"), a.get("dial"), a.get("budget_ms"),
                                             a.get("session_id")))

    async def reveal(request: Request) -> Response:
        a = _only(await _body(request), {"trace_id", "answer_sha256"})
        return _json(await run_in_threadpool(service.reveal, a.get("trace_id"), a.get("answer_sha256")))

    async def verdicts(request: Request) -> Response:
        a = _only(await _body(request), {"a_id", "b_id", "marker", "verdict", "who", "note", "trace_id"})
        return _json(await run_in_threadpool(service.verdict, a.get("a_id"), a.get("b_id"), a.get("marker"),
                                             a.get("verdict"), a.get("who"), a.get("note"), a.get("trace_id")))

    async def stats(request: Request) -> Response:
        return _json(await run_in_threadpool(service.stats))

    async def report(request: Request) -> Response:
        return _json(await run_in_threadpool(service.report))

    async def report_html(request: Request) -> Response:
        html = await run_in_threadpool(service.report_html)
        if html is None:
            raise ApiError(404, "no_report", service.report()["reason"])
        return HTMLResponse(html)

    async def log(request: Request) -> Response:
        return _json(await run_in_threadpool(service.querylog, request.query_params.get("limit")))

    async def on_api_error(request: Request, exc: ApiError) -> Response:
        return _json(exc.to_dict(), exc.status)

    async def on_http_error(request: Request, exc: HTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        msg = {404: f"no route {request.url.path}; see /openapi.json",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        return _error(exc.status_code, code, msg)

    async def on_crash(request: Request, exc: Exception) -> Response:
        return _error(500, "internal_error", f"{type(exc).__name__}: {exc}")

    @contextlib.asynccontextmanager
    async def lifespan(app):
        service.start()  # the dense model loads in the background; answers are labelled until it is ready
        yield

    GP = ["GET", "POST"]
    routes = [
        Route("/", page, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/api/methods", methods, methods=["GET"]),
        Route("/api/search", search, methods=GP),
        Route("/api/channels", channels, methods=GP),
        Route("/api/feedback", feedback, methods=["POST"]),
        Route("/api/traces/{trace_id}", trace, methods=["GET"]),
        Route("/api/edges", edges, methods=["POST"]),
        Route("/api/floor", floor, methods=GP),
        Route("/api/connections", connections, methods=GP),
        Route("/api/reveal", reveal, methods=["POST"]),
        Route("/api/verdicts", verdicts, methods=["POST"]),
        Route("/api/stats", stats, methods=["GET"]),
        Route("/api/report", report, methods=["GET"]),
        Route("/lab/report", report_html, methods=["GET"]),
        Route("/api/log", log, methods=["GET"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={ApiError: on_api_error, HTTPException: on_http_error, Exception: on_crash},
                    lifespan=lifespan)
    app.state.service = service
    return app


# ---- OpenAPI ------------------------------------------------------------------------------------------

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
    if body:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(body)}}}
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
    gp_search = [_q("q", QUERY, True, "query"), _q("method", {"type": "string", "default": "bm25"}),
                 _q("k", {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10}), _q("budget_ms", BUDGET)]
    gp_channels = [_q("q", QUERY, True, "query"),
                   _q("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10}),
                   _q("budget_ms", BUDGET), _q("dense", {"type": "boolean"}, desc="false leaves the dense lane out")]
    paths = {
        "/health": {"get": _op("Readiness: index loaded, dense model state, certificate status, features", "Health", ())},
        "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
        "/": {"get": {"summary": "The lab page (self-contained HTML)", "responses": {"200": {"description": "HTML"}}}},
        "/api/methods": {"get": _op("Ranking methods by name", "Methods", ())},
        "/api/search": {
            "get": _op("Top-k hits of one named method", "SearchResult", (400, 422), params=gp_search),
            "post": _op("Top-k hits of one named method", "SearchResult", (400, 413, 422), body="SearchRequest",
                        desc="A dense method falls back to BM25 (fallback 'lexical-only') while the model loads, "
                             "and to BM25 with partial=true when it does not finish within the budget.")},
        "/api/channels": {
            "get": _op("Independent lanes (lexical, dense, relation), each with its own trace id", "ChannelsResult",
                       params=gp_channels),
            "post": _op("Independent lanes (lexical, dense, relation), each with its own trace id", "ChannelsResult",
                        (400, 413), body="ChannelsRequest",
                        desc="Never fused: no cross-lane score. While the dense model loads, the answer has lexical "
                             "and relation lanes only and says fallback 'lexical-only'.")},
        "/api/feedback": {"post": _op("Record that a hit of a trace was used (relation: strengthens its credited path)",
                                      "FeedbackResult", (400, 404, 413, 422), body="FeedbackRequest")},
        "/api/traces/{trace_id}": {"get": _op("A stored trace", "Trace", (400, 404), params=[
            {"name": "trace_id", "in": "path", "required": True, "schema": TRACE}])},
        "/api/edges": {"post": _op("Current weights of edges (base, learned delta, effective)", "EdgeWeights",
                                   (400, 413), body="EdgesRequest")},
        "/api/floor": {"post": _op("The floor (dense pool reranked under the budget)", "Labelled", (400, 422),
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
            "index": {"type": "object"}, "dense": {"type": "object"}, "certificate": {"type": "object"},
            "features": {"type": "object"}}},
        "Methods": {"type": "object", "properties": {"methods": {"type": "object"}}},
        "SearchRequest": {"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
            "query": QUERY, "method": {"type": "string", "default": "bm25"},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 10}, "budget_ms": BUDGET}},
        "SearchResult": {"type": "object", "properties": {
            "query": {"type": "string"}, "method": {"type": "string"}, "method_used": {"type": "string"},
            "k": {"type": "integer"}, "hits": {"type": "array", "items": {"type": "object"}}, **LABELS}},
        "ChannelsRequest": {"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
            "query": QUERY, "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10},
            "budget_ms": BUDGET, "dense": {"type": "boolean"}}},
        "ChannelsResult": {"type": "object", "properties": {
            "query": {"type": "string"}, "lexical": lane, "dense": lane, "relation": {"oneOf": [lane, {"type": "null"}]},
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
            "type": "array", "minItems": 1, "maxItems": 500, "items": {"type": "object", "required": ["source", "target", "type"]}}}},
        "EdgeWeights": {"type": "object", "properties": {"edges": {"type": "array", "items": {"type": "object"}}}},
        "FloorRequest": {"type": "object", "required": ["query"], "properties": {
            "query": QUERY, "n": {"type": "integer", "minimum": 1, "maximum": MAX_K}, "budget_ms": BUDGET}},
        "ConnectionsRequest": {"type": "object", "required": ["query"], "properties": {
            "query": QUERY, "dial": {"type": "integer", "minimum": 0, "maximum": MAX_DIAL, "default": 3,
                                     "description": "seats offered: 0 none, 1 one, up to 28"},
            "session_id": {"type": "string"}, "budget_ms": BUDGET}},
        "RevealRequest": {"type": "object", "required": ["trace_id", "answer_sha256"], "properties": {
            "trace_id": TRACE, "answer_sha256": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}}},
        "VerdictRequest": {"type": "object", "required": ["a_id", "b_id", "marker", "verdict", "who"], "properties": {
            "a_id": {"type": "string"}, "b_id": {"type": "string"}, "marker": {"type": "integer", "minimum": 0},
            "verdict": {"type": "string", "description": "useful / not useful (aliases: petunia / whale)"},
            "who": {"type": "string"}, "note": {"type": "string", "maxLength": 2000}, "trace_id": TRACE}},
        "Stats": {"type": "object"}, "Report": {"type": "object"},
        "Log": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object"}},
                                                 "total": {"type": "integer"}}},
    }
    return {"openapi": "3.1.0",
            "info": {"title": "sidelight", "version": VERSION,
                     "description": "Retrieval in separate lanes (never fused), feedback by trace id, time budgets "
                                    "with labelled fallbacks. Request bodies are limited to "
                                    f"{MAX_BODY_BYTES} bytes (413 above)."},
            "paths": paths, "components": {"schemas": schemas}}
