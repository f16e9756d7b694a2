"""A hand-made Obsidian vault read by `load_folder`: records, sections, links, edges and the report,
each checked against what a reader of the files sees (worked out by hand, line by line)."""

from __future__ import annotations

import json

import pytest

from sidelight.corpus import Edge
from sidelight.corpus.folder import FolderCorpus, load_folder, read_document
from sidelight.corpus.links import Unresolved, resolve_links
from sidelight.corpus.sources import load_source

HOME = """\
---
title: Welcome home
aliases: [Start, Index]
tags: [hub, meta/top]
created: 2024-01-02
rating: 5
---
Intro links [[Backlinks]] and [[Graph view#Local graph|the local graph]]. Also see #inline-tag here.

# Links
See [[Concepts/Graph view]] or [[Backlinks.md]] and [[Missing note]].
A heading link [[Backlinks#Usage]] too.

## Table
| Note | What |
| --- | --- |
| [[Graph view\\|graph]] | view |

## Embeds
![[Backlinks]]
![[image.png]]
Relative [link](Concepts/Graph%20view.md#local-graph) and [web](https://example.org).
Code `[[Not a link]]` here.

```
[[Fenced]]
```
# Empty heading
# Last
Cycle back to [[Home]] and [[#Links|up]].
"""

BACKLINKS = """\
---
aliases: Backlink, Linked mentions
tags: concept
---
# Backlinks
Backlinks show notes linking here, like [[Home]].

## Usage
Open the pane. Then [[Graph view]] helps. #concept
"""

GRAPH_VIEW = """\
Graph view shows [[Backlinks]] as edges.

# Local graph
A cycle: [[Home]] links here and here links [[Home]] again.
"""

BROKEN = """\
---
title: [unclosed
---
Body after broken front matter.
"""

PAGE = """\
<html><head><title>A page</title></head>
<body><nav><a href="Home.md">nav link</a></nav>
<h1 id="top">Page</h1>
<p>Read <a href="notes.txt">the notes</a>, <a href="#top">this page</a> and <a href="missing.html">nothing</a>.</p>
</body></html>
"""


@pytest.fixture()
def vault(tmp_path):
    root = tmp_path / "vault"
    files = {
        "Home.md": HOME,
        "Concepts/Backlinks.md": BACKLINKS,
        "Concepts/Graph view.md": GRAPH_VIEW,
        "Old/Deep/Backlinks.md": "An older note with the same name.\n",
        "Broken.md": BROKEN,
        "notes.txt": "First paragraph\nline two\n\n\nSecond paragraph.\n",
        "page.html": PAGE,
        ".obsidian/workspace.md": "[[Home]] hidden\n",
        ".trash/Old.md": "deleted\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return root


def test_records_are_the_documents_sorted_by_path(vault):
    fc = load_folder(vault)
    assert isinstance(fc, FolderCorpus) and fc.name == "vault"
    assert fc.ids == ["Broken.md", "Concepts/Backlinks.md", "Concepts/Graph view.md", "Home.md",
                      "Old/Deep/Backlinks.md", "notes.txt", "page.html"]
    assert [r.title for r in fc.records] == ["Broken", "Backlinks", "Graph view", "Welcome home", "Backlinks",
                                             "notes", "A page"]
    assert [r.metadata["format"] for r in fc.records] == ["markdown"] * 5 + ["text", "html"]
    json.dumps([r.metadata for r in fc.records])  # JSON-serialisable


def test_home_note_text_front_matter_and_tags(vault):
    home, issues = read_document(vault, "Home.md")
    assert issues == []
    assert home.id == home.metadata["path"] == "Home.md"
    assert home.title == "Welcome home" and home.aliases == ("Start", "Index")
    assert home.metadata["tags"] == ["hub", "inline-tag", "meta/top"]
    assert home.metadata["properties"] == {"created": "2024-01-02", "rating": 5}
    assert len(home.metadata["sha256"]) == 64
    assert home.text == (
        "Intro links Backlinks and the local graph. Also see #inline-tag here."
        "\n\nLinks"
        "\n\nSee Concepts/Graph view or Backlinks.md and Missing note.\nA heading link Backlinks > Usage too."
        "\n\nTable"
        "\n\nNote | What\ngraph | view"
        "\n\nEmbeds"
        "\n\nRelative link and web.\nCode [[Not a link]] here."
        "\n\n[[Fenced]]"
        "\n\nEmpty heading"
        "\n\nLast"
        "\n\nCycle back to Home and up.")


def test_home_note_sections(vault):
    home, _ = read_document(vault, "Home.md")
    sections = home.metadata["sections"]
    assert [(s["heading"], s["level"], s["anchor"], s["lines"]) for s in sections] == [
        ([], 0, "", [8, 8]),
        (["Links"], 1, "links", [10, 12]),
        (["Links", "Table"], 2, "table", [14, 17]),
        (["Links", "Embeds"], 2, "embeds", [19, 27]),
        (["Empty heading"], 1, "empty-heading", [28, 28]),
        (["Last"], 1, "last", [29, 30]),
    ]
    spans = [home.text[s["start"]:s["end"]] for s in sections]
    assert spans == [
        "Intro links Backlinks and the local graph. Also see #inline-tag here.",
        "Links\n\nSee Concepts/Graph view or Backlinks.md and Missing note.\nA heading link Backlinks > Usage too.",
        "Table\n\nNote | What\ngraph | view",
        "Embeds\n\nRelative link and web.\nCode [[Not a link]] here.\n\n[[Fenced]]",
        "Empty heading",
        "Last\n\nCycle back to Home and up.",
    ]
    ends = [s["end"] for s in sections]
    assert [s["start"] for s in sections[1:]] == [e + 2 for e in ends[:-1]]  # in order, no overlap
    assert ends[-1] == len(home.text)


def test_home_note_links_every_form(vault):
    home, _ = read_document(vault, "Home.md")
    intro = "Intro links Backlinks and the local graph."
    see = "See Concepts/Graph view or Backlinks.md and Missing note."
    assert [tuple(ln.values()) for ln in home.metadata["links"]] == [
        ("Backlinks", "", "wikilink", 8, intro, 0),
        ("Graph view", "Local graph", "wikilink", 8, intro, 0),
        ("Concepts/Graph view", "", "wikilink", 11, see, 1),
        ("Backlinks.md", "", "wikilink", 11, see, 1),
        ("Missing note", "", "wikilink", 11, see, 1),
        ("Backlinks", "Usage", "wikilink", 12, "A heading link Backlinks > Usage too.", 1),
        ("Graph view", "", "wikilink", 17, "graph | view", 2),  # [[Graph view\|graph]] in a table
        ("Backlinks", "", "embed", 20, "", 3),
        ("image.png", "", "embed", 21, "", 3),
        ("Concepts/Graph view.md", "local-graph", "markdown", 22, "Relative link and web.", 3),
        ("Home", "", "wikilink", 30, "Cycle back to Home and up.", 5),
    ]
    assert list(home.metadata["links"][0]) == ["target", "anchor", "kind", "line", "context", "section"]


def test_other_notes(vault):
    fc = load_folder(vault)
    by_id = {r.id: r for r in fc.records}
    back = by_id["Concepts/Backlinks.md"]
    assert back.aliases == ("Backlink", "Linked mentions") and back.metadata["tags"] == ["concept"]
    assert back.metadata["properties"] == {}
    assert back.text == ("Backlinks\n\nBacklinks show notes linking here, like Home."
                         "\n\nUsage\n\nOpen the pane. Then Graph view helps. #concept")
    assert [(s["heading"], s["lines"], back.text[s["start"]:s["end"]]) for s in back.metadata["sections"]] == [
        (["Backlinks"], [5, 6], "Backlinks\n\nBacklinks show notes linking here, like Home."),
        (["Backlinks", "Usage"], [8, 9], "Usage\n\nOpen the pane. Then Graph view helps. #concept"),
    ]
    assert [(ln["target"], ln["line"], ln["context"], ln["section"]) for ln in back.metadata["links"]] == [
        ("Home", 6, "Backlinks show notes linking here, like Home.", 0),
        ("Graph view", 9, "Then Graph view helps.", 1),
    ]
    broken = by_id["Broken.md"]
    assert (broken.title, broken.text, broken.metadata["properties"]) == ("Broken", "Body after broken front matter.", {})
    notes = by_id["notes.txt"]
    assert notes.text == "First paragraph\nline two\n\nSecond paragraph."
    assert notes.metadata["sections"] == [{"heading": [], "level": 0, "anchor": "", "lines": [1, 5],
                                           "start": 0, "end": len(notes.text)}]
    page = by_id["page.html"]
    assert page.text == "Page\n\nRead the notes, this page and nothing."
    assert page.metadata["sections"] == [{"heading": ["Page"], "level": 1, "anchor": "top", "lines": [3, 4],
                                          "start": 0, "end": len(page.text)}]
    assert [(ln["target"], ln["kind"], ln["line"]) for ln in page.metadata["links"]] == [
        ("notes.txt", "href", 4), ("missing.html", "href", 4)]


def test_edges_edge_for_edge(vault):
    fc = load_folder(vault)
    intro = "Intro links Backlinks and the local graph."
    expected = [
        Edge("Concepts/Backlinks.md", "Home.md", "link", 1.0, "Backlinks show notes linking here, like Home."),
        Edge("Concepts/Backlinks.md", "Concepts/Graph view.md", "link", 1.0, "Then Graph view helps."),
        Edge("Concepts/Graph view.md", "Concepts/Backlinks.md", "link", 1.0, "Graph view shows Backlinks as edges."),
        Edge("Concepts/Graph view.md", "Home.md", "link", 1.0, "A cycle: Home links here and here links Home again."),
        Edge("Home.md", "Concepts/Backlinks.md", "link", 1.0, intro),
        Edge("Home.md", "Concepts/Graph view.md", "link", 1.0, intro, anchor="Local graph"),
        Edge("Home.md", "Concepts/Backlinks.md", "embed", 1.0, ""),
        Edge("page.html", "notes.txt", "link", 1.0, "Read the notes, this page and nothing."),
    ]
    assert fc.edges == expected
    assert [(e.context, e.anchor) for e in fc.edges] == [(e.context, e.anchor) for e in expected]
    # the shortest path wins among notes named Backlinks; a note's link to itself makes no edge
    assert not any(e.target == "Old/Deep/Backlinks.md" or e.source == e.target for e in fc.edges)


def test_report(vault):
    report = load_folder(vault).report
    assert report.counts() == {"documents": 7, "sections": 14, "links": 18, "resolved": 15, "unresolved": 3,
                               "edges": 8, "skipped": 0, "warnings": 1, "ignored": 1}
    assert report.unresolved == [("Home.md", "Missing note", "no such document"),
                                 ("Home.md", "image.png", "not a document (.png)"),
                                 ("page.html", "missing.html", "no such document")]
    assert report.warnings == [("Broken.md", "front matter is not valid YAML (front matter line 1): "
                                             "expected ',' or ']', but got '<stream end>'; properties ignored")]
    text = report.to_text()
    assert "7 documents (1 html, 5 markdown, 1 text)" in text
    assert "Home.md\tMissing note\tno such document" in text


def test_resolve_links_from_stored_records_alone(vault):
    fc = load_folder(vault)
    edges, unresolved = resolve_links(list(fc.records))
    assert edges == list(fc.edges)
    assert unresolved[0] == Unresolved("Home.md", "Missing note", "no such document")


def test_exclude_and_ignore_file(vault):
    (vault / ".sidelightignore").write_text("# drafts\nOld/\n*.txt\n")
    fc = load_folder(vault, exclude=["page.*"])
    assert fc.ids == ["Broken.md", "Concepts/Backlinks.md", "Concepts/Graph view.md", "Home.md"]


def test_load_source_reads_a_folder_of_documents(vault):
    corpus = load_source(str(vault))
    assert isinstance(corpus, FolderCorpus) and len(corpus) == 7
