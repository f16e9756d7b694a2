"""BEIR folders: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.

Query `metadata` is dropped on purpose: in SciFact it holds the evidence labels (the answers).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, MissingDataError
from .jsonl import read_jsonl, record_from_json
from .model import Corpus
from .textfile import form_note, read_lines, split_columns


def load_beir_corpus(folder: Path) -> Corpus:
    folder = Path(folder)
    path = folder / "corpus.jsonl"
    if not path.is_file():
        raise MissingDataError(f"{folder} is not a BEIR folder (no corpus.jsonl)")
    records = [record_from_json(obj, f"{path}:{n}") for n, obj in read_jsonl(path)]
    return Corpus(folder.name, records)


def load_queries(path: Path) -> dict[str, str]:
    """Query id -> text. Only `_id`/`id` and `text` are read; metadata is never touched.

    A query id given twice is an error naming both lines (it is never silently overwritten).
    """
    queries: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for n, obj in read_jsonl(Path(path)):
        qid, text = obj.get("_id", obj.get("id")), obj.get("text")
        if qid is None or not isinstance(text, str):
            raise InputError(f"{path}:{n}: a query needs '_id' and string 'text'")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
            raise InputError(f"{path}:{n}: query id must be a non-empty string or an integer, got {qid!r}")
        qid = str(qid)
        if qid in first_line:
            raise InputError(f"{path}:{n}: duplicate query id {qid!r} (also on line {first_line[qid]})")
        first_line[qid] = n
        queries[qid] = text
    return queries


def read_qrels(path: Path, known_ids: set[str] | None = None) -> tuple[dict[str, dict[str, int]], str]:
    """(query id -> record id -> grade, form) from a qrels file; form is `textfile.TAB` or `textfile.WHITESPACE`.

    Lines are `query-id corpus-id score` (or TREC `qid iter docid rel`), with an optional
    `query-id ...` header. When every line has a tab, columns are split on tabs only, so ids may
    hold spaces; otherwise on whitespace. The same (query, record) pair judged twice with different
    grades is an error naming both lines.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"{path}: no such qrels file" + (" (it is a folder)" if path.is_dir() else ""))
    form, rows = split_columns(path, read_lines(path, "qrels"), lambda first: first == "query-id")
    qrels: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, parts in rows:
        if len(parts) == 4:  # TREC style: qid iter docid rel
            parts = [parts[0], parts[2], parts[3]]
        if len(parts) != 3 or not parts[0] or not parts[1]:
            raise InputError(f"{path}:{lineno}: expected 'query-id corpus-id score' ({form_note(form)})")
        qid, did, grade = parts
        try:
            g = int(grade)
        except ValueError:
            raise InputError(f"{path}:{lineno}: grade {grade!r} is not an integer ({form_note(form)})") from None
        if known_ids is not None and did not in known_ids:
            raise InputError(f"{path}:{lineno}: unknown record id {did!r} (not in the corpus; {form_note(form)})")
        before = qrels.get(qid, {}).get(did)
        if before is not None and before != g:
            raise InputError(f"{path}:{lineno}: query {qid!r} judges record {did!r} {g}, "
                             f"but line {seen[qid, did]} judged it {before}")
        seen.setdefault((qid, did), lineno)
        qrels.setdefault(qid, {})[did] = g
    return qrels, form


def load_qrels(path: Path, known_ids: set[str] | None = None) -> dict[str, dict[str, int]]:
    """Query id -> record id -> grade (see `read_qrels` for the accepted forms)."""
    return read_qrels(path, known_ids)[0]


def beir_split(folder: Path, split: str = "test") -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Queries and qrels of one split, restricted to the judged queries."""
    folder = Path(folder)
    qrels = load_qrels(folder / "qrels" / f"{split}.tsv")
    queries = load_queries(folder / "queries.jsonl")
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise InputError(f"{folder}: qrels name {len(missing)} unknown query id(s), e.g. {missing[0]!r}")
    return {q: queries[q] for q in qrels}, qrels
