"""The dense lane: corpus vectors from a local ONNX embedding model, exact dot-product search.

Vectors live in the index (float32, memory-mappable) with the model's identity; a query is
encoded by the same model, and an index built with another model is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import IndexFormatError, InputError
from .methods import register
from .ranking import Ranking, top_k

if TYPE_CHECKING:
    from ..index import Index
    from ..models.embedder import Embedder


@dataclass
class DenseStore:
    """Record vectors (rows in corpus order) and the model that made them."""

    vectors: np.ndarray
    identity: dict
    spec: str
    truncated_docs: int = 0
    threads: int = 2
    _embedder: "Embedder | None" = field(default=None, repr=False)

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
        return self.embedder().encode([text], kind="query")[0]

    def scores(self, query: str) -> np.ndarray:
        """Cosine of the query with every record (vectors are unit length)."""
        return (self.vectors @ self.encode_query(query)).astype(np.float64)

    def add(self, texts: list[str], batch_size: int = 32) -> None:
        emb = self.embedder()
        before = emb.truncated_docs
        new = emb.encode(texts, batch_size=batch_size, kind="doc")
        self.truncated_docs += emb.truncated_docs - before
        self.vectors = np.vstack([np.asarray(self.vectors), new])

    def delete(self, positions: np.ndarray) -> None:
        keep = np.ones(len(self.vectors), dtype=bool)
        keep[positions] = False
        self.vectors = np.asarray(self.vectors)[keep]

    def save(self, folder: Path) -> dict:
        folder.mkdir()
        np.save(folder / "vectors.npy", np.ascontiguousarray(self.vectors, dtype=np.float32))
        meta = {"spec": self.spec, "identity": self.identity, "truncated_docs": self.truncated_docs,
                "shape": list(self.vectors.shape)}
        (folder / "dense.json").write_text(json.dumps(meta, indent=2, sort_keys=True))
        return meta

    @classmethod
    def load(cls, folder: Path, n_records: int) -> "DenseStore":
        meta = json.loads((folder / "dense.json").read_text())
        vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        if vectors.shape != (n_records, meta["identity"]["dim"]) or vectors.dtype != np.float32:
            raise IndexFormatError(f"{folder}: dense vectors {vectors.shape} {vectors.dtype} do not fit "
                                   f"{n_records} records of dimension {meta['identity']['dim']}")
        return cls(vectors, meta["identity"], meta["spec"], meta.get("truncated_docs", 0))


def require_dense(index: "Index") -> DenseStore:
    if index.dense is None:
        raise InputError("this index has no dense vectors; rebuild it with `sidelight index SOURCE --dense minilm`")
    return index.dense


@register("dense", "cosine of embedding vectors (the dense lane), exact dot product over all records")
def _dense(index: "Index", query: str, k: int | None, params: dict) -> Ranking:
    return top_k(require_dense(index).scores(query), k, index.id_rank, positive_only=False)
