"""The HTTP API and the page (Starlette; run with uvicorn by `sidelight serve INDEX`).

The page at `/` (and its scripts at `/app/`) is the exported page in served mode, built by the web layer
(`sidelight.web.served.served_page`) and handed in as a `Page`; without one, `/` is not a route.

Every answer is JSON; every refusal is ``{"error": {"status", "code", "message", ...}}`` with a
4xx status (501 when the index lacks a lane's data, e.g. no serendipity certificate). Bodies above `MAX_BODY_BYTES` are refused
with 413 before they are read whole, bodies nested deeper than `MAX_JSON_DEPTH` with 400. `/openapi.json` (`openapi`) describes every route.

Guards (`guard`): the Host header, the access token, and every POST's origin, page token, content
type, size and depth are checked before a route runs. GETs write nothing: the GET forms of search and
floor store no trace and no log row.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .engine import Service
from .guard import Guard, error_response, read_body
from .openapi import openapi_document
from .requests import (
    ConnectionsRequest,
    EdgesRequest,
    FeedbackRequest,
    FloorRequest,
    LinksRequest,
    LogRequest,
    LookupRequest,
    ReadRequest,
    RevealRequest,
    SearchRequest,
    VerdictRequest,
    channels_call,
    channels_request,
    from_query,
    parse,
)
from .validate import MAX_BODY_BYTES, MAX_JSON_DEPTH, PAGE_TOKEN_HEADER, ApiError

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "PAGE_TOKEN_HEADER", "Page", "create_app"]  # the limits tests read


def _json(data: Any, status: int = 200, headers: dict | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


async def _args(request: Request, model) -> dict:
    """GET: query parameters (q is an alias of query) read into the model's declared types. POST: the JSON body."""
    if request.method in ("GET", "HEAD"):
        args = dict(request.query_params)
        if "q" in args and "query" not in args:
            args["query"] = args.pop("q")
        return from_query(model, args)
    return await read_body(request)


@dataclass(frozen=True)
class Page:
    """The page served at `/`: its HTML given the server's page token, and the folder of its built scripts
    (served at `/app/`; None when they are not built)."""

    html: Callable[[str], str]
    assets: Path | None = None


def create_app(service: Service, allowed_hosts: list[str] | None = None, access_token: str | None = None,
               page_token: str | None = None, site: Path | None = None, page: Page | None = None) -> Starlette:
    """The ASGI app over one `Service`.

    `allowed_hosts`: Host header check (DNS rebinding guard; None: no check). `access_token`: required on every
    request (``Authorization: Bearer``). `page_token`: the token every POST must carry (default: random).
    `site`: a folder `sidelight export-web` wrote for this index, served at /site/ (the page then offers
    feedback through this server). `page`: the page served at `/` (`sidelight.web.served.served_page`).
    """
    page_token = page_token or secrets.token_urlsafe(32)

    async def home(request: Request) -> Response:
        assert page is not None
        html = await run_in_threadpool(page.html, page_token)
        return HTMLResponse(html, headers={"cache-control": "no-store", "x-frame-options": "DENY"})

    async def token(request: Request) -> Response:
        return _json({"header": PAGE_TOKEN_HEADER, "token": page_token}, headers={"cache-control": "no-store"})

    async def health(request: Request) -> Response:
        return _json(await run_in_threadpool(service.health))

    async def openapi(request: Request) -> Response:
        return _json(openapi_document())

    async def methods(request: Request) -> Response:
        return _json({"methods": await run_in_threadpool(service.methods),
                      "parameters": await run_in_threadpool(service.method_specs)})

    async def search(request: Request) -> Response:
        r = parse(SearchRequest, await _args(request, SearchRequest), method_field="method")
        return _json(await run_in_threadpool(lambda: service.search(
            r.query, r.method, r.k, r.budget_ms, r.params, r.filter, r.snippet_chars, log=request.method == "POST")))

    async def read(request: Request) -> Response:
        r = parse(ReadRequest, from_query(ReadRequest, dict(request.query_params)))
        return _json(await run_in_threadpool(lambda: service.read(r.id, r.page, r.page_chars)))

    async def links(request: Request) -> Response:
        r = parse(LinksRequest, from_query(LinksRequest, dict(request.query_params)))
        return _json(await run_in_threadpool(lambda: service.links(r.id, r.hops)))

    async def lookup(request: Request) -> Response:
        r = parse(LookupRequest, await _args(request, LookupRequest))
        return _json(await run_in_threadpool(lambda: service.lookup(
            r.query, r.k, r.method or None, r.pos, r.prior, log=request.method == "POST")))

    async def channels(request: Request) -> Response:
        r = parse(channels_request(), await read_body(request))
        return _json(await run_in_threadpool(lambda: service.channels(**channels_call(r))))

    async def feedback(request: Request) -> Response:
        r = parse(FeedbackRequest, await read_body(request))
        return _json(await run_in_threadpool(service.feedback, r.trace_id, r.node_id))

    async def trace(request: Request) -> Response:
        return _json(await run_in_threadpool(service.trace, request.path_params["trace_id"]))

    async def edges(request: Request) -> Response:
        r = parse(EdgesRequest, await read_body(request))
        return _json(await run_in_threadpool(service.edges, [e.model_dump() for e in r.edges]))

    async def floor(request: Request) -> Response:
        r = parse(FloorRequest, await _args(request, FloorRequest))
        return _json(await run_in_threadpool(lambda: service.floor(r.query, r.n, r.budget_ms,
                                                                   log=request.method == "POST")))

    async def connections(request: Request) -> Response:
        r = parse(ConnectionsRequest, await read_body(request))
        return _json(await run_in_threadpool(service.connections, r.query, r.dial, r.budget_ms, r.session_id))

    async def reveal(request: Request) -> Response:
        r = parse(RevealRequest, await read_body(request))
        return _json(await run_in_threadpool(service.reveal, r.trace_id, r.answer_sha256))

    async def verdicts(request: Request) -> Response:
        r = parse(VerdictRequest, await read_body(request))
        return _json(await run_in_threadpool(service.verdict, r.a_id, r.b_id, r.marker, r.verdict, r.who, r.note,
                                             r.trace_id))

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
        r = parse(LogRequest, from_query(LogRequest, dict(request.query_params)))
        return _json(await run_in_threadpool(service.querylog, r.limit))

    async def on_api_error(request: Request, exc: ApiError) -> Response:
        return _json(exc.to_dict(), exc.status)

    async def on_http_error(request: Request, exc: HTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        msg = {404: f"no route {request.url.path}; see /openapi.json",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        return error_response(exc.status_code, code, msg)

    async def on_crash(request: Request, exc: Exception) -> Response:
        return error_response(500, "internal_error", f"{type(exc).__name__}: {exc}")

    @contextlib.asynccontextmanager
    async def lifespan(app):
        service.start()  # the dense model loads in the background; answers are labelled until it is ready
        yield

    GP = ["GET", "POST"]
    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/api/token", token, methods=["GET"]),
        Route("/api/methods", methods, methods=["GET"]),
        Route("/api/search", search, methods=GP),
        Route("/api/lookup", lookup, methods=GP),
        Route("/api/read", read, methods=["GET"]),
        Route("/api/links", links, methods=["GET"]),
        Route("/api/channels", channels, methods=["POST"]),
        Route("/api/feedback", feedback, methods=["POST"]),
        Route("/api/traces/{trace_id}", trace, methods=["GET"]),
        Route("/api/edges", edges, methods=["POST"]),
        Route("/api/floor", floor, methods=GP),
        Route("/api/connections", connections, methods=["POST"]),
        Route("/api/reveal", reveal, methods=["POST"]),
        Route("/api/verdicts", verdicts, methods=["POST"]),
        Route("/api/stats", stats, methods=["GET"]),
        Route("/api/report", report, methods=["GET"]),
        Route("/lab/report", report_html, methods=["GET"]),
        Route("/api/log", log, methods=["GET"]),
    ]
    if page is not None:
        routes.append(Route("/", home, methods=["GET"]))
        if page.assets is not None:
            routes.append(Mount("/app", app=StaticFiles(directory=str(page.assets))))
    if site is not None:
        routes.append(Mount("/site", app=StaticFiles(directory=str(site), html=True)))
    middleware = [Middleware(Guard, allowed_hosts=allowed_hosts, access_token=access_token, cookie_login=True)]
    handlers: dict[Any, Any] = {ApiError: on_api_error, HTTPException: on_http_error, Exception: on_crash}
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers,
                    lifespan=lifespan)
    app.state.service = service
    app.state.page_token = page_token
    return app
