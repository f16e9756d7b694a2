"""Dense vectors: corpus vectors from a local ONNX embedding model, exact dot-product scores.

Vectors live in the index (float32, memory-mappable) with the model's identity; a query is
encoded by the same model, and an index built with another model is refused.

Optionally (`sidelight index ... --dense minilm --ann`, or `DenseStore.build_ann`) an HNSW graph
over the same vectors is saved beside them (`dense/ann.usearch`, see `sidelight.structures.ann`) for the
`dense-ann` method. After `add`/`delete` the graph is stale: it is rebuilt (same settings) on the
next `dense-ann` query or `save`.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..errors import IndexFormatError, InputError
from .ranking import Ranking, top_k

if TYPE_CHECKING:
    from ..models.embedder import Embedder
    from .ann import AnnIndex, AnnParams


def cosines(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Dot products of `q` with every row, as float64. The float32 products are summed row by row
    (einsum, not BLAS, whose kernels and thread splits sum rows differently by where they sit):
    a record's score depends only on its vector, so equal vectors tie exactly and a shard scores
    a record exactly as the whole index does."""
    return np.einsum("ij,j->i", vectors, np.asarray(q, dtype=np.float32)).astype(np.float64)


@dataclass
class DenseStore:
    """Record vectors (rows in corpus order) and the model that made them."""

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

    @classmethod
    def build(cls, texts: list[str], spec: str = "minilm", batch_size: int = 32, threads: int = 2,
              progress: bool = True) -> "DenseStore":
        from ..models.embedder import Embedder

        emb = Embedder.from_spec(spec, threads=threads)
        vectors = emb.encode(texts, batch_size=batch_size, kind="doc", progress=progress)
        return cls(vectors, emb.identity, spec, emb.truncated_docs, threads, emb)

    def embedder(self) -> "Embedder":
        """The query encoder, loaded once and checked against the index's model identity."""
        if self._embedder is None:
            from ..models.embedder import Embedder, check_identity

            emb = Embedder.from_spec(self.spec, threads=self.threads)
            check_identity(self.identity, emb.identity)
            self._embedder = emb
        return self._embedder

    def encode_query(self, text: str) -> np.ndarray:
        if not text or not text.strip():
            raise InputError("empty query")
        if self._query_vectors is not None and text in self._query_vectors:
            return self._query_vectors[text]
        return self.embedder().encode([text], kind="query")[0]

    @contextmanager
    def batched_queries(self, texts: list[str], batch_size: int = 32) -> Iterator[None]:
        """Encode `texts` in batches once; `encode_query` returns those vectors inside the block.

        The encoder's batches give each text the vector it gets alone (checked by bench/batch.py,
        which compares every hit), so batching changes only the time (`Index.search_many`).
        """
        if "encode_query" in self.__dict__:  # a store whose query encoder was replaced (a test double) encodes as it likes
            yield
            return
        unique = [t for t in dict.fromkeys(texts) if t and t.strip()]
        with self.query_vectors(dict(zip(unique, self.embedder().encode(unique, batch_size=batch_size, kind="query")))):
            yield

    @contextmanager
    def query_vectors(self, vectors: dict[str, np.ndarray]) -> Iterator[None]:
        """Inside the block `encode_query` returns these vectors for these texts (others are encoded)."""
        self._query_vectors = vectors
        try:
            yield
        finally:
            self._query_vectors = None

    def scores(self, query: str) -> np.ndarray:
        """Cosine of the query with every record (vectors are unit length)."""
        return self.scores_of(self.encode_query(query))

    def top(self, query: str, k: int | None, id_rank: np.ndarray) -> Ranking:
        """The k records of highest cosine (every record when k is None), ties by `id_rank`."""
        return top_k(self.scores(query), k, id_rank, positive_only=False)

    def scores_of(self, q: np.ndarray) -> np.ndarray:
        """Cosine of a query vector with every record (see `cosines`)."""
        return cosines(self.vectors, q)

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
                self.build_ann(self.ann_params)
        return self._ann

    def _ann_stale(self) -> None:
        self._ann = self._ann_source = None

    def add(self, texts: list[str], batch_size: int = 32) -> None:
        emb = self.embedder()
        before = emb.truncated_docs
        new = emb.encode(texts, batch_size=batch_size, kind="doc")
        self.truncated_docs += emb.truncated_docs - before
        self.vectors = np.vstack([np.asarray(self.vectors), new])
        self._ann_stale()

    def delete(self, positions: np.ndarray) -> None:
        keep = np.ones(len(self.vectors), dtype=bool)
        keep[positions] = False
        self.vectors = np.asarray(self.vectors)[keep]
        self._ann_stale()

    def save(self, folder: Path) -> dict:
        folder.mkdir()
        np.save(folder / "vectors.npy", np.ascontiguousarray(self.vectors, dtype=np.float32))
        meta = {"spec": self.spec, "identity": self.identity, "truncated_docs": self.truncated_docs,
                "shape": list(self.vectors.shape)}
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
        if "ann" in meta:  # opened on first `dense-ann` query
            from .ann import AnnParams

            store.ann_params, store._ann_source = AnnParams.from_dict(meta["ann"]), (folder, meta["ann"])
        return store
