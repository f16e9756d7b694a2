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

import json
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
from ..structures.dense import DenseStore, Passages, Units, windows_of
from ..structures.lexical_store import BM25Params
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
    """Ray Data's callable class: the ONNX model loaded once per actor, one batch per call. Each
    batch gives a row per record (`window` -1) and, with `passages`, a row per window of its
    records (`window`: its order in the batch, `section`: its section or -1)."""

    def __init__(self, spec: str, threads: int, passages: dict[str, Any] | None = None, batch_size: int = 32):
        from ..models.embedder import Embedder

        self.embedder = Embedder.from_spec(spec, threads=threads)
        self.passages = None if passages is None else Passages.from_dict(passages)
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        texts = [str(t) for t in batch["text"]]
        rows = np.asarray(batch["i"], dtype=np.int64)
        vectors = self.embedder.encode(texts, kind="doc")
        none = np.full(len(rows), -1, dtype=np.int64)
        if self.passages is None:
            return {"i": rows, "window": none, "section": none, "vector": vectors}
        units = [[(int(s), str(t)) for s, t in json.loads(u)] for u in batch["units"]] if self.passages.sections else None
        owner, windows, *section = windows_of(self.passages, self.embedder, texts, [str(t) for t in batch["title"]],
                                              units, self.batch_size)
        owner = np.asarray(owner, dtype=np.int64)
        return {"i": np.concatenate([rows, rows[owner]]),
                "window": np.concatenate([none, np.arange(len(owner), dtype=np.int64)]),
                "section": np.concatenate([none, np.asarray(section[0] if section else np.full(len(owner), -1),
                                                            dtype=np.int64)]),
                "vector": np.vstack([vectors, windows]).astype(np.float32)}


def ray_encode(texts: list[str], spec: str, workers: int, batch_size: int = 32, threads: int = 1,
               passages: Passages | None = None, titles: list[str] | None = None, units: Units | None = None) -> DenseStore:
    """Every text's vector through Ray Data (`map_batches`, `concurrency=workers` encoder actors);
    with `passages`, each record's windows too, as `DenseStore.build` makes them (`titles`, `units`:
    see there), encoded where the record is."""
    ray = _ray()
    from ..models.embedder import Embedder

    if passages is not None and passages.sections and (units is None or len(units) != len(texts)):
        raise InputError("section windows need each record's sections (units)")
    identity = Embedder.from_spec(spec, threads=1).identity
    items = [{"i": i, "text": t, "title": titles[i] if titles else "",
              "units": json.dumps(units[i] if units is not None else [])} for i, t in enumerate(texts)]
    out = ray.data.from_items(items).map_batches(
        _Encoder, fn_constructor_args=(spec, threads, None if passages is None else passages.to_dict(), batch_size),
        batch_size=batch_size, concurrency=workers, num_cpus=1, batch_format="numpy")
    vectors = np.zeros((len(texts), int(identity["dim"])), dtype=np.float32)
    owner, order, section, windows = [], [], [], []
    for batch in out.iter_batches(batch_format="numpy", batch_size=None):
        record = np.asarray(batch["window"]) < 0
        vectors[np.asarray(batch["i"], dtype=np.int64)[record]] = batch["vector"][record]
        owner.append(np.asarray(batch["i"], dtype=np.int64)[~record])
        order.append(np.asarray(batch["window"], dtype=np.int64)[~record])
        section.append(np.asarray(batch["section"], dtype=np.int64)[~record])
        windows.append(np.asarray(batch["vector"], dtype=np.float32)[~record])
    store = DenseStore(vectors, identity, spec, 0, threads)
    if passages is not None:
        o = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
        rank = np.lexsort((np.concatenate(order), o)) if owner else np.zeros(0, dtype=np.int64)  # by record, then as encoded
        w = np.concatenate(windows) if windows else np.zeros((0, vectors.shape[1]), dtype=np.float32)
        s = np.concatenate(section)[rank] if section else np.zeros(0, dtype=np.int64)
        store.set_windows(passages, o[rank], np.ascontiguousarray(w[rank]), s if passages.sections else None)
    return store
