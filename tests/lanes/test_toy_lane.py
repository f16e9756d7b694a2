"""A lane registered here, in the test alone, reaches every interface: `search_channels`, the HTTP envelope
(with its budget, labels and query-log row), OpenAPI, the MCP tool description and reply (official SDK
client, in process) and the page's data; no other file names it (issue 42, "how to add a lane")."""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio
import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index
from sidelight.lanes.channels import search_channels
from sidelight.lanes.registry import BaseLane, LaneContext, lanes, registered
from sidelight.results import Hit, Results

TOY_DESC = "Toy lane (test only): records whose text holds the query word, shortest text first."


@dataclass(frozen=True)
class ShortestLane(BaseLane):
    """Records whose text contains the query's first word, ranked by shorter text (score 1/len), ties by id."""

    delay_s: float = 0.0

    def run(self, context: LaneContext, query: str, limit: int, budget) -> Results:
        time.sleep(self.delay_s)
        word = query.split()[0].lower()
        recs = [r for r in context.index.corpus.records if word in r.text.lower().split()]
        recs.sort(key=lambda r: (len(r.text), r.id))
        hits = [Hit(r.id, i + 1, 1.0 / len(r.text), r.title) for i, r in enumerate(recs[:limit])]
        rows = [{"node_id": h.id, "rank": h.rank, "score": h.score} for h in hits]
        trace = context.index.state.new_trace(query, self.name, rows, {})
        return Results(hits, query, self.name, trace_id=trace, params={"word": word})


def api_client(app):
    from starlette.testclient import TestClient

    from sidelight.serve.app import PAGE_TOKEN_HEADER

    return TestClient(app, headers={PAGE_TOKEN_HEADER: app.state.page_token})


def hand() -> Index:
    # "alpha" is in a's text (20 characters) and b's (16): the toy lane answers b, then a
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel alpha"),
            Record("c", "Gamma shaft", "shaft rod")]
    return Index.build(Corpus("hand", recs, [Edge("a", "b"), Edge("a", "c")]), progress=False)


EXPECTED = ["b", "a"]


def test_search_channels_runs_a_registered_lane():
    with registered(ShortestLane("shortest", TOY_DESC)):
        assert [lane.name for lane in lanes()][-1] == "shortest"
        r = search_channels(hand(), "alpha", 10)
        assert r.shortest.ids == EXPECTED and r.shortest.trace_id
        d = r.to_dict()
        assert list(d)[:4] == ["query", "lexical", "relation", "shortest"]  # no vectors: no dense lane
        assert d["shortest"]["channel"] == "shortest" and [h["id"] for h in d["shortest"]["hits"]] == EXPECTED
        assert d["descriptions"]["shortest"] == TOY_DESC
        assert d["agreement_node_ids"] == ["a", "b"]  # the lexical lane has both too
    assert "shortest" not in [lane.name for lane in lanes()]  # gone with the block


def test_http_envelope_budget_labels_and_log():
    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service
    from sidelight.serve.openapi import openapi_document

    with registered(ShortestLane("shortest", TOY_DESC)):
        svc = Service(hand())
        client = api_client(create_app(svc))
        d = client.post("/api/channels", json={"query": "alpha engine", "limit": 5}).json()
        assert [h["id"] for h in d["shortest"]["hits"]] == EXPECTED
        assert d["descriptions"]["shortest"] == TOY_DESC
        assert [s["stage"] for s in d["stages"]] == ["lexical", "dense", "relation", "shortest"]
        assert d["partial"] is False and d["missing_lanes"] == []
        row = svc.log.entries(1)[0]
        assert row["operation"] == "channels" and row["interface"] == "http"
        assert {"channel": "shortest", "trace_id": d["shortest"]["trace_id"], "hits": 2} in row["lanes"]
        fb = client.post("/api/feedback", json={"trace_id": d["shortest"]["trace_id"], "node_id": "a"}).json()
        assert fb["channel"] == "shortest" and fb["changed_edges"] == []
        schema = openapi_document()["components"]["schemas"]["ChannelsResult"]["properties"]
        assert schema["shortest"]["description"] == TOY_DESC
        svc.close()
    with registered(ShortestLane("shortest", TOY_DESC, delay_s=1.0)):  # slower than the whole budget
        svc = Service(hand())
        client = api_client(create_app(svc))
        d = client.post("/api/channels", json={"query": "alpha", "budget_ms": 300}).json()
        assert d["shortest"] is None and d["partial"] is True
        assert d["lexical"]["hits"], "the lexical lane always answers"
        assert d["missing_lanes"] == [{"channel": "shortest", "reason": "stage did not finish within the time budget"}]
        assert next(s for s in d["stages"] if s["stage"] == "shortest")["status"] == "cut"
        row = svc.log.entries(1)[0]
        assert row["partial"] is True and "shortest" not in {lane["channel"] for lane in row["lanes"]}
        svc.close()


def test_mcp_tool_description_and_reply():
    pytest.importorskip("mcp")
    from mcp import Client

    from sidelight.serve.engine import Service
    from sidelight.serve.mcp_server import build_server

    async def session(svc):
        async with Client(build_server(svc)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert f"- shortest: {TOY_DESC}" in tools["search_channels"].description
            r = await c.call_tool("search_channels", {"query": "alpha", "limit": 5})
            assert not r.is_error
            return r.structured_content

    with registered(ShortestLane("shortest", TOY_DESC)):
        svc = Service(hand(), interface="mcp")
        out = anyio.run(session, svc)
        assert [h["id"] for h in out["shortest"]["hits"]] == EXPECTED
        assert svc.log.entries(1)[0]["interface"] == "mcp"
        svc.close()
    from sidelight.serve.mcp_server import search_channels_description

    assert "shortest" not in search_channels_description()


def test_page_data_lists_the_lane(tmp_path):
    from sidelight.web.export import export_web

    path = tmp_path / "ix"
    hand().save(path)
    with registered(ShortestLane("shortest", TOY_DESC)):
        export_web(path, tmp_path / "site", lean=True)
    import json

    manifest = json.loads((tmp_path / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert {"name": "shortest", "description": TOY_DESC, "needs": []} in manifest["lanes"]
    assert [x["name"] for x in manifest["lanes"]] == ["lexical", "dense", "relation", "shortest"]


def test_python_api_with_a_budget_and_a_log(tmp_path):
    from sidelight.lanes.budget import Budget
    from sidelight.lanes.querylog import QueryLog

    log = QueryLog(tmp_path / "log.sqlite")
    with registered(ShortestLane("shortest", TOY_DESC, delay_s=1.0)):
        r = search_channels(hand(), "alpha", 5, budget=Budget(300), log=log)
        assert r.shortest is None and r.lexical.ids == ["a", "b"]
        d = r.to_dict()
        assert d["partial"] is True and d["missing_lanes"][0]["channel"] == "shortest"
        assert "labels" in d["descriptions"]  # a budgeted answer explains its labels
        r = search_channels(hand(), "alpha", 5)  # the Python API: no budget, the lane waits
        assert r.shortest.ids == EXPECTED and "missing_lanes" not in r.to_dict()
    (row,) = log.entries()
    assert (row["interface"], row["operation"], row["partial"]) == ("python", "channels", True)
    assert [lane["channel"] for lane in row["lanes"]] == ["lexical", "relation"]


def test_the_served_page_shows_the_lane(tmp_path):
    """The exported page, opened from `sidelight serve --site`, shows a lane only the server runs."""
    pytest.importorskip("selenium.webdriver")
    from sidelight.web.parity import browser_available, chromium

    if not browser_available():
        pytest.skip("needs Debian's chromium and chromium-driver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service
    from sidelight.web.export import export_web
    from tests.live import live_server

    hand().save(tmp_path / "ix")
    export_web(tmp_path / "ix", tmp_path / "site", lean=True)  # before the lane exists: the page has no code for it
    with registered(ShortestLane("shortest", TOY_DESC)), chromium() as browser:
        service = Service(Index.load(tmp_path / "ix"))
        with live_server(create_app(service, allowed_hosts=["127.0.0.1"], site=tmp_path / "site")) as url:
            browser.get(f"{url}/site/")
            wait = WebDriverWait(browser, 20)
            wait.until(EC.visibility_of_element_located((By.ID, "status-server")))
            wait.until(EC.element_to_be_clickable((By.ID, "go")))
            browser.find_element(By.ID, "sides").click()
            browser.find_element(By.ID, "q").send_keys("alpha")
            browser.find_element(By.ID, "go").click()
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'section.lane[data-method="shortest"]')))
            lane = browser.find_element(By.CSS_SELECTOR, 'section.lane[data-method="shortest"]')
            assert TOY_DESC in lane.text and "(stored by the server)" in lane.text
            ids = [e.text for e in lane.find_elements(By.CSS_SELECTOR, "li.hit .id")]
            assert ids == EXPECTED
            lane.find_element(By.CSS_SELECTOR, "button.credit").click()
            wait.until(EC.text_to_be_present_in_element((By.ID, "timings"), "shortest success"))
        service.close()
