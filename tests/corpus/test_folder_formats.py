"""HTML and PDF documents of a folder, the edge anchor in an index's edges.jsonl, and JSONL edges
that name unknown ids: checked against hand-made inputs."""

from __future__ import annotations

import json

import pytest

from sidelight.corpus import Edge
from sidelight.corpus.folder import load_folder, read_document
from sidelight.corpus.jsonl import load_jsonl_corpus
from sidelight.errors import InputError
from sidelight.index.records import EdgeFile, write_edges

SPHINX = """\
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title> Guide \u2014 Docs </title>
<style>p { color: red }</style><script>var nav = "no";</script></head>
<body>
<div class="related" role="navigation"><a href="index.html">Index</a></div>
<div class="document"><div class="body" role="main">
<section id="guide">
<h1>Guide<a class="headerlink" href="#guide">\u00b6</a></h1>
<p>Intro with a <a href="lib/other.html#part">link to other</a>. Next sentence.<br>New line.</p>
<script>document.write("hidden")</script>
<section id="usage">
<h2>Usage</h2>
<pre>code  line 1
  line 2</pre>
<table><tr><th>a</th><td><a href="lib/">b</a></td></tr></table>
<p>See <a href="#guide">above</a>, <a href="https://python.org">the web</a> and <a href="_static/x.png">a picture</a>.</p>
</section></section>
</div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><a href="lib/other.html">other</a></div>
<div class="footer">Footer text</div>
</body></html>
"""

PLAIN = """\
<html><body><header><h1>Site name</h1></header>
<article><h2 id="first">First</h2><p>Text of the first part.</p>
<h3>Sub part</h3><p>More.</p></article><footer>foot</footer></body></html>
"""


@pytest.fixture()
def site(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "guide.html").write_text(SPHINX, encoding="utf-8")
    (tmp_path / "plain.htm").write_text(PLAIN, encoding="utf-8")
    (tmp_path / "lib" / "other.html").write_text("<p>other</p>", encoding="utf-8")
    (tmp_path / "lib" / "index.html").write_text("<title>Lib</title><h1>Library</h1>", encoding="utf-8")
    return tmp_path


def test_sphinx_page_content_sections_and_links(site):
    page, issues = read_document(site, "guide.html")
    assert issues == [] and page.title == "Guide \u2014 Docs"
    assert page.text == ("Guide\n\nIntro with a link to other. Next sentence.\nNew line.\n\nUsage"
                         "\n\ncode  line 1\n  line 2\n\na | b\n\nSee above, the web and a picture.")
    assert [(s["heading"], s["level"], s["anchor"], s["lines"], page.text[s["start"]:s["end"]])
            for s in page.metadata["sections"]] == [
        (["Guide"], 1, "guide", [8, 9], "Guide\n\nIntro with a link to other. Next sentence.\nNew line."),
        (["Guide", "Usage"], 2, "usage", [12, 16], "Usage\n\ncode  line 1\n  line 2\n\na | b\n\nSee above, the web and a picture."),
    ]
    assert [tuple(ln.values()) for ln in page.metadata["links"]] == [
        ("lib/other.html", "part", "href", 9, "Intro with a link to other.", 0),
        ("lib/", "", "href", 15, "a | b", 1),
        ("_static/x.png", "", "href", 16, "See above, the web and a picture.", 1),
    ]


def test_plain_page_without_main_drops_header_and_footer(site):
    page, _ = read_document(site, "plain.htm")
    assert page.title == "plain"  # no <title>, no h1 in the content (the header's is dropped): the stem
    assert page.text == "First\n\nText of the first part.\n\nSub part\n\nMore."
    assert [(s["heading"], s["anchor"], s["lines"]) for s in page.metadata["sections"]] == [
        (["First"], "first", [2, 2]), (["First", "Sub part"], "sub-part", [3, 3])]


def test_site_edges_and_unresolved(site):
    fc = load_folder(site)
    assert fc.ids == ["guide.html", "lib/index.html", "lib/other.html", "plain.htm"]
    assert fc.edges == [Edge("guide.html", "lib/other.html"), Edge("guide.html", "lib/index.html")]
    assert fc.edges[0].anchor == "part" and fc.edges[0].context == "Intro with a link to other."
    assert fc.report.unresolved == [("guide.html", "_static/x.png", "not a document (.png)")]
    assert [r.title for r in fc.records] == ["Guide \u2014 Docs", "Lib", "other", "plain"]


def test_pdf_pages_outline_and_title(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    w = pypdf.PdfWriter()
    font = w._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                           NameObject("/Subtype"): NameObject("/Type1"),
                                           NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for text in [b"Hello page one. It has [[no]] links", b"Methods on page two", b"Results page three"]:
        page = w.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        stream = DecodedStreamObject()
        stream.set_data(b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET")
        page[NameObject("/Contents")] = w._add_object(stream)
    top = w.add_outline_item(title="Methods", page_number=1)
    w.add_outline_item(title="Details", page_number=2, parent=top)
    w.add_metadata({"/Title": "A Paper"})
    w.write(tmp_path / "paper.pdf")
    record, issues = read_document(tmp_path, "paper.pdf")
    assert issues == [] and record.title == "A Paper" and record.metadata["format"] == "pdf"
    # "Methods" is on its page: the heading takes it from there; "Details" is not: it opens its page
    assert record.text == ("Hello page one. It has [[no]] links\n\nMethods\n\non page two"
                           "\n\nDetails\n\nResults page three")
    assert [(s["heading"], s["level"], s["pages"], record.text[s["start"]:s["end"]])
            for s in record.metadata["sections"]] == [
        ([], 0, [1, 1], "Hello page one. It has [[no]] links"),
        (["Methods"], 1, [2, 2], "Methods\n\non page two"),
        (["Methods", "Details"], 2, [3, 3], "Details\n\nResults page three"),
    ]
    assert record.metadata["links"] == []


def test_edge_anchor_in_edges_jsonl_and_old_rows(tmp_path):
    edges = [Edge("a", "b", "link", 1.0), Edge("a", "c", "link", 1.0, "ctx"),
             Edge("b", "c", "embed", 2.0, "", anchor="Part"), Edge("c", "a", "link", 1.0, "why", anchor="H")]
    write_edges(tmp_path, edges)
    rows = [json.loads(line) for line in (tmp_path / "edges.jsonl").read_text().splitlines()]
    assert rows == [["a", "b", "link", 1.0], ["a", "c", "link", 1.0, "ctx"], ["b", "c", "embed", 2.0, "", "Part"],
                    ["c", "a", "link", 1.0, "why", "H"]]
    back = list(EdgeFile(tmp_path / "edges.jsonl", 4))
    assert [(e.context, e.anchor) for e in back] == [("", ""), ("ctx", ""), ("", "Part"), ("why", "H")]
    assert back == edges


def test_jsonl_skip_unresolved_counts_edges_to_unknown_ids(tmp_path):
    p = tmp_path / "notes.jsonl"
    p.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    (tmp_path / "notes.edges.tsv").write_text("a\tb\na\tzzz\nqqq\tb\n")
    with pytest.raises(InputError, match="unknown record id 'zzz'"):
        load_jsonl_corpus(p)
    corpus = load_jsonl_corpus(p, skip_unresolved=True)
    assert corpus.edges == [Edge("a", "b")] and corpus.unresolved_edges == 2
