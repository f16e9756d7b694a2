"""Lexical scoring: BM25 and Carrier's TF-IDF cosine over the arrays of a `LexicalStore`.

`TermScorer` is what every lexical scorer offers methods (tokenizing, term lookup, idf, the TF-IDF
query vector, BM25 and TF-IDF score vectors and top-k): `LexicalIndex` scores the arrays it holds
(and adds, deletes and saves them); a sharded index's fan-out (`index.sharded.FanoutLexical`) asks
its shards. The term matrices themselves are `store`, held by an index in one piece only.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..capabilities import UnsupportedError
from ..errors import InputError
from ..text import Tokenizer, TokenizerConfig
from . import kernels as _kernels
from .kernels.pruned import CONTINUE as _CONTINUE
from .lexical_store import (PRUNE_MIN_DOCS, BM25Params, Collection, Columns, LexicalStore, Vocabulary,
                            tfidf_idf, bm25_idf)
from .ranking import Ranking, select_top, top_k
from .term_counts import count_matrix, count_terms

_MARGIN = 1e-9  # relative slack on every pruning comparison
_SCRATCH = threading.local()  # reusable score buffers, one pair per thread


class TermScorer(ABC):
    """The query side of lexical scoring, from the vocabulary and the statistics it scores with (the
    collection's): subclasses set these attributes and give `weighted` and `bm25_top_terms`."""

    tokenizer_config: TokenizerConfig
    tokenizer: Tokenizer
    params: BM25Params
    vocabulary: Vocabulary
    df: np.ndarray  # the df of each term it scores with
    n_docs: int  # records scored (positions of the score vectors)
    n_scored: int  # the N of idf
    avgdl: float
    store: LexicalStore | None  # the term counts and weight matrices, when held here

    @abstractmethod
    def weighted(self, kind: str, terms: np.ndarray, factors: np.ndarray | None = None) -> np.ndarray:
        """Score vector summing the `kind` ("bm25" or "tfidf") weight columns of `terms`, in their order."""

    @abstractmethod
    def bm25_top_terms(self, terms: np.ndarray, k: int | None, id_rank: np.ndarray) -> Ranking:
        """Top-k BM25 of distinct term ids `terms` (in query order), positive scores only, ties by id."""

    @property
    def vocab(self) -> list[str]:
        """Terms in term-id order."""
        return self.vocabulary.terms

    @property
    def n_terms(self) -> int:
        return len(self.vocabulary)

    @property
    def term_id(self) -> dict[str, int]:
        """Term -> term id (built on first use; queries look terms up without it)."""
        return self.vocabulary.term_id

    def find_term(self, term: str) -> int | None:
        """The id of `term`, or None (see `Vocabulary.find`)."""
        return self.vocabulary.find(term)

    def idf(self, terms: np.ndarray | None = None) -> np.ndarray:
        """The BM25 variant's idf of term ids `terms` (all terms when None)."""
        return bm25_idf(self.df if terms is None else self.df[terms], self.n_scored, self.params.variant)

    def query_terms(self, query: str) -> np.ndarray:
        """Distinct known term ids of a query: repeated terms count once, unknown terms drop out."""
        if not query or not query.strip():
            raise InputError("empty query")
        ids = [i for i in map(self.vocabulary.find, dict.fromkeys(self.tokenizer(query))) if i is not None]
        return np.asarray(ids, dtype=np.int64)

    def bm25_scores(self, query: str) -> np.ndarray:
        """The full BM25 score vector over record positions (zero where no query term occurs)."""
        return self.weighted("bm25", self.query_terms(query))

    def tfidf_scores(self, query: str) -> np.ndarray:
        """Cosine between the query's TF-IDF vector (each distinct term has tf 1) and every record."""
        terms = self.query_terms(query)
        return self.weighted("tfidf", terms, self.tfidf_factors(terms))

    def tfidf_factors(self, terms: np.ndarray) -> np.ndarray:
        """The query's unit TF-IDF vector over `terms` (each distinct term has tf 1)."""
        q = tfidf_idf(self.df[terms], self.n_scored)
        qnorm = float(np.sqrt(np.sum(q * q)))
        return q / qnorm if qnorm > 0 else q

    def bm25_top(self, query: str, k: int | None, id_rank: np.ndarray) -> Ranking:
        """Top-k BM25, positive scores only, ties by ascending id."""
        return self.bm25_top_terms(self.query_terms(query), k, id_rank)


def term_matrices(scorer: TermScorer) -> LexicalStore:
    """The term counts and weight matrices of `scorer`. A method that reads them declares
    `Capability.TERM_MATRICES`, so a backend without them was refused before it got here."""
    if scorer.store is None:
        raise UnsupportedError("the term-count and weight matrices are not held here (a sharded index keeps "
                               "them on its shards)")
    return scorer.store


class LexicalIndex(TermScorer):
    """Scores the arrays of one `LexicalStore`; adding or deleting records derives a new one."""

    def __init__(self, store: LexicalStore):
        self.tokenizer_config, self.params = store.tokenizer_config, store.params
        self.tokenizer = Tokenizer(store.tokenizer_config)
        self._hold(store)

    def _hold(self, store: LexicalStore) -> None:
        self.store: LexicalStore = store
        self.vocabulary, self.df, self.n_docs = store.vocabulary, store.df, store.n_docs
        self.n_scored, self.avgdl = store.n_scored, store.avgdl

    @classmethod
    def from_counts(cls, tokenizer_config: TokenizerConfig, vocab: list[str], tf: sp.csr_matrix,
                    params: BM25Params = BM25Params(), scope: Collection | None = None) -> "LexicalIndex":
        """The index of term counts `tf` (documents x terms) over `vocab`, scored with `scope` (None: its own)."""
        return cls(LexicalStore.derive(tokenizer_config, Vocabulary(list(vocab)), tf, params, scope))

    @classmethod
    def build(cls, texts: list[str], tokenizer_config: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), progress: Any = None) -> "LexicalIndex":
        """Tokenize `texts` (one per record, in corpus order) and count terms."""
        return cls.from_counts(tokenizer_config, *count_terms(texts, tokenizer_config, progress), params)

    @classmethod
    def load(cls, folder: Path, meta: dict[str, Any], n_docs: int) -> "LexicalIndex":
        """The index `save` wrote, memory-mapped, checked against `n_docs` records."""
        return cls(LexicalStore.load(folder, meta, n_docs))

    def save(self, folder: Path) -> dict[str, Any]:
        """Its store's files (see `LexicalStore.save`); returns what the manifest says of them."""
        return self.store.save(folder)

    # ---- the arrays (see `LexicalStore`) --------------------------------------------------------
    @property
    def tf(self) -> sp.csr_matrix:
        return self.store.tf

    @property
    def bm25(self) -> Columns:
        return self.store.bm25

    @property
    def tfidf(self) -> sp.csc_matrix:
        return self.store.tfidf

    @property
    def doc_len(self) -> np.ndarray:
        return self.store.doc_len

    @property
    def scope(self) -> Collection | None:
        return self.store.scope

    # ---- adding and deleting --------------------------------------------------------------------
    def add(self, texts: list[str]) -> None:
        """Append documents; vocabulary grows, global statistics are recomputed exactly (and a
        collection scope is dropped: it no longer fits)."""
        vocab = dict(self.term_id)
        new = count_matrix(texts, self.tokenizer, vocab, None)
        old = self.tf.copy()
        old.resize((old.shape[0], len(vocab)))
        import scipy.sparse as sp

        tf = sp.vstack([old, new.astype(np.float64)], format="csr")
        self._hold(LexicalStore.derive(self.tokenizer_config, Vocabulary(list(vocab)), tf, self.params))

    def delete(self, positions: np.ndarray) -> None:
        """Remove documents by position; terms that no longer occur stay in the vocabulary with df 0."""
        keep = np.ones(self.n_docs, dtype=bool)
        keep[positions] = False
        self._hold(LexicalStore.derive(self.tokenizer_config, Vocabulary(self.vocab), self.tf[keep], self.params))

    # ---- scoring ----------------------------------------------------------------------------------
    def weighted(self, kind: str, terms: np.ndarray, factors: np.ndarray | None = None) -> np.ndarray:
        """Score vector summing the `kind` ("bm25" or "tfidf") weight columns of `terms`, in their order."""
        return accumulate_scores(self.bm25 if kind == "bm25" else self.tfidf, terms, self.n_docs, factors)

    def bm25_top_terms(self, terms: np.ndarray, k: int | None, id_rank: np.ndarray) -> Ranking:
        """`bm25_top` of distinct term ids `terms` (in query order)."""
        s = self.store
        if _kernels.use():  # compiled (numba): same scores, ranking and errors
            w = s.bm25
            if k is not None and k > 0 and self.n_docs >= PRUNE_MIN_DOCS and len(terms):
                return _kernels.bm25_top_pruned(w.indptr, w.indices, w.data, terms, self.n_docs, k, id_rank,
                                                s.ub, s.dense_row, s.dense, _MARGIN)
            return _kernels.bm25_top(w.indptr, w.indices, w.data, terms, self.n_docs, k, id_rank)
        if k is not None and k > 0 and self.n_docs >= PRUNE_MIN_DOCS and len(terms):
            return self._bm25_top_pruned(terms, k, id_rank)
        scores = accumulate_scores(s.bm25, terms, self.n_docs)
        return top_k(scores, k, id_rank)

    # ---- exact top-k with pruning (large corpora) ------------------------------------------
    def _bm25_top_pruned(self, terms: np.ndarray, k: int, id_rank: np.ndarray) -> Ranking:
        """The same ranking as `top_k(bm25_scores)`, without scoring every posting.

        MaxScore: terms go in order of falling upper bound (their largest weight), and their
        postings are added up until k records of the last one have a partial sum above `rest`,
        what the terms still to come could add. That bound is then `theta`, a lower bound on the
        k-th best score, and a record none of these terms touched cannot reach the top k. The
        next terms with few postings (at most `CONTINUE` times those read so far) are added only
        to records that already have a partial sum (Moffat & Zobel's "continue" rule). The
        survivors collect the remaining terms by lookup, dropping out as soon as partial sum plus
        remaining bounds falls below `theta`, which rises to the k-th best partial sum. The last
        few are scored exactly as `accumulate_scores` does (same terms, same order, same float
        additions), so scores and ties are bit-identical. Margins of 1e-9 relative keep every
        comparison on the safe side of rounding; weights are never negative, so a partial sum of
        0.0 means untouched.
        """
        w, n = self.bm25, self.n_docs
        indptr, indices, data = w.indptr, w.indices, w.data
        bufs: tuple[np.ndarray, np.ndarray] | None = getattr(_SCRATCH, "bufs", None)
        if bufs is None or len(bufs[0]) != n:  # per thread; both all zero between queries
            bufs = _SCRATCH.bufs = np.zeros(n), np.zeros(n)
        acc, buf = bufs
        ub = self.store.ub[terms]
        order = np.argsort(-ub, kind="stable")
        ranked = terms[order].tolist()
        rest = np.cumsum(ub[order][::-1])[::-1]  # rest[j]: bounds of the terms after j
        rest = (np.append(rest[1:], 0.0) * (1.0 + _MARGIN)).tolist()
        dense_row, dense = self.store.dense_row, self.store.dense
        upto = np.cumsum(ub[order]).tolist()  # upto[j]: bounds of the terms up to j
        low = 1.0 - _MARGIN
        theta, last, read = 0.0, len(ranked) - 1, 0
        try:
            for j, t in enumerate(ranked):
                r, lo, hi = dense_row[t], indptr[t], indptr[t + 1]
                if r >= 0:
                    np.add(acc, dense[r], out=acc)
                else:
                    acc[indices[lo:hi]] += data[lo:hi]
                read += hi - lo
                if hi - lo >= k and j < last and rest[j] < upto[j] * low:
                    cut = rest[j] / low
                    if np.count_nonzero(acc[indices[lo:hi]] > cut) >= k:
                        theta, last = cut, j
                        break
            while last + 1 < len(ranked) and dense_row[ranked[last + 1]] < 0:  # 1b (see the docstring)
                lo, hi = indptr[ranked[last + 1]], indptr[ranked[last + 1] + 1]
                if hi - lo > _CONTINUE * read:
                    break
                ix = indices[lo:hi]
                part = acc[ix]
                acc[ix] = part + data[lo:hi] * (part != 0.0)
                last += 1
            cand = np.flatnonzero(acc > 0)
            part = acc[cand]
        finally:
            acc.fill(0.0)
        if len(cand) >= k:  # the k-th best partial sum is a lower bound too
            theta = max(theta, float(np.partition(part, len(part) - k)[len(part) - k]))
        keep = part >= theta * low - rest[last]
        cand, part = cand[keep], part[keep]
        for j in range(last + 1, len(ranked)):
            part += self._lookup(ranked[j], cand, buf)
            if len(cand) > k:
                theta = max(theta, float(np.partition(part, len(part) - k)[len(part) - k]))
            keep = part >= theta * low - rest[j]
            cand, part = cand[keep], part[keep]
        if len(cand) > k:  # near-ties of the k-th partial sum stay for the exact sums
            kth = np.partition(part, len(part) - k)[len(part) - k]
            cand = cand[part >= kth * low]
        scores = np.zeros(len(cand))
        for t in terms.tolist():  # query order, as in accumulate_scores
            scores += self._lookup(t, cand, buf)
        positive = scores > 0
        return select_top(cand[positive], scores[positive], k, id_rank)

    def _lookup(self, t: int, cand: np.ndarray, buf: np.ndarray) -> np.ndarray:
        """BM25 weights of term `t` at sorted positions `cand` (0 where it does not occur)."""
        r = self.store.dense_row[t]
        if r >= 0:
            return self.store.dense[r][cand]
        w = self.bm25
        lo, hi = w.indptr[t], w.indptr[t + 1]
        if hi == lo:
            return np.zeros(len(cand))
        if len(cand) * 16 < hi - lo:
            seg = w.indices[lo:hi]
            pos = np.searchsorted(seg, cand)
            np.minimum(pos, hi - lo - 1, out=pos)
            return np.where(seg[pos] == cand, w.data[lo:hi][pos], 0.0)
        ix = w.indices[lo:hi]
        buf[ix] = w.data[lo:hi]
        out = buf[cand]
        buf[ix] = 0.0
        return out


def accumulate_scores(weights: Columns | sp.csc_matrix, terms: np.ndarray, n: int,
                factors: np.ndarray | None = None) -> np.ndarray:
    """Sum the weight columns of `terms` (times `factors`); a column's row indices are unique.

    The postings of all terms are gathered in query order and summed by `np.bincount`, which
    adds them one by one in that order from 0.0: the same sums as adding column by column.
    """
    indptr, indices, data = weights.indptr, weights.indices, weights.data
    terms = np.asarray(terms, dtype=np.int64)
    if _kernels.use() and data.dtype == np.float64:  # the same additions in the same order
        return _kernels.accumulate(indptr, indices, data, terms, n, factors)
    if len(terms) == 0:
        return np.zeros(n, dtype=np.float64)
    lo, hi = indptr[terms], indptr[terms + 1]
    lens = hi - lo
    if len(terms) == 1:
        pos = slice(lo[0], hi[0])
    else:
        ends = np.cumsum(lens)
        pos = np.arange(ends[-1]) + np.repeat(lo - ends + lens, lens)
    w = data[pos]
    if factors is not None:
        w = w * np.repeat(np.asarray(factors, dtype=np.float64), lens)
    return np.bincount(indices[pos], weights=w, minlength=n).astype(np.float64, copy=False)

