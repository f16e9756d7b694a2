"""The OpenAPI document of the HTTP API (`GET /openapi.json`), generated from the typed models:
request bodies and GET parameters from `requests` (the models that validate HTTP and MCP calls),
answers from `answers`. Only the routes and their summaries are written here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .. import __version__ as VERSION
from ..lanes.registry import lanes
from ..methods import method_specs
from . import answers as A
from . import requests as R
from .validate import MAX_BODY_BYTES, MAX_JSON_DEPTH, PAGE_TOKEN_HEADER

REF = "#/components/schemas/{model}"
READ_ONLY = "Read-only: the GET form stores nothing (no trace, no query-log row); POST logs the call."
DENSE_FALLBACK = ("A dense method falls back to BM25 (fallback 'lexical-only') while the model loads, and to BM25 "
                  "with partial=true when it does not finish within the budget.")


def _routes() -> list[tuple[str, str, str, Any, Any, tuple[int, ...], str]]:
    """(path, verb, summary, request model (body of a POST, query of a GET) or None, answer model, refusals, note)."""
    lane_names = ", ".join(lane.name for lane in lanes())
    search, lookup, floor = "Top-k hits of one named method", "Words for a description (reverse dictionary), " \
        "ranked by their best sense", "The floor (dense pool reranked under the budget)"
    return [
        ("/health", "get", "Readiness: index loaded, dense model state, certificate status", None, A.Health, (), ""),
        ("/api/token", "get", f"The page token every POST sends as {PAGE_TOKEN_HEADER}", None, A.PageToken, (), ""),
        ("/api/methods", "get", "Ranking methods by name, with their declared parameters", None, A.Methods, (), ""),
        ("/api/search", "get", search, R.SearchRequest, A.SearchResult, (400, 422), READ_ONLY),
        ("/api/search", "post", search, R.SearchRequest, A.SearchResult, (400, 413, 422), DENSE_FALLBACK),
        ("/api/lookup", "get", lookup, R.LookupRequest, A.LookupResult, (400, 422), READ_ONLY),
        ("/api/lookup", "post", lookup, R.LookupRequest, A.LookupResult, (400, 413, 422), ""),
        ("/api/read", "get", "A record (or ID#section): a page of its text, its outline and links", R.ReadRequest,
         A.Document, (400, 404), ""),
        ("/api/links", "get", "A record's links out and in with their sentences", R.LinksRequest, A.Document,
         (400, 404), ""),
        ("/api/channels", "post", f"Independent lanes ({lane_names}), each with its own trace id",
         R.channels_request(), A.channels_result(), (400, 413),
         "Never fused: no cross-lane score. Stores one trace per lane (POST only). While the dense model loads, "
         "the answer has no dense lane and says fallback 'lexical-only'."),
        ("/api/feedback", "post", "Record that a hit of a trace was used (relation: strengthens its credited path)",
         R.FeedbackRequest, A.FeedbackResult, (400, 404, 413, 422), ""),
        ("/api/traces/{trace_id}", "get", "A stored trace", None, A.Trace, (400, 404), ""),
        ("/api/edges", "post", "Current weights of edges (base, learned delta, effective)", R.EdgesRequest,
         A.EdgeWeights, (400, 413), ""),
        ("/api/floor", "get", floor, R.FloorRequest, A.Labelled, (400, 422), READ_ONLY),
        ("/api/floor", "post", floor, R.FloorRequest, A.Labelled, (400, 413, 422), ""),
        ("/api/connections", "post", "Connections with a dial (serendipity lane): floor + seated passages mixed in "
         "blind; the panel is withheld until /api/reveal", R.ConnectionsRequest, A.Labelled, (400, 409, 501), ""),
        ("/api/reveal", "post", "Reveal the connections panel after the answer's SHA-256 is recorded",
         R.RevealRequest, A.Labelled, (400, 404, 409), ""),
        ("/api/verdicts", "post", "Record a human verdict on a connection", R.VerdictRequest, A.Labelled,
         (400, 404), ""),
        ("/api/stats", "get", "Corpus graph statistics and degree histogram", None, A.Stats, (), ""),
        ("/api/report", "get", "The latest lab report under --lab DIR", None, A.Report, (), ""),
        ("/api/log", "get", "The query log (newest first)", R.LogRequest, A.Log, (400,), ""),
    ]


def _query_parameters(model: type[BaseModel], schema: dict) -> list[dict]:
    """A GET's query parameters: the model's fields (query as q; an object as JSON text)."""
    out = []
    for name, field in model.model_fields.items():
        prop = schema["properties"][name]
        param: dict[str, Any] = {"name": "q" if name == "query" else name, "in": "query",
                                 "required": field.is_required()}
        if "description" in prop:
            param["description"] = prop["description"]
        if R.json_types(prop) & {"object"}:  # JSON text in the URL
            param["content"] = {"application/json": {"schema": prop}}
        else:
            param["schema"] = prop
        out.append(param)
    return out


def _json(ref: dict, desc: str = "OK") -> dict:
    return {"description": desc, "content": {"application/json": {"schema": ref}}}


def openapi_document() -> dict:
    routes = _routes()
    models = {m for r in routes for m in (r[3], r[4]) if m is not None} | {A.Error}
    methods = {s.name: R.method_params(s.name) for s in method_specs()}
    keyed: list[tuple[type[BaseModel], Literal["validation"]]] = [
        (m, "validation") for m in sorted(models | set(methods.values()), key=lambda m: m.__name__)]
    refs, defs = models_json_schema(keyed, ref_template=REF, schema_generator=R.Schema)
    schemas = defs.get("$defs", {})
    # a method's params: the model built from that method's declaration (the request names the method)
    schemas["SearchRequest"]["properties"]["params"]["anyOf"] = [refs[(m, "validation")] for m in methods.values()]
    error = {"description": "refused: see error.code", "content": {"application/json": {"schema": refs[(A.Error, "validation")]}}}
    paths: dict[str, dict] = {
        "/": {"get": {"summary": "The page in served mode: the lab view (HTML; its scripts under /app/; served by "
                              "`sidelight serve`)", "responses": {"200": {"description": "HTML"}}}},
        "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
        "/lab/report": {"get": {"summary": "The latest lab report as HTML",
                                "responses": {"200": {"description": "HTML"}, "404": error}}},
    }
    for path, verb, summary, request, answer, refusals, note in routes:
        op: dict[str, Any] = {"summary": summary, "responses": {"200": _json(refs[(answer, "validation")]),
                                                                **{str(s): error for s in refusals}}}
        if note:
            op["description"] = note
        params: list[dict] = []
        if path.endswith("{trace_id}"):
            params.append({"name": "trace_id", "in": "path", "required": True,
                           "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}})
        if request is not None and verb == "get":
            params += _query_parameters(request, schemas[request.__name__])
        if verb == "post":  # the CSRF checks of `app._check_post`
            op["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": refs[(request, "validation")]}}}
            params.append({"name": PAGE_TOKEN_HEADER, "in": "header", "required": True, "schema": {"type": "string"},
                           "description": "the page token (GET /api/token)"})
            op["responses"].update({"403": error, "415": error})
        if params:
            op["parameters"] = params
        paths.setdefault(path, {})[verb] = op
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
