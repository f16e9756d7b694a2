"""`sidelight sync PATH IDX`: bring an index of a folder up to date with the folder.

Each document keeps the sha256 of its file (`metadata["sha256"]`). A sync lists the folder,
hashes every file, and reads only the files that are new or whose hash changed; deleted files'
records go. Links are then resolved again over all documents (a new note can make an old link
resolve, a deleted one leaves links dangling), so every document's outgoing links are the ones
its file holds now, never lost. `Index.replace` makes the index a fresh build of the same folder
would make, re-encoding only the changed documents; learned edge weights (`state.sqlite`) stay
on every edge that survives. The whole sync is one write under the index's writer lock: a kill
leaves the old index or the new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from ..corpus.folder import read_document, walk
from ..corpus.links import count_resolved, resolve_links
from ..corpus.report import FolderReport
from ..corpus.model import Edge, Record
from ..store.lock import writer_lock
from .index import Index


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
        index = Index.load(index_path, verify=True)
        current = list(index.corpus.records)  # parsed once: every later pass reads this list
        index.corpus = replace(index.corpus, records=current)
        stored = {r.id: r.metadata.get("sha256") for r in current}
        found = walk(folder, tuple(exclude))
        report = plan(stored, {rel: file_sha256(folder / rel) for rel in found.files})
        reader = report.reader = FolderReport(root=str(folder), ignored=found.ignored, skipped=list(found.skipped),
                                              warnings=list(found.warnings))
        fresh: list[Record] = []
        for rel in sorted([*report.added, *report.changed, *(b for _, b in report.renamed)]):
            record, issues = read_document(folder, rel)
            if record is None:  # unreadable now: its old record goes, as a deleted file's would
                reader.skipped.extend((rel, reason) for reason in issues[:1])
                continue
            reader.warnings.extend((rel, reason) for reason in issues)
            fresh.append(record)
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
        if report.empty and _same_edges(old_edges, edges):
            return report
        index.replace(remove, fresh, edges)
        index.save(index_path)
        report.written = True
    return report


def _same_edges(old: Sequence[Edge], new: Sequence[Edge]) -> bool:
    key = lambda e: (e.source, e.target, e.type, e.weight, e.context, e.anchor)  # noqa: E731
    return sorted(map(key, old)) == sorted(map(key, new))
