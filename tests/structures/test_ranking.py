"""top_k against a full sort with explicit tie rules."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.errors import NonFiniteScoreError
from sidelight.structures.ranking import top_k


def _reference(scores, k, id_rank, positive_only=True):
    idx = [i for i in range(len(scores)) if scores[i] > 0 or not positive_only]
    idx.sort(key=lambda i: (-scores[i], id_rank[i]))
    return idx[:k]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [1, 3, 10, 50, None])
def test_top_k_matches_full_sort_with_many_ties(seed, k):
    rng = np.random.default_rng(seed)
    scores = rng.integers(-2, 5, size=200).astype(float)  # heavy ties, some zero and negative
    id_rank = rng.permutation(200)
    got = top_k(scores, k, id_rank).positions.tolist()
    assert got == _reference(scores, k if k is not None else 200, id_rank)
    got_all = top_k(scores, k, id_rank, positive_only=False).positions.tolist()
    assert got_all == _reference(scores, k if k is not None else 200, id_rank, positive_only=False)


def test_non_finite_scores_fail_closed():
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(NonFiniteScoreError):
            top_k(np.array([1.0, bad, 0.5]), 2, np.arange(3))


def test_k_zero_gives_an_empty_ranking():
    assert len(top_k(np.array([1.0, 2.0]), 0, np.arange(2))) == 0
