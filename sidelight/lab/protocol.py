"""Lab protocols: one JSON file fixes corpus, index, benchmark, methods, selection and statistics.

Relative paths in a protocol are resolved against the protocol file's folder. The hashes a
freeze records are computed here: protocol file, benchmark file(s), corpus content and the
implementation (sha256 over the package's source and data files, sorted by path).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.model import Corpus
from ..errors import InputError
from ..index.store import sha256_file
from ..index.lookup import PRIOR, split_word_params
from .benchmark import (Benchmark, load_beir_benchmark, load_collection_benchmark, load_concept_benchmark,
                        load_describe_benchmark)
from .metrics import reads_to, within_depth
from .schema import validate_protocol
from .pick import check_pick

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
_IMPL_SUFFIXES = (".py", ".txt", ".json")
#: The seed of the paired bootstrap and sign-flip tests (Carrier R01 §5, "seed127300").
STATS_SEED = 127300
#: benchmark kinds read from one JSONL file: concept (a record per query), describe (a word per query),
#: collection (documents of a folder per query, notes-v1)
FILE_KINDS = ("concept", "describe", "collection")
DEFAULT_STATS = {"seed": STATS_SEED, "n_resamples": 10_000, "n_flips": 10_000, "confidence": 0.95}


@dataclass(frozen=True)
class Setting:
    """One ranked configuration: a registered method with fixed params under a unique label."""

    label: str
    method: str
    params: dict = field(default_factory=dict, hash=False, compare=False)
    group: str = ""  # settings sharing a group (rewire seeds) are also summarised together
    dense: str | None = None  # a key of index.dense_variants: rank over those vectors instead


def method_of(spec: dict) -> str:
    """The registered method a protocol entry runs: its `method`, else its `name`. Two entries may
    run one method under two names, e.g. `dense` and `dense-adapted` with `"dense": "adapted"`."""
    return spec.get("method", spec["name"])


def setting_label(name: str, params: dict) -> str:
    if not params:
        return name
    return name + "[" + ",".join(f"{k}={params[k]}" for k in sorted(params)) + "]"


@dataclass
class Protocol:
    path: Path
    data: dict

    @property
    def name(self) -> str:
        return self.data.get("name") or self.path.stem

    @property
    def kind(self) -> str:
        return self.data["benchmark"]["kind"]

    @property
    def primary(self) -> str:
        return self.data["metrics"]["primary"]

    @property
    def metric_names(self) -> list[str]:
        m = self.data["metrics"]
        return [m["primary"]] + [x for x in m.get("secondary", []) if x != m["primary"]]

    @property
    def depth(self) -> int:
        return int(self.data.get("depth", 100))

    @property
    def dev_depth(self) -> int:
        """Ranked ids kept per dev query (`dev_depth`, default `depth`; checked by the schema)."""
        return int(self.data.get("dev_depth") or self.depth)

    def dev_metrics(self) -> tuple[list[str], list[dict]]:
        """(metrics scored on dev, [{metric, reason}] left out: they read deeper than `dev_depth`). Without a
        declared dev_depth dev is scored as test is, every metric (a describe or concept benchmark reads
        the full target rank, so mrr@10 over rankings stored 5 deep is exact there)."""
        if "dev_depth" not in self.data:
            return list(self.metric_names), []
        kept, out = within_depth(self.metric_names, self.depth, self.dev_depth)
        return kept, [{"metric": m, "reason": f"reads the top {reads_to(m, self.depth)}; dev rankings are "
                                              f"stored {self.dev_depth} deep (dev_depth)"} for m in out]

    @property
    def stats(self) -> dict:
        return {**DEFAULT_STATS, **self.data.get("statistics", {})}

    @property
    def methods(self) -> list[dict]:
        return self.data["methods"]

    def resolve(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else (self.path.parent / p)

    def sha256(self) -> str:
        return sha256_file(self.path)

    # ---- corpus, index, benchmark ------------------------------------------------------------
    def load_corpus(self) -> Corpus:
        from ..corpus.sources import document_folder, load_source

        spec = self.data["corpus"]
        src = spec["source"]
        local = self.resolve(src)
        where = str(local) if local.exists() else src
        folder = document_folder(where)
        if folder is not None:  # a folder of documents, read as `sidelight index FOLDER --exclude ...` reads it
            from ..corpus.folder import load_folder

            corpus: Corpus = load_folder(folder, spec.get("exclude", ()))
        else:
            corpus = load_source(where)
        if "title_weight" in spec:
            corpus.title_weight = int(spec["title_weight"])
        return corpus

    def build_index(self, corpus: Corpus):
        """The index the protocol asks for; returns (index, setup seconds by step)."""
        from ..index import Index
        from ..structures.lexical_store import BM25Params
        from ..text import TokenizerConfig

        ix = self.data.get("index", {})
        setup: dict[str, Any] = {}
        t = time.perf_counter()
        index = Index.build(corpus, TokenizerConfig(**ix.get("tokenizer", {})), BM25Params(**ix.get("bm25", {})),
                            progress=False)
        setup["index_build_s"] = time.perf_counter() - t
        if ix.get("dense"):
            from .densecache import dense_store

            index.dense, info = dense_store(corpus, ix["dense"], progress=False)
            if info["status"] == "encoded":
                setup["corpus_encoding_s"] = info["encode_s"]
            setup["corpus_encoding"] = {k: v for k, v in info.items() if k != "model"}
        return index, setup

    def dense_variants(self) -> dict[str, str]:
        """name -> model spec of the extra vector sets methods may rank over (`"dense": NAME`);
        a folder path (one with a '/') is resolved against the protocol's folder. A variant is a
        spec, or {"model": SPEC, "passages": {"stride": N, "title": BOOL}} for MaxP over windows."""
        out = {}
        for name, entry in self.data.get("index", {}).get("dense_variants", {}).items():
            spec = entry["model"] if isinstance(entry, dict) else entry
            out[name] = str(self.resolve(spec)) if "/" in spec and not spec.startswith("hf:") else spec
        return out

    def variant_passages(self, name: str):
        """The `Passages` of dense variant `name`, or None (one vector per record)."""
        from ..structures.dense import Passages

        entry = self.data.get("index", {}).get("dense_variants", {}).get(name)
        return Passages.from_dict(entry["passages"]) if isinstance(entry, dict) and "passages" in entry else None

    def dense_model(self) -> dict | None:
        """Identity of the protocol's embedding model(s) (what decides the vectors), or None."""
        spec = self.data.get("index", {}).get("dense")
        if not spec:
            return None
        from .densecache import load_embedder, model_material

        def identity(s: str) -> dict:
            emb = load_embedder(s)
            return {"spec": s, "name": emb.identity.get("name"), **model_material(emb.identity)}

        out = identity(spec)
        variants = self.dense_variants()
        if variants:  # only when present, so older frozen runs keep their record
            out["variants"] = {name: identity(s) for name, s in sorted(variants.items())}
        return out

    def benchmark_files(self) -> list[Path]:
        b = self.data["benchmark"]
        if b["kind"] in FILE_KINDS:
            return [self.resolve(b["path"])]
        folder = self._beir_folder()
        extra = [folder / "qrels" / f"{b['dev']['split']}.tsv"] if b.get("dev") else []
        return [folder / "queries.jsonl", folder / "qrels" / f"{b.get('split', 'test')}.tsv", *extra]

    def benchmark_sha256(self) -> str:
        """sha256 of the benchmark file; for BEIR, sha256 over the queries and qrels file hashes."""
        files = self.benchmark_files()
        for p in files:
            if not p.is_file():
                raise InputError(f"{self.path}: benchmark file {p} does not exist")
        if len(files) == 1:
            return sha256_file(files[0])
        return hashlib.sha256("".join(sha256_file(p) + "\n" for p in files).encode()).hexdigest()

    def _beir_folder(self) -> Path:
        from ..config import data_dir

        folder = self.data["benchmark"]["folder"]
        local = self.resolve(folder)
        return local if local.is_dir() else data_dir() / folder

    def load_benchmark(self, corpus: Corpus) -> Benchmark:
        b = self.data["benchmark"]
        if b["kind"] == "concept":
            return load_concept_benchmark(self.resolve(b["path"]), set(corpus.ids), b.get("select"))
        if b["kind"] == "describe":
            return load_describe_benchmark(self.resolve(b["path"]), corpus)
        if b["kind"] == "collection":
            return load_collection_benchmark(self.resolve(b["path"]), set(corpus.ids), b.get("select"))
        return load_beir_benchmark(self._beir_folder(), b.get("split", "test"), b.get("sample"), b.get("dev"))

    # ---- methods -----------------------------------------------------------------------------
    def _check_declared_params(self, spec: dict) -> None:
        """Every fixed parameter and every grid value, checked by the method's declaration."""
        from ..methods import check_params

        def check(params: dict) -> None:
            if self.kind == "describe":  # words are ranked too: the prior is theirs (index.lookup)
                prior, params = split_word_params(params)
                PRIOR.check(spec["name"], prior)
            check_params(method_of(spec), params)

        fixed = spec.get("params", {})
        try:
            check(fixed)
            for key, values in spec.get("grid", {}).items():
                for v in values:
                    check({**fixed, key: v})
        except InputError as exc:
            raise InputError(f"{self.path}: {exc}") from None

    def check_methods(self) -> tuple[list[dict], list[str]]:
        """(runnable method specs, skipped names); an unregistered required method is an error."""
        from ..capabilities import VECTOR_NEEDS
        from ..methods import available_methods, method_spec

        known = available_methods()
        runnable, skipped = [], []
        has_dense = bool(self.data.get("index", {}).get("dense"))
        variants = self.dense_variants()
        for spec in self.methods:
            if spec.get("dense") is not None and spec["dense"] not in variants:
                raise InputError(f"{self.path}: method {spec['name']!r} asks for dense vectors {spec['dense']!r}; "
                                 f"index.dense_variants has {', '.join(sorted(variants)) or 'none'}")
            name = method_of(spec)
            declared = set(method_spec(name).needs) & VECTOR_NEEDS if name in known else set()
            if name in known and spec.get("requires") == "dense" and not declared:  # the method's own word wins
                raise InputError(f"{self.path}: method {spec['name']!r} is marked \"requires\": \"dense\", but "
                                 f"{name!r} declares no need of vectors (see `sidelight methods`)")
            if (declared or spec.get("requires") == "dense") and not has_dense:
                skipped.append(spec["name"])  # needs document vectors the protocol does not build
            elif name in known:
                runnable.append(spec)
            elif spec.get("required", True):
                raise InputError(f"{self.path}: method {spec['name']!r} is not registered; "
                                 f"registered: {', '.join(known)} (mark it \"required\": false to skip)")
            else:
                skipped.append(spec["name"])
        names = {s["name"] for s in runnable}
        ties = self.data.get("selection", {}).get("tie_break", {})
        for spec in runnable:
            self._check_declared_params(spec)
            loose = sorted({param for param, _ in ties.get(spec["name"], [])} - set(spec.get("grid", {})))
            if loose:
                raise InputError(f"{self.path}: tie_break of {spec['name']!r} names {', '.join(loose)}, "
                                 f"which its grid does not vary")
            src = spec.get("params_from")
            if src and src not in names:
                raise InputError(f"{self.path}: method {spec['name']!r} takes params from {src!r}, which is not run")
            if src:
                grid = next(s for s in runnable if s["name"] == src).get("grid")
                if not grid:
                    raise InputError(f"{self.path}: method {spec['name']!r} borrows the dev-selected setting of "
                                     f"{src!r}, which has no grid to select from")
                clash = sorted(set(grid) & set(spec.get("params", {})) | set(grid) & set(spec.get("grid", {})))
                if clash:
                    raise InputError(f"{self.path}: method {spec['name']!r} borrows {', '.join(clash)} from "
                                     f"{src!r} and also sets them itself")
        check_pick(self.data.get("pick"), names, str(self.path))
        pc = self.data.get("primary_contrast")
        if pc:
            for role in ("baseline", "candidate"):
                if pc[role] not in names:
                    raise InputError(f"{self.path}: primary contrast {role} {pc[role]!r} is not a runnable method")
        listed = {s["name"] for s in self.methods}
        for c in self.data.get("contrasts", []):
            for role in ("baseline", "candidate"):
                if c.get(role) not in listed:  # a skipped optional method just drops its contrast
                    raise InputError(f"{self.path}: contrast {role} {c.get(role)!r} is not a listed method")
        return runnable, skipped

    def extra_contrasts(self) -> list[tuple[str, str]]:
        """(baseline, candidate) pairs the protocol names besides the ones against the baseline;
        all exploratory."""
        return [(c["baseline"], c["candidate"]) for c in self.data.get("contrasts", [])]

    def exploratory(self, name: str) -> bool:
        return any(s["name"] == name and s.get("exploratory") for s in self.methods)

    def grid_settings(self, spec: dict) -> list[Setting]:
        """Every grid point of a method (one setting when it has no grid)."""
        grid = spec.get("grid") or {}
        keys = sorted(grid)
        out = []
        for values in itertools.product(*(grid[k] for k in keys)):
            params = {**spec.get("params", {}), **dict(zip(keys, values))}
            out.append(Setting(setting_label(spec["name"], dict(zip(keys, values))), method_of(spec), params,
                               spec["name"], spec.get("dense")))
        return out

    def settings(self, runnable: list[dict], selected: dict[str, dict] | None) -> list[Setting]:
        """Settings to run: all grid points when `selected` is None (dev), else one per method."""
        out: list[Setting] = []
        chosen: dict[str, dict] = dict(selected or {})
        for spec in runnable:
            name = spec["name"]
            if spec.get("grid") and selected is None:
                out.extend(self.grid_settings(spec))
                continue
            params = dict(spec.get("params", {}))
            if spec.get("grid"):
                params.update(chosen[name])
            if spec.get("params_from"):
                src = spec["params_from"]
                if src not in chosen:
                    if selected is None:  # dev: dependents run once selection is known
                        continue
                    raise InputError(f"no selected params for {src!r}")
                params = {**chosen[src], **params}
            seeds = spec.get("seeds")
            if seeds:
                for v in seeds["values"]:
                    p = {**params, seeds.get("param", "seed"): v}
                    out.append(Setting(f"{name}[{seeds.get('param', 'seed')}={v}]", method_of(spec), p, name,
                                       spec.get("dense")))
            else:
                out.append(Setting(name, method_of(spec), params, name, spec.get("dense")))
        return out


def load_protocol(path: Path) -> Protocol:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such protocol file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
    validate_protocol(data, str(path))  # the whole schema, before anything reads or writes (lab/schema.py)
    seen = set()
    for i, spec in enumerate(data["methods"]):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise InputError(f"{path}: methods[{i}] needs a string 'name'")
        if spec["name"] in seen:
            raise InputError(f"{path}: method {spec['name']!r} is listed twice")
        seen.add(spec["name"])
    return Protocol(path, data)


def implementation_hash(root: Path | None = None) -> tuple[str, dict[str, str]]:
    """sha256 over (relative path, file sha256) of every source/data file in the package, sorted."""
    root = Path(root or PACKAGE_ROOT)
    files = sorted(p for p in Path(root).rglob("*")
                   if p.is_file() and p.suffix in _IMPL_SUFFIXES and "__pycache__" not in p.parts)
    per = {p.relative_to(root).as_posix(): sha256_file(p) for p in files}
    h = hashlib.sha256()
    for rel in sorted(per):
        h.update(f"{rel}\t{per[rel]}\n".encode())
    return h.hexdigest(), per
