"""Run records kept in the repository (`results/runs/NAME/`) and the README figures they hold.

A run folder is what `sidelight lab all` writes; one made again because its first scoring no longer
exists anywhere carries `rescoring.json` (what it re-scores, why, when, at which commit) and is never
presented as a first scoring. `results/readme-figures.json` ties each held-out figure of the README
to the run and key it comes from:

    {"section": "## The lab", "table": 1, "row": "BM25", "column": 1,
     "run": "foldoc-carrier-v1-rescored-2026-12-06", "key": "methods/bm25/overall/mrr@10", "format": "{:.6f}"}

`check_figures` finds the `table`-th Markdown table under the heading `section`, the row whose first
cell is `row` (bold and code marks ignored), and requires cell `column` to equal the stored value
(times `scale`, when given) formatted with `format`; a figure in prose is an entry with `text`, the
README's sentence with `{}` where the figure stands; each figure is read from the run's `test/result.json` (after the audit
checked the run's record), so an edited figure or an edited ranking fails.

`compress_run` stores a run's rankings compressed in place (`packed`: the columns form, each stage's
rankings sharing the vocabulary of its widest one, or xz where that is smaller), and its stages'
result.json and selection.json and its report's figures/*.svg and report.html as xz; the
record keeps the sha256 of the uncompressed bytes, so the chain and the audit hold unchanged. Committed
runs are stored so.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from ..errors import InputError
from ..store.lock import writer_lock
from .packed import base_of, compress_file, compressible, is_ranking, read_json, vocabulary_base
from .record import verify_report, verify_run

RESCORING = "rescoring.json"


def run_folders(path: Path) -> list[Path]:
    """`path` itself when it is a run folder, else its subfolders that are (sorted by name)."""
    path = Path(path)
    if (path / "freeze.json").is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such run folder")
    runs = sorted(p for p in path.iterdir() if (p / "freeze.json").is_file())
    if not runs:
        raise InputError(f"{path}: neither a run folder (freeze.json) nor a folder of run folders")
    return runs


def _size(run: Path) -> int:
    return sum(p.stat().st_size for p in run.rglob("*") if p.is_file())


def compress_run(run: Path) -> dict:
    """Store every recorded ranking of the run folder `run` in its smallest form (`packed.smallest_form`:
    columns, against the stage's widest ranking when smaller, or xz; plain, gzip, xz or columns with its
    own vocabulary before), and its result.json, selection.json, figures/*.svg and report.html as xz
    (`packed.compressible`), in place, under the run's writer lock. The run is verified first (a run that does not match its record is refused, never
    converted) and again after; each file is replaced atomically (`packed.compress_file`), so a
    conversion stopped at any point leaves a run that verifies, and running it again finishes it.
    Returns {"files": converted now, "before": bytes, "after": bytes}."""
    run = Path(run)
    if not (run / "freeze.json").is_file():
        raise InputError(f"{run}: not a run folder (no freeze.json)")
    with writer_lock(run):
        for pattern in ("*/rankings/.*.tmp", "*/.*.xz.tmp", ".*.xz.tmp"):  # a conversion stopped before its rename
            for stale in run.glob(pattern):
                stale.unlink()
        through = ("test" if (run / "test" / "record.json").is_file() else
                   "dev" if (run / "dev" / "record.json").is_file() else "freeze")
        before = _size(run)
        chain = verify_run(run, through)
        report = verify_report(run) or {}
        n = 0
        for files in (*(chain.get(stage, {}).get("files", {}) for stage in ("dev", "test")), report.get("files", {})):
            rankings = {rel: sha for rel, sha in files.items() if is_ranking(rel)}
            first = vocabulary_base([run / rel for rel in rankings])
            if first is not None:  # the base first, in columns with its own vocabulary; then the others against it
                n += compress_file(first, rankings[first.relative_to(run).as_posix()])
            base = base_of(first) if first is not None else None
            for rel, sha in files.items():
                if compressible(rel) and run / rel != first:
                    n += compress_file(run / rel, sha, base if rel in rankings else None)
        verify_run(run, through)
        verify_report(run)
    return {"files": n, "before": before, "after": _size(run)}


def _git_head(root: Path) -> str | None:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def label_rescoring(out: Path, protocol: Path, reason: str, replaces: str) -> dict:
    """Write `out/rescoring.json` before the run starts: this folder re-scores `replaces`, because `reason`."""
    if not reason.strip():
        raise InputError("--rescoring needs a reason (why the first scoring is not used)")
    out = Path(out)
    if (out / "test").exists():
        raise InputError(f"{out} already holds a held-out scoring; a re-scoring goes into a new folder")
    out.mkdir(parents=True, exist_ok=True)
    info = {"kind": "re-scoring, not a first scoring", "protocol": str(protocol), "replaces": replaces,
            "reason": reason, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": _git_head(Path(__file__).resolve().parents[2])}
    (out / RESCORING).write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return info


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _clean(cell: str) -> str:
    return re.sub(r"[*`]", "", cell).strip()


def readme_table(text: str, section: str, table: int = 1) -> list[list[str]]:
    """The rows (cells) of the `table`-th Markdown table under the heading line `section`."""
    lines = text.splitlines()
    try:
        start = lines.index(section)
    except ValueError:
        raise InputError(f"README: no heading {section!r}") from None
    level = len(section) - len(section.lstrip("#"))
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in lines[start + 1:]:
        if line.startswith("#") and len(line) - len(line.lstrip("#")) <= level:
            break
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            if not re.fullmatch(r"\|[\s\-:|]+\|?", line.strip()):
                current.append(_cells(line))
        else:
            current = None
    if len(tables) < table:
        raise InputError(f"README: section {section!r} has {len(tables)} table(s), not {table}")
    return tables[table - 1]


def stored_value(run: Path, key: str):
    """A value of the run's test/result.json by a slash path (labels may hold dots, not slashes)."""
    value = read_json(Path(run) / "test" / "result.json")  # plain or result.json.xz (`packed`)
    for part in key.split("/"):
        if isinstance(value, list):
            value = value[int(part)]
        elif part not in value:
            raise InputError(f"{run}: test/result.json has no {key!r} (missing {part!r})")
        else:
            value = value[part]
    return value


def check_figures(readme: Path, table: Path, runs_root: Path) -> list[str]:
    """One line per README figure that is not its run's stored value (empty: every figure matches)."""
    text = Path(readme).read_text(encoding="utf-8")
    problems = []
    flat = " ".join(text.split())
    for n, f in enumerate(json.loads(Path(table).read_text(encoding="utf-8"))["figures"], 1):
        want = f["format"].format(stored_value(Path(runs_root) / f["run"], f["key"]) * f.get("scale", 1))
        if "text" in f:  # a figure in prose: the sentence, with the stored value in it, must be in the README
            sentence = " ".join(f["text"].replace("{}", want).split())
            if sentence not in flat:
                problems.append(f"figure {n}: the README does not say {sentence!r} (run {f['run']}, {f['key']})")
            continue
        where = f"{f['section']} table {f.get('table', 1)}, row {f['row']!r}, column {f['column']}"
        rows = [r for r in readme_table(text, f["section"], f.get("table", 1)) if _clean(r[0]) == f["row"]]
        if len(rows) != 1:
            problems.append(f"figure {n} ({where}): {len(rows)} README rows named {f['row']!r}")
            continue
        shown = _clean(rows[0][f["column"]]) if f["column"] < len(rows[0]) else None
        if shown != want:
            problems.append(f"figure {n} ({where}): README says {shown!r}, run {f['run']} holds {want!r} ({f['key']})")
    return problems
