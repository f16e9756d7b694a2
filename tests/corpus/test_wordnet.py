"""WordNet noun loader: a hand-written data.noun excerpt in the real format."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidelight.corpus.model import Edge
from sidelight.corpus.stats import graph_stats
from sidelight.corpus.wordnet import WORDNET_NOUNS, load_wordnet_nouns
from sidelight.errors import InputError, MissingDataError

EXCERPT = (
    "  1 This software and database is being provided to you, the LICENSEE, by  \n"
    "  2 Princeton University under the following license.  By obtaining, using  \n"
    "00001740 03 n 01 entity 0 002 ~ 00001930 n 0000 ~ 00002137 n 0000 | that which is perceived "
    "or known or inferred to have its own distinct existence (living or nonliving)  \n"
    "00001930 03 n 01 physical_entity 0 002 @ 00001740 n 0000 ! 00002137 n 0000 | an entity that has "
    "physical existence  \n"
    "00002137 03 n 02 abstraction 0 abstract_entity 0 004 @ 00001740 n 0000 + 00002137 n 0201 "
    "+ 00001930 n 0101 + 00001930 n 0202 | a general concept formed by extracting common features "
    'from specific examples; "a test"  \n'
    "00003000 27 n 0a mix 0 mixture 0 blend 0 commixture 0 admixture 0 intermixture 0 mingling 0 "
    "meld 0 fusion 1 Hawai'i_mix 0 003 @ 00001930 n 0000 + 02000000 v 0301 ;c 00002137 n 0000 "
    "| a thing mixed  \n"
)


@pytest.fixture()
def excerpt(tmp_path: Path) -> Path:
    p = tmp_path / "data.noun"
    p.write_text(EXCERPT, encoding="utf-8")
    return p


def test_records(excerpt):
    c = load_wordnet_nouns(excerpt)
    assert c.title_weight == 2
    assert c.ids == ["00001740", "00001930", "00002137", "00003000"]
    r = {x.id: x for x in c.records}
    assert r["00001930"].title == "physical entity"
    assert r["00001930"].aliases == ()
    assert r["00001930"].text == "an entity that has physical existence"
    assert r["00001930"].metadata == {"lex_filenum": 3, "lexname": "noun.Tops"}
    assert r["00002137"].aliases == ("abstract entity",)
    assert r["00002137"].text == 'a general concept formed by extracting common features from specific examples; "a test"'
    # w_cnt is hexadecimal: 0a = ten lemmas
    assert r["00003000"].title == "mix"
    assert r["00003000"].aliases == (
        "mixture", "blend", "commixture", "admixture", "intermixture", "mingling", "meld", "fusion", "Hawai'i mix",
    )
    assert r["00003000"].metadata == {"lex_filenum": 27, "lexname": "noun.substance"}


def test_edges(excerpt):
    c = load_wordnet_nouns(excerpt)
    assert c.edges == [
        Edge("00001740", "00001930", "hyponym"),
        Edge("00001740", "00002137", "hyponym"),
        Edge("00001930", "00001740", "hypernym"),
        Edge("00001930", "00002137", "antonym"),
        Edge("00002137", "00001740", "hypernym"),
        # "+ 00002137 n 0201" points to its own synset: dropped; two lexical "+" to one synset: one edge
        Edge("00002137", "00001930", "derivation"),
        Edge("00003000", "00001930", "hypernym"),
        # the verb pointer is not an edge
        Edge("00003000", "00002137", "domain-topic"),
    ]


def test_missing_file_names_the_package(tmp_path):
    with pytest.raises(MissingDataError, match=r"wordnet-base"):
        load_wordnet_nouns(tmp_path / "data.noun")


def test_malformed_line(tmp_path):
    p = tmp_path / "data.noun"
    p.write_text("00001740 03 n 01 entity 0 002 ~ 00001930 n | truncated\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"data.noun:1"):
        load_wordnet_nouns(p)


@pytest.mark.skipif(
    not WORDNET_NOUNS.is_file(), reason="Debian package wordnet-base not installed (apt-get install wordnet-base)"
)
def test_real_wordnet():
    c = load_wordnet_nouns()
    assert len(c) == 82_115  # WordNet 3.0 noun synsets
    assert len(c.edges) > 200_000
    ids = set(c.ids)
    assert all(len(i) == 8 and i.isdigit() for i in ids)
    assert all(e.source in ids and e.target in ids and e.source != e.target for e in c.edges)
    r = {x.id: x for x in c.records}
    assert r["00001740"].title == "entity"
    assert r["00001930"].title == "physical entity"
    types = {e.type for e in c.edges}
    assert {"hypernym", "hyponym", "instance-hypernym", "part-meronym", "derivation", "antonym"} <= types
    s = graph_stats(c)
    assert s.isolated == 0 and s.components == 1  # every noun reaches "entity" by hypernyms
