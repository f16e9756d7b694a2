"""Where sidelight's `Index.write` spends its time, stage by stage (the build half of bench/lexical.py).

    python bench/build_stages.py [--corpus scifact-x20] [--rounds 3] [--json OUT]

One process, one thread; the numba kernels are loaded first (timed apart). Each round writes a
fresh index folder; the stages are timed by wrapping the functions `Index.write` calls:

    records     `write_records`: records.jsonl, its offsets, the id and title columns, content hash
                (in a worker thread, beside `lexical`: the two overlap, so stages add up to more than total)
    lexical     `build_lexical_folder`: postings in blocks, BM25 weights (includes the next two)
    tokenize    the raw-token pass (`kernels.RawTokens.__call__`: encoding, compiled split), all chunks
    count       `kernels.count_rows`: each record's distinct terms and their counts, all chunks
    manifest    `store.write_manifest`: every file's sha256 (files hashed in parallel)
    total       `Index.write` wall time (also edges, graph, and opening the result)

To compare with another commit, run this file from a worktree of it (SIDELIGHT_DATA and
SIDELIGHT_CACHE point it at the data and the cached corpus copies when ../shared is not beside it):
`git worktree add /tmp/old REV && cp bench/build_stages.py /tmp/old/bench/ && python /tmp/old/bench/build_stages.py`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import median, now, print_table, write_json  # noqa: E402
from lexical import load_corpus, make_copies  # noqa: E402

STAGES = ("records", "lexical", "tokenize", "count", "manifest", "total")


def _timed(owner, name: str, stage: str, spent: dict[str, float]) -> None:
    """Replace `owner.name` by a wrapper adding its wall time to `spent[stage]`."""
    f = getattr(owner, name)

    def wrapper(*args, **kwargs):
        t0 = now()
        try:
            return f(*args, **kwargs)
        finally:
            spent[stage] += now() - t0

    setattr(owner, name, wrapper)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="scifact-x20", choices=["scifact", "scifact-x20", "scifact-x200", "wordnet-all"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write the stage times here")
    args = ap.parse_args(argv)

    import sidelight.index.index as index_module
    from sidelight.corpus import Corpus, Record
    from sidelight.structures import kernels

    if args.corpus.startswith("scifact-x"):
        make_copies(args.corpus)
    ids, texts = load_corpus(args.corpus)
    corpus = Corpus("bench", [Record(i, "", t) for i, t in zip(ids, texts)])
    t0 = now()
    index_module.warm_kernels()
    kernels_s = now() - t0
    spent = dict.fromkeys(STAGES, 0.0)
    _timed(index_module, "write_records", "records", spent)
    _timed(index_module, "build_lexical_folder", "lexical", spent)
    _timed(kernels.RawTokens, "__call__", "tokenize", spent)
    _timed(kernels, "count_rows", "count", spent)
    _timed(index_module.store, "write_manifest", "manifest", spent)
    rounds = []
    for r in range(args.rounds):
        spent.update(dict.fromkeys(STAGES, 0.0))
        folder = Path(tempfile.mkdtemp(prefix="sidelight-stages-"))
        t0 = now()
        index_module.Index.write(corpus, folder / "idx", progress=False)
        spent["total"] = now() - t0
        shutil.rmtree(folder, ignore_errors=True)
        rounds.append(dict(spent))
        print(f"round {r + 1}/{args.rounds}: " + "  ".join(f"{s} {spent[s]:.2f} s" for s in STAGES),
              file=sys.stderr, flush=True)
    summary = {s: median([x[s] for x in rounds]) for s in STAGES}
    print(f"\n{args.corpus} ({len(corpus):,} records): Index.write by stage, median of {args.rounds} round(s); "
          f"numba kernels loaded first in {kernels_s:.2f} s")
    print_table(["stage", "seconds", "of total"],
                [[s, f"{summary[s]:.2f}", f"{summary[s] / summary['total']:.0%}"] for s in STAGES])
    if args.json:
        write_json(args.json, {"corpus": args.corpus, "records": len(corpus), "kernels_s": kernels_s,
                               "median": summary, "rounds": rounds})
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
