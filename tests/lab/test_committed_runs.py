"""`make test` audits every run record committed under results/runs and checks each README held-out figure
that results/readme-figures.json ties to one of them (no model, no index: ranks, qrels and stored results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidelight.lab.audit import audit
from sidelight.lab.committed import check_figures, run_folders

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "results" / "runs"
FOLDERS = run_folders(RUNS) if RUNS.is_dir() and any(RUNS.iterdir()) else []


@pytest.mark.parametrize("run", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_committed_run_passes_the_audit(run, monkeypatch):
    monkeypatch.chdir(ROOT)  # protocol paths in freeze.json are relative to the repository
    r = audit(run)
    assert r["agree"], r["problems"][:10]
    assert r["checks"] > 0


RESCORED = [p for p in FOLDERS if "rescor" in p.name or (p / "rescoring.json").exists()]


@pytest.mark.parametrize("run", RESCORED, ids=[p.name for p in RESCORED])
def test_a_rescoring_says_so(run):
    """A folder made again after its first scoring was lost: its name and rescoring.json say so (a first
    scoring, committed in the change that made it, has neither)."""
    info = json.loads((run / "rescoring.json").read_text())
    assert "rescor" in run.name and info["kind"] == "re-scoring, not a first scoring"
    assert info["reason"] and info["date"] and info["commit"]


def test_readme_held_out_figures_equal_their_committed_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    table = ROOT / "results" / "readme-figures.json"
    figures = json.loads(table.read_text())["figures"]
    assert figures and {f["run"] for f in figures} <= {p.name for p in FOLDERS}
    assert check_figures(ROOT / "README.md", table, RUNS) == []
