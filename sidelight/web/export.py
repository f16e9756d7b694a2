"""`sidelight export-web`: an index as a static folder that searches in the reader's browser.

The folder holds the page (`index.html`, `app/`), the data the page's Web Worker searches
(`data/*.js`), `manifest.json` (every file's size and sha256, the parameters of every method the
page offers) and, with `--lab`, the latest lab report. Data files are scripts that hand a payload
to the page (`sidelightData("index", "<base64>")`; the tables of ids, titles, texts and names as a
JSON literal): a page opened from disk (`file://`) may load scripts but not fetch files, so this
one form works from disk and from any static host.

What is exported is what Python scores with, so the page can reproduce Python's rankings:
raw term counts, document lengths, avgdl and both idf vectors as float64 (the page computes
each BM25 weight with the same float operations), TF-IDF row norms, the walk's transition
matrix and dangling nodes, the relation graph with its edge shares, types and link contexts,
the name table of the relation lane's anchors, and float32 record vectors (`--vectors float16`
halves them; rankings then may differ from Python's where cosines nearly tie).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from ..capabilities import Capability, require
from ..errors import InputError
from ..index import Index, store
from ..methods import method_spec
from ..lanes.registry import lanes
from ..methods.relation import effective_weights
from ..methods.relation_cues import CUES, QUESTION_WORDS, RESIDUAL_STOP, name_matcher
from ..methods.relation_notes import PROFILES, profile
from ..models.spec import resolve_model
from ..lab.packed import read_bytes
from ..serve.labview import latest_report
from ..store.lock import lock_timeout
from ..structures.dense import held_vectors
from ..structures.lexical import term_matrices
from ..structures.lexical_store import tfidf_idf, tfidf_norms
from ..text import stopwords

FORMAT = "sidelight-web-1"
#: the methods the page offers, in the order its lanes and menus show them
LEXICAL_METHODS = ("bm25", "tfidf", "rrf-lexical")
GRAPH_METHODS = ("bm25+ppr", "relation")
DENSE_METHODS = ("dense", "rrf")
PAGE_NEEDS = (Capability.TERM_MATRICES, Capability.GRAPH)  # what every page is made of (checked in this order)
VECTOR_TYPES = ("float32", "float16")
DEFAULT_MAX_MB = 256.0
ASSETS = ("page.js", "worker.js", "style.css", "ort-wasm-simd-threaded.wasm")


@dataclass
class ExportReport:
    """What `export_web` wrote: the folder, its files' sizes and how long the export took."""

    site: Path
    files: dict[str, int] = field(default_factory=dict)
    methods: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


def assets_folder() -> Path:
    """The built page scripts (`make web` builds them from web/ with npm)."""
    folder = Path(str(resources.files(__package__).joinpath("assets")))
    missing = [a for a in ASSETS if not (folder / a).is_file()]
    if missing:
        raise InputError(f"the page's scripts are not built ({', '.join(missing)} missing under {folder}); "
                         f"run `make web` (npm ci + esbuild in web/)")
    return folder


def export_web(index_path: Path, site: Path, lab: Path | None = None, snippet: int = 400,
               vectors: str = "float32", max_mb: float = DEFAULT_MAX_MB, force: bool = False,
               link_template: str | None = None, lean: bool = False) -> ExportReport:
    """Write the static search page of the index at `index_path` to `site` (atomically).

    `link_template`: where a hit's title links, with `{path}` and `{anchor}` (URL-encoded), else the
    file's path; `lean`: BM25 and graph lanes only (no model, no ONNX runtime)."""
    site = Path(site)
    site.parent.mkdir(parents=True, exist_ok=True)
    try:  # one writer per site: a lock file beside it (the site folder itself is replaced)
        with FileLock(site.parent / f".{site.name}.lock", timeout=lock_timeout()):
            return _export(Path(index_path), site, lab, snippet, vectors, max_mb, force, link_template, lean)
    except Timeout:
        raise InputError(f"another export is writing {site}; try again when it is done") from None


def _export(index_path: Path, site: Path, lab: Path | None, snippet: int, vectors: str, max_mb: float,
            force: bool, link_template: str | None = None, lean: bool = False) -> ExportReport:
    t0 = time.perf_counter()
    if link_template is not None and "{path}" not in link_template:
        raise InputError(f"--link-template must contain {{path}} (and may contain {{anchor}}), got {link_template!r}")
    if vectors not in VECTOR_TYPES:
        raise InputError(f"--vectors must be one of {', '.join(VECTOR_TYPES)}, got {vectors!r}")
    if snippet < 0:
        raise InputError(f"--snippet must be >= 0 (0: whole texts), got {snippet}")
    _check_site(site, force)
    report_html = None
    if lab is not None:
        report_html = latest_report(lab)
        if report_html is None:
            raise InputError(f"no report.html under {lab} (run `sidelight lab report {lab}`)")
    assets = assets_folder()
    index = Index.load(index_path)
    if lean:
        index.dense = None  # the page offers BM25 and the graph lanes only: no vectors, model or runtime
    # the page holds the term counts, the graph and (unless lean) the record vectors
    require("export-web", PAGE_NEEDS + ((Capability.VECTORS,) if index.dense is not None else ()), index,
            kind="command")
    if index.dense is not None and index.dense.passages is not None and index.dense.passages.sections:
        raise InputError("the page scores one vector per record and this index's vectors are section windows (a "
                         "folder's default), which it cannot score yet; export with --lean (BM25 and the graph "
                         "lanes, no model: a few MB) to publish it")
    if index.dense is not None and index.dense.passages is not None:
        raise InputError("the page scores one vector per record and this index keeps further windows (--passages); "
                         "re-encode it without them (`sidelight dense INDEX --model SPEC`) to export it, or "
                         "export with --lean (no model)")
    floor = _least_mb(index, vectors)
    if floor > max_mb:  # refused before anything is packed: a large index would take its size in memory
        raise InputError(f"{index_path}: the page would take at least {floor:,.1f} MB, over the limit of {max_mb:g} MB "
                         f"(raise it with --max-mb, or use --vectors float16)")
    payloads, manifest = _payloads(index, snippet, vectors)
    manifest["link_template"] = link_template
    manifest["default_method"] = _page_default(index, manifest["methods_offered"])
    if "model" in payloads:
        payloads["ort-wasm"] = (assets / "ort-wasm-simd-threaded.wasm").read_bytes()
    size = sum(len(b) * (1 if name == "tables" else 4 / 3) for name, b in payloads.items()) / 1e6  # base64
    if size > max_mb:
        raise InputError(f"{index_path}: the page would take {size:,.1f} MB, over the limit of {max_mb:g} MB "
                         f"(raise it with --max-mb, shorten texts with --snippet, or use --vectors float16)")
    out = ExportReport(site, methods=manifest["methods_offered"])
    with store.atomic_folder(site) as tmp:
        tmp.chmod(0o755)  # a temp folder is private; a site is read by a web server
        (tmp / "app").mkdir()
        (tmp / "data").mkdir()
        for name in ("page.js", "worker.js", "style.css"):
            shutil.copyfile(assets / name, tmp / "app" / name)
        files: dict[str, dict[str, Any]] = {}
        for name, payload in payloads.items():
            body = payload.decode("utf-8") if name == "tables" else f'"{base64.b64encode(payload).decode("ascii")}"'
            (tmp / "data" / f"{name}.js").write_text(f'sidelightData("{name}",{body});\n', encoding="utf-8")
            files[f"data/{name}.js"] = {"payload_bytes": len(payload),
                                        "payload_sha256": hashlib.sha256(payload).hexdigest()}
        if report_html is not None:
            (tmp / "lab").mkdir()
            (tmp / "lab" / "report.html").write_bytes(read_bytes(report_html))
        manifest["lab_report"] = "lab/report.html" if report_html is not None else None
        manifest["data"] = list(payloads)
        (tmp / "index.html").write_text(_page(manifest), encoding="utf-8")
        for rel in sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()):
            entry = files.setdefault(rel, {})
            entry.update(bytes=(tmp / rel).stat().st_size, sha256=store.sha256_file(tmp / rel))
        manifest["files"] = files
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        out.files = {rel: e["bytes"] for rel, e in files.items()}
        out.files["manifest.json"] = (tmp / "manifest.json").stat().st_size
    out.seconds = time.perf_counter() - t0
    return out


def _check_site(site: Path, force: bool) -> None:
    """A site is written into a new or empty folder, or over an earlier export (never over anything else)."""
    if site.is_symlink() or (site.exists() and not site.is_dir()):
        raise InputError(f"{site} exists and is not a folder; refusing to replace it (choose another -o)")
    if not site.exists() or not any(site.iterdir()):
        return
    try:
        manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
        listed = set(manifest["files"]) | {"manifest.json"} if manifest.get("format") == FORMAT else None
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        listed = None
    if listed is None:
        raise InputError(f"{site} is a folder that is not an exported sidelight page; refusing to replace it "
                         f"(choose a new or empty folder)")
    foreign = sorted(rel for rel in (p.relative_to(site).as_posix() for p in site.rglob("*") if not p.is_dir())
                     if rel not in listed)
    if foreign:
        raise InputError(f"{site} holds an earlier export and files it did not write ({', '.join(foreign[:3])}); "
                         f"refusing to replace them (move them, or choose another folder)")
    if not force:
        raise InputError(f"{site} holds an earlier export; pass --force to replace it")


def check_site_of(site: Path, index: Index) -> dict:
    """The manifest of `site`, refused unless it is an export of this index (same corpus and records)."""
    try:
        manifest = json.loads((Path(site) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{site} is not a page `sidelight export-web` wrote (no readable manifest.json: {exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{site} is not a page `sidelight export-web` wrote (format {FORMAT} expected)")
    if (manifest.get("corpus"), manifest.get("records")) != (index.corpus.name, len(index.corpus)):
        raise InputError(f"{site} was exported from {manifest.get('corpus')!r} ({manifest.get('records')} records), "
                         f"not from this index ({index.corpus.name!r}, {len(index.corpus)} records)")
    return manifest


def _least_mb(index: Index, vectors: str) -> float:
    """A lower bound of the page's size (MB, base64): postings (4-byte record, 1-byte count), vectors."""
    nnz = term_matrices(index.lexical).bm25.nnz  # memory-mapped: counting reads nothing
    dense = held_vectors(index.dense).vectors.size * (2 if vectors == "float16" else 4) if index.dense is not None else 0
    return (5 * nnz + dense) * 4 / 3 / 1e6


def _page_default(index: Index, offered: list[str]) -> str:
    """The index's default method when the page offers it with its default parameters (the page
    takes no parameters from the index), else BM25."""
    from ..index.defaults import default_method

    try:
        default = default_method(index)
    except Exception:  # an index without a recorded default: BM25
        return "bm25"
    return default.method if default.method in offered and not default.params else "bm25"


def lane_data() -> list[dict]:
    """The registered lanes as the page shows them: name, description and needs (`lanes.registry`)."""
    return [{"name": lane.name, "description": lane.description, "needs": sorted(lane.needs)} for lane in lanes()]


def _links(records) -> tuple[list[str], list[str]]:
    """Each record's file path (metadata `path`, else its id) and its first section's anchor (or "")."""
    paths, anchors = [], []
    for r in records:
        meta = r.metadata or {}
        paths.append(str(meta.get("path") or r.id))
        sections = meta.get("sections") or []
        anchors.append(str(sections[0].get("anchor") or "") if sections and isinstance(sections[0], dict) else "")
    return paths, anchors


def _defaults(name: str) -> dict:
    """The declared defaults; the relation lane's profile parameters as the page implements them (the
    dictionary profile: no hub damping, out-links only, no named part)."""
    d = {k: (list(v) if isinstance(v, tuple) else v) for k, v in method_spec(name).defaults().items()}
    if name == "relation":
        d.update(PROFILES["dictionary"])
    return d


def _payloads(index: Index, snippet: int, vectors: str) -> tuple[dict[str, bytes], dict]:
    """Every payload the page loads (name -> bytes) and the manifest that describes them."""
    lex, m = index.lexical, term_matrices(index.lexical)
    if lex.tokenizer_config.stem:
        raise InputError("the page's tokenizer has no stemmer: export an index built without --stem")
    if m.scope is not None:
        raise InputError("this lexical index scores with another collection's statistics; it cannot be exported")
    arrays: dict[str, np.ndarray] = {}
    tf = m.tf.tocsc()  # term-major postings, records ascending within a term
    tf.sort_indices()
    counts = tf.data.astype(np.int64)
    arrays["post_ptr"] = tf.indptr.astype(np.uint32)
    arrays["post_doc"] = tf.indices.astype(np.uint32)
    arrays["post_tf"] = counts.astype(np.uint8 if counts.max(initial=0) < 256 else np.uint16)
    arrays["doc_len"] = m.doc_len.astype(np.uint32)
    arrays["bm25_idf"] = lex.idf().astype(np.float64)
    arrays["tfidf_idf"] = tfidf_idf(lex.df, lex.n_scored).astype(np.float64)
    arrays["tfidf_norm"] = tfidf_norms(m.tf, lex.df, lex.n_scored)
    arrays["log_tf"] = np.log(np.arange(1, int(counts.max(initial=1)) + 1, dtype=np.float64))
    arrays["id_rank"] = np.asarray(index.id_rank).astype(np.uint32)
    walk = index.ppr_graph.transition_t  # P^T of the undirected projection (rows: targets)
    arrays["ppr_ptr"] = walk.indptr.astype(np.int32)
    arrays["ppr_idx"] = walk.indices.astype(np.int32)
    arrays["ppr_val"] = walk.data.astype(np.float64)
    arrays["ppr_dangling"] = np.flatnonzero(index.ppr_graph.dangling).astype(np.int32)
    g = index.graph
    weights, share = effective_weights(index)
    arrays["rel_ptr"] = g.indptr.astype(np.int32)
    arrays["rel_idx"] = g.indices.astype(np.int32)
    arrays["rel_share"] = np.asarray(share, dtype=np.float64)
    arrays["rel_weight"] = np.asarray(g.weights if weights is None else weights, dtype=np.float64)
    arrays["rel_type"] = g.types.astype(np.uint16)
    arrays["rel_edge"] = g.edge_ids.astype(np.int32)
    records = index.corpus.records
    texts = [r.text if snippet == 0 or len(r.text) <= snippet else r.text[:snippet].rstrip() + "…" for r in records]
    edges = index.corpus.edges
    paths, anchors = _links(records)
    tables = {"vocab": lex.vocab, "ids": list(index.ids), "titles": [r.title for r in records], "texts": texts,
              "paths": paths, "anchors": anchors,
              "contexts": {str(i): e.context for i, e in enumerate(edges) if e.context},
              "names": name_matcher(index).owners}
    p = lex.params
    manifest: dict[str, Any] = {
        "format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "corpus": index.corpus.name, "records": len(records), "terms": lex.n_terms, "edges": len(edges),
        "index_generation": store.current_generation(index.path) if index.path else None,
        "tokenizer": {"min_length": lex.tokenizer_config.min_length,
                      "stopwords": sorted(stopwords(lex.tokenizer_config.stopwords))
                      if lex.tokenizer_config.stopwords else []},
        "bm25": {"k1": p.k1, "b": p.b, "variant": p.variant, "avgdl": lex.avgdl},
        "relation": {"type_names": list(g.type_names), "cues": CUES, "question_words": sorted(QUESTION_WORDS),
                     "residual_stop": sorted(RESIDUAL_STOP),
                     "weights": "base" if weights is None else "base+overlay",
                     **({"note": "the page ranks with the dictionary profile; Python's relation lane on this "
                                 "index uses the notes profile (hub damping, in-links, the named, agreement and kind parts, "
                                 "names v3), so "
                                 "their relation rankings differ"} if profile(index) == "notes" else {})},
        "params": {m: _defaults(m) for m in (*LEXICAL_METHODS, *GRAPH_METHODS, *DENSE_METHODS)},
        "method_descriptions": {m: method_spec(m).description for m in (*LEXICAL_METHODS, *GRAPH_METHODS,
                                                                         *DENSE_METHODS)},
        "lanes": lane_data(),
    }
    offered = [*LEXICAL_METHODS, *GRAPH_METHODS]
    payloads: dict[str, bytes] = {}
    if index.dense is not None:
        offered += DENSE_METHODS
        v = np.asarray(held_vectors(index.dense).vectors, dtype=np.float32)
        arrays["vectors"] = v.astype(np.float16) if vectors == "float16" else v
        files = resolve_model(index.dense.spec)
        payloads["model"] = Path(files.onnx_path).read_bytes()
        payloads["tokenizer"] = Path(files.tokenizer_path).read_bytes()
        manifest["dense"] = {"identity": index.dense.identity, "dim": int(v.shape[1]), "vectors": vectors,
                             "max_length": int(files.max_length), "query_prefix": files.query_prefix,
                             "model_sha256": hashlib.sha256(payloads["model"]).hexdigest()}
        if manifest["dense"]["model_sha256"] != index.dense.identity.get("onnx_sha256"):
            raise InputError("the installed model is not the one that encoded this index's vectors "
                             "(sha256 differs); rebuild the index or install the pinned model")
    manifest["methods_offered"] = offered
    blob, layout = _pack(arrays)
    manifest["arrays"] = layout
    payloads = {"index": blob, "tables": json.dumps(tables, ensure_ascii=False).encode("utf-8"), **payloads}
    return payloads, manifest


def _pack(arrays: dict[str, np.ndarray]) -> tuple[bytes, dict]:
    """Arrays in one little-endian buffer, each at an 8-byte aligned offset: (bytes, name -> layout)."""
    parts, layout, offset = [], {}, 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        pad = -offset % 8
        parts.append(b"\0" * pad)
        offset += pad
        layout[name] = {"dtype": a.dtype.name, "offset": offset, "length": int(a.size), "shape": list(a.shape)}
        parts.append(a.tobytes())
        offset += a.nbytes
    return b"".join(parts), layout


def _page(manifest: dict) -> str:
    """index.html: the page's frame; the scripts it loads are the data files, the worker and the app."""
    scripts = "\n".join([*(f'<script src="data/{name}.js"></script>' for name in manifest["data"]),
                         '<script src="app/worker.js"></script>'])
    return page_html({**manifest, "files": None}, f"sidelight · {manifest['corpus']}", scripts=scripts)


def page_html(manifest: dict, title: str, scripts: str = "", token: str = "", status: str = "loading…") -> str:
    """The one page's HTML (`page.html`) with its manifest, title, extra scripts and the server's page token."""
    template = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
    values = {"DATA_SCRIPTS": scripts, "MANIFEST": json.dumps(manifest, ensure_ascii=False).replace("</", "<\\/"),
              "TITLE": html.escape(title), "TOKEN": html.escape(token), "STATUS": html.escape(status)}
    return re.sub(r"__(DATA_SCRIPTS|MANIFEST|TITLE|TOKEN|STATUS)__", lambda m: values[m[1]], template)  # one pass
