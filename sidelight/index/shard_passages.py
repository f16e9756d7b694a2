"""Vectors and passages on a sharded index: each shard keeps its records' vectors, windows and
sections, and answers for them with the whole collection's statistics; `FanoutDense` is the
coordinator's view of them.

* Section windows (`structures.dense.Passages`): a shard's dense store holds the windows of its
  own records (every window of a record in the record's shard), so its MaxP cosines are the
  unsharded index's; a hit's best passage asks the record's shard for its windows' cosines.
* Section BM25 (`bm25-sections`, `hybrid-sections`): every shard scores its records' sections
  (`methods.sections.SectionIndex`, built in the shard's memory on first use) with the
  collection's section statistics, gathered from the shards for the query's terms only (df,
  section count, total length), as the sharded record BM25 scores with the collection's df.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..structures.dense import DenseStore, Passages
from ..structures.dense_query import DenseScorer
from ..structures.ranking import Ranking, select_top
from .shards import Fanout, gather, merged

if TYPE_CHECKING:
    from ..text import Tokenizer


VECTORS_STAY = ("the record vectors stay on the shards of a sharded index; use dense, rrf, "
                "hybrid-linear or dense+ppr (dense-prf, dense-ann and the floor need them here), or an index "
                "built without --shards")


class FanoutDense(DenseScorer):
    """The model that encodes queries here; cosines (and a record's windows' cosines) come from the
    shards. The record vectors stay there: `ShardedIndex.capabilities` offers no vectors and no ANN."""

    def __init__(self, meta: dict[str, Any], fanout: Fanout, threads: int = 2):
        self.identity, self.spec, self.threads = meta["identity"], meta["spec"], threads
        self.truncated_docs, self.ann_params = int(meta.get("truncated_docs", 0)), None
        self._embedder = self._query_vectors = None
        self.fanout, self.n_records = fanout, int(meta["records"])
        rule = dict(meta.get("passages") or {})
        self.n_windows = int(rule.pop("windows", 0))
        self.passages = Passages.from_dict(rule) if "passages" in meta else None

    def window_cosines(self, position: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(section, cosine) of each window of the record at `position`, from its shard."""
        if self.passages is None or not self.passages.sections:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return merged(self.fanout.ask("window_cosines", int(position), np.asarray(q, dtype=np.float32)))

    @property
    def window_count(self) -> int:
        return self.n_windows

    def scores_of(self, q: np.ndarray) -> np.ndarray:
        return gather(self.fanout.ask("cosines", np.asarray(q, dtype=np.float32), None), self.n_records)

    def top(self, query: str, k: int | None, id_rank: np.ndarray) -> Ranking:
        if k is None:
            return super().top(query, k, id_rank)
        positions, scores = merged(self.fanout.ask("cosines", np.asarray(self.encode_query(query), np.float32), k))
        return select_top(positions, scores, k, id_rank)  # each shard's top k, merged

    def __repr__(self) -> str:
        return f"FanoutDense({self.spec!r}, {self.n_records} records on {len(self.fanout.shards)} shards)"


def dense_part(dense: DenseStore, rows: np.ndarray) -> DenseStore:
    """The vectors of the records at positions `rows` (in the part's order) and, with passages,
    their windows (owners renumbered to the part's positions, each record's in their order, sections kept)."""
    part = DenseStore(np.ascontiguousarray(np.asarray(dense.vectors)[rows]), dense.identity, dense.spec, 0,
                      dense.threads)
    if dense.passages is None or dense.window_owner is None or dense.windows is None:
        return part
    local = np.full(len(dense.vectors), -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    owner = local[np.asarray(dense.window_owner)]
    kept = np.flatnonzero(owner >= 0)
    kept = kept[np.argsort(owner[kept], kind="stable")]  # by the part's positions, each record's windows in order
    section = None if dense.window_section is None else np.asarray(dense.window_section)[kept]
    part.set_windows(dense.passages, owner[kept], np.ascontiguousarray(np.asarray(dense.windows)[kept]), section)
    return part


def dense_meta(dense: DenseStore) -> dict[str, Any]:
    """What the coordinator's manifest says of the vectors: model, truncation and, with passages,
    the window rule and how many windows `dense` holds."""
    meta: dict[str, Any] = {"spec": dense.spec, "identity": dense.identity, "truncated_docs": dense.truncated_docs}
    if dense.passages is not None:
        meta["passages"] = {**dense.passages.to_dict(), "windows": int(dense.window_count)}
    return meta


def section_scores(fanout: Fanout, tokenizer: "Tokenizer", query: str, n_records: int) -> np.ndarray:
    """Each record's best section BM25 for `query` (0 where none matches), over every shard."""
    terms = list(dict.fromkeys(tokenizer(query)))
    stats = fanout.ask("section_stats", terms)
    df = np.zeros(len(terms))
    n, total = 0, 0.0
    for own_df, (own_n, own_total) in stats:
        df += own_df
        n += int(own_n)
        total += float(own_total)
    out = np.zeros(n_records, dtype=np.float64)
    for positions, scores in fanout.ask("section_best", terms, df.tolist(), n, total):
        out[positions] = scores
    return out
