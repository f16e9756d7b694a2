"""Rankings stored compressed: `rankings/X.jsonl.xz` (or `.gz`) stands for `rankings/X.jsonl`.

Rankings are most of a run folder's bytes (one line per query and setting, a hundred ids each), and
run folders are committed under `results/runs/`. A ranking file may therefore be stored compressed
beside nothing else: the record still names `stage/rankings/X.jsonl` and still holds the sha256 of
the **uncompressed** bytes the lab wrote, so compressing a run changes no record, no link of the
hash chain and no report, and a compressed run is verified byte for byte against what was written.
`lab compress` writes xz (LZMA preset 9e, CRC64: about a quarter smaller than gzip on rankings);
gzip (level 9, mtime 0, no file name), the form of the first runs committed, is still read, and
`lab compress` turns it into xz. Both streams are deterministic, so the same ranking always
compresses to the same bytes.

Only files named `*.jsonl` under a stage's `rankings/` folder have a compressed form. When two
forms exist (a conversion stopped between writing the `.xz` and removing the older form) each must
match the record, and readers take the plain one, then the xz. Like `record`, this module imports no lab code.
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

XZ, GZ = ".xz", ".gz"
SUFFIXES = (XZ, GZ)  # the compressed forms, in the order readers prefer them; `lab compress` writes the first
LEVEL = 9
XZ_PRESET = 9 | lzma.PRESET_EXTREME


class PackedError(ValueError):
    """A compressed ranking that cannot be read (corrupt, truncated), or one logical file in two differing forms."""


def compressible(rel: str) -> bool:
    """Whether the recorded path `rel` (relative to the run) may be stored compressed."""
    parts = Path(rel).parts
    return len(parts) >= 2 and parts[-2] == "rankings" and rel.endswith(".jsonl")


def packed(path: Path, suffix: str = XZ) -> Path:
    """The compressed form's path of `path` (xz unless another suffix is named)."""
    return Path(path).with_name(Path(path).name + suffix)


def is_packed(name: str) -> bool:
    """Whether a file name is a compressed form (`X.jsonl.xz`, `X.jsonl.gz`)."""
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
    """The stored forms of the logical file `path` that exist: plain first, then xz, then gzip."""
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
        if path.name.endswith(GZ):
            with gzip.open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
        elif path.name.endswith(XZ):
            with lzma.open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
        else:
            with open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as e:  # gzip.BadGzipFile is an OSError
        kind = "gzip" if path.name.endswith(GZ) else "xz"
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


def compress_file(path: Path, sha256: str | None = None) -> bool:
    """Store the logical file `path` as xz in place of its plain or gzip form, atomically at every step:
    the `.xz` is written to a temporary name, checked to decompress to the same bytes (and to `sha256`
    when given), renamed into place, and only then are the older forms removed. Returns False when there
    was nothing to convert."""
    path = Path(path)
    target = packed(path)
    older = [p for p in (path, packed(path, GZ)) if p.is_file()]
    if not older:
        return False
    if not target.is_file():
        data = b"".join(_chunks(older[0]))
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise PackedError(f"{older[0]} does not match the hash recorded for it; not compressed")
        blob = xz_bytes(data)
        if lzma.decompress(blob) != data:  # pragma: no cover - lzma round trip
            raise PackedError(f"{path}: the compressed form does not decompress to the same bytes")
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    for p in older:  # the xz form in place matches the record (the caller verified the run first)
        p.unlink()
    return True
