"""`sidelight sync PATH IDX`: bring an index of a folder up to date with the folder.

The index keeps, per file, its size, modification time, sha256, link count, the names its links
can resolve by and its unresolved links (`index.folderstate`). A sync lists the folder and hashes
only the files whose (size, mtime_ns) changed; of those, only the ones whose hash changed (and new
files) are read. Links are resolved again only where the answer can change: the read files' links,
and the links of stored notes that name a name that came or went (a new note can make an old link
resolve, a deleted one leaves links dangling), so every document's outgoing links are the ones its
file holds now, never lost. The new generation is written from the old one (`index.delta`):
unchanged records and edges are copied, BM25 counts and the dense model encodes only the changed
documents; learned edge weights (`state.sqlite`) stay on every edge that survives. The whole sync
is one write under the index's writer lock: a kill leaves the old index or the new one. An index
without a folder state (written by an older sidelight, or by `add`/`delete`) or read by other
readers (`corpus.folder.READER_VERSION`) is synced by reading every stored record, hashing and
reading every file, and replacing the records that read differently; its next generation keeps the
state. An index that does not name its source folder (from before indexes did) is given the synced
folder as its source."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..corpus.folder import Walk, read_document, walk
from ..corpus.links import Resolver, count_resolved, resolve_links
from ..corpus.report import FolderReport
from ..corpus.model import Edge, Record
from ..store.lock import writer_lock
from . import delta, folderstate, store
from .index import Index, folder_source
from .records import has_hash_lines


@dataclass
class SyncReport:
    """What a sync changed: document ids added, changed, deleted and renamed (old -> new), links
    that pointed into a deleted or renamed document, and the folder reader's report."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    dangling: list[tuple[str, str]] = field(default_factory=list)  # (source, old target)
    reader: FolderReport | None = None
    written: bool = False

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.deleted or self.renamed)

    def summary(self) -> str:
        moved = f", {len(self.renamed)} renamed" if self.renamed else ""
        line = (f"{len(self.added)} added, {len(self.changed)} changed, {len(self.deleted)} deleted{moved}, "
                f"{self.unchanged} unchanged")
        if self.dangling:
            line += f"; {len(self.dangling)} links point into a deleted or renamed document"
        return line if self.written or not self.empty else "up to date: " + line


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def plan(stored: dict[str, str | None], current: dict[str, str]) -> SyncReport:
    """Compare stored (id -> sha256) with the folder's (relative path -> sha256): what to read and drop.
    A deleted file whose bytes reappear under a new path is a rename (still read again: its id is new)."""
    report = SyncReport()
    gone = sorted(set(stored) - set(current))
    new = sorted(set(current) - set(stored))
    report.changed = sorted(i for i in set(stored) & set(current) if stored[i] != current[i])
    report.unchanged = len(set(stored) & set(current)) - len(report.changed)
    by_hash: dict[str, list[str]] = {}
    for i in new:
        by_hash.setdefault(current[i], []).append(i)
    for old in gone:
        h = stored[old]
        if h is not None and by_hash.get(h):
            report.renamed.append((old, by_hash[h].pop(0)))
    moved_to = {b for _, b in report.renamed}
    moved_from = {a for a, _ in report.renamed}
    report.added = [i for i in new if i not in moved_to]
    report.deleted = [i for i in gone if i not in moved_from]
    return report


def sync(index_path: Path, folder: Path, exclude: Sequence[str] = ()) -> SyncReport:
    """Apply the folder's changes to the index at `index_path` (see the module docstring); writes
    a new generation only when something changed."""
    index_path, folder = Path(index_path), Path(folder)
    with writer_lock(index_path):
        generation = store.data_folder(index_path)
        state = folderstate.load(generation) if has_hash_lines(generation) else None
        manifest = store.read_manifest(generation, verify=False)
        if (state is None or manifest["corpus"]["records"] != len(state) or "source" not in manifest
                or manifest.get("kind") is not None):  # a sharded index: its shards write their own parts
            return _sync_all(index_path, folder, exclude)
        found = walk(folder, tuple(exclude))
        current, hashed = {}, []
        for rel in found.files:
            entry, stat = state.get(rel), found.stats[rel]
            if entry is not None and entry[0] >= 0 and (entry[0], entry[1]) == stat:
                current[rel] = entry[2]
            else:
                current[rel] = file_sha256(folder / rel)
                hashed.append(rel)
        report = plan({rid: e[2] for rid, e in state.items()}, current)
        reader = report.reader = _reader(folder, found)
        if report.empty:
            _count(reader, state, None)
            return report
        index = Index.load(index_path, verify=True)
        ids = index.corpus.ids
        if sorted(ids) != sorted(state):  # a state that does not describe this generation: read it all
            return _sync_all(index_path, folder, exclude)
        fresh = _read(folder, [*report.added, *report.changed, *(b for _, b in report.renamed)], reader)
        remove = [*report.changed, *report.deleted, *(a for a, _ in report.renamed)]
        gone, fresh_ids = set(remove), {r.id for r in fresh}
        removed_ids, added_ids = gone - fresh_ids, fresh_ids - set(ids)
        # links whose answer can change: the new notes', and those naming a name that came or went
        changed_keys = set().union(*(folderstate.id_keys(i) for i in removed_ids | added_ids))
        pos = index.corpus.position
        src, dst, _, _ = delta.old_edge_arrays(index.graph)
        into_removed = np.isin(dst, [pos[i] for i in removed_ids]) if len(dst) else np.zeros(0, bool)
        removed = set(report.deleted) | {a for a, _ in report.renamed}
        moved = dict(report.renamed)
        report.dangling = sorted((moved.get(ids[s], ids[s]), ids[d]) for s, d in zip(src[into_removed], dst[into_removed])
                                 if ids[d] in removed and ids[s] not in report.deleted)
        again = {rid for rid, e in state.items() if rid not in gone and changed_keys.intersection(e[4])}
        again |= {ids[s] for s in src[into_removed]} - gone
        old = [index.corpus.records[pos[i]] for i in sorted(again)]
        # the names these links can resolve to: only ids that share a key with them (same answers, small tables)
        wanted = set().union(*(folderstate.link_keys(r.metadata.get("links", ())) for r in [*fresh, *old]))
        names = [i for i in ids if i not in gone and not folderstate.id_keys(i).isdisjoint(wanted)]
        resolver = Resolver(names + sorted(i for i in fresh_ids if not folderstate.id_keys(i).isdisjoint(wanted)))
        edges, unresolved = resolve_links(sorted([*fresh, *old], key=lambda r: r.id), resolver)
        by_source: dict[str, list[tuple[str, str]]] = {}
        for u in unresolved:
            by_source.setdefault(u.source, []).append((u.target, u.reason))
        new_state = {rid: e for rid, e in state.items() if rid not in gone}
        now = time.time()
        for rel in hashed:  # read again only to find it unchanged: remember its new size and time
            if rel in new_state and rel not in fresh_ids:
                new_state[rel] = folderstate.entry_with_stat(new_state[rel], found.stats[rel], now)
        for r in old:
            new_state[r.id] = [*new_state[r.id][:5], [list(u) for u in by_source.get(r.id, [])]]
        for r in fresh:
            new_state[r.id] = folderstate.entry(r, found.stats.get(r.id), by_source.get(r.id, []), now)
        n_edges = delta.write(index, remove, sorted(fresh, key=lambda r: r.id), fresh_ids | again, edges, new_state)
        _count(reader, new_state, n_edges)
        report.written = True
    return report


def _reader(folder: Path, found: Walk) -> FolderReport:
    return FolderReport(root=str(folder), ignored=found.ignored, skipped=list(found.skipped),
                        warnings=list(found.warnings))


def _read(folder: Path, paths: Sequence[str], reader: FolderReport) -> list[Record]:
    """The records of these files, sorted by path; an unreadable one is reported and left out (its
    old record goes, as a deleted file's would)."""
    fresh: list[Record] = []
    for rel in sorted(paths):
        record, issues = read_document(folder, rel)
        if record is None:
            reader.skipped.extend((rel, reason) for reason in issues[:1])
            continue
        reader.warnings.extend((rel, reason) for reason in issues)
        fresh.append(record)
    return fresh


def _count(reader: FolderReport, state: dict[str, list[Any]], edges: int | None) -> None:
    """The reader's counts from the folder state (documents, links resolved, unresolved; edges when known)."""
    reader.documents = len(state)
    unresolved = [(rid, t, why) for rid in sorted(state) for t, why in state[rid][5]]
    reader.links = sum(e[3] for e in state.values())
    reader.resolved = reader.links - len(unresolved)
    reader.unresolved.extend(unresolved)
    if edges is not None:
        reader.edges = edges


def _sync_all(index_path: Path, folder: Path, exclude: Sequence[str]) -> SyncReport:
    """A sync that reads every stored record and hashes every file (an index written before folder
    states were kept, or by `add`/`delete`, or read by other readers); its write keeps the state, so the
    next sync is quick. Unless the records were read by today's readers, every unchanged file is read
    again too, and a record that now reads differently (sections, lines, links) counts as changed."""
    index = Index.load(index_path, verify=True)
    current = list(index.corpus.records)  # parsed once: every later pass reads this list
    index.corpus = replace(index.corpus, records=current)
    stored = {r.id: r.metadata.get("sha256") for r in current}
    found = walk(folder, tuple(exclude))
    hashes = {rel: file_sha256(folder / rel) for rel in found.files}
    report = plan(stored, hashes)
    reader = report.reader = _reader(folder, found)
    fresh = _read(folder, [*report.added, *report.changed, *(b for _, b in report.renamed)], reader)
    if not folderstate.read_with_current_reader(store.data_folder(index_path)):
        old = {r.id: r for r in current}
        again = _read(folder, [rel for rel in found.files if rel in old and stored[rel] == hashes[rel]], reader)
        differ = [r for r in again if _content(r) != _content(old[r.id])]
        report.changed = sorted([*report.changed, *(r.id for r in differ)])
        report.unchanged -= len(differ)
        fresh += differ
    remove = [*report.changed, *report.deleted, *(a for a, _ in report.renamed)]
    removed = set(report.deleted) | {a for a, _ in report.renamed}
    old_edges = list(index.corpus.edges)
    moved = dict(report.renamed)
    report.dangling = sorted((moved.get(e.source, e.source), e.target) for e in old_edges
                             if e.target in removed and e.source not in report.deleted)
    gone = set(remove)
    records = sorted([r for r in current if r.id not in gone] + fresh, key=lambda r: r.id)
    edges, unresolved = resolve_links(records)
    reader.documents, reader.edges = len(records), len(edges)
    reader.resolved = count_resolved(records, unresolved)
    reader.add_unresolved(unresolved)
    named = "source" in index.manifest
    if report.empty and _same_edges(old_edges, edges) and named:
        return report
    if not named:  # an index from before indexes named their folder: `lab auto` reads it from here on
        index.manifest.update(folder_source(folder, exclude))
    index.replace(remove, fresh, edges)
    index.folder_state = folderstate.build(records, found.stats, unresolved)
    index.save(index_path)
    report.written = True
    return report


def _content(r: Record) -> tuple[str, str, tuple[str, ...], str]:
    """What a re-read must reproduce for a record to stay as it is."""
    return r.title, r.text, r.aliases, json.dumps(r.metadata, sort_keys=True, default=str)


def _same_edges(old: Sequence[Edge], new: Sequence[Edge]) -> bool:
    key = lambda e: (e.source, e.target, e.type, e.weight, e.context, e.anchor)  # noqa: E731
    return sorted(map(key, old)) == sorted(map(key, new))
