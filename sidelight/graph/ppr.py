"""Carrier R01's graph boost: personalised PageRank seeded by the best text scores.

The rule, exactly as published (Carrier R01 §4):

* the `n_seeds` highest POSITIVE text scores (ties: lower tie rank, by default lower node
  position) seed a distribution `s` proportional to their scores (`s` sums to 1);
* `p = s`, then `iterations` times `p <- alpha*s + (1-alpha)*P^T p`, where P is the
  row-normalised adjacency and the mass sitting on dangling nodes (no out-links) is returned to
  `s` (`+ (1-alpha)*dangling_mass*s`), so `p` sums to 1 after every step;
* `final = (1-lam)*maxnorm(text) + lam*maxnorm(p)`, maxnorm dividing by the largest positive value.

With no positive text score there is no seed: the text scores come back unchanged.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..errors import InputError, NonFiniteScoreError
from . import ppr_kernel


@cache
def _csr_matvec() -> Callable | None:
    """The kernel behind `csr_matrix @ vector`, used in place to skip 20 allocations per query."""
    try:
        from scipy.sparse._sparsetools import csr_matvec
    except ImportError:  # pragma: no cover
        return None
    return csr_matvec


class _Layout:
    """P^T relabelled for the walk: node new id r is old id perm[r], rows by descending entry count
    (ties by old id), so rows of equal length run together (the row loop's branches predict well;
    the hubs' entries of p share cache lines). Each row keeps its entries in their original order,
    so every row sum adds the same products in the same order: the walk is bit-identical."""

    __slots__ = ("perm", "iperm", "indptr", "indices", "indices_u", "data", "scaled", "dangling")

    def __init__(self, m: sp.csr_matrix, inv: np.ndarray, dangling_idx: np.ndarray) -> None:
        n = m.shape[0]
        count = np.diff(m.indptr).astype(np.int64)
        self.perm = np.argsort(-count, kind="stable")
        self.iperm = np.empty(n, np.int64)
        self.iperm[self.perm] = np.arange(n)
        count = count[self.perm]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(count, out=indptr[1:])
        take = np.repeat(m.indptr[self.perm].astype(np.int64) - indptr[:-1], count) + np.arange(indptr[-1])
        self.indptr = indptr.astype(m.indices.dtype)  # csr_matvec wants one index dtype
        self.indices = self.iperm[m.indices[take]].astype(m.indices.dtype)
        self.indices_u = self.indices.view(np.uint32 if self.indices.dtype == np.int32 else np.uint64)
        self.data = m.data[take]
        inv = inv[self.perm]
        # unit weights: every entry is its source's 1/out-weight, so data[jj]*p[j] == inv[j]*p[j]
        self.scaled = inv if np.array_equal(self.data, inv[self.indices]) else None
        self.dangling = self.iperm[dangling_idx]  # ascending OLD id: the order p[di].sum() adds in


class PPRGraph:
    """An adjacency prepared once for many queries: P^T (CSR) and the dangling-node mask.

    Rows are normalised by their weight sums, so a weighted adjacency walks in proportion to
    weight; the undirected projection (weight 1) gives Carrier's uniform walk. The walk itself
    runs on a relabelled copy (`layout()`) and gives the same floats.
    """

    def __init__(self, adjacency: sp.spmatrix) -> None:
        import scipy.sparse as sp
        a = sp.csr_matrix(adjacency, dtype=np.float64)
        if a.shape[0] != a.shape[1]:
            raise InputError(f"ppr: adjacency must be square, got {a.shape}")
        if a.nnz and (not np.all(np.isfinite(a.data)) or a.data.min() < 0):
            raise InputError("ppr: adjacency weights must be finite and >= 0")
        a.eliminate_zeros()
        rowsum = np.asarray(a.sum(axis=1)).ravel()
        self.n = a.shape[0]
        self.dangling = rowsum <= 0
        inv = np.zeros(self.n)
        inv[~self.dangling] = 1.0 / rowsum[~self.dangling]
        self.transition_t = sp.csr_matrix((sp.diags(inv) @ a).T)  # P^T, rows = targets
        self.transition_t.sort_indices()
        self._dangling_idx = np.flatnonzero(self.dangling)
        self._layout = _Layout(self.transition_t, inv, self._dangling_idx)  # ~30 ms on WordNet nouns
        self.n_links = a.nnz

    def layout(self) -> _Layout:
        """The relabelled P^T the walk runs on."""
        return self._layout

    def matvec(self, p: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out = P^T p, written in place (no allocation per iteration)."""
        m = self.transition_t
        kernel = _csr_matvec()
        if kernel is not None:
            out.fill(0.0)
            kernel(self.n, self.n, m.indptr, m.indices, m.data, p, out)
        else:  # pragma: no cover - scipy without the private kernel
            out[:] = m @ p
        return out

    @classmethod
    def of(cls, adjacency: "sp.spmatrix | PPRGraph") -> "PPRGraph":
        return adjacency if isinstance(adjacency, PPRGraph) else cls(adjacency)


def _check_params(alpha: float, lam: float | None, n_seeds: int, iterations: int) -> None:
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"ppr: alpha must lie in [0, 1], got {alpha}")
    if lam is not None and not 0.0 <= lam <= 1.0:
        raise InputError(f"ppr: lam must lie in [0, 1], got {lam}")
    if n_seeds < 1:
        raise InputError(f"ppr: n_seeds must be >= 1, got {n_seeds}")
    if iterations < 0:
        raise InputError(f"ppr: iterations must be >= 0, got {iterations}")


def _check_scores(text_scores: np.ndarray, n: int) -> np.ndarray:
    t = np.asarray(text_scores, dtype=np.float64)
    if t.ndim != 1 or len(t) != n:
        raise InputError(f"ppr: {t.shape} text scores for a graph of {n} nodes")
    if not np.all(np.isfinite(t)):
        bad = int(np.count_nonzero(~np.isfinite(t)))
        raise NonFiniteScoreError(f"ppr: {bad} non-finite text score(s); refusing to rank")
    return t


def select_seeds(text_scores: np.ndarray, n_seeds: int = 20, tie_rank: np.ndarray | None = None) -> np.ndarray:
    """Positions of the `n_seeds` highest positive scores, best first; ties by lower tie rank
    (default: lower position). Empty when no score is positive."""
    t = np.asarray(text_scores, dtype=np.float64)
    cand = np.flatnonzero(t > 0)
    if len(cand) > n_seeds:
        vals = t[cand]
        kth = np.partition(vals, len(vals) - n_seeds)[len(vals) - n_seeds]
        cand = cand[vals >= kth]  # every tie at the boundary survives; the sort below settles it
    tr = cand if tie_rank is None else np.asarray(tie_rank)[cand]
    order = np.lexsort((tr, -t[cand]))
    return cand[order][:n_seeds]


def seed_distribution(text_scores: np.ndarray, n_seeds: int = 20, tie_rank: np.ndarray | None = None) -> np.ndarray:
    """s: zero everywhere except the seeds, proportional to their scores, summing to 1
    (all zeros when there is no positive score)."""
    t = np.asarray(text_scores, dtype=np.float64)
    s = np.zeros(len(t))
    seeds = select_seeds(t, n_seeds, tie_rank)
    if len(seeds):
        s[seeds] = t[seeds] / t[seeds].sum()
    return s


def ppr_vector(text_scores: np.ndarray, adjacency: "sp.spmatrix | PPRGraph", alpha: float, n_seeds: int = 20,
               iterations: int = 20, tie_rank: np.ndarray | None = None, return_mass: bool = False):
    """The walk distribution p after `iterations` steps (zeros without a positive text score).

    With `return_mass`, also returns the list of sum(p) after step 0 (p = s) and every iteration.
    """
    g = PPRGraph.of(adjacency)
    _check_params(alpha, None, n_seeds, iterations)
    t = _check_scores(text_scores, g.n)
    seeds = select_seeds(t, n_seeds, tie_rank)
    p = np.zeros(g.n)
    if not len(seeds):
        return (p, [0.0]) if return_mass else p
    s_vals = t[seeds] / t[seeds].sum()
    p[seeds] = s_vals
    masses = [float(p.sum())] if return_mass else None
    lay = g.layout()
    seeds = lay.iperm[seeds]  # the walk runs on relabelled ids
    p.fill(0.0)
    p[seeds] = s_vals
    p = _walk(lay, seeds, s_vals, alpha, iterations, p, masses)[lay.iperm]
    return (p, masses) if return_mass else p


def _walk(lay: _Layout, seeds: np.ndarray, s_vals: np.ndarray, alpha: float, iterations: int, p: np.ndarray,
          masses: list | None) -> np.ndarray:
    """`iterations` steps of p <- alpha*s + (1-alpha)*(P^T p + dangling_mass*s) on the relabelled
    layout (ids, seeds and p relabelled); appends sum(p) in original order to `masses` if given."""
    beta = 1.0 - alpha
    if ppr_kernel.use():
        if masses is None:
            return ppr_kernel.walk(lay, seeds, s_vals, alpha, beta, iterations, p)
        for _ in range(iterations):
            p = ppr_kernel.walk(lay, seeds, s_vals, alpha, beta, 1, p)
            masses.append(float(p[lay.iperm].sum()))
        return p
    import scipy.sparse as sp

    n, di = len(p), lay.dangling
    kernel = _csr_matvec()
    m = None if kernel is not None else sp.csr_matrix((lay.data, lay.indices, lay.indptr), shape=(n, n))
    buf = np.empty(n)
    for _ in range(iterations):
        dangling_mass = float(p[di].sum()) if len(di) else 0.0
        if kernel is not None:  # q = P^T p, in place
            buf.fill(0.0)
            kernel(n, n, lay.indptr, lay.indices, lay.data, p, buf)
        else:  # pragma: no cover - scipy without the private kernel
            assert m is not None
            buf[:] = m @ p
        buf *= beta
        buf[seeds] += (alpha + beta * dangling_mass) * s_vals
        p, buf = buf, p
        if masses is not None:
            masses.append(float(p[lay.iperm].sum()))
    return p


def maxnorm(x: np.ndarray) -> np.ndarray:
    """x divided by its largest positive value (x unchanged, as float, if none is positive)."""
    x = np.asarray(x, dtype=np.float64)
    top = x.max() if len(x) else 0.0
    return x / top if top > 0 else x.copy()


def ppr_boost(text_scores: np.ndarray, adjacency: "sp.spmatrix | PPRGraph", alpha: float, lam: float,
              n_seeds: int = 20, iterations: int = 20, tie_rank: np.ndarray | None = None) -> np.ndarray:
    """Carrier's graph-assisted score: (1-lam)*maxnorm(text) + lam*maxnorm(p).

    Seeds are the `n_seeds` highest positive text scores (ties by lower `tie_rank`, default lower
    position); s is proportional to score and sums to 1. Nodes with text score 0 can become
    positive through p. Without any positive text score the text scores are returned unchanged
    (as a float64 copy): no seed is invented and no graph score is added. Non-finite text scores
    raise NonFiniteScoreError. Pass a `PPRGraph` to avoid re-normalising the adjacency per query.
    """
    g = PPRGraph.of(adjacency)
    _check_params(alpha, lam, n_seeds, iterations)
    t = _check_scores(text_scores, g.n)
    if not np.any(t > 0):
        return t.copy()
    p = ppr_vector(t, g, alpha, n_seeds, iterations, tie_rank)
    return (1.0 - lam) * maxnorm(t) + lam * maxnorm(p)
