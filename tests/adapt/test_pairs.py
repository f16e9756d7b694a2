"""Training pairs from a toy corpus: segments, names cut out of anchors, batches without repeats,
supervised pairs, and negatives from the BM25 ranks they are meant to come from."""

from __future__ import annotations

import random

from sidelight.adapt.pairs import NEGATIVE_RANKS, Pair, cloze_pair, corpus_pairs, mine_negatives, qrels_pairs, segments
from sidelight.adapt.train import _batches
from sidelight.corpus.model import Corpus, Record
from sidelight.index import Index


def _index() -> Index:
    recs = [Record("a", "lighthouse", 'a tower with a bright Lighthouse lamp; "the lighthouse warned the ships"',
                   aliases=("beacon light",)),
            Record("b", "kettle", "a metal pot for boiling water. It whistles when the water boils."),
            Record("c", "pier", "a platform built out over the sea from the shore")]
    recs += [Record(f"x{i}", f"word{i}", f"a tower by the sea number {i} with ships and lamps") for i in range(14)]
    return Index.build(Corpus("toy", recs, title_weight=2), progress=False)


def test_segments_split_sentences_and_clauses_and_trim_quotes():
    assert segments('a tower with a lamp; "the lighthouse warned the ships"') == [
        "a tower with a lamp", "the lighthouse warned the ships"]
    assert segments("One sentence. Two sentences!  Three?") == ["One sentence.", "Two sentences!", "Three?"]


def test_cloze_anchor_never_names_the_record_and_the_positive_is_the_rest():
    index = _index()
    for seed in range(10):
        p = cloze_pair(index, 0, random.Random(seed))
        assert "lighthouse" not in p.anchor.lower() and "beacon light" not in p.anchor.lower()
        assert p.positive.startswith("lighthouse lighthouse")  # the record as the index encodes it, minus the anchor
        assert p.anchor not in p.positive
    assert cloze_pair(index, 1, random.Random(0)).anchor in ("a metal pot for boiling water.",
                                                             "It whistles when the water boils.")
    short = Index.build(Corpus("s", [Record("s", "x", "too short")]), progress=False)
    assert cloze_pair(short, 0, random.Random(0)) is None
    assert len(corpus_pairs(index, 5, seed=3)) == 5


def test_batches_are_full_and_never_repeat_a_record_or_an_anchor():
    rng = random.Random(7)
    pairs = [Pair(f"q{rng.randrange(30)}", "p", rng.randrange(12)) for _ in range(200)]
    batches = _batches(pairs, 8, seed=1)
    assert batches and all(len(b) == 8 for b in batches)
    for b in batches:
        assert len({p.record for p in b}) == 8 and len({p.anchor for p in b}) == 8
    assert _batches(pairs, 8, seed=1) == batches  # seeded


def test_qrels_pairs_repeat_each_positive_judgement():
    index = _index()
    pairs = qrels_pairs(index, {"q1": "a pot for water", "q2": "unjudged"}, {"q1": {"b": 1, "c": 0, "zz": 1}}, 3)
    assert [(p.anchor, p.record, p.source) for p in pairs] == [("a pot for water", 1, "qrels")] * 3


def test_negatives_come_from_bm25_ranks_3_to_10_in_the_positive_form():
    index = _index()
    x3 = index.corpus.position["x3"]
    cloze = [Pair("a tower by the sea with ships", "word3 word3", x3)] * 20  # a positive without its sentence
    whole = [Pair("a tower by the sea with ships", index.corpus.indexed_text(index.corpus.records[x3]), x3,
                  source="qrels", whole=True)] * 20
    lo, hi = NEGATIVE_RANKS
    ranked = [index.corpus.records[index.corpus.position[h.id]] for h in index.search(cloze[0].anchor, "bm25", hi + 1)
              if h.id != "x3"][lo - 1: hi]
    for p in mine_negatives(index, cloze, seed=0, progress=False):  # a neighbour's names, its one sentence cut
        assert p.negative in [f"{r.title} {r.title}" for r in ranked]
    for p in mine_negatives(index, whole, seed=0, progress=False):  # a whole neighbour
        assert p.negative in [index.corpus.indexed_text(r) for r in ranked]
