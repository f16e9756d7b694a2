"""Records and edges of an index generation, read by position instead of parsed on open.

    records.jsonl      one JSON object per record, in corpus order (readable by any tool)
    records.off.npy    int64 byte offset of each line, plus the file's size
    ids.*, titles.*    string columns (`sidelight.store.column`): what a ranked hit shows
    edges.jsonl        one JSON array per edge: [source, target, type, weight(, context(, anchor))]

Opening maps the offset tables; a record is parsed when it is read, the edges when the first one
is. Both were checked when the index was built, so reading them again checks only their shape.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Sequence, overload

import numpy as np

from ..corpus.model import Edge, Record, hash_line, quoted
from ..errors import IndexFormatError
from ..store.column import StringColumn, write_column

_ITER_CHUNK = 4096  # records per write when building, per slice of the mapping when iterating


def write_records(folder: Path, records: Iterable[Record], content: "hashlib._Hash | None" = None) -> None:
    """`records.jsonl` with its offset table, and the id and title columns; feeds `content` each
    record's line of the corpus content hash (`Corpus.content_hash`) on the way."""
    offsets, ids, titles = [0], [], []
    lines, hashed = [], []
    with open(folder / "records.jsonl", "wb") as f:
        for r in records:
            q = quoted(r)
            if content is not None:
                hashed.append(hash_line(q, r.metadata))
            lines.append(record_line(r, q) + b"\n")
            offsets.append(offsets[-1] + len(lines[-1]))
            ids.append(r.id)
            titles.append(r.title)
            if len(lines) == _ITER_CHUNK:
                _flush(f, lines, content, hashed)
        _flush(f, lines, content, hashed)
    np.save(folder / "records.off.npy", np.asarray(offsets, dtype=np.int64), allow_pickle=False)
    write_column(folder, "ids", ids)
    write_column(folder, "titles", titles)


def _flush(f: BinaryIO, lines: list[bytes], content: "hashlib._Hash | None", hashed: list[bytes]) -> None:
    """Write a batch of record lines and feed their hash lines to `content`; empties both lists."""
    f.write(b"".join(lines))
    if content is not None:
        content.update(b"".join(hashed))
    lines.clear()
    hashed.clear()


def record_line(r: Record, q: tuple[bytes, bytes, bytes, bytes] | None = None) -> bytes:
    """`json.dumps` of the record as a JSON object (id, title, text, metadata, aliases), UTF-8,
    assembled from the record's `quoted` parts (`q`): the same text, faster."""
    qid, qtitle, qtext, qaliases = q or quoted(r)
    meta = json.dumps(r.metadata, ensure_ascii=False).encode() if r.metadata else b"{}"
    return b'{"id": %b, "title": %b, "text": %b, "metadata": %b, "aliases": %b}' % (qid, qtitle, qtext, meta, qaliases)


def write_edges(folder: Path, edges: Iterable[Edge]) -> None:
    with open(folder / "edges.jsonl", "w", encoding="utf-8") as f:
        for e in edges:
            row = [e.source, e.target, e.type, e.weight]
            if e.context or e.anchor:
                row.append(e.context)
            if e.anchor:
                row.append(e.anchor)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


class RecordFile(Sequence[Record]):
    """The records of a generation folder: `len` and `ids`/`titles` without parsing, `[i]` parses one line."""

    def __init__(self, folder: Path):
        self.path = folder / "records.jsonl"
        try:
            self._off = np.load(folder / "records.off.npy", mmap_mode="r", allow_pickle=False)
            size = self.path.stat().st_size
            self._data = np.memmap(self.path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{folder}: cannot read the records ({exc})") from exc
        self.ids = StringColumn(folder, "ids")
        self.titles = StringColumn(folder, "titles")
        if len(self._off) == 0 or int(self._off[-1]) != size or not len(self.ids) == len(self.titles) == len(self):
            raise IndexFormatError(f"{folder}: records.jsonl, its offsets and the id/title columns do not agree")

    def __len__(self) -> int:
        return len(self._off) - 1

    @overload
    def __getitem__(self, i: int) -> Record: ...

    @overload
    def __getitem__(self, i: slice) -> list[Record]: ...

    def __getitem__(self, i: int | slice) -> Record | list[Record]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._parse(self._data[self._off[i]:self._off[i + 1]].tobytes(), i)

    def __iter__(self) -> Iterator[Record]:
        off = self._off
        for lo in range(0, len(self), _ITER_CHUNK):  # from the mapping: valid after the file is pruned
            hi = min(lo + _ITER_CHUNK, len(self))
            start = int(off[lo])
            blob, ends = self._data[start:int(off[hi])].tobytes(), (off[lo:hi + 1] - start).tolist()
            for i in range(hi - lo):
                yield self._parse(blob[ends[i]:ends[i + 1]], lo + i)

    def _parse(self, line: bytes, i: int) -> Record:
        try:
            o = json.loads(line)
            return Record(o["id"], o["title"], o["text"], o["metadata"], tuple(o["aliases"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise IndexFormatError(f"{self.path}:{i + 1}: corrupt record ({exc})") from exc


class EdgeFile(Sequence[Edge]):
    """The edges of a generation folder: `len` from the manifest, parsed on first access."""

    def __init__(self, path: Path, count: int):
        self.path, self._count = path, count
        self._edges: list[Edge] | None = None
        try:  # held open, so the edges can be read after a later writer prunes this generation
            self._file = open(path, "rb")
        except OSError as exc:
            raise IndexFormatError(f"{path}: cannot read the edges ({exc.strerror or exc})") from exc

    def _load(self) -> list[Edge]:
        if self._edges is None:
            try:
                self._file.seek(0)
                edges = [Edge(*json.loads(line)) for line in self._file if line.strip()]
                self._file.close()
            except (OSError, ValueError, TypeError) as exc:
                raise IndexFormatError(f"{self.path}: cannot read the edges ({exc})") from exc
            if len(edges) != self._count:
                raise IndexFormatError(f"{self.path}: {len(edges)} edges, its manifest says {self._count}")
            self._edges = edges
        return self._edges

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Edge: ...

    @overload
    def __getitem__(self, i: slice) -> list[Edge]: ...

    def __getitem__(self, i: int | slice) -> Edge | list[Edge]:
        return self._load()[i]

    def __iter__(self) -> Iterator[Edge]:
        return iter(self._load())

    def __bool__(self) -> bool:
        return self._count > 0


def as_list(items: Sequence[Any]) -> list[Any]:
    """A plain list of a corpus's records or edges (for building a changed corpus)."""
    return items if isinstance(items, list) else list(items)
