"""Input checks for served calls: limits, and `ApiError` (HTTP status + stable code + what to fix).

Every interface (HTTP, MCP, CLI) goes through the same `Service`, so these checks and their error
codes are the API's contract: a client can switch on ``code``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..serendipity.seating import DEFAULT_DIAL, MAX_DIAL  # noqa: F401  (re-exported: the dial's limits)
from ..serendipity.verdicts import NOT_USEFUL, USEFUL

MAX_QUERY_CHARS = 1_000
MAX_K = 100
MAX_LIMIT = 50
MAX_EDGES = 500
MAX_ID_CHARS = 512
MAX_WHO_CHARS = 200
MAX_NOTE_CHARS = 2_000
MAX_BODY_BYTES = 64 * 1024  # larger request bodies are refused (413) before they are read whole
MAX_JSON_DEPTH = 64  # deeper JSON nesting is refused (400) while the body streams in
PAGE_TOKEN_HEADER = "X-Sidelight-Token"  # the per-server page token every POST carries
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
TRUE_WORDS = ("true", "1", "yes")  # spellings of a boolean in a GET query string (JSON bodies and MCP: true/false)
FALSE_WORDS = ("false", "0", "no")


class ApiError(Exception):
    """A refused call: HTTP status, a stable code and a message that says what to fix."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details

    def to_dict(self) -> dict:
        return {"error": {"status": self.status, "code": self.code, "message": self.message, **self.details}}


def unicode_problem(text: str) -> str | None:
    """Why `text` cannot be stored as UTF-8 (a lone surrogate, e.g. from bytes that are not UTF-8 on a
    command line), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        ch = text[exc.start]
        origin = (f" (the byte 0x{ord(ch) - 0xDC00:02x} is not UTF-8)" if 0xDC80 <= ord(ch) <= 0xDCFF
                  else " (a lone UTF-16 surrogate)")
        return f"is not valid Unicode text at character {exc.start}: {ch!r}{origin}"
    return None


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise ApiError(400, "bad_query", "query must be a string")
    if not query.strip():
        raise ApiError(400, "empty_query", "query is empty; send some words to search for")
    bad = unicode_problem(query)
    if bad:
        raise ApiError(400, "bad_query", f"query {bad}")
    if len(query) > MAX_QUERY_CHARS:
        raise ApiError(400, "query_too_long", f"query has {len(query)} characters; at most {MAX_QUERY_CHARS}",
                       max_chars=MAX_QUERY_CHARS)
    return query


def check_int(value: Any, name: str, lo: int, hi: int, default: int | None = None) -> int:
    """An integer lo..hi (ints, integral floats and numeric strings); `default` when absent."""
    if value is None or value == "":
        if default is None:
            raise ApiError(400, f"missing_{name}", f"{name} is required (an integer {lo}..{hi})")
        return default
    bad = ApiError(400, f"bad_{name}", f"{name} must be an integer {lo}..{hi}, got {value!r}")
    if isinstance(value, bool):
        raise bad
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise bad from None
    if not isinstance(value, int):
        raise bad
    if not lo <= value <= hi:
        raise ApiError(400, f"{name}_out_of_range", f"{name} must be between {lo} and {hi}, got {value}",
                       min=lo, max=hi)
    return value


def check_bool(value: Any, name: str, default: bool) -> bool:
    """A boolean: true / false, or one of the spellings true/false, 1/0, yes/no as a string; `default` when absent."""
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise ApiError(400, f"bad_{name}", f"{name} must be a boolean (true or false; as a string also "
                   f"{'/'.join(TRUE_WORDS)} or {'/'.join(FALSE_WORDS)}), got {value!r}")


def check_params_object(value: Any) -> dict:
    """Method parameters: a JSON object (or its text, from a query string); absent is {}.

    Only the shape is checked here; each value is checked by the method's declaration (`get_method`).
    """
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ApiError(400, "bad_params", f"params must be a JSON object, got {value[:80]!r}") from None
    if not isinstance(value, dict):
        raise ApiError(400, "bad_params", f"params must be an object of NAME: VALUE, got {type(value).__name__}")
    return value


def check_filter(value: Any) -> dict[str, str]:
    """A metadata filter: an object of KEY: VALUE strings (or its JSON text, from a query string); absent is {}."""
    where = check_params_object(value)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in where.items()):
        raise ApiError(400, "bad_filter", "filter must be an object of metadata KEY: exact VALUE strings, "
                       "e.g. {\"pos\": \"noun\"}")
    return where


def check_trace_id(value: Any) -> str:
    if not isinstance(value, str) or not TRACE_ID.match(value):
        raise ApiError(400, "bad_trace_id", f"trace_id must be the 32-hex-digit id a lane returned, got {value!r}")
    return value


def check_node_id(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS:
        raise ApiError(400, "bad_node_id", f"node_id must be a record id (1..{MAX_ID_CHARS} characters)")
    return value


def check_sha256(value: Any) -> str:
    """The answer hash for a reveal, lower-cased."""
    h = value.strip().lower() if isinstance(value, str) else None
    if h is None or not SHA256.match(h):
        raise ApiError(400, "bad_answer_sha256", "answer_sha256 must be the 64-hex-digit SHA-256 of your "
                       "finished answer (hash it before asking for the reveal)")
    return h


def check_verdict(verdict: Any, who: Any, note: Any, allowed: list[str]) -> tuple[str, str, str | None]:
    """(verdict lower-cased, who stripped, note) of a human verdict; `allowed` = its accepted spellings."""
    if not isinstance(verdict, str) or verdict.strip().lower() not in allowed:
        raise ApiError(400, "bad_verdict", f"verdict must be {USEFUL!r} or {NOT_USEFUL!r}, got {verdict!r}")
    if not isinstance(who, str) or not who.strip() or len(who) > MAX_WHO_CHARS:
        raise ApiError(400, "bad_who", f"who must name the person giving the verdict (1..{MAX_WHO_CHARS} characters)")
    if note is not None and (not isinstance(note, str) or len(note) > MAX_NOTE_CHARS):
        raise ApiError(400, "bad_note", f"note must be a string of at most {MAX_NOTE_CHARS} characters")
    return verdict.strip().lower(), who.strip(), note
