"""The page served at `/` (the exported page in served mode: the lab view) in headless Chromium (Selenium + Debian's chromium/chromium-driver, loopback only).

Types a FOLDOC query, sees the lanes, credits a relation hit and sees the credited edge's weight change
(old -> new, fetched from /api/edges); saves screenshots under tests/artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sidelight.index import Index
from sidelight.serve.app import create_app
from sidelight.serve.engine import Service
from sidelight.web.parity import browser_available, chromium
from sidelight.web.served import served_page

from tests.live import live_server

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

pytest.importorskip("selenium.webdriver")
if not browser_available():
    pytest.skip("needs Debian's chromium and chromium-driver (make debian installs them)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def server(foldoc_copy):
    service = Service(Index.load(foldoc_copy))
    with live_server(create_app(service, allowed_hosts=["127.0.0.1", "localhost"], page=served_page(service))) as url:
        yield url
    service.close()


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


def test_search_and_credit_a_relation_hit(server, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 60)
    browser.get(server + "/")
    wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "records"))
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("/")  # keyboard: / focuses the search box
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    budget = browser.find_element(By.ID, "budget")  # a loaded machine must not cut the relation lane
    budget.clear()
    budget.send_keys("60000")
    box = browser.find_element(By.ID, "q")
    box.send_keys("garbage collection", Keys.ENTER)
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '.lane[data-channel="relation"] .hit')))
    lanes = [e.get_attribute("data-channel") for e in browser.find_elements(By.CSS_SELECTOR, "#lanes .lane")]
    assert lanes[:2] == ["lexical", "relation"]
    assert browser.find_elements(By.CSS_SELECTOR, '.lane[data-channel="lexical"] .hit')
    first = browser.find_element(By.CSS_SELECTOR, '.lane[data-channel="relation"] .hit')
    path_text = first.find_element(By.CSS_SELECTOR, ".path").text
    assert "-[" in path_text and "]->" in path_text, path_text
    # keyboard: j moves the selection
    browser.find_element(By.TAG_NAME, "h1").click()
    body.send_keys("j")
    assert browser.find_elements(By.CSS_SELECTOR, "#lanes .hit.sel")
    browser.save_screenshot(str(ARTIFACTS / "lab-lanes.png"))

    first.find_element(By.CSS_SELECTOR, "button.credit").click()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#edge-changes tr.edge-change")))
    rows = browser.find_elements(By.CSS_SELECTOR, "#edge-changes tr.edge-change")
    assert rows
    for row in rows:
        old = float(row.find_element(By.CSS_SELECTOR, ".old").text)
        new = float(row.find_element(By.CSS_SELECTOR, ".new").text)
        assert new > old, (old, new)
        assert row.get_attribute("data-changed") == "true"
        assert "credited" == row.find_elements(By.TAG_NAME, "td")[3].text
    summary = browser.find_element(By.ID, "unchanged-summary").text
    assert summary.startswith(f"{len(rows)} of ")
    assert "strengthened" in browser.find_element(By.ID, "feedback").text
    browser.save_screenshot(str(ARTIFACTS / "lab-feedback.png"))

    browser.find_element(By.CSS_SELECTOR, 'nav button[data-tab="corpus"]').click()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#degree-svg rect")))
    assert "Records" in browser.find_element(By.ID, "stats-table").text
    browser.save_screenshot(str(ARTIFACTS / "lab-corpus.png"))
    assert (ARTIFACTS / "lab-feedback.png").stat().st_size > 10_000
