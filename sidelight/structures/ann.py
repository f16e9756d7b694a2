"""Approximate nearest neighbours for the dense lane: a usearch HNSW graph over the stored vectors.

The graph is an accelerator, never the source of scores: `dense-ann` asks it for a candidate pool
(`max(k, candidates)` positions), rescores the pool exactly with the index's float32 vectors and
ranks it like `dense` (ties by ascending id). A returned score is therefore the exact cosine; only
which records make the pool is approximate (see `bench/ann.py` for recall@10 against `dense`).

Build settings are explicit and saved with the graph: `connectivity` (HNSW M), `expansion_add`
(ef_construction), `expansion_search` (ef at query time; the pool size is used when larger) and
`threads` (build threads; 1, the default, makes the saved file byte-identical across builds, more
threads build faster but not reproducibly). Metric: inner product on the unit vectors (= cosine),
float32. Keys are record positions. The file lives at `INDEX/dense/ann.usearch`, so the manifest
hashes cover it; it is memory-mapped on first use, not at `Index.load`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import IndexFormatError, InputError

FILE = "ann.usearch"
METRIC = "ip"
DTYPE = "f32"


@dataclass(frozen=True)
class AnnParams:
    """HNSW build/search settings (defaults: recall@10 >= 0.95 on random unit vectors, see tests)."""

    connectivity: int = 32
    expansion_add: int = 128
    expansion_search: int = 128
    threads: int = 1

    def __post_init__(self):
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"ANN parameter {name} must be a positive integer, not {value!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "AnnParams":
        return cls(**{k: d[k] for k in ("connectivity", "expansion_add", "expansion_search", "threads") if k in d})


def _usearch():
    try:
        from usearch.index import Index as UIndex
    except ImportError as exc:  # pragma: no cover - usearch is a dependency
        raise InputError("the dense ANN index needs the `usearch` package (pip install usearch)") from exc
    return UIndex


class AnnIndex:
    """A usearch HNSW graph whose keys are record positions 0..n-1."""

    def __init__(self, graph, params: AnnParams, n: int, dim: int):
        self.graph = graph
        self.params = params
        self.n = n
        self.dim = dim

    @classmethod
    def build(cls, vectors: np.ndarray, params: AnnParams = AnnParams()) -> "AnnIndex":
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise InputError(f"ANN index needs a 2-d vector array, got shape {vectors.shape}")
        n, dim = vectors.shape
        graph = _usearch()(ndim=dim, metric=METRIC, dtype=DTYPE, connectivity=params.connectivity,
                           expansion_add=params.expansion_add, expansion_search=params.expansion_search)
        if n:
            graph.add(np.arange(n, dtype=np.uint64), vectors, threads=params.threads)
        return cls(graph, params, n, dim)

    def search(self, query: np.ndarray, count: int, expansion_search: int | None = None) -> np.ndarray:
        """Positions of (up to) `count` approximate nearest records by inner product, int64."""
        count = min(int(count), self.n)
        if count <= 0:
            return np.empty(0, dtype=np.int64)
        ef = max(int(expansion_search or self.params.expansion_search), 1)
        if self.graph.expansion_search != ef:  # graph-wide setting: concurrent callers should agree on it
            self.graph.expansion_search = ef
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise InputError(f"query vector has dimension {q.shape[0]}, the ANN index {self.dim}")
        keys = np.asarray(self.graph.search(q, count, threads=1).keys)
        keys = keys[keys < self.n]  # drop sentinels when the graph returns fewer than `count`
        return np.unique(keys).astype(np.int64)  # positions, sorted; order is irrelevant (rescored)

    def save(self, folder: Path) -> dict:
        self.graph.save(str(Path(folder) / FILE))
        import usearch

        return {**self.params.to_dict(), "file": FILE, "library": "usearch", "version": usearch.__version__,
                "metric": METRIC, "dtype": DTYPE, "size": self.n}

    @classmethod
    def load(cls, folder: Path, meta: dict, n: int, dim: int, view: bool = True) -> "AnnIndex":
        """Open `folder/ann.usearch` (memory-mapped with `view`) and check it fits the vectors."""
        path = Path(folder) / meta.get("file", FILE)
        if not path.is_file():
            raise IndexFormatError(f"{folder}: the manifest lists an ANN index but {path.name} is missing")
        try:
            graph = _usearch().restore(str(path), view=view)
        except (RuntimeError, ValueError, OSError) as exc:
            raise IndexFormatError(f"{path}: cannot read the ANN index ({exc})") from exc
        if graph is None or len(graph) != n or graph.ndim != dim:
            size = None if graph is None else (len(graph), graph.ndim)
            raise IndexFormatError(f"{path}: ANN index {size} does not fit {n} vectors of dimension {dim}")
        return cls(graph, AnnParams.from_dict(meta), n, dim)
