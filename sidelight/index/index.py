"""The index: a corpus plus every structure its lanes need, saved as one folder."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
import tempfile
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
    TypeVar,
    cast,
)

import numpy as np

from ..corpus.model import Corpus, Edge, Record
from ..corpus.passages import has_sections, window_texts
from ..errors import IndexFormatError, InputError
from ..feedback.state import StateStore
from ..graph import ppr_kernel
from ..graph.ppr import PPRGraph
from ..graph.store import Graph
from ..capabilities import Capability
from ..progress import progress_bar
from ..results import Hit, Results, Run
from ..store.lock import writer_lock
from ..store.sqlite import ReadOnlyStateError, copy_read_only
from ..structures import kernels
from ..structures.blocks import build_lexical_folder
from ..structures.dense import DenseStore, Passages, Units, held_vectors
from ..structures.dense_query import DenseScorer
from ..structures.lexical import LexicalIndex, TermScorer
from ..structures.lexical_store import BM25Params
from ..structures.ranking import Ranking
from ..text import TokenizerConfig
from . import folderstate, store
from .records import EdgeFile, RecordFile, as_list, write_edges, write_records

if TYPE_CHECKING:
    from ..lanes.channels import ChannelsResult
    from ..methods import Method
    from .shards import Coverage

STATE_FILE = "state.sqlite"  # INDEX/state.sqlite: mutable, beside the generations, never moved
T = TypeVar("T")
Where = Mapping[str, "str | Sequence[str]"]  # a metadata filter: key -> value, or any of several values
NEEDS_VECTORS = frozenset({Capability.ANN, Capability.PASSAGES})  # built only beside dense vectors
LOAD_ATTEMPTS = 3  # re-reads of the pointer when a writer publishes during an open

Opener = Callable[[Path, str, dict[str, Any], bool], "Index"]
_KINDS: dict[str, Opener] = {}  # manifest "kind" -> how to open it (an index in one piece has no kind)


def register_kind(kind: str, opener: Opener) -> None:
    """Let `Index.load` open index folders whose manifest names `kind` (`sidelight.index` registers
    "sharded" on import), so that this module need not import the kinds built on top of it."""
    _KINDS[kind] = opener


def dense_texts(corpus: Corpus, records: Iterable[Record], passages: Passages | None = None) -> tuple[list[str], list[str], Units | None]:
    """(the texts the embedder encodes, the titles put before further windows, and with
    `passages.sections` each record's section windows (`corpus.passages.window_texts`)) of `records`."""
    records = list(records)
    units = [window_texts(r) for r in records] if passages is not None and passages.sections else None
    return [corpus.indexed_text(r) for r in records], [r.title for r in records], units


def section_passages(corpus: Corpus, stride: int = 64) -> Passages | None:
    """Section windows (`Passages(sections=True)`) for a corpus whose records have sections of
    their own (a folder of documents), else None."""
    return Passages(stride, sections=True) if any(has_sections(r) for r in corpus.records) else None


class Index:
    """Records, edges, the lexical index, the graph and (when built) dense vectors.

    Graph component: `graph` is a `Graph` over record positions built from `corpus.edges` (at
    build time, and again after every add/delete); a saved index keeps it under
    `INDEX/gen-N/graph/` and loads it memory-mapped. `ppr_graph` is the PPR walk over its undirected projection,
    built on first use.

    `state` is the mutable `StateStore` (traces, successes, learned edge-weight overlay): for a
    saved index `INDEX/state.sqlite` (beside the generations, never moved by a rewrite); for an
    index that was never saved, a private temporary file that is deleted with the Index object.
    Saving an unsaved index copies that temporary state into the new folder unless the folder
    already has a state of its own (then the folder's state wins).
    """

    def __init__(self, corpus: Corpus, lexical: TermScorer, path: Path | None = None,
                 manifest: dict[str, Any] | None = None, dense: DenseScorer | None = None, graph: Graph | None = None,
                 id_rank: np.ndarray | None = None):
        self.corpus = corpus
        self.lexical = lexical  # an index in one piece: a `LexicalIndex` (its store, add, delete, save)
        self.dense = dense
        self.path = Path(path) if path else None
        self.manifest = manifest or {}
        self._state: StateStore | None = None
        self._state_is_temp = False
        self.state_note: str | None = None  # set when the folder is read-only and state lives in a temporary copy
        self.stamp = store.generation_stamp(self.path) if self.path else None  # see `changed_on_disk`
        self._refresh(graph, id_rank)

    def _refresh(self, graph: Graph | None = None, id_rank: np.ndarray | None = None) -> None:
        self._ids: np.ndarray | None = None
        self._id_column: Sequence[str] | None = getattr(self.corpus.records, "ids", None)
        self._titles: Sequence[str] | None = getattr(self.corpus.records, "titles", None)
        # position of each record in ascending-id order (an opened index stores it)
        self.id_rank = id_rank if id_rank is not None else id_rank_of(self.corpus.ids)
        self.graph = graph if graph is not None else Graph.from_corpus(self.corpus)
        self._ppr_graph: PPRGraph | None = None
        self._memo: dict[str, tuple[Hashable, Any]] = {}
        # what a folder index keeps of each file (`index.folderstate`), written with the next generation;
        # dropped by every change of the records (a sync sets it again after its change)
        self.folder_state: dict[str, list[Any]] | None = None

    def lexical_index(self) -> LexicalIndex:
        """The lexical index held here, which `add`, `delete` and `save` write (an index in one piece;
        a sharded index's lexical part asks its shards, and its writes go to them)."""
        if not isinstance(self.lexical, LexicalIndex):
            raise InputError("the lexical part of this index is written by its shards, not here")
        return self.lexical

    @property
    def ids(self) -> np.ndarray:
        """Record ids by position (an object array, built on first use)."""
        if self._ids is None:
            self._ids = np.asarray(self.corpus.ids, dtype=object)
        return self._ids

    @property
    def titles(self) -> Sequence[str]:
        """Record titles by position (an opened index reads them from a column, one at a time)."""
        if self._titles is None:
            self._titles = [r.title for r in self.corpus.records]
        return self._titles

    def memo(self, name: str, key: Hashable, build: Callable[[], T]) -> T:
        """Derived data kept with this index: one value per `name`, rebuilt when `key` changes.

        The one cache of an index (methods and lanes keep nothing of their own on it): everything
        here is dropped when records are added or deleted, so no cache outlives the data it came from.
        """
        hit = self._memo.get(name)
        if hit is not None and hit[0] == key:
            return cast(T, hit[1])  # stored by this method under `name` with the same `build`
        value = build()
        self._memo[name] = (key, value)
        return value

    def changed_on_disk(self) -> bool:
        """True when a writer has published a newer generation of this saved index since it was opened."""
        return self.path is not None and store.generation_stamp(self.path) != self.stamp

    # ---- capabilities -----------------------------------------------------------------------
    def capabilities(self) -> frozenset[Capability]:
        """What this index offers methods (`sidelight.capabilities`): term statistics, the
        term matrices and the graph always; vectors, ANN and passages as built."""
        offered = {Capability.TERM_STATISTICS, Capability.TERM_MATRICES, Capability.GRAPH}
        if self.dense is not None:
            offered |= {Capability.DENSE, Capability.VECTORS}
            # read leniently: a stand-in dense store (a test's, a notebook's) need not carry either
            if getattr(self.dense, "ann_params", None) is not None:
                offered.add(Capability.ANN)
            if getattr(self.dense, "passages", None) is not None:
                offered.add(Capability.PASSAGES)
        return frozenset(offered)

    def why_missing(self, capability: Capability) -> str:
        """Why this index lacks `capability`, and how to build one that has it."""
        if capability in (Capability.DENSE, Capability.VECTORS) or (capability in NEEDS_VECTORS and self.dense is None):
            return "this index has no dense vectors; rebuild it with `sidelight index SOURCE --dense minilm`"
        if capability is Capability.ANN:
            return ("this index has no ANN graph for `dense-ann`; rebuild it with "
                    "`sidelight index SOURCE --dense minilm --ann` (or use the exact `dense` method)")
        if capability is Capability.PASSAGES:
            return "this index keeps no passages; rebuild it with `sidelight index SOURCE --dense minilm --passages`"
        return f"this index does not offer {capability.value}"

    # ---- graph and state ------------------------------------------------------------------
    @property
    def ppr_graph(self) -> PPRGraph:
        """Carrier's walk: `PPRGraph` over the undirected projection of `graph` (built once)."""
        if self._ppr_graph is None:
            self._ppr_graph = PPRGraph(self.graph.undirected())
        return self._ppr_graph

    @property
    def state(self) -> StateStore:
        """Traces, feedback and the weight overlay (see the class docstring for where it lives)."""
        if self._state is None:
            if self.path is not None:
                try:
                    self._state, self._state_is_temp = StateStore(self.path / STATE_FILE), False
                except ReadOnlyStateError as exc:  # searches go on, from a temporary copy, labelled
                    tmp = Path(tempfile.mkdtemp(prefix="sidelight-state-"))
                    copy_read_only(self.path / STATE_FILE, tmp / "state.sqlite")
                    self._state, self._state_is_temp = StateStore(tmp / "state.sqlite"), True
                    self.state_note = (f"{exc}; this answer's traces are kept only by this process and "
                                       f"feedback is refused")
                    weakref.finalize(self, _drop_temp_state, self._state, tmp)
            else:
                tmp = Path(tempfile.mkdtemp(prefix="sidelight-state-"))
                self._state, self._state_is_temp = StateStore(tmp / "state.sqlite"), True
                weakref.finalize(self, _drop_temp_state, self._state, tmp)
        return self._state

    def search_channels(self, query: str, limit: int = 10, **params: Any) -> "ChannelsResult":
        """Independent lexical / relation (/ dense) lanes with their own trace ids; see `sidelight.lanes.channels`.
        A sharded index's answer carries its `coverage` (see `watch`)."""
        from ..lanes.channels import search_channels

        with self.watch() as cov:
            out = search_channels(self, query, limit, **params)
        return out if cov is None else replace(out, coverage=cov.pair)

    def watch(self) -> AbstractContextManager["Coverage | None"]:
        """A context whose value is the `Coverage` of the queries answered inside it: how many
        shards of a sharded index answered; None for an index in one piece."""
        return nullcontext()

    # ---- build / save / load --------------------------------------------------------------
    @classmethod
    def build(cls, corpus: Corpus, tokenizer: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), progress: bool = True) -> "Index":
        texts = [corpus.indexed_text(r) for r in corpus.records]
        with progress_bar(len(texts), f"indexing {corpus.name}", progress) as advance:
            lexical = LexicalIndex.build(texts, tokenizer, params, advance)
        return cls(corpus, lexical)

    @classmethod
    def write(cls, corpus: Corpus, path: Path, tokenizer: TokenizerConfig = TokenizerConfig(),
              params: BM25Params = BM25Params(), dense: DenseStore | None = None, force: bool = False,
              progress: bool = True, extra: dict[str, Any] | None = None) -> "Index":
        """Build the index of `corpus` straight into a new generation at `path`, and open it.

        The folder is the one `build(corpus, ...).save(path)` writes, file for file, but the postings
        are counted and weighed in blocks (`sidelight.structures.blocks`), so memory grows with one
        block and the vocabulary, not with the corpus. `dense`: vectors to store with it; `extra`:
        manifest keys kept with the index (`KEPT_KEYS`: where it came from, its default method).
        """
        lexical = _LexicalFolder(corpus, tokenizer, params, progress)
        cls(corpus, lexical, dense=dense, manifest=dict(extra or {})).save(path, force)  # type: ignore[arg-type]
        return cls.load(path)

    def add_dense(self, spec: str = "minilm", batch_size: int = 32, threads: int = 2, progress: bool = True,
                  passages: Passages | None = None) -> None:
        """Encode every record with a local embedding model (see `sidelight.models`); with
        `passages`, long records' further windows too (MaxP, see `structures.dense`). Records with
        sections of their own (a folder's documents) get section windows by default."""
        passages = passages or section_passages(self.corpus)
        texts, titles, units = dense_texts(self.corpus, self.corpus.records, passages)
        self.dense = DenseStore.build(texts, spec, batch_size, threads, progress, passages, titles, units)

    def save(self, path: Path, force: bool = False) -> Path:
        """Write the index to `path` as a new generation, published atomically (see `index.store`).

        `path` must be missing, an empty folder or a sidelight index; `force` allows any folder
        (nothing of what it holds is removed). Holds the folder's writer lock throughout.
        """
        path = Path(path)
        store.check_destination(path, force)
        with writer_lock(path, create=True):
            for line in store.recover(path):
                print(f"sidelight: {path}: {line}", file=sys.stderr)
            state, temp_state = self._state, self._state_is_temp
            if state is not None and temp_state and not (path / STATE_FILE).exists():
                with sqlite3.connect(path / STATE_FILE) as dst:  # carry traces/overlay of an unsaved index
                    state._con().backup(dst)
                dst.close()
            with store.new_generation(path, check=lambda name: Index.open_generation(path, name, False)) as tmp:
                self._write_generation(tmp)
        if self._state is not None and self._state.path != path / STATE_FILE:
            self._state.close()  # a temporary state (or another folder's) gives way to this folder's
            self._state = None
        self.path = path
        self.stamp = store.generation_stamp(path)
        return path

    def _write_generation(self, tmp: Path) -> None:
        kept = {k: self.manifest[k] for k in KEPT_KEYS if k in (self.manifest or {})}  # carried to every generation
        content = hashlib.sha256()
        # the records (Python) are written while the lexical build runs its compiled kernels, which
        # release the GIL: separate files, so the folder is the same as one after the other
        with ThreadPoolExecutor(1) as pool:
            state = self.folder_state if self.folder_state is not None else _folder_state_of(self.corpus)
            records = pool.submit(write_records, tmp, self.corpus.records, content, state is not None)
            writer = self.lexical if isinstance(self.lexical, _LexicalFolder) else self.lexical_index()
            lexical = writer.save(tmp / "lexical")
            records.result()
        write_edges(tmp, self.corpus.edges)
        if state is not None:
            folderstate.save(tmp, state)
        np.save(tmp / "id_rank.npy", np.asarray(self.id_rank, dtype=np.int64), allow_pickle=False)
        dense = held_vectors(self.dense).save(tmp / "dense") if self.dense is not None else None
        self.graph.save(tmp / "graph")
        self.manifest = {
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "corpus": {"name": self.corpus.name, "hash": self.corpus.content_hash(content),
                       "records": len(self.corpus), "edges": len(self.corpus.edges),
                       "title_weight": self.corpus.title_weight, "alias_weight": self.corpus.alias_weight},
            "lexical": lexical,
            "graph": {"nodes": self.graph.n_nodes, "edges": self.graph.n_edges,
                      "types": self.graph.type_names},
        }
        if dense is not None:
            self.manifest["dense"] = dense
        self.manifest.update(kept)
        store.write_manifest(tmp, self.manifest)

    @classmethod
    @contextmanager
    def edit(cls, path: Path) -> Iterator["Index"]:
        """Load, change and save the index at `path` under its writer lock (read-modify-write).

        `with Index.edit(path) as index: index.add(records)`: no other writer can slip in
        between the load and the save; nothing is saved when the block raises.
        """
        path = Path(path)
        if not (path / store.POINTER).is_file():
            store.current_generation(path)  # a clear error for a folder that is not an index
        with writer_lock(path):
            for line in store.recover(path):  # e.g. a torn pointer, rolled forward to the newest whole generation
                print(f"sidelight: {path}: {line}", file=sys.stderr)
            index = cls.load(path, verify=True)
            yield index
            index.save(path)

    @classmethod
    def load(cls, path: Path, verify: bool = False) -> "Index":
        """Open the current generation; a corrupt, partial or foreign folder is a clear IndexFormatError.

        Opening memory-maps and parses nothing in bulk; it checks every file's size and head hash.
        `verify` re-hashes every file in full (writers do; so does `sidelight check`).
        """
        path = Path(path)
        if not path.is_dir():
            raise IndexFormatError(f"{path} is not a sidelight index (no such folder)" if not path.exists()
                                   else f"{path} is not a sidelight index (it is a file)")
        for _ in range(LOAD_ATTEMPTS):
            stamp = store.generation_stamp(path)
            generation = store.current_generation(path)
            try:
                index = cls.open_generation(path, generation, verify)
            except IndexFormatError:
                if store.current_generation(path) == generation:
                    raise
                continue  # a writer published (and pruned) while we read: open the new one
            index.stamp = stamp
            return index
        raise IndexFormatError(f"{path}: the index changed {LOAD_ATTEMPTS} times while it was being opened")

    @classmethod
    def open_generation(cls, root: Path, generation: str, verify: bool) -> "Index":
        """One generation of the index folder `root`, opened by the kind its manifest names (an index
        in one piece, or one of the kinds registered with `register_kind`, such as "sharded")."""
        path = root / generation
        manifest = store.read_manifest(path, verify=verify)
        kind = manifest.get("kind")
        if kind is not None:
            opener = _KINDS.get(kind)
            if opener is None:
                raise IndexFormatError(f"{path}: an index of kind {kind!r}, which this version cannot open")
            return opener(root, generation, manifest, verify)
        try:
            c = manifest["corpus"]
            records = RecordFile(path)
            if len(records) != c["records"]:
                raise IndexFormatError(f"{path}: {len(records)} records, its manifest says {c['records']}")
            corpus = Corpus(c["name"], records, EdgeFile(path / "edges.jsonl", c["edges"]), c["title_weight"],
                            c.get("alias_weight", 0), checked=True)
            lexical = LexicalIndex.load(path / "lexical", manifest["lexical"], len(records))
            dense = DenseStore.load(path / "dense", len(records)) if "dense" in manifest else None
            graph = Graph.load(path / "graph", mmap=True)
            if graph.n_nodes != len(records) or graph.n_edges != c["edges"]:
                raise IndexFormatError(f"{path}: graph has {graph.n_nodes} nodes / {graph.n_edges} edges "
                                       f"for {len(records)} records / {c['edges']} edges")
            id_rank = np.load(path / "id_rank.npy", mmap_mode="r", allow_pickle=False)
            if id_rank.shape != (len(records),):
                raise IndexFormatError(f"{path}: id_rank.npy does not fit {len(records)} records")
        except OSError as exc:
            raise IndexFormatError(f"{path}: cannot read the index ({exc.strerror or exc})") from exc
        except (KeyError, TypeError, ValueError, InputError) as exc:
            raise IndexFormatError(f"{path}: index contents do not fit its manifest ({exc})") from exc
        return cls(corpus, lexical, root, manifest, dense, graph, id_rank)

    # ---- incremental updates ----------------------------------------------------------------
    def add(self, records: list[Record], edges: Sequence[Edge] = ()) -> None:
        """Add records (and edges among known records); BM25 statistics stay exact."""
        corpus = self._with(records, edges)
        texts, titles, units = dense_texts(corpus, records, self.dense.passages if self.dense is not None else None)
        if self.dense is not None:
            held_vectors(self.dense).add(texts, titles=titles, units=units)
        self.lexical_index().add(texts)
        self.corpus = corpus
        self._refresh()

    def delete(self, ids: list[str]) -> None:
        """Delete records by id, with every edge that touches them (an id given twice is deleted once)."""
        ids = list(dict.fromkeys(ids))
        corpus, positions = self._without(ids)
        self.lexical_index().delete(positions)
        if self.dense is not None:
            held_vectors(self.dense).delete(positions)
        self.corpus = corpus
        self._refresh()

    def replace(self, remove: Sequence[str], records: Sequence[Record], edges: Sequence[Edge]) -> None:
        """Drop the records `remove`, add `records` and make `edges` the whole edge set: a folder's
        changed documents (`sidelight sync`), or `add --replace`.

        BM25 statistics stay exact and only the new records are counted and encoded; every other
        record keeps its vectors. Records and edges are those a fresh build of the same folder has
        (in another order, which no ranking sees: ties break by id)."""
        corpus, positions = self._replacing(remove, records, edges)
        texts, titles, units = dense_texts(corpus, records, self.dense.passages if self.dense is not None else None)
        if len(positions):
            self.lexical_index().delete(positions)
        if records:
            self.lexical_index().add(texts)
        if self.dense is not None:
            if len(positions):
                held_vectors(self.dense).delete(positions)
            if records:
                held_vectors(self.dense).add(texts, titles=titles, units=units)
        self.corpus = corpus
        self._refresh()

    def _replacing(self, remove: Sequence[str], records: Sequence[Record], edges: Sequence[Edge]) -> tuple[Corpus, np.ndarray]:
        """The corpus without `remove`, with `records` appended and `edges` as its edge set, and the
        positions removed (an unknown id is an InputError)."""
        gone, pos = set(remove), self.corpus.position
        unknown = sorted(i for i in gone if i not in pos)
        if unknown:
            raise InputError(f"cannot replace: unknown record id {unknown[0]!r}")
        corpus = Corpus(self.corpus.name, [r for r in self.corpus.records if r.id not in gone] + list(records),
                        list(edges), self.corpus.title_weight, self.corpus.alias_weight)  # ids unique, edges known
        return corpus, np.asarray(sorted(pos[i] for i in gone), dtype=np.int64)

    def _with(self, records: list[Record], edges: Sequence[Edge]) -> Corpus:
        """The corpus with `records` and `edges` appended (a known id is an InputError)."""
        known = set(self.corpus.ids)
        dup = [r.id for r in records if r.id in known]
        if dup:
            raise InputError(f"cannot add: record id {dup[0]!r} is already in the index")
        return Corpus(self.corpus.name, as_list(self.corpus.records) + list(records),
                      as_list(self.corpus.edges) + list(edges), self.corpus.title_weight, self.corpus.alias_weight)

    def _without(self, ids: list[str]) -> tuple[Corpus, np.ndarray]:
        """The corpus without records `ids` and their edges, and their positions (an unknown id is an InputError)."""
        pos = self.corpus.position
        unknown = [i for i in ids if i not in pos]
        if unknown:
            raise InputError(f"cannot delete: unknown record id {unknown[0]!r}")
        gone = set(ids)
        corpus = Corpus(self.corpus.name, [r for r in self.corpus.records if r.id not in gone],
                        [e for e in self.corpus.edges if e.source not in gone and e.target not in gone],
                        self.corpus.title_weight, self.corpus.alias_weight)
        return corpus, np.asarray([pos[i] for i in ids], dtype=np.int64)

    # ---- search -------------------------------------------------------------------------------
    def search(self, query: str, method: str = "bm25", k: int = 10, where: Where | None = None,
               **params: Any) -> Results:
        """Top-k hits of a named method (see `sidelight methods`; `params` are its declared parameters).

        `where` keeps only records whose metadata matches: {key: value} (exact, compared as text)
        or {key: (value, value, ...)} (any of them); every method ranks the same way under it.
        """
        from ..methods import get_method

        return self._answer(get_method(method, **params), query, k, where, method)

    def _answer(self, method: "Method", query: str, k: int | None, where: Where | None, name: str) -> Results:
        with self.watch() as cov:
            hits = self.hits(self.rank(method, query, k, where))
        return Results(hits, query, name, coverage=cov.pair if cov is not None else None)

    def rank(self, method: "Method", query: str, k: int | None, where: Where | None = None) -> Ranking:
        """`method.rank(self, query, k)`, restricted to the records `where` admits (see `search`)."""
        if not where:
            return method.rank(self, query, k)
        keep = self.metadata_mask(where)
        r = method.rank(self, query, None)  # every candidate, then the filter, then the cut
        sel = keep[r.positions]
        positions, scores = r.positions[sel], r.scores[sel]
        return Ranking(positions[:k], scores[:k]) if k is not None else Ranking(positions, scores)

    def metadata_mask(self, where: Where) -> np.ndarray:
        """True for each record whose metadata matches every key of `where` (kept in `memo`)."""
        items = tuple(sorted((str(key), (value,) if isinstance(value, str) else tuple(map(str, value)))
                             for key, value in where.items()))

        def build() -> np.ndarray:
            return np.fromiter((all(str(r.metadata.get(key)) in values for key, values in items)
                                for r in self.corpus.records), dtype=bool, count=len(self.corpus))

        return self.memo(f"where {items}", None, build)

    def search_many(self, queries: Mapping[str, str] | Sequence[str], k: int = 10, method: "str | Method" = "bm25",
                    progress: bool = False, where: Where | None = None, threads: int = 1, **params: Any) -> Run:
        """Top-k hits of one method for many queries, as a `Run` keyed by query id.

        `queries`: {query id: text}, or a list of texts (ids "0", "1", ...); `method`: a name (with
        `params`) or a `Method`. It is resolved once, and a dense method's queries are encoded in
        batches; every query's hits equal `search`'s. `threads` > 1 ranks queries in that many
        threads (the numba kernels and numpy's large array operations release the GIL); the Run is
        the same whatever the number of threads.
        """
        from ..methods import get_method

        if threads < 1:
            raise InputError(f"threads must be >= 1, got {threads}")
        if not isinstance(queries, Mapping):
            queries = {str(i): q for i, q in enumerate(queries)}
        m = get_method(method, **params) if isinstance(method, str) else method
        needs_dense = self.dense is not None and Capability.DENSE in m.needs
        if len(queries) > kernels.WARM_AFTER:
            warm_kernels()

        def one(text: str) -> Results:
            return self._answer(m, text, k, where, m.name)

        with (self.dense.batched_queries(list(queries.values())) if needs_dense and self.dense is not None
              else nullcontext()), \
                progress_bar(len(queries), f"{m.name} queries", progress) as advance, \
                (ThreadPoolExecutor(threads, thread_name_prefix="sidelight-search") if threads > 1
                 else nullcontext()) as pool:
            answers = pool.map(one, queries.values()) if pool is not None else map(one, queries.values())
            out = {}
            for qid, res in zip(queries, answers):
                out[qid] = res
                advance(1)
        return Run(out, m.name, name=m.name)

    def lookup(self, description: str, k: int = 10, method: str | None = None, pos: str | None = None,
               prior: float | None = None, views: Any = None, **params: Any) -> Results:
        """Words for a description (a reverse dictionary; `method`/`prior`/`views` None: the lookup defaults;
        see `sidelight.index.lookup`)."""
        from .lookup import lookup

        return lookup(self, description, k, method, pos, prior=prior, views=views, **params)

    def results(self, ranking: Ranking, query: str = "", method: str = "") -> Results:
        """A `Ranking` (positions, scores) as `Results` with ids, ranks and titles."""
        return Results(self.hits(ranking), query, method)

    def hits(self, ranking: Ranking, evidence: Sequence[Mapping[str, Any]] | None = None) -> list[Hit]:
        """`Hit`s of a `Ranking`, best first; `evidence[i]` is attached to the i-th hit when given."""
        ids, titles = self._id_column if self._id_column is not None else self.ids, self.titles
        return [Hit(ids[p], i + 1, float(s), titles[p], evidence[i] if evidence is not None else {})
                for i, (p, s) in enumerate(zip(ranking.positions, ranking.scores))]


class _LexicalFolder:
    """A lexical index still to be built: its `save` builds it in blocks, straight into the folder."""

    def __init__(self, corpus: Corpus, tokenizer: TokenizerConfig, params: BM25Params, progress: bool):
        self.corpus, self.tokenizer, self.params, self.progress = corpus, tokenizer, params, progress

    def save(self, folder: Path) -> dict[str, Any]:
        texts = (self.corpus.indexed_text(r) for r in self.corpus.records)
        with progress_bar(len(self.corpus), f"indexing {self.corpus.name}", self.progress) as advance:
            return build_lexical_folder(texts, folder, self.tokenizer, self.params, advance)


#: manifest keys a new generation carries over: the source folder (`sidelight index FOLDER`) and the
#: default method (`sidelight lab auto`)
KEPT_KEYS = ("source", "default")


def folder_source(folder: Path, exclude: Sequence[str] = ()) -> dict[str, Any]:
    """The manifest entry naming the folder an index was read from (`sync` and `lab auto` read it)."""
    return {"source": {"folder": str(Path(folder).resolve()), "exclude": list(exclude)}}


def warm_kernels() -> None:
    """Load (or compile) the optional numba kernels now, so batch work and servers take them from the
    first query on; a one-off query does not wait for them (see `sidelight.structures.kernels.Gate`)."""
    kernels.enabled()
    ppr_kernel.enabled()


def _folder_state_of(corpus: Corpus) -> dict[str, list[Any]] | None:
    """The folder state (`index.folderstate`) of a corpus just read from a folder, else None."""
    stats, report = getattr(corpus, "file_stats", None), getattr(corpus, "report", None)
    if not stats or report is None:
        return None
    return folderstate.build(corpus.records, stats, report.unresolved)


def _drop_temp_state(state: StateStore, folder: Path) -> None:
    state.close()
    shutil.rmtree(folder, ignore_errors=True)


def id_rank_of(ids: Sequence[str]) -> np.ndarray:
    """rank[p]: where record p falls in ascending-id order (the tie-break of every ranking)."""
    order = sorted(range(len(ids)), key=ids.__getitem__)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    return rank
