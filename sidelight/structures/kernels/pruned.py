"""The pruned (MaxScore) BM25 top-k kernel: exact, the same steps as `LexicalIndex._bm25_top_pruned`.

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS` and rebinds
`heap_top` to the jitted one from `fused`, so numba resolves the callees through these globals.
"""

from __future__ import annotations

import numpy as np

from .fused import heap_top

KERNELS = ("_kth_largest", "_keep", "_add_term", "_pruned_top")
CONTINUE = 4  # phase 1b takes a term while its postings are at most this many times phase 1's


def _kth_largest(x, c, k, heap):
    """The k-th largest of x[:c] (c >= k >= 1); `heap` holds >= k floats."""
    size = 0
    for q in range(c):
        v = x[q]
        if size < k:
            j = size
            size += 1
            while j > 0 and heap[(j - 1) >> 1] > v:
                heap[j] = heap[(j - 1) >> 1]
                j = (j - 1) >> 1
            heap[j] = v
        elif v > heap[0]:
            j = 0
            while True:
                c = 2 * j + 1
                if c >= size:
                    break
                if c + 1 < size and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] < v:
                    heap[j] = heap[c]
                    j = c
                else:
                    break
            heap[j] = v
    return heap[0]


def _keep(cand, vals, c, cut):
    """Keep the candidates i < c with vals[i] >= cut, in order (branch-free); returns how many."""
    kept = 0
    for i in range(c):
        v = vals[i]
        cand[kept] = cand[i]
        vals[kept] = v
        kept += v >= cut
    return kept


def _add_term(part, cand, c, t, indptr, indices, data, dense_row, dense, slot):
    """part[i] += weight of term t in record cand[i], for i < c (nothing where t is absent);
    `slot` (one int per record) is all zero before and after."""
    r = dense_row[t]
    if r >= 0:
        for i in range(c):
            part[i] += dense[r, cand[i]]
        return
    lo, hi = indptr[t], indptr[t + 1]
    if hi == lo:
        return
    if c * 16 < hi - lo:  # few candidates: binary search in the sorted posting list
        for i in range(c):
            d = cand[i]
            a, b = lo, hi
            while a < b:
                mid = (a + b) >> 1
                if indices[mid] < d:
                    a = mid + 1
                else:
                    b = mid
            if a < hi and indices[a] == d:
                part[i] += data[a]
    else:  # mark the candidates (slot = position + 1), one pass over the postings, unmark
        for i in range(c):
            slot[cand[i]] = i + 1
        for q in range(lo, hi):
            s = slot[indices[q]]
            if s:
                part[s - 1] += data[q]
        for i in range(c):
            slot[cand[i]] = 0


def _pruned_top(indptr, indices, data, terms, ub, dense_row, dense, acc, slot, touched, vals, id_rank, k, margin):
    """MaxScore top-k (k >= 1), the same steps as `LexicalIndex._bm25_top_pruned`, compiled.

    `touched` holds one entry more than `acc` (the branch-free list writes one past its end).
    Returns (positions, scores, bad): bad == -1 when a query term has a non-finite bound (the
    caller then scores in full), bad > 0 for non-finite final scores (refused)."""
    nt = terms.size
    for j in range(nt):
        if not np.isfinite(ub[terms[j]]):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64), -1
    # terms by falling upper bound (stable), and rest[j]: the bounds of the terms after j
    ranked = terms.copy()
    for j in range(1, nt):
        t = ranked[j]
        i = j
        while i > 0 and ub[ranked[i - 1]] < ub[t]:
            ranked[i] = ranked[i - 1]
            i -= 1
        ranked[i] = t
    rest = np.zeros(nt)
    for j in range(nt - 2, -1, -1):
        rest[j] = rest[j + 1] + ub[ranked[j + 1]]
    for j in range(nt):
        rest[j] *= 1.0 + margin
    low = 1.0 - margin
    heap = np.empty(k)
    # 1. essential terms: accumulate their postings until the rest cannot reach theta, listing
    # each record the first time its partial sum turns positive (branch-free: the slot is
    # overwritten unless the count moves on; weights are never negative, so no record twice)
    theta = 0.0
    prefix = 0.0
    read = 0
    nc = 0
    last = nt - 1
    for j in range(nt):
        t = ranked[j]
        lo, hi = indptr[t], indptr[t + 1]
        prefix += ub[t]
        read += hi - lo
        # the phase ends once k records of this term have a partial sum above rest / low: theta
        # (a lower bound on the k-th best score) is then above all the rest can add, which is
        # possible only once the bounds so far exceed the rest; those records are counted as
        # the postings are added
        check = hi - lo >= k and j < last and rest[j] < prefix * low
        cut = rest[j] / low if check else np.inf
        over = 0
        for q in range(lo, hi):
            d = indices[q]
            a = acc[d]
            v = a + data[q]
            acc[d] = v
            touched[nc] = d
            nc += (a == 0.0) & (v != 0.0)
            over += v > cut
        if over >= k:
            theta = cut
            last = j
            break
    # 1b. the next terms while their postings are few (<= CONTINUE x phase 1's): added only where a
    # partial sum already is (branch-free: x * 0.0 adds nothing), so no record joins the list
    while last + 1 < nt and dense_row[ranked[last + 1]] < 0:
        t = ranked[last + 1]
        lo, hi = indptr[t], indptr[t + 1]
        if hi - lo > CONTINUE * read:
            break
        for q in range(lo, hi):
            d = indices[q]
            a = acc[d]
            acc[d] = a + data[q] * (a != 0.0)
        last += 1
    # 2. candidates: one branch-free pass reads (and zeroes) every listed record's partial sum and
    # keeps those that may still reach theta; the k-th best of those is a better theta
    lim = theta * low - rest[last]
    c = 0
    for i in range(nc):
        d = touched[i]
        v = acc[d]
        acc[d] = 0.0
        touched[c] = d
        vals[c] = v
        c += (v >= lim) if lim > 0 else (v > 0)
    if c > k:  # all kept sums are >= lim > those dropped: the k-th best of all of them
        theta = max(theta, _kth_largest(vals, c, k, heap))
        c = _keep(touched, vals, c, theta * low - rest[last])
    # 3. the other terms by lookup, term at a time (falling bound order); after each, theta rises
    # to the k-th best partial sum and candidates that cannot reach it drop out
    for j in range(last + 1, nt):
        _add_term(vals, touched, c, ranked[j], indptr, indices, data, dense_row, dense, slot)
        if c > k:
            theta = max(theta, _kth_largest(vals, c, k, heap))
        c = _keep(touched, vals, c, theta * low - rest[j])
    if c > k:  # near-ties of the k-th partial sum stay for the exact sums
        c = _keep(touched, vals, c, _kth_largest(vals, c, k, heap) * low)
    # 4. exact scores in query order from 0.0 (as lexical.accumulate_scores), positive ones ranked
    exact = np.zeros(c)
    for j in range(nt):
        _add_term(exact, touched, c, terms[j], indptr, indices, data, dense_row, dense, slot)
    bad = 0
    kept = 0
    for i in range(c):
        v = exact[i]
        if not np.isfinite(v):
            bad += 1
        elif v > 0:
            touched[kept] = touched[i]
            exact[kept] = v
            kept += 1
    if bad > 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64), bad
    pos, out = heap_top(touched, exact, kept, id_rank, k)
    return pos, out, 0
