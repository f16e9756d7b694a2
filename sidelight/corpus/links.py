"""Links of folder records resolved to record ids (Obsidian's rules), from the records alone.

`resolve_links` reads only each record's id and `metadata["links"]`, so a sync can re-resolve a
whole folder from stored records without reading unchanged files again.

* `[[Name]]`, `[[folder/Name]]`, `[[Name.md]]`: a note whose path (without `.md`) equals the name
  or ends with `/name`, case-insensitively; a name with another extension (`[[paper.pdf]]`) names
  any document. Among several, the shortest path wins: fewest folders, then fewest characters,
  then alphabetical. Aliases do not resolve links (as in Obsidian). `./` and `../` are relative.
* `[text](path.md#anchor)` and HTML `href`s: relative to the source's folder (`/` is the folder
  root), then, for Markdown, by the name rule; a folder link means its `index.html`.
* Links to anything else (images, attachments, missing notes) are unresolved, with a reason.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Iterable

from .model import Edge, Record

DOCUMENT_EXTENSIONS = (".md", ".html", ".htm", ".txt", ".pdf")


@dataclass(frozen=True)
class Unresolved:
    """A link that names no document of the folder."""

    source: str
    target: str
    reason: str


def _rank(rid: str) -> tuple[int, int, str]:
    return rid.count("/"), len(rid), rid


def link_extension(name: str) -> str:
    """The name's extension when it looks like one ('.png', '.md'), else ''."""
    ext = posixpath.splitext(name)[1].lower()
    return ext if 1 < len(ext) <= 6 and ext[1:].isalnum() else ""


class Resolver:
    """Name and path tables over a folder's record ids."""

    def __init__(self, ids: Iterable[str]):
        self.exact: dict[str, str] = {}
        self.folded: dict[str, str] = {}
        self.names: dict[str, str] = {}  # lower path suffix -> best id (notes by name without .md, all by file name)
        self.other_names: dict[str, str] = {}  # lower suffix without extension -> best non-note document
        for rid in sorted(ids, key=_rank):
            self.exact.setdefault(rid, rid)
            self.folded.setdefault(rid.lower(), rid)
            parts = rid.lower().split("/")
            ext = posixpath.splitext(parts[-1])[1]
            for k in range(len(parts)):
                suffix = "/".join(parts[k:])
                self.names.setdefault(suffix, rid)
                bare = suffix[: len(suffix) - len(ext)] if ext else suffix
                (self.names if ext == ".md" else self.other_names).setdefault(bare, rid)

    def by_path(self, path: str) -> str | None:
        """The id of a folder-relative path (exact case first, then any case)."""
        return self.exact.get(path) or self.folded.get(path.lower())

    def by_name(self, name: str) -> str | None:
        key = name.strip().lstrip("/").lower()
        return self.names.get(key) or self.other_names.get(key)

    def relative(self, source: str, target: str) -> tuple[str | None, str]:
        """(id, normalised path) of `target` read relative to `source`'s folder ('/' = the root)."""
        base = "" if target.startswith("/") else posixpath.dirname(source)
        joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
        if joined == ".." or joined.startswith("../"):
            return None, joined
        if target.endswith("/") or joined == ".":
            folder = "" if joined == "." else joined + "/"
            return self.by_path(folder + "index.html") or self.by_path(folder + "index.htm"), joined
        found = self.by_path(joined)
        if found is None and not link_extension(joined):
            found = self.by_path(joined + ".md")
        return found, joined

    def resolve(self, source: str, link: dict) -> tuple[str | None, str]:
        """(id, "") when the link names a document, else (None, reason)."""
        target, kind = str(link.get("target", "")), link.get("kind")
        if not target.strip():
            return None, "empty target"
        relative = target.startswith(("./", "../"))
        if kind in ("markdown", "href") or relative:
            found, joined = self.relative(source, target)
            if found:
                return found, ""
            if joined == ".." or joined.startswith("../"):
                return None, "outside the folder"
            if kind == "href":
                return None, self._missing(target)
        if not relative:
            found = self.by_name(target)
            if found:
                return found, ""
        return None, self._missing(target)

    @staticmethod
    def _missing(target: str) -> str:
        ext = link_extension(target)
        if ext and ext not in DOCUMENT_EXTENSIONS:
            return f"not a document ({ext})"
        return "no such document"


def resolve_links(records: Iterable[Record], resolver: Resolver | None = None) -> tuple[list[Edge], list[Unresolved]]:
    """(edges, unresolved) of the records' `metadata["links"]`, in record order then link order.

    One edge per (source, target, type), carrying the first link's sentence and anchor; a link of a
    record to itself is resolved but makes no edge. Types: "embed" for embeds, else "link".
    `resolver`: the folder's names when `records` are only some of its documents (a sync)."""
    records = list(records)
    resolver = resolver or Resolver(r.id for r in records)
    edges: list[Edge] = []
    seen: set[tuple[str, str, str]] = set()
    unresolved: list[Unresolved] = []
    for r in records:
        for link in r.metadata.get("links", ()) if isinstance(r.metadata, dict) else ():
            if not isinstance(link, dict):
                continue
            target, reason = resolver.resolve(r.id, link)
            if target is None:
                unresolved.append(Unresolved(r.id, str(link.get("target", "")), reason))
                continue
            etype = "embed" if link.get("kind") == "embed" else "link"
            key = (r.id, target, etype)
            if target == r.id or key in seen:
                continue
            seen.add(key)
            edges.append(Edge(r.id, target, etype, 1.0, str(link.get("context", "")),
                              anchor=str(link.get("anchor", ""))))
    return edges, unresolved


def count_resolved(records: Iterable[Record], unresolved: list[Unresolved]) -> int:
    """How many link occurrences resolved (self-links and repeats included)."""
    total = sum(len(r.metadata.get("links", ())) for r in records if isinstance(r.metadata, dict))
    return total - len(unresolved)
