"""One document's plain text, its sections and its links, assembled block by block.

Every folder reader (Markdown, HTML, plain text, PDF) walks its own parse tree and hands the
blocks it finds to a `TextBuilder`, which owns the contract they share: blocks joined by a blank
line, a section per heading (its heading path, source lines and character span in the text) and
each link's sentence. Keeping this in one place makes the four readers agree on offsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

BLOCK_SEPARATOR = "\n\n"
_SENTENCE_END = ".!?"


def slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, letters, digits, '-' and '_' kept, spaces to '-'.

    Idempotent, so a link's anchor (`#Some Heading` or `#some-heading`) and a section's anchor
    compare equal after `slug` of both."""
    out = []
    for ch in heading.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "cf", "al", "mr", "mrs", "ms", "dr", "st", "no", "fig", "eq"}


def _ends_sentence(text: str, i: int) -> bool:
    """Whether the '.', '!' or '?' at `text[i]` ends a sentence: a space follows, then no lower-case
    letter, and for '.', the word before is no abbreviation ('e.g.', 'etc.') or single letter."""
    if text[i] not in _SENTENCE_END or i + 1 >= len(text) or not text[i + 1].isspace():
        return i + 1 == len(text) and text[i] in _SENTENCE_END
    j = i + 1
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j].islower():
        return False
    if text[i] == ".":
        k = i
        while k > 0 and not text[k - 1].isspace() and text[k - 1] not in "([{":
            k -= 1
        word = text[k:i].lower()
        if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return False
    return True


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of `text` that holds `text[start:end]`: from after the previous sentence end
    (or line break) to the next one, whitespace collapsed."""
    lo = start
    while lo > 0 and text[lo - 1] != "\n" and not (lo >= 2 and text[lo - 1].isspace() and _ends_sentence(text, lo - 2)):
        lo -= 1
    hi = max(end, start)
    while hi < len(text) and text[hi] != "\n":
        hi += 1
        if hi > end and _ends_sentence(text, hi - 1):
            break
    return " ".join(text[lo:hi].split())


@dataclass
class ParsedDocument:
    """What a reader makes of one file, before it becomes a Record."""

    title: str
    text: str
    sections: list[dict]
    links: list[dict]
    aliases: tuple[str, ...] = ()
    tags: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)
    issues: list[str] = field(default_factory=list)


def is_external(href: str) -> bool:
    """A URL with a scheme (`https:`, `mailto:`, `obsidian:`) or a network path (`//host`):
    not a file of the folder. One-letter schemes are Windows drive letters, so local."""
    if href.startswith("//"):
        return True
    try:
        scheme = urlsplit(href).scheme
    except ValueError:
        return True
    return len(scheme) > 1


def local_link(href: str) -> tuple[str, str] | None:
    """(path, anchor) of a link to a file of the folder, URL-decoded; None for an external URL or
    a link within the same page (`#anchor` only)."""
    href = href.strip()
    if not href or is_external(href):
        return None
    path, _, anchor = href.partition("#")
    path = unquote(path.partition("?")[0])
    if not path:
        return None
    return path, unquote(anchor)


@dataclass
class Link:
    """A link found by a reader, placed in its block: `start`/`end` are offsets in the block's text
    (equal for a link that adds no text, like an embed)."""

    target: str
    anchor: str
    kind: str
    line: int
    start: int
    end: int


@dataclass
class TextBuilder:
    """Collects blocks into `text`, `sections` and `links` (the metadata lists of the contract).

    `location` names the sections' source span: "lines" (Markdown, HTML, text) or "pages" (PDF)."""

    location: str = "lines"
    parts: list[str] = field(default_factory=list)
    length: int = 0
    sections: list[dict] = field(default_factory=list)
    links: list[dict] = field(default_factory=list)
    _path: list[tuple[int, str]] = field(default_factory=list)

    def _section(self, heading: list[str], level: int, anchor: str, first: int) -> dict:
        sec = {"heading": heading, "level": level, "anchor": anchor, self.location: [first, first],
               "start": self._next_start(), "end": self._next_start()}
        self.sections.append(sec)
        return sec

    def _next_start(self) -> int:
        return self.length + (len(BLOCK_SEPARATOR) if self.parts else 0)

    def heading(self, level: int, title: str, anchor: str, first: int, last: int | None = None,
                links: Sequence[Link] = ()) -> None:
        """Open a section under `title` (level 1-6) and add its heading line as a block."""
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        self._path.append((level, title))
        self._section([t for _, t in self._path], level, anchor, first)
        self.block(title, first, first if last is None else last, links)

    def block(self, text: str, first: int, last: int, links: Sequence[Link] = ()) -> None:
        """Add one block of text from source lines (or pages) `first`..`last`; empty blocks add no
        text but still place their links."""
        stripped = text.lstrip()
        shift = len(text) - len(stripped)
        text = stripped.rstrip()
        if not self.sections:
            self._section([], 0, "", first)
        sec = self.sections[-1]
        start = self._next_start() if text else self.length
        for ln in links:
            lo, hi = ln.start - shift, ln.end - shift
            inside = text and 0 <= lo <= len(text) and hi >= 0  # not in whitespace stripped off the block
            ctx = sentence_around(text, lo, min(max(hi, lo), len(text))) if inside else ""
            self.links.append({"target": ln.target, "anchor": ln.anchor, "kind": ln.kind, "line": ln.line,
                               "context": ctx, "section": len(self.sections) - 1})
        if not text:
            return
        if self.parts:
            self.parts.append(BLOCK_SEPARATOR)
        self.parts.append(text)
        self.length = start + len(text)
        sec["end"] = self.length
        sec[self.location] = [sec[self.location][0], max(sec[self.location][1], last)]

    def finish(self) -> tuple[str, list[dict], list[dict]]:
        """(text, sections, links). A document without any block has one empty lead section."""
        if not self.sections:
            self._section([], 0, "", 1)
        for sec in self.sections:  # an empty section at the very end (a heading without text)
            if sec["start"] > self.length:
                sec["start"] = sec["end"] = self.length
        return "".join(self.parts), self.sections, self.links
