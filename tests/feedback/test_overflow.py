"""Issue 45 item 2: an edge weight near the float limit cannot poison the relation lane."""

import math

import pytest

from sidelight.corpus.jsonl import read_edges
from sidelight.corpus.model import MAX_EDGE_WEIGHT
from sidelight.errors import InputError
from sidelight.feedback import CAP_FACTOR, ETA, StateStore
from sidelight.graph import Graph


def _path_hit(base: float) -> list[dict]:
    return [{"node_id": "B", "rank": 1, "score": 1.0,
             "path": [{"source": "A", "target": "B", "type": "link", "weight": base, "base_weight": base}]}]


def test_edges_file_refuses_a_weight_past_the_bound(tmp_path):
    f = tmp_path / "e.tsv"
    f.write_text("a\tb\tlink\t1e308\n")
    with pytest.raises(InputError, match=r"e\.tsv:1: edge weight must be finite, positive and at most"):
        read_edges(f)
    f.write_text(f"a\tb\tlink\t{MAX_EDGE_WEIGHT:g}\n")
    assert read_edges(f)[0][0].weight == MAX_EDGE_WEIGHT


def test_graph_refuses_a_weight_past_the_bound():
    with pytest.raises(InputError, match="at most"):
        Graph.from_arrays(2, [0], [1], [1e308])


def test_a_success_that_would_overflow_commits_nothing(tmp_path):
    with StateStore(tmp_path / "state.sqlite") as store:
        trace = store.new_trace("q", "relation", _path_hit(1e308))
        with pytest.raises(InputError, match="not finite"):
            store.record_success(trace, "B")
        assert store.successes() == [] and store.overlay() == {}


def test_reinforcement_at_the_bound_stays_finite_and_capped(tmp_path):
    base = MAX_EDGE_WEIGHT
    with StateStore(tmp_path / "state.sqlite") as store:
        for k in range(1, 40):
            store.record_success(store.new_trace("q", "relation", _path_hit(base)), "B")
            delta = store.overlay()[("A", "B", "link")]
            # closed form of d <- d + ETA * (CAP * b - (b + d)) from d = 0
            assert delta == pytest.approx(base * (CAP_FACTOR - 1) * (1 - (1 - ETA) ** k))
            assert math.isfinite(base + delta) and base + delta <= CAP_FACTOR * base


def test_http_feedback_that_would_overflow_is_refused_and_not_committed():
    """Over HTTP the refusal is a 4xx and the success row is not written (it once answered 500 and committed)."""
    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service

    from ..serve.conftest import api_client, hand_index

    svc = Service(hand_index())
    recs = {"A": "a", "B": "b"}
    hit = [{"node_id": recs["B"], "rank": 1, "score": 1.0,
            "path": [{"source": "a", "target": "b", "type": "link", "weight": 1e308, "base_weight": 1e308}]}]
    trace = svc.index.state.new_trace("q", "relation", hit)
    r = api_client(create_app(svc)).post("/api/feedback", json={"trace_id": trace, "node_id": "b"})
    assert r.status_code == 400 and "not finite" in r.json()["error"]["message"]
    assert svc.index.state.successes() == [] and svc.index.state.overlay() == {}
