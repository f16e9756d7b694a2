"""Graph store: CSR layout, provenance of slots, projection, persistence, immutability."""

import numpy as np
import pytest

from sidelight.corpus.model import Corpus, Edge, Record
from sidelight.errors import IndexFormatError, InputError
from sidelight.graph import Graph


def corpus():
    recs = [Record(i, i.upper(), f"text {i}") for i in ["a", "b", "c", "d"]]
    edges = [Edge("c", "a", "see", 2.0), Edge("a", "b"), Edge("a", "c", "see", 0.5), Edge("b", "a"),
             Edge("a", "b", "see"), Edge("d", "d")]
    return Corpus("toy", recs, edges)


def test_from_corpus_layout_and_edge_ids():
    c = corpus()
    g = Graph.from_corpus(c)
    assert g.n_nodes == 4 and g.n_edges == 6
    assert g.type_names == ["link", "see"]
    assert g.indptr.tolist() == [0, 3, 4, 5, 6]
    out = g.out_edges(0)  # a: b(link, edge 1), b(see, edge 4), c(see, edge 2)
    assert out.targets.tolist() == [1, 1, 2]
    assert [g.type_names[t] for t in out.types] == ["link", "see", "see"]
    assert out.edge_ids.tolist() == [1, 4, 2]
    assert out.weights.tolist() == [1.0, 1.0, 0.5]
    # every slot maps back to the authored edge
    ids = c.ids
    for k in range(g.n_edges):
        e = c.edges[g.edge_ids[k]]
        assert (ids[g.sources[k]], ids[g.indices[k]], g.type_names[g.types[k]], g.weights[k]) == \
            (e.source, e.target, e.type, e.weight)
    assert len(g.out_edges(3)) == 1 and g.edge_ref(5).source == 3


def test_undirected_projection_dedups_and_drops_self_loops():
    g = Graph.from_corpus(corpus())
    u = g.undirected().toarray()
    expected = np.zeros((4, 4))
    for a, b in [(0, 1), (0, 2)]:
        expected[a, b] = expected[b, a] = 1
    assert np.array_equal(u, expected)


def test_base_weights_are_read_only():
    g = Graph.from_corpus(corpus())
    for arr in (g.indptr, g.indices, g.weights, g.types, g.edge_ids):
        with pytest.raises(ValueError):
            arr[0] = arr[0]


def test_from_arrays_validation():
    with pytest.raises(InputError):
        Graph.from_arrays(2, [0], [2])
    with pytest.raises(InputError):
        Graph.from_arrays(2, [0], [1], [-1.0])
    with pytest.raises(InputError):
        Graph.from_arrays(2, [0], [1], [np.nan])
    g = Graph.from_arrays(3, [], [])
    assert g.n_edges == 0 and g.undirected().nnz == 0 and len(g.out_edges(2)) == 0
    g = Graph.from_arrays(3, [2, 0], [0, 1], None, [1, 0], type_names=["x", "y"])
    assert g.type_names == ["x", "y"] and g.edge_ids.tolist() == [1, 0]


@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_roundtrip(tmp_path, mmap):
    g = Graph.from_corpus(corpus())
    g.save(tmp_path / "graph")
    h = Graph.load(tmp_path / "graph", mmap=mmap)
    for name in ("indptr", "indices", "weights", "types", "edge_ids"):
        assert np.array_equal(getattr(g, name), getattr(h, name))
    assert h.type_names == g.type_names and h.n_nodes == 4
    assert (h.undirected() != g.undirected()).nnz == 0
    with pytest.raises(ValueError):
        h.weights[0] = 5.0


def test_load_refuses_foreign_or_broken(tmp_path):
    with pytest.raises(IndexFormatError):
        Graph.load(tmp_path)
    g = Graph.from_corpus(corpus())
    g.save(tmp_path)
    (tmp_path / "weights.npy").unlink()
    with pytest.raises(IndexFormatError):
        Graph.load(tmp_path)
