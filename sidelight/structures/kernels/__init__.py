"""Optional numba kernels for the lexical lane: fused BM25 top-k, score accumulation, dense top-k.

`BACKEND` says which path the lanes take: "numba" when numba is installed (the `bench` extra)
and not disabled by SIDELIGHT_KERNELS=numpy, else "numpy" (the reference implementation in
`lexical.py` / `ranking.py`). numba is imported and the kernels compiled on first use, not at
import; if that fails, `BACKEND` becomes "numpy" and `REASON` says why. Compiled code is cached
on disk (`cache=True`) when numba finds a writable cache location, else it is compiled per process.

Every kernel is exact with respect to the numpy path: postings are added term by term in query
order, starting from 0.0 (the order `np.bincount` adds them in `lexical.accumulate_scores`), so scores are
bit-identical; rankings order by (score desc, id_rank asc, position asc), which is what
`select_top`'s stable lexsort yields; only positive scores rank; a non-finite score raises the
same NonFiniteScoreError as `check_finite` (untouched records score 0.0, so checking the touched
ones is checking all; the pruned kernel checks its survivors and sends a query whose terms have
a non-finite upper bound to the full kernel).

numba does not check bounds: the entry points take arrays straight from a LexicalIndex (CSC
weights, valid term ids) and check that `id_rank` covers every record.

The kernels themselves are in `fused` (fused top-k, accumulation, dense top-k and the heap they
share) and `pruned` (MaxScore top-k); this module chooses the backend, compiles them, and holds
the entry points and their per-thread scratch buffers.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from ...errors import NonFiniteScoreError
from ..selection import Ranking, select_top
from . import count, fused, pruned, transpose


def choose_backend() -> tuple[str, str]:
    """("numba", "") when numba is installed and not switched off by SIDELIGHT_KERNELS=numpy,
    else ("numpy", why). Shared by every module with optional numba kernels."""
    if os.environ.get("SIDELIGHT_KERNELS", "").strip().lower() == "numpy":
        return "numpy", "disabled by SIDELIGHT_KERNELS=numpy"
    if importlib.util.find_spec("numba") is None:
        return "numpy", "numba is not installed"
    return "numba", ""


BACKEND, REASON = choose_backend()
WARM_AFTER = 8  # calls a process makes on the reference path before it pays numba's start-up
BUILD_THREADS = min(2, os.cpu_count() or 1)  # threads the build's tokenizer and counter split a chunk between
SPLIT_MIN = 1024  # texts in a chunk from which the build splits it


class Gate:
    """When the lanes take compiled kernels: at once if they are compiled, else only once the
    process has asked `WARM_AFTER` times. Loading numba and its cached kernels costs about half a
    second, more than a one-off query (a CLI call) takes on the numpy path, which gives the same
    scores and rankings bit for bit; batch work (`search_many`), servers and benchmarks call
    `enabled()` up front instead."""

    def __init__(self, enabled: Callable[[], bool], compiled: Callable[[], bool]):
        self._enabled, self._compiled, self._asked = enabled, compiled, 0

    def __call__(self) -> bool:
        if self._compiled():
            return True
        self._asked += 1  # unlocked: a lost increment only delays the compile by a call
        return self._asked > WARM_AFTER and self._enabled()

_K: types.SimpleNamespace | None = None  # the compiled kernels (numba dispatchers), built on first use
_LOCK = threading.Lock()
_SCRATCH = threading.local()  # per thread: acc (float64), touched (int64), vals (float64), slot (int64)


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


use = Gate(enabled, lambda: _K is not None)  # what the lanes call


def _kernels() -> types.SimpleNamespace:
    """The compiled kernels; every caller has checked `enabled()` first."""
    if _K is None:
        raise RuntimeError("numba kernels used before they were compiled (check enabled() first)")
    return _K


# ---- entry points (callers check `enabled()` first) -------------------------------------------
def bm25_top(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, terms: np.ndarray, n: int,
             k: int | None, id_rank: np.ndarray):
    """`top_k(accumulate_scores(...), k, id_rank)` for the CSC columns `terms`, as a Ranking."""
    _check_ids(id_rank, n)
    acc, touched, vals, _ = _scratch(n)
    pos, out, c, bad, ascending = _kernels().fused_top(indptr, indices, data, terms, acc, touched, vals, id_rank,
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
    acc, touched, vals, slot = _scratch(n)
    pos, out, bad = _kernels().pruned_top(indptr, indices, data, terms, ub, dense_row, dense, acc, slot, touched, vals,
                                  id_rank, max(min(int(k), n), 1), float(margin))
    if bad < 0:
        return bm25_top(indptr, indices, data, terms, n, k, id_rank)
    if bad:
        raise NonFiniteScoreError(f"ranking: {bad} non-finite score(s); refusing to rank")
    return Ranking(pos, out)


def accumulate(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, terms: np.ndarray, n: int,
               factors: np.ndarray | None) -> np.ndarray:
    """The dense score vector, with the same float operations as `lexical.accumulate_scores`."""
    if factors is None:
        return _kernels().accumulate(indptr, indices, data, terms, n)
    return _kernels().accumulate_f(indptr, indices, data, terms, np.asarray(factors, dtype=np.float64), n)


def top_dense(scores: np.ndarray, k: int | None, id_rank: np.ndarray):
    """`top_k(scores, k, id_rank)` (positive only, no candidates) for 1-D float64 scores, as a Ranking."""
    _check_ids(id_rank, len(scores))
    _, touched, vals, _ = _scratch(len(scores))
    pos, out, c, bad = _kernels().top_dense(scores, id_rank, -1 if k is None else max(int(k), 0), touched, vals)
    return _finish(pos, out, c, bad, True, touched, vals, k, id_rank)


def _check_ids(id_rank: np.ndarray, n: int) -> None:
    if id_rank.ndim != 1 or len(id_rank) < n:
        raise IndexError(f"id_rank has {len(id_rank)} entries for {n} records")


def _finish(pos, out, c, bad, ascending, touched, vals, k, id_rank):
    if bad:
        raise NonFiniteScoreError(f"ranking: {bad} non-finite score(s); refusing to rank")
    if c < 0:  # the kernel selected the top k itself
        return Ranking(pos, out)
    cand, v = touched[:c], vals[:c]  # views of the scratch buffers; select_top returns copies
    if not ascending:  # flatnonzero order, so that select_top's stable sort settles as in numpy
        order = np.argsort(cand, kind="stable")
        cand, v = cand[order], v[order]
    return select_top(cand, v, k, id_rank)


def _warmup() -> None:
    """One tiny call per kernel, with the dtypes an index uses (int32 CSC arrays, int64 ids)."""
    indptr = np.array([0, 2, 3], dtype=np.int32)
    indices = np.array([0, 1, 1], dtype=np.int32)
    data = np.array([1.0, 2.0, 3.0])
    terms = np.array([0, 1], dtype=np.int64)
    id_rank = np.arange(2, dtype=np.int64)
    acc, touched, vals = np.zeros(2), np.zeros(3, dtype=np.int64), np.zeros(2)  # touched: n + 1
    _kernels().fused_top(indptr, indices, data, terms, acc, touched, vals, id_rank, 1)
    _kernels().accumulate(indptr, indices, data, terms, 2)
    _kernels().accumulate_f(indptr, indices, data, terms, data[:2], 2)
    _kernels().top_dense(data[:2], id_rank, 1, touched, vals)
    _kernels().pruned_top(indptr, indices, data, terms, data[:2], np.full(2, -1, dtype=np.int64), np.zeros((0, 2)), acc,
                  np.zeros(2, dtype=np.int64), touched, vals, id_rank, 1, 1e-9)
    ids, lengths = RawTokens()(["ab cd AB", "ab"])
    count_rows(ids.astype(np.int32), lengths)
    weigh_transpose(indices, indices, indices, 0, np.arange(2, dtype=np.int64), data, data[:2], 1.0,
                    np.zeros(3), np.zeros(3, dtype=np.int32), np.zeros(2))


def count_rows(ids: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct terms per record, terms, counts) of a chunk's term ids (see `count._count_rows`);
    a large chunk's two halves of records are counted in two threads (records are independent)."""
    ids, lengths = np.ascontiguousarray(ids, dtype=np.int32), np.ascontiguousarray(lengths, dtype=np.int64)
    if BUILD_THREADS < 2 or len(lengths) < SPLIT_MIN:
        return _kernels().count_rows(ids, lengths)
    half = len(lengths) // 2
    cut = int(lengths[:half].sum())
    first, second = _side_by_side(lambda: _kernels().count_rows(ids[:cut], lengths[:half]),
                                  lambda: _kernels().count_rows(ids[cut:], lengths[half:]))
    return tuple(np.concatenate(pair) for pair in zip(first, second))  # type: ignore[return-value]


def _side_by_side(here: Callable, there: Callable) -> tuple:
    """(here(), there()), `there` run in a second thread meanwhile (the kernels release the GIL)."""
    with ThreadPoolExecutor(1) as pool:
        later = pool.submit(there)
        return here(), later.result()


def weigh_transpose(rows: np.ndarray, terms: np.ndarray, tf: np.ndarray, lo: int, start: np.ndarray,
                    norm: np.ndarray, idf: np.ndarray, scale: float, data: np.ndarray, indices: np.ndarray,
                    ub: np.ndarray) -> None:
    """One term range of the build weighed and in term-major order, its bounds in `ub` (see `transpose`)."""
    _kernels().weigh_transpose(rows, terms, tf, lo, start, norm, idf, scale, data, indices, ub)


class RawTokens:
    """Raw token ids, in order of first appearance, for chunks of texts (see `count`); one
    instance spans the chunks of one count, so ids stay the same across them."""

    def __init__(self) -> None:
        self.table = np.zeros((1 << 16, 2), dtype=np.uint64)
        self.key_off = np.zeros(1 << 14, dtype=np.int64)  # token k's bytes: key_bytes[key_off[k]:key_off[k + 1]]
        self.key_bytes = np.zeros(1 << 20, dtype=np.uint8)
        self.n_keys = self.key_used = 0
        self._other: RawTokens | None = None  # the table of the second thread's halves, kept across chunks
        self._here = np.zeros(0, dtype=np.int32)  # _here[k]: this table's id of the other table's token k

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(raw token ids of the texts in order, tokens per text). A large chunk is split in two:
        the second half goes through a second table in another thread (the kernel releases the
        GIL); then the tokens new to that table, in its order of first appearance, go through this
        one as one text, which gives each its id here (new ones in that order, so ids stay in
        order of first appearance over all texts), and the second half's ids are mapped."""
        if BUILD_THREADS < 2 or len(texts) < SPLIT_MIN:
            return self._scan(texts)
        if self._other is None:
            self._other = RawTokens()
        half, other = len(texts) // 2, self._other
        (ids, lengths), (ids_b, lengths_b) = _side_by_side(lambda: self._scan(texts[:half]),
                                                           lambda: other._scan(texts[half:]))
        if other.n_keys > len(self._here):  # the second table's new tokens: their ids in this one
            joined = " ".join(other.keys(len(self._here), other.n_keys))
            self._here = np.concatenate([self._here, self._scan([joined])[0].astype(np.int32)])
        return np.concatenate([ids, self._here[ids_b]]), np.concatenate([lengths, lengths_b])

    def _scan(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """`__call__` in this thread, with this table only."""
        # str.lower may turn a non-ASCII character into ASCII letters (U+212A KELVIN SIGN -> "k"),
        # so only ASCII texts (a flag CPython keeps) leave lowercasing to the kernel
        parts = [t.encode() if t.isascii() else t.lower().encode() for t in texts]
        ends = np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)))
        buf = np.frombuffer(b"".join(parts), dtype=np.uint8)
        ids = np.empty(len(buf) // 2 + len(texts) + 1, dtype=np.int32)  # a token per 2 bytes, plus one per text
        doc_len = np.zeros(len(texts), dtype=np.int64)
        pos = doc = n_ids = 0
        while True:
            pos, doc, n_ids, self.n_keys, self.key_used = _kernels().tokenize(
                buf, ends, pos, doc, count.BYTE_CLASS, self.table, self.key_off, self.n_keys,
                self.key_bytes, self.key_used, ids, n_ids, doc_len)
            if doc == len(texts):
                return ids[:n_ids], doc_len
            self._grow()

    def _grow(self) -> None:
        if 2 * (self.n_keys + 1) > len(self.table):
            self.table = _kernels().rehash(self.table, 2 * len(self.table))
        elif self.n_keys + 2 > len(self.key_off):
            self.key_off = np.concatenate([self.key_off, np.zeros_like(self.key_off)])
        else:
            self.key_bytes = np.concatenate([self.key_bytes, np.zeros_like(self.key_bytes)])

    def keys(self, lo: int, hi: int) -> list[str]:
        """Raw tokens lo to hi - 1 (ASCII text)."""
        off = self.key_off[lo:hi + 1]
        blob = self.key_bytes[int(off[0]):int(off[-1])].tobytes().decode("ascii")
        cuts = (off - off[0]).tolist()
        return [blob[a:z] for a, z in zip(cuts, cuts[1:])]


def _scratch(n: int):
    """Per-thread buffers: acc, touched, vals and slot (acc and slot all zero between calls), of n
    entries, touched of n + 1 (the pruned kernel's branch-free list writes one past its end)."""
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None or len(bufs[0]) < n:
        bufs = _SCRATCH.bufs = (np.zeros(n), np.zeros(n + 1, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=np.int64))
    if len(bufs[0]) > n:
        return bufs[0][:n], bufs[1][:n + 1], bufs[2][:n], bufs[3][:n]
    return bufs


def _compile() -> None:
    """Jit every kernel of `fused` and `pruned`, rebinding their module globals (callees are globals),
    then run each once on tiny inputs: loads them from numba's disk cache (or compiles them, the
    first time), so the first query is not slow and a broken numba shows up here, not mid-query."""
    global _K
    with _LOCK:
        if _K is not None:
            return
        import numba

        for mod in (count, fused, pruned, transpose):
            for name in mod.KERNELS:
                try:
                    setattr(mod, name, numba.njit(cache=True, nogil=True)(getattr(mod, name)))
                except Exception:  # no writable cache location: compile per process
                    setattr(mod, name, numba.njit(nogil=True)(getattr(mod, name)))
        pruned.heap_top = fused.heap_top  # the jitted one, before `pruned_top` is first compiled
        _K = types.SimpleNamespace(fused_top=fused._fused_top, accumulate=fused._accumulate,
                                   accumulate_f=fused._accumulate_f, top_dense=fused._top_dense,
                                   pruned_top=pruned._pruned_top, tokenize=count._tokenize, rehash=count._rehash,
                                   count_rows=count._count_rows, weigh_transpose=transpose._weigh_transpose)
        try:
            _warmup()
        except Exception:
            _K = None
            raise
