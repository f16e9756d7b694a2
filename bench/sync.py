"""How long a folder takes to index, and one changed note to sync, with peak memory.

    python bench/sync.py [--folder ../shared/data/obsidian-hub] [--dense] [--json bench/results/sync.json]

Copies the folder to a scratch place (the shared data is read-only), runs `sidelight index COPY -o IDX`
(with `--dense minilm` when asked), then syncs with nothing changed, after appending a sentence to one
note, after adding a note, after deleting one, after renaming one, and with nothing changed again.
Each step is a fresh process timed by GNU time (wall seconds, CPU seconds (user + system: what the
step costs, whatever else the machine runs), peak resident memory); the sync's own output line is
kept. Python's bytecode cache is allowed, and one untimed `sidelight --help` fills it first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import print_table, write_json  # noqa: E402

SIDELIGHT = str(Path(sys.executable).with_name("sidelight"))


def timed(args: list[str]) -> dict:
    """Wall seconds and peak RSS (MB) of `sidelight ARGS` in a fresh process, and its last output line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M", SIDELIGHT, *args], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"sidelight {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    line = next(x for x in out.stderr.splitlines() if x.startswith("TIME "))
    seconds, user, system, kb = line.split()[1:]
    first = (out.stdout.strip().splitlines() or [""])[0]
    return {"seconds": float(seconds), "cpu_seconds": round(float(user) + float(system), 2),
            "peak_mb": int(kb) / 1024, "output": first}


def _manifest(index: Path) -> dict:
    generation = json.loads((index / "index.json").read_text())["generation"]
    return json.loads((index / generation / "manifest.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", default=str(HERE.parent.parent / "shared" / "data" / "obsidian-hub"))
    ap.add_argument("--dense", action="store_true", help="index with --dense minilm (section windows)")
    ap.add_argument("--note", default="05 - Concepts/Backlinks.md", help="the note that is changed, then renamed")
    ap.add_argument("--index-from", type=Path, metavar="IDX",
                    help="start from a copy of this index of the same folder instead of indexing it (e.g. one "
                         "built with --dense minilm, too slow to build on a shared machine); an index without "
                         "a folder state gets one from an untimed first sync")
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
        subprocess.run([SIDELIGHT, "--help"], capture_output=True, env={
            k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
        sync = ["sync", str(copy), str(idx), "-q"]
        if args.index_from is None:
            steps = {"index": timed(["index", str(copy), "-o", str(idx), "-q", *extra])}
        else:
            shutil.copytree(args.index_from, idx)
            steps = {}
            prime = sorted(copy.rglob("*.md"))[-1]
            prime.write_text(prime.read_text(encoding="utf-8") + "\n", encoding="utf-8")
            timed(sync)  # untimed: the index's first sync that writes keeps the folder state
        time.sleep(2.5)  # files older than the folder state's racy window, as a vault's usually are
        steps["sync, nothing changed"] = timed(sync)
        with open(note, "a", encoding="utf-8") as f:
            f.write("\nOne more sentence, about pinch zoom and text size.\n")
        steps["sync one changed note"] = timed(sync)
        (note.parent / "A new note.md").write_text("# A new note\n\nAbout [[Backlinks]] and pinch zoom.\n",
                                                   encoding="utf-8")
        steps["sync one added note"] = timed(sync)
        (note.parent / "A new note.md").unlink()
        steps["sync one deleted note"] = timed(sync)
        note.rename(note.with_name("Renamed " + note.name))
        steps["sync one renamed note"] = timed(sync)
        steps["sync, nothing changed again"] = timed(sync)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    dense = args.dense or (args.index_from is not None and "dense" in _manifest(args.index_from))
    label = "BM25 + MiniLM sections" if dense else "BM25 only"
    print_table(["step", "seconds", "CPU s", "peak MB", "output"],
                [[f"{k} ({label})", f"{v['seconds']:.2f}", f"{v['cpu_seconds']:.2f}", f"{v['peak_mb']:.0f}",
                  v["output"][:90]] for k, v in steps.items()])
    write_json(args.json, {"folder": args.folder, "dense": dense, "index_from": str(args.index_from or ""),
                           "steps": steps})


if __name__ == "__main__":
    main()
