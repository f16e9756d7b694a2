"""Per-(record, marker) evidence that the certificate's rules read: the profile of a chunk code
matrix over records, the binomial tail evidence of a count, and a pair's statistics for one marker.
Below `certify`, `placebo` and `signature`, which all use them (see `certify` for the rules)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used
    import scipy.sparse as sp

LN10 = math.log(10.0)


@dataclass
class Profile:
    """Per-(record, marker) statistics at one resolution, as sparse (records x markers) matrices."""

    count: sp.csr_matrix  # active chunks
    total: sp.csr_matrix  # summed activation
    evidence: sp.csr_matrix  # -log10 binomial tail (only where count >= 1)
    p: np.ndarray  # (markers,) share of chunks where active
    n: np.ndarray  # (records,) chunks per record


def profile(chunk_record: np.ndarray, n_records: int, codes: sp.csr_matrix) -> Profile:
    import scipy.sparse as sp
    codes = sp.csr_matrix(codes)
    n_chunks, m = codes.shape
    P = sp.csr_matrix((np.ones(n_chunks, np.float32), (chunk_record, np.arange(n_chunks))),
                      shape=(n_records, n_chunks))
    binary = codes.copy()
    binary.data = np.ones_like(binary.data)
    count = (P @ binary).tocsr()
    total = (P @ codes).tocsr()
    p = np.asarray(binary.sum(axis=0), dtype=np.float64).ravel() / max(n_chunks, 1)
    n = np.bincount(chunk_record, minlength=n_records).astype(np.float64)
    count.sort_indices()
    total.sort_indices()
    ev = count.copy().astype(np.float64)
    rows = np.repeat(np.arange(n_records), np.diff(count.indptr))
    ev.data = tail_evidence(count.data, n[rows], p[count.indices])
    return Profile(count, total, ev, p, n)


def tail_evidence(c, n, p) -> np.ndarray:
    """-log10 P(Binomial(n, p) >= c)."""
    # scipy.stats is imported here, not at module level: it takes most of a second, and the CLI
    # imports this module at start-up for the certificate's defaults.
    from scipy import stats
    return -stats.binom.logsf(np.asarray(c) - 1, np.asarray(n), np.asarray(p)) / LN10


def pair_stats(prof: Profile, a: np.ndarray, b: np.ndarray, f: np.ndarray, min_chunks: int) -> tuple:
    """(count_a, count_b, evidence, chance) of marker f for pairs (a, b); 0 counts where inactive."""
    ca = lookup_cells(prof.count, a, f)
    cb = lookup_cells(prof.count, b, f)
    ea = lookup_cells(prof.evidence, a, f)
    eb = lookup_cells(prof.evidence, b, f)
    p = prof.p[f]
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = (ca / prof.n[a]) * (cb / prof.n[b]) / np.maximum(p * p, 1e-300)
    chance = np.where((ca > 0) & (cb > 0), chance, 0.0)
    return ca, cb, ea + eb, chance


def lookup_cells(m: sp.csr_matrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return np.asarray(m[rows, cols], dtype=np.float64).ravel() if len(rows) else np.zeros(0)
