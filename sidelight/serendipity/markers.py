"""Marker labels: each marker's most characteristic tokens and its top records.

For marker f, its ``top_chunks`` most strongly activating chunks are taken; every word token
(lower-cased, >= 3 characters, letters first, not in the nltk-en-v1 stop list) scores
``(top chunks containing it) x idf`` with ``idf = log(N / df)`` over all N chunks; tokens found in
only one top chunk are skipped unless nothing else is left. The label is the best ``n_tokens``
tokens joined by `` · ``. Top records: by summed activation of f over their chunks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..text import stopwords

_TOK = re.compile(r"[a-z][a-z0-9\-]{2,}")


def chunk_terms(texts: list[str]) -> tuple[sp.csr_matrix, list[str]]:
    import scipy.sparse as sp
    stop = stopwords("nltk-en-v1")
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, t in enumerate(texts):
        seen = {w for w in _TOK.findall(t.lower()) if w not in stop}
        for w in sorted(seen):  # a set's order follows the process's hash seed; term ids (label ties) must not
            j = vocab.setdefault(w, len(vocab))
            rows.append(i)
            cols.append(j)
    m = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(texts), len(vocab)))
    terms = [""] * len(vocab)
    for w, j in vocab.items():
        terms[j] = w
    return m, terms


def label_markers(codes: sp.csr_matrix, texts: list[str], chunk_record: np.ndarray, n_records: int,
                  top_chunks: int = 16, n_tokens: int = 4, n_records_top: int = 5) -> list[dict]:
    """One dict per marker: label, tokens, top_records (positions), active chunks."""
    import scipy.sparse as sp
    X, terms = chunk_terms(texts)
    n = X.shape[0]
    df = np.asarray(X.sum(axis=0)).ravel()
    idf = np.log(n / np.maximum(df, 1))
    csc = sp.csc_matrix(codes)
    P = sp.csr_matrix((np.ones(len(chunk_record), np.float32), (chunk_record, np.arange(len(chunk_record)))),
                      shape=(n_records, len(chunk_record)))
    per_rec = sp.csc_matrix(P @ codes)
    out = []
    for f in range(codes.shape[1]):
        s, e = csc.indptr[f], csc.indptr[f + 1]
        rows, vals = csc.indices[s:e], csc.data[s:e]
        info: dict[str, Any] = {"marker": f, "active_chunks": int(e - s), "label": "(dead)", "tokens": [],
                                "top_records": []}
        if e > s:
            top = rows[np.argsort(-vals, kind="stable")[:top_chunks]]
            tf = np.asarray(X[top].sum(axis=0)).ravel()
            score = tf * idf
            good = np.flatnonzero(tf >= 2) if len(top) > 1 else np.flatnonzero(tf >= 1)
            if len(good) < n_tokens:
                good = np.flatnonzero(tf >= 1)
            best = good[np.lexsort((good, -score[good]))][:n_tokens]
            info["tokens"] = [terms[j] for j in best]
            info["label"] = " · ".join(info["tokens"]) or "(no tokens)"
            rs, re_ = per_rec.indptr[f], per_rec.indptr[f + 1]
            rr, rv = per_rec.indices[rs:re_], per_rec.data[rs:re_]
            info["top_records"] = [int(x) for x in rr[np.lexsort((rr, -rv))][:n_records_top]]
        out.append(info)
    return out
