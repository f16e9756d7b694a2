"""Views of a word (issue 46): a dictionary sense seen through its gloss, its names and its hypernyms' names.

A sense's gloss vector is what the index holds (its words and its gloss, as the dense lane encodes
it). Two more views are short texts encoded with the same model: the sense's *names* ("dog,
domestic dog, Canis familiaris": its title and aliases) and its *hypernyms' names* (the names of
every record it has a `hypernym` or `instance-hypernym` edge to, "canine, canid; domestic animal,
domesticated animal", hypernyms by ascending id). With weights `Views(names=a, hypernyms=b)` a
sense scores

    cos(q, gloss) + a * cos(q, names) + b * cos(q, hypernyms' names)

(a sense without hypernyms, like every adjective, takes its gloss vector as that view, so no view
is a bonus only some senses get), and a word is scored by its best sense, as without views. The
score is linear in q, so lookup ranks with one matrix, gloss + a * names + b * hypernyms (kept in
the index's memo per weights): views cost no query time, and the memory of one matrix. The view
vectors are encoded once per model and cached under `$SIDELIGHT_CACHE/lookup-views/<key>/`, key =
sha256 of the view texts and the model's identity; an entry that fails its checks is encoded
again, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..config import cache_dir
from ..errors import InputError
from ..structures.dense import cosines

if TYPE_CHECKING:
    from ..corpus.model import Corpus, Record
    from .index import Index

HYPERNYM_TYPES = ("hypernym", "instance-hypernym")
VIEW_NAMES = ("names", "hypernyms")
MAX_WEIGHT = 10.0
CACHE_VERSION = 1


@dataclass(frozen=True)
class Views:
    """Weights of a sense's views besides its gloss (0: the view is off; both 0: lookup as without views)."""

    names: float = 0.0
    hypernyms: float = 0.0

    def __post_init__(self) -> None:
        for name in VIEW_NAMES:
            w = getattr(self, name)
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0.0 <= float(w) <= MAX_WEIGHT:
                raise InputError(f"lookup: view weight {name} must be a number in [0, {MAX_WEIGHT:g}], got {w!r}")

    @property
    def on(self) -> bool:
        return bool(self.names or self.hypernyms)

    def to_dict(self) -> dict[str, float]:
        return {"names": float(self.names), "hypernyms": float(self.hypernyms)}

    @classmethod
    def parse(cls, value: "Views | Mapping[str, Any] | str | None") -> "Views":
        """Views from `Views`, {"names": a, "hypernyms": b}, "names=a,hypernyms=b", or None (off)."""
        if value is None:
            return cls()
        if isinstance(value, Views):
            return value
        if isinstance(value, str):
            pairs: dict[str, Any] = {}
            for part in filter(None, (p.strip() for p in value.split(","))):
                name, eq, w = part.partition("=")
                try:
                    pairs[name.strip()] = float(w) if eq else None
                except ValueError:
                    raise InputError(f"lookup: view weight {name.strip()} must be a number, got {w!r}") from None
            value = pairs
        if not isinstance(value, Mapping):
            raise InputError(f"lookup: views must be names=W,hypernyms=W or an object of them, got {value!r}")
        unknown = sorted(set(value) - set(VIEW_NAMES))
        if unknown:
            raise InputError(f"lookup: unknown view {unknown[0]!r}; views are {', '.join(VIEW_NAMES)}")
        return cls(**dict(value))


def names_text(record: "Record") -> str:
    """The names view of a sense: its title and aliases, comma-separated."""
    return ", ".join((record.title, *record.aliases))


def hypernym_texts(corpus: "Corpus") -> list[str]:
    """Per record, its hypernyms' names view ("; " between hypernyms by ascending id), "" without one."""
    up: dict[str, set[str]] = {}
    for e in corpus.edges:
        if e.type in HYPERNYM_TYPES:
            up.setdefault(e.source, set()).add(e.target)
    pos = corpus.position
    return ["; ".join(names_text(corpus.records[pos[h]]) for h in sorted(up.get(r.id, ())) if h in pos)
            for r in corpus.records]


@dataclass
class ViewVectors:
    """Rows aligned with the records: the names view and the hypernyms' names view (gloss row when none)."""

    names: np.ndarray
    hypernyms: np.ndarray

    def combined(self, gloss: np.ndarray, views: Views) -> np.ndarray:
        """gloss + names * w_names + hypernyms * w_hypernyms, float32 (the one matrix lookup scores)."""
        out = np.array(gloss, dtype=np.float32, copy=True)
        if views.names:
            out += np.float32(views.names) * self.names
        if views.hypernyms:
            out += np.float32(views.hypernyms) * self.hypernyms
        return out


def combine(gloss: np.ndarray, names: np.ndarray, hypernyms: np.ndarray, views: Views) -> np.ndarray:
    """A sense's view score from its three cosines (arrays of them): the rule `ViewVectors.combined` makes linear."""
    return gloss + views.names * names + views.hypernyms * hypernyms


def view_cosines(vectors: ViewVectors, gloss: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gloss, names, hypernyms) cosines of a query vector with every sense."""
    return cosines(gloss, q), cosines(vectors.names, q), cosines(vectors.hypernyms, q)


def _key(texts: list[str], identity: dict[str, Any]) -> str:
    h = hashlib.sha256(json.dumps({"version": CACHE_VERSION, "identity": {k: identity.get(k) for k in sorted(identity)
                                                                          if k != "name"}}, sort_keys=True).encode())
    for t in texts:
        h.update(json.dumps(t, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def encode_views(embedder: Any, texts: list[str], identity: dict[str, Any], root: Path | None = None,
                 progress: bool = False) -> np.ndarray:
    """Vectors of `texts` (each unique text encoded once, as a document), from the cache or encoded and cached."""
    root = Path(root) if root is not None else cache_dir() / "lookup-views"
    folder = root / _key(texts, identity)
    try:
        meta = json.loads((folder / "views.json").read_text(encoding="utf-8"))
        vectors = np.load(folder / "vectors.npy")
        if meta["n"] == len(texts) and vectors.shape == (len(texts), int(identity["dim"])) \
                and vectors.dtype == np.float32 and np.isfinite(vectors).all():
            return np.asarray(vectors, dtype=np.float32)
    except Exception:  # noqa: BLE001  missing or damaged entry: encoded again
        pass
    unique = list(dict.fromkeys(texts))
    encoded = embedder.encode(unique, kind="doc", progress=progress)
    where = {t: i for i, t in enumerate(unique)}
    vectors = np.ascontiguousarray(encoded[[where[t] for t in texts]], dtype=np.float32)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".views.tmp-", dir=root))
    try:
        np.save(tmp / "vectors.npy", vectors)
        (tmp / "views.json").write_text(json.dumps({"n": len(texts), "unique": len(unique)}), encoding="utf-8")
        os.chmod(tmp, 0o755)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return vectors


def view_vectors(index: "Index", progress: bool = False) -> ViewVectors:
    """The index's view vectors, made with its dense model, from their cache (see module doc)."""
    dense = index.dense
    if dense is None:
        raise InputError("lookup: views need the index's vectors; build it with --dense (e.g. `sidelight dense IDX`)")
    corpus = index.corpus

    emb = dense.embedder()
    names = encode_views(emb, [names_text(r) for r in corpus.records], dense.identity, progress=progress)
    hyper_texts = hypernym_texts(corpus)
    kept = [i for i, t in enumerate(hyper_texts) if t]
    hyper = np.array(getattr(dense, "vectors"), dtype=np.float32, copy=True)
    if kept:
        hyper[kept] = encode_views(emb, [hyper_texts[i] for i in kept], dense.identity, progress=progress)
    return ViewVectors(names, hyper)


def view_matrix(index: "Index", views: Views) -> np.ndarray:
    """gloss + weighted views, one row per sense (kept in the index's memo for these weights; the
    view vectors themselves are read from their cache when it is built, and not kept)."""
    dense = index.dense
    if dense is None or getattr(dense, "vectors", None) is None:
        raise InputError("lookup: views need the index's vectors in memory (a dense index, not a sharded one)")
    return index.memo("lookup view matrix", (id(dense), views),
                      lambda: view_vectors(index).combined(getattr(dense, "vectors"), views))
