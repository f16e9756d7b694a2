"""The placebo corpus: every record rebuilt from chunks of the records most like it.

Why not random pairs of real records: a random pair of the right kinship passes only when it is
itself a passing candidate, so its passes are ``candidates / all pairs`` times the target passes,
bin by bin, whatever the evidence threshold (`bench/certify_null.py`: on SciFact with 16,384
markers, candidates are 6%-79% of all pairs by kinship bin, and a random-pair placebo would pass
0.30 x the target passes). That measures how common shared markers are, not whether a connection
goes beyond kinship. Any relabelling of real records (look-alike swaps, permutations) moves real connections
to other pairs of the same kinship and keeps them.

A placebo corpus keeps what overall similarity predicts and drops what is specific to a record: each
record r keeps its chunk count, and each of its chunks is replaced by a chunk drawn from r's
``neighbours`` nearest records by kinship (r itself excluded; a neighbour uniformly, then one of its
chunks uniformly), codes and all. Record vectors, hence kinship and its bins, stay the real ones. A
marker that r shares with b because both belong to a neighbourhood where it is common is shared
just as often by their placebo records; a marker that joins r and b specifically is diluted among
their neighbours' chunks and rarely clears the multi-chunk rule twice. Noise is reproduced too: the
placebo corpus is as noisy as the real one, so extreme evidence that arises by chance arises in the
placebo as often. The certificate then counts placebo passes the way target-decoy searches count
decoy hits (Elias & Gygi 2007): the pass threshold of each kinship bin is calibrated on some placebo
draws, and fresh draws measure the placebo share the verdict uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from .evidence import Profile, profile


def placebo_profile(chunk_record: np.ndarray, n_records: int, codes: sp.csr_matrix, neighbours: np.ndarray,
                    rng: np.random.Generator) -> Profile:
    """The profile of one placebo corpus (see the module docstring); `neighbours` is the
    (n_records, m) kinship table (-1 where a record has none: it keeps its own chunks)."""
    import scipy.sparse as sp
    owner, pick = placebo_chunks(chunk_record, n_records, neighbours, rng)
    return profile(owner, n_records, sp.csr_matrix(codes)[pick])


def placebo_chunks(chunk_record: np.ndarray, n_records: int, neighbours: np.ndarray,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One placebo corpus as (placebo record of each new chunk, the real chunk it copies)."""
    chunk_record = np.asarray(chunk_record, np.int64)
    order = np.argsort(chunk_record, kind="stable")
    n = np.bincount(chunk_record, minlength=n_records)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    owner = np.repeat(np.arange(n_records), n)  # the placebo record of each new chunk
    m = neighbours.shape[1]
    nb = neighbours[owner, rng.integers(0, max(m, 1), len(owner))] if m else np.full(len(owner), -1)
    nb = np.where((nb >= 0) & (n[np.maximum(nb, 0)] > 0), nb, owner)
    pick = order[start[nb] + (rng.random(len(owner)) * n[nb]).astype(np.int64)]
    return owner, pick
