"""Optional numba kernel for Carrier's PPR walk: all `iterations` steps in one call, without the GIL.

`BACKEND` is "numba" when numba is installed and not disabled by SIDELIGHT_KERNELS=numpy (the
same switch as `sidelight.structures.kernels`), else "numpy": `ppr.py` then runs scipy's `csr_matvec`
per step. numba is imported and the kernels compiled on first use (`enabled()`), cached on disk
when numba finds a writable cache location; a failure sets `BACKEND = "numpy"` and `REASON`.

The kernel is bit-identical to the scipy path in `ppr.py`, step for step:

* row i of P^T p is summed from 0.0 over the row's entries in stored order, as `csr_matvec`
  does (the relabelled layout of `PPRGraph` keeps each row's entries in their original order),
  then multiplied by beta (`q *= beta`);
* when every stored entry equals the inverse out-weight of its source (unit weights, the
  undirected projection), the product data[jj]*p[j] is formed once per node as inv[j]*p[j]:
  the same IEEE product, so the same sums;
* the dangling mass is numpy's pairwise sum of p over the dangling nodes in ascending original
  id (`p[di].sum()`), reproduced exactly by `_pairwise`;
* the seeds then receive (alpha + beta*dangling_mass)*s, as `q[seeds] += ...` does.

No fastmath, so LLVM neither reassociates nor contracts to FMA. numba does not check bounds: the
arrays come from a `PPRGraph` layout and `select_seeds`.

Measured alternatives that did not pay (WordNet nouns, 2 cores): a row-parallel `prange` loop
(faster p50 on an idle machine, p95 x10 when the other core is busy) and frontier-restricted
early iterations (the walk reaches ~all of the graph by step 8-12; the per-row mask costs more
than it saves once rows are in degree order).
"""

from __future__ import annotations

import threading
import types

import numpy as np

from ..structures.kernels import Gate, choose_backend

BACKEND, REASON = choose_backend()

_K: types.SimpleNamespace | None = None  # the compiled kernels (numba dispatchers), built on first use
_LOCK = threading.Lock()


def enabled() -> bool:
    """True when the numba kernel is in use (compiling it on the first call)."""
    global BACKEND, REASON
    if BACKEND != "numba":
        return False
    if _K is None:
        try:
            _compile()
        except Exception as exc:  # pragma: no cover - broken numba install
            BACKEND, REASON = "numpy", f"numba ppr kernel unavailable: {exc!r}"
            return False
    return True


use = Gate(enabled, lambda: _K is not None)  # what `ppr.py` calls (see `Gate`)


def _kernels() -> types.SimpleNamespace:
    """The compiled kernels; every caller has checked `enabled()` first."""
    if _K is None:
        raise RuntimeError("numba ppr kernels used before they were compiled (check enabled() first)")
    return _K


def walk(layout, seeds: np.ndarray, s_vals: np.ndarray, alpha: float, beta: float, iterations: int,
         p: np.ndarray) -> np.ndarray:
    """`iterations` walk steps from `p` (relabelled ids, seeds already placed) over a
    `PPRGraph` layout; returns the final vector (relabelled ids). `p` is overwritten."""
    n = len(p)
    buf = np.empty(n)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64)
    s_vals = np.ascontiguousarray(s_vals, dtype=np.float64)
    if layout.scaled is not None:
        return _kernels().walk_scaled(layout.indptr, layout.indices_u, layout.scaled, layout.dangling, seeds, s_vals,
                              float(alpha), float(beta), int(iterations), p, buf, np.empty(n))
    return _kernels().walk_weighted(layout.indptr, layout.indices_u, layout.data, layout.dangling, seeds, s_vals,
                            float(alpha), float(beta), int(iterations), p, buf)


def pairwise_sum(a: np.ndarray, idx: np.ndarray) -> float:
    """`a[idx].sum()` computed by the kernel's pairwise sum (for tests)."""
    enabled()
    return 0.0 + _kernels().pairwise(np.asarray(a, np.float64), np.asarray(idx, np.int64), 0, len(idx)) if len(idx) else 0.0


# ---- kernels (plain Python until _compile jits them) -------------------------------------------
def _pairwise_leaf(a, idx, lo, n):
    """numpy's pairwise_sum base cases over a[idx[lo:lo+n]], n <= 128: < 8 terms summed in order,
    else 8 interleaved accumulators combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), plus the tail."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[idx[lo + i]]
        return res
    r0 = a[idx[lo]]
    r1 = a[idx[lo + 1]]
    r2 = a[idx[lo + 2]]
    r3 = a[idx[lo + 3]]
    r4 = a[idx[lo + 4]]
    r5 = a[idx[lo + 5]]
    r6 = a[idx[lo + 6]]
    r7 = a[idx[lo + 7]]
    i = 8
    m = n - n % 8
    while i < m:
        r0 += a[idx[lo + i]]
        r1 += a[idx[lo + i + 1]]
        r2 += a[idx[lo + i + 2]]
        r3 += a[idx[lo + i + 3]]
        r4 += a[idx[lo + i + 4]]
        r5 += a[idx[lo + i + 5]]
        r6 += a[idx[lo + i + 6]]
        r7 += a[idx[lo + i + 7]]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[idx[lo + i]]
        i += 1
    return res


def _pairwise(a, idx, lo, n):
    """numpy's pairwise_sum (loops_utils.h) over a[idx[lo:lo+n]]: above 128 terms it splits at n/2
    rounded down to a multiple of 8 and adds the halves' sums. The recursion runs on an explicit
    stack (numba's disk cache cannot reload a self-recursive function)."""
    if n <= 128:
        return _pairwise_leaf(a, idx, lo, n)
    s_lo = np.empty(64, np.int64)  # depth <= log2(n)
    s_n = np.empty(64, np.int64)
    s_stage = np.empty(64, np.int64)
    vals = np.empty(64, np.float64)
    top, nv = 0, 0
    s_lo[0], s_n[0], s_stage[0] = lo, n, 0
    while top >= 0:
        cl, cn = s_lo[top], s_n[top]
        if cn <= 128:
            vals[nv] = _pairwise_leaf(a, idx, cl, cn)
            nv += 1
            top -= 1
            continue
        n2 = cn // 2
        n2 -= n2 % 8
        st = s_stage[top]
        s_stage[top] = st + 1
        if st == 0:  # left half
            top += 1
            s_lo[top], s_n[top], s_stage[top] = cl, n2, 0
        elif st == 1:  # right half
            top += 1
            s_lo[top], s_n[top], s_stage[top] = cl + n2, cn - n2, 0
        else:  # left + right
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
            top -= 1
    return vals[0]


def _walk_scaled(indptr, indices, inv, dangling, seeds, s_vals, alpha, beta, iterations, p, buf, x):
    n = len(indptr) - 1
    for _ in range(iterations):
        dm = 0.0 + _pairwise(p, dangling, 0, len(dangling)) if len(dangling) else 0.0
        for j in range(n):
            x[j] = inv[j] * p[j]
        for i in range(n):
            acc = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                acc += x[indices[jj]]
            buf[i] = acc * beta
        coef = alpha + beta * dm
        for k in range(len(seeds)):
            buf[seeds[k]] += coef * s_vals[k]
        p, buf = buf, p
    return p


def _walk_weighted(indptr, indices, data, dangling, seeds, s_vals, alpha, beta, iterations, p, buf):
    n = len(indptr) - 1
    for _ in range(iterations):
        dm = 0.0 + _pairwise(p, dangling, 0, len(dangling)) if len(dangling) else 0.0
        for i in range(n):
            acc = 0.0
            for jj in range(indptr[i], indptr[i + 1]):
                acc += data[jj] * p[indices[jj]]
            buf[i] = acc * beta
        coef = alpha + beta * dm
        for k in range(len(seeds)):
            buf[seeds[k]] += coef * s_vals[k]
        p, buf = buf, p
    return p


_KERNELS = ("_pairwise_leaf", "_pairwise", "_walk_scaled", "_walk_weighted")


def _compile() -> None:
    """Jit the kernels (callees first, rebinding the module globals), then run them once on tiny
    inputs so the disk cache is loaded (or filled) here rather than mid-query."""
    global _K
    with _LOCK:
        if _K is not None:
            return
        import numba

        g = globals()
        for name in _KERNELS:
            try:
                g[name] = numba.njit(cache=True, nogil=True)(g[name])
            except Exception:  # no writable cache location: compile per process
                g[name] = numba.njit(nogil=True)(g[name])
        k = types.SimpleNamespace(pairwise=_pairwise, walk_scaled=_walk_scaled, walk_weighted=_walk_weighted)
        indptr, indices = np.array([0, 1, 1], np.int32), np.array([0], np.uint32)
        args = (np.array([1], np.int64), np.array([0], np.int64), np.array([1.0]), 0.5, 0.5, 2)
        k.walk_scaled(indptr, indices, np.array([1.0, 0.0]), *args, np.array([1.0, 0.0]), np.empty(2), np.empty(2))
        k.walk_weighted(indptr, indices, np.array([1.0]), *args, np.array([1.0, 0.0]), np.empty(2))
        k.pairwise(np.ones(200), np.arange(200, dtype=np.int64), 0, 200)
        _K = k
