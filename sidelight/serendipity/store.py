"""The serendipity folder beside an index's own files: ``INDEX/serendipity/``.

Layout (each stage its own subfolder, written to a temporary name and renamed into place, so a
reader sees a whole stage or the previous one; the main index files are never rewritten)::

    INDEX/serendipity/chunks/       meta.json, chunk_record.npy, chunk_span.npy, chunk_vectors.npy
    INDEX/serendipity/sae/          meta.json (config + FVE, dead, time; sae_sha256 pins the weights, checked
                                    on every load), sae.npz, codes.npz, labels.json
    INDEX/serendipity/certificate/  meta.json (config + summary incl. verdict), pairs.npz, placebo.npz

Every stage records the id of what it was built from (corpus hash -> chunks -> SAE); a stage
whose upstream changed is stale and is rebuilt. Re-saving the index itself (``sidelight add`` /
``delete``) replaces the index folder and so drops ``serendipity/`` (it is derived data; run
``sidelight certify`` again). Mutable data — traces, session usage, verdicts, rulings — lives in
``INDEX/state.sqlite`` (tables ``ser_*``, see `db.py`), which survives index rewrites.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

    from .guards import Guards

from ..capabilities import Capability, require
from ..config import cache_dir
from ..errors import InputError
from ..index import store as index_store
from .certify import NULL, CertConfig, Certificate, run_certificate, word_tokens
from .chunks import (DEFAULT_BUDGET, SECTION_RULE, Chunks, encode_cached, make_chunks, record_text, section_chunks,
                     section_vectors)
from .markers import label_markers
from .sae import SAE, SAEConfig, one_blas_thread, top_k_codes, train_sae

FOLDER = "serendipity"


@dataclass(frozen=True)
class SerendipityConfig:
    budget: int = DEFAULT_BUDGET
    chunking: str = "auto"  # "sections" | "windows" | "auto": sections when the records have their own
    spec: str = "minilm"  # embedder when the index has no dense vectors
    sae: SAEConfig = field(default_factory=SAEConfig)
    resolutions: tuple[int, ...] = ()  # top-k values for signatures; default (k, k/2, k/4)
    cert: CertConfig = field(default_factory=CertConfig)
    batch_size: int = 32
    threads: int = 2

    def ks(self) -> tuple[int, ...]:
        if self.resolutions:
            return tuple(sorted({int(k) for k in self.resolutions if 1 <= k <= self.sae.k} | {self.sae.k}, reverse=True))
        k = self.sae.k
        return tuple(sorted({k, max(1, k // 2), max(1, k // 4)}, reverse=True))


def _id(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _codes_sha256(codes) -> str:
    codes = codes.tocsr()
    return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in
                                   (codes.indptr.astype(np.int64), codes.indices.astype(np.int64),
                                    codes.data.astype(np.float32)))).hexdigest()


def _blas() -> list[dict]:
    """The BLAS libraries and their CPU kernels (markers are reproducible on the same kernels)."""
    from threadpoolctl import threadpool_info

    return [{k: i.get(k) for k in ("internal_api", "version", "architecture")} for i in threadpool_info()
            if i.get("user_api") == "blas"]


def _write(dest: Path, meta: dict, writer) -> None:
    with index_store.atomic_folder(dest) as tmp:
        writer(tmp)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=_jsonable))


def _jsonable(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _same_null(meta: dict) -> bool:
    """Was this certificate built against today's placebo (see `certify.NULL`)?"""
    return meta.get("summary", {}).get("null") == NULL


def _read_meta(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "meta.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None


class Serendipity:
    """Chunks, SAE, codes, labels and certificate of one index (load or build)."""

    def __init__(self, index, config: SerendipityConfig = SerendipityConfig()):
        if index.path is None:
            raise InputError("serendipity data lives inside a saved index folder; save the index first")
        if index.dense is not None:  # kinship and section chunks read the record vectors and windows here
            require("serendipity", (Capability.VECTORS,), index, kind="command")
        self.index, self.config = index, config
        self.root = Path(index.path) / FOLDER
        self.chunks: Chunks | None = None
        self.sae: SAE | None = None
        self.codes: sp.csr_matrix | None = None
        self.labels: list[dict] | None = None
        self.certificate: Certificate | None = None
        self.meta: dict[str, dict] = {}
        self._embedder = None
        self._resolutions: dict[int, sp.csr_matrix] = {}
        self._offsets: np.ndarray | None = None

    # ---- the loaded stages (InputError naming the stage when it is not there) ---------------------
    def _missing(self, stage: str) -> InputError:
        return InputError(f"no serendipity {stage} loaded; run `sidelight certify {self.index.path}` first")

    def require_chunks(self) -> Chunks:
        if self.chunks is None:
            raise self._missing("chunks")
        return self.chunks

    def require_sae(self) -> SAE:
        if self.sae is None:
            raise self._missing("SAE")
        return self.sae

    def require_codes(self) -> sp.csr_matrix:
        if self.codes is None:
            raise self._missing("codes")
        return self.codes

    def require_certificate(self) -> Certificate:
        if self.certificate is None:
            raise self._missing("certificate")
        return self.certificate

    def chunk_offsets(self) -> np.ndarray:
        """offsets[r]:offsets[r + 1] are record r's chunk rows (computed once)."""
        if self._offsets is None:
            self._offsets = self.require_chunks().offsets(len(self.index.corpus))
        return self._offsets

    # ---- the embedder and record vectors -------------------------------------------------------
    def embedder(self):
        if self._embedder is None:
            if self.index.dense is not None:
                self._embedder = self.index.dense.embedder()
            else:
                from ..models.embedder import Embedder

                self._embedder = Embedder.from_spec(self.config.spec, threads=self.config.threads)
        return self._embedder

    def record_vectors(self) -> tuple[np.ndarray, str]:
        """Kinship vectors: the index's dense vectors, else the normalised mean of each record's chunks."""
        import scipy.sparse as sp
        if self.index.dense is not None:
            return np.asarray(self.index.dense.vectors, np.float32), "index dense vectors"
        ch = self.require_chunks()
        n = len(self.index.corpus)
        P = sp.csr_matrix((np.ones(len(ch)), (ch.record, np.arange(len(ch)))), shape=(n, len(ch)))
        v = np.asarray(P @ np.asarray(ch.vectors, np.float64), np.float32)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return v, "normalised mean of chunk vectors (index has no dense vectors)"

    # ---- stages -----------------------------------------------------------------------------
    def corpus_id(self) -> str:
        return self.index.manifest.get("corpus", {}).get("hash") or self.index.corpus.content_hash()

    def ensure(self, progress: bool = False, rebuild: bool = False, certificate: bool = True) -> "Serendipity":
        self.ensure_chunks(progress, rebuild)
        self.ensure_sae(progress, rebuild)
        if certificate:
            self.ensure_certificate(progress, rebuild)
        return self

    def chunking(self) -> str:
        """"sections" or "windows": the configured unit, "auto" meaning sections when some record came
        with sections of its own (a folder's notes; see `chunks`), else token-budget windows."""
        mode = self.config.chunking
        if mode not in ("auto", "sections", "windows"):
            raise InputError(f"chunking must be auto, sections or windows, not {mode!r}")
        if mode == "auto":
            from ..corpus.passages import has_sections
            return "sections" if any(has_sections(r) for r in self.index.corpus.records) else "windows"
        return mode

    def ensure_chunks(self, progress: bool = False, rebuild: bool = False) -> Chunks:
        folder = self.root / "chunks"
        unit = self.chunking()
        want = {"corpus": self.corpus_id(), "budget": self.config.budget if unit == "windows" else 0, "unit": unit}
        if unit == "sections":
            want["section_rule"] = SECTION_RULE
        meta = _read_meta(folder)
        if (not rebuild and meta and all(meta.get(k, "windows" if k == "unit" else None) == v for k, v in want.items())
                and self._model_ok(meta)):
            self.chunks, self.meta["chunks"] = Chunks.load(folder, meta), meta
            return self.chunks
        emb = self.embedder()
        records = self.index.corpus.records
        t0 = time.perf_counter()
        source = "encoded"
        boilerplate: dict | None = None
        if unit == "sections":
            ch, keys, texts, left_out = section_chunks(records)
            boilerplate = left_out.as_dict()
            vec = self._index_section_vectors(keys)
            if vec is not None:
                ch.vectors, source = vec, "the index's section windows"
            else:
                ch.vectors = encode_cached(emb, texts, cache_dir() / "serendipity", self.config.batch_size, progress)
        else:
            ch = make_chunks(records, self.config.budget, emb.tokenizer, progress)
            ch.vectors = encode_cached(emb, ch.texts(records), cache_dir() / "serendipity", self.config.batch_size,
                                       progress)
        vectors_sha256 = hashlib.sha256(np.ascontiguousarray(ch.vectors, np.float32).tobytes()).hexdigest()
        meta = {**want, "model": emb.identity, "seconds": round(time.perf_counter() - t0, 2), "vectors": source,
                "vectors_sha256": vectors_sha256, "id": _id([want, emb.identity, vectors_sha256])}
        meta.update({"chunks": len(ch), "counter": ch.counter, "dim": int(ch.vectors.shape[1])})
        if boilerplate is not None:
            meta["boilerplate"] = boilerplate
        _write(folder, meta, ch.save)
        self.chunks, self.meta["chunks"] = Chunks.load(folder, meta), meta
        return self.chunks

    def _index_section_vectors(self, keys) -> np.ndarray | None:
        """The chunks' vectors from the index's own section windows, when it has them for every section."""
        d = self.index.dense
        if d is None or getattr(d, "window_section", None) is None or d.windows is None or d.window_owner is None:
            return None
        return section_vectors(keys, d.window_owner, d.window_section, d.windows)

    def _model_ok(self, meta: dict) -> bool:
        if self.index.dense is not None:
            return meta.get("model", {}).get("onnx_sha256") == self.index.dense.identity.get("onnx_sha256")
        return True

    def ensure_sae(self, progress: bool = False, rebuild: bool = False) -> SAE:
        import scipy.sparse as sp
        folder = self.root / "sae"
        up = self.meta["chunks"]["id"]
        want = {"chunks": up, "config": asdict(self.config.sae)}
        meta = _read_meta(folder)
        if (not rebuild and meta and meta.get("chunks") == up and meta.get("config") == want["config"]
                and meta.get("sae_sha256")):  # an SAE saved before it was pinned by hash is trained again
            self._load_sae(folder, meta)
            return self.require_sae()
        chunks = self.require_chunks()
        x = np.asarray(chunks.vectors, np.float32)
        sae = train_sae(x, self.config.sae, progress)
        codes = sae.encode(x)
        labels = label_markers(codes, chunks.texts(self.index.corpus.records), np.asarray(chunks.record),
                               len(self.index.corpus))
        digest = sae.sha256()
        meta = {**want, "stats": sae.stats, "sae_sha256": digest, "codes_sha256": _codes_sha256(codes),
                "blas": _blas(), "id": _id([want, digest])}

        def write(tmp: Path) -> None:
            sae.save(tmp)
            sp.save_npz(tmp / "codes.npz", codes)
            (tmp / "labels.json").write_text(json.dumps(labels, ensure_ascii=False))

        _write(folder, meta, write)
        self._load_sae(folder, meta)
        return self.require_sae()

    def _load_sae(self, folder: Path, meta: dict) -> None:
        import scipy.sparse as sp
        sae = self.sae = SAE.load(folder, meta.get("stats"))
        want = meta.get("sae_sha256")
        if want is None or sae.sha256() != want:
            raise InputError(f"{folder}/sae.npz does not match the sha256 its meta.json pins "
                             f"({'none recorded' if want is None else want[:16]}); "
                             f"run `sidelight certify {self.index.path} --rebuild`")
        self.codes = sp.load_npz(folder / "codes.npz").tocsr()
        self.labels = json.loads((folder / "labels.json").read_text())
        self.meta["sae"] = meta
        self._resolutions = {}

    def resolutions(self) -> dict[int, sp.csr_matrix]:
        if not self._resolutions:
            for k in self.config.ks():
                codes = self.require_codes()
                self._resolutions[k] = codes if k >= self.require_sae().k else top_k_codes(codes, k)
        return self._resolutions

    def ensure_certificate(self, progress: bool = False, rebuild: bool = False) -> Certificate:
        folder = self.root / "certificate"
        up = self.meta["sae"]["id"]
        from .guards import GUARDS  # a certificate built with other guards is stale

        want = {"sae": up, "config": asdict(self.config.cert), "ks": list(self.config.ks()),
                "guards": list(GUARDS) if self.config.cert.guards else [],
                "graph_edges": int(self.index.graph.n_edges),
                "kinship": "dense" if self.index.dense is not None else "chunk-mean"}
        meta = _read_meta(folder)
        if (not rebuild and meta and all(meta.get(k) == v for k, v in want.items())
                and _same_null(meta)):
            self._load_certificate(folder, meta)
            return self.require_certificate()
        vectors, how = self.record_vectors()
        records = self.index.corpus.records
        adj = self.index.graph.undirected() if self.index.graph.n_edges else None
        guards = self.guards() if self.config.cert.guards else None
        with one_blas_thread():  # kinship neighbours are BLAS products: one thread, as the SAE
            cert = run_certificate(np.asarray(self.require_chunks().record), len(records), self.require_codes(),
                                   vectors, adj,
                                   lambda r: word_tokens(record_text(records[r])), self.resolutions(),
                                   self.config.cert, progress, guards)
        cert.summary["kinship_vectors"] = how
        cert.summary["chunking"] = self.meta["chunks"].get("unit", "windows")
        if "boilerplate" in self.meta["chunks"]:
            cert.summary["boilerplate_sections"] = self.meta["chunks"]["boilerplate"]
        if adj is not None:
            cert.summary["graph"] = (f"applied: {self.index.graph.n_edges:,} links ({', '.join(self.graph_types())}) read "
                                     f"undirected, {adj.nnz // 2:,} linked pairs; a pair must be at least "
                                     f"{self.config.cert.min_distance} hops apart (or unreachable within "
                                     f"{self.config.cert.max_hops})")
        cert.summary["sae"] = {k: self.meta["sae"]["stats"].get(k) for k in
                               ("width", "k", "fve", "dead", "train_seconds")}
        cert.summary["sae"]["sha256"] = self.meta["sae"]["sae_sha256"]
        cert.summary["chunk_vectors_sha256"] = self.meta["chunks"].get("vectors_sha256")
        meta = {**want, "summary": cert.summary, "id": _id([want, cert.summary["target_passes"]])}

        def write(tmp: Path) -> None:
            np.savez(tmp / "pairs.npz", **cert.pairs)
            np.savez(tmp / "placebo.npz", **(cert.placebo or {}))
            if cert.ruled is not None:
                np.savez(tmp / "ruled.npz", **cert.ruled)

        _write(folder, meta, write)
        self._load_certificate(folder, meta)
        return self.require_certificate()

    def graph_types(self) -> list[str]:
        """The kinds of link the distance rule walks (the index graph's edge types, e.g. link, embed)."""
        return [str(t) for t in getattr(self.index.graph, "type_names", None) or ["link"]]

    def guards(self) -> "Guards":
        """The whale guards over this index's chunks (see `guards`)."""
        from .guards import GuardData, Guards

        chunks = self.require_chunks()
        return Guards(GuardData(self.require_codes(), np.asarray(chunks.vectors, np.float32),
                                chunks.texts(self.index.corpus.records), np.asarray(chunks.record),
                                len(self.index.corpus)))

    def _load_certificate(self, folder: Path, meta: dict) -> None:
        z = np.load(folder / "pairs.npz")
        pairs = {k: z[k] for k in z.files}
        s = meta["summary"]
        placebo = dict(np.load(folder / "placebo.npz")) if (folder / "placebo.npz").exists() else None
        ruled = dict(np.load(folder / "ruled.npz")) if (folder / "ruled.npz").exists() else None
        self.certificate = Certificate(meta["config"], s, pairs, np.asarray(s["kinship_edges"]),
                                       np.asarray(s["thresholds"]), placebo, ruled)
        self.meta["certificate"] = meta

    def load(self) -> "Serendipity":
        """Open what is on disk without building anything (InputError naming the missing stage)."""
        for stage in ("chunks", "sae", "certificate"):
            meta = _read_meta(self.root / stage)
            if meta is None:
                raise InputError(f"{self.index.path}: no serendipity {stage} yet; run `sidelight certify {self.index.path}`")
            if stage == "chunks":
                if meta.get("corpus") != self.corpus_id():
                    raise InputError(f"{self.index.path}: serendipity chunks are stale (the corpus changed); "
                                     "run `sidelight certify` again")
                self.chunks, self.meta["chunks"] = Chunks.load(self.root / stage, meta), meta
            elif stage == "sae":
                self._load_sae(self.root / stage, meta)
            else:
                if not _same_null(meta):
                    raise InputError(f"{self.index.path}: the serendipity certificate predates its placebo corpora "
                                     f"(random-pair placebo); run `sidelight certify {self.index.path}` again")
                self._load_certificate(self.root / stage, meta)
        return self

    # ---- queries ----------------------------------------------------------------------------
    def query_markers(self, query: str, vec: np.ndarray | None = None) -> set[int]:
        """Markers active in the query's SAE code (the query embedded as a query)."""
        if vec is None:
            vec = self.embedder().encode([query], kind="query")[0]
        idx, vals = self.require_sae().topk(np.asarray(vec, np.float32)[None, :])
        return {int(i) for i, v in zip(idx[0], vals[0]) if v > 0}

    def label(self, f: int) -> str:
        return self.labels[f]["label"] if self.labels else f"f{f}"
