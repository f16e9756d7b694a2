"""Counting terms: texts to a vocabulary and a CSR matrix of term counts (documents x terms).

The lexical index is derived from these counts (`structures.lexical_store`); a build in blocks
(`structures.blocks`) calls `count_matrix` block by block with one vocabulary.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used
    import scipy.sparse as sp

from ..text import Tokenizer, TokenizerConfig
from . import kernels as _kernels

_CHUNK = 4096  # texts tokenized per step when building
_ALNUM_BYTES = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))


def count_terms(texts: list[str], tokenizer_config: TokenizerConfig, progress=None) -> tuple[list[str], sp.csr_matrix]:
    """The vocabulary (terms in order of first appearance) and the term counts of `texts` (CSR, int32)."""
    vocab: dict[str, int] = {}
    tf = count_matrix(texts, Tokenizer(tokenizer_config), vocab, progress)
    return list(vocab), tf


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
