"""A plain text file read as paragraphs (blank-line separated) in one section."""

from __future__ import annotations

from .document import ParsedDocument, TextBuilder


def parse_text(source: str, stem: str) -> ParsedDocument:
    """Paragraphs joined by a blank line, lines right-stripped; one lead section over the lines
    from the first paragraph to the last. A text file has no links."""
    builder = TextBuilder()
    para: list[str] = []
    first = 0
    lines = source.splitlines()
    for n, line in enumerate(lines + [""], 1):
        if line.strip():
            if not para:
                first = n
            para.append(line.rstrip())
        elif para:
            builder.block("\n".join(para), first, n - 1)
            para = []
    text, sections, links = builder.finish()
    return ParsedDocument(stem, text, sections, links)
