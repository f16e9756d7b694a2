"""Opening an index: open time, first query, and a one-off `sidelight search` from a cold process.

    python bench/open.py [--json OUT] [--corpora wordnet,scifact-x20] [--cold N] [--rebuild]

For each corpus an index folder is built once (`Index.build(...).save`, cached under the cache
dir, keyed by the index format version) and then, in fresh single-thread child processes:

- `open_ms`: `Index.load(folder)` after the imports (the cheap integrity check included);
- `first_ms`: the first BM25 top-10 query after opening (what a one-off call pays: caches,
  the numpy reference path until numba is warm, see `sidelight.structures.kernels.Gate`);
- `import_s`: `import sidelight` in that child;
- `cold_s` p50/p95: wall time of N fresh `sidelight search FOLDER QUERY -k 10` processes, the
  whole command (interpreter start, imports, open, query, table), queries cycling through the
  300 SciFact test queries;
- `check_s`: `sidelight check FOLDER` (every file re-hashed in full), for scale;
- `disk_mb`: the generation folder's size.

Corpora: "wordnet" (WordNet 3.0 nouns, 82,115 synsets, from Debian's wordnet-base) and
"scifact-x20" (103,660 documents of reshuffled SciFact words, as in `bench/lexical.py`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import SINGLE_THREAD, median, now, peak_mb, print_table, run_child, write_json  # noqa: E402

CORPORA = ["wordnet", "scifact-x20"]
K = 10


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def folder_for(corpus: str) -> Path:
    from sidelight.config import cache_dir
    from sidelight.index.store import VERSION

    return cache_dir() / "bench" / "open" / f"{corpus}-v{VERSION}"


def queries() -> list[str]:
    from lexical import test_queries

    return test_queries()


def build(corpus: str, dest: Path) -> dict:
    """Build and save the index of `corpus` at `dest` (run in a child: its peak memory is the build's)."""
    from sidelight.corpus import Corpus, Record
    from sidelight.index import Index

    t0 = now()
    if corpus == "wordnet":
        from sidelight.corpus.sources import load_source

        source = load_source("wordnet")
    else:
        from lexical import load_corpus, make_copies

        make_copies(corpus)
        ids, texts = load_corpus(corpus)
        source = Corpus(corpus, [Record(i, "", t) for i, t in zip(ids, texts)])
    loaded = now() - t0
    t0 = now()
    index = Index.build(source, progress=False)
    index.save(dest)
    return {"read_s": loaded, "build_save_s": now() - t0, "build_peak_mb": peak_mb(), "records": len(source)}


def open_child(folder: str) -> dict:
    t0 = now()
    from sidelight import Index

    imported = now() - t0
    qs = queries()
    t0 = now()
    index = Index.load(Path(folder))
    opened = now() - t0
    t0 = now()
    index.search(qs[0], k=K)
    first = now() - t0
    return {"import_s": imported, "open_ms": opened * 1000, "first_ms": first * 1000,
            "open_peak_mb": peak_mb()}


def cold_runs(folder: Path, n: int) -> list[float]:
    """Wall seconds of `n` fresh `sidelight search` processes, after one untimed run that writes
    the bytecode caches, as any installed command has them (even where PYTHONDONTWRITEBYTECODE is
    set, which would otherwise compile every module from source on every run)."""
    import os

    exe = str(Path(sys.executable).parent / "sidelight")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | SINGLE_THREAD
    qs = queries()
    out = []
    for i in range(-1, n):
        t0 = now()
        subprocess.run([exe, "search", str(folder), qs[i % len(qs)], "-k", str(K)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        if i >= 0:
            out.append(now() - t0)
    return out


def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="OUT", help="write {corpus: {open_ms, first_ms, cold_p50_s, ...}}")
    ap.add_argument("--corpora", default=",".join(CORPORA), help=f"comma-separated, of {', '.join(CORPORA)}")
    ap.add_argument("--cold", type=int, default=20, help="fresh `sidelight search` processes per corpus (default 20)")
    ap.add_argument("--opens", type=int, default=5, help="fresh open + first-query children per corpus (default 5)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached index folders")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        mode, *rest = args.child
        print(json.dumps(build(rest[0], Path(rest[1])) if mode == "build" else open_child(rest[0])))
        return 0

    script = str(Path(__file__).resolve())
    corpora = [c for c in args.corpora.split(",") if c]
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        ap.error(f"unknown corpus {unknown[0]!r}; choose from {', '.join(CORPORA)}")
    summary, rows = {}, []
    for corpus in corpora:
        folder = folder_for(corpus)
        built = {}
        if args.rebuild or not (folder / "index.json").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            built = run_child(script, ["build", corpus, str(folder)], timeout=3600)
            print(f"{corpus}: built {built['records']:,} records in {built['build_save_s']:.1f} s", file=sys.stderr)
        opens = [run_child(script, ["open", str(folder)]) for _ in range(args.opens)]
        run_child(script, ["open", str(folder)])  # warm the page cache and numba's disk cache alike
        cold = cold_runs(folder, args.cold)
        t0 = now()
        subprocess.run([str(Path(sys.executable).parent / "sidelight"), "check", str(folder)], check=True,
                       stdout=subprocess.DEVNULL)
        check_s = now() - t0
        m = {key: median([o[key] for o in opens]) for key in ("import_s", "open_ms", "first_ms", "open_peak_mb")}
        m.update(built)
        m.update(cold_p50_s=median(cold), cold_p95_s=percentile(cold, 0.95), cold_runs=len(cold),
                 check_s=check_s, disk_mb=disk_mb(folder))
        summary[corpus] = m
        rows.append([corpus, f"{m['open_ms']:.1f}", f"{m['first_ms']:.1f}", f"{m['open_ms'] + m['first_ms']:.1f}",
                     f"{m['import_s']:.2f}", f"{m['cold_p50_s']:.2f}", f"{m['cold_p95_s']:.2f}",
                     f"{m['check_s']:.2f}", f"{m['disk_mb']:.0f}"])
    print(f"\nopening an index (medians of {args.opens} fresh children; cold = {args.cold} fresh `sidelight search` "
          f"processes, 1 thread)")
    print_table(["corpus", "open ms", "1st query ms", "open+1st ms", "import s", "cold p50 s", "cold p95 s",
                 "check s", "disk MB"], rows)
    if args.json:
        write_json(args.json, summary)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
