"""Rankings from score vectors: top-k without a full sort, ties by ascending id, fail closed on NaN/inf."""

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


def top_k(scores: np.ndarray, k: int | None, id_rank: np.ndarray, positive_only: bool = True,
          candidates: np.ndarray | None = None) -> Ranking:
    """The k best positions by score, ties broken by `id_rank` (position in ascending-id order).

    With `positive_only`, zero and negative scores are never ranked (no artificial tails).
    `candidates` restricts the search to those positions when the caller knows where scores live.
    """
    check_finite(scores if candidates is None else scores[candidates], "ranking")
    cand = np.arange(len(scores)) if candidates is None else candidates
    if positive_only:
        cand = cand[scores[cand] > 0]
    if k is not None and k < len(cand):
        vals = scores[cand]
        kth = np.partition(vals, len(vals) - k)[len(vals) - k]
        cand = cand[vals >= kth]  # keeps every tie at the boundary; the sort below settles them
    order = np.lexsort((id_rank[cand], -scores[cand]))
    picked = cand[order][:k] if k is not None else cand[order]
    return Ranking(picked.astype(np.int64, copy=False), scores[picked].astype(np.float64, copy=False))
