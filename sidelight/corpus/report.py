"""What reading a folder found: counts, files skipped or read with a problem, unresolved links."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .links import Unresolved


@dataclass
class FolderReport:
    """Counts and lists of one `load_folder` run. Nothing in it failed the run.

    `skipped`: (path, reason) of files that should have been read but were not; `warnings`:
    (path, reason) of files read with a problem (invalid UTF-8, broken front matter); `unresolved`:
    (source, target, reason) of links that name no document; `ignored`: files of other kinds."""

    root: str = ""
    documents: int = 0
    sections: int = 0
    links: int = 0
    resolved: int = 0
    edges: int = 0
    ignored: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    unresolved: list[tuple[str, str, str]] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def add_unresolved(self, items: list[Unresolved]) -> None:
        self.unresolved.extend((u.source, u.target, u.reason) for u in items)

    def counts(self) -> dict[str, int]:
        """The headline numbers."""
        return {"documents": self.documents, "sections": self.sections, "links": self.links,
                "resolved": self.resolved, "unresolved": len(self.unresolved), "edges": self.edges,
                "skipped": len(self.skipped), "warnings": len(self.warnings), "ignored": self.ignored}

    def summary(self) -> str:
        """One line: the counts, and the skipped files' reasons grouped."""
        c = self.counts()
        line = (f"{c['documents']} documents ({', '.join(f'{n} {k}' for k, n in sorted(self.formats.items()))}), "
                f"{c['sections']} sections, {c['resolved']} links resolved into {c['edges']} edges, "
                f"{c['unresolved']} unresolved, {c['skipped']} skipped, {c['warnings']} with warnings, "
                f"{c['ignored']} ignored")
        return line

    def to_text(self) -> str:
        """The whole report as text (for `--report FILE`): summary, then each list sorted."""
        out = [f"folder: {self.root}", self.summary(), ""]
        for title, rows in (("skipped", self.skipped), ("warnings", self.warnings),
                            ("unresolved links", self.unresolved)):
            out.append(f"## {title} ({len(rows)})")
            reasons = Counter(_kind(row[-1]) for row in rows)
            out.extend(f"#   {n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
            out.extend("\t".join(row) for row in sorted(rows))
            out.append("")
        return "\n".join(out)


def _kind(reason: str) -> str:
    """A reason without its particulars (for the grouped counts)."""
    return reason.split(" (")[0].split(":")[0]
