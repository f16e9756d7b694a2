"""The shards of a sharded index: one shard's server, its builder, and the fan-out that asks them all.

A shard is an ordinary index folder over a disjoint subset of the records whose lexical index
scores with the whole collection's statistics (a `LexicalIndex` with a `Collection` scope). It
answers in global record positions, asked with term strings (the coordinator tokenizes a query
once) and query vectors (the coordinator encodes it once), so its scores are the unsharded index's.

The same classes run in this process (`LocalShards`) or as Ray actors (`sidelight.index.ray_shards`):
the in-process fan-out is the oracle the Ray one is tested against.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Protocol, Sequence

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from ..corpus.model import Corpus, Record
from ..structures.dense import DenseStore, held_vectors
from ..structures.lexical import LexicalIndex
from ..structures.lexical_store import BM25Params, Collection
from ..structures.term_counts import count_terms
from ..structures.ranking import top_k
from ..text import TokenizerConfig
from ..errors import InputError
from ..methods.sections import SectionIndex
from . import store
from .index import Index, warm_kernels

Answer = tuple[np.ndarray, np.ndarray]  # (global positions, scores)


class ShardServer:
    """One shard's folder, opened memory-mapped, answering in global positions."""

    def __init__(self, root: str | Path, generation: str, positions: np.ndarray, warm: bool = False,
                 verify: bool = False):
        self.index = Index.open_generation(Path(root), generation, verify)
        if warm:  # a long-lived server takes the kernels' start-up before its first query
            warm_kernels()
        self.positions = np.asarray(positions, dtype=np.int64)  # global position of each local record
        if len(self.positions) != len(self.index.corpus):
            raise ValueError(f"{root}: {len(self.index.corpus)} records, the coordinator assigns "
                             f"{len(self.positions)}")

    def _terms(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(local term ids, which of `terms` this shard has), in the order of `terms`."""
        found = [self.index.lexical.find_term(t) for t in terms]
        have = np.fromiter((i is not None for i in found), dtype=bool, count=len(found))
        return np.asarray([i for i in found if i is not None], dtype=np.int64), have

    def bm25_top(self, terms: Sequence[str], k: int | None) -> Answer:
        """This shard's top-k BM25 records (positive scores, ties by id)."""
        ids, _ = self._terms(terms)
        r = self.index.lexical.bm25_top_terms(ids, k, self.index.id_rank)
        return self.positions[r.positions], r.scores

    def weighted(self, kind: str, terms: Sequence[str], factors: Sequence[float] | None) -> Answer:
        """Every record with a nonzero `kind` ("bm25", "tfidf") score for `terms` (times `factors`)."""
        ids, have = self._terms(terms)
        f = None if factors is None else np.asarray(factors, dtype=np.float64)[have]
        scores = self.index.lexical.weighted(kind, ids, f)
        nz = np.flatnonzero(scores)
        return self.positions[nz], scores[nz]

    def cosines(self, q: np.ndarray, k: int | None) -> Answer:
        """Cosines of a query vector: every record (k None) or this shard's top k (ties by id)."""
        if self.index.dense is None:
            raise InputError("this shard has no dense vectors")
        scores = self.index.dense.scores_of(q)
        if k is None:
            return self.positions, scores
        r = top_k(scores, k, self.index.id_rank, positive_only=False)
        return self.positions[r.positions], r.scores

    def window_cosines(self, position: int, q: np.ndarray) -> Answer:
        """(section of each window, its cosine with `q`) of the record at global `position` when this
        shard holds it (`DenseStore.window_cosines`), else nothing."""
        local = int(np.searchsorted(self.positions, position))
        if self.index.dense is None or local >= len(self.positions) or self.positions[local] != position:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return self.index.dense.window_cosines(local, np.asarray(q, dtype=np.float32))

    def _sections(self) -> SectionIndex:
        return self.index.memo("sections-bm25", len(self.index.corpus), lambda: SectionIndex(self.index))

    def section_stats(self, terms: Sequence[str]) -> Answer:
        """(df of each of `terms` among this shard's sections, [sections, their total length])."""
        df, n, total = self._sections().stats_of(terms)
        return df, np.asarray([float(n), total])

    def section_best(self, terms: Sequence[str], df: Sequence[float], n: int, total: float) -> Answer:
        """Every record of this shard whose best section scores > 0 for `terms`, with that score,
        scored with the collection's section statistics (`SectionIndex.scores_with`)."""
        sections = self._sections()
        best, _ = sections.best_of(sections.scores_with(terms, df, n, total))
        nz = np.flatnonzero(best)
        return self.positions[nz], best[nz]

    def ping(self) -> int:
        return len(self.positions)


class ShardBuilder:
    """One shard being written: its records and their term counts (and vectors), kept until the
    collection's statistics are known. `stats()` gives what they are merged from; `finish(...)`
    builds the lexical index scoped to them and saves the shard folder, returning its generation.
    """

    def __init__(self, corpus: Corpus, vocab: list[str], tf: sp.csr_matrix, tokenizer: TokenizerConfig, params: BM25Params,
                 dense: DenseStore | None):
        self.corpus, self.vocab, self.tf, self.dense = corpus, vocab, tf, dense
        self.tokenizer, self.params = tokenizer, params

    @classmethod
    def count(cls, name: str, records: Sequence[Record], title_weight: int, alias_weight: int,
              tokenizer: TokenizerConfig, params: BM25Params, dense: DenseStore | None) -> "ShardBuilder":
        corpus = Corpus(name, list(records), [], title_weight, alias_weight, checked=True)
        vocab, tf = count_terms([corpus.indexed_text(r) for r in corpus.records], tokenizer)
        return cls(corpus, vocab, tf, tokenizer, params, dense)

    @classmethod
    def of_index(cls, index: Index) -> "ShardBuilder":
        """A shard already on disk (after its adds and deletes), to be rescoped and written again."""
        lex = index.lexical_index()
        dense = None if index.dense is None else held_vectors(index.dense)
        return cls(index.corpus, lex.vocab, lex.tf, lex.tokenizer_config, lex.params, dense)

    def stats(self) -> tuple[list[str], np.ndarray, int, float]:
        """(vocabulary, own df, records, total length) of this shard alone."""
        df = np.bincount(self.tf.indices, minlength=len(self.vocab)).astype(np.float64)
        return self.vocab, df, self.tf.shape[0], float(self.tf.sum())

    def finish(self, df: np.ndarray, n_docs: int, total_len: float, folder: str | Path) -> str:
        """The lexical index scoped to the collection's statistics (`df`: of this shard's terms),
        saved with the records and vectors to `folder`; returns the generation written."""
        scope = Collection(n_docs, total_len, np.asarray(df, dtype=np.float64))
        lexical = LexicalIndex.from_counts(self.tokenizer, self.vocab, self.tf, self.params, scope)
        Index(self.corpus, lexical, dense=self.dense).save(Path(folder), force=True)
        return store.current_generation(Path(folder))


class Shards(Protocol):
    """Every shard of an index, asked at once: `ask` returns one answer per shard, None where a
    shard failed or missed the time budget."""

    def __len__(self) -> int: ...

    def ask(self, name: str, *args: Any) -> list[Answer | None]: ...


class LocalShards:
    """The shards opened in this process (the default)."""

    def __init__(self, servers: list[ShardServer]):
        self.servers = servers

    def __len__(self) -> int:
        return len(self.servers)

    def ask(self, name: str, *args: Any) -> list[Answer | None]:
        return [getattr(s, name)(*args) for s in self.servers]


@dataclass
class Coverage:
    """How many shards answered every request of one query (the fewest of any fan-out in it)."""

    shards: int
    answered: int

    @property
    def pair(self) -> tuple[int, int]:
        return self.answered, self.shards

    def to_dict(self) -> dict[str, Any]:
        return {"partial": self.answered < self.shards, "coverage": f"{self.answered}/{self.shards}"}


_COVERAGE: ContextVar[Coverage | None] = ContextVar("sidelight_coverage", default=None)


class Fanout:
    """Asks every shard; each answer lowers the coverage of the query being answered (`watch`)."""

    def __init__(self, shards: Shards):
        self.shards = shards

    def ask(self, name: str, *args: Any) -> list[Answer]:
        got = [a for a in self.shards.ask(name, *args) if a is not None]
        cov = _COVERAGE.get()
        if cov is not None:
            cov.answered = min(cov.answered, len(got))
        return got

    @contextmanager
    def watch(self) -> Iterator[Coverage]:
        """The coverage of everything asked inside the block (in this context: a stage run on a
        pool thread with `contextvars.copy_context()` counts too)."""
        cov = Coverage(len(self.shards), len(self.shards))
        token = _COVERAGE.set(cov)
        try:
            yield cov
        finally:
            _COVERAGE.reset(token)


def gather(answers: list[Answer], n: int) -> np.ndarray:
    """The full score vector over `n` global positions from shards' answers (absent: 0)."""
    out = np.zeros(n, dtype=np.float64)
    for positions, scores in answers:
        out[positions] = scores
    return out


def merged(answers: list[Answer]) -> Answer:
    """Every shard's (positions, scores), concatenated."""
    if not answers:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return (np.concatenate([np.asarray(a[0], dtype=np.int64) for a in answers]),
            np.concatenate([np.asarray(a[1], dtype=np.float64) for a in answers]))
