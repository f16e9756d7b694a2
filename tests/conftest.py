"""Shared fixtures: small corpora built in the test, and SciFact from the shared data folder."""

from __future__ import annotations

import pytest

from sidelight.config import dataset_path
from sidelight.corpus import Corpus, Edge, Record
from sidelight.corpus.beir import beir_split, load_beir_corpus
from sidelight.index import Index


@pytest.fixture(scope="session")
def scifact_dir():
    """The SciFact BEIR folder; a missing data folder fails with a message naming SIDELIGHT_DATA."""
    return dataset_path("scifact")


@pytest.fixture(scope="session")
def scifact_corpus(scifact_dir) -> Corpus:
    return load_beir_corpus(scifact_dir)


@pytest.fixture(scope="session")
def scifact_test(scifact_dir):
    return beir_split(scifact_dir, "test")


@pytest.fixture(scope="session")
def scifact_index(scifact_corpus) -> Index:
    """Pilot settings: no stemming, no stop words, k1=1.2, b=0.75, title + abstract."""
    return Index.build(scifact_corpus, progress=False)


@pytest.fixture
def toy_corpus() -> Corpus:
    records = [
        Record("d1", "Cats", "the cat sat on the mat"),
        Record("d2", "Dogs", "a dog chased the cat"),
        Record("d3", "Birds", "birds fly over the mat and the dog"),
        Record("d4", "Fish", "fish swim"),
        Record("d0", "Cats", "the cat sat on the mat"),  # same as d1: a tie broken by ascending id
    ]
    edges = [Edge("d1", "d2"), Edge("d2", "d3", "see", 2.0)]
    return Corpus("toy", records, edges)


@pytest.fixture(scope="session")
def wordnet_all() -> Corpus:
    """All of WordNet from the Debian package wordnet-base (`make install` installs it)."""
    from sidelight.corpus.wordnet import load_wordnet_all

    return load_wordnet_all()
