"""The lexical index's storage: term counts, the BM25 weights derived from them, and the files both
are saved in (`LexicalStore`), apart from scoring (`structures.lexical`).

Raw term frequencies and document lengths are the stored truth; BM25 weights are derived from
them (O(nnz)), so adding or deleting records derives a new store with exact N, avgdl and df. A
store is made one way, by its constructor: `derive` computes the arrays of term counts and calls
it, `load` memory-maps the arrays `save` wrote and calls it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..errors import IndexFormatError, InputError
from ..store.column import StringColumn, sorted_position, write_column
from ..text import TokenizerConfig

VARIANTS = ("robertson", "lucene", "atire")
_BLOCK = 1 << 20  # postings per step when deriving weights
PRUNE_MIN_DOCS = 32768  # from this many records on, top-k BM25 prunes (MaxScore)
_DENSE_FRACTION = 4  # terms in at least 1/4 of the records also get a dense weight row
_LOOKUPS_BEFORE_DICT = 256  # term lookups an opened index answers by binary search before it builds the dict
ARRAYS = ("tf_data", "tf_indices", "tf_indptr", "bm25_data", "bm25_indices", "bm25_indptr",
          "doc_len", "df", "ub", "dense_row", "dense")  # the files `save` writes, besides the vocabulary


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
    scores with its whole collection's (`LexicalStore.derive(..., scope=...)`), so its scores are
    the unsharded index's."""

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
    """The L2 norm of every record's unnormalised TF-IDF vector (what `LexicalStore.tfidf` divides by)."""
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


def common_terms(df: np.ndarray, n_docs: int) -> np.ndarray:
    """Terms that get a dense weight row for pruning: those in at least 1/4 of the records, on large corpora."""
    if n_docs < PRUNE_MIN_DOCS:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(df * _DENSE_FRACTION >= n_docs)


def pruning_bounds(w: Columns, n_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(upper bound of each term's weights, the dense row of each term or -1, the dense rows): what
    exact top-k with MaxScore-style pruning reads on large corpora."""
    df = np.diff(w.indptr)
    ub = np.zeros(len(df))
    nz = df > 0
    if nz.any():
        ub[nz] = np.maximum.reduceat(w.data, w.indptr[:-1][nz])
    common = common_terms(df, n_docs)
    dense_row = np.full(len(df), -1, dtype=np.int64)
    dense_row[common] = np.arange(len(common))
    dense = np.zeros((len(common), n_docs))
    for r, t in enumerate(common):
        lo, hi = w.indptr[t], w.indptr[t + 1]
        dense[r, w.indices[lo:hi]] = w.data[lo:hi]
    return ub, dense_row, dense


class Vocabulary:
    """Terms by id: a list (built in memory) or a byte-sorted string column with the term id of each
    entry (opened, memory-mapped: decoded only when the whole list is asked for)."""

    def __init__(self, terms: list[str] | None = None, column: StringColumn | None = None,
                 ids: np.ndarray | None = None):
        if (terms is None) == (column is None or ids is None):
            raise ValueError("a vocabulary is a list of terms or a sorted column with term ids")
        self._terms, self._column, self._ids = terms, column, ids
        self._term_id: dict[str, int] | None = None
        self._lookups = 0

    def __len__(self) -> int:
        if self._terms is not None:
            return len(self._terms)
        return 0 if self._ids is None else len(self._ids)

    @property
    def terms(self) -> list[str]:
        """Terms in term-id order (an opened vocabulary decodes them on first use)."""
        if self._terms is None:
            assert self._column is not None and self._ids is not None
            terms = [""] * len(self._ids)
            for t, i in zip(self._column.tolist(), self._ids.tolist()):
                terms[i] = t
            self._terms = terms
        return self._terms

    @property
    def term_id(self) -> dict[str, int]:
        """Term -> term id (built on first use; queries look terms up without it)."""
        if self._term_id is None:
            self._term_id = {t: i for i, t in enumerate(self.terms)}
        return self._term_id

    def find(self, term: str) -> int | None:
        """The id of `term`, or None: a dict lookup, or (opened, for its first lookups, so that a
        one-off query does not wait for a dict of the whole vocabulary) a binary search."""
        if self._term_id is not None or self._column is None or self._ids is None:
            return self.term_id.get(term)
        self._lookups += 1
        if self._lookups > _LOOKUPS_BEFORE_DICT:  # a process that asks this often gets the dict
            return self.term_id.get(term)
        at = sorted_position(self._column, term.encode("utf-8"))
        return int(self._ids[at]) if at >= 0 else None

    def words(self, ids: np.ndarray) -> list[str]:
        """The terms of term ids `ids` (a sorted column whose ids are its positions reads them there)."""
        if self._terms is None and self._column is not None and self._ids is not None and self.sorted_ids:
            return [self._column[int(t)] for t in ids]
        terms = self.terms
        return [terms[int(t)] for t in ids]

    @cached_property
    def sorted_ids(self) -> bool:
        """True when term ids are the sorted positions (a sharded coordinator's vocabulary)."""
        return self._ids is not None and bool(np.array_equal(self._ids, np.arange(len(self._ids))))


@dataclass(eq=False)
class LexicalStore:
    """The arrays of a lexical index: term counts (CSR parts: data, indices, indptr), document lengths,
    the df it scores with (the collection's under a `scope`), BM25 weights (CSC) and the pruning
    bounds, with the vocabulary and the settings they were derived with."""

    tokenizer_config: TokenizerConfig
    params: BM25Params
    vocabulary: Vocabulary
    counts: tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR (data, indices, indptr), documents x terms
    doc_len: np.ndarray
    df: np.ndarray
    bm25: Columns
    ub: np.ndarray
    dense_row: np.ndarray
    dense: np.ndarray
    scope: Collection | None = None  # the statistics it scores with; None: its own

    @property
    def n_docs(self) -> int:
        return len(self.doc_len)

    @property
    def n_terms(self) -> int:
        return len(self.vocabulary)

    @property
    def n_scored(self) -> int:
        """The N of idf: this index's records, or its collection's."""
        return self.scope.n_docs if self.scope is not None else self.n_docs

    @cached_property
    def avgdl(self) -> float:
        if self.scope is not None:
            return self.scope.avgdl
        return float(self.doc_len.mean()) if self.n_docs else 0.0

    # ---- derived views, built on first use (not saved) ----------------------------------------
    @cached_property
    def tf(self) -> sp.csr_matrix:
        """Raw term counts (CSR, float64)."""
        import scipy.sparse as sp

        data, indices, indptr = self.counts
        return sp.csr_matrix((data.astype(np.float64, copy=False), indices, indptr),
                             shape=(self.n_docs, self.n_terms))

    @cached_property
    def tfidf(self) -> sp.csc_matrix:
        """Carrier's TF-IDF weights, (1+ln tf)(ln((N+1)/(df+1))+1), rows L2-normalised (cosine)."""
        import scipy.sparse as sp

        tf = self.tf.tocoo()
        data, norms = _tfidf_parts(tf, self.df, self.n_scored)
        data = data / np.where(norms > 0, norms, 1.0)[tf.row]
        w = sp.csc_matrix((data, (tf.row, tf.col)), shape=tf.shape)
        w.sort_indices()
        return w

    # ---- the two ways to a store --------------------------------------------------------------
    @classmethod
    def derive(cls, tokenizer_config: TokenizerConfig, vocabulary: Vocabulary, tf: sp.csr_matrix,
               params: BM25Params = BM25Params(), scope: Collection | None = None) -> "LexicalStore":
        """The store of term counts `tf` (documents x terms): lengths, df, weights and bounds."""
        tf = tf.tocsr().astype(np.float64)
        if scope is not None and len(scope.df) != len(vocabulary):
            raise ValueError(f"a scope of {len(scope.df)} terms for an index of {len(vocabulary)}")
        doc_len = np.asarray(tf.sum(axis=1)).ravel()
        if scope is None:
            n_scored = tf.shape[0]
            avgdl = float(doc_len.mean()) if tf.shape[0] else 0.0
            df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        else:
            n_scored, avgdl, df = scope.n_docs, scope.avgdl, scope.df
        # CSR: weights are computed in row order, then transposed (rows stay sorted)
        idf = bm25_idf(df, n_scored, params.variant)
        part = np.repeat(bm25_norm(doc_len, avgdl, params), np.diff(tf.indptr))
        for lo in range(0, len(part), _BLOCK):  # in bounded blocks
            weigh(tf.data[lo:lo + _BLOCK], part[lo:lo + _BLOCK], idf[tf.indices[lo:lo + _BLOCK]], params)
        import scipy.sparse as sp

        w = sp.csr_matrix((part, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        del part
        w.sort_indices()
        bm25 = Columns(w.indptr, w.indices, w.data, w.shape)
        store = cls(tokenizer_config, params, vocabulary, (tf.data, tf.indices, tf.indptr), doc_len, df, bm25,
                    *pruning_bounds(bm25, tf.shape[0]), scope=scope)
        store.__dict__["tf"] = tf  # the counts as given: no second matrix
        return store

    @classmethod
    def load(cls, folder: Path, meta: dict[str, Any], n_docs: int) -> "LexicalStore":
        """The store `save` wrote, memory-mapped, checked against `n_docs` records."""
        try:
            a = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                 for name in (*ARRAYS, "vocab_ids")}
            column = StringColumn(folder, "vocab")
            n_terms = len(a["vocab_ids"])
            c = meta.get("collection")
            scope = Collection(int(c["records"]), float(c["total_length"]), a["df"]) if c else None
            if (len(a["doc_len"]) != n_docs or len(a["df"]) != n_terms or len(a["tf_indptr"]) != n_docs + 1
                    or len(column) != n_terms or meta.get("terms", n_terms) != n_terms):
                raise ValueError(f"arrays do not fit {n_docs} records and {n_terms} terms")
            return cls(TokenizerConfig.from_dict(meta["tokenizer"]), BM25Params(**meta["bm25"]),
                       Vocabulary(column=column, ids=a["vocab_ids"]),
                       (a["tf_data"], a["tf_indices"], a["tf_indptr"]), a["doc_len"], a["df"],
                       Columns(a["bm25_indptr"], a["bm25_indices"], a["bm25_data"], (n_docs, n_terms)),
                       a["ub"], a["dense_row"], a["dense"], scope)
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{folder}: cannot read the lexical index ({exc})") from exc

    def save(self, folder: Path) -> dict[str, Any]:
        """Term counts (the truth), the BM25 weights and pruning bounds derived from them, and the
        vocabulary as a sorted string column, so that opening memory-maps and computes nothing.
        Returns what the manifest says of it."""
        folder.mkdir()
        data, indices, indptr = self.counts
        w = self.bm25
        arrays = (data.astype(np.int32, copy=False), indices, indptr, w.data, w.indices, w.indptr,
                  self.doc_len, self.df, self.ub, self.dense_row, self.dense)
        for name, array in zip(ARRAYS, arrays):
            np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        write_vocab(folder, self.vocabulary.terms)
        meta: dict[str, Any] = {"tokenizer": self.tokenizer_config.to_dict(), "bm25": self.params.to_dict(),
                                "terms": self.n_terms}
        if self.scope is not None:  # df.npy holds the collection's df of these terms
            meta["collection"] = {"records": self.scope.n_docs, "total_length": self.scope.total_len}
        return meta
