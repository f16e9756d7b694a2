"""The index's one cache (`Index.memo`): reused while valid, dropped on add/delete."""

from __future__ import annotations

from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index
from sidelight.methods import get_method
from sidelight.methods.graph import rewire_reports


def small() -> Index:
    recs = [Record("a", "alpha", "running fast"), Record("b", "beta", "walking slowly"), Record("c", "gamma", "swim")]
    return Index.build(Corpus("m", recs, [Edge("a", "b"), Edge("b", "c")]), progress=False)


def test_memo_rebuilds_only_when_the_key_changes():
    index, calls = small(), []
    build = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert index.memo("x", 1, build) == 1 and index.memo("x", 1, build) == 1
    assert index.memo("x", 2, build) == 2 and len(calls) == 2


def test_add_and_delete_drop_every_derived_structure():
    index = small()
    stemmed = get_method("bm25+rm3", stem="english", rm3=False)  # a stemmed lexical variant, built in memory
    assert stemmed.rank(index, "runs", 5).positions.tolist() == [0]
    get_method("bm25+ppr:rewire").rank(index, "alpha", 5)
    assert rewire_reports(index)
    index.add([Record("d", "delta", "runner runs")])
    assert [index.ids[p] for p in stemmed.rank(index, "runs", 5).positions] == ["a", "d"]  # the variant saw the add (a tie: by id)
    assert not rewire_reports(index)  # the rewired control of the old graph is gone
    index.delete(["d"])
    assert [index.ids[p] for p in stemmed.rank(index, "runs", 5).positions] == ["a"]
