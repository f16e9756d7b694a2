"""A directed, typed, weighted graph over record positions, stored as CSR.

Node `i` is the record at corpus position `i`. Every stored edge keeps its original index
(`edge_ids[slot]` = index into `corpus.edges` or into the arrays given to `from_arrays`), so a
CSR slot can always be traced back to the authored edge. Base weights are immutable: every
array is read-only after construction; learned changes live in an overlay (`state.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

from ..corpus.model import MAX_EDGE_WEIGHT, Corpus
from ..errors import IndexFormatError, InputError

FORMAT = "sidelight-graph/1"
_ARRAYS = ("indptr", "indices", "weights", "types", "edge_ids")


@dataclass(frozen=True)
class EdgeRef:
    """One stored edge as seen by a lane: positions, type name and the weight that was used.

    `edge_id` is the original edge index (corpus order); `slot` the CSR slot it occupies.
    """

    edge_id: int
    source: int
    target: int
    type: str
    weight: float
    slot: int = -1


@dataclass(frozen=True)
class OutEdges:
    """The out-edges of one node, parallel arrays in CSR order (target asc, then type, then edge id)."""

    slots: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    types: np.ndarray
    edge_ids: np.ndarray

    def __len__(self) -> int:
        return len(self.slots)


def _frozen(a: np.ndarray) -> np.ndarray:
    if a.flags.writeable:
        a.flags.writeable = False
    return a


class Graph:
    """CSR over node positions 0..n-1; slot k runs from `sources[k]` to `indices[k]`."""

    def __init__(self, n_nodes: int, indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray,
                 types: np.ndarray, type_names: Sequence[str], edge_ids: np.ndarray) -> None:
        self._n = int(n_nodes)
        self.indptr = _frozen(indptr)
        self.indices = _frozen(indices)
        self.weights = _frozen(weights)
        self.types = _frozen(types)
        self.type_names: list[str] = list(type_names)
        self.edge_ids = _frozen(edge_ids)
        self._undirected: sp.csr_matrix | None = None
        self._sources: np.ndarray | None = None
        self._check()

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_arrays(cls, n: int, src, dst, weights=None, types=None,
                    type_names: Sequence[str] | None = None) -> "Graph":
        """Build from parallel edge arrays; edge `k` of the input keeps `edge_id == k`.

        `types` is either a sequence of type names (strings; codes assigned in sorted-name order)
        or integer codes into `type_names`. Missing weights mean 1.0, missing types mean "link".
        Weights must be finite and >= 0. Self loops and repeated edges are stored as given.
        """
        n = int(n)
        if n < 0:
            raise InputError(f"graph: negative node count {n}")
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        m = len(src)
        if len(dst) != m:
            raise InputError(f"graph: {m} sources but {len(dst)} targets")
        w = np.ones(m, dtype=np.float64) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
        if len(w) != m:
            raise InputError(f"graph: {m} edges but {len(w)} weights")
        if m and (src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n):
            raise InputError(f"graph: edge endpoint outside 0..{n - 1}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w > MAX_EDGE_WEIGHT):
            raise InputError(f"graph: edge weights must be finite, >= 0 and at most {MAX_EDGE_WEIGHT:g}")
        if types is None:
            names = list(type_names) if type_names is not None else ["link"]
            codes = np.zeros(m, dtype=np.int32)
        else:
            t = np.asarray(types).reshape(-1)
            if len(t) != m:
                raise InputError(f"graph: {m} edges but {len(t)} types")
            if t.dtype.kind in "USO":
                labels = [str(x) for x in t]
                names = sorted(set(labels)) if type_names is None else list(type_names)
                lookup = {name: i for i, name in enumerate(names)}
                try:
                    codes = np.fromiter((lookup[x] for x in labels), dtype=np.int32, count=m)
                except KeyError as exc:
                    raise InputError(f"graph: edge type {exc.args[0]!r} not in type_names") from None
            else:
                codes = t.astype(np.int32)
                names = list(type_names) if type_names is not None else [
                    f"type{i}" for i in range(int(codes.max()) + 1 if m else 0)]
                if m and (codes.min() < 0 or codes.max() >= len(names)):
                    raise InputError("graph: type code outside type_names")
        if len(set(names)) != len(names):
            raise InputError("graph: duplicate type names")
        order = np.lexsort((np.arange(m), codes, dst, src))  # by source, target, type, original index
        counts = np.bincount(src, minlength=n) if m else np.zeros(n, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(n, indptr, dst[order].copy(), w[order].copy(), codes[order].copy(), names,
                   order.astype(np.int64))

    @classmethod
    def from_corpus(cls, corpus: Corpus) -> "Graph":
        """Edges of `corpus` over `corpus.position`; edge_id = index in `corpus.edges`."""
        pos = corpus.position
        src = [pos[e.source] for e in corpus.edges]
        dst = [pos[e.target] for e in corpus.edges]
        return cls.from_arrays(len(corpus), src, dst, [e.weight for e in corpus.edges],
                               [e.type for e in corpus.edges] if corpus.edges else None)

    # -- access ---------------------------------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        return self._n

    @property
    def n_edges(self) -> int:
        return len(self.indices)

    @property
    def sources(self) -> np.ndarray:
        """Source node of every CSR slot."""
        if self._sources is None:
            self._sources = _frozen(np.repeat(np.arange(self._n, dtype=np.int64), np.diff(self.indptr)))
        return self._sources

    def out_edges(self, node: int) -> OutEdges:
        if not 0 <= node < self._n:
            raise InputError(f"graph: node {node} outside 0..{self._n - 1}")
        a, b = int(self.indptr[node]), int(self.indptr[node + 1])
        return OutEdges(np.arange(a, b, dtype=np.int64), self.indices[a:b], self.weights[a:b],
                        self.types[a:b], self.edge_ids[a:b])

    def edge_ref(self, slot: int, weights: np.ndarray | None = None) -> EdgeRef:
        w = self.weights if weights is None else weights
        return EdgeRef(int(self.edge_ids[slot]), int(self.sources[slot]), int(self.indices[slot]),
                       self.type_names[int(self.types[slot])], float(w[slot]), int(slot))

    def type_code(self, name: str) -> int:
        try:
            return self.type_names.index(name)
        except ValueError:
            return -1

    def slots_of(self, source: int, target: int, type_name: str | None = None) -> np.ndarray:
        """CSR slots of the edges source -> target (optionally only of one type)."""
        a, b = int(self.indptr[source]), int(self.indptr[source + 1])
        hit = self.indices[a:b] == target
        if type_name is not None:
            hit &= self.types[a:b] == self.type_code(type_name)
        return np.flatnonzero(hit) + a

    def directed(self, weighted: bool = True) -> sp.csr_matrix:
        """The stored direction as an n x n CSR matrix (parallel edges summed; 1.0 per pair if not weighted)."""
        import scipy.sparse as sp
        data = self.weights if weighted else np.ones(self.n_edges)
        m = sp.csr_matrix((np.array(data, dtype=np.float64), self.indices.copy(), self.indptr.copy()),
                          shape=(self._n, self._n))
        m.sum_duplicates()
        if not weighted:
            m.data[:] = 1.0
        return m

    def undirected(self) -> sp.csr_matrix:
        """Deduplicated symmetric projection: unordered pairs u != v, weight 1 (cached)."""
        import scipy.sparse as sp
        if self._undirected is None:
            s, t = self.sources, self.indices
            keep = s != t
            s, t = s[keep], t[keep]
            a = np.minimum(s, t)
            b = np.maximum(s, t)
            pairs = np.unique(a * max(self._n, 1) + b) if len(a) else np.zeros(0, dtype=np.int64)
            a, b = pairs // max(self._n, 1), pairs % max(self._n, 1)
            rows = np.concatenate([a, b])
            cols = np.concatenate([b, a])
            m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(self._n, self._n))
            m.sort_indices()
            self._undirected = m
        return self._undirected

    # -- persistence ----------------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        """Write graph.json and one .npy per array into `folder` (which the caller owns)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name in _ARRAYS:
            np.save(folder / f"{name}.npy", np.ascontiguousarray(getattr(self, name)), allow_pickle=False)
        meta = {"format": FORMAT, "n_nodes": self._n, "n_edges": self.n_edges, "type_names": self.type_names}
        (folder / "graph.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))

    @classmethod
    def load(cls, folder: Path, mmap: bool = True) -> "Graph":
        folder = Path(folder)
        try:
            meta = json.loads((folder / "graph.json").read_text())
        except FileNotFoundError:
            raise IndexFormatError(f"graph folder {folder}: graph.json missing") from None
        except ValueError as exc:
            raise IndexFormatError(f"graph folder {folder}: graph.json unreadable ({exc})") from None
        if meta.get("format") != FORMAT:
            raise IndexFormatError(f"graph folder {folder}: format {meta.get('format')!r}, expected {FORMAT!r}")
        arrays = {}
        for name in _ARRAYS:
            try:
                arrays[name] = np.load(folder / f"{name}.npy", mmap_mode="r" if mmap else None, allow_pickle=False)
            except (FileNotFoundError, ValueError) as exc:
                raise IndexFormatError(f"graph folder {folder}: {name}.npy missing or corrupt ({exc})") from None
        try:
            return cls(int(meta["n_nodes"]), arrays["indptr"], arrays["indices"], arrays["weights"],
                       arrays["types"], list(meta["type_names"]), arrays["edge_ids"])
        except (InputError, KeyError) as exc:
            raise IndexFormatError(f"graph folder {folder}: inconsistent arrays ({exc})") from None

    # -- validation -----------------------------------------------------------------------------

    def _check(self) -> None:
        n, m = self._n, len(self.indices)
        if len(self.indptr) != n + 1 or (n + 1 and (self.indptr[0] != 0 or self.indptr[-1] != m)):
            raise InputError("graph: indptr does not match node/edge counts")
        for name in ("weights", "types", "edge_ids"):
            if len(getattr(self, name)) != m:
                raise InputError(f"graph: {name} has {len(getattr(self, name))} entries, expected {m}")
        if m and (np.any(np.diff(self.indptr) < 0) or self.indices.min() < 0 or self.indices.max() >= n):
            raise InputError("graph: malformed CSR")
        if m and (self.types.min() < 0 or self.types.max() >= len(self.type_names)):
            raise InputError("graph: type code outside type_names")

    def __repr__(self) -> str:
        return f"Graph(n_nodes={self._n}, n_edges={self.n_edges}, types={self.type_names})"
