"""Plain records and edges: the corpus every lane reads."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

from ..errors import InputError


_ESCAPED = bytes(range(0x20)) + b'"\\'  # the only bytes `json.dumps(..., ensure_ascii=False)` escapes
_quote = json.encoder.encode_basestring


def json_bytes(s: str) -> bytes:
    """`json.dumps(s, ensure_ascii=False).encode()` for a str. Most texts need no escaping, which
    one `bytes.translate` pass tells (3x faster than json's quoting); they are only put in quotes."""
    if not isinstance(s, str):
        raise TypeError(f"expected a str, got {type(s).__name__}")
    b = s.encode()
    if len(b.translate(None, _ESCAPED)) == len(b):
        return b'"' + b + b'"'
    return _quote(s).encode()


def json_list(items) -> bytes:
    """`json.dumps(list(items), ensure_ascii=False).encode()` for strings."""
    return b"[" + b", ".join(map(json_bytes, items)) + b"]"


def quoted(r: "Record") -> tuple[bytes, bytes, bytes, bytes]:
    """The record's id, title, text and aliases as UTF-8 JSON text."""
    return json_bytes(r.id), json_bytes(r.title), json_bytes(r.text), json_list(r.aliases)


def hash_line(q: tuple[bytes, bytes, bytes, bytes], metadata: dict | None = None) -> bytes:
    """A record's line of the content hash: `json.dumps([id, title, text, aliases], ensure_ascii=False)`,
    with the metadata (keys sorted) as a fifth item when there is any, so what a method reads from
    it (`word_counts`, `pos`, ...) is pinned too, and a corpus without metadata keeps its hash."""
    if not metadata:
        return b"[%b, %b, %b, %b]\n" % q
    meta = json.dumps(metadata, ensure_ascii=False, sort_keys=True).encode()
    return b"[%b, %b, %b, %b, %b]\n" % (*q, meta)


@dataclass(frozen=True)
class Record:
    """One retrievable unit: a paper, a dictionary entry, a synset."""

    id: str
    title: str
    text: str
    metadata: dict = field(default_factory=dict, compare=False, hash=False)
    aliases: tuple[str, ...] = ()


MAX_EDGE_WEIGHT = 1e9  # edge weights are finite and at most this: the feedback cap (2x) and sums stay finite


@dataclass(frozen=True)
class Edge:
    """A directed, typed, weighted link from one record to another.

    `context` is the source's sentence that makes the link (FOLDOC's `{link}` in its sentence):
    evidence for a reader and for the relation lane, not part of the edge's identity or hash.
    `anchor` is the place in the target the link names (a heading of a note, an HTML fragment),
    "" for the whole record; like `context`, evidence only.
    """

    source: str
    target: str
    type: str = "link"
    weight: float = 1.0
    context: str = field(default="", compare=False)
    anchor: str = field(default="", compare=False)


@dataclass
class Corpus:
    """Records in a fixed order plus optional edges between them.

    `title_weight` is how many times the title is repeated before the text when indexing
    (Carrier repeats a dictionary name twice; BEIR papers use title once); `alias_weight` how
    many times the aliases follow it (0: aliases are not indexed, the default).

    `unresolved_edges` counts edges a loader left out because they named no record (JSONL's
    `skip_unresolved`; a folder's unresolved links are in its report).

    `records` and `edges` are lists, or any sequence (an opened index reads them from disk by
    position). `checked` says they were validated before (an opened index): ids are then not
    checked again, and a sequence that carries an `ids` column gives `ids` without parsing records.
    """

    name: str
    records: Sequence[Record]
    edges: Sequence[Edge] = field(default_factory=list)
    title_weight: int = 1
    alias_weight: int = 0
    checked: bool = field(default=False, repr=False, compare=False)
    unresolved_edges: int = field(default=0, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.checked:
            return
        seen: set[str] = set()
        for r in self.records:
            if r.id in seen:
                raise InputError(f"corpus {self.name!r}: duplicate record id {r.id!r}")
            seen.add(r.id)
        for e in self.edges:
            for end in (e.source, e.target):
                if end not in seen:
                    raise InputError(
                        f"corpus {self.name!r}: edge {e.source!r} -> {e.target!r} names unknown record id {end!r}"
                    )

    def __len__(self) -> int:
        return len(self.records)

    @cached_property
    def position(self) -> dict[str, int]:
        """Record id -> row number."""
        return {rid: i for i, rid in enumerate(self.ids)}

    @property
    def ids(self) -> list[str]:
        column = getattr(self.records, "ids", None)
        return column.tolist() if column is not None else [r.id for r in self.records]

    def indexed_text(self, record: Record, title_weight: int | None = None) -> str:
        """The text BM25 and the embedder see: the title `title_weight` times, the aliases
        `alias_weight` times (a dictionary's other words for the sense), then the body."""
        tw = self.title_weight if title_weight is None else title_weight
        return " ".join([record.title] * tw + list(record.aliases) * self.alias_weight + [record.text])

    def content_hash(self, records_hash: "hashlib._Hash | None" = None) -> str:
        """sha256 over records (metadata included) and edges in order: what an index and a protocol pin.

        `records_hash`: a sha256 already fed every record's `hash_line` (the index writer feeds
        it while it writes the records, so each record is quoted once for both)."""
        h = records_hash
        if h is None:
            h = hashlib.sha256()
            for r in self.records:
                h.update(hash_line(quoted(r), r.metadata))
        h.update(b"--edges--\n")
        for e in self.edges:
            h.update(json.dumps([e.source, e.target, e.type, e.weight]).encode())
            h.update(b"\n")
        return h.hexdigest()
