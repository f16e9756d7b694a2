"""A record's sections: the passages the dense lane encodes and a hit's snippet comes from.

A record read from a folder (`sidelight.corpus.folder`) lists its sections in
`metadata["sections"]`: each a heading path, character offsets into the record's text and the
lines (or pages) of the source file it came from. Any other record is one section: its whole text.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Record

HEADING_SEPARATOR = " > "


@dataclass(frozen=True)
class Section:
    """One section of a record: `text[start:end]`, under the heading path `heading`."""

    index: int
    heading: tuple[str, ...]
    start: int
    end: int
    lines: tuple[int, int] | None = None  # 1-based, inclusive, in the source file
    pages: tuple[int, int] | None = None  # a PDF's pages, 1-based, inclusive
    anchor: str = ""

    @property
    def path(self) -> str:
        """`Settings > Appearance > Font size`: the heading path as one line ('' for a lead section)."""
        return HEADING_SEPARATOR.join(self.heading)


def sections_of(record: Record) -> list[Section]:
    """The record's sections in text order; a record without `metadata["sections"]` is one section."""
    raw = record.metadata.get("sections") if isinstance(record.metadata, dict) else None
    n = len(record.text)
    if not isinstance(raw, list) or not raw:
        return [Section(0, (), 0, n)]
    out = []
    for i, s in enumerate(raw):
        start = min(max(int(s.get("start", 0)), 0), n)
        end = min(max(int(s.get("end", n)), start), n)
        out.append(Section(i, tuple(str(h) for h in s.get("heading", ())), start, end,
                           _pair(s.get("lines")), _pair(s.get("pages")), str(s.get("anchor", ""))))
    return out


def _pair(value) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


def has_sections(record: Record) -> bool:
    """True when the record came with sections of its own (a document read from a folder)."""
    raw = record.metadata.get("sections") if isinstance(record.metadata, dict) else None
    return isinstance(raw, list) and len(raw) > 0


def window_texts(record: Record) -> list[tuple[int, str]]:
    """(section index, the text the embedder reads) for each section with words in it.

    The text is the record's title and the section's parent headings, then the section's own text
    (which starts with its heading): a window cut from the middle of a note still knows whose
    note and which part it is."""
    out = []
    for s in sections_of(record):
        body = record.text[s.start:s.end].strip()
        if not any(c.isalnum() for c in body):
            continue
        context = HEADING_SEPARATOR.join(p for p in (record.title, *s.heading[:-1]) if p)
        out.append((s.index, f"{context}\n{body}" if context else body))
    return out
