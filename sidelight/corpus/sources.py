"""Resolve a SOURCE argument to a corpus: `foldoc`, `gcide`, `wordnet` (nouns), `wordnet-all`, a BEIR folder,
a folder of documents (Markdown, HTML, text, PDF), a JSONL file, or a data set name."""

from __future__ import annotations

from pathlib import Path

from ..config import data_dir
from ..errors import MissingDataError
from .beir import load_beir_corpus
from .jsonl import load_jsonl_corpus
from .model import Corpus


def document_folder(spec: str) -> Path | None:
    """The folder `spec` names when it is a folder of documents (not a BEIR folder), else None."""
    for path in (Path(spec), data_dir() / spec):
        if path.is_dir():
            return None if (path / "corpus.jsonl").is_file() else path
    return None


def load_source(spec: str, skip_unresolved: bool = False) -> Corpus:
    """The corpus `spec` names; `skip_unresolved`: a JSONL file's edges that name unknown ids are
    counted and left out instead of failing."""
    if spec == "foldoc":
        from .foldoc import load_foldoc

        return load_foldoc()
    if spec == "gcide":
        from .gcide import load_gcide

        return load_gcide()
    if spec == "wordnet":
        from .wordnet import load_wordnet_nouns

        return load_wordnet_nouns()
    if spec == "wordnet-all":
        from .wordnet import load_wordnet_all

        return load_wordnet_all()
    folder = document_folder(spec)
    if folder is not None:
        from .folder import load_folder

        return load_folder(folder)
    path = Path(spec)
    if path.is_dir():
        return load_beir_corpus(path)
    if path.is_file():
        return load_jsonl_corpus(path, skip_unresolved=skip_unresolved)
    named = data_dir() / spec
    if named.is_dir():
        return load_beir_corpus(named)
    raise MissingDataError(
        f"unknown source {spec!r}: not 'foldoc', 'gcide', 'wordnet', 'wordnet-all', a BEIR folder, a folder of "
        f"documents, a JSONL file, "
        f"or a data set under {data_dir()} (set SIDELIGHT_DATA to change that folder)"
    )
