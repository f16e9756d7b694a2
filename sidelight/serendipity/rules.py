"""The certificate's ordinary-explanation rules: shared verbatim spans, link-graph distance and, on a
corpus without links, kinship neighbours; and the per-record cap."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

_WORD = re.compile(r"\w+")


class SpanChecker:
    """Shared verbatim spans of >= L word tokens between two records (hashes of L-grams)."""

    def __init__(self, tokens: Callable[[int], Sequence[str]], length: int):
        self.tokens, self.length = tokens, length
        self._cache: dict[int, set[int]] = {}

    def grams(self, r: int) -> set:
        g = self._cache.get(r)
        if g is None:
            t = [w.lower() for w in self.tokens(r)]
            L = self.length
            g = {hash(tuple(t[i:i + L])) for i in range(len(t) - L + 1)}
            self._cache[r] = g
        return g

    def shares(self, a: int, b: int) -> bool:
        ga, gb = self.grams(a), self.grams(b)
        return bool(ga) and bool(gb) and not ga.isdisjoint(gb)


def word_tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def graph_distances(adj: sp.csr_matrix | None, a: np.ndarray, b: np.ndarray, max_hops: int) -> np.ndarray:
    """Hop distance a -> b on the undirected graph; -1 beyond max_hops or unreachable."""
    import scipy.sparse as sp
    out = np.full(len(a), -1, np.int64)
    if adj is None or len(a) == 0:
        return out
    adj = sp.csr_matrix(adj, dtype=np.float32)
    src = np.unique(a)
    for s0 in range(0, len(src), 256):
        batch = src[s0:s0 + 256]
        col = {int(s): i for i, s in enumerate(batch)}
        sel = np.flatnonzero(np.isin(a, batch))
        cols = np.array([col[int(x)] for x in a[sel]], dtype=np.int64)
        n = adj.shape[0]
        seen = np.zeros((n, len(batch)), bool)
        seen[batch, np.arange(len(batch))] = True
        frontier = seen.astype(np.float32)
        got = out[sel]
        got[a[sel] == b[sel]] = 0
        for hop in range(1, max_hops + 1):
            reach = (adj @ frontier) > 0
            reach &= ~seen
            seen |= reach
            hit = reach[b[sel], cols] & (got < 0)
            got[hit] = hop
            frontier = reach.astype(np.float32)
            if not reach.any():
                break
        out[sel] = got
    return out


def shared_neighbours(adj: sp.csr_matrix | None, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import scipy.sparse as sp
    if adj is None or len(a) == 0:
        return np.zeros(len(a), np.int64)
    adj = sp.csr_matrix(adj)
    return np.array([len(np.intersect1d(adj.indices[adj.indptr[x]:adj.indptr[x + 1]],
                                        adj.indices[adj.indptr[y]:adj.indptr[y + 1]], assume_unique=True))
                     for x, y in zip(a, b)], dtype=np.int64)


def kinship_neighbours(vectors: np.ndarray, rows: np.ndarray, m: int, block: int = 1024) -> np.ndarray:
    """(n_records, m) table: for each of `rows`, its m nearest records by cosine of the unit record
    vectors, nearest first, ties by ascending id, itself excluded; -1 in rows not asked for."""
    V = np.asarray(vectors, np.float32)
    m = max(0, min(int(m), len(V) - 1))
    out = np.full((len(V), m), -1, np.int64)
    rows = np.asarray(rows, np.int64)
    for s in range(0, len(rows) if m else 0, block):
        r = rows[s:s + block]
        K = V[r] @ V.T
        K[np.arange(len(r)), r] = -np.inf
        top = np.argpartition(-K, m - 1, axis=1)[:, :m]
        order = np.lexsort((top, -np.take_along_axis(K, top, axis=1)), axis=1)
        out[r] = np.take_along_axis(top, order, axis=1)
    return out


def near_by_kinship(table: np.ndarray, a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """True where b is among a's k nearest records, or a among b's (the no-graph distance rule)."""
    if len(a) == 0 or k <= 0:
        return np.zeros(len(a), bool)
    return (table[a, :k] == np.asarray(b)[:, None]).any(axis=1) | (table[b, :k] == np.asarray(a)[:, None]).any(axis=1)


def cap_per_record(a: np.ndarray, b: np.ndarray, score: np.ndarray, cap: int) -> np.ndarray:
    """Keep at most `cap` pairs per record, best `score` first (ties by a, then b): greedy, so a hub
    record's weaker pairs go and its partners keep their other pairs."""
    keep = np.zeros(len(a), bool)
    used: dict[int, int] = {}
    for i in np.lexsort((b, a, -score)):
        x, y = int(a[i]), int(b[i])
        if used.get(x, 0) < cap and used.get(y, 0) < cap:
            keep[i] = True
            used[x] = used.get(x, 0) + 1
            used[y] = used.get(y, 0) + 1
    return keep
