"""dense-ann: usearch HNSW candidates rescored exactly; recall vs exact, ties, save/load, missing graph."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sidelight.corpus.model import Corpus, Record
from sidelight.errors import IndexFormatError, InputError
from sidelight.index import Index, store
from sidelight.methods import available_methods, get_method
from sidelight.structures.ann import FILE, AnnIndex, AnnParams
from sidelight.structures.dense import DenseStore

N, DIM, NQ = 2000, 384, 100


def unit(rng, n, dim=DIM):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    return unit(rng, N), unit(rng, NQ)


def make_index(vectors, queries=None, ann=True, ids=None):
    ids = ids or [f"d{i:05d}" for i in range(len(vectors))]
    idx = Index.build(Corpus("toy", [Record(i, f"title {i}", "text") for i in ids]), progress=False)
    idx.dense = DenseStore(vectors=vectors, identity={"name": "toy", "dim": vectors.shape[1]}, spec="toy")
    if ann:
        idx.dense.build_ann()
    attach_queries(idx, queries)
    return idx


def attach_queries(idx, queries):
    if queries is not None:
        idx.dense.encode_query = lambda text: queries[int(text)]


def test_registered():
    assert "dense-ann" in available_methods()


def test_recall_at_10_default_params(data):
    vectors, queries = data
    idx = make_index(vectors, queries)
    exact, ann = get_method("dense"), get_method("dense-ann")
    recalls = []
    for q in range(NQ):
        e = set(exact.rank(idx, str(q), 10).positions.tolist())
        a = set(ann.rank(idx, str(q), 10).positions.tolist())
        recalls.append(len(e & a) / 10)
    assert np.mean(recalls) >= 0.95


def test_raw_graph_recall(data):
    """The graph alone (no oversampling) with default params on random unit vectors."""
    vectors, queries = data
    graph = AnnIndex.build(vectors)
    exact = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
    rec = np.mean([len(set(graph.search(queries[q], 10)) & set(exact[q])) / 10 for q in range(NQ)])
    assert rec >= 0.9


def test_scores_are_exact_cosines(data):
    vectors, queries = data
    idx = make_index(vectors, queries)
    v64 = vectors.astype(np.float64)
    for q in range(10):
        r = get_method("dense-ann").rank(idx, str(q), 10)
        exact = v64[r.positions] @ queries[q].astype(np.float64)
        np.testing.assert_allclose(r.scores, exact, rtol=0, atol=1e-12)  # float64 cosine of the stored vectors
        assert np.all(np.diff(r.scores) <= 0)
        d = get_method("dense").rank(idx, str(q), 10)  # float32 BLAS: equal up to float32 rounding
        dense_scores = dict(zip(d.positions.tolist(), d.scores.tolist()))
        for p, s in zip(r.positions.tolist(), r.scores.tolist()):
            if p in dense_scores:
                assert abs(dense_scores[p] - s) < 1e-6


def test_ties_by_ascending_id():
    rng = np.random.default_rng(3)
    base = unit(rng, 1)[0]
    others = unit(rng, 300)
    others = others - np.outer(others @ base, base)  # orthogonal to the query: far away
    others /= np.linalg.norm(others, axis=1, keepdims=True)
    vectors = others.astype(np.float32)
    dup = [17, 250, 3, 120]
    vectors[dup] = base  # four identical best vectors
    ids = [f"r{(i * 7919) % 1000:04d}" for i in range(300)]  # id order != position order
    idx = make_index(vectors, {0: base}, ids=ids)
    r = get_method("dense-ann").rank(idx, "0", 4)
    got = [idx.ids[p] for p in r.positions]
    assert got == sorted(idx.ids[p] for p in dup)
    assert got == [idx.ids[p] for p in get_method("dense").rank(idx, "0", 4).positions]
    assert len(set(r.scores.tolist())) == 1


def test_k_none_and_small_corpus():
    rng = np.random.default_rng(5)
    vectors, q = unit(rng, 30), unit(rng, 1)
    idx = make_index(vectors, q)
    r = get_method("dense-ann").rank(idx, "0", None)  # pool larger than the corpus: every record
    e = get_method("dense").rank(idx, "0", None)
    np.testing.assert_array_equal(r.positions, e.positions)
    np.testing.assert_allclose(r.scores, e.scores, rtol=0, atol=1e-6)
    assert len(get_method("dense-ann").rank(idx, "0", 0)) == 0


def test_missing_ann_is_a_clear_error(data, tmp_path):
    vectors, queries = data
    idx = make_index(vectors[:50], queries, ann=False)
    with pytest.raises(InputError, match="--ann"):
        get_method("dense-ann").rank(idx, "0", 10)
    idx.save(tmp_path / "ix")
    loaded = Index.load(tmp_path / "ix")
    attach_queries(loaded, queries)
    assert not (store.data_folder(tmp_path / "ix") / "dense" / FILE).exists()
    with pytest.raises(InputError, match="--ann"):
        get_method("dense-ann").rank(loaded, "0", 10)
    no_dense = Index.build(Corpus("toy", [Record("a", "t", "x")]), progress=False)
    with pytest.raises(InputError, match="--dense"):
        get_method("dense-ann").rank(no_dense, "0", 10)


def test_save_load_round_trip(data, tmp_path):
    vectors, queries = data
    idx = make_index(vectors, queries, ann=False)
    idx.dense.build_ann(AnnParams(connectivity=16, expansion_add=64, expansion_search=64))
    before = [get_method("dense-ann").rank(idx, str(q), 10) for q in range(20)]
    idx.save(tmp_path / "ix")
    folder = tmp_path / "ix"
    manifest = json.loads((store.data_folder(folder) / "manifest.json").read_text())
    assert f"dense/{FILE}" in manifest["files"]  # covered by the hashes
    assert manifest["dense"]["ann"]["connectivity"] == 16 and manifest["dense"]["ann"]["size"] == N
    loaded = Index.load(folder)
    attach_queries(loaded, queries)
    assert loaded.dense._ann is None and loaded.dense.ann_params.connectivity == 16  # opened on demand
    after = [get_method("dense-ann").rank(loaded, str(q), 10) for q in range(20)]
    for b, a in zip(before, after):
        np.testing.assert_array_equal(b.positions, a.positions)
        np.testing.assert_array_equal(b.scores, a.scores)
    # saving the loaded index again (to the same folder) keeps the graph and its results
    loaded.save(folder)
    again = Index.load(folder)
    attach_queries(again, queries)
    np.testing.assert_array_equal(get_method("dense-ann").rank(again, "3", 10).positions, before[3].positions)


def test_build_is_deterministic(data, tmp_path):
    vectors, _ = data
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        AnnIndex.build(vectors[:500]).save(tmp_path / name)  # threads=1: byte-identical files
    assert (tmp_path / "a" / FILE).read_bytes() == (tmp_path / "b" / FILE).read_bytes()


def test_corrupt_or_mismatched_graph(data, tmp_path):
    vectors, queries = data
    idx = make_index(vectors[:100], queries)
    idx.save(tmp_path / "ix")
    f = store.data_folder(tmp_path / "ix") / "dense" / FILE
    f.write_bytes(f.read_bytes()[:-100])
    with pytest.raises(IndexFormatError):
        Index.load(tmp_path / "ix")  # hash mismatch
    other = AnnIndex.build(vectors[:80])
    other.save(tmp_path)
    with pytest.raises(IndexFormatError, match="does not fit"):
        AnnIndex.load(tmp_path, {}, 100, DIM)


def test_delete_rebuilds_graph(data, tmp_path):
    vectors, queries = data
    idx = make_index(vectors[:200], queries)
    idx.delete([f"d{i:05d}" for i in range(0, 200, 4)])  # positions shift: the graph is stale
    assert idx.dense._ann is None and len(idx.dense.vectors) == 150
    for q in range(5):
        r = get_method("dense-ann").rank(idx, str(q), 10)  # rebuilt on use, same settings
        e = get_method("dense").rank(idx, str(q), 10)
        np.testing.assert_array_equal(r.positions, e.positions)
        np.testing.assert_allclose(r.scores, e.scores, rtol=0, atol=1e-6)
    assert idx.dense.ann().n == 150
    idx.save(tmp_path / "ix")
    assert json.loads((store.data_folder(tmp_path / "ix") / "manifest.json").read_text())["dense"]["ann"]["size"] == 150


def test_bad_params():
    with pytest.raises(InputError):
        AnnParams(connectivity=0)
    with pytest.raises(InputError, match="candidates|parameter"):
        get_method("dense-ann", nope=1)
