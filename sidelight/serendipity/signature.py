"""Signatures: the resolutions (top-k' codes of the same SAE) at which a certified connection appears,
with a leave-one-out check (the marker's strongest chunk on one side left out; both sides tried)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from .evidence import pair_stats, profile, tail_evidence


def signatures(chunk_record, n_records, codes, resolutions, a, b, f, thr, config):
    """(signature, loo) as (pairs, resolutions) int8 arrays, and the resolution labels."""
    import scipy.sparse as sp
    resolutions = resolutions or {0: codes}
    ks = sorted(resolutions, reverse=True)
    sig = np.zeros((len(a), len(ks)), np.int8)
    loo = np.zeros((len(a), len(ks)), np.int8)
    codes_csc = sp.csc_matrix(codes)
    for j, k in enumerate(ks):
        rc = sp.csr_matrix(resolutions[k])
        prof = profile(chunk_record, n_records, rc)
        ca, cb, ev, ch = pair_stats(prof, a, b, f, config.min_chunks)
        sig[:, j] = (ca >= config.min_chunks) & (cb >= config.min_chunks) & (ch >= config.min_chance) & (ev > thr)
        rcsc = sp.csc_matrix(rc)
        ok = np.ones(len(a), bool)
        for side in (0, 1):
            for i in range(len(a)):
                if not ok[i]:
                    continue
                r = int(a[i] if side == 0 else b[i])
                drop = _strongest_chunk(codes_csc, chunk_record, r, int(f[i]))
                c_side = _count_without(rcsc, chunk_record, r, int(f[i]), drop)
                n_side = prof.n[r] - 1
                other = int(b[i] if side == 0 else a[i])
                c_other = _count_without(rcsc, chunk_record, other, int(f[i]), -1)
                p = prof.p[int(f[i])]
                if c_side < 1 or c_other < 1 or n_side < 1:
                    ok[i] = False
                    continue
                chance = (c_side / n_side) * (c_other / prof.n[other]) / max(p * p, 1e-300)
                e = tail_evidence(c_side, n_side, p) + tail_evidence(c_other, prof.n[other], p)
                ok[i] = chance >= config.min_chance and e > thr[i]
        loo[:, j] = ok
    return sig, loo, [int(k) for k in ks]


def _strongest_chunk(csc: sp.csc_matrix, chunk_record, r: int, f: int) -> int:
    s, e = csc.indptr[f], csc.indptr[f + 1]
    rows, vals = csc.indices[s:e], csc.data[s:e]
    mine = chunk_record[rows] == r
    if not mine.any():
        return -1
    return int(rows[mine][np.argmax(vals[mine])])


def _count_without(csc: sp.csc_matrix, chunk_record, r: int, f: int, drop: int) -> int:
    s, e = csc.indptr[f], csc.indptr[f + 1]
    rows, vals = csc.indices[s:e], csc.data[s:e]
    mine = (chunk_record[rows] == r) & (vals > 0) & (rows != drop)
    return int(mine.sum())
