"""A sharded index: disjoint shards that score with the whole collection's statistics.

Layout of `sidelight index SOURCE -o IDX --shards N`::

    IDX/index.json, IDX/gen-N/   the coordinator (generations as in `index.store`): manifest (kind
                                 "sharded", the shard count, each shard's pinned generation, the
                                 collection's record count and total length), every record, the
                                 edges and the graph, id_rank, the shard of each record
                                 (`shard.npy`), the collection's vocabulary and df (`vocab/`)
    IDX/shards/S/                an ordinary index folder over the records of shard S, its lexical
                                 index rescoped to the collection's statistics
    IDX/state.sqlite             traces and feedback: one store, on the coordinator

A record's shard is a stable hash of its id (`shard_of`). Every shard's BM25 weight of a posting
is the unsharded index's, bit for bit, and a query's terms are summed in the same order, so
scores and ties are exact; dense cosines are position-independent (`structures.dense.cosines`).
The coordinator is an `Index` whose lexical and dense parts ask the shards (`FanoutLexical`,
`FanoutDense`), so every method that needs only score vectors, the relation lane and PPR run
unchanged on it, over the global graph.

Writes: the coordinator's writer lock is held throughout; every shard is rewritten (an add
changes N, avgdl and df, hence every weight), then the coordinator's new generation pins the
shards' new generations in one rename. A crash before it leaves the old generation pinned (a
shard's own pointer is set back to its pin by the next writer).
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from contextlib import AbstractContextManager
from typing import Any, Callable, Sequence

import numpy as np

from ..corpus.model import Corpus, Edge, Record
from ..errors import IndexFormatError, InputError
from ..graph.store import Graph
from ..capabilities import Capability
from ..progress import progress_bar
from ..store.column import StringColumn
from ..store.lock import writer_lock
from ..structures.dense import DenseStore, Passages, held_vectors
from ..structures.lexical import TermScorer
from ..structures.lexical_store import BM25Params, Vocabulary, write_vocab
from ..structures.ranking import Ranking, select_top
from ..text import Tokenizer, TokenizerConfig
from . import store
from .index import KEPT_KEYS, Index, id_rank_of, register_kind
from .limits import ensure_open_files
from .shard_passages import VECTORS_STAY, FanoutDense, dense_meta, dense_part, section_scores
from .records import EdgeFile, RecordFile, as_list, write_edges, write_records
from .shards import Coverage, Fanout, LocalShards, ShardBuilder, ShardServer, gather, merged

SHARDS = "shards"
KIND = "sharded"


def shard_of(ids: Sequence[str], n_shards: int) -> np.ndarray:
    """The shard of each record id: blake2b (8 bytes, little-endian) of its UTF-8 bytes, mod N."""
    return np.fromiter((int.from_bytes(hashlib.blake2b(i.encode("utf-8"), digest_size=8).digest(), "little")
                        % n_shards for i in ids), dtype=np.int32, count=len(ids))


# ---- the coordinator's view of the shards -----------------------------------------------------------
class FanoutLexical(TermScorer):
    """The collection's vocabulary and statistics here; scores from the shards.

    Tokenizing, term lookup, idf and the TF-IDF query vector are answered here; BM25 and TF-IDF
    scores are summed by the shards (a record's score is its shard's). The term counts and weight
    matrices stay on the shards (`store` is None): `ShardedIndex.capabilities` offers no term
    matrices, so what needs them (RM3, the floor, the page export) is refused before it starts.
    """

    def __init__(self, folder: Path, meta: dict[str, Any], fanout: Fanout):
        self.tokenizer_config = TokenizerConfig.from_dict(meta["tokenizer"])
        self.tokenizer = Tokenizer(self.tokenizer_config)
        self.params = BM25Params(**meta["bm25"])
        terms = StringColumn(folder, "vocab")
        self.vocabulary = Vocabulary(column=terms, ids=np.arange(len(terms), dtype=np.int64))  # id = sorted position
        self.df = np.load(folder / "df.npy", mmap_mode="r", allow_pickle=False)
        self.n_docs = self.n_scored = int(meta["collection"]["records"])
        self.avgdl = float(meta["collection"]["total_length"]) / self.n_docs if self.n_docs else 0.0
        self.store = None
        self.fanout = fanout
        if len(self.df) != len(terms):
            raise IndexFormatError(f"{folder}: {len(terms)} terms, {len(self.df)} document frequencies")

    def bm25_top_terms(self, terms: np.ndarray, k: int | None, id_rank: np.ndarray) -> Ranking:
        positions, scores = merged(self.fanout.ask("bm25_top", self.vocabulary.words(terms), k))
        return select_top(positions, scores, k, id_rank)

    def weighted(self, kind: str, terms: np.ndarray, factors: np.ndarray | None = None) -> np.ndarray:
        f = None if factors is None else [float(x) for x in factors]
        return gather(self.fanout.ask("weighted", kind, self.vocabulary.words(terms), f), self.n_docs)


# ---- the sharded index --------------------------------------------------------------------------
class ShardedIndex(Index):
    """An `Index` over shards (see the module docstring). `fanout` asks them in this process, or
    on Ray after `sidelight.index.ray_shards.serve_on_ray(index)`. Results carry `coverage`:
    (shards that answered, shards)."""

    def __init__(self, corpus: Corpus, lexical: FanoutLexical, root: Path, manifest: dict[str, Any],
                 dense: FanoutDense | None, graph: Graph, id_rank: np.ndarray, fanout: Fanout, assignment: np.ndarray):
        super().__init__(corpus, lexical, root, manifest, dense, graph, id_rank)
        self.fanout, self.assignment = fanout, assignment  # the shards, and the shard of each record
        self._pending: list[tuple[str, list[Any]]] = []  # (add, records) and (delete, ids), routed to the shards by `save`

    def watch(self) -> AbstractContextManager[Coverage | None]:
        """The `Coverage` of the queries answered inside the block (see `Index.watch`)."""
        return self.fanout.watch()

    def capabilities(self) -> frozenset[Capability]:
        """Scores from the shards (term statistics, and cosines with vectors) and the graph here; the
        term matrices, the record vectors and an ANN graph stay on the shards."""
        offered = {Capability.TERM_STATISTICS, Capability.GRAPH}
        if self.dense is not None:
            offered.add(Capability.DENSE)
            if self.dense.passages is not None:
                offered.add(Capability.PASSAGES)
        return frozenset(offered)

    def section_scores(self, query: str) -> np.ndarray:
        """Each record's best section BM25, scored on the shards (see `shard_passages`)."""
        return section_scores(self.fanout, self.lexical.tokenizer, query, len(self.corpus))

    def why_missing(self, capability: Capability) -> str:
        if capability is Capability.TERM_MATRICES:
            return ("each term-count and weight matrix stays on the shards of a sharded index; use a method that "
                    "needs only scores (bm25, tfidf, dense, rrf, hybrid-linear, bm25-sections, bm25+ppr, relation), "
                    "or an index built without --shards")
        if capability in (Capability.VECTORS, Capability.ANN) and self.dense is not None:
            return VECTORS_STAY
        return super().why_missing(capability)

    # -- open
    @classmethod
    def open_kind(cls, root: Path, generation: str, manifest: dict[str, Any], verify: bool) -> "ShardedIndex":
        """A sharded index's generation (what `Index.load` calls for its kind, see `register_kind`)."""
        path = root / generation
        try:
            c = manifest["corpus"]
            records = RecordFile(path)
            corpus = Corpus(c["name"], records, EdgeFile(path / "edges.jsonl", c["edges"]), c["title_weight"],
                            c.get("alias_weight", 0), checked=True)
            graph = Graph.load(path / "graph", mmap=True)
            id_rank = np.load(path / "id_rank.npy", mmap_mode="r", allow_pickle=False)
            assignment = np.load(path / "shard.npy", allow_pickle=False)
            pins = manifest["shards"]["generations"]
            ensure_open_files(len(pins))
            if len(assignment) != c["records"] or len(records) != c["records"] or assignment.max(initial=0) >= len(pins):
                raise IndexFormatError(f"{path}: the shard assignment does not fit {c['records']} records")
            servers = [ShardServer(root / SHARDS / str(s), gen, np.flatnonzero(assignment == s), verify=verify)
                       for s, gen in enumerate(pins)]
            fanout = Fanout(LocalShards(servers))
            lexical = FanoutLexical(path / "vocab", manifest["lexical"], fanout)
            dense = FanoutDense({**manifest["dense"], "records": c["records"]}, fanout) if "dense" in manifest else None
        except OSError as exc:
            raise IndexFormatError(f"{path}: cannot read the sharded index ({exc.strerror or exc})") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(f"{path}: sharded index contents do not fit its manifest ({exc})") from exc
        return cls(corpus, lexical, root, manifest, dense, graph, id_rank, fanout, assignment)

    # -- write
    @classmethod
    def write_sharded(cls, corpus: Corpus, path: Path, n_shards: int, tokenizer: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), dense: DenseStore | None = None, force: bool = False,
              progress: bool = True, builders: "Callable[..., Any] | None" = None,
              extra: dict[str, Any] | None = None) -> "ShardedIndex":
        """Build the sharded index of `corpus` at `path` and open it. `dense`: vectors of every
        record (in corpus order); `builders`: how shard builders are made and run (default: in this
        process; `ray_shards.ray_builders` on Ray); `extra`: manifest keys kept with the index
        (`KEPT_KEYS`: the source folder)."""
        if not isinstance(n_shards, int) or n_shards < 1:
            raise InputError(f"--shards must be a whole number >= 1, got {n_shards!r}")
        path = Path(path)
        store.check_destination(path, force)
        ensure_open_files(n_shards, "write")  # before the build: its check opens every shard
        assignment = shard_of(corpus.ids, n_shards)
        records = as_list(corpus.records)
        parts = []
        for s in range(n_shards):
            rows = np.flatnonzero(assignment == s)
            parts.append(([records[i] for i in rows], None if dense is None else dense_part(dense, rows)))
        make = builders or local_builders
        with writer_lock(path, create=True):
            _recover(path)
            shards = make(corpus, parts, tokenizer, params, progress)
            meta = {"tokenizer": tokenizer.to_dict(), "bm25": params.to_dict()}
            meta_dense = None if dense is None else dense_meta(dense)
            _publish(path, corpus, assignment, shards, meta, meta_dense, progress, extra)
        index = Index.load(path)
        if not isinstance(index, ShardedIndex):
            raise IndexFormatError(f"{path}: written as a sharded index, opened as another kind")
        return index

    # -- add / delete: routed to the owning shards when saved
    def add(self, records: list[Record], edges: Sequence[Edge] = ()) -> None:
        self.corpus = self._with(records, edges)
        self._pending.append(("add", list(records)))
        self._refresh()

    def delete(self, ids: list[str]) -> None:
        ids = list(dict.fromkeys(ids))  # an id given twice is deleted once
        self.corpus, _ = self._without(ids)
        self._pending.append(("delete", list(ids)))
        self._refresh()

    def replace(self, remove: Sequence[str], records: Sequence[Record], edges: Sequence[Edge]) -> None:
        """Drop `remove`, add `records`, make `edges` the whole edge set (`sidelight sync`): the records
        go to their shards when saved, each shard counting and encoding only its own new records."""
        self.corpus, _ = self._replacing(remove, records, edges)
        self._pending += [("delete", sorted(set(remove))), ("add", list(records))]
        self._refresh()

    def add_dense(self, spec: str = "minilm", batch_size: int = 32, threads: int = 2, progress: bool = True,
                  passages: Passages | None = None) -> None:
        """Encode every record here, as an index in one piece does (section windows by default for a
        folder's documents); `save` gives each shard the vectors and windows of its own records."""
        super().add_dense(spec, batch_size, threads, progress, passages)
        self._pending.append(("dense", []))

    def save(self, path: Path, force: bool = False) -> Path:
        """Write the pending adds, deletes and vectors: each routed to its shard, every shard rescoped."""
        path = Path(path)
        if self.path is None or path.resolve() != self.path.resolve():
            raise InputError("a sharded index is saved only in place (build a new one with `sidelight index --shards`)")
        encoded = (held_vectors(self.dense) if self.dense is not None and any(op == "dense" for op, _ in self._pending)
                   else None)  # `add_dense` encoded every record here
        if encoded is not None and len(encoded.vectors) != len(self.corpus):
            raise InputError("records were added after the vectors were encoded: encode them again (`sidelight dense`)")
        n = len(self.manifest["shards"]["generations"])
        with writer_lock(path):
            _recover(path)
            pins = self.manifest["shards"]["generations"]
            builders = []
            for s in range(n):
                index = Index.open_generation(path / SHARDS / str(s), pins[s], verify=True)
                for op, arg in self._pending:
                    if op == "add":
                        mine = [r for r, a in zip(arg, shard_of([r.id for r in arg], n)) if a == s]
                        if mine:
                            index.add(mine)
                    elif op == "delete":
                        mine = [i for i in arg if i in index.corpus.position]
                        if mine:
                            index.delete(mine)
                if encoded is not None:
                    rows = np.asarray([self.corpus.position[i] for i in index.corpus.ids], dtype=np.int64)
                    index.dense = dense_part(encoded, rows)
                builders.append(ShardBuilder.of_index(index))
            meta = {k: self.manifest["lexical"][k] for k in ("tokenizer", "bm25")}
            dense = dense_meta(encoded) if encoded is not None else self.manifest.get("dense")
            if dense is not None and "passages" in dense:  # adds and deletes change how many windows there are
                windows = sum(b.dense.window_count for b in builders if b.dense is not None)
                dense = {**dense, "passages": {**dense["passages"], "windows": windows}}
            _publish(path, self.corpus, shard_of(self.corpus.ids, n), builders, meta, dense, kept=self.manifest)
        if self._state is not None:
            self._state.close()
        self.__dict__.update(Index.load(path).__dict__)  # this object now answers from what it wrote
        return path


# ---- building and publishing --------------------------------------------------------------------------
def local_builders(corpus: Corpus, parts: Sequence[tuple[list[Record], DenseStore | None]],
                   tokenizer: TokenizerConfig, params: BM25Params, progress: bool) -> list[ShardBuilder]:
    """Count every shard in this process, one after another."""
    out = []
    with progress_bar(len(parts), f"counting {len(parts)} shards", progress) as advance:
        for records, dense in parts:
            out.append(ShardBuilder.count(corpus.name, records, corpus.title_weight, corpus.alias_weight,
                                          tokenizer, params, dense))
            advance(1)
    return out


def _call_all(builders: list[Any], name: str, args: list[tuple[Any, ...]], label: str, progress: bool) -> list[Any]:
    """`name(*args[i])` on every builder, with a progress bar; a Ray builder's answers are object
    refs, counted as they finish and fetched together."""
    with progress_bar(len(builders), label, progress) as advance:
        out = []
        for b, a in zip(builders, args):
            out.append(getattr(b, name)(*a))
            if type(out[-1]).__name__ != "ObjectRef":
                advance(1)
        if not out or type(out[0]).__name__ != "ObjectRef":
            return out
        import ray

        pending = list(out)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            advance(len(done))
        return ray.get(out)


def _publish(path: Path, corpus: Corpus, assignment: np.ndarray, builders: list[Any], lexical_meta: dict[str, Any],
             dense_meta: dict[str, Any] | None, progress: bool = False, kept: dict[str, Any] | None = None) -> None:
    """Merge the shards' statistics, rescope and save every shard, then publish the coordinator;
    `kept`: the manifest keys an index carries to its next generation (`KEPT_KEYS`)."""
    stats = _call_all(builders, "stats", [()] * len(builders), "shards counted", progress)
    vocab = sorted({t for terms, _, _, _ in stats for t in terms}, key=lambda t: t.encode("utf-8"))
    term_id = {t: i for i, t in enumerate(vocab)}
    df = np.zeros(len(vocab))
    for terms, own_df, _, _ in stats:
        np.add.at(df, np.fromiter(map(term_id.__getitem__, terms), dtype=np.int64, count=len(terms)), own_df)
    n_docs = sum(int(s[2]) for s in stats)
    total = float(sum(s[3] for s in stats))
    if n_docs != len(corpus):
        raise IndexFormatError(f"{path}: the shards hold {n_docs} records, the corpus {len(corpus)}")
    args = [(df[np.fromiter(map(term_id.__getitem__, terms), dtype=np.int64, count=len(terms))], n_docs, total,
             str(path / SHARDS / str(s))) for s, (terms, _, _, _) in enumerate(stats)]
    pins = _call_all(builders, "finish", args, f"writing {len(builders)} shards", progress)
    graph = Graph.from_corpus(corpus)
    with store.new_generation(path, check=lambda name: Index.open_generation(path, name, False)) as tmp:
        content = hashlib.sha256()
        write_records(tmp, corpus.records, content)
        write_edges(tmp, corpus.edges)
        np.save(tmp / "id_rank.npy", id_rank_of(corpus.ids), allow_pickle=False)
        np.save(tmp / "shard.npy", np.asarray(assignment, dtype=np.int32), allow_pickle=False)
        (tmp / "vocab").mkdir()
        write_vocab(tmp / "vocab", vocab)
        np.save(tmp / "vocab" / "df.npy", df, allow_pickle=False)
        graph.save(tmp / "graph")
        manifest = {
            "kind": KIND,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "corpus": {"name": corpus.name, "hash": corpus.content_hash(content), "records": len(corpus),
                       "edges": len(corpus.edges), "title_weight": corpus.title_weight,
                       "alias_weight": corpus.alias_weight},
            "shards": {"count": len(builders), "key": "blake2b-8(id) mod count", "generations": pins,
                       "records": np.bincount(assignment, minlength=len(builders)).tolist()},
            "lexical": {**lexical_meta, "terms": len(vocab),
                        "collection": {"records": n_docs, "total_length": total}},
            "graph": {"nodes": graph.n_nodes, "edges": graph.n_edges, "types": graph.type_names},
        }
        if dense_meta is not None:
            manifest["dense"] = dense_meta
        manifest.update({k: v for k, v in (kept or {}).items() if k in KEPT_KEYS})
        store.write_manifest(tmp, manifest)


def _recover(path: Path) -> None:
    """A writer's first step: clean the coordinator, and set each shard's pointer back to its pin."""
    for line in store.recover(path):
        print(f"sidelight: {path}: {line}", file=sys.stderr)
    try:
        manifest = store.read_manifest(store.data_folder(path), verify=False)
    except IndexFormatError:
        return
    for s, gen in enumerate(manifest.get("shards", {}).get("generations", [])):
        shard = path / SHARDS / str(s)
        if (shard / gen).is_dir() and store.current_generation(shard) != gen:
            store.publish(shard, gen)
            print(f"sidelight: {shard}: set back to {gen}, the generation its index pins", file=sys.stderr)


register_kind(KIND, ShardedIndex.open_kind)
