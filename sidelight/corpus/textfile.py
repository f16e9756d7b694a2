"""Reading text files line by line with errors that name file and line: UTF-8, and the two column forms.

Column files (qrels, edges) come in two forms, chosen per file and named in every error:

* tab-separated: every data line has a tab; columns are split on tabs only (fields stripped), so
  ids may contain spaces (FOLDOC's do);
* whitespace-separated: some line has no tab; columns are split on any run of whitespace. A line
  that has a tab and a field with a space in it is then refused, since it would be misread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import InputError, MissingDataError

TAB = "tab-separated"
WHITESPACE = "whitespace-separated"


def utf8_error(path: Path, exc: UnicodeDecodeError) -> InputError:
    """An InputError naming the file, line and byte of the first invalid UTF-8 sequence."""
    try:
        raw = Path(path).read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as first:
        before = raw[: first.start].decode("utf-8")
        lineno = before.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
        byte = raw[first.start : first.start + 1].hex()
        return InputError(f"{path}:{lineno}: invalid UTF-8 (byte 0x{byte}: {first.reason}); the file must be UTF-8")
    except OSError:
        pass
    return InputError(f"{path}: invalid UTF-8 ({exc.reason}); the file must be UTF-8")


def read_lines(path: Path, what: str = "input") -> list[tuple[int, str]]:
    """(line number, line without its newline) for every line of a UTF-8 text file."""
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"{path}: no such {what} file" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        with open(path, encoding="utf-8") as f:
            return [(n, line.rstrip("\r\n")) for n, line in enumerate(f, 1)]
    except UnicodeDecodeError as exc:
        raise utf8_error(path, exc) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} file ({exc.strerror or exc})") from None


def _first_field(line: str) -> str:
    parts = line.split("\t") if "\t" in line else line.split()
    return parts[0].strip() if parts else ""


def split_columns(path: Path, lines: list[tuple[int, str]],
                  is_header: Callable[[str], bool] = lambda first: False) -> tuple[str, list[tuple[int, list[str]]]]:
    """(form, [(line number, fields)]) for the non-blank lines; line 1 is skipped when `is_header(first field)`."""
    data = [(n, line) for n, line in lines if line.strip() and not (n == 1 and is_header(_first_field(line)))]
    untabbed = next((n for n, line in data if "\t" not in line), None)
    if untabbed is None:
        return TAB, [(n, [f.strip() for f in line.split("\t")]) for n, line in data]
    for n, line in data:
        if "\t" in line:
            spaced = next((f.strip() for f in line.split("\t") if len(f.split()) > 1), None)
            if spaced is not None:
                raise InputError(
                    f"{path}:{n}: field {spaced!r} holds a space, but line {untabbed} has no tab, so the file "
                    f"is read as {WHITESPACE}; put tabs between the columns on every line ({TAB} form allows "
                    f"spaces in ids)")
    return WHITESPACE, [(n, line.split()) for n, line in data]


def form_note(form: str) -> str:
    """Why a file was read in `form`, for error messages."""
    if form == TAB:
        return f"read as {TAB}: every line has a tab"
    return f"read as {WHITESPACE}: not every line has a tab (ids with spaces need tabs on every line)"
