"""The small rules under the folder readers: Obsidian syntax edge cases, link resolution ties,
anchors and sentences; each expectation worked out by hand from Obsidian's documented behaviour."""

from __future__ import annotations

import pytest

from sidelight.corpus import Record
from sidelight.corpus.document import sentence_around, slug
from sidelight.corpus.links import Unresolved, resolve_links
from sidelight.corpus.markdown import parse_markdown


def _links(doc):
    return [(ln["target"], ln["anchor"], ln["kind"], ln["line"]) for ln in doc.links]


def test_tags_only_after_a_space_and_not_only_digits():
    doc = parse_markdown("#top start, C# no, #123 no, url.com/#frag no, #a/b-c_d yes, `#code` no,"
                         " #日本語 yes.\n", "n")
    assert doc.tags == ["a/b-c_d", "top", "日本語"]
    assert doc.text == "#top start, C# no, #123 no, url.com/#frag no, #a/b-c_d yes, #code no, #日本語 yes."


def test_comments_html_and_block_ids_are_not_text_nor_links():
    src = ("Seen %%hidden [[A]]%% text ^block-1\n\n%%\nmulti\n\n[[B]]\n%%\n\n<!-- [[C]] -->\n\n"
           "<div>inside <b>html</b></div>\n\nlast [[D]]\n")
    doc = parse_markdown(src, "n")
    assert doc.text == "Seen  text\n\ninside html\n\nlast D"
    assert _links(doc) == [("D", "", "wikilink", 13)]


def test_wikilink_variants_and_same_note_links():
    doc = parse_markdown("[[Note#H1#H2]], [[Note#^blk]], [[#Local]], [[#Local|here]], [[ Spaced | lab ]], "
                         "![[Pic.png|100]], ![alt](img/a.png), [x](#local), [[]] and [[a\nb]]\n", "n")
    assert doc.text.splitlines()[0] == "Note > H1 > H2, Note, Local, here, lab, , , x, [[]] and [[a"
    assert _links(doc) == [("Note", "H1#H2", "wikilink", 1), ("Note", "^blk", "wikilink", 1),
                           ("Spaced", "", "wikilink", 1), ("Pic.png", "", "embed", 1), ("img/a.png", "", "embed", 1)]


def test_headings_setext_and_nested_and_lists():
    src = "Title\n=====\n\n- item [[A]]\n- two\n\n> # quoted heading\n\nSub\n---\ntext\n"
    doc = parse_markdown(src, "n")
    assert [(s["heading"], s["lines"]) for s in doc.sections] == [
        (["Title"], [1, 7]), (["Title", "Sub"], [9, 11])]
    assert doc.text == "Title\n\nitem A\n\ntwo\n\nquoted heading\n\nSub\n\ntext"
    assert doc.links[0]["line"] == 4 and doc.links[0]["context"] == "item A"


def test_front_matter_shapes():
    doc = parse_markdown("---\ntitle: ''\naliases: one\ntags: '#x, y'\nwhen: 2024-05-06 07:08:09\n"
                         "nested: {a: [1, .nan]}\n---\nbody\n", "stem")
    assert (doc.title, doc.aliases, doc.tags) == ("stem", ("one",), ["x", "y"])
    assert doc.properties == {"when": "2024-05-06T07:08:09", "nested": {"a": [1, "nan"]}}
    doc = parse_markdown("---\ntitle: 2024\naliases: [a, 3, null, a]\n---\n", "stem")
    assert (doc.title, doc.aliases, doc.properties, doc.text) == ("stem", ("a", "3"), {"title": 2024}, "")
    assert doc.sections == [{"heading": [], "level": 0, "anchor": "", "lines": [1, 1], "start": 0, "end": 0}]


def _rec(rid: str, *links: tuple[str, str]) -> Record:
    return Record(rid, rid, "", {"links": [{"target": t, "anchor": "", "kind": k, "line": 1, "context": "",
                                            "section": 0} for t, k in links]})


def test_resolution_rules():
    records = [
        _rec("a/Note.md", ("note", "wikilink"), ("b/Note", "wikilink"), ("Zed", "wikilink"),
             ("../b/Note.md", "wikilink"), ("../../x", "wikilink"), ("Paper.PDF", "wikilink"),
             ("Paper", "wikilink"), ("b/Note.md", "markdown"), ("Other", "markdown"), ("sub/", "href"),
             ("Alias name", "wikilink"), ("a.b.c d", "wikilink"), ("clip.mp4", "embed")),
        _rec("b/Note.md"), _rec("c/Zed.md"), _rec("d/Zed.md"), _rec("Note.md"), _rec("docs/paper.pdf"),
        _rec("z/Other.md"), _rec("a/sub/index.html"),
    ]
    edges, unresolved = resolve_links(records)
    assert [(e.target, e.type) for e in edges] == [
        ("Note.md", "link"),           # [[note]]: the root one is shortest, any case
        ("b/Note.md", "link"),         # [[b/Note]], [[../b/Note.md]] (relative to a/), [..](b/Note.md) by name
        ("c/Zed.md", "link"),          # a tie on depth and length: alphabetical
        ("docs/paper.pdf", "link"),    # [[Paper.PDF]] names the file; [[Paper]] too (no note by that name)
        ("z/Other.md", "link"),        # a Markdown link not found relative falls back to the name
        ("a/sub/index.html", "link"),  # a folder link is its index.html
    ]
    assert unresolved == [Unresolved("a/Note.md", "../../x", "outside the folder"),
                          Unresolved("a/Note.md", "Alias name", "no such document"),
                          Unresolved("a/Note.md", "a.b.c d", "no such document"),
                          Unresolved("a/Note.md", "clip.mp4", "not a document (.mp4)")]


@pytest.mark.parametrize("heading, expected", [
    ("Local graph", "local-graph"), ("3.1. Using Python", "31-using-python"), ("local-graph", "local-graph"),
    ("Émigré & co!", "émigré--co"), ("snake_case x", "snake_case-x")])
def test_slug(heading, expected):
    assert slug(heading) == expected == slug(expected)


def test_sentence_around():
    text = "First one. Numbers (e.g. 2) have type int here. Third!\nNext line"
    i = text.index("int")
    assert sentence_around(text, i, i + 3) == "Numbers (e.g. 2) have type int here."
    assert sentence_around(text, 0, 5) == "First one."
    assert sentence_around(text, len(text) - 2, len(text)) == "Next line"


def test_hidden_links_on_request():
    src = "Seen %%a [[A]]%% text.\n\n%%\n[[B]]\n\n%%\n\n<!--\n- [[C|c]]: x\n-->\n"
    assert parse_markdown(src, "n").links == []
    doc = parse_markdown(src, "n", hidden_links=True)
    assert doc.text == "Seen  text."
    assert [(ln["target"], ln["line"], ln["context"]) for ln in doc.links] == [
        ("A", 1, "Seen text."), ("B", 4, ""), ("C", 9, "")]


def test_front_matter_that_expands_without_end_is_reported():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefg", "bcdefgh"))
    doc = parse_markdown(f"---\n{laughs}---\nbody\n", "n")
    assert (doc.text, doc.properties) == ("body", {})
    assert doc.issues == ["front matter is too large (more than 10000 values); properties ignored"]
    doc = parse_markdown("---\nself: &s [*s]\n---\nbody\n", "n")
    assert doc.properties == {} and doc.issues[0].startswith("front matter is too large")
