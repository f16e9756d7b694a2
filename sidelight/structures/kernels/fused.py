"""The fused BM25 top-k kernel and its helpers: bounded-heap selection, score accumulation, dense top-k.

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS`, rebinding
the module globals (numba resolves callees such as `_before` through them). The contract every
kernel keeps (bit-identical scores, the (score desc, id_rank asc, position asc) order, refusing
non-finite scores) is in the package docstring.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("_before", "_sift", "heap_top", "_fused_top", "_accumulate", "_accumulate_f", "_top_dense")


def _before(va, ra, pa, vb, rb, pb):
    """Does (va, ra, pa) rank before (vb, rb, pb)? Score desc, id_rank asc, position asc."""
    if va != vb:
        return va > vb
    if ra != rb:
        return ra < rb
    return pa < pb


def _sift(hv, hr, hp, j, size, v, r, p):
    """Put (v, r, p) into the hole at slot j of a heap of `size` whose root ranks last."""
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and _before(hv[c], hr[c], hp[c], hv[c + 1], hr[c + 1], hp[c + 1]):
            c += 1  # the child ranking later
        if _before(v, r, p, hv[c], hr[c], hp[c]):
            hv[j], hr[j], hp[j] = hv[c], hr[c], hp[c]
            j = c
        else:
            break
    hv[j], hr[j], hp[j] = v, r, p


def heap_top(cand, vals, c, id_rank, k):
    """The k best of cand[:c] (scores vals[:c]), best first: a bounded heap whose root ranks last.
    The hot path is one comparison with the root, inline (calls that pass arrays cost refcounts)."""
    hv = np.empty(k, dtype=np.float64)
    hr = np.empty(k, dtype=np.int64)
    hp = np.empty(k, dtype=np.int64)
    size = 0
    for i in range(c):
        p = np.int64(cand[i])
        v = vals[i]
        r = np.int64(id_rank[p])
        if size < k:
            j = size
            size += 1
            while j > 0:  # sift up: parents ranking before the newcomer move down
                parent = (j - 1) >> 1
                if _before(hv[parent], hr[parent], hp[parent], v, r, p):
                    hv[j], hr[j], hp[j] = hv[parent], hr[parent], hp[parent]
                    j = parent
                else:
                    break
            hv[j], hr[j], hp[j] = v, r, p
        elif _before(v, r, p, hv[0], hr[0], hp[0]):
            _sift(hv, hr, hp, 0, size, v, r, p)
    pos = np.empty(size, dtype=np.int64)
    out = np.empty(size, dtype=np.float64)
    for s in range(size - 1, -1, -1):
        pos[s], out[s] = hp[0], hv[0]
        if s > 0:
            _sift(hv, hr, hp, 0, s, hv[s], hr[s], hp[s])
    return pos, out


def _fused_top(indptr, indices, data, terms, acc, touched, vals, id_rank, k):
    """Accumulate the query's postings into `acc` (all zero on entry and on exit), then select
    the top k (k < 0: all) of the positive scores.

    Returns (positions, scores, c, bad, ascending). c == -1: positions/scores are the top k, best
    first, from a bounded heap filled while reading the scores back. Else (k < 0 or large) the c
    positive records are in touched[:c] (scores in vals[:c]; ascending: in position order) for
    `select_top`. bad > 0: that many non-finite scores (the caller refuses).
    """
    total = 0
    for j in range(terms.size):
        t = terms[j]
        total += indptr[t + 1] - indptr[t]
    n = acc.size
    sparse = total * 8 < n  # few postings: track first touches instead of scanning every record
    m = n
    if sparse:
        # a record is listed when its running sum is 0.0 before an addition; listed twice only if
        # a sum returns to 0.0, and the read-back below reads (and zeroes) it once: m <= total < n
        m = 0
        for j in range(terms.size):
            t = terms[j]
            for q in range(indptr[t], indptr[t + 1]):
                d = indices[q]
                if acc[d] == 0.0:
                    touched[m] = d
                    m += 1
                acc[d] += data[q]
    else:
        for j in range(terms.size):
            t = terms[j]
            for q in range(indptr[t], indptr[t + 1]):
                acc[indices[q]] += data[q]
    heap = 0 <= k and k * 4 <= m  # small k: select while reading back
    cap = k if heap else 0
    hv = np.empty(cap, dtype=np.float64)
    hr = np.empty(cap, dtype=np.int64)
    hp = np.empty(cap, dtype=np.int64)
    size = 0
    c = 0
    bad = 0
    if heap and not sparse:  # every record in order: a mostly branch-free pass, then one memset
        chk = 0.0
        lim = 5e-324  # v >= lim: positive while the heap fills, then at least its root's score
        for d in range(n):
            v = acc[d]
            chk += v * 0.0  # NaN once any score is NaN or infinite
            if v >= lim and cap > 0:
                p = np.int64(d)
                r = np.int64(id_rank[d])
                if size < cap:
                    j = size
                    size += 1
                    while j > 0:
                        parent = (j - 1) >> 1
                        if _before(hv[parent], hr[parent], hp[parent], v, r, p):
                            hv[j], hr[j], hp[j] = hv[parent], hr[parent], hp[parent]
                            j = parent
                        else:
                            break
                    hv[j], hr[j], hp[j] = v, r, p
                elif _before(v, r, p, hv[0], hr[0], hp[0]):
                    _sift(hv, hr, hp, 0, size, v, r, p)
                if size == cap:
                    lim = hv[0]
        if chk != chk:
            for d in range(n):
                if not np.isfinite(acc[d]):
                    bad += 1
        acc[:] = 0.0
        m = 0  # nothing left to read back
    for i in range(m):
        d = touched[i] if sparse else i
        v = acc[d]
        if v == 0.0:
            continue
        acc[d] = 0.0
        if not np.isfinite(v):
            bad += 1
        elif v > 0:
            if not heap:
                touched[c] = d
                vals[c] = v
                c += 1
            elif size < cap:
                p = np.int64(d)
                r = np.int64(id_rank[d])
                j = size
                size += 1
                while j > 0:  # sift up: parents ranking before the newcomer move down
                    parent = (j - 1) >> 1
                    if _before(hv[parent], hr[parent], hp[parent], v, r, p):
                        hv[j], hr[j], hp[j] = hv[parent], hr[parent], hp[parent]
                        j = parent
                    else:
                        break
                hv[j], hr[j], hp[j] = v, r, p
            elif cap > 0 and v >= hv[0]:
                p = np.int64(d)
                r = np.int64(id_rank[d])
                if _before(v, r, p, hv[0], hr[0], hp[0]):
                    _sift(hv, hr, hp, 0, size, v, r, p)
    if not heap or bad > 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64), c, bad, not sparse
    pos = np.empty(size, dtype=np.int64)
    out = np.empty(size, dtype=np.float64)
    for s in range(size - 1, -1, -1):
        pos[s], out[s] = hp[0], hv[0]
        if s > 0:
            _sift(hv, hr, hp, 0, s, hv[s], hr[s], hp[s])
    return pos, out, -1, 0, True


def _accumulate(indptr, indices, data, terms, n):
    acc = np.zeros(n, dtype=np.float64)
    for j in range(terms.size):
        t = terms[j]
        for q in range(indptr[t], indptr[t + 1]):
            acc[indices[q]] += data[q]
    return acc


def _accumulate_f(indptr, indices, data, terms, factors, n):
    acc = np.zeros(n, dtype=np.float64)
    for j in range(terms.size):
        t = terms[j]
        f = factors[j]
        for q in range(indptr[t], indptr[t + 1]):
            acc[indices[q]] += data[q] * f
    return acc


def _top_dense(scores, id_rank, k, cand, vals):
    """Positive scores into cand/vals (length >= scores.size), then as `_fused_top`'s tail."""
    bad = 0
    c = 0
    for d in range(scores.size):
        v = scores[d]
        if not np.isfinite(v):
            bad += 1
        elif v > 0:
            cand[c] = d
            vals[c] = v
            c += 1
    if bad > 0 or k < 0 or k * 4 > c:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64), c, bad
    pos, out = heap_top(cand, vals, c, id_rank, k)
    return pos, out, -1, 0
