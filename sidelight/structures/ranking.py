"""Rankings from score vectors: top-k without a full sort, ties by ascending id, fail closed on NaN/inf.

`Ranking`, `check_finite` and `select_top` live in `selection` (the compiled kernels use them too)."""

from __future__ import annotations

import numpy as np

from . import kernels as _kernels
from .selection import Ranking, check_finite, select_top

__all__ = ["Ranking", "check_finite", "select_top", "top_k"]


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
