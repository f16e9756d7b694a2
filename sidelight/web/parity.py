"""The exported page checked against Python, as Carrier R01 checked its live page (§11).

`page_rankings` runs queries through the page's own worker in headless Chromium (Selenium with
Debian's chromium and chromium-driver); `python_rankings` ranks the same queries with the index's
registered methods; `compare` counts method-query comparisons and lists every mismatch: a
different top-k id list, a score off by more than `rtol` (relative), or for the relation lane a
different credited edge path. Dense methods use Python's query vectors on both sides, so the
check is of the page's scoring; `encode_check` compares the page's own query vectors with Python's.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import InputError
from ..index import Index
from ..methods import get_method
from ..methods.relation import relation_rank

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1400,1000")


@dataclass(frozen=True)
class Ranked:
    """One method's answer to one query: record ids best first, their scores, and (relation) edge paths."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]
    paths: tuple[tuple[int, ...], ...] | None = None


@dataclass
class Parity:
    """Comparisons made and the mismatches found (method, query index, what differs)."""

    comparisons: int = 0
    mismatches: list[tuple[str, int, str]] = field(default_factory=list)


def browser_available() -> bool:
    """Debian's chromium and chromium-driver are both installed."""
    return all(shutil.which(name) is not None or Path(path).exists()
               for name, path in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)))


@contextmanager
def chromium(network_log: bool = False) -> Iterator[object]:
    """A headless Chromium driven by Selenium, with a fresh profile and no background network
    (`network_log`: keep the DevTools log, whose requests `requested_urls` lists)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise InputError("the page check needs selenium (pip install 'sidelight[test]')") from exc
    profile = tempfile.mkdtemp(prefix="sidelight-chromium-")
    opts = Options()
    opts.binary_location = shutil.which("chromium") or CHROMIUM
    for a in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(a)
    if network_log:
        opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver") or CHROMEDRIVER),
                              options=opts)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(600)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for since the last call (needs `chromium(network_log=True)`)."""
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def open_page(driver, site: Path, model: bool = False) -> dict:
    """Open SITE/index.html from disk; wait until the index (and with `model`, the encoder) is ready.
    Returns the page's load timings (ms)."""
    driver.get((Path(site).resolve() / "index.html").as_uri())
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1], model = arguments[0];"
        "(async () => { await window.sidelight.ready(); if (model) await window.sidelight.modelReady();"
        " return window.sidelight.timings; })().then(done, (e) => done({error: String(e)}));", model)


def page_rankings(driver, queries: Sequence[str], methods: Sequence[str], k: int = 10,
                  vectors: np.ndarray | None = None) -> dict[str, list[Ranked]]:
    """Each method's top k for each query, ranked by the page's worker (with `vectors`: those query vectors)."""
    vecs = None if vectors is None else np.asarray(vectors, dtype=np.float32).tolist()
    out = driver.execute_async_script(
        "const [queries, methods, k, vecs] = arguments, done = arguments[arguments.length - 1];"
        "(async () => { const out = {}; for (const m of methods) out[m] = [];"
        " for (let i = 0; i < queries.length; i++) {"
        "  const r = await window.sidelight.search(queries[i], methods, k, vecs ? vecs[i] : null);"
        "  for (const m of methods) { const x = r.lanes[m];"
        "   out[m].push({ids: x.positions.map((p) => window.sidelight.ids[p]), scores: x.scores,"
        "    paths: x.hits && x.hits.length ? x.hits.map((h) => h.path.map((e) => e.edge_id)) : null}); } }"
        " return out; })().then(done, (e) => done({error: String(e)}));", list(queries), list(methods), k, vecs)
    if "error" in out:
        raise RuntimeError(f"the page failed: {out['error']}")
    return {m: [Ranked(tuple(r["ids"]), tuple(r["scores"]), None if r["paths"] is None else
                       tuple(tuple(p) for p in r["paths"])) for r in out[m]] for m in methods}


def python_rankings(index: Index, queries: Sequence[str], methods: Sequence[str], k: int = 10,
                    vectors: np.ndarray | None = None) -> dict[str, list[Ranked]]:
    """The same rankings from Python's registered methods (Python's query vectors when given)."""
    ids = index.ids
    out: dict[str, list[Ranked]] = {m: [] for m in methods}

    def run() -> None:
        for q in queries:
            for m in methods:
                if m == "relation":
                    rel = relation_rank(index, q, k)
                    out[m].append(Ranked(tuple(ids[h.node] for h in rel.hits), tuple(h.activation for h in rel.hits),
                                         tuple(tuple(e.edge_id for e in h.path) for h in rel.hits) or None))
                else:
                    r = get_method(m).rank(index, q, k)
                    out[m].append(Ranked(tuple(ids[p] for p in r.positions), tuple(float(s) for s in r.scores)))

    if index.dense is None or vectors is None:
        run()
    else:
        with index.dense.query_vectors(dict(zip(queries, np.asarray(vectors, dtype=np.float32)))):
            run()
    return out


def compare(python: dict[str, list[Ranked]], page: dict[str, list[Ranked]], rtol: float = 1e-6) -> Parity:
    """Every method-query pair: same ids in the same order, scores within `rtol`, same relation paths."""
    result = Parity()
    for m, rows in python.items():
        for i, (a, b) in enumerate(zip(rows, page[m], strict=True)):
            result.comparisons += 1
            if a.ids != b.ids:
                result.mismatches.append((m, i, f"ids {a.ids} != {b.ids}"))
            elif not np.allclose(a.scores, b.scores, rtol=rtol, atol=0.0):
                worst = float(np.max(np.abs(np.subtract(a.scores, b.scores)) / np.maximum(np.abs(a.scores), 1e-300)))
                result.mismatches.append((m, i, f"scores differ by {worst:.2e} relative"))
            elif a.paths != b.paths:
                result.mismatches.append((m, i, "relation paths differ"))
    return result


def encode_check(driver, index: Index, queries: Sequence[str]) -> list[float]:
    """Cosine between the page's own query vectors (onnxruntime-web) and Python's, per query."""
    page = np.asarray(driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.sidelight.encode(arguments[0]).then(done, (e) => done({error: String(e)}));", list(queries)))
    if index.dense is None:
        raise InputError("the page's query vectors need an index with dense vectors")
    dense = index.dense
    py = np.stack([dense.encode_query(q) for q in queries]).astype(np.float64)
    return [float(c) for c in np.sum(page * py, axis=1) / (np.linalg.norm(page, axis=1) * np.linalg.norm(py, axis=1))]
