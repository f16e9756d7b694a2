"""Generic loaders: JSONL records, TSV edges, and the JSONL reader that names file and line on error."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator

from ..errors import InputError, MissingDataError
from .model import Corpus, Edge, Record


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a malformed line is an error naming both."""
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"{path}: no such file")
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def record_from_json(obj: dict, where: str) -> Record:
    """A Record from `{"id"|"_id", "title"|"name", "text", "metadata", "aliases"}`."""
    rid = obj.get("id", obj.get("_id"))
    if rid is None or str(rid) == "":
        raise InputError(f"{where}: record has no 'id' (or '_id')")
    text = obj.get("text")
    if not isinstance(text, str):
        raise InputError(f"{where}: record {rid!r} has no string 'text'")
    title = obj.get("title", obj.get("name")) or ""
    meta = obj.get("metadata") or {}
    return Record(str(rid), str(title), text, meta if isinstance(meta, dict) else {}, tuple(obj.get("aliases") or ()))


def read_edges_tsv(path: Path) -> list[Edge]:
    """Edges as `source<TAB>target[<TAB>type[<TAB>weight]]`; a header starting with 'source' is skipped."""
    edges = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if not line.strip() or (lineno == 1 and parts[0].lower() in ("source", "src", "from")):
                continue
            if len(parts) < 2:
                raise InputError(f"{path}:{lineno}: an edge needs source and target separated by a tab")
            etype = parts[2] if len(parts) > 2 and parts[2] else "link"
            try:
                weight = float(parts[3]) if len(parts) > 3 else 1.0
            except ValueError as exc:
                raise InputError(f"{path}:{lineno}: edge weight {parts[3]!r} is not a number") from exc
            if not math.isfinite(weight) or weight <= 0:
                raise InputError(f"{path}:{lineno}: edge weight must be finite and positive, got {weight}")
            edges.append(Edge(parts[0], parts[1], etype, weight))
    return edges


def load_jsonl_corpus(path: Path, edges: Path | None = None, title_weight: int = 1) -> Corpus:
    """Records from a JSONL file, with optional TSV edges (default: `<stem>.edges.tsv` beside it)."""
    path = Path(path)
    records = [record_from_json(obj, f"{path}:{n}") for n, obj in read_jsonl(path)]
    if edges is None and path.with_suffix(".edges.tsv").is_file():
        edges = path.with_suffix(".edges.tsv")
    return Corpus(path.stem, records, read_edges_tsv(edges) if edges else [], title_weight)
