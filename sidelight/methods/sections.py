"""Section-level BM25: every section of every document scored as a passage of its own.

A document read from a folder is split at its headings (`corpus.passages`); here each section,
read with its document's title and its parent headings (the text the dense lane encodes,
`window_texts`), is a unit of a second BM25 index over the whole collection (its own idf and
mean section length), built in memory on first use and kept in the index's `memo`. A document's
score mixes its whole-text BM25 with its best section's, each divided by its maximum over the
collection for the query:

    score = mix * bm25(doc) / max bm25 + (1 - mix) * max_s bm25(s) / max over sections

`mix` 1 is plain BM25, 0 the best section alone (max-pooling). `hybrid-sections` fuses that
lexical score with the dense cosine as `hybrid-linear` does. Records without sections are one
section each, so any index works. The section index is built in memory on first use (seconds for
thousands of notes), so these methods suit evaluation and long-running servers, not one-off CLI runs.
A sharded index builds one per shard, over the shard's records, and scores it with the whole
collection's section statistics (`index.shard_passages`): the same scores as an index in one piece.

Defaults chosen on notes-v1 dev (both collections, 93 questions, 21 with a target section;
`bench/sections.py`, results in bench/results/sections-dev.json): `bm25-sections` mix 0.5 against
`bm25` MRR@10 0.557 vs 0.542, hit@3 0.634 vs 0.591, section@3 0.524 vs 0.381 (a win for an
index without vectors); `hybrid-sections` mix 0.75, alpha 0.3 against the default fusion
(`hybrid-linear` alpha 0.3, z-score) 0.648 vs 0.645, hit@3 0.774 vs 0.785, section@3 0.667 both:
no win, so the default stays. Differences of one to four questions: not significant; the test
split is untouched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence, TYPE_CHECKING

import numpy as np

from ..capabilities import Capability
from ..corpus.passages import window_texts
from ..structures.lexical import LexicalIndex, accumulate_scores
from ..structures.lexical_store import Columns, bm25_idf, bm25_norm, weigh
from ..structures.ranking import Ranking, top_k
from .hybrid import HYBRID_LINEAR_PARAMS, with_defaults, dense_scores, normalise
from .params import Param
from .registry import register

if TYPE_CHECKING:
    from .context import SearchContext

MIX = Param("mix", float, 0.5, "weight of whole-document BM25 against the best section's BM25 (1: plain BM25)",
            low=0.0, high=1.0)


class SectionIndex:
    """BM25 over every section of an index's records: `owner[u]` is unit u's record position and
    `section[u]` its section number in that record (`corpus.passages.sections_of`).

    A shard of a sharded index keeps one over its own records and scores it with the whole
    collection's section statistics (`stats_of`, then `scores_with`), so its scores are those of
    the index in one piece (the same float operations in the same order)."""

    def __init__(self, index: "SearchContext"):
        owner, section, texts = [], [], []
        for p, record in enumerate(index.corpus.records):
            units = window_texts(record) or [(0, index.corpus.indexed_text(record))]
            for s, text in units:
                owner.append(p)
                section.append(s)
                texts.append(text)
        self.owner = np.asarray(owner, dtype=np.int64)
        self.section = np.asarray(section, dtype=np.int64)
        self.n_records = len(index.corpus)
        self.lexical = LexicalIndex.build(texts, index.lexical.tokenizer_config, index.lexical.params)
        self._columns: Any = None  # the term counts by term (CSC), built on first `scores_with`

    def best(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """(each record's best section score, that section's number; -1 where no section matched)."""
        return self.best_of(self.lexical.bm25_scores(query))

    def best_of(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`best` of every unit's score `scores`: the first unit of a record's best score."""
        best = np.zeros(self.n_records)
        which = np.full(self.n_records, -1, dtype=np.int64)
        hit = np.flatnonzero(scores > 0)
        if len(hit):
            # the first unit of a record's best score: order by (record, -score, unit), keep each record's first
            order = np.lexsort((hit, -scores[hit], self.owner[hit]))
            units = hit[order]
            first = np.ones(len(units), dtype=bool)
            first[1:] = self.owner[units][1:] != self.owner[units][:-1]
            chosen = units[first]
            best[self.owner[chosen]] = scores[chosen]
            which[self.owner[chosen]] = self.section[chosen]
        return best, which

    def stats_of(self, terms: Sequence[str]) -> tuple[np.ndarray, int, float]:
        """(df of each of `terms` among these sections, the number of sections, their total length)."""
        lex = self.lexical
        df = np.asarray([0.0 if i is None else float(lex.df[i]) for i in map(lex.find_term, terms)])
        return df, lex.n_docs, float(lex.doc_len.sum())

    def scores_with(self, terms: Sequence[str], df: Sequence[float], n: int, total: float) -> np.ndarray:
        """BM25 of every section for the distinct `terms` (query order) with the collection's
        statistics: each term's `df`, `n` sections of `total` length. Each posting's weight is
        what `LexicalIndex` computes with those statistics (`weigh`), summed in query order."""
        lex, p = self.lexical, self.lexical.params
        if self._columns is None:
            self._columns = lex.tf.tocsc()
            self._columns.sort_indices()
        found = [(i, d) for i, d in zip(map(lex.find_term, terms), df) if i is not None]
        if not found:
            return np.zeros(lex.n_docs)
        ids = np.asarray([i for i, _ in found], dtype=np.int64)
        idf = bm25_idf(np.asarray([d for _, d in found], dtype=np.float64), n, p.variant)
        cols = self._columns
        lo, hi = cols.indptr[ids], cols.indptr[ids + 1]
        rows = np.concatenate([cols.indices[a:b] for a, b in zip(lo, hi)]).astype(np.int64)
        counts = np.concatenate([cols.data[a:b] for a, b in zip(lo, hi)])
        weights = bm25_norm(lex.doc_len, total / n if n else 0.0, p)[rows]
        weigh(counts, weights, np.repeat(idf, hi - lo), p)
        indptr = np.concatenate([[0], np.cumsum(hi - lo)]).astype(np.int64)
        chosen = Columns(indptr, rows, weights, (lex.n_docs, len(ids)))
        return accumulate_scores(chosen, np.arange(len(ids), dtype=np.int64), lex.n_docs)


def section_index(index: "SearchContext") -> SectionIndex:
    """The index's `SectionIndex`, built on first use (kept until its records change)."""
    return index.memo("sections-bm25", len(index.corpus), lambda: SectionIndex(index))


def section_best(index: "SearchContext", query: str) -> np.ndarray:
    """Each record's best section BM25 over the collection: an index that scores its sections
    elsewhere (a sharded index: on its shards) answers by its `section_scores`."""
    elsewhere = getattr(index, "section_scores", None)
    if elsewhere is not None:
        return np.asarray(elsewhere(query), dtype=np.float64)
    return section_index(index).best(query)[0]


def section_mix(index: "SearchContext", query: str, mix: float) -> np.ndarray:
    """mix * BM25 / max + (1 - mix) * best section BM25 / max, over all records."""
    doc = index.lexical.bm25_scores(query)
    if mix >= 1.0:
        return doc
    best = section_best(index, query)
    out = np.zeros(len(doc))
    if doc.max() > 0:
        out += mix * doc / doc.max()
    if best.max() > 0:
        out += (1.0 - mix) * best / best.max()
    return out


@register("bm25-sections", "BM25 mixing each document's whole text with its best section (sections "
          "scored as passages over the collection): mix * doc/max + (1 - mix) * section/max", MIX,
          needs=(Capability.TERM_STATISTICS,))
def _bm25_sections(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(section_mix(index, query, float(params["mix"])), k, index.id_rank)


@register("hybrid-sections", "alpha * norm(bm25-sections) + (1 - alpha) * norm(cosine): hybrid-linear "
          "with the section-level BM25 as its lexical side", replace(MIX, default=0.75),
          *with_defaults(tuple(p for p in HYBRID_LINEAR_PARAMS if p.name in ("alpha", "norm", "dense_prf_docs",
                                                                             "dense_prf_weight")), alpha=0.3),
          needs=(Capability.TERM_STATISTICS, Capability.DENSE))
def _hybrid_sections(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    lex = section_mix(index, query, float(params["mix"]))
    cos = dense_scores(index, query, params)
    a = float(params["alpha"])
    fused = a * normalise(lex, params["norm"]) + (1.0 - a) * normalise(cos, params["norm"])
    return top_k(fused, k, index.id_rank, positive_only=False)
