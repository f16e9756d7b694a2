"""Optional numba kernels for the lexical lane: fused BM25 top-k, score accumulation, dense top-k.

`BACKEND` says which path the lanes take: "numba" when numba is installed (the `bench` extra)
and not disabled by SIDELIGHT_KERNELS=numpy, else "numpy" (the reference implementation in
`lexical.py` / `ranking.py`). numba is imported and the kernels compiled on first use, not at
import; if that fails, `BACKEND` becomes "numpy" and `REASON` says why. Compiled code is cached
on disk (`cache=True`) when numba finds a writable cache location, else it is compiled per process.

Every kernel is exact with respect to the numpy path: postings are added term by term in query
order, starting from 0.0 (the order `np.bincount` adds them in `_accumulate`), so scores are
bit-identical; rankings order by (score desc, id_rank asc, position asc), which is what
`select_top`'s stable lexsort yields; only positive scores rank; a non-finite score raises the
same NonFiniteScoreError as `check_finite` (untouched records score 0.0, so checking the touched
ones is checking all; the pruned kernel checks its survivors and sends a query whose terms have
a non-finite upper bound to the full kernel).

numba does not check bounds: the entry points take arrays straight from a LexicalIndex (CSC
weights, valid term ids) and check that `id_rank` covers every record.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import types

import numpy as np

from ..errors import NonFiniteScoreError

def choose_backend() -> tuple[str, str]:
    """("numba", "") when numba is installed and not switched off by SIDELIGHT_KERNELS=numpy,
    else ("numpy", why). Shared by every module with optional numba kernels."""
    if os.environ.get("SIDELIGHT_KERNELS", "").strip().lower() == "numpy":
        return "numpy", "disabled by SIDELIGHT_KERNELS=numpy"
    if importlib.util.find_spec("numba") is None:
        return "numpy", "numba is not installed"
    return "numba", ""


BACKEND, REASON = choose_backend()

_K = None  # the compiled kernels (a namespace), built on first use
_LOCK = threading.Lock()
_SCRATCH = threading.local()  # per thread: acc (float64), touched (int64), vals (float64), buf (float64)
_Ranking = _select_top = None  # from .ranking, bound in _compile (ranking imports this module)


def enabled() -> bool:
    """True when the numba kernels are in use (compiling them on the first call)."""
    global BACKEND, REASON
    if BACKEND != "numba":
        return False
    if _K is None:
        try:
            _compile()
        except Exception as exc:  # pragma: no cover - broken numba install
            BACKEND, REASON = "numpy", f"numba kernels unavailable: {exc!r}"
            return False
    return True


# ---- entry points (callers check `enabled()` first) -------------------------------------------
def bm25_top(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, terms: np.ndarray, n: int,
             k: int | None, id_rank: np.ndarray):
    """`top_k(_accumulate(...), k, id_rank)` for the CSC columns `terms`, as a Ranking."""
    _check_ids(id_rank, n)
    acc, touched, vals, _ = _scratch(n)
    pos, out, c, bad, ascending = _K.fused_top(indptr, indices, data, terms, acc, touched, vals, id_rank,
                                               -1 if k is None else max(int(k), 0))
    return _finish(pos, out, c, bad, ascending, touched, vals, k, id_rank)


def bm25_top_pruned(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, terms: np.ndarray, n: int,
                    k: int, id_rank: np.ndarray, ub: np.ndarray, dense_row: np.ndarray, dense: np.ndarray,
                    margin: float):
    """`bm25_top` for k > 0 with MaxScore pruning, as `LexicalIndex._bm25_top_pruned` (see there):
    exact, the same scores (the survivors are rescored in query order) and ranking.

    `ub` (per-term largest weight) must be current; a non-finite bound among the query's terms
    sends the query to the full kernel, which refuses non-finite scores as numpy does."""
    _check_ids(id_rank, n)
    acc, touched, vals, buf = _scratch(n)
    pos, out, bad = _K.pruned_top(indptr, indices, data, terms, ub, dense_row, dense, acc, buf, touched, vals,
                                  id_rank, max(min(int(k), n), 1), float(margin))
    if bad < 0:
        return bm25_top(indptr, indices, data, terms, n, k, id_rank)
    if bad:
        raise NonFiniteScoreError(f"ranking: {bad} non-finite score(s); refusing to rank")
    return _Ranking(pos, out)


def accumulate(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, terms: np.ndarray, n: int,
               factors: np.ndarray | None) -> np.ndarray:
    """The dense score vector, with the same float operations as `_accumulate`."""
    if factors is None:
        return _K.accumulate(indptr, indices, data, terms, n)
    return _K.accumulate_f(indptr, indices, data, terms, np.asarray(factors, dtype=np.float64), n)


def top_dense(scores: np.ndarray, k: int | None, id_rank: np.ndarray):
    """`top_k(scores, k, id_rank)` (positive only, no candidates) for 1-D float64 scores, as a Ranking."""
    _check_ids(id_rank, len(scores))
    _, touched, vals, _ = _scratch(len(scores))
    pos, out, c, bad = _K.top_dense(scores, id_rank, -1 if k is None else max(int(k), 0), touched, vals)
    return _finish(pos, out, c, bad, True, touched, vals, k, id_rank)


def _check_ids(id_rank: np.ndarray, n: int) -> None:
    if id_rank.ndim != 1 or len(id_rank) < n:
        raise IndexError(f"id_rank has {len(id_rank)} entries for {n} records")


def _finish(pos, out, c, bad, ascending, touched, vals, k, id_rank):
    if bad:
        raise NonFiniteScoreError(f"ranking: {bad} non-finite score(s); refusing to rank")
    if c < 0:  # the kernel selected the top k itself
        return _Ranking(pos, out)
    cand, v = touched[:c], vals[:c]  # views of the scratch buffers; select_top returns copies
    if not ascending:  # flatnonzero order, so that select_top's stable sort settles as in numpy
        order = np.argsort(cand, kind="stable")
        cand, v = cand[order], v[order]
    return _select_top(cand, v, k, id_rank)


def warmup() -> None:
    """Load (or compile) the kernels now rather than on the first query; a no-op on numpy."""
    enabled()


def _warmup() -> None:
    """One tiny call per kernel, with the dtypes an index uses (int32 CSC arrays, int64 ids)."""
    indptr = np.array([0, 2, 3], dtype=np.int32)
    indices = np.array([0, 1, 1], dtype=np.int32)
    data = np.array([1.0, 2.0, 3.0])
    terms = np.array([0, 1], dtype=np.int64)
    id_rank = np.arange(2, dtype=np.int64)
    acc, touched, vals = np.zeros(2), np.zeros(2, dtype=np.int64), np.zeros(2)
    _K.fused_top(indptr, indices, data, terms, acc, touched, vals, id_rank, 1)
    _K.accumulate(indptr, indices, data, terms, 2)
    _K.accumulate_f(indptr, indices, data, terms, data[:2], 2)
    _K.top_dense(data[:2], id_rank, 1, touched, vals)
    _K.pruned_top(indptr, indices, data, terms, data[:2], np.full(2, -1, dtype=np.int64), np.zeros((0, 2)), acc,
                  np.zeros(2), touched, vals, id_rank, 1, 1e-9)


def _scratch(n: int):
    """Per-thread buffers of n entries: acc and buf (all zero between calls), touched, vals."""
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None or len(bufs[0]) < n:
        bufs = _SCRATCH.bufs = (np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n))
    if len(bufs[0]) > n:
        return tuple(b[:n] for b in bufs)
    return bufs


# ---- the kernels (plain Python here; `_compile` replaces them by their jitted versions) -------------
_KERNELS = ("_before", "_sift", "_heap_top", "_fused_top", "_accumulate", "_accumulate_f", "_top_dense",
            "_kth_largest", "_add_term", "_pruned_top")


def _compile() -> None:
    """Jit every kernel in dependency order, rebinding the module globals (callees are globals), then
    run each once on tiny inputs: loads them from numba's disk cache (or compiles them, the first
    time), so the first query is not slow and a broken numba shows up here, not mid-query."""
    global _K, _Ranking, _select_top
    with _LOCK:
        if _K is not None:
            return
        import numba

        from .ranking import Ranking as _Ranking, select_top as _select_top  # noqa: F811 (no cycle at call time)

        g = globals()
        for name in _KERNELS:
            try:
                g[name] = numba.njit(cache=True, nogil=True)(g[name])
            except Exception:  # no writable cache location: compile per process
                g[name] = numba.njit(nogil=True)(g[name])
        _K = types.SimpleNamespace(fused_top=_fused_top, accumulate=_accumulate, accumulate_f=_accumulate_f,
                                   top_dense=_top_dense, pruned_top=_pruned_top)
        try:
            _warmup()
        except Exception:
            _K = None
            raise


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


def _heap_top(cand, vals, c, id_rank, k):
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
    pos, out = _heap_top(cand, vals, c, id_rank, k)
    return pos, out, -1, 0


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


def _add_term(part, cand, c, t, indptr, indices, data, dense_row, dense, buf):
    """part[i] += weight of term t in record cand[i], for i < c (nothing where t is absent)."""
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
    else:  # scatter the postings, gather the candidates, clear
        for q in range(lo, hi):
            buf[indices[q]] = data[q]
        for i in range(c):
            part[i] += buf[cand[i]]
        for q in range(lo, hi):
            buf[indices[q]] = 0.0


def _pruned_top(indptr, indices, data, terms, ub, dense_row, dense, acc, buf, touched, vals, id_rank, k, margin):
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
        for q in range(lo, hi):
            d = indices[q]
            if acc[d] == 0.0:  # first touch (or a sum back at 0.0: listed again, read once below)
                if m < n:
                    touched[m] = d
                    m += 1
                else:
                    overflow = True
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
        if v != 0.0:
            acc[d] = 0.0
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
            if (v >= lim) if lim > 0 else (v > 0):
                touched[c] = d
                vals[c] = v
                c += 1
    if size == k:
        theta = max(theta, heap[0])
        lim = theta * low - rest[last]
        if lim > 0:
            kept = 0
            for i in range(c):
                if vals[i] >= lim:
                    touched[kept] = touched[i]
                    vals[kept] = vals[i]
                    kept += 1
            c = kept
    # 3. the other terms by lookup, term at a time (falling bound order); after each, theta rises
    # to the k-th best partial sum and candidates that cannot reach it drop out
    for j in range(last + 1, nt):
        _add_term(vals, touched, c, ranked[j], indptr, indices, data, dense_row, dense, buf)
        if c > k:
            theta = max(theta, _kth_largest(vals, np.arange(c), 0, c, k, heap))
        cut = theta * low - rest[j]
        kept = 0
        for i in range(c):
            if vals[i] >= cut:
                touched[kept] = touched[i]
                vals[kept] = vals[i]
                kept += 1
        c = kept
    if c > k:  # near-ties of the k-th partial sum stay for the exact sums
        kth = _kth_largest(vals, np.arange(c), 0, c, k, heap) * low
        kept = 0
        for i in range(c):
            if vals[i] >= kth:
                touched[kept] = touched[i]
                kept += 1
        c = kept
    # 4. exact scores in query order from 0.0 (as _accumulate), positive ones ranked
    exact = np.zeros(c)
    for j in range(nt):
        _add_term(exact, touched, c, terms[j], indptr, indices, data, dense_row, dense, buf)
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
