"""A PDF read with pypdf (the optional `pdf` extra): its pages' text, pages as locations, the
outline (bookmarks) as headings. A heading splits its page where the page's text has its title
(else at the page's start); without an outline the PDF is one section over all its pages."""

from __future__ import annotations

import io
import logging

from .document import ParsedDocument, TextBuilder, slug

INSTALL_HINT = "install sidelight[pdf]"


def pdf_available() -> bool:
    """Whether pypdf can be imported."""
    try:
        import pypdf  # noqa: F401
    except ImportError:
        return False
    return True


def _outline(reader) -> list[tuple[int, int, str]]:
    """(page number from 1, depth from 1, title) of every outline entry, in page order."""
    found: list[tuple[int, int, str]] = []

    def visit(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                visit(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title or "").split())
            except Exception:  # a broken destination: the entry is not a heading
                continue
            if page is not None and page >= 0 and title:
                found.append((page + 1, min(depth, 6), title))

    try:
        visit(reader.outline, 1)
    except Exception:
        return []
    return sorted(found, key=lambda e: e[0])


def _page_block(builder: TextBuilder, text: str, page: int) -> None:
    """A piece of a page's text as one block: lines right-stripped, paragraphs kept."""
    paras = ["\n".join(line.rstrip() for line in p.splitlines()) for p in text.split("\n\n")]
    builder.block("\n\n".join(p.strip("\n") for p in paras if p.strip()), page, page)


def parse_pdf(data: bytes, stem: str) -> ParsedDocument:
    """Read one PDF's bytes; raises ValueError (with the reason) for a file pypdf cannot read."""
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        encrypted = reader.is_encrypted
        if not encrypted:
            pages = [page.extract_text() or "" for page in reader.pages]
            meta = reader.metadata
            title = " ".join(str(meta.title or "").split()) if meta is not None else ""
    except Exception as exc:  # pypdf on a malformed file raises many kinds (PdfReadError, IndexError, zlib.error)
        raise ValueError(f"cannot read the PDF ({type(exc).__name__}: {exc})") from None
    if encrypted:
        raise ValueError("cannot read the PDF (encrypted)")
    builder = TextBuilder(location="pages")
    heads = _outline(reader)
    h = 0
    for n, page in enumerate(pages, 1):
        cursor = 0
        while h < len(heads) and heads[h][0] == n:
            _, depth, heading = heads[h]
            at = page.find(heading, cursor)  # the heading's place on its page, when the text has it as is
            if at >= 0:
                _page_block(builder, page[cursor:at], n)
                cursor = at + len(heading)
            builder.heading(depth, heading, slug(heading), n)
            h += 1
        _page_block(builder, page[cursor:], n)
    text, sections, links = builder.finish()
    return ParsedDocument(title or stem, text, sections, links)
