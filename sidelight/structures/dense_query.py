"""The query side of dense scoring (`DenseScorer`): the model that encodes queries, checked against
the one that encoded the records, and cosines of a query vector with every record.

Shared by the vectors held here (`structures.dense.DenseStore`) and a sharded index's fan-out
(`index.shard_passages.FanoutDense`), which encodes a query once and asks the shards for cosines:
what only held vectors can do (feedback, rescoring, an ANN graph) is `DenseStore`'s alone, and a
backend without them offers no `Capability.VECTORS`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..errors import InputError
from .ranking import Ranking, top_k

if TYPE_CHECKING:
    from ..models.embedder import Embedder
    from .ann import AnnParams
    from .dense import Passages


class DenseScorer(ABC):
    """Encodes queries with the records' model; subclasses give the cosines (`scores_of`) and a
    record's windows' cosines (`window_cosines`), and set the attributes below."""

    spec: str
    identity: dict
    threads: int
    truncated_docs: int
    passages: Passages | None  # set: records also keep windows (MaxP; with `sections`, section windows)
    ann_params: AnnParams | None  # set: an ANN graph is kept beside the vectors
    _embedder: Embedder | None
    _query_vectors: dict[str, np.ndarray] | None  # see `batched_queries`

    @abstractmethod
    def scores_of(self, q: np.ndarray) -> np.ndarray:
        """Cosine of a query vector with every record (with passages, a record's largest over its windows)."""

    @abstractmethod
    def window_cosines(self, position: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(section of each window, its cosine with `q`) for the windows of the record at `position`."""

    @property
    @abstractmethod
    def window_count(self) -> int:
        """How many windows the records keep besides their vectors (0 without passages)."""

    def loaded_embedder(self) -> "Embedder | None":
        """The query encoder if it is loaded already (None: not yet; nothing is loaded here)."""
        return self._embedder

    def reuse_embedder(self, other: "DenseScorer") -> None:
        """Take `other`'s loaded query encoder when both were encoded by the same model (a reload)."""
        if other.identity == self.identity and other._embedder is not None:
            self._embedder = other._embedder

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
