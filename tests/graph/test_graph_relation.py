"""NGR relation lane on a hand-built directed graph with hand-computed activations and paths.

    A(0) -3-> B(1) -1-> D(3) -1-> A         F(5) -2-> A
    A    -1-> C(2) -1-> D         E(4) -5-> E (self loop)
             C    -1-> E          A -0-> F  (zero weight)
"""

import numpy as np
import pytest

from sidelight.errors import InputError
from sidelight.graph import Graph, spread, trace_hits

EDGES = [  # (source, target, weight, type)
    (0, 1, 3.0, "link"), (0, 2, 1.0, "link"), (1, 3, 1.0, "cites"), (2, 3, 1.0, "link"),
    (2, 4, 1.0, "link"), (3, 0, 1.0, "link"), (5, 0, 2.0, "link"), (4, 4, 5.0, "link"), (0, 5, 0.0, "link"),
]
IDS = ["A", "B", "C", "D", "E", "F"]


@pytest.fixture
def g():
    s, t, w, ty = zip(*EDGES)
    return Graph.from_arrays(6, s, t, w, ty)


def summary(hits):
    return [(h.node, round(h.activation, 12), [e.edge_id for e in h.path], h.is_seed) for h in hits]


def test_single_seed_two_hops(g):
    hits = spread(g, [0], hops=2, decay=0.5)
    # hop1: B = .5*3/4 = .375, C = .5*1/4 = .125
    # hop2: D = .375*.5*1 + .125*.5*.5 = .21875 (strongest via B), E = .125*.5*.5 = .03125
    assert summary(hits) == [(1, 0.375, [0], False), (3, 0.21875, [0, 2], False),
                             (2, 0.125, [1], False), (4, 0.03125, [1, 4], False)]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    d = hits[1]
    assert d.seed == 0 and d.hops == 2
    assert [(e.source, e.target, e.type, e.weight) for e in d.path] == [(0, 1, "link", 3.0), (1, 3, "cites", 1.0)]


def test_seed_never_credited_with_its_own_returning_activation(g):
    # hop3 sends D's activation back to A (the seed itself): not a hit, nothing else changes
    assert summary(spread(g, [0], hops=3)) == summary(spread(g, [0], hops=2))


def test_two_seeds_reaching_each_other(g):
    hits = spread(g, [0, 3], hops=2, decay=0.5)
    # from D: A = .5 (hop1), then B += .5*.5*.75 = .1875, C += .5*.5*.25 = .0625 (hop2)
    assert summary(hits) == [(1, 0.5625, [0], False), (0, 0.5, [5], True), (3, 0.21875, [0, 2], True),
                             (2, 0.1875, [1], False), (4, 0.03125, [1, 4], False)]
    assert spread(g, [3, 0, 0], hops=2) == hits  # order and duplicates of seeds do not matter


def test_seed_without_out_edges_yields_nothing(g):
    assert spread(g, [4]) == []          # only a self loop
    assert spread(g, []) == []
    only_f = spread(g, [5], hops=1)
    assert summary(only_f) == [(0, 0.5, [6], False)]


def test_weight_overlay_changes_competition(g):
    w = np.array(g.weights)
    slot = int(g.slots_of(0, 2)[0])
    w[slot] = 3.0                         # A->C now as strong as A->B
    hits = spread(g, [0], hops=2, decay=0.5, weights=w)
    # B = C = .25 (tie -> lower position first), D = .125 + .0625, E = .0625
    assert summary(hits) == [(1, 0.25, [0], False), (2, 0.25, [1], False), (3, 0.1875, [0, 2], False),
                             (4, 0.0625, [1, 4], False)]
    assert hits[1].path[0].weight == 3.0
    assert np.array_equal(g.weights, [e[2] for e in sorted(EDGES, key=lambda e: (e[0], e[1]))])  # base untouched


def test_tie_rank_and_limit(g):
    w = np.array(g.weights)
    w[int(g.slots_of(0, 2)[0])] = 3.0
    hits = spread(g, [0], weights=w, tie_rank=np.array([0, 5, 1, 2, 3, 4]), limit=2)
    assert [h.node for h in hits] == [2, 1]


def test_decay_and_validation(g):
    assert summary(spread(g, [0], hops=1, decay=1.0)) == [(1, 0.75, [0], False), (2, 0.25, [1], False)]
    with pytest.raises(InputError):
        spread(g, [9])
    with pytest.raises(InputError):
        spread(g, [0], hops=0)
    with pytest.raises(InputError):
        spread(g, [0], decay=0)
    with pytest.raises(InputError):
        spread(g, [0], weights=np.ones(3))
    with pytest.raises(InputError):
        spread(g, [0], weights=-np.ones(g.n_edges))


def test_trace_hits_use_record_ids_and_base_weights(g):
    w = np.array(g.weights)
    w[0] = 4.5
    rows = trace_hits(spread(g, [0], weights=w), IDS, g)
    assert rows[0] == {"node_id": "B", "rank": 1, "score": pytest.approx(0.5 * 4.5 / 5.5),
                       "path": [{"source": "A", "target": "B", "type": "link", "weight": 4.5, "base_weight": 3.0}]}
    assert [e["target"] for e in rows[1]["path"]] == ["B", "D"]


def test_deterministic_on_random_graph():
    rng = np.random.default_rng(5)
    n, m = 400, 2000
    g = Graph.from_arrays(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.uniform(0, 2, m))
    a = spread(g, [1, 2, 3, 50], hops=3)
    b = spread(g, [1, 2, 3, 50], hops=3)
    assert a == b and len(a) > 10
    for h in a:  # every credited path is a contiguous edge walk from a seed to the hit
        assert h.path[0].source in {1, 2, 3, 50} and h.path[-1].target == h.node
        assert all(x.target == y.source for x, y in zip(h.path, h.path[1:]))
        assert all(g.sources[e.slot] == e.source and g.indices[e.slot] == e.target for e in h.path)
    acts = [h.activation for h in a]
    assert acts == sorted(acts, reverse=True) and min(acts) > 0


def brute_force(edges, n, seeds, hops, decay):
    """Enumerate every walk explicitly (independent of the vectorised layer code)."""
    out = {u: [] for u in range(n)}
    for k, (s, t, w) in enumerate(edges):
        if s != t and w > 0:
            out[s].append((k, t, w))
    total, best = {}, {}
    for seed in set(seeds):
        stack = [(seed, 1.0, [])]
        while stack:
            u, a, path = stack.pop()
            if len(path) == hops:
                continue
            wsum = sum(w for _, _, w in out[u])
            for k, t, w in out[u]:
                b = a * decay * w / wsum
                p = path + [k]
                stack.append((t, b, p))
                if t != seed:
                    total[t] = total.get(t, 0.0) + b
                    best[t] = max(best.get(t, 0.0), b)
    return total, best


@pytest.mark.parametrize("seed", range(5))
def test_matches_walk_enumeration(seed):
    rng = np.random.default_rng(seed)
    n, m = 30, 90
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.uniform(0.1, 2, m).round(3)
    g = Graph.from_arrays(n, src, dst, w)
    seeds = rng.choice(n, 4, replace=False).tolist()
    total, best = brute_force(list(zip(src.tolist(), dst.tolist(), w.tolist())), n, seeds, 3, 0.6)
    hits = spread(g, seeds, hops=3, decay=0.6)
    assert {h.node: pytest.approx(h.activation, abs=1e-12) for h in hits} == total
    for h in hits:
        prod = 1.0
        for e in h.path:
            out_w = sum(x for s, t, x in zip(src, dst, w) if s == e.source and s != t)
            prod *= 0.6 * e.weight / out_w
        assert prod == pytest.approx(best[h.node], rel=1e-12)
        assert int(g.edge_ids[h.path[0].slot]) == h.path[0].edge_id


def test_trailing_nodes_without_out_edges():
    g = Graph.from_arrays(5, [0, 1], [1, 2], [1.0, 1.0])  # nodes 2..4 have no out-edges
    assert summary(spread(g, [0, 4], hops=3, decay=0.5)) == [(1, 0.5, [0], False), (2, 0.25, [0, 1], False)]


def test_backward_reach_follows_in_links_with_stored_paths(g):
    from sidelight.graph.relation import activate, activate_in, merge, reversed_graph

    a = activate_in(g, reversed_graph(g), [0], hops=2, decay=0.5)
    # in-edges of A: D -1-> A, F -2-> A: D = .5*1/3, F = .5*2/3; hop 2: in-edges of D are B, C (1 each):
    # B = C = (1/6)*.5*.5 = 1/24; A -0-> F carries nothing
    got = {int(n): round(float(x), 12) for n, x in zip(a.nodes, a.activation)}
    assert got == {1: round(1 / 24, 12), 2: round(1 / 24, 12), 3: round(1 / 6, 12), 5: round(1 / 3, 12)}
    hits = {int(a.nodes[j]): a.hit(j, 1) for j in range(len(a))}
    # paths in the stored direction, hit -> ... -> seed, naming the authored edges
    assert [e.edge_id for e in hits[1].path] == [2, 5] and [e.edge_id for e in hits[5].path] == [6]
    assert [(e.source, e.target) for e in hits[2].path] == [(2, 3), (3, 0)]
    assert all(h.backward and h.seed == 0 for h in hits.values())
    assert g.edge_ids[a.last_slot[list(a.nodes).index(3)]] == 5  # the edge into the seed side: D -> A
    m = merge(activate(g, [0], hops=2, decay=0.5), a)
    got = {int(n): round(float(x), 12) for n, x in zip(m.nodes, m.activation)}
    assert got == {1: round(.375 + 1 / 24, 12), 2: round(.125 + 1 / 24, 12), 3: round(.21875 + 1 / 6, 12),
                   4: .03125, 5: round(1 / 3, 12)}
    # the credited path is the side that gave more: D forward (.21875 > 1/6), F backward
    assert [int(x) for x in m.nodes[m.backward]] == [5]
    assert [e.edge_id for e in m.hit(list(m.nodes).index(3), 1).path] == [0, 2]
    assert m.hit(list(m.nodes).index(5), 2).backward
