"""What an index of a folder remembers of each file, so a sync reads only what changed.

    folder.json   {"format": "sidelight-folder-state", "version": 1, "reader": READER_VERSION,
                   "files": {id: [size, mtime_ns, sha256, links, keys, unresolved]}}

`size` and `mtime_ns` are the file's as the walk saw them before reading it: a file whose pair is
unchanged is taken as unchanged without reading it (as git and rsync do); any other file is hashed,
and only a changed hash makes it read again. A file modified within `RACY_SECONDS` of the write is
stored with size -1, so the next sync hashes it (an edit in the same mtime tick is not missed).
`links` counts the file's link occurrences, `keys` are the names its links can resolve by
(`link_keys`) and `unresolved` its links that named no document, as (target, reason): with them a
sync re-resolves only the links whose answer can change (`affected`), without parsing the records.
`reader` is the folder readers' version the records were read with (`corpus.folder.READER_VERSION`):
a state of another version is no state, and that sync re-reads every file (`sync._sync_all`).
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..corpus.folder import READER_VERSION
from ..corpus.links import Unresolved, link_extension
from ..corpus.model import Record

FILE = "folder.json"
FORMAT = "sidelight-folder-state"
VERSION = 1
RACY_SECONDS = 2.0

Entry = list[Any]  # [size, mtime_ns, sha256, links, keys, unresolved]


def _stem_keys(name: str) -> set[str]:
    """A path's last part, lower case, with and without its extension ('index' for a folder)."""
    base = posixpath.basename(name.strip().rstrip("/").lower())
    if name.strip().endswith("/") or base in ("", ".", ".."):
        return {"index"}
    ext = link_extension(base)
    return {base, base[: len(base) - len(ext)]} if ext else {base}


def link_keys(links: Iterable[dict[str, Any]]) -> list[str]:
    """The keys every resolution of these links looks up ends with: a link can resolve differently
    only when a document whose `id_keys` meet these is added or removed."""
    keys: set[str] = set()
    for link in links:
        if isinstance(link, dict):
            keys |= _stem_keys(str(link.get("target", "")))
    return sorted(keys)


def id_keys(rid: str) -> set[str]:
    """The keys a document id answers to (see `link_keys`)."""
    return _stem_keys(rid)


def entry(record: Record, stat: tuple[int, int] | None, unresolved: list[tuple[str, str]],
          now: float | None = None) -> Entry:
    """The state of one folder record (`stat`: (size, mtime_ns) seen before reading, None if unknown)."""
    links = record.metadata.get("links", []) if isinstance(record.metadata, dict) else []
    size, mtime = stat if stat is not None else (-1, 0)
    now = time.time() if now is None else now
    if mtime >= (now - RACY_SECONDS) * 1e9:
        size = -1
    return [size, mtime, record.metadata.get("sha256"), len(links), link_keys(links),
            [list(u) for u in unresolved]]


def entry_with_stat(old: Entry, stat: tuple[int, int], now: float | None = None) -> Entry:
    """`old` with the file's new (size, mtime_ns): its content was hashed and found the same."""
    size, mtime = stat
    if mtime >= ((time.time() if now is None else now) - RACY_SECONDS) * 1e9:
        size = -1
    return [size, mtime, *old[2:]]


def build(records: Iterable[Record], stats: Mapping[str, tuple[int, int]],
          unresolved: Iterable[Unresolved | tuple[str, str, str]]) -> dict[str, Entry]:
    """The state of every record of a folder corpus (`unresolved`: of all records, as `Unresolved`
    or (source, target, reason))."""
    by_source: dict[str, list[tuple[str, str]]] = {}
    for u in unresolved:
        source, target, reason = (u.source, u.target, u.reason) if isinstance(u, Unresolved) else u
        by_source.setdefault(source, []).append((target, reason))
    now = time.time()
    return {r.id: entry(r, stats.get(r.id), by_source.get(r.id, []), now) for r in records}


def save(folder: Path, files: dict[str, Entry]) -> None:
    body = {"format": FORMAT, "version": VERSION, "reader": READER_VERSION, "files": files}
    (Path(folder) / FILE).write_text(json.dumps(body, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _body(folder: Path) -> dict[str, Any] | None:
    path = Path(folder) / FILE
    if not os.path.isfile(path):
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT or body.get("version") != VERSION:
        return None
    return body


def read_with_current_reader(folder: Path) -> bool:
    """Whether the generation's records were read by today's folder readers (False when it keeps no
    state: an index written by `add`/`delete`, by an older sidelight or with older readers)."""
    body = _body(folder)
    return body is not None and body.get("reader") == READER_VERSION


def load(folder: Path) -> dict[str, Entry] | None:
    """The state kept with a generation, or None (an index of something else, of an older sidelight,
    or read by other readers)."""
    body = _body(folder)
    if body is None or body.get("reader") != READER_VERSION:
        return None
    files = body.get("files")
    return files if isinstance(files, dict) else None
