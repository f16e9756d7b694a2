"""A sharded index on Ray (the optional extra `pip install 'sidelight[ray]'`).

* Serving: `serve_on_ray(index)` starts one actor per shard (`ShardServer`, its folder opened
  memory-mapped on the node Ray places it on); the coordinator's fan-out then asks the actors,
  waits at most `budget` seconds, and counts a shard that failed or did not answer as missing
  coverage (`Results.coverage`, `partial`). Ray restarts a dead actor (`max_restarts=-1`); calls
  made while it is down fail at once (`max_task_retries=0`) rather than wait.
* Building: `ray_builders` counts each shard in a Ray task (`ShardBuilder.count`, one CPU each),
  so shards are tokenized and counted in parallel across the cluster; the driver merges their
  statistics (the reduce step), then one task per shard rescopes and writes it, and the driver
  publishes the coordinator. `ray_encode` encodes the records with Ray Data: `map_batches` with
  an encoder class that loads the ONNX model once per actor, `concurrency` actors.

Nothing here is imported by the base install: `connect` turns a missing Ray into a clear error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

    from .index import Index
    from .sharded import ShardedIndex

from ..corpus.model import Corpus, Record
from ..errors import InputError
from ..structures.dense import DenseStore
from ..structures.lexical import BM25Params
from ..text import TokenizerConfig
from .shards import Answer, ShardBuilder, ShardServer

DEFAULT_BUDGET = 10.0  # seconds a query waits for its shards


LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray takes 127.0.0.1 as this node's address


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise InputError("Ray is not installed: pip install 'sidelight[ray]'") from None
    return ray


def connect(address: str = "auto", num_cpus: int | None = None) -> ModuleType:
    """Join a Ray cluster and return the `ray` module. `address`: a cluster's ADDRESS (host:port or
    ray://...), `auto` (the cluster started on this machine with `ray start --head`, else a new
    local one) or `local` (always a new local one). A local cluster this starts talks over the
    loopback address only."""
    if address in ("auto", "local") and "ray" not in sys.modules:
        os.environ.setdefault(LOOPBACK_ENV, "0")
    ray = _ray()
    if ray.is_initialized():
        return ray
    quiet = {"log_to_driver": False, "configure_logging": False}
    if address != "local":
        try:
            ray.init(address=address, **quiet)
            return ray
        except ConnectionError as exc:
            if address != "auto":
                raise InputError(f"cannot reach a Ray cluster at {address!r} ({exc})") from None
    ray.init(num_cpus=num_cpus, include_dashboard=False, **quiet)
    return ray


class RayShards:
    """One Ray actor per shard; `ask` waits `budget` seconds and gives None for a shard that failed."""

    def __init__(self, root: Path, generations: Sequence[str], assignment: np.ndarray, budget: float = DEFAULT_BUDGET,
                 num_cpus: float = 0.5):
        ray = _ray()
        self.budget = float(budget)
        actor = ray.remote(ShardServer).options(max_restarts=-1, max_task_retries=0, num_cpus=num_cpus,
                                                scheduling_strategy="SPREAD")
        self.actors = [actor.remote(str(Path(root) / "shards" / str(s)), gen, np.flatnonzero(assignment == s), True)
                       for s, gen in enumerate(generations)]
        ray.get([a.ping.remote() for a in self.actors])  # every shard open before the first query

    def __len__(self) -> int:
        return len(self.actors)

    def ask(self, name: str, *args: Any) -> list[Answer | None]:
        ray = _ray()
        refs = [getattr(a, name).remote(*args) for a in self.actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=self.budget)
        done = set(ready)
        out: list[Answer | None] = []
        for r in refs:
            if r not in done:
                ray.cancel(r)
                out.append(None)
                continue
            try:
                out.append(ray.get(r))
            except ray.exceptions.RayError:
                out.append(None)
        return out

    def reopen(self, index: "ShardedIndex") -> "RayShards":
        """Actors for a newer generation of the same index (a server follows its writers); these stop."""
        if index.path is None:
            raise InputError("Ray serves a sharded index saved in a folder")
        new = RayShards(index.path, index.manifest["shards"]["generations"], index.assignment, self.budget)
        self.close()
        return new

    def close(self) -> None:
        ray = _ray()
        for a in self.actors:
            ray.kill(a, no_restart=True)


def serve_on_ray(index: "Index", address: str = "auto", budget: float = DEFAULT_BUDGET) -> RayShards:
    """Make a sharded `index` ask Ray actors instead of its in-process shards; returns them."""
    from .sharded import ShardedIndex

    if not isinstance(index, ShardedIndex):
        raise InputError(f"{index.path} is not a sharded index; build one with `sidelight index SOURCE -o IDX --shards N`")
    if index.path is None:
        raise InputError("Ray serves a sharded index saved in a folder")
    connect(address)
    shards = RayShards(index.path, index.manifest["shards"]["generations"], index.assignment, budget)
    index.fanout.shards = shards
    return shards


def _count(records: Sequence[Record], name: str, title_weight: int, alias_weight: int, tokenizer: TokenizerConfig,
           params: BM25Params) -> tuple[tuple[list[str], np.ndarray, int, float], tuple[list[str], sp.csr_matrix]]:
    b = ShardBuilder.count(name, records, title_weight, alias_weight, tokenizer, params, None)
    return b.stats(), (b.vocab, b.tf)


def _finish(counts: tuple[list[str], sp.csr_matrix], records: list[Record], dense: DenseStore | None, name: str,
            title_weight: int, alias_weight: int, tokenizer: TokenizerConfig, params: BM25Params,
            *finish_args: Any) -> str:
    corpus = Corpus(name, records, [], title_weight, alias_weight, checked=True)
    vocab, tf = counts
    return ShardBuilder(corpus, vocab, tf, tokenizer, params, dense).finish(*finish_args)


class RayShardBuilder:
    """A shard counted by a Ray task (one CPU) and written by another. The records go to the object
    store once; only the term counts come back from counting. Its methods return object refs,
    resolved all at once by the caller (`sharded._call_all`)."""

    def __init__(self, name: str, records: Sequence[Record], title_weight: int, alias_weight: int,
                 tokenizer: TokenizerConfig, params: BM25Params, dense: DenseStore | None):
        ray = _ray()
        self._records, self._dense = ray.put(list(records)), ray.put(dense)
        self._args = (name, title_weight, alias_weight, tokenizer, params)
        self._stats, self._counts = ray.remote(num_cpus=1, num_returns=2)(_count).remote(self._records, *self._args)

    def stats(self) -> Any:  # an object ref of ShardBuilder.stats()
        return self._stats

    def finish(self, *finish_args: Any) -> Any:  # an object ref of the generation written
        return _ray().remote(num_cpus=1)(_finish).remote(self._counts, self._records, self._dense, *self._args,
                                                       *finish_args)


def ray_builders(corpus: Corpus, parts: Sequence[tuple[list[Record], DenseStore | None]], tokenizer: TokenizerConfig,
                 params: BM25Params, progress: bool) -> list[RayShardBuilder]:
    """Every shard counted by a Ray task, in parallel across the cluster; for `ShardedIndex.write_sharded`."""
    return [RayShardBuilder(corpus.name, records, corpus.title_weight, corpus.alias_weight, tokenizer, params, dense)
            for records, dense in parts]


class _Encoder:
    """Ray Data's callable class: the ONNX model loaded once per actor, one batch per call."""

    def __init__(self, spec: str, threads: int):
        from ..models.embedder import Embedder

        self.embedder = Embedder.from_spec(spec, threads=threads)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        vectors = self.embedder.encode([str(t) for t in batch["text"]], kind="doc")
        return {"i": batch["i"], "vector": vectors}


def ray_encode(texts: list[str], spec: str, workers: int, batch_size: int = 32, threads: int = 1) -> DenseStore:
    """Every text's vector through Ray Data (`map_batches`, `concurrency=workers` encoder actors)."""
    ray = _ray()
    from ..models.embedder import Embedder

    identity = Embedder.from_spec(spec, threads=1).identity
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    out = ds.map_batches(_Encoder, fn_constructor_args=(spec, threads), batch_size=batch_size,
                         concurrency=workers, num_cpus=1, batch_format="numpy")
    vectors = np.zeros((len(texts), int(identity["dim"])), dtype=np.float32)
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        vectors[np.asarray(batch["i"], dtype=np.int64)] = batch["vector"]
    return DenseStore(vectors, identity, spec, 0, threads)
