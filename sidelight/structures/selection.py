"""The ranking type and the numpy top-k selection every path ends in: ties by ascending id, fail
closed on NaN/inf. Below both `ranking` (which may take the compiled kernels) and `kernels` (which
hand their candidates back here), so neither imports the other's internals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NonFiniteScoreError


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
