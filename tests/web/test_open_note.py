"""The exported page opens the note: a tiny vault, a lean export, typed into headless Chromium."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sidelight.web.parity import browser_available, chromium

pytest.importorskip("selenium.webdriver")
if not browser_available():
    pytest.skip("needs Debian's chromium and chromium-driver", allow_module_level=True)

CLI = [sys.executable, "-c", "import sys; from sidelight.cli import main; sys.argv[0] = 'sidelight'; sys.exit(main())"]


def _cli(*args) -> None:
    subprocess.run([*CLI, *args], check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def vault_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vault")
    (root / "vault" / "fruit").mkdir(parents=True)
    (root / "vault" / "fruit" / "Apple Tree.md").write_text(
        "# Apple Tree\n\nApples grow on **trees**. Water the orchard weekly. See [[Pears]].\n", encoding="utf-8")
    (root / "vault" / "Pears.md").write_text("# Pears\n\nPears ripen off the tree. They are sweet.\n", encoding="utf-8")
    _cli("index", str(root / "vault"), "-o", str(root / "idx"), "-q")
    return root


def _open(driver, site: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get((site / "index.html").resolve().as_uri())
    WebDriverWait(driver, 20).until(lambda d: not d.find_element(By.ID, "q").get_attribute("disabled"))


def _hits(driver):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#lanes .hit"))
    return driver.find_elements(By.CSS_SELECTOR, "#lanes .hit")


def test_typed_query_marks_terms_and_links_to_obsidian(vault_index):
    from selenium.webdriver.common.by import By

    site = vault_index / "site-obsidian"
    _cli("export-web", str(vault_index / "idx"), "-o", str(site), "--lean",
         "--link-template", "obsidian://open?vault=Notes&file={path}")
    with chromium() as driver:
        _open(driver, site)
        box = driver.find_element(By.ID, "q")
        box.send_keys("orchard water\n")
        hits = _hits(driver)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#lanes section.lane")) == 1  # one list by default
        first = hits[0]
        assert first.find_element(By.CSS_SELECTOR, "a.title").text == "Apple Tree"
        marks = [m.text for m in first.find_elements(By.CSS_SELECTOR, ".text mark")]
        assert marks == ["Water", "orchard"]
        assert "**" not in first.find_element(By.CSS_SELECTOR, ".text").text  # never raw Markdown
        href = first.find_element(By.CSS_SELECTOR, "a.title").get_attribute("href")
        assert href == "obsidian://open?vault=Notes&file=fruit%2FApple%20Tree.md"
        driver.find_element(By.ID, "sides").click()  # lanes side by side on request
        box.send_keys("\n")
        time.sleep(0.5)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#lanes section.lane")) >= 2


def test_default_link_is_the_file_and_q_opens_a_search(vault_index):
    from selenium.webdriver.common.by import By

    site = vault_index / "site-plain"
    _cli("export-web", str(vault_index / "idx"), "-o", str(site), "--lean")
    with chromium() as driver:
        driver.get((site / "index.html").resolve().as_uri() + "?q=sweet%20pears")
        hits = _hits(driver)
        assert driver.find_element(By.ID, "q").get_attribute("value") == "sweet pears"
        link = hits[0].find_element(By.CSS_SELECTOR, "a.title")
        assert link.text == "Pears"
        assert [m.text for m in hits[0].find_elements(By.CSS_SELECTOR, ".text mark")] == ["Pears", "Pears"]  # "Pears Pears ripen off the tree." holds 2 terms, "They are sweet." 1
        assert link.get_attribute("href") == (site / "Pears.md").resolve().as_uri()
        link.click()  # following the title opens the target the href names
        assert driver.current_url == (site / "Pears.md").resolve().as_uri()
