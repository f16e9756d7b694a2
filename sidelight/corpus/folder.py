"""A folder of documents (.md, .html/.htm, .txt, .pdf) read as a corpus: one record per file, links
as edges, and a report of what was skipped or unresolved.

`walk` lists the files to read: hidden names (`.obsidian`, `.git`, `.trash`) are skipped; a symbolic
link to a folder or file of the tree is skipped (it is read at its own path) and one to outside it
is followed once per real path, so a link loop ends;
`exclude` globs and the root's `.sidelightignore` (gitignore syntax) leave paths out, files of
other kinds are counted as ignored and files over `max_bytes` are skipped. `read_document` reads
one file, `resolve_links` (in `links`) turns the records' links into edges, `load_folder` does
all three. Nothing about a single file fails the run: it is skipped or warned about, with a reason.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pathspec

from ..errors import InputError, MissingDataError
from .document import ParsedDocument
from .links import DOCUMENT_EXTENSIONS, count_resolved, resolve_links
from .markdown import parse_markdown
from .model import Corpus, Record
from .report import FolderReport

FORMATS = {".md": "markdown", ".html": "html", ".htm": "html", ".txt": "text", ".pdf": "pdf"}
MAX_BYTES = 10 * 1024 * 1024
#: the readers' version: bump it whenever the same file bytes would read as another record (text,
#: sections, line numbers, links, metadata), so `sync` re-reads every file of an index made before
READER_VERSION = 1
IGNORE_FILE = ".sidelightignore"


@dataclass
class FolderCorpus(Corpus):
    """A Corpus read from a folder, with the report of the reading."""

    report: FolderReport = field(default_factory=FolderReport, compare=False, repr=False)
    file_stats: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class Walk:
    """The files `walk` found to read (relative POSIX paths, sorted) and what it left out."""

    files: list[str] = field(default_factory=list)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns), taken before reading
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0


def _ignore_spec(root: Path, exclude: tuple[str, ...], warnings: list[tuple[str, str]]):
    """A matcher of relative paths (folders end with '/') from `exclude` and `.sidelightignore`."""
    lines = [("--exclude", p) for p in exclude]
    ignore = root / IGNORE_FILE
    if ignore.is_file():
        try:
            text = ignore.read_text(encoding="utf-8", errors="replace")
            lines += [(IGNORE_FILE, ln.strip()) for ln in text.splitlines()]
        except OSError as exc:
            warnings.append((IGNORE_FILE, f"cannot read it ({exc.strerror or exc})"))
    good = []
    for where, ln in lines:
        if not ln or ln.startswith("#"):
            continue
        try:
            pathspec.GitIgnoreSpec.from_lines([ln])
            good.append(ln)
        except (ValueError, TypeError) as exc:
            warnings.append((where, f"pattern {ln!r} is not valid ({exc}); ignored"))
    if not good and not exclude:
        return lambda rel, is_dir: False  # nothing to match: the common case, and a sync's walk is timed
    spec = pathspec.GitIgnoreSpec.from_lines(good)

    def excluded(rel: str, is_dir: bool) -> bool:
        name = rel + "/" if is_dir else rel
        return spec.match_file(name) or any(fnmatch.fnmatchcase(rel, pat) for pat in exclude)

    return excluded


def _inside(real: str, root_real: str) -> str | None:
    """The POSIX path of `real` relative to the root when it lies inside it, not under a hidden
    name (so the walk reads it at that path), else None."""
    try:
        rel = os.path.relpath(real, root_real)
    except ValueError:
        return None
    parts = PurePosixPath(Path(rel).as_posix()).parts
    if rel == ".":
        return ""
    if not parts or parts[0] == ".." or any(p.startswith(".") for p in parts):
        return None
    return "/".join(parts)


def walk(root: Path, exclude: tuple[str, ...] = (), max_bytes: int = MAX_BYTES) -> Walk:
    """The documents under `root` to read, in sorted order, and the files left out with reasons."""
    root = Path(root)
    out = Walk()
    excluded = _ignore_spec(root, tuple(exclude), out.warnings)
    root_real = os.path.realpath(root)
    seen_dirs = {root_real: ""}
    seen_files: dict[str, str] = {}
    stack = [("", root_real)]  # (relative path, real path): a plain entry's real path is its folder's + name
    while stack:
        rel_dir, real_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.skipped.append((rel_dir or ".", f"cannot read the folder ({exc.strerror or exc})"))
            continue
        subdirs = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = os.stat(entry.path)
            except OSError as exc:
                if entry.is_symlink():
                    out.skipped.append((rel, "broken symbolic link"))
                else:
                    out.skipped.append((rel, f"cannot read it ({exc.strerror or exc})"))
                continue
            link = entry.is_symlink()
            if stat.S_ISDIR(st.st_mode):
                if excluded(rel, True):
                    continue
                real = os.path.realpath(entry.path) if link else os.path.join(real_dir, entry.name)
                inside = _inside(real, root_real) if link else None
                if link and inside is not None:
                    out.skipped.append((rel, f"symbolic link to a folder read at its own path ({inside or '.'})"))
                    continue
                if real in seen_dirs:
                    out.skipped.append((rel, f"{'symbolic link to ' if link else ''}a folder already read "
                                             f"({seen_dirs[real] or '.'})"))
                    continue
                seen_dirs[real] = rel
                subdirs.append((rel, real))
                continue
            if not stat.S_ISREG(st.st_mode) or excluded(rel, False):
                continue
            if os.path.splitext(entry.name)[1].lower() not in FORMATS:
                out.ignored += 1
                continue
            real = os.path.realpath(entry.path) if link else os.path.join(real_dir, entry.name)
            inside = _inside(real, root_real) if link else None
            if real in seen_files or inside is not None:
                out.skipped.append((rel, f"same file as {seen_files.get(real) or inside}"))
                continue
            seen_files[real] = rel
            if st.st_size > max_bytes:
                out.skipped.append((rel, f"larger than the size cap ({st.st_size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB)"))
                continue
            out.files.append(rel)
            out.stats[rel] = (st.st_size, st.st_mtime_ns)
        stack.extend(reversed(subdirs))
    out.files.sort()
    return out


def _decode(data: bytes, issues: list[str]) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        issues.append(f"invalid UTF-8 (line {line}, byte 0x{data[exc.start:exc.start + 1].hex()}); "
                      "read with replacement characters")
        return data.decode("utf-8-sig", errors="replace")


def _parse(rel: str, fmt: str, data: bytes, issues: list[str], hidden_links: bool) -> ParsedDocument:
    stem = PurePosixPath(rel).stem
    if fmt == "pdf":
        from .pdf import parse_pdf

        return parse_pdf(data, stem)
    if b"\x00" in data:
        raise ValueError("binary content (NUL bytes) in a text file")
    text = _decode(data, issues)
    if fmt == "markdown":
        return parse_markdown(text, stem, hidden_links)
    if fmt == "html":
        from .html import parse_html

        return parse_html(text.encode("utf-8"), stem)
    from .plaintext import parse_text

    return parse_text(text, stem)


def read_document(root: Path, relpath: str, max_bytes: int = MAX_BYTES,
                  hidden_links: bool = False) -> tuple[Record | None, list[str]]:
    """(record, issues) of one file under `root`. The record is None when the file cannot be read,
    and the issues then say why; otherwise they are warnings (the record was still made).
    `hidden_links`: Markdown links inside comments count too (see `parse_markdown`)."""
    path = Path(root) / relpath
    fmt = FORMATS.get(PurePosixPath(relpath).suffix.lower())
    if fmt is None:
        return None, [f"not a document ({', '.join(DOCUMENT_EXTENSIONS)})"]
    if fmt == "pdf":
        from .pdf import INSTALL_HINT, pdf_available

        if not pdf_available():
            return None, [INSTALL_HINT]
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, [f"larger than the size cap ({size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB)"]
        data = path.read_bytes()
    except OSError as exc:
        return None, [f"cannot read it ({exc.strerror or exc})"]
    issues: list[str] = []
    try:
        doc = _parse(relpath, fmt, data, issues, hidden_links)
    except ValueError as exc:
        return None, [str(exc)]
    except (RecursionError, MemoryError) as exc:
        return None, [f"cannot parse it ({type(exc).__name__})"]
    meta = {"path": relpath, "format": fmt, "sha256": hashlib.sha256(data).hexdigest(), "tags": doc.tags,
            "properties": doc.properties, "sections": doc.sections, "links": doc.links}
    return Record(relpath, doc.title, doc.text, meta, doc.aliases), issues + doc.issues


def load_folder(path: Path | str, exclude: tuple[str, ...] | list[str] = (), max_bytes: int = MAX_BYTES,
                name: str | None = None, hidden_links: bool = False) -> FolderCorpus:
    """Every document under `path` as a record (sorted by id), its links as edges, and the report.

    Raises InputError only when no document could be read at all."""
    started = time.perf_counter()
    root = Path(path)
    if not root.is_dir():
        raise MissingDataError(f"{root}: no such folder")
    found = walk(root, (exclude,) if isinstance(exclude, str) else tuple(exclude or ()), max_bytes)
    report = FolderReport(root=str(root), ignored=found.ignored, skipped=list(found.skipped),
                          warnings=list(found.warnings))
    records: list[Record] = []
    for rel in found.files:
        record, issues = read_document(root, rel, max_bytes, hidden_links)
        if record is None:
            report.skipped.extend((rel, reason) for reason in issues[:1])
            continue
        report.warnings.extend((rel, reason) for reason in issues)
        records.append(record)
    if not records:
        raise InputError(f"no documents ({', '.join(DOCUMENT_EXTENSIONS)}) under {root}"
                         + (f" ({len(report.skipped)} skipped: {report.skipped[0][1]}, ...)" if report.skipped else ""))
    edges, unresolved = resolve_links(records)
    report.documents = len(records)
    report.sections = sum(len(r.metadata["sections"]) for r in records)
    report.links = sum(len(r.metadata["links"]) for r in records)
    report.resolved = count_resolved(records, unresolved)
    report.edges = len(edges)
    report.add_unresolved(unresolved)
    for r in records:
        report.formats[r.metadata["format"]] = report.formats.get(r.metadata["format"], 0) + 1
    report.skipped.sort()
    report.seconds = time.perf_counter() - started
    return FolderCorpus(name or root.resolve().name, records, edges, report=report,
                        file_stats={r.id: found.stats[r.id] for r in records})
