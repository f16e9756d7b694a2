"""Serve security (issue 11): CSRF guards on POST, GET writes nothing, access token beyond loopback (HTTP and
MCP over HTTP), deep JSON, strict booleans and MCP arguments, a corrupt state.sqlite, and a fuzz of validation."""

from __future__ import annotations

import argparse
import json
import sqlite3

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from sidelight.cli import main
from sidelight.index import Index
from sidelight.serve.app import MAX_JSON_DEPTH, PAGE_TOKEN_HEADER, create_app
from sidelight.serve.guard import _Depth
from sidelight.serve.engine import Service
from sidelight.web.served import served_page

from tests.serve.conftest import api_client, hand_index

ACCESS = "s3cret-access-token-0123456789"
EVIL = {"Origin": "http://evil.example"}


def save_hand(path):
    index = hand_index()
    index.dense = None  # the fake dense store is not saved
    index.save(path)
    return path


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved hand-made index (its own state.sqlite), served over HTTP."""
    path = save_hand(tmp_path_factory.mktemp("security") / "hand")
    svc = Service(Index.load(path))
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def app(saved):
    return create_app(saved, page=served_page(saved))


@pytest.fixture(scope="module")
def client(app):
    with api_client(app) as c:
        yield c


def saved_hand_index(path) -> None:
    index = hand_index()
    index.dense = None  # the fake dense store lives in memory only
    index.save(path)


def rows(service: Service, table: str) -> int:
    """Rows of `table` in the service's state.sqlite (0 while the table does not exist yet)."""
    with sqlite3.connect(service.index.state.path) as con:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            return 0
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def err(r, status, code):
    assert r.status_code == status, r.text
    e = r.json()["error"]
    assert e["status"] == status and e["code"] == code and e["message"], e
    return e


def relation_hit(client) -> tuple[str, str, dict]:
    """(trace id, node id, its credited path's first edge) of a relation hit."""
    rel = client.post("/api/channels", json={"query": "alpha engine"}).json()["relation"]
    hit = next(h for h in rel["hits"] if h["path"])
    e = hit["path"][0]
    return rel["trace_id"], hit["id"], {"source": e["source"], "target": e["target"], "type": e["type"]}


def weight(client, edge: dict) -> float:
    return client.post("/api/edges", json={"edges": [edge]}).json()["edges"][0]["weight"]


# ---- item 6: CSRF ---------------------------------------------------------------------------------------------

def test_csrf_feedback_from_evil_origin_without_content_type(app, client, saved):
    trace, node, edge = relation_hit(client)
    before, successes = weight(client, edge), rows(saved, "successes")
    body = json.dumps({"trace_id": trace, "node_id": node}).encode()
    with TestClient(app) as bare:  # what a cross-site form or fetch can send: no page token, no JSON type
        err(bare.post("/api/feedback", content=body, headers=EVIL), 403, "bad_origin")
        err(bare.post("/api/feedback", content=body, headers={"content-type": "text/plain; charset=json", **EVIL}),
            403, "bad_origin")
        err(bare.post("/api/feedback", content=body), 403, "bad_page_token")
    # even with the page token, a foreign Origin or a non-JSON type is refused
    err(client.post("/api/feedback", content=body, headers=EVIL), 403, "bad_origin")
    err(client.post("/api/feedback", content=body), 415, "unsupported_media_type")
    err(client.post("/api/feedback", content=body, headers={"content-type": "text/plain; charset=json"}), 415,
        "unsupported_media_type")
    assert weight(client, edge) == before and rows(saved, "successes") == successes
    ok = client.post("/api/feedback", content=body, headers={"content-type": "application/json; charset=utf-8",
                                                               "Origin": "http://testserver"})
    assert ok.status_code == 200 and ok.json()["changed_edges"]
    assert weight(client, edge) > before and rows(saved, "successes") == successes + 1


def test_csrf_verdict_without_trace_id(app, client, saved):
    verdict = {"a_id": "a", "b_id": "b", "marker": 1, "verdict": "whale", "who": "mallory"}  # no trace id at all
    body = json.dumps(verdict).encode()
    n = rows(saved, "ser_verdicts")
    with TestClient(app) as bare:
        err(bare.post("/api/verdicts", content=body, headers=EVIL), 403, "bad_origin")
        err(bare.post("/api/verdicts", content=body, headers={"content-type": "text/plain; charset=json"}), 403,
            "bad_page_token")
        err(bare.post("/api/verdicts", json=verdict), 403, "bad_page_token")
        err(bare.post("/api/verdicts", json=verdict, headers={PAGE_TOKEN_HEADER: "x" * 43}), 403, "bad_page_token")
    err(client.post("/api/verdicts", content=body, headers={"content-type": "text/plain; charset=json"}), 415,
        "unsupported_media_type")
    assert rows(saved, "ser_verdicts") == n
    r = client.post("/api/verdicts", json=verdict)
    assert r.status_code == 200 and r.json()["verdict"]["who"] == "mallory"
    assert rows(saved, "ser_verdicts") == n + 1


@pytest.mark.parametrize("ctype,ok", [
    ("application/json", True), ("Application/JSON", True), ("application/json; charset=utf-8", True),
    ('application/json;charset="UTF-8"', True), ("application/json; charset=latin-1", False),
    ("application/json; boundary=x", False), ("application/jsonx", False), ("text/json", False),
    ("text/plain; charset=json", False), ("", False),
])
def test_json_content_type_exactly(client, ctype, ok):
    r = client.post("/api/search", content=b'{"query": "alpha"}', headers={"content-type": ctype})
    if ok:
        assert r.status_code == 200, r.text
    else:
        err(r, 415, "unsupported_media_type")


def test_page_carries_the_token_and_api_token(app, client):
    token = app.state.page_token
    assert len(token) >= 32
    assert f'<meta name="sidelight-token" content="{token}">' in client.get("/").text
    assert client.get("/api/token").json() == {"header": PAGE_TOKEN_HEADER, "token": token}
    assert create_app(app.state.service).state.page_token != token  # random per server


def test_get_writes_no_trace_and_no_log_row(client, saved):
    before = rows(saved, "traces"), rows(saved, "query_log")
    err(client.get("/api/channels", params={"q": "alpha"}), 405, "method_not_allowed")
    err(client.get("/api/connections", params={"q": "alpha"}), 405, "method_not_allowed")
    assert client.get("/api/search", params={"q": "alpha", "k": 3}).json()["hits"]
    client.get("/api/floor", params={"q": "alpha"})
    err(client.get("/api/search", params={"q": ""}), 400, "empty_query")  # a refused GET logs nothing either
    for path in ("/", "/health", "/api/stats", "/api/log", "/api/token", "/api/methods", "/openapi.json"):
        assert client.get(path).status_code == 200, path
    assert (rows(saved, "traces"), rows(saved, "query_log")) == before
    client.post("/api/channels", json={"query": "alpha"})  # POST stores one trace per lane and one log row
    assert rows(saved, "traces") > before[0] and rows(saved, "query_log") == before[1] + 1


# ---- item 7: access token, Host check ------------------------------------------------------------------------

def test_access_token_on_every_request(saved):
    app = create_app(saved, allowed_hosts=["sidelight.lan"], access_token=ACCESS, page=served_page(saved))
    with TestClient(app, base_url="http://sidelight.lan") as c:
        for path in ("/", "/health", "/api/token", "/openapi.json"):
            r = c.get(path)
            err(r, 401, "missing_token")
            assert r.headers["www-authenticate"].startswith("Bearer")
        err(c.get("/health", headers={"Authorization": "Bearer wrong-token-wrong-token"}), 403, "bad_token")
        err(c.get("/health", headers={"Authorization": f"Basic {ACCESS}"}), 401, "missing_token")
        err(c.post("/api/search", json={"query": "alpha"}, headers={PAGE_TOKEN_HEADER: app.state.page_token}),
            401, "missing_token")
        auth = {"Authorization": f"Bearer {ACCESS}"}
        assert c.get("/health", headers=auth).status_code == 200
        assert c.get("/api/token", headers=auth).json()["token"] == app.state.page_token
        r = c.post("/api/search", json={"query": "alpha"}, headers={**auth, PAGE_TOKEN_HEADER: app.state.page_token})
        assert r.status_code == 200 and r.json()["hits"]
        err(c.post("/api/search", json={"query": "alpha"}, headers=auth), 403, "bad_page_token")
        # Host check stays on beyond loopback
        err(c.get("/health", headers={**auth, "host": "evil.example"}), 400, "bad_host")
    with TestClient(app, base_url="http://sidelight.lan", follow_redirects=False) as browser:
        err(browser.get("/?token=wrong"), 403, "bad_token")
        r = browser.get(f"/?token={ACCESS}")
        assert r.status_code == 303 and r.headers["location"] == "/"
        assert "httponly" in r.headers["set-cookie"].lower() and "samesite=strict" in r.headers["set-cookie"].lower()
        assert browser.get("/").status_code == 200 and browser.get("/api/stats").status_code == 200  # the cookie


def test_mcp_over_http_needs_the_token(saved):
    from sidelight.serve.mcp_server import http_app

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}}
    hdrs = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    app = http_app(saved, host="127.0.0.1", allowed_hosts=["127.0.0.1", "localhost"], access_token=ACCESS)
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        err(c.post("/mcp", json=init, headers=hdrs), 401, "missing_token")
        err(c.post("/mcp", json=init, headers={**hdrs, "Authorization": "Bearer not-the-token-at-all"}), 403,
            "bad_token")
        err(c.post("/mcp", json=init, headers={**hdrs, "Authorization": f"Bearer {ACCESS}", "host": "evil.example"}),
            400, "bad_host")
        ok = c.post("/mcp", json=init, headers={**hdrs, "Authorization": f"Bearer {ACCESS}"})
        assert ok.status_code == 200, ok.text
        assert "serverInfo" in ok.text


def _args(host: str, token: str | None = None, allow: list[str] | None = None) -> argparse.Namespace:
    return argparse.Namespace(host=host, token=token, allow_host=allow or [])


def test_non_loopback_without_token_refuses_to_start(saved, monkeypatch, capsys):
    import uvicorn

    monkeypatch.delenv("SIDELIGHT_TOKEN", raising=False)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server must not start"))
    path = str(saved.index.path)
    for argv in (["serve", path, "--host", "0.0.0.0"], ["serve", path, "--host", "192.168.1.20"],
                 ["mcp", path, "--http", "8765", "--host", "0.0.0.0"]):
        assert main(argv) == 2, argv
        out = capsys.readouterr().err.strip()
        assert "\n" not in out and out.startswith("sidelight: error:") and "--token" in out and "SIDELIGHT_TOKEN" in out
    assert main(["serve", path, "--host", "0.0.0.0", "--token", "short"]) == 2
    assert "at least 16" in capsys.readouterr().err


def test_access_settings():
    from sidelight.cli.serve_cmd import _access

    assert _access(_args("127.0.0.1"), "sidelight serve") == (None, ["127.0.0.1", "::1", "[::1]", "localhost"])
    token, hosts = _access(_args("192.168.1.20", ACCESS, ["Sidelight.LAN:8000"]), "sidelight serve")
    assert token == ACCESS and {"192.168.1.20", "sidelight.lan", "localhost"} <= set(hosts)
    assert "evil.example" not in hosts
    import socket

    assert socket.gethostname().lower() in _access(_args("0.0.0.0", ACCESS), "sidelight serve")[1]
    assert _access(_args("0.0.0.0", ACCESS, ["*"]), "sidelight serve") == (ACCESS, None)


def test_token_from_environment(monkeypatch):
    from sidelight.cli.serve_cmd import _access

    monkeypatch.setenv("SIDELIGHT_TOKEN", ACCESS)
    assert _access(_args("0.0.0.0"), "sidelight serve")[0] == ACCESS
    assert _access(_args("0.0.0.0", "another-token-0123456789"), "sidelight serve")[0] == "another-token-0123456789"


# ---- item 8: deep JSON -----------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [100_000, 30_000, MAX_JSON_DEPTH + 1])
def test_deeply_nested_json_is_400(client, depth):
    e = err(client.post("/api/channels", content=b"[" * depth + b"]" * depth,
                        headers={"content-type": "application/json"}), 400, "too_deep")
    assert e["max_depth"] == MAX_JSON_DEPTH and "nested deeper" in e["message"]


def test_nesting_inside_a_value_and_brackets_in_strings(client):
    deep = "[" * 5000 + "]" * 5000
    err(client.post("/api/channels", content=f'{{"query": {deep}}}'.encode(),
                    headers={"content-type": "application/json"}), 400, "too_deep")
    ok = client.post("/api/channels", json={"query": "alpha [[[[" + "[" * 500 + ' \\" {{{ "'})
    assert ok.status_code == 200, ok.text
    err(client.post("/api/channels", json={"query": [[["alpha"]]]}), 400, "bad_query")


def test_depth_scanner_across_chunks():
    text = b'{"a": "x\\\\", "b": "q\\"[[[[", "c": [[1]]}'
    for cut in range(len(text) + 1):
        d = _Depth()
        assert not d.feed(text[:cut], 3) and not d.feed(text[cut:], 3), cut  # {, [, [: depth 3
        assert d.depth == 0 and not d.in_string
        d2 = _Depth()
        assert d2.feed(text[:cut], 2) or d2.feed(text[cut:], 2), cut


def test_lone_surrogate_is_400(client):
    err(client.post("/api/channels", content=b'{"query": "\\ud800 alpha"}', headers={"content-type": "application/json"}),
        400, "bad_json")
    assert client.post("/api/channels", content=b'{"query": "\\u00e9 alpha"}',
                       headers={"content-type": "application/json"}).status_code == 200


# ---- item 10: booleans, MCP arguments, a corrupt state.sqlite ---------------------------------------------

@pytest.fixture(scope="module")
def dense_service():
    svc = Service(hand_index(), dense_loader=lambda: None).start()
    assert svc.wait_dense(10)
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def fuzz_client(saved):
    with api_client(create_app(saved), raise_server_exceptions=False) as c:
        yield c


def test_dense_maybe_is_400_over_http(dense_service):
    with api_client(create_app(dense_service)) as c:
        n = len(dense_service.index.state.trace_ids())
        for bad in ("maybe", 1, 0, "", [], {"x": 1}, "truee", "yes", "false", "0", None):
            e = err(c.post("/api/channels", json={"query": "alpha", "dense": bad}), 400, "bad_dense")
            assert e["message"].startswith("dense must be true or false (a JSON boolean), got ")
        assert len(dense_service.index.state.trace_ids()) == n, "refused before any lane stored a trace"
        assert "dense" in c.post("/api/channels", json={"query": "alpha", "dense": True}).json()
        assert "dense" not in c.post("/api/channels", json={"query": "alpha", "dense": False}).json()


def test_mcp_refuses_bad_and_unknown_arguments(dense_service):
    from mcp import Client

    from sidelight.serve.mcp_server import build_server

    async def session():
        async with Client(build_server(dense_service)) as c:
            r = await c.call_tool("search_channels", {"query": "alpha", "dense": "maybe"})
            assert r.is_error and r.content[0].text.startswith("bad_dense: dense")
            for bad in (1, "yes"):
                r = await c.call_tool("search_channels", {"query": "alpha", "dense": bad})
                assert r.is_error and "bad_dense" in r.content[0].text
            r = await c.call_tool("search_channels", {"query": "alpha", "surprise": 1})
            assert r.is_error and r.content[0].text.startswith("unknown_field:") and "'surprise'" in r.content[0].text
            r = await c.call_tool("record_success", {"trace_id": "0" * 32, "node_id": "a", "weight": 9})
            assert r.is_error and "unknown_field" in r.content[0].text
            r = await c.call_tool("search", {"k": 3})
            assert r.is_error and r.content[0].text.startswith("missing_query")
            ok = await c.call_tool("search_channels", {"query": "alpha", "dense": False})
            assert not ok.is_error and "dense" not in ok.structured_content
            ok = await c.call_tool("search_channels", {"query": "alpha"})
            assert not ok.is_error and ok.structured_content["dense"]["hits"]

    anyio.run(session)


def test_corrupt_state_sqlite_is_a_clear_error(tmp_path, monkeypatch, capsys):
    import uvicorn

    import sidelight.serve.mcp_server as mcp_server

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server must not start"))
    monkeypatch.setattr(mcp_server, "run", lambda *a, **k: pytest.fail("the MCP server must not start"))
    path = save_hand(tmp_path / "hand")
    (path / "state.sqlite").write_bytes(b"this is not a database at all " * 10)
    for argv in (["serve", str(path), "--port", "0"], ["mcp", str(path)]):
        assert main(argv) == 2, argv
        out = capsys.readouterr().err.strip()
        assert out.startswith("sidelight: error:") and "state.sqlite" in out and "Traceback" not in out


# ---- fuzz: random bodies to every POST endpoint never give a 500 --------------------------------------------

FIELDS = {"/api/search": ["query", "method", "k", "budget_ms"],
          "/api/channels": ["query", "limit", "budget_ms", "dense"],
          "/api/feedback": ["trace_id", "node_id"], "/api/edges": ["edges"],
          "/api/floor": ["query", "n", "budget_ms"], "/api/connections": ["query", "dial", "budget_ms", "session_id"],
          "/api/reveal": ["trace_id", "answer_sha256"],
          "/api/verdicts": ["a_id", "b_id", "marker", "verdict", "who", "note", "trace_id"]}
SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from(["", " ", "alpha", "a", "b", "0" * 32, "f" * 64, "whale", "bm25", "dense", "true",
                              "maybe", "10", "1e3", "-1"])
           | st.text(max_size=20))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["source", "target", "type", "x"]) | st.text(max_size=5),
                                        inner, max_size=3), max_leaves=8)


@st.composite
def post_call(draw):
    path = draw(st.sampled_from(sorted(FIELDS)))
    keys = st.sampled_from(FIELDS[path]) | st.text(max_size=8)
    body = draw(st.dictionaries(keys, VALUES, max_size=5) | VALUES)
    return path, body


def _no_crash(r) -> None:
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert set(r.json()["error"]) >= {"status", "code", "message"}


@settings(max_examples=80, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=post_call())
def test_fuzz_json_bodies_never_500(fuzz_client, call):
    path, body = call
    _no_crash(fuzz_client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}))


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(sorted(FIELDS)),
       raw=st.binary(max_size=200) | st.text(alphabet='[]{}":,\\ u0d8a1e-.tfn', max_size=200).map(str.encode),
       ctype=st.sampled_from(["application/json", "text/plain", None, "application/json; charset=utf-16"]))
def test_fuzz_raw_bodies_never_500(fuzz_client, path, raw, ctype):
    headers = {"content-type": ctype} if ctype else {}
    _no_crash(fuzz_client.post(path, content=raw, headers=headers))


@settings(max_examples=50, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=st.dictionaries(st.sampled_from(["q", "query", "k", "method", "n", "budget_ms", "zz"]),
                              st.text(max_size=12), max_size=4),
       path=st.sampled_from(["/api/search", "/api/floor"]))
def test_fuzz_get_params_never_500(fuzz_client, params, path):
    _no_crash(fuzz_client.get(path, params=params))
