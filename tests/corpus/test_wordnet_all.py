"""`wordnet-all`: every synset of every part of speech, typed edges across parts of speech.

Oracles: a hand-written excerpt of the four data files in the real format, and the published
WordNet 3.0 statistics (wnstats(7WN), "Number of words, synsets, and senses").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sidelight.corpus.model import Edge
from sidelight.corpus.sources import load_source
from sidelight.corpus.wordnet import WORDNET_DIR, load_wordnet_all

FILES = {
    "noun": "  1 license line  \n"
            "00000100 26 n 02 light 0 Light 0 002 @ 00000200 n 0000 + 00000300 v 0101 | electromagnetic radiation  \n"
            "00000200 03 n 01 radiation 0 001 ~ 00000100 n 0000 | energy that is radiated  \n",
    "verb": "00000300 30 v 01 illuminate 0 002 + 00000100 n 0101 $ 00000300 v 0000 | make lighter  \n",
    "adj": "00000400 00 a 01 bright 0 002 & 00000500 s 0000 \\ 00000100 n 0101 | emitting light  \n"
           "00000500 00 s 02 aglow(p) 0 lambent 0 001 & 00000400 a 0000 | softly bright  \n",
    "adv": "00000600 02 r 01 brightly 0 001 \\ 00000400 a 0101 | with brightness  \n",
}


COUNTS = ("light%1:19:00:: 1 40\nlight%2:30:00:: 3 2\n"  # cntlist(5WN): sense key, sense number, tag count
          "bright%3:00:00:: 1 7\nlambent%5:00:00:bright:00 1 1\n")


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    for stem, text in FILES.items():
        (tmp_path / f"data.{stem}").write_text(text, encoding="utf-8")
    (tmp_path / "cntlist.rev").write_text(COUNTS, encoding="utf-8")
    return tmp_path


def test_records_of_every_part_of_speech(folder):
    c = load_wordnet_all(folder)
    assert c.ids == ["n:00000100", "n:00000200", "v:00000300", "a:00000400", "a:00000500", "r:00000600"]
    r = {x.id: x for x in c.records}
    assert r["n:00000100"].title == "light" and r["n:00000100"].aliases == ()  # "Light": a case variant, once
    assert r["a:00000500"].title == "aglow" and r["a:00000500"].aliases == ("lambent",)  # the (p) marker dropped
    assert r["a:00000500"].metadata == {"pos": "adjective satellite", "lexname": "adj.all", "lex_filenum": 0,
                                        "word_counts": [0, 1]}  # aglow untagged, lambent once
    assert r["r:00000600"].metadata["pos"] == "adverb" and r["v:00000300"].metadata["lexname"] == "verb.change"  # lexnames(5): 30
    assert r["v:00000300"].text == "make lighter"


def test_word_counts_sum_a_words_tagged_senses_and_are_optional(folder):
    r = {x.id: x for x in load_wordnet_all(folder).records}
    assert r["n:00000100"].metadata["word_counts"] == [42]  # light: 40 as a noun + 2 as a verb, any case
    assert r["a:00000400"].metadata["word_counts"] == [7] and r["n:00000200"].metadata["word_counts"] == [0]
    (folder / "cntlist.rev").unlink()
    assert all(x.metadata["word_counts"] == [0] * (1 + len(x.aliases)) for x in load_wordnet_all(folder).records)


def test_typed_edges_cross_parts_of_speech(folder):
    assert load_wordnet_all(folder).edges == [
        Edge("n:00000100", "n:00000200", "hypernym"),
        Edge("n:00000100", "v:00000300", "derivation"),
        Edge("n:00000200", "n:00000100", "hyponym"),
        Edge("v:00000300", "n:00000100", "derivation"),  # the verb group pointer to itself is a self loop: dropped
        Edge("a:00000400", "a:00000500", "similar-to"),  # a satellite's pos "s" points into data.adj
        Edge("a:00000400", "n:00000100", "pertainym"),
        Edge("a:00000500", "a:00000400", "similar-to"),
        Edge("r:00000600", "a:00000400", "pertainym"),
    ]


@pytest.mark.skipif(not (WORDNET_DIR / "data.adv").is_file(), reason="Debian package wordnet-base not installed")
def test_counts_match_the_published_wordnet_3_0_statistics():
    c = load_source("wordnet-all")
    pos = [r.metadata["pos"].replace("adjective satellite", "adjective") for r in c.records]
    assert Counter(pos) == {"noun": 82_115, "verb": 13_767, "adjective": 18_156, "adverb": 3_621}  # synsets
    senses = Counter()
    for p, r in zip(pos, c.records):
        senses[p] += 1 + len(r.aliases)
    assert senses == {"noun": 146_312, "verb": 25_047, "adjective": 30_002, "adverb": 5_580}  # word-sense pairs
    ids = set(c.ids)
    assert len(ids) == 117_659 and all(e.source in ids and e.target in ids for e in c.edges)
    types = Counter(e.type for e in c.edges)
    assert types["hypernym"] == types["hyponym"] and {"similar-to", "pertainym", "also-see", "attribute",
                                                      "derivation", "entailment", "cause"} <= set(types)
