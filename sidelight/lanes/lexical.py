"""The lexical lane: a term-frequency matrix with exact BM25 and Carrier's TF-IDF cosine on top.

Raw term frequencies and document lengths are the stored truth; BM25 weights are derived from
them (O(nnz)), so adding or deleting records updates N, avgdl and df and stays exact.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..text import Tokenizer, TokenizerConfig
from ..text.tokenize import _TOKEN as _RAW_TOKEN
from .ranking import Ranking, top_k

VARIANTS = ("robertson", "lucene", "atire")
_CHUNK = 4096  # texts tokenized per step when building
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


class LexicalIndex:
    """Documents as term counts (CSR, documents x terms) plus the vocabulary and tokenizer."""

    def __init__(self, tokenizer_config: TokenizerConfig, vocab: list[str], tf: sp.csr_matrix,
                 params: BM25Params = BM25Params()):
        self.tokenizer_config = tokenizer_config
        self.tokenizer = Tokenizer(tokenizer_config)
        self.vocab = list(vocab)
        self.term_id = {t: i for i, t in enumerate(self.vocab)}
        self.tf = tf.tocsr().astype(np.float64)
        self.params = params
        self._derive()

    # ---- building -------------------------------------------------------------------------
    @classmethod
    def build(cls, texts: list[str], tokenizer_config: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), progress=None) -> "LexicalIndex":
        """Tokenize `texts` (one per record, in corpus order) and count terms."""
        tokenizer = Tokenizer(tokenizer_config)
        vocab: dict[str, int] = {}
        tf = _count(texts, tokenizer, vocab, progress)
        return cls(tokenizer_config, list(vocab), tf, params)

    def add(self, texts: list[str]) -> None:
        """Append documents; vocabulary grows, global statistics are recomputed exactly."""
        vocab = dict(self.term_id)
        new = _count(texts, self.tokenizer, vocab, None)
        old = self.tf
        old.resize((old.shape[0], len(vocab)))
        self.vocab = list(vocab)
        self.term_id = vocab
        self.tf = sp.vstack([old, new.astype(np.float64)], format="csr")
        self._derive()

    def delete(self, positions: np.ndarray) -> None:
        """Remove documents by position; terms that no longer occur stay in the vocabulary with df 0."""
        keep = np.ones(self.tf.shape[0], dtype=bool)
        keep[positions] = False
        self.tf = self.tf[keep]
        self._derive()

    # ---- derived statistics -----------------------------------------------------------------
    def _derive(self) -> None:
        tf = self.tf
        self.n_docs = tf.shape[0]
        self.doc_len = np.asarray(tf.sum(axis=1)).ravel()
        self.avgdl = float(self.doc_len.mean()) if self.n_docs else 0.0
        self.df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        self.bm25 = self._bm25_weights()  # CSC: column t holds the weights of term t
        self.tfidf = self._tfidf_weights()

    def _bm25_weights(self) -> sp.csc_matrix:
        p, n = self.params, self.n_docs
        tf = self.tf.tocoo()
        df = np.maximum(self.df, 1.0)
        if p.variant == "atire":
            idf = np.log(n / df)
        else:
            idf = np.log1p((n - df + 0.5) / (df + 0.5))
        norm = p.k1 * (1.0 - p.b + p.b * self.doc_len / self.avgdl) if self.avgdl > 0 else np.full(n, p.k1)
        part = tf.data / (tf.data + norm[tf.row])
        if p.variant != "lucene":
            part *= p.k1 + 1.0
        w = sp.csc_matrix((idf[tf.col] * part, (tf.row, tf.col)), shape=tf.shape)
        w.sort_indices()
        return w

    def _tfidf_weights(self) -> sp.csc_matrix:
        """Carrier: (1+ln tf)(ln((N+1)/(df+1))+1), rows L2-normalised (cosine)."""
        tf = self.tf.tocoo()
        self.idf_tfidf = np.log((self.n_docs + 1.0) / (self.df + 1.0)) + 1.0
        data = (1.0 + np.log(tf.data)) * self.idf_tfidf[tf.col]
        norms = np.sqrt(np.bincount(tf.row, weights=data * data, minlength=self.n_docs))
        data = data / np.where(norms > 0, norms, 1.0)[tf.row]
        w = sp.csc_matrix((data, (tf.row, tf.col)), shape=tf.shape)
        w.sort_indices()
        return w

    # ---- scoring ------------------------------------------------------------------------------
    def query_terms(self, query: str) -> np.ndarray:
        """Distinct known term ids of a query: repeated terms count once, unknown terms drop out."""
        if not query or not query.strip():
            raise InputError("empty query")
        seen = dict.fromkeys(self.tokenizer(query))
        ids = [self.term_id[t] for t in seen if t in self.term_id]
        return np.asarray(ids, dtype=np.int64)

    def bm25_scores(self, query: str) -> np.ndarray:
        """The full BM25 score vector over record positions (zero where no query term occurs)."""
        return _accumulate(self.bm25, self.query_terms(query), self.n_docs)

    def tfidf_scores(self, query: str) -> np.ndarray:
        """Cosine between the query's TF-IDF vector (each distinct term has tf 1) and every record."""
        terms = self.query_terms(query)
        q = self.idf_tfidf[terms]
        qnorm = float(np.sqrt(np.sum(q * q)))
        return _accumulate(self.tfidf, terms, self.n_docs, q / qnorm if qnorm > 0 else q)

    def bm25_top(self, query: str, k: int | None, id_rank: np.ndarray) -> Ranking:
        """Top-k BM25, positive scores only, ties by ascending id."""
        terms = self.query_terms(query)
        scores = _accumulate(self.bm25, terms, self.n_docs)
        return top_k(scores, k, id_rank)


def _accumulate(weights: sp.csc_matrix, terms: np.ndarray, n: int,
                factors: np.ndarray | None = None) -> np.ndarray:
    """Sum the weight columns of `terms` (times `factors`); a column's row indices are unique."""
    scores = np.zeros(n, dtype=np.float64)
    indptr, indices, data = weights.indptr, weights.indices, weights.data
    for j, t in enumerate(terms):
        lo, hi = indptr[t], indptr[t + 1]
        scores[indices[lo:hi]] += data[lo:hi] if factors is None else data[lo:hi] * factors[j]
    return scores


def _count(texts: list[str], tokenizer: Tokenizer, vocab: dict[str, int], progress) -> sp.csr_matrix:
    """Term counts of `texts` as CSR, growing `vocab` in order of first appearance.

    Same terms, order and counts as calling the tokenizer text by text, but faster: a text is
    lowercased, UTF-8 encoded and every byte outside [a-z0-9] becomes a space (non-ASCII
    characters never match `[a-z0-9]+`), so `bytes.split` yields exactly the raw tokens; each
    distinct raw token goes through the tokenizer once (stop words, minimum length, stemming),
    and counting is vectorised per chunk of texts.
    """
    if type(tokenizer) is not Tokenizer or _RAW_TOKEN.pattern != "[a-z0-9]+":
        return _count_loop(texts, tokenizer, vocab, progress)
    raw: dict[bytes, int] = {}  # raw token -> raw id, in order of first appearance
    term_of_raw = np.zeros(0, dtype=np.int32)  # raw id -> term id, -1 when the tokenizer drops it
    chain = itertools.chain.from_iterable
    data_parts, index_parts, counts_parts = [], [], []
    for start in range(0, len(texts), _CHUNK):
        chunk = texts[start:start + _CHUNK]
        tokens = [t.lower().encode().translate(_ALNUM_BYTES).split() for t in chunk]
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        n_raw = len(raw)
        for t in dict.fromkeys(chain(tokens)):
            if t not in raw:
                raw[t] = len(raw)
        ids = np.fromiter(map(raw.__getitem__, chain(tokens)), dtype=np.int32, count=int(lengths.sum()))
        del tokens
        if len(raw) > n_raw:
            new = []
            for t in itertools.islice(raw, n_raw, None):
                terms = tokenizer(t.decode("ascii"))
                if terms:
                    i = vocab.get(terms[0])
                    if i is None:
                        i = vocab[terms[0]] = len(vocab)
                    new.append(i)
                else:
                    new.append(-1)
            term_of_raw = np.concatenate([term_of_raw, np.asarray(new, dtype=np.int32)])
        ids = term_of_raw[ids]
        keep = ids >= 0
        if not keep.all():
            lengths = np.bincount(np.repeat(np.arange(len(chunk)), lengths)[keep], minlength=len(chunk))
            ids = ids[keep]
        indptr = np.zeros(len(chunk) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        m = sp.csr_matrix((np.ones(len(ids)), ids, indptr), shape=(len(chunk), max(len(vocab), 1)))
        m.sum_duplicates()  # sorts each row's terms and adds up repeats
        data_parts.append(m.data)
        index_parts.append(m.indices.astype(np.int32, copy=False))
        counts_parts.append(np.diff(m.indptr))
        if progress is not None:
            progress(len(chunk))
    indptr = np.zeros(len(texts) + 1, dtype=np.int64)
    if counts_parts:
        np.cumsum(np.concatenate(counts_parts), out=indptr[1:])
    data = np.concatenate(data_parts) if data_parts else np.zeros(0)
    indices = np.concatenate(index_parts) if index_parts else np.zeros(0, dtype=np.int32)
    return sp.csr_matrix((data, indices, indptr), shape=(len(texts), len(vocab)))


def _count_loop(texts: list[str], tokenizer: Tokenizer, vocab: dict[str, int], progress) -> sp.csr_matrix:
    """`_count` for any tokenizer: text by text."""
    term_ids: list[int] = []
    indptr = [0]
    for text in texts:
        for t in tokenizer(text):
            i = vocab.get(t)
            if i is None:
                i = vocab[t] = len(vocab)
            term_ids.append(i)
        indptr.append(len(term_ids))
        if progress is not None:
            progress(1)
    cols = np.asarray(term_ids, dtype=np.int64)
    rows = np.repeat(np.arange(len(texts)), np.diff(np.asarray(indptr)))
    m = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(texts), len(vocab)))
    m.sum_duplicates()
    return m
