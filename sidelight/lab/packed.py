"""A run folder's files stored compressed: `rankings/X.jsonl.cols` (or `.xz`, `.gz`) stands for
`rankings/X.jsonl`; `result.json.xz`, `selection.json.xz`, `figures/X.svg.xz` and `report.html.xz` for
their plain names.

Rankings are most of a run folder's bytes (one line per query and setting, a hundred ids each), the
stages' `result.json` (per-query scores of every setting) most of the rest, and run folders are
committed under `results/runs/`. Such a file may therefore be stored compressed: the record still names
`stage/rankings/X.jsonl` (`dev/result.json`, `figures/X.svg`) and still holds the sha256 of the
**uncompressed** bytes the lab wrote, so compressing a run changes no record, no link of the hash chain
and no report, and a compressed run is verified byte for byte against what was written. `lab compress`
writes a ranking's columns form (`columns`: ids, scores and the rest of each line in streams apart, each
LZMA-compressed; about a fifth smaller than xz on rankings) when it decodes to exactly the bytes and is
the smaller; a stage's rankings are encoded against the one with the most distinct ids
(`vocabulary_base`), whose vocabulary they then share instead of each storing its own (`base_of`; a
ranking so stored reads its base beside it, checked by hash); otherwise xz (LZMA preset 9e, CRC64), the
only form of the other files. gzip (level 9, mtime 0, no file name), the form of the first rankings
committed, and xz are still read, and `lab compress` converts them. Every form is deterministic, so the
same file always compresses to the same bytes.

Which recorded paths have a compressed form (`compressible`): `*.jsonl` under a stage's `rankings/`
(columns, xz, gzip); `result.json` and `selection.json` directly in `dev/` or `test/` (xz); `*.svg`
under `figures/` (xz); `report.html` (xz: its inline SVG is most of a report's bytes). Every other file
(records, freeze.json, timings, report.md, which shows the figures' PNGs) is plain only. When two forms
exist (a conversion stopped between writing the new form and removing the older one) each must match the
record, and readers refuse them unless they hold the same bytes. Anything that may read a committed run
reads its files through `read_bytes` / `read_json` (`exists` for presence); what they refuse is a
`PackedError`, a `SidelightError` (the CLI's one-line error). Like `record`, this module imports no lab
code but `columns`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import zlib
from pathlib import Path
from typing import IO, Iterator

from ..errors import SidelightError
from .columns import Base, ColumnsError, vocabulary
from .columns import decode as decode_columns
from .columns import encode as encode_columns

COLS, XZ, GZ = ".cols", ".xz", ".gz"
SUFFIXES = (COLS, XZ, GZ)  # the compressed forms of a ranking, in the order readers prefer them
JSON_NAMES = ("result.json", "selection.json")  # a stage's files (directly in dev/ or test/) stored as xz
REPORT_HTML = "report.html"  # a run's report page, stored as xz
KIND = {COLS: "columns", XZ: "xz", GZ: "gzip"}
LEVEL = 9
XZ_PRESET = 9 | lzma.PRESET_EXTREME


class PackedError(SidelightError, ValueError):
    """A compressed file that cannot be read (corrupt, truncated), or one logical file in two differing forms."""


def is_ranking(rel: str | Path) -> bool:
    """Whether the recorded path `rel` is a ranking file (`stage/rankings/X.jsonl`: columns, xz or gzip)."""
    parts = Path(rel).parts
    return len(parts) >= 2 and parts[-2] == "rankings" and parts[-1].endswith(".jsonl")


def suffixes(rel: str | Path) -> tuple[str, ...]:
    """The compressed forms the recorded path `rel` (relative to the run, or any path ending so) may be
    stored in, in the order readers prefer them: a ranking's columns, xz, gzip; xz for a stage's
    result.json and selection.json, a report's figures/*.svg and its report.html; none for any other file."""
    parts = Path(rel).parts
    if is_ranking(rel):
        return SUFFIXES
    if parts and parts[-1] == REPORT_HTML:
        return (XZ,)
    if len(parts) >= 2 and ((parts[-2] in ("dev", "test") and parts[-1] in JSON_NAMES)
                            or (parts[-2] == "figures" and parts[-1].endswith(".svg"))):
        return (XZ,)
    return ()


def compressible(rel: str | Path) -> bool:
    """Whether the recorded path `rel` (relative to the run) may be stored compressed."""
    return bool(suffixes(rel))


def packed(path: Path, suffix: str = XZ) -> Path:
    """The compressed form's path of `path` (xz unless another suffix is named: `COLS`, `GZ`)."""
    return Path(path).with_name(Path(path).name + suffix)


def is_packed(name: str) -> bool:
    """Whether a file name is a compressed form (`X.jsonl.cols`, `X.jsonl.xz`, `X.jsonl.gz`, `result.json.xz`)."""
    return name.endswith(SUFFIXES)


def recorded_name(rel: str) -> str:
    """The recorded path a stored form stands for (`a/rankings/X.jsonl.xz` -> `a/rankings/X.jsonl`,
    `dev/result.json.xz` -> `dev/result.json`); any other path unchanged."""
    for suffix in SUFFIXES:
        if rel.endswith(suffix) and suffix in suffixes(rel[: -len(suffix)]):
            return rel[: -len(suffix)]
    return rel


def logical(path: Path) -> Path:
    """The path a stored file stands for (`X.jsonl.xz` -> `X.jsonl`)."""
    path = Path(path)
    for suffix in SUFFIXES:
        if path.name.endswith(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return path


def forms(path: Path) -> list[Path]:
    """The stored forms of the logical file `path` that exist: plain first, then those `suffixes` allows
    (columns, xz, gzip for a ranking; xz for result.json, selection.json, figures/*.svg, report.html)."""
    return [p for p in (Path(path), *(packed(path, s) for s in suffixes(path))) if p.is_file()]


def exists(path: Path) -> bool:
    """Whether the logical file `path` is stored in any form."""
    return bool(forms(path))


def gzip_bytes(data: bytes) -> bytes:
    """`data` as a deterministic gzip stream (no name, mtime 0, level 9)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=LEVEL, fileobj=buf, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def xz_bytes(data: bytes) -> bytes:
    """`data` as a deterministic xz stream (preset 9e, CRC64; one thread)."""
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET)


def _chunks(path: Path) -> Iterator[bytes]:
    """The uncompressed bytes of one stored form, in chunks."""
    path = Path(path)
    try:
        if path.name.endswith(COLS):
            yield decode_columns(path.read_bytes(), lambda name, sha: _base_vocab(path.parent / name, sha))
        elif path.name.endswith(GZ):
            with gzip.open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
        elif path.name.endswith(XZ):
            with lzma.open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
        else:
            with open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ColumnsError) as e:  # gzip.BadGzipFile is an OSError
        kind = next((KIND[s] for s in SUFFIXES if path.name.endswith(s)), "plain")
        raise PackedError(f"{path} is not a readable {kind} stream ({e}); the run was altered or damaged") from None


def _base_vocab(base: Path, sha256: str) -> list[str]:
    """The vocabulary of the columns file `base`, which a ranking beside it was encoded against."""
    if not base.is_file():
        raise ColumnsError(f"the ranking it was encoded against, {base.name}, is missing")
    found = vocabulary(base.read_bytes())
    if found is None:
        raise ColumnsError(f"{base.name}, the ranking it was encoded against, has a base itself")
    vocab, sha = found
    if sha != sha256:
        raise ColumnsError(f"{base.name}, the ranking it was encoded against, holds another vocabulary")
    return vocab


def vocabulary_base(rankings: list[Path]) -> Path | None:
    """Of the logical ranking files `rankings` (one stage's), the one the others are encoded against: the
    one with the most distinct ids, ties by name (None for no ranking with ids)."""
    best: tuple[int, str, Path] | None = None
    for path in sorted(rankings):
        ids: set[str] = set()
        for line in read_bytes(path).split(b"\n"):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("ids"), list):
                ids.update(x for x in row["ids"] if isinstance(x, str))
        if ids and (best is None or len(ids) > best[0]):
            best = (len(ids), path.name, path)
    return best[2] if best else None


def base_of(path: Path) -> Base | None:
    """`path` (a ranking stored in columns with its own vocabulary) as the base of the rankings beside
    it; None when it is not in that form."""
    cols = packed(logical(path), COLS)
    found = vocabulary(cols.read_bytes()) if cols.is_file() else None
    return Base(cols.name, *found) if found else None


def sha256_stored(path: Path) -> str:
    """sha256 of the uncompressed bytes of one stored form."""
    h = hashlib.sha256()
    for chunk in _chunks(path):
        h.update(chunk)
    return h.hexdigest()


def _missing(path: Path) -> FileNotFoundError:
    names = [packed(path, s).name for s in suffixes(path)]
    return FileNotFoundError(f"{path}: neither it nor {' nor '.join(names)} exists" if names else f"{path}: no such file")


def read_bytes(path: Path) -> bytes:
    """The uncompressed bytes of the logical file `path`, whichever form is stored. Two forms (a
    conversion stopped halfway) must hold the same bytes; forms that differ are refused (PackedError)."""
    found = forms(path)
    if not found:
        raise _missing(Path(path))
    data = b"".join(_chunks(found[0]))
    for other in found[1:]:
        if b"".join(_chunks(other)) != data:
            raise PackedError(f"{path} is stored as both {found[0].name} and {other.name}, which differ; "
                              "the run was altered or damaged")
    return data


def read_json(path: Path):
    """The logical JSON file `path` (e.g. `run/test/result.json`), parsed, whichever form is stored."""
    return json.loads(read_bytes(path).decode("utf-8"))


def sha256_logical(path: Path) -> str:
    """sha256 of the uncompressed bytes of the logical file `path` (what the record holds for it)."""
    return hashlib.sha256(read_bytes(path)).hexdigest()


def open_text(path: Path) -> IO[str]:
    """The logical file `path` opened for reading text (UTF-8), whichever form is stored."""
    found = forms(path)
    if not found:
        raise _missing(Path(path))
    if len(found) == 1 and not is_packed(found[0].name):
        return open(found[0], encoding="utf-8")
    return io.StringIO(read_bytes(path).decode("utf-8"))


def ranking_files(folder: Path) -> list[Path]:
    """The logical `*.jsonl` files of a rankings folder (plain or compressed), sorted by name."""
    folder = Path(folder)
    names = {p.name for p in folder.glob("*.jsonl")} | {logical(p).name for s in SUFFIXES for p in folder.glob("*.jsonl" + s)}
    return [folder / n for n in sorted(names)]


def smallest_form(data: bytes, xz: bytes | None = None, base: Base | None = None) -> tuple[str, bytes]:
    """(suffix, stored bytes) of the smallest of the columns form (with its own vocabulary, or against
    `base` when one is given) and the xz form of `data`: columns only when it decodes to exactly `data`
    (`columns.encode` checks), xz otherwise. `xz`, when given, is `data`'s xz form already stored (not
    made again)."""
    xz = xz_bytes(data) if xz is None else xz
    candidates = [(len(xz), 2, XZ, xz)]
    for rank, b in ((1, None), (0, base)) if base else ((1, None),):
        try:
            cols = encode_columns(data) if b is None else encode_columns(data, base=b)
        except ValueError:
            continue
        candidates.append((len(cols), rank, COLS, cols))
    _, _, suffix, blob = min(candidates)  # ties: against the base, then own vocabulary, then xz
    return suffix, blob


def _decoded(blob: bytes, suffix: str, folder: Path) -> bytes:
    if suffix == COLS:
        return decode_columns(blob, lambda name, sha: _base_vocab(folder / name, sha))
    return lzma.decompress(blob)


def _write_checked(target: Path, blob: bytes, suffix: str, sha256: str) -> None:
    """Write `blob` to a temporary name, read it back, require it to decode to bytes with `sha256`, and
    only then rename it to `target`."""
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    try:
        ok = hashlib.sha256(_decoded(tmp.read_bytes(), suffix, target.parent)).hexdigest() == sha256
    except (ColumnsError, lzma.LZMAError):  # pragma: no cover - each encoder checks its round trip
        ok = False
    if not ok:  # pragma: no cover
        tmp.unlink()
        raise PackedError(f"{target}: the form written does not decode to the recorded bytes; not compressed")
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


def compress_file(path: Path, sha256: str | None = None, base: Base | None = None) -> bool:
    """Store the logical file `path` in its compressed form in place of the others: a ranking in its
    smallest (`smallest_form`: columns, against `base` when given and smaller, else xz), any other
    `compressible` file in xz. Atomic at every step: the new form is written to a temporary name,
    checked to decode to the same bytes (and to `sha256` when given), renamed into place, and only
    then are the other forms removed. A ranking's columns form, or another file's xz form, already
    stored is final, but for a ranking with its own vocabulary, re-encoded against `base` when that
    is smaller. Returns False when there was nothing to convert (the only form is the one that stays)."""
    path = Path(path)
    if not compressible(path):
        raise ValueError(f"{path}: not a file the lab stores compressed")
    found = forms(path)
    if not found:
        return False
    final = packed(path, COLS if is_ranking(path) else XZ)
    if base is not None and base.name == final.name:
        base = None  # a ranking is never its own base
    rebased = False
    if final in found:
        keep = final
        if base is not None and vocabulary(final.read_bytes()) is not None:
            rebased = _rebase(final, base)
    else:
        data = b"".join(_chunks(found[0]))
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise PackedError(f"{found[0]} does not match the hash recorded for it; not compressed")
        stored_xz = packed(path, XZ)
        if not is_ranking(path):
            suffix, blob = XZ, xz_bytes(data)
        else:
            suffix, blob = smallest_form(data, stored_xz.read_bytes() if stored_xz in found else None, base)
        keep = packed(path, suffix)
        if keep not in found:
            _write_checked(keep, blob, suffix, hashlib.sha256(data).hexdigest())
    others = [p for p in found if p != keep]
    for p in others:  # the form kept matches the record (the caller verified the run first)
        p.unlink()
    return bool(others) or keep not in found or rebased


def _rebase(cols: Path, base: Base) -> bool:
    """Re-encode the columns file `cols` (its own vocabulary) against `base` when that is smaller, in
    place and checked as `compress_file` writes; whether it was."""
    blob = cols.read_bytes()
    data = decode_columns(blob)
    try:
        rebased = encode_columns(data, base=base)
    except ValueError:
        return False
    if len(rebased) >= len(blob):
        return False
    _write_checked(cols, rebased, COLS, hashlib.sha256(data).hexdigest())
    return True
