"""Index folders on disk: a manifest, .npy arrays (memory-mappable) and JSONL, written atomically.

A folder is built under a temporary name beside its destination and renamed into place, so a
reader sees either the old index or the new one, never half of one. Every file's sha256 is in
the manifest; loading checks the format version and the hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import IndexFormatError

FORMAT = "sidelight-index"
VERSION = 2  # 2: every index folder holds the graph component
MANIFEST = "manifest.json"
STATE_FILES = ("state.sqlite", "state.sqlite-wal", "state.sqlite-shm")  # mutable; survive rewrites


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextmanager
def atomic_folder(dest: Path) -> Iterator[Path]:
    """Yield a temp folder; on success it replaces `dest` (keeping dest's mutable state files)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        yield tmp
        old = None
        if dest.exists():
            for name in STATE_FILES:
                if (dest / name).exists():
                    shutil.copy2(dest / name, tmp / name)
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.replace(dest, old)
        os.replace(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_manifest(folder: Path, body: dict) -> None:
    """Hash every file in `folder` (except state) and write the manifest last."""
    files = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and rel != MANIFEST and rel not in STATE_FILES:
            files[rel] = sha256_file(path)
    manifest = {"format": FORMAT, "version": VERSION, **body, "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))


def read_manifest(folder: Path, verify: bool = True) -> dict:
    """The manifest of an index folder, after checking format, version and (optionally) hashes."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise IndexFormatError(f"{folder} is not a sidelight index (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"{path}: corrupt manifest ({exc})") from exc
    if manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{folder}: not a sidelight index (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        raise IndexFormatError(
            f"{folder}: index format version {manifest.get('version')!r}, this sidelight reads {VERSION}; rebuild it"
        )
    if verify:
        for rel, digest in manifest.get("files", {}).items():
            f = folder / rel
            if not f.is_file():
                raise IndexFormatError(f"{folder}: missing file {rel}; the index is incomplete")
            if sha256_file(f) != digest:
                raise IndexFormatError(f"{folder}: {rel} does not match its recorded sha256; the index is corrupt")
    return manifest


def save_array(folder: Path, name: str, array: np.ndarray) -> None:
    np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)


def load_array(folder: Path, name: str, mmap: bool = True) -> np.ndarray:
    try:
        return np.load(folder / f"{name}.npy", mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise IndexFormatError(f"{folder}: cannot read {name}.npy ({exc})") from exc
