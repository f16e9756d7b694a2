"""BEIR folders: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.

Query `metadata` is dropped on purpose: in SciFact it holds the evidence labels (the answers).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, MissingDataError
from .jsonl import read_jsonl, record_from_json
from .model import Corpus


def load_beir_corpus(folder: Path) -> Corpus:
    folder = Path(folder)
    path = folder / "corpus.jsonl"
    if not path.is_file():
        raise MissingDataError(f"{folder} is not a BEIR folder (no corpus.jsonl)")
    records = [record_from_json(obj, f"{path}:{n}") for n, obj in read_jsonl(path)]
    return Corpus(folder.name, records)


def load_queries(path: Path) -> dict[str, str]:
    """Query id -> text. Only `_id`/`id` and `text` are read; metadata is never touched."""
    queries: dict[str, str] = {}
    for n, obj in read_jsonl(Path(path)):
        qid, text = obj.get("_id", obj.get("id")), obj.get("text")
        if qid is None or not isinstance(text, str):
            raise InputError(f"{path}:{n}: a query needs '_id' and string 'text'")
        queries[str(qid)] = text
    return queries


def load_qrels(path: Path, known_ids: set[str] | None = None) -> dict[str, dict[str, int]]:
    """Query id -> record id -> grade, from TSV with an optional `query-id corpus-id score` header."""
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"{path}: no such qrels file")
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or (lineno == 1 and parts[0] == "query-id"):
                continue
            if len(parts) == 4:  # TREC style: qid iter docid rel
                parts = [parts[0], parts[2], parts[3]]
            if len(parts) != 3:
                raise InputError(f"{path}:{lineno}: expected 'query-id corpus-id score'")
            qid, did, grade = parts
            try:
                g = int(grade)
            except ValueError as exc:
                raise InputError(f"{path}:{lineno}: grade {grade!r} is not an integer") from exc
            if known_ids is not None and did not in known_ids:
                raise InputError(f"{path}:{lineno}: unknown record id {did!r} (not in the corpus)")
            qrels.setdefault(qid, {})[did] = g
    return qrels


def beir_split(folder: Path, split: str = "test") -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Queries and qrels of one split, restricted to the judged queries."""
    folder = Path(folder)
    qrels = load_qrels(folder / "qrels" / f"{split}.tsv")
    queries = load_queries(folder / "queries.jsonl")
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise InputError(f"{folder}: qrels name {len(missing)} unknown query id(s), e.g. {missing[0]!r}")
    return {q: queries[q] for q in qrels}, qrels
