"""`sidelight index`, `sidelight add`, `sidelight delete`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..corpus.jsonl import read_edges_tsv, read_jsonl, record_from_json
from ..corpus.folder import load_folder
from ..corpus.model import Corpus
from ..corpus.sources import document_folder, load_source
from ..errors import InputError
from ..index import Index, store
from ..index.sync import sync
from ..index.index import dense_texts, folder_source, section_passages
from ..structures.dense import DenseStore
from ..structures.lexical_store import VARIANTS, BM25Params
from ..text import STOPLISTS, TokenizerConfig
from .args import add_output, add_passage_flags, dense_summary, passages_of
from .collection_cmd import add_folder_flags, print_sync

JSONL_FORMAT = """\
A JSONL corpus is one JSON object per line:
  {"id": "a1", "title": "Amplitude modulation", "text": "...", "aliases": ["AM"], "metadata": {"pos": "noun"}}
id: a string or integer (unique); text: a string; title, aliases (a list of strings) and metadata
(an object) are optional. Its links go in EDGES.tsv beside it (RECORDS.edges.tsv), one per line,
TAB-separated: source-id <TAB> target-id [<TAB> type [<TAB> weight]] (weight finite, > 0).
A folder of documents needs no conversion: ids are paths relative to the folder."""


def register(sub) -> None:
    p = sub.add_parser("index", help="build an index folder from a folder of documents or a corpus",
                       description="Index SOURCE: a folder of documents (Markdown with Obsidian links, HTML, "
                                   "plain text, PDF), a BEIR folder, a JSONL file, 'foldoc', 'wordnet' (noun "
                                   "synsets), 'wordnet-all' (every synset), or a data set name such as 'scifact'.",
                       epilog=JSONL_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source")
    add_output(p, "index folder to write (atomically): new, empty, or an existing sidelight index",
               required=True, old=("--out",))
    p.add_argument("--force", action="store_true",
                   help="write into a folder that holds other files (they are kept, never removed)")
    p.add_argument("--stem", action="store_true", help="Snowball English stemming (PyStemmer)")
    p.add_argument("--stopwords", nargs="?", const="lucene-en-v1", default=None, choices=STOPLISTS,
                   help="remove a fixed stop list (default list when given bare: lucene-en-v1)")
    p.add_argument("--min-length", type=int, default=1, help="shortest token kept (Carrier: 2)")
    p.add_argument("--k1", type=float, default=1.2)
    p.add_argument("--b", type=float, default=0.75)
    p.add_argument("--variant", choices=VARIANTS, default="robertson", help="BM25 idf/tf variant")
    p.add_argument("--title-weight", type=int, default=None, help="times the title is repeated (default: the corpus's own)")
    p.add_argument("--dense", metavar="MODEL_SPEC", help="also store embedding vectors: 'minilm', a local ONNX folder, or hf:ORG/NAME@REV")
    p.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads for --dense")
    add_passage_flags(p)
    p.add_argument("--batch-size", type=int, default=32, help="encoding batch size for --dense")
    p.add_argument("--ann", action="store_true",
                   help="with --dense: also save an HNSW graph (usearch) for the `dense-ann` method")
    p.add_argument("--ann-connectivity", type=int, default=None, help="HNSW connectivity (M) for --ann (default 32)")
    p.add_argument("--ann-expansion-add", type=int, default=None, help="HNSW expansion at build for --ann (default 128)")
    p.add_argument("--ann-expansion-search", type=int, default=None, help="HNSW expansion at query for --ann (default 128)")
    p.add_argument("--shards", type=int, default=None, metavar="N",
                   help="write N shards (IDX/shards/0..N-1, records by a stable hash of the id) that score with "
                        "the whole collection's statistics: the same scores as one index")
    p.add_argument("--ray", metavar="auto|ADDRESS", default=None,
                   help="with --shards: count the shards and encode --dense vectors on Ray (auto: the cluster "
                        "running here, else a local one; needs pip install 'sidelight[ray]')")
    p.add_argument("--workers", type=int, default=None, help="with --ray and --dense: encoder actors (default 2)")
    add_folder_flags(p)
    p.add_argument("--update", action="store_true",
                   help="SOURCE is a folder and the index exists: apply only what changed (as `sidelight sync`)")
    p.add_argument("--skip-unresolved", action="store_true",
                   help="JSONL: count edges that name unknown record ids and leave them out, instead of failing")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run_index)

    a = sub.add_parser("add", help="add JSONL records (and their links) to an index (BM25 statistics stay exact)")
    a.add_argument("index", type=Path)
    a.add_argument("records", type=Path, help="JSONL records: id, title, text (see `sidelight index --help`)")
    a.add_argument("--edges", type=Path, metavar="EDGES.tsv",
                   help="links to add: source <TAB> target [<TAB> type [<TAB> weight]], between records of the "
                        "index or of RECORDS (default: RECORDS.edges.tsv when it exists)")
    a.add_argument("--replace", action="store_true",
                   help="a record whose id is already in the index replaces it; links into it are kept, and its "
                        "own links are kept too unless EDGES gives links from it")
    a.set_defaults(func=run_add)

    d = sub.add_parser("delete", help="delete records from an index by id")
    d.add_argument("index", type=Path)
    d.add_argument("ids", nargs="+")
    d.set_defaults(func=run_delete)

    c = sub.add_parser("check", help="re-hash every file of an index in full and open it (opening alone checks "
                                     "only sizes and file heads)")
    c.add_argument("index", type=Path)
    c.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    index = Index.load(args.index, verify=True)
    files = index.manifest["sizes"]
    shards = index.manifest.get("shards")
    also = f", and so do its {shards['count']} shards'" if shards else ""
    print(f"{args.index}: {store.current_generation(args.index)} is whole: {len(files)} files, "
          f"{sum(files.values()) / 1e6:,.1f} MB, every sha256 matches its manifest{also}; {len(index.corpus):,} records")
    left = store.leftovers(args.index)
    if left:
        print(f"{args.index}: left by interrupted writes (the next write removes them; nothing reads them): "
              + ", ".join(left))
    from ..store.sqlite import check_file

    problem = check_file(args.index / "state.sqlite")
    if problem:
        raise InputError(f"{args.index}: the generation is whole, but state.sqlite: {problem}")
    return 0


def run_index(args: argparse.Namespace) -> int:
    if args.ann and not args.dense:
        raise InputError("--ann needs --dense MODEL_SPEC (the graph is built over the dense vectors)")
    if args.passages and not args.dense:
        raise InputError("--passages needs --dense MODEL_SPEC (windows are encoded by the embedding model)")
    for flag, value in (("--min-length", args.min_length), ("--title-weight", args.title_weight),
                        ("--threads", args.threads), ("--batch-size", args.batch_size)):
        least = 0 if flag == "--title-weight" else 1
        if value is not None and value < least:
            raise InputError(f"{flag} must be >= {least}, got {value}")
    if not args.k1 >= 0 or not 0 <= args.b <= 1:
        raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={args.k1}, b={args.b}")
    if args.shards is not None and args.shards < 1:
        raise InputError(f"--shards must be >= 1, got {args.shards}")
    if args.shards is not None:
        from ..index.limits import ensure_open_files

        ensure_open_files(args.shards, "write")  # refuse before the (long) build, not after
    if args.ray and args.shards is None:
        raise InputError("--ray builds a sharded index: give --shards N as well")
    if args.shards is not None and args.ann:
        raise InputError("--ann is not available with --shards (each shard would need its own graph)")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    folder = document_folder(args.source)
    if args.update:
        if folder is None:
            raise InputError(f"--update needs a folder of documents as SOURCE, got {args.source!r}")
        if store.is_index_folder(args.output):
            print_sync(sync(args.output, folder, args.exclude), args.output, args)
            return 0
    store.check_destination(args.output, args.force)  # refuse before the (long) build, not after
    if args.ray:
        from ..index import ray_shards

        ray_shards.connect(args.ray)
    if folder is not None:
        read = load_folder(folder, args.exclude)
        print(read.report.summary())
        if args.report is not None:
            args.report.write_text(read.report.to_text(), encoding="utf-8")
        corpus: Corpus = read
    else:
        corpus = load_source(args.source, skip_unresolved=args.skip_unresolved)
    if args.title_weight is not None:
        corpus.title_weight = args.title_weight
    tok = TokenizerConfig(min_length=args.min_length, stopwords=args.stopwords, stem="english" if args.stem else None)
    dense = None
    if args.dense:  # the same texts and windows whether Ray Data or this process encodes them
        passages = passages_of(args) or section_passages(corpus, args.stride)
        texts, titles, units = dense_texts(corpus, corpus.records, passages)
    if args.dense and args.ray:
        dense = ray_shards.ray_encode(texts, args.dense, args.workers or 2, args.batch_size, passages=passages,
                                      titles=titles, units=units)
    elif args.dense:
        dense = DenseStore.build(texts, args.dense, args.batch_size, args.threads, progress=not args.quiet,
                                 passages=passages, titles=titles, units=units)
        if args.ann:
            from ..structures.ann import AnnParams

            given = {"connectivity": args.ann_connectivity, "expansion_add": args.ann_expansion_add,
                     "expansion_search": args.ann_expansion_search}
            dense.build_ann(AnnParams(**{k: v for k, v in given.items() if v is not None}))
    params = BM25Params(args.k1, args.b, args.variant)
    source = folder_source(folder, args.exclude or []) if folder else None
    if args.shards is not None:
        from ..index.sharded import ShardedIndex

        builders = ray_shards.ray_builders if args.ray else None
        index: Index = ShardedIndex.write_sharded(corpus, args.output, args.shards, tok, params, dense=dense, force=args.force,
                                   progress=not args.quiet, builders=builders, extra=source)
    else:
        index = Index.write(corpus, args.output, tok, params, dense=dense, force=args.force, progress=not args.quiet,
                            extra=source)
    shards = f" in {args.shards} shards {index.manifest['shards']['records']}" if args.shards else ""
    print(f"indexed {len(corpus)} records, {len(corpus.edges)} edges, {index.lexical.n_terms} terms{shards} -> {args.output}")
    if index.dense is not None:
        print(dense_summary(index.dense, len(corpus)))
        if index.dense.ann_params is not None:
            print(f"ann: usearch HNSW {index.dense.ann_params.to_dict()} -> method dense-ann")
    return 0


def run_add(args: argparse.Namespace) -> int:
    records = [record_from_json(o, f"{args.records}:{n}") for n, o in read_jsonl(args.records)]
    if not records:  # nothing to add: no new generation, the index stays as it is
        store.current_generation(args.index)  # still a clear error for a folder that is not an index
        print(f"added 0 records: {args.records} holds none; {args.index} is unchanged")
        return 0
    edges_file = args.edges or (args.records.with_suffix(".edges.tsv")
                                if args.records.with_suffix(".edges.tsv").is_file() else None)
    edges = read_edges_tsv(edges_file) if edges_file is not None else []
    with Index.edit(args.index) as index:
        known = set(index.corpus.ids)
        existing = [r.id for r in records if r.id in known]
        if existing and not args.replace:
            raise InputError(f"cannot add: record id {existing[0]!r} is already in the index "
                             f"(give --replace to replace it, keeping the links into it)")
        if existing:
            sources = {e.source for e in edges}
            kept = [e for e in index.corpus.edges if e.source not in sources]
            index.replace(existing, records, kept + edges)
        else:
            index.add(records, edges)
    replaced = f" ({len(existing)} replaced)" if existing else ""
    print(f"added {len(records)} records{replaced} and {len(edges)} links; {len(index.corpus)} in {args.index}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    ids = list(dict.fromkeys(args.ids))  # what is deleted: each id once, however often it was given
    with Index.edit(args.index) as index:
        before = len(index.corpus)
        index.delete(ids)
    gone = before - len(index.corpus)
    repeats = f" ({len(args.ids) - len(ids)} repeated id(s) ignored)" if len(ids) < len(args.ids) else ""
    print(f"deleted {gone} record{'s' if gone != 1 else ''}{repeats}; {len(index.corpus)} in {args.index}")
    return 0
