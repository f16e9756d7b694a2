"""Reading what was found: a document or one of its sections, paged, with its outline and links.

`read(index, "notes/app.md#Appearance")` gives the section's text (a page of it when long, with
the page's character span), the document's outline (every section's heading path and lines) and
its links out and in, each with the sentence it sits in. `links(index, id)` gives the links alone,
and with `hops=2` the records two links away. These are what an LLM calls after a search to
quote and check what a hit says (the MCP tools `read` and `links`, `GET /api/read`, `sidelight show`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..corpus.model import Edge
from ..corpus.passages import Section, sections_of
from ..errors import InputError

if TYPE_CHECKING:
    from .index import Index

PAGE_CHARS = 4000  # a page of a long document's text, in characters
MAX_PAGE_CHARS = 100_000
MAX_LINKS = 200  # links listed per direction


def split_ref(index: "Index", ref: str) -> tuple[int, str]:
    """(record position, section part) of `ID`, `ID#Heading > Sub` or `ID#anchor` (an id holding '#' is taken whole)."""
    pos = index.corpus.position
    if ref in pos:
        return pos[ref], ""
    rid, sep, section = ref.partition("#")
    if sep and rid in pos:
        return pos[rid], section
    raise InputError(f"no record {ref!r} in this index")


def find_section(sections: list[Section], part: str) -> Section:
    """The section named by its heading path (`A > B`), its last heading, or its anchor (case-insensitive)."""
    want = part.strip().lower()
    matchers: list[Callable[[Section], bool]] = [lambda s: s.path.lower() == want, lambda s: s.anchor.lower() == want,
                                                 lambda s: bool(s.heading) and s.heading[-1].lower() == want]
    for match in matchers:
        found = [s for s in sections if match(s)]
        if found:
            return found[0]
    names = ", ".join(repr(s.path) for s in sections if s.path)[:300]
    raise InputError(f"no section {part!r} in this document (sections: {names or 'none'})")


def outline(sections: list[Section]) -> list[dict[str, Any]]:
    out = []
    for s in sections:
        row: dict[str, Any] = {"section": s.path, "index": s.index}
        if s.lines is not None:
            row["lines"] = list(s.lines)
        if s.pages is not None:
            row["pages"] = list(s.pages)
        out.append(row)
    return out


def read(index: "Index", ref: str, page: int = 1, page_chars: int = PAGE_CHARS) -> dict[str, Any]:
    """A document (or one section of it, `ID#section`): one page of its text, its outline and links."""
    if not 1 <= page_chars <= MAX_PAGE_CHARS:
        raise InputError(f"page_chars must be between 1 and {MAX_PAGE_CHARS}, got {page_chars}")
    if page < 1:
        raise InputError(f"page must be >= 1, got {page}")
    position, part = split_ref(index, ref)
    record = index.corpus.records[position]
    sections = sections_of(record)
    start, end = 0, len(record.text)
    out: dict[str, Any] = {"id": record.id, "title": record.title}
    path = record.metadata.get("path") if isinstance(record.metadata, dict) else None
    if isinstance(path, str):
        out["path"] = path
    if part:
        s = find_section(sections, part)
        start, end = s.start, s.end
        out["section"] = s.path
        if s.lines is not None:
            out["lines"] = list(s.lines)
    pages = max(1, -(-(end - start) // page_chars))
    if page > pages:
        raise InputError(f"page {page} is past the last page ({pages}) of {ref!r}")
    lo = start + (page - 1) * page_chars
    hi = min(end, lo + page_chars)
    out.update({"text": record.text[lo:hi], "page": page, "pages": pages, "span": [lo, hi],
                "outline": outline(sections), **links(index, record.id)})
    return out


def links(index: "Index", rid: str, hops: int = 1, limit: int = MAX_LINKS) -> dict[str, Any]:
    """Links out of and into record `rid` (target/source, title, type, the sentence, the heading it
    names); with `hops=2`, also the records two links away (either direction), with the one between."""
    if hops not in (1, 2):
        raise InputError(f"hops must be 1 or 2, got {hops}")
    position, _ = split_ref(index, rid)
    rid = index.corpus.records[position].id
    titles = index.titles
    pos = index.corpus.position
    out_links: list[dict[str, Any]] = []
    in_links: list[dict[str, Any]] = []
    for e in index.corpus.edges:  # the edge list is read once; indexes of a folder hold tens of thousands
        if e.source == rid and len(out_links) < limit:
            out_links.append(_link(e.target, titles[pos[e.target]], e))
        elif e.target == rid and len(in_links) < limit:
            in_links.append(_link(e.source, titles[pos[e.source]], e))
    result: dict[str, Any] = {"links_out": out_links, "links_in": in_links}
    if hops == 2:
        first = {x["id"] for x in out_links + in_links}
        second: dict[str, str] = {}
        for e in index.corpus.edges:
            for a, b in ((e.source, e.target), (e.target, e.source)):
                if a in first and b != rid and b not in first and b not in second:
                    second[b] = a
        result["two_hop"] = [{"id": n, "title": titles[pos[n]], "via": via}
                             for n, via in sorted(second.items())[:limit]]
    return result


def _link(other: str, title: str, e: Edge) -> dict[str, Any]:
    row = {"id": other, "title": title, "type": e.type, "context": e.context}
    anchor = getattr(e, "anchor", "")
    if anchor:
        row["section"] = anchor
    return row
