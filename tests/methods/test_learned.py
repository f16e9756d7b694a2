"""Learned fusion: hand-computed features, deterministic fit, JSON round trip, C tie rule, no test leakage."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.lab.fit_learned import fit_learned, select_c, split_train
from sidelight.methods import learned
from sidelight.methods.learned import LearnedModel, query_features
from sidelight.structures.dense import DenseStore


def _index(records, vectors, qvecs) -> Index:
    index = Index.build(Corpus("toy", records), progress=False)
    index.dense = DenseStore(vectors=np.asarray(vectors, dtype=np.float32), identity={"dim": 2}, spec="toy")
    index.dense.encode_query = lambda text: np.asarray(qvecs[text], dtype=np.float32)
    return index


def test_features_hand_computed():
    records = [Record("r1", "Alpha", "cat cat cat"), Record("r2", "Beta", "cat dog"),
               Record("r3", "Gamma", "dog bird"), Record("r4", "Delta", "fish")]
    index = _index(records, [[0, 1], [0.6, 0.8], [1, 0], [0.8, -0.6]], {"cat": [1, 0]})
    s = index.lexical.bm25_scores("cat")
    ratio = s[1] / s[0]  # r1 is the BM25 maximum
    want = np.array([
        # bm25_norm, cosine, bm25 rank 60/(60+r), dense rank, product
        [1.0, 0.0, 60 / 61, 60 / 64, 0.0],
        [ratio, 0.6, 60 / 62, 60 / 63, ratio * 0.6],
        [0.0, 1.0, 0.0, 60 / 61, 0.0],
        [0.0, 0.8, 0.0, 60 / 62, 0.0],
    ])
    np.testing.assert_allclose(query_features(index, "cat"), want, rtol=1e-6, atol=1e-7)


def synthetic(n_docs=40, n_queries=24, seed=3):
    """Records of distinct words; query q_i names the words of record i and points near its vector."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n_docs)]
    records = [Record(f"d{i:02d}", f"T{i}", f"{words[i]} {words[(i + 1) % n_docs]} common") for i in range(n_docs)]
    vecs = rng.normal(size=(n_docs, 2))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries, qvecs, qrels = {}, {}, {}
    for j in range(n_queries):
        i = int(rng.integers(n_docs))
        text = f"{words[i]} common q{j}"
        v = vecs[i] + rng.normal(scale=0.3, size=2)
        queries[f"q{j:02d}"], qvecs[text] = text, v / np.linalg.norm(v)
        qrels[f"q{j:02d}"] = {f"d{i:02d}": 1}
    return _index(records, vecs, qvecs), queries, qrels


def test_fit_is_deterministic_and_round_trips(tmp_path):
    index, queries, qrels = synthetic()
    ids = sorted(queries)
    fit_ids, dev_ids = ids[:16], ids[16:]
    a = fit_learned(index, queries, qrels, fit_ids, dev_ids)
    b = fit_learned(index, queries, qrels, fit_ids, dev_ids)
    assert a.weights.tolist() == b.weights.tolist() and a.intercept == b.intercept and a.C == b.C
    assert a.meta["fit"]["positives"] == 16 and a.meta["dev"]["queries"] == 8
    path = tmp_path / "m.json"
    a.save(path)
    c = LearnedModel.load(path)
    assert c.weights.tolist() == a.weights.tolist() and c.intercept == a.intercept and c.C == a.C
    for q in queries.values():
        ra, rc = a.rank(index, q, None), c.rank(index, q, None)
        assert ra.positions.tolist() == rc.positions.tolist()
        assert ra.scores.tolist() == rc.scores.tolist()
    hits = index.search(queries["q00"], method="learned", model=str(path), k=5)
    assert [h.id for h in hits] == [index.ids[p] for p in a.rank(index, queries["q00"], 5).positions]


def test_select_c_ties_go_to_smaller_c():
    assert select_c({10.0: 0.5, 0.1: 0.5, 1.0: 0.5}) == 0.1
    assert select_c({0.1: 0.4, 1.0: 0.5, 10.0: 0.5}) == 1.0
    assert select_c({0.1: 0.4, 1.0: 0.5, 10.0: 0.5 + 1e-15}) == 1.0  # float noise is a tie
    assert select_c({0.1: 0.4, 1.0: 0.5, 10.0: 0.6}) == 10.0


def test_fit_picks_smallest_c_when_dev_scores_tie():
    # every dev query's relevant record is the only lexical match and the closest vector:
    # all C rank it first, so dev nDCG@10 is 1.0 for each C and the tie goes to C = 0.1
    records = [Record(f"d{i}", "", f"tok{i}") for i in range(6)]
    vecs = np.eye(6)[:, :2] + 0.01
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = {f"q{i}": f"tok{i}" for i in range(6)}
    index = Index.build(Corpus("tie", records), progress=False)
    index.dense = DenseStore(vectors=np.zeros((6, 2), dtype=np.float32), identity={}, spec="toy")
    index.dense.encode_query = lambda text: np.zeros(2, dtype=np.float32)
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(6)}
    m = fit_learned(index, queries, qrels, ["q0", "q1", "q2", "q3"], ["q4", "q5"])
    assert set(m.meta["dev"]["by_C"].values()) == {1.0}
    assert m.C == 0.1


def test_fit_never_sees_held_out_queries():
    index, queries, qrels = synthetic()
    ids = sorted(queries)
    fit_ids, dev_ids, test_ids = ids[:12], ids[12:18], ids[18:]
    seen = []

    def spy(idx, text, comps):
        seen.append(text)
        return query_features(idx, text, comps)

    # poisoned labels for the held-out queries must change nothing
    poisoned = {**qrels, **{q: {d: 1 for d in index.corpus.ids} for q in test_ids}}
    a = fit_learned(index, queries, poisoned, fit_ids, dev_ids, held_out=test_ids, feature_fn=spy)
    b = fit_learned(index, queries, {q: qrels[q] for q in fit_ids + dev_ids}, fit_ids, dev_ids)
    assert a.weights.tolist() == b.weights.tolist() and a.C == b.C
    assert set(seen) == {queries[q] for q in fit_ids + dev_ids}
    with pytest.raises(InputError, match="held-out"):
        fit_learned(index, queries, qrels, fit_ids, dev_ids + [test_ids[0]], held_out=test_ids)
    with pytest.raises(InputError, match="overlap"):
        fit_learned(index, queries, qrels, fit_ids, fit_ids[:2])


def test_split_is_the_documented_call():
    ids = [str(i) for i in range(1, 810)]
    fit, dev = split_train(reversed(ids))
    assert fit == sorted(random.Random(45110).sample(sorted(ids), 600))
    assert len(fit) == 600 and len(dev) == 209 and not set(fit) & set(dev)
    assert split_train(ids) == (fit, dev)


def test_shipped_model_loads():
    m = LearnedModel.load()
    assert m.weights.shape == (5,) and np.isfinite(m.weights).all()
    assert m.C in learned.C_GRID
    assert m.meta["split"]["seed"] == 45110
