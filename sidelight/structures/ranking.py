"""Rankings from score vectors: top-k without a full sort, ties by ascending id, fail closed on NaN/inf."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NonFiniteScoreError
from . import kernels as _kernels


@dataclass(frozen=True)
class Ranking:
    """Record positions best first, with their scores."""

    positions: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.positions)


def check_finite(scores: np.ndarray, what: str) -> None:
    """Refuse NaN and infinities: a ranking built on them would be arbitrary."""
    if not np.all(np.isfinite(scores)):
        bad = int(np.count_nonzero(~np.isfinite(scores)))
        raise NonFiniteScoreError(f"{what}: {bad} non-finite score(s); refusing to rank")


def top_k(scores: np.ndarray, k: int | None, id_rank: np.ndarray, positive_only: bool = True) -> Ranking:
    """The k best positions by score, ties broken by `id_rank` (position in ascending-id order).

    With `positive_only`, zero and negative scores are never ranked (no artificial tails).
    """
    if (positive_only and _kernels.use() and scores.dtype == np.float64
            and scores.ndim == 1):  # one compiled pass plus a bounded heap; same ranking and errors
        return _kernels.top_dense(scores, k, id_rank)
    if not np.isfinite(np.add.reduce(scores, dtype=np.float64)):  # one pass; exact check on doubt
        check_finite(scores, "ranking")
    cand = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    return select_top(cand, scores[cand], k, id_rank)


def select_top(cand: np.ndarray, vals: np.ndarray, k: int | None, id_rank: np.ndarray) -> Ranking:
    """The k best of positions `cand` with scores `vals` (finite), ties by `id_rank`; no full sort."""
    if k is not None and k <= 0:
        cand, vals = cand[:0], vals[:0]
    elif k is not None and k < len(cand):
        kth = np.partition(vals, len(vals) - k)[len(vals) - k]
        keep = vals >= kth  # keeps every tie at the boundary; the sort below settles them
        cand, vals = cand[keep], vals[keep]
    order = np.lexsort((id_rank[cand], -vals))
    if k is not None:
        order = order[:k]
    return Ranking(cand[order].astype(np.int64, copy=False), vals[order].astype(np.float64, copy=False))
