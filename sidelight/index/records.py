"""Records and edges of an index generation, read by position instead of parsed on open.

    records.jsonl      one JSON object per record, in corpus order (readable by any tool)
    records.off.npy    int64 byte offset of each line, plus the file's size
    ids.*, titles.*    string columns (`sidelight.store.column`): what a ranked hit shows
    edges.jsonl        one JSON array per edge: [source, target, type, weight(, context(, anchor))]
    records.hash.*     (an index of a folder) each record's line of the content hash, so a sync
                       copies unchanged records and pins the corpus without parsing them

Opening maps the offset tables; a record is parsed when it is read, the edges when the first one
is. Both were checked when the index was built, so reading them again checks only their shape.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Sequence, overload

import numpy as np

from ..corpus.model import Edge, Record, hash_line, quoted
from ..errors import IndexFormatError
from ..store.column import StringColumn, write_column

HASH_LINES = "records.hash"  # records.hash.bin + records.hash.off.npy (a column of bytes)
_ITER_CHUNK = 4096  # records per write when building, per slice of the mapping when iterating


def write_records(folder: Path, records: Iterable[Record], content: "hashlib._Hash | None" = None,
                  hash_lines: bool = False) -> None:
    """`records.jsonl` with its offset table, and the id and title columns; feeds `content` each
    record's line of the corpus content hash (`Corpus.content_hash`) on the way, and with
    `hash_lines` keeps those lines too (`records.hash.*`, for `write_records_delta`)."""
    offsets, hash_offsets, ids, titles = [0], [0], [], []
    lines, hashed = [], []
    keep = hash_lines and content is not None
    with open(folder / "records.jsonl", "wb") as f, \
            (open(folder / f"{HASH_LINES}.bin", "wb") if keep else contextlib.nullcontext()) as h:
        for r in records:
            q = quoted(r)
            if content is not None:
                hashed.append(hash_line(q, r.metadata))
                hash_offsets.append(hash_offsets[-1] + len(hashed[-1]))
            lines.append(record_line(r, q) + b"\n")
            offsets.append(offsets[-1] + len(lines[-1]))
            ids.append(r.id)
            titles.append(r.title)
            if len(lines) == _ITER_CHUNK:
                _flush(f, lines, content, hashed, h)
        _flush(f, lines, content, hashed, h)
    np.save(folder / "records.off.npy", np.asarray(offsets, dtype=np.int64), allow_pickle=False)
    if keep:
        np.save(folder / f"{HASH_LINES}.off.npy", np.asarray(hash_offsets, dtype=np.int64), allow_pickle=False)
    write_column(folder, "ids", ids)
    write_column(folder, "titles", titles)


def _flush(f: BinaryIO, lines: list[bytes], content: "hashlib._Hash | None", hashed: list[bytes],
           h: BinaryIO | None = None) -> None:
    """Write a batch of record lines and feed their hash lines to `content` (and `h`); empties both lists."""
    f.write(b"".join(lines))
    if content is not None:
        blob = b"".join(hashed)
        content.update(blob)
        if h is not None:
            h.write(blob)
    lines.clear()
    hashed.clear()


def has_hash_lines(folder: Path) -> bool:
    """True when a generation keeps its records' hash lines (`write_records(..., hash_lines=True)`)."""
    return (folder / f"{HASH_LINES}.bin").is_file() and (folder / f"{HASH_LINES}.off.npy").is_file()


def _runs(keep: np.ndarray) -> list[tuple[int, int]]:
    """[lo, hi) ranges of consecutive True positions."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.astype(np.int8), [0]))))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def write_records_delta(folder: Path, old: "RecordFile", keep: np.ndarray, fresh: Sequence[Record],
                        content: "hashlib._Hash") -> None:
    """What `write_records(folder, [old records where keep] + fresh, content, hash_lines=True)`
    writes, with the kept records' lines (and hash lines) copied as bytes from `old`, never parsed."""
    src = old.path.parent
    hoff = np.load(src / f"{HASH_LINES}.off.npy", mmap_mode="r", allow_pickle=False)
    hblob = np.memmap(src / f"{HASH_LINES}.bin", dtype=np.uint8, mode="r") if int(hoff[-1]) else np.zeros(0, np.uint8)
    if len(hoff) != len(old) + 1:
        raise IndexFormatError(f"{src}: {HASH_LINES} does not fit {len(old)} records")
    off = old._off
    new_lines = [record_line(r) + b"\n" for r in fresh]
    new_hashed = [hash_line(quoted(r), r.metadata) for r in fresh]
    with open(folder / "records.jsonl", "wb") as f, open(folder / f"{HASH_LINES}.bin", "wb") as h:
        for lo, hi in _runs(keep):
            # zero-copy slices of the memory maps (numpy's stubs do not declare its buffer protocol)
            f.write(memoryview(old._data[int(off[lo]):int(off[hi])]))  # type: ignore[arg-type]
            part = memoryview(hblob[int(hoff[lo]):int(hoff[hi])])  # type: ignore[arg-type]
            h.write(part)
            content.update(part)
        f.write(b"".join(new_lines))
        blob = b"".join(new_hashed)
        h.write(blob)
        content.update(blob)
    for name, table, added in (("records.off.npy", off, new_lines), (f"{HASH_LINES}.off.npy", hoff, new_hashed)):
        lengths = np.concatenate((np.diff(np.asarray(table))[keep], np.fromiter(map(len, added), np.int64, len(added))))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        np.save(folder / name, offsets, allow_pickle=False)
    kept = np.flatnonzero(keep)
    ids, titles = old.ids.tolist(), old.titles.tolist()
    write_column(folder, "ids", [ids[i] for i in kept] + [r.id for r in fresh])
    write_column(folder, "titles", [titles[i] for i in kept] + [r.title for r in fresh])


def record_line(r: Record, q: tuple[bytes, bytes, bytes, bytes] | None = None) -> bytes:
    """`json.dumps` of the record as a JSON object (id, title, text, metadata, aliases), UTF-8,
    assembled from the record's `quoted` parts (`q`): the same text, faster."""
    qid, qtitle, qtext, qaliases = q or quoted(r)
    meta = json.dumps(r.metadata, ensure_ascii=False).encode() if r.metadata else b"{}"
    return b'{"id": %b, "title": %b, "text": %b, "metadata": %b, "aliases": %b}' % (qid, qtitle, qtext, meta, qaliases)


def write_edges(folder: Path, edges: Iterable[Edge]) -> None:
    with open(folder / "edges.jsonl", "w", encoding="utf-8") as f:
        for e in edges:
            f.write(edge_line(e))


def edge_line(e: Edge) -> str:
    """The edge's line of `edges.jsonl`."""
    row = [e.source, e.target, e.type, e.weight]
    if e.context or e.anchor:
        row.append(e.context)
    if e.anchor:
        row.append(e.anchor)
    return json.dumps(row, ensure_ascii=False) + "\n"


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
