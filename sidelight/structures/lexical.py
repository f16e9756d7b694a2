"""The lexical lane: a term-frequency matrix with exact BM25 and Carrier's TF-IDF cosine on top.

Raw term frequencies and document lengths are the stored truth; BM25 weights are derived from
them (O(nnz)), so adding or deleting records updates N, avgdl and df and stays exact.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..errors import IndexFormatError, InputError
from ..store.column import StringColumn, sorted_position, write_column
from ..text import Tokenizer, TokenizerConfig
from . import kernels as _kernels
from .kernels.pruned import CONTINUE as _CONTINUE
from .ranking import Ranking, select_top, top_k

VARIANTS = ("robertson", "lucene", "atire")
_CHUNK = 4096  # texts tokenized per step when building
_BLOCK = 1 << 20  # postings per step when deriving weights
_PRUNE_MIN_DOCS = 32768  # from this many records on, top-k BM25 prunes (MaxScore)
_DENSE_FRACTION = 4  # terms in at least 1/4 of the records also get a dense weight row
_MARGIN = 1e-9  # relative slack on every pruning comparison
_LOOKUPS_BEFORE_DICT = 256  # term lookups an opened index answers by binary search before it builds the dict
_SCRATCH = threading.local()  # reusable score buffers, one pair per thread
_ALNUM_BYTES = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))


@dataclass(frozen=True)
class BM25Params:
    """BM25 settings. Variants (named as in bm25s):

    - robertson: idf ln(1+(N-df+0.5)/(df+0.5)), tf part tf(k1+1)/(tf+k1(1-b+b dl/avgdl))  [Carrier]
    - lucene:    same idf, tf part tf/(tf+k1(1-b+b dl/avgdl))  (same ranking, scores /(k1+1))
    - atire:     idf ln(N/df), tf part as robertson
    """

    k1: float = 1.2
    b: float = 0.75
    variant: str = "robertson"

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InputError(f"unknown BM25 variant {self.variant!r}; choose one of {', '.join(VARIANTS)}")
        if not (self.k1 >= 0 and 0 <= self.b <= 1):
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Columns:
    """A CSC matrix as its three arrays (column t: the rows and weights of term t's postings), all
    the query kernels read: an opened index memory-maps them without importing scipy."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])


@dataclass(frozen=True)
class Collection:
    """The statistics BM25 and TF-IDF score with: the record count, the total length (avgdl is
    total / count) and the df of each of the index's terms. An index scores with its own; a shard
    scores with its whole collection's (`LexicalIndex(..., scope=...)`), so its scores are the
    unsharded index's."""

    n_docs: int
    total_len: float
    df: np.ndarray

    @property
    def avgdl(self) -> float:
        return self.total_len / self.n_docs if self.n_docs else 0.0


def bm25_idf(df: np.ndarray, n: int, variant: str) -> np.ndarray:
    """idf of document frequencies `df` among `n` records (see `BM25Params`); df 0 counts as 1."""
    df = np.maximum(df, 1.0)
    if variant == "atire":
        return np.log(n / df)
    return np.log1p((n - df + 0.5) / (df + 0.5))


def tfidf_idf(df: np.ndarray, n: int) -> np.ndarray:
    """Carrier's TF-IDF idf, ln((N+1)/(df+1)) + 1."""
    return np.log((n + 1.0) / (df + 1.0)) + 1.0


def _tfidf_parts(tf: sp.coo_matrix, df: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Unnormalised TF-IDF weights (1+ln tf)(idf) of the postings of `tf` and each row's L2 norm."""
    data = (1.0 + np.log(tf.data)) * tfidf_idf(df, n)[tf.col]
    return data, np.sqrt(np.bincount(tf.row, weights=data * data, minlength=tf.shape[0]))


def tfidf_norms(tf: sp.csr_matrix, df: np.ndarray, n: int) -> np.ndarray:
    """The L2 norm of every record's unnormalised TF-IDF vector (what `LexicalIndex.tfidf` divides by)."""
    return _tfidf_parts(tf.tocoo(), df, n)[1]


def bm25_norm(doc_len: np.ndarray, avgdl: float, p: BM25Params) -> np.ndarray:
    """k1 (1 - b + b dl/avgdl) of every record: the length part of BM25's denominator."""
    return p.k1 * (1.0 - p.b + p.b * doc_len / avgdl) if avgdl > 0 else np.full(len(doc_len), p.k1)


def weigh(tf: np.ndarray, q: np.ndarray, idf: np.ndarray, p: BM25Params) -> None:
    """BM25 weights of postings with counts `tf`, in place in `q` (which holds each posting's norm):
    tf/(tf+norm) * (k1+1) * idf. One sequence of float operations, whoever builds the index."""
    q += tf
    np.divide(tf, q, out=q)
    if p.variant != "lucene":
        q *= p.k1 + 1.0
    q *= idf


def write_vocab(folder: Path, vocab: list[str]) -> None:
    """The vocabulary as a byte-sorted string column plus the term id of each entry (`vocab_ids.npy`)."""
    order = sorted(range(len(vocab)), key=lambda i: vocab[i].encode("utf-8"))
    write_column(folder, "vocab", (vocab[i] for i in order))
    np.save(folder / "vocab_ids.npy", np.asarray(order, dtype=np.int64), allow_pickle=False)


def count_terms(texts: list[str], tokenizer_config: TokenizerConfig, progress=None) -> tuple[list[str], sp.csr_matrix]:
    """The vocabulary (terms in order of first appearance) and the term counts of `texts` (CSR, int32)."""
    vocab: dict[str, int] = {}
    tf = count_matrix(texts, Tokenizer(tokenizer_config), vocab, progress)
    return list(vocab), tf


def common_terms(df: np.ndarray, n_docs: int) -> np.ndarray:
    """Terms that get a dense weight row for pruning: those in at least 1/4 of the records, on large corpora."""
    if n_docs < _PRUNE_MIN_DOCS:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(df * _DENSE_FRACTION >= n_docs)


class LexicalIndex:
    """Documents as term counts (CSR, documents x terms) plus the vocabulary and tokenizer."""

    def __init__(self, tokenizer_config: TokenizerConfig, vocab: list[str], tf: sp.csr_matrix,
                 params: BM25Params = BM25Params(), scope: "Collection | None" = None):
        self.tokenizer_config = tokenizer_config
        self.tokenizer = Tokenizer(tokenizer_config)
        self.params = params
        self._vocab: list[str] | None = list(vocab)
        self._term_id: dict[str, int] | None = None
        self._sorted_vocab: tuple[StringColumn, np.ndarray] | None = None  # an opened index's vocabulary
        self._lookups = 0
        self._tf: sp.csr_matrix | None = tf.tocsr().astype(np.float64)
        self._tf_files: tuple[np.ndarray, ...] | None = None
        if scope is not None and len(scope.df) != len(self._vocab):
            raise ValueError(f"a scope of {len(scope.df)} terms for an index of {len(self._vocab)}")
        self.scope = scope  # the statistics it scores with; None: its own
        self._derive()

    # ---- building -------------------------------------------------------------------------
    @classmethod
    def build(cls, texts: list[str], tokenizer_config: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), progress=None) -> "LexicalIndex":
        """Tokenize `texts` (one per record, in corpus order) and count terms."""
        return cls(tokenizer_config, *count_terms(texts, tokenizer_config, progress), params)

    # ---- the vocabulary and the term counts (built in memory, or read from an opened index) -----
    @property
    def vocab(self) -> list[str]:
        """Terms in term-id order (an opened index decodes them on first use)."""
        if self._vocab is None:
            terms, ids = self._opened_vocab()
            vocab = [""] * len(ids)
            for t, i in zip(terms.tolist(), ids.tolist()):
                vocab[i] = t
            self._vocab = vocab
        return self._vocab

    @property
    def n_terms(self) -> int:
        return len(self._vocab) if self._vocab is not None else len(self._opened_vocab()[1])

    def _opened_vocab(self) -> tuple[StringColumn, np.ndarray]:
        """An opened index's sorted vocabulary (one of it and `_vocab` is always there)."""
        if self._sorted_vocab is None:
            raise RuntimeError("lexical index: neither a vocabulary nor an opened one")
        return self._sorted_vocab

    @property
    def term_id(self) -> dict[str, int]:
        """Term -> term id (built on first use; queries look terms up without it)."""
        if self._term_id is None:
            self._term_id = {t: i for i, t in enumerate(self.vocab)}
        return self._term_id

    def find_term(self, term: str) -> int | None:
        """The id of `term`, or None: a dict lookup, or (in an opened index, for its first lookups, so
        that a one-off query does not wait for a dict of the whole vocabulary) a binary search in
        its sorted vocabulary."""
        if self._term_id is not None or self._sorted_vocab is None:
            return self.term_id.get(term)
        self._lookups += 1
        if self._lookups > _LOOKUPS_BEFORE_DICT:  # a process that asks this often gets the dict
            return self.term_id.get(term)
        terms, ids = self._sorted_vocab
        at = sorted_position(terms, term.encode("utf-8"))
        return int(ids[at]) if at >= 0 else None

    def _count_files(self) -> tuple[np.ndarray, ...]:
        """An opened index's stored term counts (data, indices, indptr), read before any change."""
        if self._tf_files is None:
            raise RuntimeError("lexical index: neither term counts nor their files")
        return self._tf_files

    @property
    def tf(self) -> sp.csr_matrix:
        """Raw term counts (CSR, float64), the stored truth; an opened index converts them on first use."""
        if self._tf is None:
            data, indices, indptr = self._count_files()
            import scipy.sparse as sp
            self._tf = sp.csr_matrix((data.astype(np.float64), indices, indptr), shape=(self.n_docs, self.n_terms))
        return self._tf

    # ---- saving and loading -----------------------------------------------------------------
    def save(self, folder: Path) -> dict:
        """Term counts (the truth), the BM25 weights and pruning bounds derived from them, and the
        vocabulary as a sorted string column, so that opening memory-maps and computes nothing."""
        folder.mkdir()
        w = self.bm25
        if self._tf is None:  # an opened, unchanged index: its count files as they are
            tf_data, tf_indices, tf_indptr = self._count_files()
        else:
            tf_data, tf_indices, tf_indptr = self._tf.data.astype(np.int32), self._tf.indices, self._tf.indptr
        arrays = {"tf_data": tf_data, "tf_indices": tf_indices, "tf_indptr": tf_indptr,
                  "bm25_data": w.data, "bm25_indices": w.indices, "bm25_indptr": w.indptr,
                  "doc_len": self.doc_len, "df": self.df, "ub": self._ub, "dense_row": self._dense_row,
                  "dense": self._dense}
        for name, array in arrays.items():
            np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        write_vocab(folder, self.vocab)
        meta = {"tokenizer": self.tokenizer_config.to_dict(), "bm25": self.params.to_dict(), "terms": self.n_terms}
        if self.scope is not None:  # df.npy holds the collection's df of these terms
            meta["collection"] = {"records": self.scope.n_docs, "total_length": self.scope.total_len}
        return meta

    @classmethod
    def load(cls, folder: Path, meta: dict, n_docs: int) -> "LexicalIndex":
        """The index `save` wrote, memory-mapped, checked against `n_docs` records."""
        self = cls.__new__(cls)
        self.tokenizer_config = TokenizerConfig.from_dict(meta["tokenizer"])
        self.tokenizer = Tokenizer(self.tokenizer_config)
        self.params = BM25Params(**meta["bm25"])
        try:
            a = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                 for name in ("tf_data", "tf_indices", "tf_indptr", "bm25_data", "bm25_indices", "bm25_indptr",
                              "doc_len", "df", "ub", "dense_row", "dense", "vocab_ids")}
            self._sorted_vocab = (StringColumn(folder, "vocab"), a["vocab_ids"])
            self._lookups = 0
            n_terms = len(a["vocab_ids"])
            self._vocab = self._term_id = self._tf = self._tfidf = None
            self._tf_files = (a["tf_data"], a["tf_indices"], a["tf_indptr"])
            self.n_docs = n_docs
            self.doc_len, self.df, self._ub, self._dense_row, self._dense = (
                a["doc_len"], a["df"], a["ub"], a["dense_row"], a["dense"])
            c = meta.get("collection")
            scope = Collection(int(c["records"]), float(c["total_length"]), self.df) if c else None
            self.scope = scope
            self.n_scored = scope.n_docs if scope is not None else n_docs
            self.avgdl = scope.avgdl if scope is not None else float(self.doc_len.mean()) if n_docs else 0.0
            self.bm25 = Columns(a["bm25_indptr"], a["bm25_indices"], a["bm25_data"], (n_docs, n_terms))
            if (len(self.doc_len) != n_docs or len(self.df) != n_terms or len(a["tf_indptr"]) != n_docs + 1
                    or len(self._sorted_vocab[0]) != n_terms or meta.get("terms", n_terms) != n_terms):
                raise ValueError(f"arrays do not fit {n_docs} records and {n_terms} terms")
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{folder}: cannot read the lexical index ({exc})") from exc
        return self

    def add(self, texts: list[str]) -> None:
        """Append documents; vocabulary grows, global statistics are recomputed exactly (and a
        collection scope is dropped: it no longer fits)."""
        self.scope = None
        vocab = dict(self.term_id)
        new = count_matrix(texts, self.tokenizer, vocab, None)
        old = self.tf.copy()
        old.resize((old.shape[0], len(vocab)))
        self._vocab, self._term_id, self._sorted_vocab = list(vocab), vocab, None
        import scipy.sparse as sp
        self._tf = sp.vstack([old, new.astype(np.float64)], format="csr")
        self._derive()

    def delete(self, positions: np.ndarray) -> None:
        """Remove documents by position; terms that no longer occur stay in the vocabulary with df 0."""
        keep = np.ones(self.tf.shape[0], dtype=bool)
        keep[positions] = False
        self.scope = None
        self._vocab, self._sorted_vocab = self.vocab, None
        self._tf = self.tf[keep]
        self._derive()

    # ---- derived statistics -----------------------------------------------------------------
    def _derive(self) -> None:
        tf = self.tf
        self.n_docs = tf.shape[0]
        self.doc_len = np.asarray(tf.sum(axis=1)).ravel()
        if self.scope is None:
            self.n_scored = self.n_docs  # the N of idf: this index's records, or its collection's
            self.avgdl = float(self.doc_len.mean()) if self.n_docs else 0.0
            self.df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        else:
            self.n_scored, self.avgdl, self.df = self.scope.n_docs, self.scope.avgdl, self.scope.df
        self.bm25 = self._bm25_weights()  # CSC: column t holds the weights of term t
        self._tfidf = None  # built on first use: most lanes never need it

    def idf(self, terms: np.ndarray | None = None) -> np.ndarray:
        """The BM25 variant's idf of term ids `terms` (all terms when None)."""
        return bm25_idf(self.df if terms is None else self.df[terms], self.n_scored, self.params.variant)

    def _bm25_weights(self) -> Columns:
        p = self.params
        tf = self.tf  # CSR: weights are computed in row order, then transposed (rows stay sorted)
        idf = self.idf()
        norm = bm25_norm(self.doc_len, self.avgdl, p)
        part = np.repeat(norm, np.diff(tf.indptr))
        for lo in range(0, len(part), _BLOCK):  # in bounded blocks
            weigh(tf.data[lo:lo + _BLOCK], part[lo:lo + _BLOCK], idf[tf.indices[lo:lo + _BLOCK]], p)
        import scipy.sparse as sp
        w = sp.csr_matrix((part, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        del part
        w.sort_indices()
        self._prepare_pruning(w)
        return Columns(w.indptr, w.indices, w.data, w.shape)

    def _prepare_pruning(self, w: Columns | sp.csc_matrix) -> None:
        """Per-term upper bounds (max weight) and dense copies of the most common terms' columns,
        for exact top-k with MaxScore-style pruning on large corpora."""
        df = np.diff(w.indptr)
        self._ub = np.zeros(len(df))
        nz = df > 0
        if nz.any():
            self._ub[nz] = np.maximum.reduceat(w.data, w.indptr[:-1][nz])
        common = common_terms(df, self.n_docs)
        self._dense_row = np.full(len(df), -1, dtype=np.int64)
        self._dense_row[common] = np.arange(len(common))
        self._dense = np.zeros((len(common), self.n_docs))
        for r, t in enumerate(common):
            lo, hi = w.indptr[t], w.indptr[t + 1]
            self._dense[r, w.indices[lo:hi]] = w.data[lo:hi]

    @property
    def tfidf(self) -> sp.csc_matrix:
        """Carrier's TF-IDF weights, (1+ln tf)(ln((N+1)/(df+1))+1), rows L2-normalised (cosine)."""
        if self._tfidf is None:
            self._tfidf = self._tfidf_weights()
        return self._tfidf

    def _tfidf_weights(self) -> sp.csc_matrix:
        tf = self.tf.tocoo()
        data, norms = _tfidf_parts(tf, self.df, self.n_scored)
        data = data / np.where(norms > 0, norms, 1.0)[tf.row]
        import scipy.sparse as sp
        w = sp.csc_matrix((data, (tf.row, tf.col)), shape=tf.shape)
        w.sort_indices()
        return w

    # ---- scoring ------------------------------------------------------------------------------
    def query_terms(self, query: str) -> np.ndarray:
        """Distinct known term ids of a query: repeated terms count once, unknown terms drop out."""
        if not query or not query.strip():
            raise InputError("empty query")
        find = self._term_id.get if self._term_id is not None else self.find_term
        ids = [i for i in map(find, dict.fromkeys(self.tokenizer(query))) if i is not None]
        return np.asarray(ids, dtype=np.int64)

    def bm25_scores(self, query: str) -> np.ndarray:
        """The full BM25 score vector over record positions (zero where no query term occurs)."""
        return accumulate_scores(self.bm25, self.query_terms(query), self.n_docs)

    def tfidf_scores(self, query: str) -> np.ndarray:
        """Cosine between the query's TF-IDF vector (each distinct term has tf 1) and every record."""
        terms = self.query_terms(query)
        return self.weighted("tfidf", terms, self.tfidf_factors(terms))

    def tfidf_factors(self, terms: np.ndarray) -> np.ndarray:
        """The query's unit TF-IDF vector over `terms` (each distinct term has tf 1)."""
        q = tfidf_idf(self.df[terms], self.n_scored)
        qnorm = float(np.sqrt(np.sum(q * q)))
        return q / qnorm if qnorm > 0 else q

    def weighted(self, kind: str, terms: np.ndarray, factors: np.ndarray | None = None) -> np.ndarray:
        """Score vector summing the `kind` ("bm25" or "tfidf") weight columns of `terms`, in their order."""
        return accumulate_scores(self.bm25 if kind == "bm25" else self.tfidf, terms, self.n_docs, factors)

    def bm25_top(self, query: str, k: int | None, id_rank: np.ndarray) -> Ranking:
        """Top-k BM25, positive scores only, ties by ascending id."""
        return self.bm25_top_terms(self.query_terms(query), k, id_rank)

    def bm25_top_terms(self, terms: np.ndarray, k: int | None, id_rank: np.ndarray) -> Ranking:
        """`bm25_top` of distinct term ids `terms` (in query order)."""
        if _kernels.use():  # compiled (numba): same scores, ranking and errors
            w = self.bm25
            if k is not None and k > 0 and self.n_docs >= _PRUNE_MIN_DOCS and len(terms):
                return _kernels.bm25_top_pruned(w.indptr, w.indices, w.data, terms, self.n_docs, k, id_rank,
                                                self._ub, self._dense_row, self._dense, _MARGIN)
            return _kernels.bm25_top(w.indptr, w.indices, w.data, terms, self.n_docs, k, id_rank)
        if k is not None and k > 0 and self.n_docs >= _PRUNE_MIN_DOCS and len(terms):
            return self._bm25_top_pruned(terms, k, id_rank)
        scores = accumulate_scores(self.bm25, terms, self.n_docs)
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
        ub = self._ub[terms]
        order = np.argsort(-ub, kind="stable")
        ranked = terms[order].tolist()
        rest = np.cumsum(ub[order][::-1])[::-1]  # rest[j]: bounds of the terms after j
        rest = (np.append(rest[1:], 0.0) * (1.0 + _MARGIN)).tolist()
        dense_row, dense = self._dense_row, self._dense
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
        r = self._dense_row[t]
        if r >= 0:
            return self._dense[r][cand]
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


COMPILE_FROM = 2000  # texts counted at once from which the compiled counter pays for loading numba


class RawTerms:
    """Raw tokens seen so far (in order of first appearance) and the term id of each (-1 when the
    tokenizer drops it): the state `count_matrix` keeps across calls, so a build in blocks sends each
    distinct raw token through the tokenizer once, not once per block."""

    def __init__(self, compile: bool = True) -> None:
        # the same raw ids, compiled: worth loading numba (about a second) for a build, not for a few texts
        self.compiled = _kernels.RawTokens() if (compile or _kernels.use()) and _kernels.enabled() else None
        self.raw: dict[bytes, int] = {}  # raw token -> raw id (numpy path)
        self.term_of_raw = np.zeros(0, dtype=np.int32)


def count_matrix(texts: list[str], tokenizer: Tokenizer, vocab: dict[str, int], progress,
           seen: RawTerms | None = None) -> sp.csr_matrix:
    """Term counts of `texts` as CSR (int32 counts), growing `vocab` in order of first appearance.

    Same terms, order and counts as calling the tokenizer text by text, but faster: a text is
    lowercased, UTF-8 encoded and every byte outside [a-z0-9] becomes a space (non-ASCII
    characters never match `[a-z0-9]+`), so `bytes.split` yields exactly the raw tokens; each
    distinct raw token goes through the tokenizer once (stop words, minimum length, stemming),
    and counting is vectorised per chunk of texts. With numba, splitting and raw ids are one
    compiled pass (`kernels.count`): the same raw ids, so the same vocabulary and counts. Calls
    that share `vocab` (blocks of one build) share `seen` too.
    """
    import scipy.sparse as sp

    seen = RawTerms(len(texts) >= COMPILE_FROM) if seen is None else seen
    compiled, raw, term_of_raw = seen.compiled, seen.raw, seen.term_of_raw
    chain = itertools.chain.from_iterable
    data_parts, index_parts, counts_parts = [], [], []
    for start in range(0, len(texts), _CHUNK):
        chunk = texts[start:start + _CHUNK]
        n_raw = len(term_of_raw)
        if compiled is not None:
            ids, lengths = compiled(chunk)
            new_raw = compiled.keys(n_raw, compiled.n_keys)
        else:
            tokens = [t.lower().encode().translate(_ALNUM_BYTES).split() for t in chunk]
            lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
            for t in dict.fromkeys(chain(tokens)):
                if t not in raw:
                    raw[t] = len(raw)
            ids = np.fromiter(map(raw.__getitem__, chain(tokens)), dtype=np.int32, count=int(lengths.sum()))
            del tokens
            new_raw = [t.decode("ascii") for t in itertools.islice(raw, n_raw, None)]
        if new_raw:  # each new raw token's term id (new terms in order of appearance), -1 if dropped
            new = [-1 if t is None else vocab.setdefault(t, len(vocab)) for t in tokenizer.terms_of_words(new_raw)]
            term_of_raw = seen.term_of_raw = np.concatenate([term_of_raw, np.asarray(new, dtype=np.int32)])
        ids = term_of_raw[ids]
        if compiled is not None:
            row_counts, indices, data = _kernels.count_rows(ids, lengths)
        else:
            keep = ids >= 0
            if not keep.all():
                lengths = np.bincount(np.repeat(np.arange(len(chunk)), lengths)[keep], minlength=len(chunk))
                ids = ids[keep]
            indptr = np.zeros(len(chunk) + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            m = sp.csr_matrix((np.ones(len(ids), dtype=np.int32), ids, indptr),
                              shape=(len(chunk), max(len(vocab), 1)))
            m.sum_duplicates()  # sorts each row's terms and adds up repeats
            row_counts, indices, data = np.diff(m.indptr), m.indices.astype(np.int32, copy=False), m.data
        data_parts.append(data)
        index_parts.append(indices)
        counts_parts.append(row_counts)
        if progress is not None:
            progress(len(chunk))
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    if counts_parts:
        np.cumsum(np.concatenate(counts_parts), out=indptr[1:])
    data = np.concatenate(data_parts) if data_parts else np.zeros(0, dtype=np.int32)
    data_parts.clear()
    indices = np.concatenate(index_parts) if index_parts else np.zeros(0, dtype=np.int32)
    index_parts.clear()
    return sp.csr_matrix((data, indices, indptr), shape=(len(texts), len(vocab)))
