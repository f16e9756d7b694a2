"""How long a folder takes to index, and one changed note to sync, with peak memory.

    python bench/sync.py [--folder ../shared/data/obsidian-hub] [--dense] [--json bench/results/sync.json]

Copies the folder to a scratch place (the shared data is read-only), runs `sidelight index COPY -o IDX`
(with `--dense minilm` when asked), appends a sentence to one note, and runs `sidelight sync COPY IDX`;
then renames one note and syncs again. Each step is a fresh process timed by GNU time (wall seconds,
peak resident memory); the sync's own output line is kept.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import print_table, write_json  # noqa: E402

SIDELIGHT = str(Path(sys.executable).with_name("sidelight"))


def timed(args: list[str]) -> dict:
    """Wall seconds and peak RSS (MB) of `sidelight ARGS` in a fresh process, and its last output line."""
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", SIDELIGHT, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"sidelight {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    line = next(x for x in out.stderr.splitlines() if x.startswith("TIME "))
    seconds, kb = line.split()[1:]
    last = (out.stdout.strip().splitlines() or [""])[-1]
    return {"seconds": float(seconds), "peak_mb": int(kb) / 1024, "output": last}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=str(HERE.parent.parent / "shared" / "data" / "obsidian-hub"))
    ap.add_argument("--dense", action="store_true", help="index with --dense minilm (section windows)")
    ap.add_argument("--note", default="05 - Concepts/Backlinks.md", help="the note that is changed, then renamed")
    ap.add_argument("--json", default="bench/results/sync.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sidelight-sync-"))
    try:
        copy, idx = work / "vault", work / "idx"
        shutil.copytree(args.folder, copy)
        note = copy / args.note
        if not note.is_file():
            note = sorted(copy.rglob("*.md"))[0]
        extra = ["--dense", "minilm"] if args.dense else []
        steps = {"index": timed(["index", str(copy), "-o", str(idx), "-q", *extra])}
        with open(note, "a", encoding="utf-8") as f:
            f.write("\nOne more sentence, about pinch zoom and text size.\n")
        steps["sync one changed note"] = timed(["sync", str(copy), str(idx), "-q"])
        note.rename(note.with_name("Renamed " + note.name))
        steps["sync one renamed note"] = timed(["sync", str(copy), str(idx), "-q"])
        steps["sync, nothing changed"] = timed(["sync", str(copy), str(idx), "-q"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    label = "BM25 + MiniLM sections" if args.dense else "BM25 only"
    print_table(["step", "seconds", "peak MB", "output"],
                [[f"{k} ({label})", f"{v['seconds']:.2f}", f"{v['peak_mb']:.0f}", v["output"][:90]] for k, v in steps.items()])
    write_json(args.json, {"folder": args.folder, "dense": args.dense, "steps": steps})


if __name__ == "__main__":
    main()
