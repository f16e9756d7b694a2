"""HTTP API: validation (clear 4xx), labelled fallbacks, budgets, feedback isolation, OpenAPI, health, query log."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient

from sidelight.index import Index
from sidelight.serve.app import MAX_BODY_BYTES, create_app
from sidelight.serve.engine import Service
from sidelight.web.served import served_page

from tests.serve.conftest import api_client, hand_index


@pytest.fixture(scope="module")
def service(foldoc_copy):
    svc = Service(Index.load(foldoc_copy))
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def client(service):
    with api_client(create_app(service, page=served_page(service))) as c:
        yield c


def err(r, status, code):
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"]["status"] == status and body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]


# ---- readiness and documents ------------------------------------------------------------------------

def test_health(client, foldoc_copy):
    h = client.get("/health").json()
    assert h["ready"] is True and h["status"] == "ok"
    assert h["index"]["loaded"] and h["index"]["records"] > 10_000 and h["index"]["path"] == str(foldoc_copy)
    assert h["dense"] == {"present": False, "model_state": "absent", "model_ready": False}
    assert "status" in h["certificate"]
    assert "features" not in h  # every part ships with the package; what data is missing, each answer says


def test_openapi_served(client):
    doc = client.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    for path in ("/health", "/api/search", "/api/channels", "/api/feedback", "/api/floor", "/api/connections",
                 "/api/reveal", "/api/verdicts", "/api/edges", "/api/stats", "/api/log"):
        assert path in doc["paths"], path
    assert "Error" in doc["components"]["schemas"]
    refs = [v for p in doc["paths"].values() for op in p.values() for r in op["responses"].values()
            for v in [r.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")] if v]
    for ref in refs:
        assert ref.split("/")[-1] in doc["components"]["schemas"], ref


def test_the_page_is_the_exported_page_in_served_mode(client, service):
    """`/` is the one page (`sidelight/web/page.html` + the scripts `make web` builds), started in served mode
    with every registered lane; it loads nothing from another host."""
    import json
    import re

    from sidelight.lanes.registry import lanes

    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    manifest = json.loads(re.search(r"window\.SIDELIGHT_MANIFEST = (.*);\n", html)[1])
    assert manifest["served"] is True
    assert (manifest["corpus"], manifest["records"]) == ("foldoc", len(service.index.corpus))
    assert [x["name"] for x in manifest["lanes"]] == [x.name for x in lanes()] == ["lexical", "dense", "relation"]
    assert all(x["description"] for x in manifest["lanes"])
    assert '<script src="app/page.js"></script>' in html and "app/worker.js" not in html  # no in-browser index
    for bad in ('src="http', "src='http", 'href="http', "@import", "cdn"):
        assert bad not in html.lower(), bad
    page_js = client.get("/app/page.js")  # the scripts `make web` built, the same the export copies
    assert page_js.status_code == 200 and "SIDELIGHT_MANIFEST" in page_js.text and "api/channels" in page_js.text


def test_without_a_page_there_is_no_route_at_root(service):
    with TestClient(create_app(service)) as c:
        assert c.get("/").status_code == 404 and c.get("/app/page.js").status_code == 404


# ---- bad requests ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("body,code", [
    ({"query": ""}, "empty_query"),
    ({"query": "   "}, "empty_query"),
    ({}, "missing_query"),
    ({"query": 7}, "bad_query"),
    ({"query": "x" * 1001}, "query_too_long"),
    ({"query": "lisp", "limit": 0}, "limit_out_of_range"),
    ({"query": "lisp", "limit": 51}, "limit_out_of_range"),
    ({"query": "lisp", "limit": "many"}, "bad_limit"),
    ({"query": "lisp", "limit": True}, "bad_limit"),
    ({"query": "lisp", "budget_ms": 0}, "budget_ms_out_of_range"),
    ({"query": "lisp", "surprise": 1}, "unknown_field"),
])
def test_channels_bad_requests(client, body, code):
    err(client.post("/api/channels", json=body), 400, code)


@pytest.mark.parametrize("url,code", [
    ("/api/search?q=lisp&k=0", "k_out_of_range"),
    ("/api/search?q=lisp&k=101", "k_out_of_range"),
    ("/api/search?q=&k=5", "empty_query"),
    ("/api/search?q=lisp&method=nope", "unknown_method"),
    ("/api/floor?q=lisp&n=0", "n_out_of_range"),
])
def test_search_bad_requests(client, url, code):
    err(client.get(url), 400, code)


def test_dense_method_without_vectors_is_422(client):
    err(client.get("/api/search?q=lisp&method=dense"), 422, "method_unavailable")


def test_feedback_bad_requests(client):
    lane = client.post("/api/channels", json={"query": "garbage collection"}).json()["lexical"]
    err(client.post("/api/feedback", json={"trace_id": "0" * 32, "node_id": "lisp"}), 404, "unknown_trace")
    err(client.post("/api/feedback", json={"trace_id": "not-a-trace", "node_id": "lisp"}), 400, "bad_trace_id")
    err(client.post("/api/feedback", json={"trace_id": lane["trace_id"], "node_id": ""}), 400, "bad_node_id")
    e = err(client.post("/api/feedback", json={"trace_id": lane["trace_id"], "node_id": "no such record"}),
            422, "node_not_in_trace")
    assert e["channel"] == "lexical"
    err(client.post("/api/feedback", json={"trace_id": lane["trace_id"]}), 400, "missing_node_id")
    err(client.get(f"/api/traces/{'f' * 32}"), 404, "unknown_trace")


def test_malformed_and_oversized_bodies(client):
    err(client.post("/api/channels", content=b"{not json", headers={"content-type": "application/json"}), 400, "bad_json")
    err(client.post("/api/channels", content=b"[1, 2]", headers={"content-type": "application/json"}), 400, "bad_json")
    err(client.post("/api/channels", content=b"query=x", headers={"content-type": "text/plain"}), 415,
        "unsupported_media_type")
    big = b'{"query": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    err(client.post("/api/channels", content=big, headers={"content-type": "application/json"}), 413, "body_too_large")

    def chunks():  # no content-length: refused while streaming
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b" " * 1024

    err(client.post("/api/feedback", content=chunks(), headers={"content-type": "application/json"}), 413,
        "body_too_large")


def test_unknown_route_and_method(client):
    err(client.get("/api/nothing"), 404, "not_found")
    err(client.get("/api/feedback"), 405, "method_not_allowed")


def test_serendipity_endpoints(client, service):
    # no serendipity package, or no certificate for this index: 501 not_available, saying what is missing
    e = err(client.post("/api/connections", json={"query": "lisp", "dial": 3}), 501, "not_available")
    assert "serendipity" in e["message"]
    health = client.get("/health").json()
    assert health["certificate"]["status"] in ("not-available", "absent")
    reveal = client.post("/api/reveal", json={"trace_id": "a" * 32, "answer_sha256": "b" * 64})
    verdict = client.post("/api/verdicts", json={"a_id": "lisp", "b_id": "scheme", "marker": 1, "verdict": "whale",
                                                 "who": "tester"})
    err(reveal, 404, "unknown_trace")
    assert verdict.status_code == 200 and verdict.json()["verdict"]["who"] == "tester"
    # input is validated first
    err(client.post("/api/connections", json={"query": "lisp", "dial": 99}), 400, "dial_out_of_range")
    err(client.post("/api/connections", json={"query": ""}), 400, "empty_query")
    err(client.post("/api/reveal", json={"trace_id": "a" * 32, "answer_sha256": "xyz"}), 400, "bad_answer_sha256")
    err(client.post("/api/reveal", json={"trace_id": "zz", "answer_sha256": "b" * 64}), 400, "bad_trace_id")
    err(client.post("/api/verdicts", json={"a_id": "lisp", "b_id": "scheme", "marker": 1, "verdict": "meh",
                                           "who": "me"}), 400, "bad_verdict")
    err(client.post("/api/verdicts", json={"a_id": "lisp", "b_id": "scheme", "marker": 1, "verdict": "whale"}),
        400, "missing_who")
    err(client.post("/api/verdicts", json={"a_id": "lisp", "b_id": "scheme", "marker": 1, "verdict": "whale",
                                           "who": "  "}), 400, "bad_who")
    err(client.post("/api/verdicts", json={"a_id": "no such", "b_id": "scheme", "marker": 1, "verdict": "whale",
                                           "who": "me"}), 404, "unknown_node")


def test_floor_without_vectors(client):
    r = client.post("/api/floor", json={"query": "lisp"})
    err(r, 422, "method_unavailable")


# ---- lanes, budgets and feedback ---------------------------------------------------------------------

def test_channels_envelope(client):
    r = client.post("/api/channels", json={"query": "garbage collection", "limit": 5, "budget_ms": 60_000})  # generous: a loaded machine must not cut the relation lane
    assert r.status_code == 200
    d = r.json()
    assert d["lexical"]["channel"] == "lexical" and len(d["lexical"]["hits"]) == 5
    assert d["relation"]["channel"] == "relation" and d["relation"]["hits"]
    assert d["lexical"]["trace_id"] != d["relation"]["trace_id"]
    assert all(h["path"] for h in d["relation"]["hits"])
    assert d["fallback"] is None and d["partial"] is False
    assert [s["stage"] for s in d["stages"]] == ["lexical", "dense", "relation"]
    assert {"lexical", "relation", "feedback", "labels"} <= set(d["descriptions"])
    for bad in ("combined", "fused", "winner"):
        assert bad not in d


def test_short_budget_is_partial(client, service, monkeypatch):
    # the lexical lane takes 5 ms here, longer than the whole 1 ms budget, so the relation stage has
    # no time left (skipped) or is cut; the lexical lane still answers
    import time as _time

    from sidelight.lanes.builtin import LexicalLane

    real = LexicalLane.run

    def slow_lexical(*args, **kwargs):
        _time.sleep(0.005)
        return real(*args, **kwargs)

    monkeypatch.setattr(LexicalLane, "run", slow_lexical)
    d = client.post("/api/channels", json={"query": "garbage collection", "budget_ms": 1}).json()
    assert d["partial"] is True
    assert d["lexical"]["hits"], "the lexical lane always answers"
    rel = next(s for s in d["stages"] if s["stage"] == "relation")
    assert rel["status"] in ("skipped", "cut") and rel["reason"]
    assert d["relation"] is None and d["missing_lanes"][0]["channel"] == "relation"


def test_feedback_changes_only_credited_edges(client):
    d = client.post("/api/channels", json={"query": "garbage collection", "limit": 10, "budget_ms": 60_000}).json()
    rel = d["relation"]
    keys = {(e["source"], e["target"], e["type"]) for h in rel["hits"] for e in h["path"]}
    edges = [{"source": s, "target": t, "type": ty} for s, t, ty in sorted(keys)]
    before = {(e["source"], e["target"], e["type"]): e["weight"]
              for e in client.post("/api/edges", json={"edges": edges}).json()["edges"]}
    hit = rel["hits"][0]
    fb = client.post("/api/feedback", json={"trace_id": rel["trace_id"], "node_id": hit["id"]}).json()
    credited = {(e["source"], e["target"], e["type"]) for e in hit["path"]}
    assert fb["channel"] == "relation" and {(c["source"], c["target"], c["type"]) for c in fb["changed_edges"]} == credited
    after = {(e["source"], e["target"], e["type"]): e["weight"]
             for e in client.post("/api/edges", json={"edges": edges}).json()["edges"]}
    for k in keys:
        if k in credited:
            assert after[k] > before[k]
        else:
            assert after[k] == before[k]
    for c in fb["changed_edges"]:
        assert c["new_weight"] == pytest.approx(after[(c["source"], c["target"], c["type"])])
        assert c["old_weight"] == pytest.approx(before[(c["source"], c["target"], c["type"])])
    again = client.post("/api/feedback", json={"trace_id": rel["trace_id"], "node_id": hit["id"]}).json()
    assert again["already_recorded"] is True and again["changed_edges"] == []
    lex = d["lexical"]
    fb2 = client.post("/api/feedback", json={"trace_id": lex["trace_id"], "node_id": lex["hits"][0]["id"]}).json()
    assert fb2["channel"] == "lexical" and fb2["changed_edges"] == []
    tr = client.get(f"/api/traces/{rel['trace_id']}").json()
    assert tr["successes"] == [hit["id"]]


def test_edges_lookup(client):
    r = client.post("/api/edges", json={"edges": [{"source": "nope", "target": "nada", "type": "link"}]}).json()
    assert r["edges"][0]["exists"] is False
    err(client.post("/api/edges", json={"edges": []}), 400, "bad_edges")
    err(client.post("/api/edges", json={"edges": [{"source": 1}]}), 400, "bad_edges")


def test_stats_and_log(client):
    s = client.get("/api/stats").json()
    assert s["stats"]["records"] > 10_000 and sum(b["count"] for b in s["degree_histogram"]) == s["stats"]["records"]
    client.post("/api/channels", json={"query": "regular expression", "budget_ms": 60_000})  # generous: a loaded machine must not cut the relation lane
    log = client.get("/api/log?limit=200").json()
    row = next(e for e in log["entries"] if e["query"] == "regular expression")
    assert row["interface"] == "http" and row["operation"] == "channels" and row["status"] == 200
    assert {lane["channel"] for lane in row["lanes"]} == {"lexical", "relation"}
    assert all(lane["trace_id"] for lane in row["lanes"]) and "lexical" in row["timings"]
    assert any(e["status"] == 400 and e["error"] for e in log["entries"])
    err(client.get("/api/log?limit=0"), 400, "limit_out_of_range")


def test_lab_report(service, tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "report.html").write_text("<html><body><h1>Lab report X</h1></body></html>")
    (run / "report.md").write_text("# Lab report X\n")
    svc = Service(service.index, lab_dir=tmp_path, querylog=service.log)
    with TestClient(create_app(svc)) as c:  # a report no run recorded is not shown (issue 45 item 6)
        assert c.get("/api/report").json()["available"] is False
        err(c.get("/lab/report"), 404, "no_report")
    from sidelight.lab.packed import compress_file, xz_bytes
    from sidelight.lab.record import seal_report

    (run / "test").mkdir()
    (run / "test" / "record.json").write_text("{}")
    seal_report(run)
    with TestClient(create_app(svc)) as c:
        r = c.get("/api/report").json()
        assert r["available"] and r["markdown"].startswith("# Lab report X")
        assert "Lab report X" in c.get("/lab/report").text
    compress_file(run / "report.html")  # stored as report.html.xz (`lab compress`): served the same
    assert not (run / "report.html").exists()
    with TestClient(create_app(svc)) as c:
        assert c.get("/api/report").json()["available"] and "Lab report X" in c.get("/lab/report").text
    (run / "report.html.xz").write_bytes(xz_bytes(b"<html><body><h1>Lab report Y</h1></body></html>"))
    with TestClient(create_app(svc)) as c:  # an edited compressed page is refused like a plain one
        assert c.get("/api/report").json()["available"] is False
        err(c.get("/lab/report"), 404, "no_report")
    with TestClient(create_app(Service(service.index, querylog=service.log))) as c:
        assert c.get("/api/report").json()["available"] is False
        err(c.get("/lab/report"), 404, "no_report")


def test_host_header_guard(service):
    with TestClient(create_app(service, allowed_hosts=["127.0.0.1", "localhost"]), base_url="http://evil.example") as c:
        assert c.get("/health").status_code == 400
    with TestClient(create_app(service, allowed_hosts=["127.0.0.1", "localhost"]), base_url="http://127.0.0.1:8000") as c:
        assert c.get("/health").status_code == 200


# ---- dense readiness and fallbacks ----------------------------------------------------------------------

def test_dense_not_ready_is_labelled_lexical_only(gated_loader):
    svc = Service(hand_index(), dense_loader=gated_loader)
    with api_client(create_app(svc)) as c:  # lifespan starts the background load
        h = c.get("/health").json()
        assert h["status"] == "starting" and h["dense"]["model_state"] == "loading"
        d = c.post("/api/channels", json={"query": "alpha"}).json()
        assert d["fallback"] == "lexical-only" and d["partial"] is False
        assert "dense" not in d and d["relation"]["params"]["dense_seeds"] is False
        assert d["missing_lanes"] == [{"channel": "dense", "reason": "dense model still loading"}]
        assert d["lexical"]["hits"] and d["relation"]["hits"]
        s = c.get("/api/search", params={"q": "alpha", "method": "dense"}).json()
        assert s["method_used"] == "bm25" and s["fallback"] == "lexical-only" and s["hits"]
        gated_loader.gate.set()
        assert svc.wait_dense(10)
        d = c.post("/api/channels", json={"query": "alpha"}).json()
        assert d["fallback"] is None and d["dense"]["hits"] and d["relation"]["params"]["dense_seeds"] is True
        assert c.get("/health").json()["dense"]["model_state"] == "ready"
        s = c.get("/api/search", params={"q": "alpha", "method": "dense"}).json()
        assert s["method_used"] == "dense" and s["fallback"] is None
        rows = svc.log.entries(10)
        assert any(r["fallback"] == "lexical-only" for r in rows)
    svc.close()


def test_dense_failed_to_load_is_labelled():
    def boom():
        raise RuntimeError("no model here")

    svc = Service(hand_index(), dense_loader=boom).start()
    svc.wait_dense(5)
    with api_client(create_app(svc)) as c:
        h = c.get("/health").json()
        assert h["status"] == "degraded" and "no model here" in h["dense"]["error"]
        d = c.post("/api/channels", json={"query": "alpha"}).json()
        assert d["fallback"] == "lexical-only" and d["missing_lanes"][0]["reason"] == "dense model failed to load"
    svc.close()


def test_dense_too_slow_is_cut():
    svc = Service(hand_index(delay_s=1.0), dense_loader=lambda: None).start()
    assert svc.wait_dense(5)
    with api_client(create_app(svc)) as c:
        t = time.perf_counter()
        d = c.post("/api/channels", json={"query": "alpha", "budget_ms": 200}).json()
        assert time.perf_counter() - t < 0.9, "the answer must not wait for the cut stage"
        assert d["fallback"] == "lexical-only" and d["partial"] is True
        dense = next(s for s in d["stages"] if s["stage"] == "dense")
        assert dense["status"] == "cut"
        assert d["relation"] is not None and d["relation"]["params"]["dense_seeds"] is False
        s = c.get("/api/search", params={"q": "alpha", "method": "dense", "budget_ms": 200}).json()
        assert s["method_used"] == "bm25" and s["fallback"] == "bm25" and s["partial"] is True
    svc.close()


# ---- method parameters through the registry ---------------------------------------------------------

def test_search_takes_method_params_checked_by_their_declaration(client, service):
    from sidelight.methods import get_method

    r = client.post("/api/search", json={"query": "lisp machine", "method": "bm25+ppr", "k": 5,
                                         "params": {"alpha": 0.8, "lam": 0.5}})
    assert r.status_code == 200, r.text
    want = get_method("bm25+ppr", alpha=0.8, lam=0.5).rank(service.index, "lisp machine", 5)
    assert [h["id"] for h in r.json()["hits"]] == [service.index.ids[p] for p in want.positions]
    got = client.get('/api/search?q=lisp+machine&method=bm25%2Bppr&k=5&params={"alpha":0.8,"lam":0.5}').json()
    assert got["hits"] == r.json()["hits"]  # the GET form takes the same object as JSON text
    bad = err(client.post("/api/search", json={"query": "lisp", "method": "bm25+ppr", "params": {"alpha": "abc"}}),
              400, "bad_params")
    assert "parameter 'alpha' must be a finite number in [0, 1]" in bad["message"]
    err(client.post("/api/search", json={"query": "lisp", "method": "bm25", "params": {"alpha": 1}}), 400, "bad_params")
    err(client.post("/api/search", json={"query": "lisp", "params": [1]}), 400, "bad_params")
    specs = client.get("/api/methods").json()["parameters"]
    assert {p["name"] for p in specs["bm25+ppr"]["params"]} == {"alpha", "lam", "n_seeds", "iterations"}
    assert specs["dense"]["needs"] == ["dense"]


def test_mcp_search_takes_method_params(service):
    import anyio
    from mcp import Client

    from sidelight.serve.mcp_server import build_server

    async def session():
        async with Client(build_server(service)) as c:
            r = await c.call_tool("search", {"query": "lisp", "method": "bm25+ppr", "params": {"lam": 2}})
            assert r.is_error and "parameter 'lam' must be a finite number in [0, 1]" in r.content[0].text
            ok = await c.call_tool("search", {"query": "lisp", "method": "bm25+ppr", "params": {"lam": 0.5}})
            assert not ok.is_error and ok.structured_content["hits"]

    anyio.run(session)
