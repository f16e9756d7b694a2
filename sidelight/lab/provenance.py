"""Where a protocol's corpus was read from: the data files (sha256, size) and their Debian packages.

A freeze records it beside the corpus hash; `check_frozen` refuses a run when a file or a package
version differs, so a corpus rebuilt from another `dict-foldoc` or `wordnet-base` (or another
`cntlist.rev`) is named as the reason, not found later as a moved figure.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

_BLOCK = 1 << 20


def source_files(source: str, resolved: Path | None = None) -> list[Path]:
    """The files `load_source(source)` reads (after the protocol resolved a relative path)."""
    from ..config import data_dir
    from ..corpus.foldoc import FOLDOC_DICT, FOLDOC_INDEX
    from ..corpus.wordnet import WORDNET_DIR, WORDNET_NOUNS

    if source == "foldoc":
        return [FOLDOC_INDEX, FOLDOC_DICT]
    if source == "wordnet":
        return [WORDNET_NOUNS]
    if source == "wordnet-all":
        return [WORDNET_DIR / f"data.{s}" for s in ("noun", "verb", "adj", "adv")] + [WORDNET_DIR / "cntlist.rev"]
    path = resolved if resolved is not None and resolved.exists() else Path(source)
    if not path.exists():
        path = data_dir() / source
    if path.is_dir():
        return [path / "corpus.jsonl"]
    edges = path.with_suffix(".edges.tsv")
    return [path] + ([edges] if edges.is_file() else [])


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
    return h.hexdigest()


def _dpkg(*args: str) -> str | None:
    exe = shutil.which("dpkg-query")
    if exe is None:
        return None
    r = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    return r.stdout.strip() if r.returncode == 0 else None


def debian_package(path: Path) -> dict | None:
    """{"name", "version"} of the installed Debian package that owns `path`, or None."""
    owner = _dpkg("-S", str(path))
    if not owner:
        return None
    name = owner.split(":", 1)[0].strip()
    version = _dpkg("-W", "-f=${Version}", name)
    return {"name": name, "version": version}


def provenance(files: list[Path]) -> dict:
    """{"files": {path: {"sha256", "bytes"}}, "packages": {name: version}} of the files a corpus came from."""
    out: dict = {"files": {}, "packages": {}}
    for f in files:
        f = Path(f)
        if not f.is_file():
            out["files"][str(f)] = None
            continue
        out["files"][str(f)] = {"sha256": _sha256(f), "bytes": f.stat().st_size}
        pkg = debian_package(f)
        if pkg is not None:
            out["packages"][pkg["name"]] = pkg["version"]
    return out


def differences(frozen: dict, now: dict) -> list[str]:
    """One line per package version or data file that is not what the freeze recorded."""
    problems = []
    for name in sorted(set(frozen.get("packages", {})) | set(now.get("packages", {}))):
        a, b = frozen.get("packages", {}).get(name), now.get("packages", {}).get(name)
        if a != b:
            problems.append(f"Debian package {name}: frozen {a or 'not installed'}, now {b or 'not installed'}")
    for path in sorted(set(frozen.get("files", {})) | set(now.get("files", {}))):
        a, b = frozen.get("files", {}).get(path), now.get("files", {}).get(path)
        if a != b:
            show = lambda x: "missing" if x is None else f"sha256 {x['sha256'][:16]} ({x['bytes']:,} bytes)"  # noqa: E731
            problems.append(f"corpus file {path}: frozen {show(a)}, now {show(b)}")
    return problems
