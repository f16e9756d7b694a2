"""Boilerplate sections (issue 47): a section found word for word in 3 or more notes (a vault's footer, a
template's placeholder) is no chunk; the rule's count is in the chunks' record and the certificate's report."""

import pytest

from sidelight.cli.certify_report import boilerplate_line
from sidelight.serendipity.chunks import BOILERPLATE_MIN_NOTES, boilerplate_sections, section_chunks, section_key
from sidelight.serendipity.store import Serendipity

from tests.serendipity.test_collection import folder_index


def footer(name: str) -> str:
    """The Obsidian hub's footer, its links naming the note's own file (so the raw text differs per note)."""
    return ("# This note in GitHub\n\n"
            f"[Edit In GitHub](https://github.dev/hub/blob/main/{name}.md \"edit\") | "
            f"[Copy this note](https://raw.githubusercontent.com/hub/main/{name}.md \"copy\") | "
            "[Download this vault](https://github.com/hub/archive/main.zip \"download\")\n")


BODIES = {
    "Compost": "# Compost\n\nKitchen scraps turn into compost.\n\n## Worms\n\nRed worms digest scraps in a bin.\n\n",
    "Vermiculture": "# Vermiculture\n\nRaising worms.\n\n## Bins\n\nRed worms digest scraps in a bin.\n\n",
    "Sourdough": "# Sourdough\n\nA starter of flour and water.\n\n## Shared\n\nSee also the pantry list.\n\n",
    "Espresso": "# Espresso\n\nPressure through fine coffee.\n\n## Shared\n\nSee also the pantry list.\n\n",
    "Tides": "# Tides\n\nThe moon pulls the sea.\n\n",
    "Knots": "# Knots\n\nA bowline holds a loop.\n\n",
}


@pytest.fixture
def vault_index(tmp_path, monkeypatch):
    return folder_index(tmp_path, monkeypatch, {f"{name}.md": body + footer(name) for name, body in BODIES.items()})


def test_the_footer_is_never_a_chunk(vault_index):
    """Six notes each end with the footer: 6 sections left out, one distinct text, in all 6 notes; every other
    section is a chunk, including the genuine topic the Compost and Vermiculture notes share (two notes: not
    boilerplate) and the "See also" line two notes share (two notes is under the cut of 3)."""
    ser = Serendipity(vault_index)
    ch = ser.ensure_chunks()
    recs = vault_index.corpus.records
    texts = [ch.text(recs, i) for i in range(len(ch))]
    assert not any("GitHub" in t or "Download this vault" in t for t in texts)
    assert sum("Red worms digest scraps in a bin." in t for t in texts) == 2
    assert sum("See also the pantry list." in t for t in texts) == 2
    # hand count: Compost 2, Vermiculture 2, Sourdough 2, Espresso 2, Tides 1, Knots 1 sections of their own
    assert len(ch) == 10
    bp = ser.meta["chunks"]["boilerplate"]
    assert (bp["sections"], bp["texts"], bp["notes"]) == (6, 1, 6)
    assert bp["examples"] == ["this note in github edit in github copy this note download this vault"]
    assert "6 sections left out (1 distinct texts in 6 notes)" in boilerplate_line(bp)


def test_the_cut_is_three_notes():
    """A text in 2 notes stays; in 3 it is boilerplate; links' URLs and case do not make texts differ."""
    assert BOILERPLATE_MIN_NOTES == 3
    two = [(0, 1, "## See\nSee [x](http://a/1)"), (1, 1, "## see\nSEE [x](http://b/2)")]
    out, bp = boilerplate_sections(two)
    assert out == set() and bp.sections == 0
    out, bp = boilerplate_sections(two + [(2, 3, "## See\nSee [x](https://c/3 \"t\")"), (2, 4, "## Other\ntext")])
    assert out == {(0, 1), (1, 1), (2, 3)} and (bp.sections, bp.texts, bp.notes) == (3, 1, 3)
    # the same text twice in one note counts one note
    out, _ = boilerplate_sections([(0, 1, "a b"), (0, 2, "a b"), (1, 1, "a b")])
    assert out == set()
    assert section_key("# This note\n\n<https://x.y/z> A-b") == "this note a b"


def test_section_chunks_without_repeats_leaves_nothing_out(vault_index):
    recs = [r for r in vault_index.corpus.records if r.title in ("Tides", "Knots")]
    ch, keys, texts, bp = section_chunks(recs)
    assert bp.sections == 0 and len(ch) == 4 and len(keys) == len(texts) == 4  # footer in 2 notes only: kept
