"""Dense vectors: corpus vectors from a local ONNX embedding model, exact dot-product scores.

Vectors live in the index (float32, memory-mappable) with the model's identity; a query is
encoded by the same model, and an index built with another model is refused.

Records longer than the model's window may also keep their further windows (`Passages`:
`sidelight index ... --dense minilm --passages`, or `sidelight dense INDEX --passages`): every
window after the first, with the record's title in front, as rows of `dense/windows.npy` with the
owning record's position in `dense/window_owner.npy`. A record's dense score is then the largest
cosine over its windows ("MaxP"); `vectors` stay the first windows, which `dense-ann`, the floor's
rescoring, Rocchio feedback and the web page use.

Optionally (`sidelight index ... --dense minilm --ann`, or `DenseStore.build_ann`) an HNSW graph
over the same vectors is saved beside them (`dense/ann.usearch`, see `sidelight.structures.ann`) for the
`dense-ann` method. After `add`/`delete` the graph is stale: it is rebuilt (same settings) on the
next `dense-ann` query or `save`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..capabilities import UnsupportedError
from ..errors import IndexFormatError, InputError
from .dense_query import DenseScorer

if TYPE_CHECKING:
    from ..models.embedder import Embedder
    from .ann import AnnIndex, AnnParams


def cosines(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Dot products of `q` with every row, as float64. The float32 products are summed row by row
    (einsum, not BLAS, whose kernels and thread splits sum rows differently by where they sit):
    a record's score depends only on its vector, so equal vectors tie exactly and a shard scores
    a record exactly as the whole index does."""
    return np.einsum("ij,j->i", vectors, np.asarray(q, dtype=np.float32)).astype(np.float64)


@dataclass(frozen=True)
class Passages:
    """How long records are cut into windows: `stride` wordpieces shared by neighbouring windows,
    and whether each window after the first starts with the record's title.

    `sections`: the windows are the records' sections instead (`corpus.passages.window_texts`:
    every section, each cut into windows of the model's length), so every word of a document
    is in some window and each window knows its section (`DenseStore.window_section`)."""

    stride: int = 64
    title: bool = True
    sections: bool = False

    def to_dict(self) -> dict:
        return {"stride": self.stride, "title": self.title, **({"sections": True} if self.sections else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "Passages":
        unknown = sorted(set(d) - {"stride", "title", "sections"})
        if unknown:
            raise InputError(f"passages: unknown setting(s) {', '.join(unknown)} (known: stride, title, sections)")
        return cls(int(d.get("stride", 64)), bool(d.get("title", True)), bool(d.get("sections", False)))


Units = list[list[tuple[int, str]]]  # per record: (section index, window text) of each section


def encode_units(emb: "Embedder", units: Units, stride: int, batch_size: int = 32,
                 progress: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner record, section, vectors) of every window of every section in `units`: each
    section's first window and its overflowing ones (`stride` wordpieces shared), record-major.
    Truncation counters are left as they are (a window is not a record)."""
    flat = [text for sections in units for _, text in sections]
    record = np.asarray([r for r, sections in enumerate(units) for _ in sections], dtype=np.int64)
    section = np.asarray([s for sections in units for s, _ in sections], dtype=np.int64)
    if not flat:
        return record, section, np.zeros((0, emb.dim), dtype=np.float32)
    counters = emb.truncated_docs, emb.truncated_queries
    try:
        first = emb.encode(flat, batch_size=batch_size, kind="doc", progress=progress)
    finally:
        emb.truncated_docs, emb.truncated_queries = counters
    unit, further = emb.encode_windows(flat, None, stride, batch_size, progress)
    unit = np.concatenate([np.arange(len(flat)), unit])
    order = np.argsort(unit, kind="stable")  # each unit's first window, then its further ones
    return record[unit[order]], section[unit[order]], np.vstack([first, further])[order]


def windows_of(p: Passages, emb: "Embedder", texts: list[str], titles: list[str] | None, units: Units | None,
               batch_size: int, progress: bool = False) -> tuple:
    """(owner, windows[, section]) of records' windows by the rule `p`: their further windows, or
    with `p.sections` every window of their sections (`units`)."""
    if p.sections:
        if units is None or len(units) != len(texts):
            raise InputError("section windows need each record's sections (units)")
        owner, section, windows = encode_units(emb, units, p.stride, batch_size, progress)
        return owner, windows, section
    return emb.encode_windows(texts, titles if p.title else None, p.stride, batch_size, progress)


@dataclass
class DenseStore(DenseScorer):
    """Record vectors (rows in corpus order) and the model that made them (and encodes queries,
    `DenseScorer`); with passages, the records' further windows; optionally an ANN graph."""

    vectors: np.ndarray
    identity: dict
    spec: str
    truncated_docs: int = 0
    threads: int = 2
    _embedder: "Embedder | None" = field(default=None, repr=False)
    ann_params: "AnnParams | None" = None  # set: the index keeps an ANN graph (saved beside the vectors)
    _ann: "AnnIndex | None" = field(default=None, repr=False)
    _ann_source: "tuple[Path, dict] | None" = field(default=None, repr=False)  # saved graph, not yet opened
    _query_vectors: "dict[str, np.ndarray] | None" = field(default=None, repr=False)  # see batched_queries
    passages: Passages | None = None  # set: records also keep their further windows (MaxP)
    windows: np.ndarray | None = None  # (m, dim) float32, the windows after each record's first
    window_owner: np.ndarray | None = None  # (m,) int64, ascending: the record of each window
    window_section: np.ndarray | None = None  # (m,) int64 with `passages.sections`: each window's section

    @classmethod
    def build(cls, texts: list[str], spec: str = "minilm", batch_size: int = 32, threads: int = 2,
              progress: bool = True, passages: Passages | None = None,
              titles: list[str] | None = None, units: Units | None = None) -> "DenseStore":
        """Encode `texts` (one per record); with `passages`, their further windows too (`titles`:
        each record's title, put before its windows when `passages.title`), or with
        `passages.sections` every window of every section in `units` (one list per record)."""
        from ..models.embedder import Embedder

        emb = Embedder.from_spec(spec, threads=threads)
        vectors = emb.encode(texts, batch_size=batch_size, kind="doc", progress=progress)
        store = cls(vectors, emb.identity, spec, emb.truncated_docs, threads, emb)
        if passages is not None:
            store.set_windows(passages, *windows_of(passages, emb, texts, titles, units, batch_size, progress))
        return store

    def set_windows(self, passages: Passages, owner: np.ndarray, windows: np.ndarray,
                    section: np.ndarray | None = None) -> None:
        """Keep `windows` (rows, unit length) of the records at positions `owner` (ascending);
        `section`: each window's section, with `passages.sections`."""
        owner = np.asarray(owner, dtype=np.int64)
        if windows.shape != (len(owner), self.vectors.shape[1]) or (len(owner) and (
                owner[0] < 0 or owner[-1] >= len(self.vectors) or np.any(np.diff(owner) < 0))):
            raise IndexFormatError(f"{len(owner)} window owners and windows {windows.shape} do not fit "
                                   f"{len(self.vectors)} records of dimension {self.vectors.shape[1]}")
        if passages.sections != (section is not None) or (section is not None and len(section) != len(owner)):
            raise IndexFormatError(f"section windows need one section per window ({len(owner)} windows)")
        self.passages, self.window_owner = passages, owner
        self.window_section = None if section is None else np.asarray(section, dtype=np.int64)
        contiguous = windows.dtype == np.float32 and windows.flags.c_contiguous
        self.windows = windows if contiguous else np.ascontiguousarray(windows, dtype=np.float32)  # maps stay maps

    @property
    def window_count(self) -> int:
        """How many windows the records keep besides their vectors (0 without passages)."""
        return 0 if self.window_owner is None else len(self.window_owner)

    def window_cosines(self, position: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(section of each window, its cosine with `q`) for the windows of the record at `position`
        (empty without section windows)."""
        if self.window_section is None or self.window_owner is None or self.windows is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        lo, hi = np.searchsorted(self.window_owner, [position, position + 1])
        return np.asarray(self.window_section[lo:hi]), cosines(np.asarray(self.windows[lo:hi]), q)

    def scores_of(self, q: np.ndarray) -> np.ndarray:
        """Cosine of a query vector with every record (see `cosines`); with passages, a record's
        largest cosine over its windows."""
        s = cosines(self.vectors, q)
        if self.windows is not None and self.window_owner is not None and len(self.windows):
            np.maximum.at(s, self.window_owner, cosines(self.windows, q))
        return s

    # ---- ANN graph (optional) --------------------------------------------------------------------
    def build_ann(self, params: "AnnParams | None" = None) -> "AnnIndex":
        """Build (or rebuild) the HNSW graph over the stored vectors; it is saved with the index."""
        from .ann import AnnIndex, AnnParams

        self.ann_params = params or AnnParams()
        self._ann, self._ann_source = AnnIndex.build(self.vectors, self.ann_params), None
        return self._ann

    def ann(self) -> "AnnIndex":
        """The ANN graph: opened from the index folder on first use (rebuilt if stale)."""
        if self._ann is None:
            if self.ann_params is None:
                raise InputError("this index has no ANN graph for `dense-ann`; rebuild it with "
                                 "`sidelight index SOURCE --dense minilm --ann` (or use the exact `dense` method)")
            if self._ann_source is not None:
                from .ann import AnnIndex

                folder, meta = self._ann_source
                self._ann = AnnIndex.load(folder, meta, *self.vectors.shape)
                self._ann_source = None
            else:
                return self.build_ann(self.ann_params)
        return self._ann

    def _ann_stale(self) -> None:
        self._ann = self._ann_source = None

    def add(self, texts: list[str], batch_size: int = 32, titles: list[str] | None = None,
            units: Units | None = None) -> None:
        """Append the vectors of new records (and their windows, with passages)."""
        emb = self.embedder()
        before = emb.truncated_docs
        new = emb.encode(texts, batch_size=batch_size, kind="doc")
        self.truncated_docs += emb.truncated_docs - before
        if self.passages is not None:
            owner, windows, *section = windows_of(self.passages, emb, texts, titles, units, batch_size)
            self.window_owner = np.concatenate([np.asarray(self.window_owner), owner + len(self.vectors)])
            self.windows = np.vstack([np.asarray(self.windows), windows])
            if section:
                self.window_section = np.concatenate([np.asarray(self.window_section), section[0]])
        self.vectors = np.vstack([np.asarray(self.vectors), new])
        self._ann_stale()

    def delete(self, positions: np.ndarray) -> None:
        keep = np.ones(len(self.vectors), dtype=bool)
        keep[positions] = False
        if self.passages is not None:
            owner = np.asarray(self.window_owner)
            kept = keep[owner]
            new_position = np.cumsum(keep) - 1  # old position -> position after the delete
            self.window_owner, self.windows = new_position[owner[kept]], np.asarray(self.windows)[kept]
            if self.window_section is not None:
                self.window_section = np.asarray(self.window_section)[kept]
        self.vectors = np.asarray(self.vectors)[keep]
        self._ann_stale()

    def save(self, folder: Path) -> dict:
        folder.mkdir()
        np.save(folder / "vectors.npy", np.ascontiguousarray(self.vectors, dtype=np.float32))
        meta = {"spec": self.spec, "identity": self.identity, "truncated_docs": self.truncated_docs,
                "shape": list(self.vectors.shape)}
        if self.passages is not None and self.window_owner is not None:
            np.save(folder / "windows.npy", np.ascontiguousarray(self.windows, dtype=np.float32))
            np.save(folder / "window_owner.npy", np.ascontiguousarray(self.window_owner, dtype=np.int64))
            if self.window_section is not None:
                np.save(folder / "window_section.npy", np.ascontiguousarray(self.window_section, dtype=np.int64))
            meta["passages"] = {**self.passages.to_dict(), "windows": len(self.window_owner)}
        if self.ann_params is not None:
            meta["ann"] = self.ann().save(folder)
        (folder / "dense.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
        return meta

    @classmethod
    def load(cls, folder: Path, n_records: int) -> "DenseStore":
        meta = json.loads((folder / "dense.json").read_text())
        vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        if vectors.shape != (n_records, meta["identity"]["dim"]) or vectors.dtype != np.float32:
            raise IndexFormatError(f"{folder}: dense vectors {vectors.shape} {vectors.dtype} do not fit "
                                   f"{n_records} records of dimension {meta['identity']['dim']}")
        store = cls(vectors, meta["identity"], meta["spec"], meta.get("truncated_docs", 0))
        if "passages" in meta:
            p = dict(meta["passages"])
            m = p.pop("windows")
            owner = np.load(folder / "window_owner.npy", mmap_mode="r")
            windows = np.load(folder / "windows.npy", mmap_mode="r")
            if owner.shape != (m,) or windows.dtype != np.float32:
                raise IndexFormatError(f"{folder}: {owner.shape[0]} window owners, {m} expected")
            passages = Passages.from_dict(p)
            section = np.load(folder / "window_section.npy", mmap_mode="r") if passages.sections else None
            store.set_windows(passages, owner, windows, section)
        if "ann" in meta:  # opened on first `dense-ann` query
            from .ann import AnnParams

            store.ann_params, store._ann_source = AnnParams.from_dict(meta["ann"]), (folder, meta["ann"])
        return store


def held_vectors(dense: DenseScorer) -> DenseStore:
    """The record vectors (and windows) of `dense`. A method that reads them declares
    `Capability.VECTORS`, so a backend without them was refused before it got here."""
    if not isinstance(dense, DenseStore):
        raise UnsupportedError("the record vectors are not held here (a sharded index keeps them on its shards)")
    return dense
