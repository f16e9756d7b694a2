"""Rankings stored gzip-compressed: `rankings/X.jsonl.gz` stands for `rankings/X.jsonl`.

Rankings are most of a run folder's bytes (one line per query and setting, a hundred ids each), and
run folders are committed under `results/runs/`. A ranking file may therefore be stored as gzip
beside nothing else: the record still names `stage/rankings/X.jsonl` and still holds the sha256 of
the **uncompressed** bytes the lab wrote, so compressing a run changes no record, no link of the
hash chain and no report, and a compressed run is verified byte for byte against what was written.
The gzip stream is deterministic (level 9, mtime 0, no file name), so the same ranking always
compresses to the same bytes.

Only files named `*.jsonl` under a stage's `rankings/` folder have a compressed form. When both
forms exist (a conversion stopped between writing the `.gz` and removing the plain file) both must
match the record, and readers take the plain one. Like `record`, this module imports no lab code.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zlib
from pathlib import Path
from typing import IO, Iterator

GZ = ".gz"
LEVEL = 9


class PackedError(ValueError):
    """A compressed ranking that cannot be read (corrupt, truncated), or one logical file in two differing forms."""


def compressible(rel: str) -> bool:
    """Whether the recorded path `rel` (relative to the run) may be stored compressed."""
    parts = Path(rel).parts
    return len(parts) >= 2 and parts[-2] == "rankings" and rel.endswith(".jsonl")


def packed(path: Path) -> Path:
    """The compressed form's path of `path`."""
    return Path(path).with_name(Path(path).name + GZ)


def logical(path: Path) -> Path:
    """The path a stored file stands for (`X.jsonl.gz` -> `X.jsonl`)."""
    path = Path(path)
    return path.with_name(path.name[: -len(GZ)]) if path.name.endswith(GZ) else path


def forms(path: Path) -> list[Path]:
    """The stored forms of the logical file `path` that exist: plain first, then compressed."""
    return [p for p in (Path(path), packed(path)) if p.is_file()]


def gzip_bytes(data: bytes) -> bytes:
    """`data` as a deterministic gzip stream (no name, mtime 0, level 9)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=LEVEL, fileobj=buf, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def _chunks(path: Path) -> Iterator[bytes]:
    """The uncompressed bytes of one stored form, in chunks."""
    path = Path(path)
    try:
        if path.name.endswith(GZ):
            with gzip.open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
        else:
            with open(path, "rb") as f:
                yield from iter(lambda: f.read(1 << 20), b"")
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise PackedError(f"{path} is not a readable gzip stream ({e}); the run was altered or damaged") from None


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
    return io.StringIO(read_bytes(path).decode("utf-8")) if found[0].name.endswith(GZ) else open(found[0], encoding="utf-8")


def ranking_files(folder: Path) -> list[Path]:
    """The logical `*.jsonl` files of a rankings folder (plain or compressed), sorted by name."""
    folder = Path(folder)
    names = {p.name for p in folder.glob("*.jsonl")} | {logical(p).name for p in folder.glob("*.jsonl" + GZ)}
    return [folder / n for n in sorted(names)]


def compress_file(path: Path, sha256: str | None = None) -> bool:
    """Replace the plain file `path` by its compressed form, atomically at every step: the `.gz` is written
    to a temporary name, checked to decompress to the same bytes (and to `sha256` when given), renamed into
    place, and only then is the plain file removed. Returns False when there was no plain file."""
    path = Path(path)
    if not path.is_file():
        return False
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise PackedError(f"{path} does not match the hash recorded for it; not compressed")
    blob = gzip_bytes(data)
    if gzip.decompress(blob) != data:  # pragma: no cover - zlib round trip
        raise PackedError(f"{path}: the compressed form does not decompress to the same bytes")
    target = packed(path)
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    path.unlink()
    return True
