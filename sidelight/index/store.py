"""Index folders on disk: immutable generations under one stable folder, published atomically.

Layout of an index folder (format version 3)::

    INDEX/index.json       names the current generation; replaced atomically (temp + rename)
    INDEX/gen-000007/      one immutable generation: manifest.json, records, lexical/, graph/, dense/
    INDEX/state.sqlite     mutable state (traces, feedback, query log): never moved or copied
    INDEX/serendipity/     derived serendipity data (written atomically by `certify`)
    INDEX/.lock            the writer lock (`sidelight.store.lock`)

A writer builds a new generation in a temporary folder inside INDEX, renames it to its final
name, then replaces `index.json`: that one rename is the commit, so a crash at any point leaves
the old generation or the new one current, never none. Because INDEX itself never moves, the
state file a running server writes is the one every later generation uses. Writers (holding
the lock) remove what dead writers left behind: temporary folders, generations that were never
published, and generations older than the previous one.

Integrity: the generation's manifest keeps every file's size, the sha256 of its first 64 KiB
(`heads`) and the sha256 of the whole file. Opening checks the format version, the sizes and the
head hashes (cheap: a truncated, swapped or re-headed file is caught); writers and
`sidelight check` re-hash every file in full.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator


from ..errors import IndexFormatError, InputError
from ..store.modes import file_mode, folder_mode

FORMAT = "sidelight-index"
VERSION = 4  # 4: memory-mapped records, vocabulary and BM25 weights; 3: generations; 2: one folder swapped whole
HEAD_BYTES = 1 << 16  # the part of each file whose hash the cheap check on open compares
MANIFEST = "manifest.json"
POINTER = "index.json"
GEN_PREFIX = "gen-"
TMP_PREFIX = ".gen-tmp-"
KEEP_PREVIOUS = 1  # generations kept after the current one, for readers that opened it just before a swap
HASH_THREADS = min(4, os.cpu_count() or 1)  # files hashed at once (manifests written and verified)
_GEN_RE = re.compile(rf"^{GEN_PREFIX}(\d{{6,}})$")


def _generation_number(name: str) -> int:
    """The number of a generation folder's name (IndexFormatError for any other name)."""
    m = _GEN_RE.match(name)
    if m is None:
        raise IndexFormatError(f"{name!r} is not a generation name")
    return int(m.group(1))
# What sidelight itself keeps at the top of an index folder (anything else is the user's).
OWN_TOP = {POINTER, "state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "serendipity", "shards", ".lock", ".lock.holder"}


def sha256_file(path: Path, limit: int | None = None) -> str:
    """sha256 of the file's bytes (of its first `limit` bytes when given)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if limit is not None:
            h.update(f.read(limit))
        else:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def sha256_files(paths: list[Path]) -> list[str]:
    """`sha256_file` of each path, `HASH_THREADS` files at a time (hashlib releases the GIL)."""
    with ThreadPoolExecutor(HASH_THREADS) as pool:
        return list(pool.map(sha256_file, paths))


# ---- what a folder is ------------------------------------------------------------------------
def _legacy_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a version-2 index (files directly in the folder), if that is what it is."""
    try:
        m = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) and m.get("format") == FORMAT and m.get("version") != VERSION else None


def is_index_folder(folder: Path) -> bool:
    """True for a sidelight index folder of any format version."""
    folder = Path(folder)
    return (folder / POINTER).is_file() or _legacy_manifest(folder) is not None


def check_destination(dest: Path, force: bool = False) -> None:
    """Refuse to write an index where it would replace something that is not an index.

    `dest` may be missing, an empty folder or a sidelight index; with `force`, any folder (the
    index is written beside its files and nothing of theirs is removed). A file is never replaced.
    """
    dest = Path(dest)
    if dest.is_symlink() and not dest.exists():
        raise InputError(f"{dest} is a dangling symbolic link; refusing to write an index there")
    if not dest.exists():
        for parent in dest.parents:  # the nearest existing folder above must be a folder
            if parent.exists():
                if not parent.is_dir():
                    raise InputError(f"cannot write an index at {dest}: {parent} is a file, not a folder")
                break
        return
    if not dest.is_dir():
        raise InputError(f"{dest} exists and is a file, not a folder; refusing to replace it (choose another -o)")
    if force or is_index_folder(dest):
        return
    foreign = sorted(p.name for p in dest.iterdir() if not _is_own(p.name))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise InputError(f"{dest} is a folder that is not a sidelight index (it holds {shown}); refusing to "
                         f"write into it. Choose a new or empty folder, or pass --force to write the index "
                         f"beside those files (none of them is removed)")


def _is_own(name: str) -> bool:
    """A top-level entry that sidelight writes (so a folder holding only these is an index in the making)."""
    return name in OWN_TOP or bool(_GEN_RE.match(name)) or name.startswith((TMP_PREFIX, f".{POINTER}."))


# ---- generations -----------------------------------------------------------------------------
def _generations(root: Path) -> list[tuple[int, Path]]:
    out = []
    for p in root.iterdir() if root.is_dir() else ():
        m = _GEN_RE.match(p.name)
        if m and p.is_dir():
            out.append((int(m.group(1)), p))
    return sorted(out)


def current_generation(root: Path) -> str:
    """The name of the generation `root/index.json` points at (a clear error if there is none)."""
    root = Path(root)
    path = root / POINTER
    if not path.is_file():
        legacy = _legacy_manifest(root)
        if legacy is not None:
            raise IndexFormatError(f"{root}: index format version {legacy.get('version')!r}, this sidelight "
                                   f"reads {VERSION}; rebuild it (`sidelight index SOURCE -o {root}`)")
        hint = "; a build was interrupted before it finished: run it again" if _generations(root) or any(
            p.name.startswith(TMP_PREFIX) for p in (root.iterdir() if root.is_dir() else ())) else ""
        raise IndexFormatError(f"{root} is not a sidelight index (no {POINTER}){hint}")
    try:
        pointer = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"{path}: corrupt index pointer ({exc}); the next write to {root} (`sidelight add`, "
                               f"`delete`, or `index SOURCE -o {root}`) points it back at the newest whole "
                               f"generation") from exc
    if not isinstance(pointer, dict) or pointer.get("format") != FORMAT:
        raise IndexFormatError(f"{root}: not a sidelight index ({POINTER} is not a sidelight pointer)")
    if pointer.get("version") != VERSION:
        raise IndexFormatError(f"{root}: index format version {pointer.get('version')!r}, this sidelight reads "
                               f"{VERSION}; rebuild it")
    gen = pointer.get("generation")
    if not isinstance(gen, str) or not _GEN_RE.match(gen):
        raise IndexFormatError(f"{path}: names no valid generation ({gen!r})")
    return gen


def generation_stamp(root: Path) -> tuple[int, int] | None:
    """A cheap token that changes whenever a new generation is published (inode, mtime of the pointer)."""
    try:
        st = os.stat(Path(root) / POINTER)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def data_folder(root: Path) -> Path:
    """The folder of the current generation of the index at `root`."""
    return Path(root) / current_generation(root)


def leftovers(root: Path) -> list[str]:
    """What interrupted writers left in `root` (temporary folders and files, generations newer than the
    current one, never published), one phrase each; read-only: the next writer removes them (`recover`)."""
    root = Path(root)
    out = [f"{p.name} (a temporary {'folder' if p.is_dir() else 'file'} of an interrupted write)"
           for p in sorted(root.iterdir()) if p.name.startswith((TMP_PREFIX, f".{POINTER}."))]
    try:
        current = _generation_number(current_generation(root))
    except IndexFormatError:
        return out
    out += [f"{p.name} (written but never published)" for n, p in _generations(root) if n > current]
    return out


def recover(root: Path) -> list[str]:
    """Remove what interrupted writers left in `root`; the caller holds the writer lock.

    Deterministic: temporary folders are removed, generations newer than the current one were
    never published and are rolled back (removed), generations older than the previous one are
    pruned. Returns one line per action, for the writer to print.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    done = []
    for p in sorted(root.iterdir()):
        if p.name.startswith(TMP_PREFIX) or p.name.startswith(f".{POINTER}."):
            _remove(p)
            done.append(f"removed {p.name}, left by an interrupted write")
    gens = _generations(root)
    if _pointer_version(root) is not None:  # an older format's index stays current until a new one is published
        return done
    try:
        current = _generation_number(current_generation(root))
    except IndexFormatError:
        current = None
        if (root / POINTER).exists():  # an unreadable pointer: roll forward to the newest whole generation
            for number, p in reversed(gens):
                try:
                    read_manifest(p, verify=True)
                except IndexFormatError:
                    continue
                publish(root, p.name)
                done.append(f"{POINTER} was unreadable; pointed it at {p.name}, the newest whole generation")
                current = number
                break
    for number, p in gens:
        if current is None or number > current:
            _remove(p)
            done.append(f"rolled back {p.name}: it was written but never published")
    if current is not None:
        older = [p for number, p in gens if number < current]
        for p in older[: max(0, len(older) - KEEP_PREVIOUS)]:
            _remove(p)
    return done


def _pointer_version(root: Path) -> int | None:
    """The format version of a readable sidelight pointer of another (older) version, else None."""
    try:
        pointer = json.loads((root / POINTER).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    version = pointer.get("version") if isinstance(pointer, dict) and pointer.get("format") == FORMAT else None
    return version if isinstance(version, int) and version < VERSION else None


@contextlib.contextmanager
def new_generation(root: Path, check: Callable[[str], object] | None = None) -> Iterator[Path]:
    """Yield an empty folder for a new generation; on success publish it as current.

    The caller holds the writer lock of `root`. On an exception nothing is published and the
    temporary folder is removed. `check(name)` opens the generation under its final name before
    the pointer moves (verified publication): if it raises, the generation is removed and the
    pointer still names the old one, so a write never publishes what cannot be opened.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    legacy = _legacy_manifest(root)
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=root))
    try:
        os.chmod(tmp, folder_mode())  # mkdtemp is 0700: readers of other accounts follow the umask
        yield tmp
        gens = _generations(root)
        name = f"{GEN_PREFIX}{(gens[-1][0] + 1 if gens else 1):06d}"
        os.replace(tmp, root / name)
        tmp = root / name  # removed below if the check refuses it
        _fsync_dir(root)
        if check is not None:
            check(name)
        publish(root, name)
    except BaseException:
        if not _names(root, tmp.name):  # a generation the pointer already names (a failed fsync after it) stays
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    if legacy is not None:
        _remove_legacy(root, legacy)
    recover(root)


def _names(root: Path, generation: str) -> bool:
    """True when `root/index.json` is readable and names `generation`."""
    try:
        return current_generation(root) == generation
    except (IndexFormatError, OSError):
        return False


def publish(root: Path, generation: str) -> None:
    """Point `root/index.json` at `generation` with one atomic rename (the commit point)."""
    body = json.dumps({"format": FORMAT, "version": VERSION, "generation": generation}, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{POINTER}.", dir=root)
    with os.fdopen(fd, "w") as f:
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, file_mode())
    os.replace(tmp, root / POINTER)
    _fsync_dir(root)


@contextlib.contextmanager
def atomic_folder(dest: Path) -> Iterator[Path]:
    """Yield a temp folder that replaces `dest` on success (derived data such as serendipity/).

    The caller holds the writer lock. A crash between the two renames leaves `.NAME.old-PID`;
    the next call restores it first (rolls back), so `dest` is never silently lost.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for p in sorted(dest.parent.glob(f".{dest.name}.old-*")):
        if dest.exists():
            _remove(p)
        else:
            os.replace(p, dest)
    for p in dest.parent.glob(f".{dest.name}.tmp-*"):
        _remove(p)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        os.chmod(tmp, folder_mode())
        yield tmp
        old = None
        if dest.exists():
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.replace(dest, old)
        os.replace(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def _remove_legacy(root: Path, manifest: dict[str, Any]) -> None:
    """Delete the files of a version-2 index that a new generation replaced (only those it listed)."""
    for rel in manifest.get("files", {}):
        target = (root / rel).resolve()
        if target.is_relative_to(root.resolve()) and target.is_file():
            target.unlink()
    (root / MANIFEST).unlink(missing_ok=True)
    for sub in ("lexical", "graph", "dense"):
        with contextlib.suppress(OSError):  # a folder that still holds something stays
            (root / sub).rmdir()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---- manifests --------------------------------------------------------------------
def write_manifest(folder: Path, body: dict[str, Any]) -> None:
    """Hash every file in `folder` (whole and head) and write the manifest last."""
    paths = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
    paths.pop(MANIFEST, None)
    files = dict(zip(paths, sha256_files(list(paths.values()))))
    sizes = {rel: p.stat().st_size for rel, p in paths.items()}
    heads = {rel: sha256_file(p, HEAD_BYTES) for rel, p in paths.items()}
    manifest = {"format": FORMAT, "version": VERSION, **body, "files": files, "sizes": sizes, "heads": heads}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))


def read_manifest(folder: Path, verify: bool = True) -> dict[str, Any]:
    """The manifest of a generation folder, after checking format, version, file sizes and head
    hashes; with `verify`, every file's full sha256 too."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise IndexFormatError(f"{folder} is not a sidelight index generation (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"{path}: corrupt manifest ({exc})") from exc
    if not isinstance(manifest, dict):
        raise IndexFormatError(f"{path}: corrupt manifest (a JSON {type(manifest).__name__}, not an object)")
    if manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{folder}: not a sidelight index (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        raise IndexFormatError(
            f"{folder}: index format version {manifest.get('version')!r}, this sidelight reads {VERSION}; rebuild it"
        )
    files, sizes, heads = (manifest.get(key, {}) for key in ("files", "sizes", "heads"))
    if not all(isinstance(x, dict) for x in (files, sizes, heads)) or set(sizes) != set(files) or set(heads) != set(files):
        raise IndexFormatError(f"{path}: corrupt manifest (its file lists do not agree)")
    for rel in files:
        f = folder / rel
        try:
            size = f.stat().st_size
        except OSError:
            raise IndexFormatError(f"{folder}: missing file {rel}; the index is incomplete") from None
        if size != sizes[rel]:
            raise IndexFormatError(f"{folder}: {rel} has {size} bytes, its manifest says {sizes[rel]}; the index "
                                   f"is corrupt")
        if sha256_file(f, HEAD_BYTES) != heads[rel]:
            raise IndexFormatError(f"{folder}: {rel} does not match its recorded sha256; the index is corrupt")
    if verify:
        for (rel, digest), found in zip(files.items(), sha256_files([folder / rel for rel in files])):
            if found != digest:
                raise IndexFormatError(f"{folder}: {rel} does not match its recorded sha256; the index is corrupt")
    return manifest
