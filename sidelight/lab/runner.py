"""Freeze a protocol, select on dev, score the held-out split once, reproduce into a new folder.

Run folder layout::

    freeze.json                 hashes of protocol, benchmark, corpus and implementation (self-hashed)
    dev/selection.json          grid results and the rule-selected params
    dev/rankings/<label>.jsonl  per query: top ids + scores (dev_depth of them), full target rank
    dev/result.json             (with a declared dev_depth: "dev_depth" and the metrics "left_out")
    dev/record.json             sha256 of freeze.json and of every dev file (see `record`)
    test/...                    same, written ONCE (the folder is renamed into place when done)
    test/timings.json           (BEIR protocols with timing) not compared by reproduce
    test/record.json            sha256 of dev/record.json, dev/selection.json and every test file

`run --split test` refuses when test/ exists, when dev/selection.json is missing, when any
frozen hash (protocol, benchmark, corpus with its metadata, implementation) no longer matches, when a
data file the corpus was read from or the version of its Debian package differs from the freeze
(`provenance`), or when a file of the run no longer matches its record. Every writer holds the run folder's writer lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import InputError
from ..index.lookup import split_word_params, word_ranking
from ..methods import get_method
from ..methods.graph import rewire_reports
from ..store.lock import writer_lock
from .analysis import analyse
from .pick import dev_vectors, pick
from .provenance import differences as source_differences, provenance, source_files
from .protocol import FILE_KINDS, Protocol, Setting, implementation_hash, load_protocol
from .record import IGNORED, RECORD_NAME, RefusedError, safe_name, sealed, sha256_of, stage_record, verify_run
from .packed import exists, read_json, sha256_logical  # a committed run's result.json / selection.json may be stored as .xz
from .record import SCORED_NAME, mark_test_scored, read_rankings, test_scored
from .sections import section_figures


# ---- small atomic file helpers ---------------------------------------------------------------
def write_json(path: Path, obj) -> str:
    """Write `obj` atomically (temp file + rename); returns the sha256 of the bytes written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(obj, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.fchmod(fd, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return hashlib.sha256(data).hexdigest()


def write_rankings(folder: Path, label: str, rankings: dict) -> str:
    """One setting's rankings as `<safe label>.jsonl`; returns the sha256 of the bytes written."""
    folder.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    with open(folder / f"{safe_name(label)}.jsonl", "wb") as f:
        for qid, r in rankings.items():
            line = (json.dumps({"label": label, "qid": qid, **r}, ensure_ascii=False) + "\n").encode("utf-8")
            h.update(line)
            f.write(line)
    return h.hexdigest()


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """The run folder's writer lock (the folder is created first)."""
    out.mkdir(parents=True, exist_ok=True)
    with writer_lock(out):
        yield


# ---- context: everything loaded once per command ---------------------------------------------
class Context:
    def __init__(self, protocol: Protocol, verbose: bool = False):
        self.protocol = protocol
        self.say = print if verbose else (lambda *a, **k: None)
        self.corpus = protocol.load_corpus()
        self.bench = protocol.load_benchmark(self.corpus)
        self._index = None
        self._variants: dict = {}
        self.setup: dict = {}

    @property
    def index(self):
        if self._index is None:
            self._index, self.setup = self.protocol.build_index(self.corpus)
        return self._index

    def index_for(self, dense: str | None):
        """The protocol's index, or the same records and BM25 with another vector set (`index.dense_variants`)."""
        if dense is None:
            return self.index
        if dense not in self._variants:
            from ..index import Index
            from .densecache import dense_store

            store, info = dense_store(self.corpus, self.protocol.dense_variants()[dense], progress=False,
                                      passages=self.protocol.variant_passages(dense))
            self._variants[dense] = Index(self.corpus, self.index.lexical, dense=store, graph=self.index.graph)
            self.setup.setdefault("dense_variants", {})[dense] = {k: v for k, v in info.items() if k != "model"}
        return self._variants[dense]

    def hashes(self) -> dict:
        impl, files = implementation_hash()
        h = {"protocol_sha256": self.protocol.sha256(), "benchmark_sha256": self.protocol.benchmark_sha256(),
             "corpus_hash": self.corpus.content_hash(), "implementation_sha256": impl,
             "implementation_files": files}
        h["corpus_sources"] = self.sources()
        dense = self.protocol.dense_model()
        if dense is not None:  # the model files live outside the package: pin them too
            h["dense_model"] = dense
        return h

    def sources(self) -> dict:
        """The data files the corpus was read from (sha256) and the Debian packages that own them."""
        src = self.protocol.data["corpus"]["source"]
        return provenance(source_files(src, self.protocol.resolve(src)))


def _check_declared(p: Protocol, h: dict) -> None:
    declared = {"corpus_hash": p.data["corpus"].get("content_hash"),
                "benchmark_sha256": p.data["benchmark"].get("sha256")}
    for key, want in declared.items():
        if want and want != h[key]:
            raise RefusedError(f"{p.path}: declared {key} {want} but the current one is {h[key]}")


def freeze(protocol_path: Path, out: Path, verbose: bool = False) -> dict:
    """Record hashes and the runnable methods; refuses to re-freeze a folder with results."""
    out = Path(out)
    with _locked(out):
        return _freeze(protocol_path, out, verbose)


def _freeze(protocol_path: Path, out: Path, verbose: bool) -> dict:
    p = load_protocol(protocol_path)
    if (out / "test").exists() or (out / "dev").exists():
        raise RefusedError(f"{out} already holds results; freeze into a new folder")
    ctx = Context(p, verbose)
    h = ctx.hashes()
    _check_declared(p, h)
    runnable, skipped = p.check_methods()
    rec = {"protocol": p.name, "protocol_path": str(p.path), "protocol_data": p.data, **h,
           "methods": [s["name"] for s in runnable], "skipped_methods": skipped,
           "frozen_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "python": platform.python_version(), "numpy": np.__version__}
    rec = sealed(rec)  # the root of the run's record: its own hash, checked by every later stage
    write_json(out / "freeze.json", rec)
    ctx.say(f"frozen {p.name} into {out}: protocol {h['protocol_sha256'][:12]}, benchmark "
            f"{h['benchmark_sha256'][:12]}, corpus {h['corpus_hash'][:12]}, implementation "
            f"{h['implementation_sha256'][:12]}; methods {', '.join(rec['methods'])}"
            + (f"; skipped (optional: not registered, or needs dense vectors the protocol does not build): {', '.join(skipped)}" if skipped else ""))
    return rec


def check_frozen(ctx: Context, out: Path) -> dict:
    """Refuse unless freeze.json matches its record and every frozen hash still matches; returns it."""
    if not (out / "freeze.json").is_file():
        raise RefusedError(f"{out}/freeze.json missing: run `sidelight lab freeze` first")
    frozen = verify_run(out, "freeze")["freeze"]
    now = ctx.hashes()
    problems = []
    for key in ("protocol_sha256", "benchmark_sha256", "corpus_hash", "implementation_sha256"):
        if frozen[key] != now[key]:
            what = " (the corpus's records, their metadata or its edges differ)" if key == "corpus_hash" else ""
            problems.append(f"{key} changed{what}: frozen {frozen[key][:16]}, now {now[key][:16]}")
    if frozen.get("dense_model") != now.get("dense_model"):
        problems.append(f"dense model changed: frozen {frozen.get('dense_model')}, now {now.get('dense_model')}")
    if "corpus_sources" in frozen:  # freezes before issue 44 did not record them
        problems += source_differences(frozen["corpus_sources"], now["corpus_sources"])
    if frozen["implementation_sha256"] != now["implementation_sha256"]:
        a, b = frozen["implementation_files"], now["implementation_files"]
        changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        problems.append("changed implementation files: " + ", ".join(changed[:20]))
    if problems:
        raise RefusedError(f"{out}: refusing to run, frozen inputs changed:\n  " + "\n  ".join(problems))
    return frozen


# ---- ranking -----------------------------------------------------------------------------------
def rank_setting(ctx: Context, setting: Setting, qids: list[str], keep: int | None = None) -> dict:
    """qid -> {"ids", "scores", "target_rank", "n_ranked"}; the anchor is dropped when asked. A describe
    benchmark ranks words: "ids" are words by their best record (`index.lookup`), no scores.

    `keep` (dev_depth) stores only the first `keep` of the protocol-depth ranking: the method still ranks
    `depth` deep, so a method whose top ranks depend on k (dense-ann searches max(k, candidates)
    neighbours) gives dev the same top ranks, and the same selection, as without dev_depth."""
    index, bench, depth = ctx.index_for(setting.dense), ctx.bench, ctx.protocol.depth
    out = _rank_queries(ctx, setting, qids, index, bench, depth)
    if keep is not None and keep < depth:
        for row in out.values():
            row["ids"], row["scores"] = row["ids"][:keep], row["scores"][:keep]
    return out


def _rank_queries(ctx: Context, setting: Setting, qids: list[str], index, bench, depth: int) -> dict:
    describe = ctx.protocol.kind == "describe"
    prior, params = split_word_params(setting.params) if describe else (0.0, setting.params)
    method = get_method(setting.method, **params)
    full = ctx.protocol.kind in FILE_KINDS  # the full ranking gives untruncated target ranks
    drop = ctx.protocol.data.get("exclude_anchor", True)
    out = {}
    for q in qids:
        r = method.rank(index, bench.queries[q], None if full else depth)
        if describe:
            ranked = ((index.corpus.records[p], float(s)) for p, s in zip(r.positions, r.scores))
            words, rank = word_ranking(ranked, depth, bench.intended_name[q], prior)
            out[q] = {"ids": words, "scores": [], "n_ranked": len(r.positions), "target_rank": rank}
            continue
        ids = [str(index.ids[p]) for p in r.positions]
        scores = [float(s) for s in r.scores]
        if drop and q in bench.anchor and bench.anchor[q] in ids:
            i = ids.index(bench.anchor[q])
            del ids[i], scores[i]
        target = bench.single_target(q)
        row = {"ids": ids[:depth], "scores": scores[:depth], "n_ranked": len(ids)}
        if full:
            row["target_rank"] = ids.index(target) + 1 if target in ids else None
        out[q] = row
    return out


def _rank_all(ctx: Context, settings: list[Setting], qids: list[str], done: dict, keep: int | None = None) -> dict:
    for s in settings:
        if s.label not in done:
            t = time.perf_counter()
            done[s.label] = rank_setting(ctx, s, qids, keep)
            ctx.say(f"  {s.label}: {len(qids)} queries in {time.perf_counter() - t:.1f}s")
    return done


def select(protocol: Protocol, spec: dict, dev_result: dict) -> tuple[dict, list[dict]]:
    """Best grid point on the dev primary metric; ties by the protocol's tie_break list."""
    rule = protocol.data.get("selection", {})
    metric = rule.get("metric", protocol.primary)
    tie = rule.get("tie_break", {}).get(spec["name"], [])
    rows = []
    for s in protocol.grid_settings(spec):
        rows.append({"label": s.label, "params": {k: s.params[k] for k in spec["grid"]},
                     "value": dev_result["methods"][s.label]["overall"][metric]})

    def key(row):
        k = [-round(row["value"], 12)]
        for param, direction in tie:
            k.append(row["params"][param] if direction == "asc" else -row["params"][param])
        return k
    rows.sort(key=key)
    return rows[0]["params"], rows


def run_split(protocol_path: Path, split: str, out: Path, verbose: bool = False) -> dict:
    """Select on dev, or score the held-out split once, after verifying the run's record so far."""
    out = Path(out)
    if split not in ("dev", "test"):
        raise InputError(f"split must be dev or test, got {split!r}")
    if not (out / "freeze.json").is_file():
        raise RefusedError(f"{out}/freeze.json missing: run `sidelight lab freeze` first")
    with _locked(out):
        return _run_split(protocol_path, split, out, verbose)


def _run_split(protocol_path: Path, split: str, out: Path, verbose: bool) -> dict:
    p = load_protocol(protocol_path)
    if (out / "test").exists():
        raise RefusedError(f"{out}/test exists: the held-out split was already scored; it is never "
                           f"overwritten (reproduce into a new folder with `sidelight lab reproduce`)")
    scored = test_scored(out)
    if scored is not None:  # test/ was removed, but the run remembers (record.SCORED_NAME)
        raise RefusedError(f"{out}: the held-out split was already scored (at {scored.get('at', '?')}, noted in "
                           f"{out / SCORED_NAME}) although {out}/test is gone; it is never scored twice "
                           f"(reproduce into a new folder with `sidelight lab reproduce`)")
    if split == "test" and not exists(out / "dev" / "selection.json"):
        raise RefusedError(f"{out}/dev/selection.json missing: run `sidelight lab run --split dev` first")
    # the record so far, before any work: freeze.json; for test also the selection and dev files
    verify_run(out, "freeze" if split == "dev" else "dev")
    ctx = Context(p, verbose)
    frozen = check_frozen(ctx, out)
    runnable = [s for s in p.methods if s["name"] in frozen["methods"]]
    if split == "dev":
        return _run_dev(ctx, runnable, out)
    selection = read_json(out / "dev" / "selection.json")
    return _run_test(ctx, runnable, selection, out)


def _run_dev(ctx: Context, runnable: list[dict], out: Path) -> dict:
    p, bench = ctx.protocol, ctx.bench
    dev = bench.subset("dev")
    qids = list(dev.queries)
    grids = [s for s in runnable if s.get("grid")]
    selected: dict[str, dict] = {}
    table: dict[str, list] = {}
    rankings: dict = {}
    picked = None
    if grids and not qids:
        raise InputError(f"{p.path}: methods have grids but the benchmark has no dev queries")
    metrics, left_out = p.dev_metrics()  # a metric deeper than dev_depth is left out, never cut short
    if qids:
        first = p.settings(runnable, None)
        _rank_all(ctx, first, qids, rankings, p.dev_depth)
        res = analyse(dev, rankings, first, p, metrics=metrics)
        for spec in grids:
            selected[spec["name"]], table[spec["name"]] = select(p, spec, res)
        final = p.settings(runnable, selected)
        twins = {(f.method, f.dense, json.dumps(f.params, sort_keys=True)): f.label for f in first}
        for s in final:  # selected settings under their plain labels reuse the grid point's ranks
            if s.label not in rankings:
                twin = twins.get((s.method, s.dense, json.dumps(s.params, sort_keys=True)))
                rankings[s.label] = rankings[twin] if twin else rank_setting(ctx, s, qids, p.dev_depth)
        all_settings = first + [s for s in final if s.label not in {f.label for f in first}]
        result = analyse(dev, rankings, all_settings, p, metrics=metrics)
        if "dev_depth" in p.data:  # only then: dev/result.json of a protocol without it stays as it was
            result.update(dev_depth=p.dev_depth, left_out=left_out)
        result["setup"] = ctx.setup
        if p.data.get("pick"):
            metric = p.data.get("selection", {}).get("metric", p.primary)
            picked = pick(p.data["pick"], {lab: m["overall"] for lab, m in result["methods"].items()}, metric,
                          dev_vectors(dev, result, p.data["pick"], metric), p.stats)
            ctx.say(f"pick: {picked['note']}")
    else:
        result = {"note": "no dev queries and no grid: nothing to select"}
    tmp = Path(tempfile.mkdtemp(prefix=".dev.tmp-", dir=out))
    files = {f"dev/rankings/{safe_name(label)}.jsonl": write_rankings(tmp / "rankings", label, r)
             for label, r in rankings.items()}
    files["dev/result.json"] = write_json(tmp / "result.json", result)
    files["dev/selection.json"] = write_json(tmp / "selection.json", {
        "selected": selected, "grid": table, "rule": p.data.get("selection", {}), "split": "dev",
        **({"pick": picked} if picked else {})})
    write_json(tmp / RECORD_NAME, stage_record("dev", {"freeze.json": sha256_of(out / "freeze.json")}, files))
    old = None
    if (out / "dev").exists():  # a dev rerun before the test: the old selection goes whole
        old = Path(tempfile.mkdtemp(prefix=".dev.old-", dir=out))
        os.replace(out / "dev", old / "dev")
    os.chmod(tmp, 0o755)
    os.replace(tmp, out / "dev")
    if old is not None:
        shutil.rmtree(old)
    ctx.say(f"dev selection: {json.dumps(selected)}")
    return {"selected": selected, "grid": table}


def _run_test(ctx: Context, runnable: list[dict], selection: dict, out: Path) -> dict:
    p = ctx.protocol
    test = ctx.bench.subset("test")
    mark_test_scored(out, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))  # before a single test rank
    settings = p.settings(runnable, selection["selected"])
    rankings = _rank_all(ctx, settings, list(test.queries), {})
    picked, contrasts = selection.get("pick"), []
    if picked:  # the dev-picked setting, scored again under the pick's name and set against every candidate
        chosen = next(s for s in settings if s.label == picked["chosen"])
        settings = settings + [Setting(picked["name"], chosen.method, chosen.params, picked["name"], chosen.dense)]
        rankings[picked["name"]] = rankings[chosen.label]
        contrasts = [(lab, picked["name"]) for lab in picked["dev"]]
    result = analyse(test, rankings, settings, p, ctx.corpus, ctx.index.lexical.tokenizer, contrasts)
    result["selection"] = selection["selected"]
    if picked:
        result["pick"] = picked
    if p.kind == "collection" and test.sections:  # section@3 of the questions whose target names a section
        base = (p.data.get("primary_contrast") or {}).get("baseline", "bm25")
        result["sections"] = section_figures(test, rankings, [s.label for s in settings], ctx.index, p.stats, base)
    result["setup"] = ctx.setup
    if ctx.index.dense is not None:
        result["dense"] = _dense_report(ctx, test)
    result["rewire_reports"] = _rewire_reports(ctx)
    tmp = Path(tempfile.mkdtemp(prefix=".test.tmp-", dir=out))
    files = {f"test/rankings/{safe_name(label)}.jsonl": write_rankings(tmp / "rankings", label, r)
             for label, r in rankings.items()}
    if p.data.get("timing"):
        from .timing import time_methods

        files["test/timings.json"] = write_json(tmp / "timings.json", time_methods(ctx, settings, test))
    files["test/result.json"] = write_json(tmp / "result.json", result)
    previous = {"dev/record.json": sha256_of(out / "dev" / RECORD_NAME),
                "dev/selection.json": sha256_logical(out / "dev" / "selection.json")}
    write_json(tmp / RECORD_NAME, stage_record("test", previous, files))
    if (out / "test").exists():  # a concurrent run finished first
        shutil.rmtree(tmp)
        raise RefusedError(f"{out}/test appeared while running; not overwritten")
    os.chmod(tmp, 0o755)
    os.replace(tmp, out / "test")
    mark_test_scored(out, (test_scored(out) or {}).get("at", ""), sha256_of(out / "test" / RECORD_NAME))
    return result


def _dense_report(ctx: Context, bench) -> dict:
    """Model identity, vector provenance and truncation counts (documents; held-out queries)."""
    store = ctx.index.dense
    emb = store.embedder()
    count, limit = getattr(emb, "count_tokens", None), getattr(emb, "max_length", None)
    prefix = str(getattr(getattr(emb, "files", None), "query_prefix", "") or "")
    tq = sum(1 for q in bench.queries.values() if count(prefix + q) > limit) if count and limit else None
    info = ctx.setup.get("corpus_encoding", {})
    return {"spec": store.spec, "identity": store.identity, "n_vectors": int(len(store.vectors)),
            "truncated_docs": int(store.truncated_docs), "truncated_queries": tq, "n_queries": len(bench.queries),
            "vectors_sha256": info.get("vectors_sha256"), "cache_key": info.get("key")}


def _rewire_reports(ctx: Context) -> dict:
    """Seed -> RewireReport dict of every rewire the run built (empty when it ran none)."""
    return {str(seed): r.to_dict() for seed, r in rewire_reports(ctx.index).items()}


# ---- reproduce -----------------------------------------------------------------------------------
def compare_runs(a: Path, b: Path, tol: float = 0.0) -> tuple[list[str], list[str]]:
    """(differences, notes) between two run folders: selection, every rank, score and metric."""
    a, b = Path(a), Path(b)
    diffs, notes = [], []
    fa, fb = read_json(a / "freeze.json"), read_json(b / "freeze.json")
    for key in ("protocol_sha256", "benchmark_sha256", "corpus_hash"):
        if fa[key] != fb[key]:
            diffs.append(f"freeze {key}: {fa[key][:16]} vs {fb[key][:16]}")
    if fa.get("dense_model") != fb.get("dense_model"):
        diffs.append(f"freeze dense_model: {fa.get('dense_model')} vs {fb.get('dense_model')}")
    if "corpus_sources" in fa and "corpus_sources" in fb:
        notes += [f"corpus source: {d}" for d in source_differences(fa["corpus_sources"], fb["corpus_sources"])]
    if fa["implementation_sha256"] != fb["implementation_sha256"]:
        notes.append(f"implementation hash differs ({fa['implementation_sha256'][:16]} vs "
                     f"{fb['implementation_sha256'][:16]}); ranks are compared anyway")
    sa, sb = (read_json(x / "dev" / "selection.json")["selected"] for x in (a, b))
    if sa != sb:
        diffs.append(f"dev selection: {sa} vs {sb}")
    for split in ("dev", "test"):
        ra, rb = read_rankings(a / split / "rankings"), read_rankings(b / split / "rankings")
        for label in sorted(set(ra) | set(rb)):
            if label not in ra or label not in rb:
                diffs.append(f"{split}: method {label} only in {'first' if label in ra else 'second'} run")
                continue
            for q in sorted(set(ra[label]) | set(rb[label])):
                x, y = ra[label].get(q), rb[label].get(q)
                if x is None or y is None:
                    diffs.append(f"{split} {label} {q}: query missing in one run")
                elif x["ids"] != y["ids"]:
                    i = next((i for i, (u, v) in enumerate(zip(x["ids"], y["ids"])) if u != v),
                             min(len(x["ids"]), len(y["ids"])))
                    diffs.append(f"{split} {label} {q}: ranks differ from rank {i + 1} "
                                 f"({x['ids'][i] if i < len(x['ids']) else '-'} vs "
                                 f"{y['ids'][i] if i < len(y['ids']) else '-'})")
                elif x.get("target_rank") != y.get("target_rank"):
                    diffs.append(f"{split} {label} {q}: target rank {x.get('target_rank')} vs {y.get('target_rank')}")
                elif any(abs(u - v) > tol * max(1.0, abs(u)) for u, v in zip(x["scores"], y["scores"])):
                    diffs.append(f"{split} {label} {q}: scores differ")
        ma = read_json(a / split / "result.json").get("methods", {})
        mb = read_json(b / split / "result.json").get("methods", {})
        for label in sorted(set(ma) & set(mb)):
            for m, v in ma[label]["overall"].items():
                w = mb[label]["overall"].get(m)
                if w is None or abs(v - w) > tol:
                    diffs.append(f"{split} {label} {m}: {v!r} vs {w!r}")
    return diffs, notes


def _is_empty(folder: Path) -> bool:
    """No entries besides the writer lock's own files."""
    return not folder.exists() or all(p.name in IGNORED for p in folder.iterdir())


def reproduce(protocol_path: Path, src: Path, into: Path, verbose: bool = False) -> tuple[list[str], list[str]]:
    """Rerun the whole protocol into a new folder and compare it with `src` (whose record must hold)."""
    src, into = Path(src), Path(into)
    if not _is_empty(into):
        raise RefusedError(f"{into} is not empty; reproduce into a new folder")
    if not exists(src / "test" / "result.json"):
        raise RefusedError(f"{src} has no completed test result to reproduce")
    verify_run(src, "test")
    with _locked(into):
        if not _is_empty(into):
            raise RefusedError(f"{into} is not empty; reproduce into a new folder")
        _freeze(protocol_path, into, verbose)
        _run_split(protocol_path, "dev", into, verbose)
        _run_split(protocol_path, "test", into, verbose)
    verify_run(src, "test")  # src did not change while we ran
    return compare_runs(src, into)


def run_all(protocol_path: Path, out: Path, verbose: bool = False) -> dict:
    """freeze (if needed) -> dev -> test -> report, in one call, under the run's writer lock."""
    out = Path(out)
    with _locked(out):
        if not (out / "freeze.json").exists():
            _freeze(protocol_path, out, verbose)
        if not exists(out / "dev" / "selection.json"):
            _run_split(protocol_path, "dev", out, verbose)
        result = _run_split(protocol_path, "test", out, verbose)
        from .report import write_report_locked

        write_report_locked(out)
    return result
