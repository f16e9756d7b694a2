"""A hit's best passage: the section that matches, its location, and a snippet with the terms marked."""

from __future__ import annotations

import math

import pytest

from sidelight.corpus import Corpus, Record
from sidelight.index import Index
from sidelight.index.passages import PassageSettings, QueryTerms, results_with_passages, snippet
from sidelight.results import Results

TEXT = ("Intro to the app.\n\n"
        "Appearance\nYou can change the font size in settings. Pinch zoom adjusts text size on mobile.\n\n"
        "Sync\nSync keeps your notes on every device. It needs an account.\n\n")


def app_note() -> Record:
    a, s = TEXT.index("Appearance"), TEXT.index("Sync\n")
    sections = [{"heading": [], "start": 0, "end": a, "lines": [1, 1]},
                {"heading": ["Appearance"], "start": a, "end": s, "lines": [3, 4], "anchor": "appearance"},
                {"heading": ["Sync"], "start": s, "end": len(TEXT), "lines": [6, 7], "anchor": "sync"}]
    return Record("notes/app.md", "App", TEXT, {"path": "notes/app.md", "sections": sections})


@pytest.fixture
def index() -> Index:
    return Index.build(Corpus("t", [app_note(), Record("b", "Other", "nothing about zoom here. Or text.")]),
                       progress=False)


def test_section_bm25_by_hand(index):
    """BM25 over the note's sections with the collection's idf: hand-computed for 'pinch account'."""
    terms = QueryTerms(index, "pinch account")
    n, df = 2, 1  # each term occurs in one of the two records
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))  # robertson variant with the +1 (Lucene's)
    assert terms.idf == pytest.approx({"pinch": idf, "account": idf})
    words = [[t for _, _, t in terms.words(s)] for s in ("pinch me", "an account of an account", "none")]
    lengths = [2, 5, 1]
    avg = sum(lengths) / 3
    expect = [idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * lengths[0] / avg)),
              idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * lengths[1] / avg)), 0.0]
    assert terms.bm25(words).tolist() == pytest.approx(expect)


def test_the_section_that_matches_is_named_with_its_lines(index):
    hits = results_with_passages(index, index.search("pinch zoom", "bm25", 2))
    p = hits[0].passage
    assert hits[0].id == "notes/app.md" and p.section == "Appearance" and p.lines == (3, 4)
    assert p.snippet == "Pinch zoom adjusts text size on mobile."
    assert [p.snippet[a:b] for a, b in p.marks] == ["Pinch", "zoom"]
    assert hits[0].to_dict()["passage"] == {
        "section": "Appearance", "snippet": p.snippet, "marks": [[0, 5], [6, 10]],
        "location": {"path": "notes/app.md", "lines": [3, 4], "anchor": "appearance"}}
    other = results_with_passages(index, index.search("account", "bm25", 1))[0].passage
    assert other.section == "Sync" and other.snippet.endswith("It needs an account.")
    # a record without sections is one section, without a location
    plain = hits[1].passage
    assert plain.section == "" and plain.path is None and "location" not in plain.to_dict()


def test_snippets_are_bounded_and_keep_the_match(index):
    terms = QueryTerms(index, "account")
    long = " ".join(["words of filler text"] * 40) + " and an account at the end of it all " + "x " * 50
    text, marks = snippet(long, terms, 60)
    assert len(text) <= 60 and "account" in text and text.startswith("…")
    assert [text[a:b] for a, b in marks] == ["account"]
    first, _ = snippet("No match here. Second sentence.", terms, 240)
    assert first == "No match here. Second sentence."  # no query term: the section's first sentences


def test_settings_bound_the_snippet(index):
    hits = results_with_passages(index, index.search("sync notes device", "bm25", 1), PassageSettings(snippet_chars=30))
    assert len(hits[0].passage.snippet) <= 30


def test_adding_passages_keeps_the_rest_of_the_answer(index):
    """A lane's answer keeps its trace id, params and cut flag when its hits gain passages (feedback credits a
    hit through the trace id, so losing it would cut the answer off from feedback)."""
    found = index.search("pinch zoom", "bm25", 2)
    traced = Results(found.hits, found.query, found.method, (1, 2), "t" * 32, {"k1": 1.2}, cut=True)
    out = results_with_passages(index, traced)
    assert out[0].passage is not None
    assert (out.trace_id, out.params, out.cut, out.coverage, out.method) == ("t" * 32, {"k1": 1.2}, True, (1, 2), "bm25")
