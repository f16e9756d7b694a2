"""`bm25-sections` and `hybrid-sections`: sections scored as passages over the collection, checked
against BM25 computed by hand over the same section texts."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sidelight.corpus.folder import load_folder
from sidelight.corpus.passages import sections_of, window_texts
from sidelight.index import Index
from sidelight.methods.sections import section_index

NOTES = {
    "Long.md": "# Long\n\nIntro words about an orchard.\n\n## Fruit\n\nBanana banana cherry pie.\n\n"
               "## Animals\n\nZebra stripes in tall grass. The zebra eats grass.\n",
    "Short.md": "# Short\n\nA banana split.\n",
    "Zoo.md": "# Zoo\n\nLions, a zebra and many more animals live at the zoo, with keepers and feeding times.\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    vault = tmp_path_factory.mktemp("vault")
    for rel, text in NOTES.items():
        (vault / rel).write_text(text, encoding="utf-8")
    return Index.build(load_folder(vault), progress=False)


def hand_bm25(units: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Robertson BM25 of each unit: idf ln(1 + (N - df + 0.5)/(df + 0.5)), lengths against the mean."""
    toks = [re.findall(r"[a-z0-9]+", u.lower()) for u in units]
    avg = sum(map(len, toks)) / len(toks)
    out = []
    for t in toks:
        s = 0.0
        for q in set(re.findall(r"[a-z0-9]+", query.lower())):
            df = sum(q in u for u in toks)
            tf = t.count(q)
            if tf:
                idf = math.log(1 + (len(toks) - df + 0.5) / (df + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avg))
        out.append(s)
    return out


def units_of(index):
    owner, texts = [], []
    for p, r in enumerate(index.corpus.records):
        for _, text in window_texts(r):
            owner.append(p)
            texts.append(text)
    return owner, texts


def test_best_section_scores_are_bm25_over_the_collections_sections(index):
    owner, texts = units_of(index)
    query = "zebra grass"
    expected = hand_bm25(texts, query)
    best, which = section_index(index).best(query)
    for p, r in enumerate(index.corpus.records):
        mine = [s for o, s in zip(owner, expected) if o == p]
        assert best[p] == pytest.approx(max(mine), rel=1e-9)
    long = index.corpus.position["Long.md"]
    assert sections_of(index.corpus.records[long])[which[long]].heading[-1] == "Animals"


def test_mix_zero_ranks_by_best_section_and_mix_one_is_bm25(index):
    query = "zebra grass"
    owner, texts = units_of(index)
    unit = hand_bm25(texts, query)
    best = {index.ids[p]: max(s for o, s in zip(owner, unit) if o == p) for p in range(len(index.ids))}
    hits = index.search(query, "bm25-sections", 3, mix=0.0)
    expected = sorted((i for i in best if best[i] > 0), key=lambda i: (-best[i], i))
    assert hits.ids == expected
    assert [h.score for h in hits] == pytest.approx([best[i] / max(best.values()) for i in expected], rel=1e-9)
    assert index.search(query, "bm25-sections", 3, mix=1.0).ids == index.search(query, "bm25", 3).ids


def test_the_mix_weighs_whole_document_against_best_section(index):
    query = "zebra grass"
    doc = index.lexical.bm25_scores(query)
    best, _ = section_index(index).best(query)
    mixed = 0.25 * doc / doc.max() + 0.75 * best / best.max()
    hits = index.search(query, "bm25-sections", 3, mix=0.25)
    assert [h.score for h in hits] == pytest.approx(sorted(mixed[mixed > 0], reverse=True), rel=1e-9)
    assert np.isclose(hits[0].score, mixed.max())
