"""`sidelight index FOLDER`, `search` with passages, `show` and `links`: a folder of notes from the command line."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main

NOTES = {
    "A.md": "---\naliases: [Alpha]\n---\n# A\n\nIntro to A with a link to [[B]].\n\n## Details\n\n"
            "Pinch zoom to adjust text size. See [[B#Usage|usage of B]].\n",
    "B.md": "# B\n\n## Usage\n\nB keeps notes in sync across devices.\n",
}


@pytest.fixture
def index(tmp_path):
    for rel, text in NOTES.items():
        (tmp_path / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / rel).write_text(text, encoding="utf-8")
    report = tmp_path / "report.txt"
    assert main(["index", str(tmp_path / "vault"), "-o", str(tmp_path / "idx"), "-q", "--report", str(report)]) == 0
    assert "2 documents" in report.read_text()
    return tmp_path / "idx"


def test_search_names_the_section_its_lines_and_a_marked_snippet(index, capsys):
    capsys.readouterr()
    assert main(["search", str(index), "adjust text size", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out)["hits"][0]
    p = hit["passage"]
    assert hit["id"] == "A.md" and p["section"] == "A > Details" and p["location"]["path"] == "A.md"
    first, last = p["location"]["lines"]
    lines = NOTES["A.md"].splitlines()
    assert lines[first - 1] == "## Details" and "Pinch zoom" in "\n".join(lines[first - 1:last])
    assert sorted(p["snippet"][a:b].lower() for a, b in p["marks"]) == ["adjust", "size", "text"]
    assert main(["search", str(index), "adjust text size"]) == 0  # the rendered form
    out = capsys.readouterr().out
    assert "A.md:" in out and "Details" in out and "Pinch zoom" in out


def test_show_reads_a_section_and_links_lists_both_ways(index, capsys):
    capsys.readouterr()
    assert main(["show", str(index), "B.md#Usage", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["section"] == "B > Usage" and doc["text"].startswith("Usage") and "in sync" in doc["text"]
    assert [x["id"] for x in doc["links_in"]] == ["A.md"]
    assert main(["links", str(index), "A.md", "--json", "--hops", "2"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in found["links_out"]] == ["B.md"] and found["links_in"] == [] and found["two_hop"] == []
    assert main(["show", str(index), "B.md#Nowhere"]) == 2
    assert "no section 'Nowhere'" in capsys.readouterr().err
