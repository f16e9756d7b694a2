"""Corpus vectors for lab protocols, encoded once and reused by dev, test and reproduce.

Encoding every record with a local model takes minutes on a small machine, and `lab run
--split dev`, `lab run --split test` and `lab reproduce` each build the index afresh. The
vectors depend only on the corpus, the exact text each record is encoded from and the model,
so they are cached under ``$SIDELIGHT_CACHE/lab-dense/<key>/`` with

    key = sha256 of {corpus content hash, sha256 of the encoded texts (title repetition
          included), model identity (onnx and tokenizer sha256, dim, max_length, pooling,
          normalize), the model's document prefix, batch size, format version}

Nothing that depends on a split (queries, rankings, scores) is ever cached here. A cache entry
is checked on every use (key parts, model identity, vector file sha256, shape, dtype); an entry
that fails a check is ignored and re-encoded, never trusted. The first encoding's wall time is
kept with the entry so a cached run can still state what the setup cost was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from ..corpus.passages import window_texts
from ..config import cache_dir
from ..index.store import sha256_file
from ..structures.dense import windows_of

CACHE_VERSION = 1
#: identity keys that decide the vectors (``name`` is only a label)
MODEL_KEYS = ("onnx_sha256", "tokenizer_sha256", "dim", "max_length", "pooling", "normalize")


def cache_root(root: Path | None = None) -> Path:
    return Path(root) if root is not None else cache_dir() / "lab-dense"


def load_embedder(spec: str, threads: int = 2):
    """The local embedding model named by `spec` (tests monkeypatch `Embedder.from_spec`)."""
    from ..models.embedder import Embedder

    return Embedder.from_spec(spec, threads=threads)


def model_material(identity: dict) -> dict:
    return {k: identity.get(k) for k in MODEL_KEYS}


def corpus_texts(corpus) -> list[str]:
    """Exactly what the dense lane encodes: the same repeated name + definition BM25 indexes."""
    return [corpus.indexed_text(r) for r in corpus.records]


def texts_sha256(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(json.dumps(t, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def cache_key(corpus_hash: str, texts: list[str], identity: dict, doc_prefix: str = "",
              batch_size: int = 32) -> tuple[str, dict]:
    """(hex key, the parts it hashes)."""
    parts = {"version": CACHE_VERSION, "corpus_hash": corpus_hash, "texts_sha256": texts_sha256(texts),
             "n_texts": len(texts), "model": model_material(identity), "doc_prefix": doc_prefix,
             "batch_size": int(batch_size)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest(), parts


def _doc_prefix(emb) -> str:
    return str(getattr(getattr(emb, "files", None), "doc_prefix", "") or "")


def _load_entry(folder: Path, parts: dict, identity: dict):
    """(vectors, meta) when the entry is complete and consistent, else None."""
    from ..models.embedder import check_identity

    try:
        meta = json.loads((folder / "dense.json").read_text(encoding="utf-8"))
        if meta.get("key_parts") != parts:
            return None
        check_identity(meta["identity"], identity)
        path = folder / "vectors.npy"
        if sha256_file(path) != meta["vectors_sha256"]:
            return None
        vectors = np.load(path)
        if vectors.dtype != np.float32 or vectors.shape != (parts["n_texts"], identity["dim"]):
            return None
        return vectors, meta
    except Exception:  # noqa: BLE001  damaged or mismatched entry: ignored and re-encoded
        return None


def _publish(root: Path, folder: Path, write, keep=lambda: False) -> dict:
    """Fill a temporary folder beside `folder` (`write(tmp)` returns the entry's meta), then move it
    into place, replacing what is there unless `keep()` says the present entry is good."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name[:16]}.tmp-", dir=root))
    try:
        meta = write(tmp)
        os.chmod(tmp, 0o755)
        if folder.exists() and not keep():
            shutil.rmtree(folder)
        if not folder.exists():
            os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return meta


def dense_store(corpus, spec: str = "minilm", batch_size: int = 32, threads: int = 2,
                root: Path | None = None, progress: bool = False, passages=None):
    """(DenseStore, info): the corpus vectors from the cache, or encoded now and cached; with
    `passages` (a `Passages`), the further windows of long records too, cached beside them.

    info: {"status": "cached" | "encoded", "encode_s" (this call's encoding time, encoded only),
    "first_encode_s", "key", "path", "vectors_sha256", "truncated_docs", "n", "dim", "model"}, and
    with passages "windows": {"status", "key", "windows", "sha256", "encode_s"}.
    """
    store, info = _first_windows(corpus, spec, batch_size, threads, root, progress)
    if passages is not None:
        info["windows"] = _further_windows(store, corpus, info["key"], passages, batch_size, cache_root(root), progress)
    return store, info


def _further_windows(store, corpus, key: str, passages, batch_size: int, root: Path, progress: bool) -> dict:
    """Give `store` the further windows of long records (`Embedder.encode_windows`), from the
    cache entry keyed by the vectors' key and the passage settings, or encoded now and cached."""
    wkey = hashlib.sha256(json.dumps({"vectors": key, "passages": passages.to_dict()}, sort_keys=True).encode()).hexdigest()
    folder = root / f"{wkey}-windows"
    try:
        meta = json.loads((folder / "windows.json").read_text(encoding="utf-8"))
        if meta["vectors_key"] == key and meta["passages"] == passages.to_dict() \
                and sha256_file(folder / "windows.npy") == meta["sha256"]:
            section = np.load(folder / "window_section.npy") if passages.sections else None
            store.set_windows(passages, np.load(folder / "window_owner.npy"), np.load(folder / "windows.npy"), section)
            return {"status": "cached", "key": wkey, "windows": len(store.window_owner), "sha256": meta["sha256"],
                    "encode_s": meta["encode_s"]}
    except Exception:  # noqa: BLE001  missing, damaged or mismatched entry: encoded again
        pass
    texts = corpus_texts(corpus)
    units = [window_texts(r) for r in corpus.records] if passages.sections else None
    t = time.perf_counter()
    owner, windows, *section = windows_of(passages, store.embedder(), texts, [r.title for r in corpus.records],
                                          units, batch_size, progress)
    encode_s = time.perf_counter() - t
    store.set_windows(passages, owner, windows, *section)

    def write(tmp: Path) -> dict:
        np.save(tmp / "windows.npy", np.ascontiguousarray(windows, dtype=np.float32))
        np.save(tmp / "window_owner.npy", owner)
        if section:
            np.save(tmp / "window_section.npy", section[0])
        meta = {"vectors_key": key, "passages": passages.to_dict(), "sha256": sha256_file(tmp / "windows.npy"),
                "encode_s": encode_s}
        (tmp / "windows.json").write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        return meta

    meta = _publish(root, folder, write)
    return {"status": "encoded", "key": wkey, "windows": len(owner), "sha256": meta["sha256"], "encode_s": encode_s}


def _first_windows(corpus, spec: str, batch_size: int, threads: int, root: Path | None, progress: bool):
    """`dense_store` without passages: one vector per record."""
    from ..structures.dense import DenseStore

    emb = load_embedder(spec, threads)
    identity = dict(emb.identity)
    texts = corpus_texts(corpus)
    # a graph whose vectors depend on the batch is encoded one text per call (`Embedder.encode`)
    batch = batch_size if getattr(emb, "batch_invariant", True) else 1
    key, parts = cache_key(corpus.content_hash(), texts, identity, _doc_prefix(emb), batch)
    root = cache_root(root)
    folder = root / key
    hit = _load_entry(folder, parts, identity) if (folder / "dense.json").is_file() else None
    if hit is not None:
        vectors, meta = hit
        store = DenseStore(vectors, meta["identity"], spec, int(meta["truncated_docs"]), threads, emb)
        return store, {"status": "cached", "first_encode_s": meta["encode_s"], "key": key, "path": str(folder),
                       "vectors_sha256": meta["vectors_sha256"], "truncated_docs": int(meta["truncated_docs"]),
                       "n": int(vectors.shape[0]), "dim": int(vectors.shape[1]), "model": identity}
    before = int(getattr(emb, "truncated_docs", 0))
    t = time.perf_counter()
    vectors = np.ascontiguousarray(emb.encode(texts, batch_size=batch_size, kind="doc", progress=progress),
                                   dtype=np.float32)
    encode_s = time.perf_counter() - t
    truncated = int(getattr(emb, "truncated_docs", 0)) - before
    store = DenseStore(vectors, identity, spec, truncated, threads, emb)
    root.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> dict:
        np.save(tmp / "vectors.npy", vectors)
        meta = {"key": key, "key_parts": parts, "identity": identity, "spec": spec, "encode_s": encode_s,
                "truncated_docs": truncated, "vectors_sha256": sha256_file(tmp / "vectors.npy"),
                "shape": list(vectors.shape), "encoded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (tmp / "dense.json").write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
        return meta

    # a concurrent writer that finished first left a good entry: keep it
    meta = _publish(root, folder, write, lambda: _load_entry(folder, parts, identity) is not None)
    return store, {"status": "encoded", "encode_s": encode_s, "first_encode_s": encode_s, "key": key,
                   "path": str(folder), "vectors_sha256": meta["vectors_sha256"], "truncated_docs": truncated,
                   "n": int(vectors.shape[0]), "dim": int(vectors.shape[1]), "model": identity}
