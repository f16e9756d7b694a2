"""RRF over positive candidates, computed by hand."""

from __future__ import annotations

import numpy as np

from sidelight.index import Index
from sidelight.structures.fusion import rrf_scores
from sidelight.structures.ranking import Ranking, top_k


def test_rrf_hand_computed():
    a = Ranking(np.array([2, 0]), np.array([3.0, 1.0]))
    b = Ranking(np.array([0, 3, 2]), np.array([0.9, 0.5, 0.1]))
    fused = rrf_scores([a, b], n=5)
    expected = [1 / 62 + 1 / 61, 0, 1 / 61 + 1 / 63, 1 / 62, 0]
    np.testing.assert_allclose(fused, expected, rtol=1e-15)
    # record 1 and 4 were never scored positive by either part: they are not candidates
    assert set(top_k(fused, None, np.arange(5)).positions.tolist()) == {0, 2, 3}


def test_rrf_lexical_method_uses_only_positive_ranks(toy_corpus):
    index = Index.build(toy_corpus, progress=False)
    hits = index.search("fish", method="rrf-lexical", k=10)
    assert [h.id for h in hits] == ["d4"]
    assert hits[0].score == 2 / 61
