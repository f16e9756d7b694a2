"""The exported page in headless Chromium, checked against Python like Carrier R01's live page (§11).

Every method the page offers, on every query of the FOLDOC benchmark's held-out split (the lab's
FOLDOC index: min length 2, Lucene stop list), of SciFact's 300 test queries and of the WordNet
relation questions (typed edges and cues): the same ids in the same order in the top 10, scores
within 1e-6 relative, the same credited edge paths. Dense
methods score Python's query vectors (SciFact: the 283 abstracts judged for the test queries,
encoded by the int8 MiniLM); the page's own query vectors are checked against Python's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidelight.corpus import Corpus
from sidelight.index import Index
from sidelight.text import TokenizerConfig
from sidelight.web.export import export_web
from sidelight.web.parity import (browser_available, chromium, compare, encode_check, open_page, page_rankings,
                                  python_rankings, requested_urls)

from tests.live import live_server

pytest.importorskip("selenium.webdriver")
if not browser_available():
    pytest.skip("needs Debian's chromium and chromium-driver (make debian installs them)", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
LEXICAL = ["bm25", "tfidf", "rrf-lexical", "bm25+ppr", "relation"]


@pytest.fixture(scope="module")
def browser():
    with chromium(network_log=True) as driver:
        yield driver


def _site(tmp_path_factory, index: Index, name: str) -> tuple[Index, Path]:
    root = tmp_path_factory.mktemp(name)
    index.save(root / "idx")
    export_web(root / "idx", root / "site")
    return Index.load(root / "idx"), root / "site"


def _check(browser, index: Index, site: Path, queries: list[str], methods: list[str], vectors=None,
           model: bool = False) -> int:
    open_page(browser, site, model=model)
    result = compare(python_rankings(index, queries, methods, 10, vectors),
                     page_rankings(browser, queries, methods, 10, vectors))
    print(f"{site.parent.name}: {result.comparisons} method-query comparisons, {len(result.mismatches)} mismatches")
    assert result.comparisons == len(queries) * len(methods)
    assert not result.mismatches, [(m, queries[i], why) for m, i, why in result.mismatches[:5]]
    return result.comparisons


def test_foldoc_held_out_split_every_method_equals_python(browser, tmp_path_factory):
    from sidelight.corpus.foldoc import load_foldoc

    index, site = _site(tmp_path_factory, Index.build(load_foldoc(), TokenizerConfig(min_length=2, stopwords="lucene-en-v1"),
                                                      progress=False), "foldoc")
    rows = [json.loads(line) for line in (REPO / "benchmarks" / "foldoc-concepts-v1.jsonl").open()]
    queries = [r["query"] for r in rows if r["split"] == "test"]
    assert len(queries) >= 50
    _check(browser, index, site, queries, LEXICAL)
    relation = page_rankings(browser, queries[:10], ["relation"])["relation"]
    assert all(r.paths and all(len(p) >= 1 for p in r.paths) for r in relation)  # every hit came through an edge
    urls = requested_urls(browser)
    assert any(u.startswith("file:") and u.endswith("/data/index.js") for u in urls)
    assert not [u for u in urls if u.startswith(("http:", "https:", "ws:", "wss:"))]  # no request leaves the page


def test_wordnet_relation_questions_typed_cues_equal_python(browser, tmp_path_factory):
    """WordNet's typed edges: the relation cues ("a kind of", "part of") walk only their edge types."""
    from sidelight.corpus.wordnet import load_wordnet_nouns
    from sidelight.methods.relation import relation_rank

    index, site = _site(tmp_path_factory, Index.build(load_wordnet_nouns(), TokenizerConfig(stopwords="lucene-en-v1"),
                                                      progress=False), "wordnet")
    rows = [json.loads(line) for line in (REPO / "benchmarks" / "relation-v1.jsonl").open()]
    queries = [r["query"] for r in rows if r["corpus"] == "wordnet"]
    assert sum(1 for q in queries if (relation_rank(index, q, 10).cue or {}).get("types")) >= 20
    _check(browser, index, site, queries, LEXICAL)


def test_scifact_test_queries_lexical_methods_equal_python(browser, tmp_path_factory, scifact_index, scifact_test):
    index, site = _site(tmp_path_factory, scifact_index, "scifact")
    queries = list(scifact_test[0].values())
    assert len(queries) == 300
    _check(browser, index, site, queries, LEXICAL)


def test_scifact_dense_lane_and_the_browser_encoder(browser, tmp_path_factory, scifact_corpus, scifact_test):
    queries, qrels = scifact_test
    judged = {d for q in qrels.values() for d in q}
    index = Index.build(Corpus("scifact-judged", [r for r in scifact_corpus.records if r.id in judged]), progress=False)
    index.add_dense(progress=False)
    index, site = _site(tmp_path_factory, index, "scifact-dense")
    texts = list(queries.values())
    vectors = index.dense.embedder().encode(texts, kind="query")
    _check(browser, index, site, texts, ["dense", "rrf", "relation", "bm25"], vectors, model=True)
    cosines = encode_check(browser, index, texts[:8])
    print("browser-encoded query vectors, cosine to Python's:", [f"{c:.6f}" for c in cosines])
    assert min(cosines) >= 0.999


def test_the_page_searches_shows_lanes_with_trace_ids_and_stops(browser, tmp_path_factory, toy_corpus):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    index, site = _site(tmp_path_factory, Index.build(toy_corpus, progress=False), "toy")
    open_page(browser, site)
    wait = WebDriverWait(browser, 20)
    wait.until(EC.element_to_be_clickable((By.ID, "go")))
    browser.find_element(By.ID, "sides").click()  # lanes side by side (one list is the default)
    browser.find_element(By.ID, "q").send_keys("cat")
    browser.find_element(By.ID, "go").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "timings"), "query"))
    lanes = browser.find_elements(By.CSS_SELECTOR, "section.lane")
    assert [lane.get_attribute("data-method") for lane in lanes] == ["bm25", "relation", "tfidf"]
    traces = [lane.find_element(By.CLASS_NAME, "trace").text for lane in lanes]
    assert len(set(traces)) == 3 and all(t.startswith("trace id local-") for t in traces)
    bm25 = [e.text for e in lanes[0].find_elements(By.CSS_SELECTOR, ".hit .id")]
    assert bm25 == index.search("cat", "bm25", k=10).ids
    assert "need the server" in browser.find_element(By.TAG_NAME, "body").text
    assert not browser.find_element(By.ID, "status-server").is_displayed()  # opened from disk: no server
    browser.execute_script("document.getElementById('stop').disabled = false; document.getElementById('stop').click();")
    wait.until(EC.text_to_be_present_in_element((By.ID, "timings"), "stopped"))
    again = page_rankings(browser, ["cat"], ["bm25"])["bm25"][0]
    assert list(again.ids) == bm25  # the restarted worker answers
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "web-page.png"))


def test_opened_from_sidelight_serve_the_page_credits_through_the_server(browser, tmp_path_factory, toy_corpus):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service

    index, site = _site(tmp_path_factory, Index.build(toy_corpus, progress=False), "served")
    service = Service(index)
    with live_server(create_app(service, allowed_hosts=["127.0.0.1"], site=site)) as url:
        browser.get(f"{url}/site/")
        wait = WebDriverWait(browser, 20)
        wait.until(EC.visibility_of_element_located((By.ID, "status-server")))
        wait.until(EC.element_to_be_clickable((By.ID, "go")))
        browser.find_element(By.ID, "sides").click()  # lanes side by side (one list is the default)
        browser.find_element(By.ID, "q").send_keys("cat")
        browser.find_element(By.ID, "go").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "timings"), "query"))
        relation = browser.find_element(By.CSS_SELECTOR, 'section.lane[data-method="relation"]')
        assert "(stored by the server)" in relation.find_element(By.CLASS_NAME, "trace").text
        before = float(index.graph.weights[0])
        relation.find_element(By.CSS_SELECTOR, "button.credit").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "timings"), "strengthened"))
        assert index.state.overlay(), "the credited edge has a learned weight"
        assert float(index.graph.weights[0]) == before  # base weights never change; the overlay holds the change
    service.close()


def test_serve_refuses_a_site_of_another_index(tmp_path, toy_corpus, capsys):
    from sidelight.cli import main

    Index.build(toy_corpus, progress=False).save(tmp_path / "idx")
    (tmp_path / "site").mkdir()
    assert main(["serve", str(tmp_path / "idx"), "--site", str(tmp_path / "site")]) == 2
    assert "not a page `sidelight export-web` wrote" in capsys.readouterr().err
