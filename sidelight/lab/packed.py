"""Rankings stored compressed: `rankings/X.jsonl.cols` (or `.xz`, `.gz`) stands for `rankings/X.jsonl`.

Rankings are most of a run folder's bytes (one line per query and setting, a hundred ids each), and
run folders are committed under `results/runs/`. A ranking file may therefore be stored compressed
beside nothing else: the record still names `stage/rankings/X.jsonl` and still holds the sha256 of
the **uncompressed** bytes the lab wrote, so compressing a run changes no record, no link of the
hash chain and no report, and a compressed run is verified byte for byte against what was written.
`lab compress` writes the columns form (`columns`: ids, scores and the rest of each line in streams
apart, each LZMA-compressed; about a fifth smaller than xz on rankings) when it decodes to exactly
the bytes and is the smaller; otherwise xz (LZMA preset 9e, CRC64). gzip (level 9, mtime 0, no file
name), the form of the first runs committed, and xz are still read, and `lab compress` converts
them. Every form is deterministic, so the same ranking always compresses to the same bytes.

Only files named `*.jsonl` under a stage's `rankings/` folder have a compressed form. When two
forms exist (a conversion stopped between writing the new form and removing the older one) each must
match the record, and readers take the plain one, then columns, then xz. Like `record`, this module
imports no lab code but `columns`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import os
import zlib
from pathlib import Path
from typing import IO, Iterator

from .columns import ColumnsError
from .columns import decode as decode_columns
from .columns import encode as encode_columns

COLS, XZ, GZ = ".cols", ".xz", ".gz"
SUFFIXES = (COLS, XZ, GZ)  # the compressed forms, in the order readers prefer them
KIND = {COLS: "columns", XZ: "xz", GZ: "gzip"}
LEVEL = 9
XZ_PRESET = 9 | lzma.PRESET_EXTREME


class PackedError(ValueError):
    """A compressed ranking that cannot be read (corrupt, truncated), or one logical file in two differing forms."""


def compressible(rel: str) -> bool:
    """Whether the recorded path `rel` (relative to the run) may be stored compressed."""
    parts = Path(rel).parts
    return len(parts) >= 2 and parts[-2] == "rankings" and rel.endswith(".jsonl")


def packed(path: Path, suffix: str = XZ) -> Path:
    """The compressed form's path of `path` (xz unless another suffix is named: `COLS`, `GZ`)."""
    return Path(path).with_name(Path(path).name + suffix)


def is_packed(name: str) -> bool:
    """Whether a file name is a compressed form (`X.jsonl.cols`, `X.jsonl.xz`, `X.jsonl.gz`)."""
    return name.endswith(SUFFIXES)


def recorded_name(rel: str) -> str:
    """The recorded path a stored ranking stands for (`a/rankings/X.jsonl.xz` -> `a/rankings/X.jsonl`);
    any other path unchanged."""
    for suffix in SUFFIXES:
        if rel.endswith(suffix) and compressible(rel[: -len(suffix)]):
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
    """The stored forms of the logical file `path` that exist: plain first, then columns, xz, gzip."""
    return [p for p in (Path(path), *(packed(path, s) for s in SUFFIXES)) if p.is_file()]


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
            yield decode_columns(path.read_bytes())
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


def sha256_stored(path: Path) -> str:
    """sha256 of the uncompressed bytes of one stored form."""
    h = hashlib.sha256()
    for chunk in _chunks(path):
        h.update(chunk)
    return h.hexdigest()


def read_bytes(path: Path) -> bytes:
    """The uncompressed bytes of the logical file `path` (plain form when both exist)."""
    found = forms(path)
    if not found:
        raise FileNotFoundError(f"{path}: neither it nor {packed(path).name} exists")
    return b"".join(_chunks(found[0]))


def open_text(path: Path) -> IO[str]:
    """The logical file `path` opened for reading text (UTF-8), whichever form is stored."""
    found = forms(path)
    if not found:
        raise FileNotFoundError(f"{path}: neither it nor {packed(path).name} exists")
    return io.StringIO(read_bytes(path).decode("utf-8")) if is_packed(found[0].name) else open(found[0], encoding="utf-8")


def ranking_files(folder: Path) -> list[Path]:
    """The logical `*.jsonl` files of a rankings folder (plain or compressed), sorted by name."""
    folder = Path(folder)
    names = {p.name for p in folder.glob("*.jsonl")} | {logical(p).name for s in SUFFIXES for p in folder.glob("*.jsonl" + s)}
    return [folder / n for n in sorted(names)]


def smallest_form(data: bytes, xz: bytes | None = None) -> tuple[str, bytes]:
    """(suffix, stored bytes) of the smaller of the columns and the xz form of `data`: columns only when
    it decodes to exactly `data` (`columns.encode` checks), xz otherwise. `xz`, when given, is `data`'s
    xz form already stored (not made again)."""
    xz = xz_bytes(data) if xz is None else xz
    try:
        cols = encode_columns(data)
    except ValueError:
        return XZ, xz
    return (COLS, cols) if len(cols) < len(xz) else (XZ, xz)


def _decoded(blob: bytes, suffix: str) -> bytes:
    return decode_columns(blob) if suffix == COLS else lzma.decompress(blob)


def _write_checked(target: Path, blob: bytes, suffix: str, sha256: str) -> None:
    """Write `blob` to a temporary name, read it back, require it to decode to bytes with `sha256`, and
    only then rename it to `target`."""
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    try:
        ok = hashlib.sha256(_decoded(tmp.read_bytes(), suffix)).hexdigest() == sha256
    except (ColumnsError, lzma.LZMAError):  # pragma: no cover - each encoder checks its round trip
        ok = False
    if not ok:  # pragma: no cover
        tmp.unlink()
        raise PackedError(f"{target}: the form written does not decode to the recorded bytes; not compressed")
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


def compress_file(path: Path, sha256: str | None = None) -> bool:
    """Store the logical file `path` in its smallest compressed form (`smallest_form`: columns, else xz)
    in place of the others, atomically at every step: the new form is written to a temporary name,
    checked to decode to the same bytes (and to `sha256` when given), renamed into place, and only then
    are the other forms removed. A columns form already stored is final. Returns False when there was
    nothing to convert (the only form is the one that stays)."""
    path = Path(path)
    found = forms(path)
    if not found:
        return False
    if packed(path, COLS) in found:
        keep = packed(path, COLS)
    else:
        data = b"".join(_chunks(found[0]))
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise PackedError(f"{found[0]} does not match the hash recorded for it; not compressed")
        stored_xz = packed(path, XZ)
        suffix, blob = smallest_form(data, stored_xz.read_bytes() if stored_xz in found else None)
        keep = packed(path, suffix)
        if keep not in found:
            _write_checked(keep, blob, suffix, hashlib.sha256(data).hexdigest())
    others = [p for p in found if p != keep]
    for p in others:  # the form kept matches the record (the caller verified the run first)
        p.unlink()
    return bool(others) or keep not in found

