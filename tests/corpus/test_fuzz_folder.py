"""Fuzzing the folder readers: any bytes as a note, page or text file give a record whose sections
cover its text in order and whose links point at a section, or a skip with a reason; never an exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidelight.corpus.folder import read_document

FUZZ = settings(max_examples=150, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))

# the characters the Markdown, YAML and HTML parsers care about
_PIECES = st.sampled_from(
    ["[[", "]]", "![[", "|", "\\|", "#", "# ", "## ", "%%", "^id", "`", "```", "---", "\n", "\n\n", " ", "a", "Note",
     "<", ">", "<!--", "-->", "<a href='x.md'>", "</a>", "<img src='i.png'>", "<p>", "<pre>", "<br>", "<h2>", "</h2>", "](", ")", "[", "]", "- ", "> ", "|",
     "title: ", "aliases: ", "tags: ", "&a ", "*a", ": ", "\x00", "\u00e9", "\ufeff", "\r\n", "\t", "e.g. ", ". "])
TEXT = st.lists(_PIECES, max_size=60).map("".join)
DATA = st.one_of(TEXT.map(lambda s: s.encode("utf-8")), st.binary(max_size=120),
                 st.tuples(TEXT, st.binary(min_size=1, max_size=3)).map(lambda t: t[0].encode() + t[1]))


def _check(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / name).write_bytes(data)
        record, issues = read_document(Path(tmp), name, hidden_links=True)
    if record is None:
        assert issues and all(isinstance(i, str) for i in issues)
        return
    json.dumps(record.metadata)
    sections, end = record.metadata["sections"], 0
    assert sections
    for s in sections:
        assert end <= s["start"] <= s["end"] <= len(record.text) and 1 <= s["lines"][0] <= s["lines"][1]
        end = s["end"]
    assert all(0 <= ln["section"] < len(sections) and ln["line"] >= 1 for ln in record.metadata["links"])


@FUZZ
@given(DATA)
def test_any_note(data):
    _check(data, "note.md")


@FUZZ
@given(DATA)
def test_any_page(data):
    _check(data, "page.html")


@FUZZ
@given(DATA)
def test_any_text(data):
    _check(data, "notes.txt")
