"""Teacher pairs (GCIDE definitions -> WordNet senses): which senses pair, which are left out, no leaks."""

from sidelight.adapt.teacher import benchmark_descriptions, leaks, runs, teacher_pairs, usable_senses
from sidelight.corpus.model import Corpus, Record
from sidelight.index import Index

WORDNET = Corpus("wn", [
    Record("n:1", "beacon", "a tower with a light that warns ships", {"pos": "noun"}, ("lighthouse",)),
    Record("n:2", "beacon", "a fire lit on a hill as a signal", {"pos": "noun"}),
    Record("v:3", "beacon", "shine like a beacon", {"pos": "verb"}),
    Record("n:4", "lamp", "a device that gives light at night", {"pos": "noun"}),
    Record("n:5", "bonfire", "a large fire lit outdoors on a hill", {"pos": "noun"}),
    Record("a:6", "bright", "emitting much light", {"pos": "adjective satellite"}),
], title_weight=2, alias_weight=1)
GCIDE = Corpus("gcide", [
    Record("beacon#1", "Beacon", "A signal fire lit on a hill to warn of an enemy.", {"pos": "noun", "wordnet": False}),
    Record("beacon#2", "Beacon", "To give light to, as a beacon does.", {"pos": "verb", "wordnet": False}),
    Record("bright#1", "Bright", "giving off a great deal of light", {"pos": "adjective", "wordnet": True}),
    Record("lamp#1", "Lamp", "A light-giving vessel.", {"pos": "adjective", "wordnet": False}),  # no such adjective
    Record("pharos#1", "Pharos", "A lighthouse or beacon for ships.", {"pos": "noun", "wordnet": False}),  # not in WN
])


def _pairs(descriptions=()):
    index = Index.build(WORDNET, progress=False)
    return index, teacher_pairs(index, GCIDE, 100, 0, descriptions)


def test_definitions_pair_with_the_same_part_of_speech_sense_sharing_most_words():
    index, pairs = _pairs()
    got = {(p.anchor, index.corpus.records[p.record].id) for p in pairs}
    # beacon#1 shares fire, lit, on, a, hill with n:2 (more than n:1); the verb goes to v:3
    assert got == {("A signal fire lit on a hill to warn of an enemy.", "n:2"), ("To give light to, as a does.", "v:3")}
    for p in pairs:
        assert p.source in ("teacher", "teacher-names") and p.whole
        holder = index.corpus.records[p.record]
        assert p.positive == (holder.title if p.source == "teacher-names" else index.corpus.indexed_text(holder))
        assert p.negative is not None and "beacon" not in p.negative.lower()  # never a sense holding the word


def test_wordnet_sourced_senses_are_left_out():
    _, pairs = _pairs()
    assert not any("great deal" in p.anchor for p in pairs)  # bright#1 is marked as copied from WordNet
    assert all("wordnet" not in p.anchor.lower() for p in pairs)


def test_no_anchor_shares_four_tokens_with_a_benchmark_description():
    _, pairs = _pairs(["Something like a signal fire lit on a hilltop"])  # shares "a signal fire lit"
    assert [p.anchor for p in pairs] == ["To give light to, as a does."]
    assert usable_senses(Index.build(WORDNET, progress=False), GCIDE, ["a signal fire lit on"])[1] == 1
    descriptions = benchmark_descriptions()
    assert len(descriptions) == 156 + 102  # all of describe-v1 and describe-v2, test splits included
    assert {"the sour yellow citrus fruit you squeeze into tea or lemonade",  # describe-v2 E002 (test)
            } <= set(descriptions)
    banned = set().union(*(runs(d) for d in descriptions))
    assert not leaks("a tower by the sea", banned) and leaks(descriptions[0], banned)
