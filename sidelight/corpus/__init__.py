"""Corpus model and loaders (BEIR, JSONL + TSV edges, FOLDOC, WordNet nouns)."""

from .model import Corpus, Edge, Record

__all__ = ["Corpus", "Edge", "Record"]
