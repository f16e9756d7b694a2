"""The pruned (MaxScore) BM25 top-k kernel: exact, the same steps as `LexicalIndex._bm25_top_pruned`.

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS` and rebinds
`_heap_top` to the jitted one from `fused`, so numba resolves the callees through these globals.
"""

from __future__ import annotations

import numpy as np

from .fused import _heap_top

KERNELS = ("_kth_largest", "_keep", "_add_term", "_pruned_top")


def _kth_largest(x, idx, lo, hi, k, heap):
    """The k-th largest of x[idx[lo:hi]] (hi - lo >= k >= 1); `heap` holds >= k floats."""
    size = 0
    for q in range(lo, hi):
        v = x[idx[q]]
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
    n = acc.size
    heap = np.empty(k)
    # 1. essential terms: accumulate their postings until the rest cannot reach theta
    m = 0
    overflow = False
    theta = 0.0
    prefix = 0.0
    last = nt - 1
    for j in range(nt):
        t = ranked[j]
        lo, hi = indptr[t], indptr[t + 1]
        if not overflow and m + (hi - lo) > n:
            overflow = True  # the list could outgrow its buffer: phase 2 reads every record instead
        if overflow:
            for q in range(lo, hi):
                acc[indices[q]] += data[q]
        else:  # branch-free: a record joins the list on its first touch (or a sum back at 0.0:
            for q in range(lo, hi):  # listed again, read once below)
                d = indices[q]
                touched[m] = d
                m += acc[d] == 0.0
                acc[d] += data[q]
        prefix += ub[t]
        # theta cannot pass the bounds so far: look for it only once that could end this phase
        if hi - lo >= k and j < last and rest[j] < prefix * low:
            theta = max(theta, _kth_largest(acc, indices, lo, hi, k, heap))
        if rest[j] < theta * low:
            last = j
            break
    # 2. candidates: partial sums that may still reach theta; the accumulator is cleared. One
    # pass reads (and zeroes) every touched record once, keeps those above the bound so far and
    # finds the k-th best partial sum of them all, a better theta (each is a lower bound).
    lim = theta * low - rest[last]
    span = n if overflow else m  # the touched list is complete unless it overflowed
    c = 0
    size = 0
    for i in range(span):
        d = i if overflow else touched[i]
        v = acc[d]
        acc[d] = 0.0
        touched[c] = d  # c <= i: kept without a branch when v may still reach theta
        vals[c] = v
        c += (v >= lim) if lim > 0 else (v > 0)
        if v != 0.0 and (size < k or v > heap[0]):
            if size < k:  # inline min-heap of the k largest partial sums
                j = size
                size += 1
                while j > 0 and heap[(j - 1) >> 1] > v:
                    heap[j] = heap[(j - 1) >> 1]
                    j = (j - 1) >> 1
                heap[j] = v
            elif v > heap[0]:
                j = 0
                while True:
                    ch = 2 * j + 1
                    if ch >= size:
                        break
                    if ch + 1 < size and heap[ch + 1] < heap[ch]:
                        ch += 1
                    if heap[ch] < v:
                        heap[j] = heap[ch]
                        j = ch
                    else:
                        break
                heap[j] = v
    if size == k:
        theta = max(theta, heap[0])
        lim = theta * low - rest[last]
        if lim > 0:
            c = _keep(touched, vals, c, lim)
    # 3. the other terms by lookup, term at a time (falling bound order); after each, theta rises
    # to the k-th best partial sum and candidates that cannot reach it drop out
    for j in range(last + 1, nt):
        _add_term(vals, touched, c, ranked[j], indptr, indices, data, dense_row, dense, slot)
        if c > k:
            theta = max(theta, _kth_largest(vals, np.arange(c), 0, c, k, heap))
        c = _keep(touched, vals, c, theta * low - rest[j])
    if c > k:  # near-ties of the k-th partial sum stay for the exact sums
        c = _keep(touched, vals, c, _kth_largest(vals, np.arange(c), 0, c, k, heap) * low)
    # 4. exact scores in query order from 0.0 (as _accumulate), positive ones ranked
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
    pos, out = _heap_top(touched, exact, kept, id_rank, k)
    return pos, out, 0
