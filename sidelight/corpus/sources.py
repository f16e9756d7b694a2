"""Resolve a SOURCE argument to a corpus: `foldoc`, `wordnet` (nouns), `wordnet-all`, a BEIR folder,
a folder of documents (Markdown, HTML, text, PDF), a JSONL file, or a data set name."""

from __future__ import annotations

from pathlib import Path

from ..config import data_dir
from ..errors import MissingDataError
from .beir import load_beir_corpus
from .jsonl import load_jsonl_corpus
from .model import Corpus


def load_source(spec: str) -> Corpus:
    if spec == "foldoc":
        from .foldoc import load_foldoc

        return load_foldoc()
    if spec == "wordnet":
        from .wordnet import load_wordnet_nouns

        return load_wordnet_nouns()
    if spec == "wordnet-all":
        from .wordnet import load_wordnet_all

        return load_wordnet_all()
    path = Path(spec)
    if path.is_dir():
        if not (path / "corpus.jsonl").is_file():
            from .folder import load_folder

            return load_folder(path)
        return load_beir_corpus(path)
    if path.is_file():
        return load_jsonl_corpus(path)
    named = data_dir() / spec
    if named.is_dir():
        return load_beir_corpus(named)
    raise MissingDataError(
        f"unknown source {spec!r}: not 'foldoc', 'wordnet', 'wordnet-all', a BEIR folder, a folder of "
        f"documents, a JSONL file, "
        f"or a data set under {data_dir()} (set SIDELIGHT_DATA to change that folder)"
    )
