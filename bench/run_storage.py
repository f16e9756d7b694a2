"""What the committed run records weigh in each stored form of their files (issue 44: "well under 50 MB").

Copies `results/` (and README.md beside it, for the figure check) into a scratch folder, measures the
copy's apparent size, runs `sidelight lab compress` over every run folder of the copy (rankings to the
columns form, or xz where smaller; result.json, selection.json, figures/*.svg and report.html to xz), measures
again (apparent bytes, and bytes stored once: files with the same content counted once, as git stores them),
and runs `sidelight lab audit --figures` on the converted copy. The committed `results/` is never
touched. Per run: MB before and after, the ratio, the rankings' share, the stages' JSON (result.json,
selection.json), the figures' svg and the report pages before and after, how many rankings went to columns and how many
stayed xz; and where the columns bytes go (compressed bytes per stream, summed over every columns file).

    nice -n 10 .venv/bin/python bench/run_storage.py [--results results] [--json bench/results/run-storage.json]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sidelight.cli import main as cli  # noqa: E402
from sidelight.lab.columns import stream_sizes  # noqa: E402
from sidelight.lab.committed import run_folders  # noqa: E402


def apparent(folder: Path) -> int:
    """Bytes of every file under `folder` (`du -s --apparent-size -B1`, less the directories' own size)."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def stored_once(folder: Path) -> int:
    """Bytes of every distinct file content under `folder` (a file equal to another counted once: git keeps
    one blob for both; the same protocol's unchanged rows recur across re-scorings)."""
    sizes = {hashlib.sha256(p.read_bytes()).hexdigest(): p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()}
    return sum(sizes.values())


def rankings_bytes(run: Path) -> int:
    return sum(p.stat().st_size for p in run.glob("*/rankings/*") if p.is_file())


def json_bytes(run: Path) -> int:
    """The stages' result.json and selection.json, in whichever form is stored."""
    return sum(p.stat().st_size for n in ("result.json", "selection.json") for p in run.glob(f"*/{n}*") if p.is_file())


def svg_bytes(run: Path) -> int:
    return sum(p.stat().st_size for p in run.glob("figures/*.svg*") if p.is_file())


def html_bytes(run: Path) -> int:
    return sum(p.stat().st_size for p in run.glob("report.html*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="the results folder to copy")
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "run-storage.json")
    ap.add_argument("--keep", type=Path, default=None, help="convert into this folder (kept) instead of a temporary one")
    a = ap.parse_args()
    os.chdir(ROOT)  # protocol paths in freeze.json are relative to the repository
    scratch = a.keep or Path(tempfile.mkdtemp(prefix="run-storage-"))
    copy = scratch / "results"
    if copy.exists():
        raise SystemExit(f"{copy} exists; name an empty folder")
    shutil.copytree(a.results, copy)
    shutil.copy2(a.results.parent / "README.md", scratch / "README.md")
    before_total, before_once = apparent(copy), stored_once(copy)
    runs = run_folders(copy / "runs")
    before = {r.name: (apparent(r), rankings_bytes(r), json_bytes(r), svg_bytes(r), html_bytes(r)) for r in runs}
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(["lab", "compress", str(copy / "runs")])
    seconds = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"lab compress failed (exit {code})")
    after_total, after_once = apparent(copy), stored_once(copy)
    streams: dict[str, int] = {}
    rows, table = [], []
    for r in runs:
        cols = sorted(r.glob("*/rankings/*.jsonl.cols"))
        xz = sorted(r.glob("*/rankings/*.jsonl.xz"))
        for p in cols:
            for k, v in stream_sizes(p.read_bytes()).items():
                streams[k] = streams.get(k, 0) + v
        b, rb, jb, sb, hb = before[r.name]
        aft, ra, ja, sa, ha = apparent(r), rankings_bytes(r), json_bytes(r), svg_bytes(r), html_bytes(r)
        rows.append({"run": r.name, "bytes_before": b, "bytes_after": aft, "rankings_before": rb, "rankings_after": ra,
                     "json_before": jb, "json_after": ja, "svg_before": sb, "svg_after": sa, "html_before": hb,
                     "html_after": ha, "columns_files": len(cols), "xz_files": len(xz)})
        table.append([r.name, f"{b / 1e6:.2f}", f"{aft / 1e6:.2f}", f"{aft / b:.3f}", f"{rb / 1e6:.2f}", f"{ra / 1e6:.2f}",
                      f"{ra / rb:.3f}" if rb else "-", f"{jb / 1e6:.2f}", f"{ja / 1e6:.2f}", f"{sb / 1e6:.2f}",
                      f"{sa / 1e6:.2f}", f"{hb / 1e6:.2f}", f"{ha / 1e6:.2f}", f"{len(cols)}/{len(xz)}"])
    rb_all, ra_all = sum(x["rankings_before"] for x in rows), sum(x["rankings_after"] for x in rows)
    table.append(["ALL runs", f"{sum(x['bytes_before'] for x in rows) / 1e6:.2f}",
                  f"{sum(x['bytes_after'] for x in rows) / 1e6:.2f}",
                  f"{sum(x['bytes_after'] for x in rows) / sum(x['bytes_before'] for x in rows):.3f}",
                  f"{rb_all / 1e6:.2f}", f"{ra_all / 1e6:.2f}", f"{ra_all / rb_all:.3f}",
                  *(f"{sum(x[k] for x in rows) / 1e6:.2f}" for k in ("json_before", "json_after", "svg_before", "svg_after",
                                                                    "html_before", "html_after")),
                  f"{sum(x['columns_files'] for x in rows)}/{sum(x['xz_files'] for x in rows)}"])
    print_table(["run", "MB before", "MB after", "ratio", "rankings MB before", "rankings MB after", "ratio",
                 "JSON MB before", "JSON MB after", "svg MB before", "svg MB after", "html MB before",
                 "html MB after", "cols/xz rankings"], table)
    print(f"\nresults/ (apparent, every file): {before_total / 1e6:.2f} MB -> {after_total / 1e6:.2f} MB "
          f"({after_total / before_total:.3f}); stored once (equal files counted once, as git keeps them): "
          f"{before_once / 1e6:.2f} MB -> {after_once / 1e6:.2f} MB; lab compress took {seconds:.0f} s")
    print("columns bytes by stream: " + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in streams.items()))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        audit_code = cli(["lab", "audit", str(copy / "runs"), "--figures", str(copy / "readme-figures.json")])
    summary = [line for line in out.getvalue().splitlines() if line.startswith("README figures")]
    print(f"lab audit --figures on the converted copy: exit {audit_code}; {summary[-1] if summary else ''}")
    write_json(a.json, {"results_bytes_before": before_total, "results_bytes_after": after_total,
                        "stored_once_bytes_before": before_once, "stored_once_bytes_after": after_once,
                        "compress_seconds": round(seconds, 1), "audit_exit": audit_code,
                        "audit_figures": summary[-1] if summary else None, "columns_stream_bytes": streams,
                        "runs": rows, "copy": str(copy) if a.keep else None})
    if not a.keep:
        shutil.rmtree(scratch)
    return 0 if audit_code == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
