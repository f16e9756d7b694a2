"""Every committed benchmark result names the command and the commit that made it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = sorted((ROOT / "bench" / "results").glob("*.json"))


def test_bench_results_are_not_ignored():
    ignored = subprocess.run(["git", "check-ignore", "-q", "bench/results/new.json"], cwd=ROOT).returncode == 0
    assert not ignored


@pytest.mark.parametrize("path", RESULTS, ids=[p.name for p in RESULTS])
def test_each_result_names_its_command_and_commit(path):
    made = json.loads(path.read_text())["made_by"]
    script = re.match(r"\.venv/bin/python (bench/\w+\.py)( |$)", made["command"])
    assert script and (ROOT / script.group(1)).is_file(), made["command"]
    assert re.fullmatch(r"[0-9a-f]{40}", made["commit"])
    assert _on_main(made["commit"]), f"{path.name}: commit {made['commit']} is not an ancestor of HEAD"


def _on_main(commit: str) -> bool:
    """Whether `commit` is HEAD or an ancestor: a clone of main alone (as CI makes) holds it."""
    is_ancestor = ["git", "merge-base", "--is-ancestor", commit, "HEAD"]
    return subprocess.run(is_ancestor, cwd=ROOT, capture_output=True).returncode == 0


def test_each_commit_the_readme_names_is_on_main():
    text = (ROOT / "README.md").read_text()
    named = {m for m in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"[a-f]", m) and re.search(r"\d", m)}
    assert named, "the README names commits"
    assert sorted(c for c in named if not _on_main(c)) == []


def test_write_json_stamps_the_command_and_commit(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import _common
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(sys, "argv", [str(ROOT / "bench" / "lexical.py"), "--json", "x.json"])
    monkeypatch.setattr(_common, "_STARTED", None)  # as if the script started now, with these arguments
    _common.write_json(tmp_path / "x.json", {"q_per_s": 1.0})
    made = json.loads((tmp_path / "x.json").read_text())["made_by"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert made["command"] == ".venv/bin/python bench/lexical.py --json x.json" and made["commit"] == head
