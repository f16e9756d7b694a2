"""Generic loaders: JSONL records, TSV edges, and the JSONL reader that names file and line on error."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator

from ..errors import InputError, MissingDataError
from .model import MAX_EDGE_WEIGHT, Corpus, Edge, Record
from .textfile import form_note, read_lines, split_columns, utf8_error


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a malformed line is an error naming both."""
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"{path}: no such file" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from exc
                except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4300 digits
                    raise InputError(f"{path}:{lineno}: malformed JSON ({exc})") from None
                if not isinstance(obj, dict):
                    raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
                yield lineno, obj
    except UnicodeDecodeError as exc:
        raise utf8_error(path, exc) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _describe(value) -> str:
    """`5 (int)`, `'abc' (str)`: a value and its JSON-ish type, for error messages."""
    text = repr(value)
    return f"{text if len(text) <= 40 else text[:37] + '...'} ({type(value).__name__})"


def _aliases(value, where: str, rid: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        raise InputError(f"{where}: record {rid!r}: 'aliases' must be a list of strings, got the string {value!r} "
                         f"(write [{json.dumps(value, ensure_ascii=False)}] for one alias)")
    if not isinstance(value, list):
        raise InputError(f"{where}: record {rid!r}: 'aliases' must be a list of strings, got {_describe(value)}")
    for i, a in enumerate(value):
        if not isinstance(a, str):
            raise InputError(f"{where}: record {rid!r}: 'aliases' must be a list of strings; "
                             f"item {i} is {_describe(a)}")
    return tuple(value)


def _check_unicode(value: str, where: str, what: str) -> None:
    """Refuse a string UTF-8 cannot encode (a lone surrogate such as "\ud800" from a JSON escape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{where}: {what} {value[:40]!r} holds a lone UTF-16 surrogate "
                         f"({value[exc.start]!r} at character {exc.start}); it is not valid Unicode text") from None


def record_from_json(obj: dict, where: str) -> Record:
    """A Record from `{"id"|"_id", "title"|"name", "text", "metadata", "aliases"}`.

    id: a non-empty string or an integer; title: a string (or null); metadata: an object (or
    null); aliases: a list of strings (or null). Anything else is an InputError naming `where`.
    """
    rid = obj.get("id", obj.get("_id"))
    if rid is None or str(rid) == "":
        raise InputError(f"{where}: record has no 'id' (or '_id')")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        raise InputError(f"{where}: record id must be a string or an integer, got {_describe(rid)}")
    rid = str(rid)
    _check_unicode(rid, where, "record id")
    text = obj.get("text")
    if not isinstance(text, str):
        raise InputError(f"{where}: record {rid!r} has no string 'text'")
    title = obj.get("title", obj.get("name"))
    if title is None:
        title = ""
    elif not isinstance(title, str):
        raise InputError(f"{where}: record {rid!r}: 'title' must be a string, got {_describe(title)}")
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise InputError(f"{where}: record {rid!r}: 'metadata' must be a JSON object, got {_describe(meta)}")
    aliases = _aliases(obj.get("aliases"), where, rid)
    for what, value in (("title", title), ("text", text), ("metadata", json.dumps(meta, ensure_ascii=False)),
                        ("aliases", " ".join(aliases))):
        _check_unicode(value, where, f"record {rid!r}: {what}")
    return Record(rid, title, text, meta, aliases)


def read_edges(path: Path) -> tuple[list[Edge], str]:
    """(edges, form) from `source target [type [weight]]` lines, tab- or whitespace-separated (see `textfile`).

    A first line whose first field is 'source', 'src' or 'from' is a header and skipped.
    """
    path = Path(path)
    form, rows = split_columns(path, read_lines(path, "edges"), lambda first: first.lower() in ("source", "src", "from"))
    edges = []
    for lineno, parts in rows:
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise InputError(f"{path}:{lineno}: an edge needs a source and a target ({form_note(form)})")
        etype = parts[2] if len(parts) > 2 and parts[2] else "link"
        try:
            weight = float(parts[3]) if len(parts) > 3 else 1.0
        except ValueError:
            raise InputError(f"{path}:{lineno}: edge weight {parts[3]!r} is not a number ({form_note(form)})") from None
        if not math.isfinite(weight) or not 0 < weight <= MAX_EDGE_WEIGHT:
            raise InputError(f"{path}:{lineno}: edge weight must be finite, positive and at most "
                             f"{MAX_EDGE_WEIGHT:g}, got {weight:g}")
        edges.append(Edge(parts[0], parts[1], etype, weight))
    return edges, form


def read_edges_tsv(path: Path) -> list[Edge]:
    """Edges as `source<TAB>target[<TAB>type[<TAB>weight]]` (or whitespace-separated, see `read_edges`)."""
    return read_edges(path)[0]


def known_edges(records: list[Record], edges: list[Edge]) -> tuple[list[Edge], list[Edge]]:
    """(edges whose ends are both record ids, the others), each in order."""
    ids = {r.id for r in records}
    kept = [e for e in edges if e.source in ids and e.target in ids]
    return kept, [e for e in edges if e.source not in ids or e.target not in ids]


def load_jsonl_corpus(path: Path, edges: Path | None = None, title_weight: int = 1,
                      skip_unresolved: bool = False) -> Corpus:
    """Records from a JSONL file, with optional TSV edges (default: `<stem>.edges.tsv` beside it).

    An edge naming an unknown id is an error, or with `skip_unresolved` left out and counted in
    the corpus's `unresolved_edges` (an export whose links reach outside the records)."""
    path = Path(path)
    records = [record_from_json(obj, f"{path}:{n}") for n, obj in read_jsonl(path)]
    if edges is None and path.with_suffix(".edges.tsv").is_file():
        edges = path.with_suffix(".edges.tsv")
    links = read_edges_tsv(edges) if edges else []
    dropped: list[Edge] = []
    if skip_unresolved:
        links, dropped = known_edges(records, links)
    return Corpus(path.stem, records, links, title_weight, unresolved_edges=len(dropped))
