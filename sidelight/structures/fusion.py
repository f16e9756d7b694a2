"""Rank fusion as a named method of its own: reciprocal rank fusion over positive candidates only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .ranking import Ranking

RRF_K = 60


def rrf_scores(rankings: Sequence[Ranking], n: int, k: int = RRF_K,
               weights: Sequence[float] | None = None) -> np.ndarray:
    """Sum of w / (k + rank) over the rankings each record appears in; zero elsewhere.

    Ranks are 1-based positions in each (already positive-only) ranking, so records that a
    component never scored contribute nothing: no zero-score tails become candidates.
    """
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise InputError(f"rrf: {len(rankings)} rankings but {len(weights)} weights")
    fused = np.zeros(n, dtype=np.float64)
    for ranking, w in zip(rankings, weights):
        ranks = np.arange(1, len(ranking) + 1, dtype=np.float64)
        fused[ranking.positions] += w / (k + ranks)
    return fused
