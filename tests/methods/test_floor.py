"""The floor on a 50-record toy with hand-made vectors: pool, rare-term channel, deadline, ties, scorers."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError, NonFiniteScoreError
from sidelight.index import Index
from sidelight.methods import available_methods, get_method
from sidelight.methods.floor import (
    CrossEncoderScorer,
    DenseScorer,
    FusionScorer,
    RareTerms,
    build_floor,
    make_scorer,
)
from sidelight.structures.dense import DenseStore

DIM = 8
N_REC = 50
RARE_POS = 17  # the record holding the rare term; its vector points away from the query
QUERY = "zyxomycin protein binding"


def _vectors() -> np.ndarray:
    rng = np.random.default_rng(7)
    v = rng.normal(size=(N_REC, DIM))
    v[:, 0] = np.abs(v[:, 0])  # most records lean towards the query direction e0
    v[RARE_POS] = -np.eye(DIM)[0]  # the lowest cosine of all
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def index() -> Index:
    # ids are a permutation of corpus order, so "ties by ascending id" differs from corpus order
    ids = [f"r{(i * 7) % N_REC:02d}" for i in range(N_REC)]
    recs = []
    for i, rid in enumerate(ids):
        words = "protein binding assay" if i % 2 else "cell growth signal"
        if i == RARE_POS:
            words += " zyxomycin"
        recs.append(Record(rid, f"Title {i}", f"{words} {'x' * (i % 5 + 1)}"))
    idx = Index.build(Corpus("toy", recs), progress=False)
    idx.dense = DenseStore(vectors=_vectors(), identity={"name": "toy", "dim": DIM}, spec="toy")
    idx.dense.encode_query = lambda text: np.eye(DIM, dtype=np.float32)[0]
    return idx


class FakeScorer:
    """Scores by a fixed per-record value, optionally sleeping per batch; records every batch."""

    def __init__(self, values=None, sleep_s: float = 0.0, batch_size: int = 4, name: str = "fake"):
        self.values, self.sleep_s, self.batch_size, self.name = values, sleep_s, batch_size, name
        self.batches: list[list[int]] = []

    def score(self, query, positions):
        if self.sleep_s:
            time.sleep(self.sleep_s)
        self.batches.append(list(map(int, positions)))
        if self.values is None:
            return np.ones(len(positions))
        return np.asarray([self.values[int(p)] for p in positions], dtype=np.float64)


def _stage_one_order(index, positions):
    cos = np.asarray(index.dense.vectors)[positions, 0].astype(np.float64)
    return [int(p) for p in np.asarray(positions)[np.lexsort((index.id_rank[positions], -cos))]]


# ---- pool and lexical channel -------------------------------------------------------------------
def test_rare_term_channel_adds_a_record_the_cosine_pool_missed(index):
    off = build_floor(index, QUERY, pool=10, n=5, scorer=DenseScorer(index), rare_terms=None)
    assert RARE_POS not in off.order.tolist() and off.n_lexical == 0
    assert off.skipped["lexical_channel"] == "disabled"

    fl = build_floor(index, QUERY, pool=10, n=5, scorer=DenseScorer(index))
    assert fl.rare_terms == ["zyxomycin"]  # df 1 <= max(1% of 50, 1); "protein" (df 25) is not rare
    assert fl.n_cosine == 10 and fl.n_lexical == 1 and fl.n_candidates == 11
    assert fl.order.tolist()[-1] == RARE_POS  # lowest cosine: last in stage-one order
    # a second stage that likes it lifts it onto the floor, marked as the lexical channel's
    like = np.zeros(N_REC)
    like[RARE_POS] = 5.0
    fl2 = build_floor(index, QUERY, pool=10, n=5, scorer=FakeScorer(like))
    assert index.corpus.position[fl2.hits[0].id] == RARE_POS and fl2.hits[0]["source"] == "lexical"
    assert {h["source"] for h in fl2.hits[1:]} == {"cosine"}


def test_pool_has_no_duplicates_and_floor_at_most_n(index):
    # pool covers the rare record already: the channel must not add it twice
    fl = build_floor(index, QUERY, pool=N_REC, n=28, scorer=DenseScorer(index))
    assert fl.n_lexical == 0 and fl.n_candidates == N_REC
    assert sorted(fl.order.tolist()) == list(range(N_REC))
    for pool, n in [(10, 28), (10, 3), (30, 28), (1, 1)]:
        fl = build_floor(index, QUERY, pool=pool, n=n, scorer=DenseScorer(index))
        order = fl.order.tolist()
        assert len(order) == len(set(order)) == fl.n_candidates
        assert len(fl.hits) == min(n, fl.n_candidates) <= n
        assert [h.rank for h in fl.hits] == list(range(1, len(fl.hits) + 1))
        assert len({h.id for h in fl.hits}) == len(fl.hits)


def test_rare_term_cap_and_definition(index):
    # "assay" occurs in 25 of 50 records: rare only with a df fraction of 50% or more
    fl = build_floor(index, "assay", pool=5, scorer=DenseScorer(index), rare_terms=RareTerms(0.5, 3, 4))
    in_pool = sum(1 for h in fl.hits
                  if h["source"] == "cosine" and "assay" in index.corpus.records[index.corpus.position[h.id]].text)
    assert fl.rare_terms == ["assay"] and fl.n_lexical == 4 and fl.skipped["lexical_capped"] == 25 - in_pool - 4
    fl = build_floor(index, "assay", pool=5, scorer=DenseScorer(index))
    assert fl.rare_terms == [] and fl.n_lexical == 0 and fl.skipped["lexical_channel"] == "no rare query terms"


def test_ties_break_by_ascending_id_and_order_is_deterministic(index):
    fl = build_floor(index, QUERY, pool=20, n=20, scorer=FakeScorer())  # every score 1.0
    ids = [h.id for h in fl.hits]
    assert ids == sorted(ids)
    assert ids != [index.corpus.records[p].id for p in sorted(index.corpus.position[h.id] for h in fl.hits)]  # not corpus order
    again = build_floor(index, QUERY, pool=20, n=20, scorer=FakeScorer())
    assert again.order.tolist() == fl.order.tolist()


def test_dense_scorer_is_the_stage_one_order(index):
    fl = build_floor(index, QUERY, pool=15, n=28, scorer=DenseScorer(index), rare_terms=None)
    assert fl.order.tolist() == _stage_one_order(index, np.arange(N_REC))[:15]
    np.testing.assert_allclose([h.score for h in fl.hits], [h["stage_one"] for h in fl.hits])
    assert fl.skipped["doc_embedding"].startswith("query-as-document embedding")


def test_query_embedded_as_query_and_as_document(index):
    """With different prefixes both embeddings are made and the pool is their union (top by max cosine)."""
    e = np.eye(DIM, dtype=np.float32)
    calls = []

    def encode(texts, kind="doc", **_):
        calls.append(kind)
        return np.stack([e[0] if kind == "query" else e[1] for _ in texts])

    index.dense = DenseStore(vectors=_vectors(), identity={"name": "toy", "dim": DIM}, spec="toy")
    index.dense._embedder = SimpleNamespace(files=SimpleNamespace(query_prefix="query: ", doc_prefix="passage: "),
                                            encode=encode)
    fl = build_floor(index, QUERY, pool=6, n=6, scorer=DenseScorer(index), rare_terms=None)
    assert sorted(calls) == ["doc", "query"] and "doc_embedding" not in fl.skipped
    v = _vectors().astype(np.float64)
    s1 = np.maximum(v[:, 0], v[:, 1])
    want = np.lexsort((index.id_rank, -s1))[:6].tolist()
    assert fl.order.tolist() == want
    top_q, top_d = set(np.argsort(-v[:, 0])[:6].tolist()), set(np.argsort(-v[:, 1])[:6].tolist())
    assert set(want) <= top_q | top_d and set(want) & top_q and set(want) & top_d


# ---- deadline ------------------------------------------------------------------------------------------
def test_deadline_is_honoured_and_the_floor_is_partial(index):
    slow = FakeScorer(sleep_s=0.020, batch_size=4)
    fl = build_floor(index, QUERY, pool=40, n=28, deadline_s=0.100, scorer=slow)
    n_batches = len(slow.batches)
    # 41 candidates need 11 batches = 220 ms; 100 ms leaves room for 4 or 5 of them
    assert fl.partial and 3 <= n_batches <= 5
    assert fl.n_scored == sum(len(b) for b in slow.batches) == len(fl.scores) < fl.n_candidates
    assert fl.skipped["unscored"] == fl.n_candidates - fl.n_scored and fl.skipped["reason"] == "deadline"
    # Within 10% of the deadline for the whole call. The only work after the last batch is one sort and
    # hit building over 41 candidates (well under 1 ms); +10 ms covers one OS scheduling delay of a
    # sleeping thread on a shared 2-core machine. The scheduler itself never starts a batch it predicts
    # would end after the deadline.
    assert fl.elapsed_ms <= 110 + 10, fl.elapsed_ms
    assert fl.stage_two_ms <= 110 + 10
    # scored first (by score, ties by id), then the unscored in stage-one order
    scored = [h for h in fl.hits if h["scored"]]
    assert len(scored) == min(fl.n_scored, 28) and all(h["scored"] for h in fl.hits[:len(scored)])
    cand_stage_one = _stage_one_order(index, fl.order)
    assert fl.scored_positions.tolist() == cand_stage_one[:fl.n_scored]  # scored in stage-one order
    assert fl.order.tolist()[fl.n_scored:] == cand_stage_one[fl.n_scored:]
    r = fl.ranking()
    assert np.all(np.diff(r.scores) <= 0)


def test_fast_scorer_is_not_partial(index):
    fast = FakeScorer(batch_size=4)
    fl = build_floor(index, QUERY, pool=40, n=28, deadline_s=0.100, scorer=fast)
    assert not fl.partial and "unscored" not in fl.skipped
    assert fl.n_scored == fl.n_candidates == sum(len(b) for b in fast.batches) == 41
    assert all(h["scored"] for h in fl.hits)


def test_expired_deadline_scores_nothing_and_keeps_stage_one_order(index):
    s = FakeScorer()
    fl = build_floor(index, QUERY, pool=12, n=28, deadline_s=0.0, scorer=s)
    assert fl.partial and fl.n_scored == 0 and s.batches == [] and len(fl.scores) == 0
    assert fl.order.tolist() == _stage_one_order(index, fl.order)
    assert not any(h["scored"] for h in fl.hits) and all(h["score"] is None for h in fl.to_json()["hits"])
    assert fl.hits.partial and fl.hits.method == "floor"  # a `Results`, cut by the deadline
    assert all({"id", "rank", "title", "score", "stage_one", "source"} <= set(h) for h in fl.to_json()["hits"])


def test_non_finite_second_stage_fails_closed(index):
    vals = np.ones(N_REC)
    vals[3] = np.nan
    with pytest.raises(NonFiniteScoreError):
        build_floor(index, QUERY, pool=N_REC, scorer=FakeScorer(vals))
    with pytest.raises(InputError):
        build_floor(index, QUERY, pool=0)


# ---- scorers and the method ---------------------------------------------------------------------
def test_fusion_rrf_scorer_matches_rrf_method_on_the_pool(index):
    fl = build_floor(index, QUERY, pool=N_REC, n=N_REC, scorer=FusionScorer(index, "rrf"))
    rrf = index.search(QUERY, method="rrf", k=N_REC)
    assert [h.id for h in fl.hits] == [h.id for h in rrf]
    np.testing.assert_allclose([h.score for h in fl.hits], [h.score for h in rrf])


def test_floor_method_is_registered(index):
    assert "floor" in available_methods()
    hits = index.search(QUERY, method="floor", k=5, scorer="dense", pool=10)
    assert [h.id for h in hits] == [h.id for h in build_floor(index, QUERY, pool=10, scorer="dense").hits[:5]]
    assert len(index.search(QUERY, method="floor", k=100, pool=10)) == 11  # only the pool is ranked
    assert get_method("floor").params["scorer"] in ("fusion", "dense", "rrf")
    with pytest.raises(InputError, match="cross_encoder"):
        make_scorer(index, "cross-encoder")


def test_cross_encoder_scorer_with_a_tiny_graph(index, tmp_path):
    from sidelight.models import CrossEncoder, resolve_model
    from tests.models.test_crossencoder import _expected, tiny_cross_encoder

    tok = resolve_model("minilm").tokenizer_path
    path = tmp_path / "model.onnx"
    path.write_bytes(tiny_cross_encoder())
    sc = CrossEncoderScorer(index, CrossEncoder(path, tok, max_length=512, threads=1, name="tiny"), batch_size=8)
    assert sc.name == "cross-encoder:tiny"
    fl = build_floor(index, QUERY, pool=20, n=28, scorer=sc)
    assert not fl.partial and fl.n_scored == 21 and fl.scorer == "cross-encoder:tiny"
    # the tiny graph's logit grows with passage length: check every score against its formula
    passages = [sc.passage(p) for p in fl.order]
    want = _expected(tok, QUERY, passages)
    np.testing.assert_array_equal(np.asarray([h.score for h in fl.hits], dtype=np.float32), want[:len(fl.hits)])
    assert np.all(np.diff(want) <= 0)
