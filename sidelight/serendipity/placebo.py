"""Placebo pairs: random pairs matched to the candidates' kinship bins, and their best shared marker.

`placebo_pairs` draws, for each kinship bin k, ``per_bin[k]`` random pairs of population records
(records with more than one chunk) whose kinship falls in bin k: blocks of random first records,
the cosine to every population record, and a uniform draw among the matches of each bin still short.
Pairs may repeat across blocks and may coincide with real candidates (in the high-kinship bins that
is exactly the point: if kinship explains the markers, random pairs pass as often as targets).
`best_shared` gives any pair its best shared marker under the same multi-chunk rule as candidates.
"""

from __future__ import annotations

import numpy as np

from .certify import Profile, bin_of, pair_stats


def best_shared(prof: Profile, a: np.ndarray, b: np.ndarray, min_chunks: int) -> tuple:
    """For arbitrary pairs: best shared marker (count >= min_chunks both sides), its evidence, chance."""
    elig = prof.count.copy()
    elig.data = (elig.data >= min_chunks).astype(np.float64)
    elig.eliminate_zeros()
    E = prof.evidence.multiply(elig).tocsr()
    Eb = elig.tocsr()
    mk = np.full(len(a), -1, np.int64)
    ev = np.full(len(a), -np.inf)
    for s in range(0, len(a), 20000):
        A, B = a[s:s + 20000], b[s:s + 20000]
        shared = Eb[A].multiply(Eb[B]).tocsr()
        tot = (E[A].multiply(shared) + E[B].multiply(shared)).tocsr()
        tot.sort_indices()
        for r in range(tot.shape[0]):
            x, y = tot.indptr[r], tot.indptr[r + 1]
            if y > x:
                j = x + int(np.argmax(tot.data[x:y]))
                mk[s + r], ev[s + r] = tot.indices[j], tot.data[j]
    chance = np.zeros(len(a))
    got = mk >= 0
    if got.any():
        _, _, _, chance[got] = pair_stats(prof, a[got], b[got], mk[got], min_chunks)
    return mk, ev, chance


def placebo_pairs(population: np.ndarray, vectors: np.ndarray, edges: np.ndarray, per_bin: np.ndarray,
                  rng: np.random.Generator, block: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Random population pairs, `per_bin[k]` of them with kinship in bin k (rejection by blocks of a)."""
    need = per_bin.astype(np.int64).copy()
    out_a, out_b = [], []
    V = np.asarray(vectors[population], np.float32)
    P = len(population)
    tries = 0
    while need.sum() > 0 and tries < 400:
        tries += 1
        ia = rng.integers(0, P, size=min(block, P))
        K = V[ia] @ V.T
        B = bin_of(K.ravel(), edges).reshape(K.shape)
        B[np.arange(len(ia)), ia] = -1  # no self pairs
        for k in np.flatnonzero(need > 0):
            r, c = np.nonzero(B == k)
            if len(r) == 0:
                continue
            take = rng.choice(len(r), size=min(int(need[k]), len(r)), replace=False)
            out_a.append(population[ia[r[take]]])
            out_b.append(population[c[take]])
            need[k] -= len(take)
    a = np.concatenate(out_a) if out_a else np.zeros(0, np.int64)
    b = np.concatenate(out_b) if out_b else np.zeros(0, np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return lo, hi
