"""Request guards of the HTTP API: Host and access token on every request (`Guard`, also in front of
the MCP app), and on every POST the CSRF checks (`check_post`) and a bounded JSON body (`read_body`).

`Guard` (outermost) checks the Host header against the served names (DNS rebinding) and, when the
server has an access token (required beyond loopback), ``Authorization: Bearer TOKEN`` on every request
(a browser opens ``/?token=TOKEN`` once and gets it as a cookie). Every POST (they are the calls that
store traces, feedback, verdicts or log rows) must also come from this origin (`Origin`, when sent,
names the Host), carry the server's page token (`PAGE_TOKEN_HEADER`; random per server start, embedded
in the page and given by ``GET /api/token``) and send ``content-type: application/json`` (optionally
``; charset=utf-8``). GETs write nothing: the GET forms of search and floor store no trace and no log row.
"""

from __future__ import annotations

import hmac
import json
import re
from urllib.parse import quote, unquote

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request, cookie_parser
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .validate import MAX_BODY_BYTES, MAX_JSON_DEPTH, PAGE_TOKEN_HEADER, ApiError

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
ACCESS_COOKIE = "sidelight_token"


def error_response(status: int, code: str, message: str, headers: dict | None = None, **details) -> JSONResponse:
    """The JSON refusal ``{"error": {...}}`` with its status."""
    return JSONResponse(ApiError(status, code, message, **details).to_dict(), status_code=status, headers=headers)


# ---- guards ----------------------------------------------------------------------------------------------

def host_name(host: str) -> str:
    """The name of a Host header without its port, lower-cased (``[::1]:8000`` -> ``[::1]``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[:host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _same_token(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


class Guard:
    """ASGI guard of every request: the Host header (`allowed_hosts`; None checks nothing) and the access
    token (`access_token`; None: no token needed). Missing token: 401; wrong token: 403; bad Host: 400.

    With `cookie_login`, a browser opening ``/?token=TOKEN`` is redirected to ``/`` with the token as an
    HttpOnly, SameSite=Strict cookie, which then counts like the header.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: list[str] | None = None, access_token: str | None = None,
                 cookie_login: bool = False) -> None:
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None or "*" in allowed_hosts else \
            {h.lower() for h in allowed_hosts}
        self.access_token = access_token or None
        self.cookie_login = cookie_login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket route here
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.refusal(scope)
        await (refusal or self.app)(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        """The response refusing this request, or None to let it through."""
        headers = Headers(scope=scope)
        if self.allowed_hosts is not None:
            host = host_name(headers.get("host", ""))
            if host not in self.allowed_hosts:
                return error_response(400, "bad_host", f"Host {host!r} is not a name of this server (allowed: "
                              f"{', '.join(sorted(self.allowed_hosts))}; see --allow-host)")
        if self.access_token is None:
            return None
        if self.cookie_login and scope.get("path") == "/":
            login = QueryParams(scope.get("query_string", b"").decode("latin-1")).get("token")
            if login is not None:
                if not _same_token(login, self.access_token):
                    return error_response(403, "bad_token", "the token in the address is not this server's access token")
                r = RedirectResponse("/", status_code=303)
                r.set_cookie(ACCESS_COOKIE, quote(self.access_token, safe=""), httponly=True, samesite="strict",
                             path="/")
                return r
        scheme, _, cred = headers.get("authorization", "").partition(" ")
        given = cred.strip() if scheme.lower() == "bearer" and cred.strip() else None
        if given is None and self.cookie_login:
            given = unquote(cookie_parser(headers.get("cookie", "")).get(ACCESS_COOKIE, "")) or None
        if given is None:
            return error_response(401, "missing_token", "this server needs its access token: send the header "
                          "'Authorization: Bearer TOKEN' (a browser: open /?token=TOKEN once)",
                          headers={"www-authenticate": 'Bearer realm="sidelight"'})
        if not _same_token(given, self.access_token):
            return error_response(403, "bad_token", "wrong access token", headers={"www-authenticate": 'Bearer error="invalid_token"'})
        return None


def _same_origin(origin: str, host: str) -> bool:
    host = host.strip().lower()
    origin = origin.strip().lower().rstrip("/")
    hosts = {host, host.removesuffix(":80"), host.removesuffix(":443")}
    return origin in {f"{s}://{h}" for s in ("http", "https") for h in hosts}


def _json_media_type(ctype: str | None) -> bool:
    """application/json, with at most a charset=utf-8 parameter."""
    media, *params = (ctype or "").split(";")
    if media.strip().lower() != "application/json":
        return False
    for p in params:
        key, _, value = p.partition("=")
        if p.strip() and (key.strip().lower() != "charset" or value.strip().strip('"').lower() != "utf-8"):
            return False
    return True


def check_post(request: Request) -> None:
    """The CSRF checks of a POST: its Origin (when sent) is this server, the page token, a JSON content type."""
    origin = request.headers.get("origin")
    if origin is not None and not _same_origin(origin, request.headers.get("host", "")):
        raise ApiError(403, "bad_origin", f"cross-origin request refused: Origin {origin!r} is not this server")
    given = request.headers.get(PAGE_TOKEN_HEADER)
    if given is None or not _same_token(given, request.app.state.page_token):
        raise ApiError(403, "bad_page_token", f"every POST needs the header {PAGE_TOKEN_HEADER}: the token of this "
                       "server's page (GET /api/token gives it)", header=PAGE_TOKEN_HEADER)
    ctype = request.headers.get("content-type")
    if not _json_media_type(ctype):
        raise ApiError(415, "unsupported_media_type", "send a JSON body with content-type application/json "
                       f"(optionally ; charset=utf-8), got {ctype!r}")


class _Depth:
    """Nesting depth of JSON text fed in chunks: brackets outside strings, so deep bodies are refused unparsed."""

    SIGNIFICANT = re.compile(rb'[\[\]{}"\\]')

    def __init__(self) -> None:
        self.depth, self.in_string, self.escaped = 0, False, False

    def feed(self, chunk: bytes, limit: int) -> bool:
        """True once the depth went over `limit`."""
        skip = 0 if self.escaped else -1  # the byte after a backslash is part of the escape
        self.escaped = False
        for m in self.SIGNIFICANT.finditer(chunk):
            i = m.start()
            if i == skip:
                continue
            c = chunk[i]
            if self.in_string:
                if c == 0x5C:
                    skip = i + 1
                    self.escaped = skip == len(chunk)
                elif c == 0x22:
                    self.in_string = False
            elif c == 0x22:
                self.in_string = True
            elif c in (0x5B, 0x7B):
                self.depth += 1
                if self.depth > limit:
                    return True
            elif c in (0x5D, 0x7D):
                self.depth -= 1
        return False


def _deep(limit: int) -> ApiError:
    return ApiError(400, "too_deep", f"JSON body nested deeper than {limit} levels", max_depth=limit)


async def read_body(request: Request) -> dict:
    """The JSON object body of a POST, after `check_post`, refusing oversized (413), deep or malformed (400) bodies."""
    check_post(request)
    declared = request.headers.get("content-length")
    too_large = False
    if declared is not None:
        try:
            too_large = int(declared) > MAX_BODY_BYTES
        except ValueError:
            raise ApiError(400, "bad_content_length", "content-length is not a number") from None
    chunks, size, depth = [], 0, _Depth()
    async for chunk in request.stream():
        if depth.feed(chunk, MAX_JSON_DEPTH):
            raise _deep(MAX_JSON_DEPTH)
        size += len(chunk)
        if too_large or size > MAX_BODY_BYTES:
            what = f"request body of {declared} bytes" if too_large else f"request body over {MAX_BODY_BYTES} bytes"
            raise ApiError(413, "body_too_large", f"{what}; at most {MAX_BODY_BYTES}", max_bytes=MAX_BODY_BYTES)
        chunks.append(chunk)
    if too_large:  # declared but never sent
        raise ApiError(413, "body_too_large", f"request body of {declared} bytes; at most {MAX_BODY_BYTES}",
                       max_bytes=MAX_BODY_BYTES)
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, "bad_json", f"body is not UTF-8 ({exc})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError:
        raise _deep(MAX_JSON_DEPTH) from None
    except ValueError as exc:
        raise ApiError(400, "bad_json", f"body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ApiError(400, "bad_json", "body must be a JSON object")
    if "\\u" in text:
        try:  # a lone surrogate escape ("\ud800") makes a string that can be neither stored nor answered
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(400, "bad_json", "body has a lone UTF-16 surrogate escape (\\ud800-\\udfff)") from None
    return data
