"""A new generation of a folder index written from the current one and a sync's changes.

What a fresh build of the folder would hold (same records, edges, statistics and vectors; rows in
another order, which no ranking sees: ties break by id), written without parsing what did not
change: unchanged records' lines and hash lines and unchanged sources' edge lines are copied as
bytes, the graph is rebuilt from the old graph's arrays, BM25 counts only the new records and the
dense model encodes only their sections. The statistics of BM25 are global, so its weights are
derived again from the counts (arrays, not text). The generation is published like any other
(`store.new_generation`): a kill at any point leaves the old generation or the new one.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..corpus.model import Corpus, Edge, Record
from ..errors import IndexFormatError
from ..graph.store import Graph
from ..structures.dense import held_vectors
from . import folderstate, store
from .index import KEPT_KEYS, Index, dense_texts
from .records import EdgeFile, RecordFile, edge_line, write_records_delta


def old_edge_arrays(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, weight, type code) of each edge of the old generation, by edge id."""
    m = graph.n_edges
    src, dst, w, t = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.float64), np.empty(m, np.int64))
    ids = np.asarray(graph.edge_ids)
    src[ids], dst[ids] = graph.sources, np.asarray(graph.indices)
    w[ids], t[ids] = np.asarray(graph.weights), np.asarray(graph.types)
    return src, dst, w, t


def write(index: Index, remove: Sequence[str], fresh: Sequence[Record], resourced: set[str],
          new_edges: Sequence[Edge], state: dict[str, list[Any]]) -> int:
    """Publish a new generation of the saved `index` (opened from its current generation, verified):
    without the records `remove`, with `fresh` (sorted by id) appended; every edge whose source is
    in `resourced` (the records whose links were resolved again, `fresh` included) or whose target
    is gone is replaced by `new_edges` (an edge into a changed record stays: its id is still there); `state` is the new folder state. The caller holds the lock.
    Returns the number of edges of the new generation."""
    corpus, records, edge_file = index.corpus, index.corpus.records, index.corpus.edges
    if index.path is None or not isinstance(records, RecordFile) or not isinstance(edge_file, EdgeFile):
        raise IndexFormatError("a delta write needs an index opened from its folder")
    root = Path(index.path)
    pos = corpus.position
    n_old = len(records)
    gone = np.zeros(n_old, dtype=bool)
    gone[[pos[i] for i in remove]] = True
    keep = ~gone
    old_ids = corpus.ids
    ids = [old_ids[i] for i in np.flatnonzero(keep)] + [r.id for r in fresh]
    new_pos = {rid: i for i, rid in enumerate(ids)}
    # old position -> new one, for every id still there (a changed record is read again under its id)
    moved = np.fromiter((new_pos.get(rid, -1) for rid in old_ids), dtype=np.int64, count=n_old)

    # edges: the old ones that stay (by arrays, lines copied), then the new ones, ordered by source id
    src, dst, w, t = old_edge_arrays(index.graph)
    redo = np.zeros(n_old, dtype=bool)
    redo[[pos[i] for i in resourced if i in pos]] = True
    stay = keep[src] & (moved[dst] >= 0) & ~redo[src] if len(src) else np.zeros(0, dtype=bool)
    old_lines = _edge_lines(Path(edge_file.path), len(src))
    names = index.graph.type_names
    e_src = np.concatenate((moved[src[stay]], np.fromiter((new_pos[e.source] for e in new_edges), np.int64, len(new_edges))))
    e_dst = np.concatenate((moved[dst[stay]], np.fromiter((new_pos[e.target] for e in new_edges), np.int64, len(new_edges))))
    e_w = np.concatenate((w[stay], np.asarray([e.weight for e in new_edges], dtype=np.float64)))
    e_type = [names[c] for c in t[stay].tolist()] + [e.type for e in new_edges]
    lines = [old_lines[k] for k in np.flatnonzero(stay)] + [edge_line(e).encode() for e in new_edges]
    rank = _id_rank(ids)
    order = np.argsort(rank[e_src], kind="stable")  # by source id; a source's edges keep their link order
    e_src, e_dst, e_w = e_src[order], e_dst[order], e_w[order]
    e_type = [e_type[k] for k in order]
    lines = [lines[k] for k in order]
    graph = Graph.from_arrays(len(ids), e_src, e_dst, e_w, e_type if e_type else None)

    # lexical and dense: delete the removed rows, append the fresh ones (only they are counted, encoded)
    shell = Corpus(corpus.name, list(fresh), [], corpus.title_weight, corpus.alias_weight)
    texts, titles, units = dense_texts(shell, fresh, index.dense.passages if index.dense is not None else None)
    positions = np.flatnonzero(gone)
    if len(positions):
        index.lexical_index().delete(positions)
        if index.dense is not None:
            held_vectors(index.dense).delete(positions)
    if fresh:
        index.lexical_index().add(texts)
        if index.dense is not None:
            held_vectors(index.dense).add(texts, titles=titles, units=units)

    def check(name: str) -> None:
        Index.open_generation(root, name, False)

    with store.new_generation(root, check=check) as tmp:
        content = hashlib.sha256()
        write_records_delta(tmp, records, keep, fresh, content)
        with open(tmp / "edges.jsonl", "wb") as f:
            f.write(b"".join(lines))
        folderstate.save(tmp, state)
        np.save(tmp / "id_rank.npy", rank, allow_pickle=False)
        lexical = index.lexical_index().save(tmp / "lexical")
        dense = held_vectors(index.dense).save(tmp / "dense") if index.dense is not None else None
        graph.save(tmp / "graph")
        content.update(b"--edges--\n")
        content.update(_edge_hash_lines(ids, e_src, e_dst, e_type, e_w))
        kept = {k: index.manifest[k] for k in KEPT_KEYS if k in index.manifest}
        manifest = {
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "corpus": {"name": corpus.name, "hash": content.hexdigest(), "records": len(ids),
                       "edges": len(lines), "title_weight": corpus.title_weight, "alias_weight": corpus.alias_weight},
            "lexical": lexical,
            "graph": {"nodes": graph.n_nodes, "edges": graph.n_edges, "types": graph.type_names},
        }
        if dense is not None:
            manifest["dense"] = dense
        manifest.update(kept)
        store.write_manifest(tmp, manifest)
    return len(lines)


def _edge_hash_lines(ids: Sequence[str], src: np.ndarray, dst: np.ndarray, types: Sequence[str],
                     weights: np.ndarray) -> bytes:
    """`Corpus.content_hash`'s edge part: `json.dumps([source, target, type, weight])` per edge,
    each id, type and weight quoted once."""
    quoted: dict[str, Any] = {}

    def q(x: Any) -> bytes:
        out = quoted.get(x)
        if out is None:
            out = quoted[x] = json.dumps(x).encode()
        return out

    return b"".join(b"[%b, %b, %b, %b]\n" % (q(ids[s]), q(ids[d]), q(t), q(w))
                    for s, d, t, w in zip(src.tolist(), dst.tolist(), types, weights.tolist()))


def _edge_lines(path: Path, count: int) -> list[bytes]:
    """The lines of an edges file as bytes (newline kept), checked against the count the graph has."""
    data = path.read_bytes()
    lines = [line + b"\n" for line in data.split(b"\n")[:-1]]  # JSON lines hold no raw newline
    if len(lines) != count:
        raise IndexFormatError(f"{path}: {len(lines)} edges, its graph has {count}")
    return lines


def _id_rank(ids: Sequence[str]) -> np.ndarray:
    order = sorted(range(len(ids)), key=ids.__getitem__)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    return rank
