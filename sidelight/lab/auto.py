"""`sidelight lab auto IDX`: the lab over a user's own index, and its pick stored as the index's default.

It writes a protocol over probe questions (`lab.probe`) into the run folder, pinning the probe
file's hash and the index's corpus hash, runs it through the ordinary runner (freeze, dev
selection, one test scoring, report), and writes the dev pick into the index's manifest as
`default` = {method, params, source} in a new generation under the index's writer lock. The pick
gates the graph (`lab.pick`): `bm25+ppr` becomes the default only when, on dev, it beats the best
method without the graph AND its rewired-graph controls with a paired family bootstrap interval
whose lower bound is above `GRAPH_MARGIN`; otherwise the report and the pick's note say why not.
The pick is kept on the global default (`index.defaults`: hybrid-linear at its fixed setting
over the index's own vectors, BM25 without vectors): another candidate replaces it only when it
leads on dev with a paired interval above zero. The probe's questions come from the collection's
own text and flatter lexical weight; on notes-v1's dev questions, which people wrote, this
rule lost least against the best setting (bench/probe_rules.py). Dense candidates rank with the
index's own vectors, windows included, so the pick is scored as `search` will rank with it.

With `--adapt MINUTES`, the dense lane is first adapted to the collection
(`sidelight adapt`: self-supervised inverse cloze from the records, within the budget) into
RUN/adapted-model, before the freeze, which pins its files; the protocol then also ranks with
those vectors (`dense-adapted`, `rrf-adapted`, `hybrid-linear-adapted` over its grid), and when dev
picks one of them the index's vectors are re-encoded with the adapted model (same windows) before
the default is stored, so `search` ranks what the lab chose. Inverse cloze pairs a sentence with
the rest of ITS OWN record; probe questions point at ANOTHER record (link context) or at a section
by its heading, so the adapted model never trains on a probe question's answer, though it has read
every record's text, as the frozen model's BM25 neighbours have.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from ..corpus.model import Corpus, hash_line, quoted
from ..errors import InputError
from ..index import Index
from ..index.defaults import WITH_VECTORS, WITHOUT_VECTORS
from .metrics import within_depth
from .packed import read_json
from .probe import probe, write_probe

GRAPH = {"bm25+ppr": {"alpha": [0.5, 0.8], "lam": [0.1, 0.25, 0.5]}}
HYBRID = {"alpha": [0.3, 0.5, 0.7], "norm": ["minmax", "zscore"]}
REWIRE_SEEDS = [1, 2, 3]
GRAPH_MARGIN: float = 0.0  # a graph method is picked only when dev's interval of (graph − rewired) lies above this
PICK = "auto"
INCUMBENT = "global-default"  # the default of an index with vectors at its fixed setting: the pick's incumbent
PRIMARY = "mrr@10"
ADAPTED = "adapted"  # the dense variant of the adapted vectors
ADAPTED_MODEL = "adapted-model"  # its model folder inside the run folder
INDEX_VECTORS = "index"  # the dense variant of the index's own vectors when they are cut into windows
DEPTH = 100  # ranked ids stored per question by default
MIN_DEPTH = 10  # the primary metric's cutoff (mrr@10, hit@10): a shallower ranking could not be audited
SECONDARY = ["hit@1", "hit@10", "hit@100"]  # each reported only when the stored depth reaches its cutoff


def index_source(index: Index) -> dict:
    """The folder the index was built from (`manifest["source"]`, written by `sidelight index FOLDER`)."""
    src = index.manifest.get("source")
    if not isinstance(src, dict) or not src.get("folder"):
        raise InputError(f"{index.path}: the index does not say which folder it was built from; "
                         "rebuild it with `sidelight index FOLDER -o IDX`")
    if not Path(src["folder"]).is_dir():
        raise InputError(f"{index.path}: its source folder {src['folder']} is gone")
    return src


def folder_hash(index: Index, src: dict) -> str:
    """The content hash of the source folder as the lab will read it. `sync` appends the notes it
    reads again after the others, so a synced index can hold the folder's records and links in
    another order than a fresh read (whose order the hash pins): the index must hold the same ones,
    in any order, or it is out of date and refused."""
    from ..corpus.folder import load_folder

    fresh = load_folder(Path(src["folder"]), src.get("exclude") or ())
    h = fresh.content_hash()
    if h != index.manifest["corpus"]["hash"] and unordered(index.corpus) != unordered(fresh):
        raise InputError(f"{index.path} is out of date with its folder {src['folder']}: "
                         f"run `sidelight sync {src['folder']} {index.path}` first")
    return h


def unordered(corpus: Corpus) -> tuple[list[bytes], list[tuple]]:
    """A corpus's records (hash lines) and edges, each sorted: what it holds, whatever the order."""
    lines = sorted(hash_line(quoted(r), r.metadata) for r in corpus.records)
    return lines, sorted((e.source, e.target, e.type, e.weight) for e in corpus.edges)


def check_depth(depth: int) -> int:
    """The stored ranking depth: at least `MIN_DEPTH`, at most the protocol schema's `MAX_DEPTH`."""
    from .schema import MAX_DEPTH

    if isinstance(depth, bool) or not isinstance(depth, int) or not MIN_DEPTH <= depth <= MAX_DEPTH:
        raise InputError(f"lab auto -k/--top-k (ranked ids stored) must be an integer in [{MIN_DEPTH}, {MAX_DEPTH}] "
                         f"(mrr@10 needs the top {MIN_DEPTH}), got {depth!r}")
    return depth


def protocol_for(index: Index, probe_path: Path, probe_sha: str, dense: str | None, adapted: bool = False,
                 depth: int = DEPTH, *, corpus_hash: str) -> dict:
    """The frozen design: every candidate, its grid, the pick, the contrasts and rewired controls;
    `adapted`: the run folder holds an adapted model (`ADAPTED_MODEL`), ranked as one more vector set;
    `depth`: ranked ids stored per question (a secondary hit@k deeper than it is left out)."""
    check_depth(depth)
    src = index_source(index)
    if index.path is None:
        raise InputError("lab auto needs an index saved in a folder")
    lex = index.manifest.get("lexical", {})
    methods: list[dict] = [{"name": "bm25"}, {"name": "tfidf"}, {"name": "bm25+ppr", "grid": GRAPH["bm25+ppr"]},
                           {"name": "bm25+ppr:rewire", "params_from": "bm25+ppr",
                            "seeds": {"param": "seed", "values": REWIRE_SEEDS}}]
    singles, fused = ["bm25", "tfidf", "bm25+ppr"], []
    windows = index_windows(index) if dense else None
    variants: dict = {}
    if dense:
        own = {"dense": INDEX_VECTORS} if windows else {}
        methods += [{"name": "dense", **own}, {"name": "rrf", **own}, {"name": "hybrid-linear", **own, "grid": HYBRID},
                    {"name": INCUMBENT, "method": WITH_VECTORS.method, **own,
                     "grid": {k: [v] for k, v in sorted(WITH_VECTORS.params.items())}}]
        singles.append("dense")
        fused = ["rrf", "hybrid-linear", INCUMBENT]
        if windows:
            variants[INDEX_VECTORS] = {"model": dense, "passages": windows}
    index_spec: dict = {"tokenizer": lex.get("tokenizer", {}), "bm25": lex.get("bm25", {})}
    if dense:
        index_spec["dense"] = dense
    tie_break: dict = {"bm25+ppr": [["lam", "asc"], ["alpha", "desc"]],
                       **({"hybrid-linear": [["alpha", "desc"]]} if dense else {})}
    if adapted:
        variants[ADAPTED] = {"model": f"./{ADAPTED_MODEL}", "passages": windows} if windows else f"./{ADAPTED_MODEL}"
        methods += [{"name": "dense-adapted", "method": "dense", "dense": ADAPTED},
                    {"name": "rrf-adapted", "method": "rrf", "dense": ADAPTED},
                    {"name": "hybrid-linear-adapted", "method": "hybrid-linear", "dense": ADAPTED, "grid": HYBRID}]
        singles.append("dense-adapted")
        fused += ["rrf-adapted", "hybrid-linear-adapted"]
        tie_break["hybrid-linear-adapted"] = [["alpha", "desc"]]
    if variants:
        index_spec["dense_variants"] = variants
    return {
        "name": f"auto-{Path(index.path).name}",
        "description": f"lab auto over {index.path}: probe questions drawn from the collection itself "
                       "(link sentences, headings, aliases); the dev pick becomes the index's default method.",
        "corpus": {"source": src["folder"], "exclude": list(src.get("exclude") or []),
                   "content_hash": corpus_hash},
        "index": index_spec,
        "benchmark": {"kind": "collection", "path": probe_path.name, "sha256": probe_sha},
        "depth": depth,
        "metrics": {"primary": PRIMARY, "secondary": within_depth(SECONDARY, depth, depth)[0]},
        "methods": methods,
        "selection": {"split": "dev", "metric": PRIMARY, "tie_break": tie_break},
        "pick": {"name": PICK, "singles": singles, "fused": fused,
                 "graph": {"controls": {"bm25+ppr": "bm25+ppr:rewire"}, "margin": GRAPH_MARGIN},
                 "incumbent": INCUMBENT if dense else WITHOUT_VECTORS.method},
        "statistics": {"seed": 127300, "n_resamples": 2000, "n_flips": 2000, "confidence": 0.95},
        "primary_contrast": {"baseline": "bm25", "candidate": "bm25+ppr"},
    }


def index_windows(index: Index) -> dict | None:
    """The windows the index's vectors are cut into (`Passages.to_dict`), or None for one vector per record:
    the lab ranks with the same windows, so the pick is scored as `search` will rank with it."""
    passages = getattr(index.dense, "passages", None) if index.dense is not None else None
    return passages.to_dict() if passages is not None else None


def dense_spec(index: Index) -> str | None:
    """The embedding model spec of the index's vectors, or None."""
    if index.dense is None:
        return None
    return str(getattr(index.dense, "spec", None) or index.manifest.get("dense", {}).get("spec") or "") or None


def check_adaptable(index: Index) -> None:
    """`--adapt` needs vectors: the adapted model is ranked beside the index's own."""
    if index.dense is None:
        raise InputError(f"lab auto --adapt: {index.path} has no vectors to adapt; encode them first "
                         f"(`sidelight dense {index.path} --model minilm`) or run lab auto without --adapt")


def prepare(index_path: Path, out: Path, probe_file: Path | None, seed: int = 0, max_per_kind: int | None = 400,
            adapt_with: Callable[[Index, Path], object] | None = None, depth: int = DEPTH) -> Path:
    """Write RUNDIR/probe.jsonl and RUNDIR/protocol.json; returns the protocol's path. `adapt_with(index,
    folder)` writes an adapted model into RUNDIR/adapted-model (the CLI passes `sidelight adapt`: the
    lab does not import training code); `depth`: ranked ids stored per question."""
    from .runner import sha256_of

    check_depth(depth)
    index = Index.load(index_path)
    corpus_hash = folder_hash(index, index_source(index))
    if adapt_with is not None:
        check_adaptable(index)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise InputError(f"{out} is not empty: lab auto writes a new run folder")
    target = out / "probe.jsonl"
    if probe_file is not None:
        if not Path(probe_file).is_file():
            raise InputError(f"--probe {probe_file}: no such file")
        target.write_bytes(Path(probe_file).read_bytes())
    else:
        rows, summary = probe(list(index.corpus.records), seed, max_per_kind)
        write_probe(target, rows)
        (out / "probe-summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
    if adapt_with is not None:
        adapt_with(index, out / ADAPTED_MODEL)
    proto = protocol_for(index, target, sha256_of(target), dense_spec(index), adapt_with is not None, depth,
                         corpus_hash=corpus_hash)
    path = out / "protocol.json"
    path.write_text(json.dumps(proto, indent=2))
    return path


def chosen(run: Path) -> dict:
    """{method, params, label, dev value, n dev questions} of the run's dev pick."""
    sel = read_json(run / "dev" / "selection.json")  # plain or stored compressed (`packed`)
    dev = read_json(run / "dev" / "result.json")
    pk = sel["pick"]
    info = dev["methods"][pk["chosen"]]
    proto = json.loads((run / "protocol.json").read_text())
    label = info.get("group") or pk["chosen"]
    variant = next((m.get("dense") for m in proto["methods"] if m["name"] == label), None)
    return {"label": pk["chosen"], "method": info["method"], "params": info["params"],
            "value": pk["dev"][pk["chosen"]], "n_dev": info["n_queries"], "note": pk["note"],
            **({"vectors": str(run / ADAPTED_MODEL)} if variant == ADAPTED else {})}


def store_default(index_path: Path, run: Path, pick: dict) -> dict:
    """Write the pick into the index's manifest as `default`, as a new generation under its writer lock."""
    source = f"lab auto {run} (dev {PRIMARY} {pick['value']:.4f} on {pick['n_dev']} probe questions)"
    default = {"method": pick["method"], "params": pick["params"], "source": source}
    with Index.edit(index_path) as index:
        if pick.get("vectors"):  # the pick ranks with the adapted model: the index's vectors become its
            index.add_dense(pick["vectors"], progress=False, passages=index.dense.passages if index.dense else None)
            default["vectors"] = pick["vectors"]
        index.manifest["default"] = default
    return default


def graph_vs_rewired(result: dict) -> list[dict]:
    """bm25+ppr against the mean of its rewired controls, overall and per question kind."""
    methods = result["methods"]
    rewired = [lab for lab, m in methods.items() if m.get("group") == "bm25+ppr:rewire"]
    if "bm25+ppr" not in methods or not rewired:
        return []
    kinds = ["all"] + sorted(methods["bm25+ppr"].get("by_type", {}))
    rows = []
    for k in kinds:
        def val(lab: str, k: str = k) -> float | None:
            m = methods[lab]["overall"] if k == "all" else methods[lab].get("by_type", {}).get(k)
            return None if m is None else m[PRIMARY]
        vals = [v for v in (val(lab) for lab in rewired) if v is not None]
        graph = val("bm25+ppr")
        if graph is not None and vals:
            rows.append({"kind": k, "bm25+ppr": graph, "rewired_mean": sum(vals) / len(vals),
                         "difference": graph - sum(vals) / len(vals)})
    return rows


def summarise(run: Path) -> dict:
    """Per-method test figures (overall and per kind), contrasts against BM25, graph vs rewired, and
    section@3 (overall and per kind) when questions name a target section."""
    res = read_json(run / "test" / "result.json")
    per = {}
    for lab, m in res["methods"].items():
        per[lab] = {"all": m["overall"][PRIMARY], "n": m["n_queries"],
                    **{k: v[PRIMARY] for k, v in sorted(m.get("by_type", {}).items())}}
    contrasts = [{"baseline": c["baseline"], "candidate": c["candidate"], "difference": c["difference"],
                  "ci": [c["ci_low"], c["ci_high"]], "p_sign_flip": c["p_sign_flip"]}
                 for c in res["contrasts"] if c["baseline"] == "bm25"]
    sec = res.get("sections") or {}
    sections = {lab: {sec["metric"]: v[sec["metric"]], "hits": v["hits"], "n": sec["n"],
                      **{k: t[sec["metric"]] for k, t in v["by_type"].items()}}
                for lab, v in sec.get("methods", {}).items()}
    return {"methods": per, "contrasts": contrasts, "graph_vs_rewired": graph_vs_rewired(res),
            **({"sections": sections} if sections else {})}
