"""Does `make demo` print the README's figures? The demo's table and certificate line, against the README.

Runs the demo's own evaluation (`sidelight.demo`: the same index, methods, metrics and depth) and reads
the certificate of the demo index (`Serendipity(index).ensure()`: trained and certified when missing,
as the demo does), then compares every cell of the README's "What `make demo` prints" table and the
certificate figures of the paragraph below it. Prints each difference; exit 1 when there is one.

    .venv/bin/python bench/demo_figures.py --json bench/results/demo-figures.json
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## What `make demo` prints"


def certificate_phrase(s: dict) -> str:
    """The README's wording of the demo's certificate line."""
    ratio, ci = s["placebo_target_ratio"], s["placebo_target_ratio_ci"]
    return (f"**{s['verdict']}**, {s['target_passes']:,} certified pairs of\n{s['candidates']:,} candidates, placebo mean "
            f"{s['placebo_mean']:.1f} = {ratio:.3f}× target (95% interval {ci[0]:.3f}–{ci[1]:.3f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the comparison here")
    args = ap.parse_args()

    from sidelight.config import dataset_path
    from sidelight.corpus.beir import beir_split, load_beir_corpus
    from sidelight.demo import METHODS, METRICS, cached_index
    from sidelight.lab.committed import readme_table
    from sidelight.lab.evaluate import evaluate_method
    from sidelight.methods import get_method
    from sidelight.serendipity.store import Serendipity
    from sidelight.store.lock import writer_lock

    folder = dataset_path("scifact")
    queries, qrels = beir_split(folder, "test")
    index = cached_index(load_beir_corpus(folder), "minilm", dense="minilm")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {re.sub(r"[*`]", "", r[0]).split()[0]: r[1:] for r in readme_table(readme, SECTION)[1:]}
    diffs, table = [], {}
    for method in METHODS:
        r = evaluate_method(index, get_method(method), queries, qrels, METRICS, depth=1000)
        printed = [f"{r.metrics[m]:.4f}" for m in METRICS]
        table[method] = printed
        if rows.get(method) != printed:
            diffs.append(f"{method}: demo prints {printed}, README has {rows.get(method)}")
    with writer_lock(index.path):
        s = Serendipity(index).ensure().certificate.summary
    phrase = certificate_phrase(s)
    if " ".join(phrase.split()) not in " ".join(readme.split()):
        diffs.append(f"certificate: demo gives {' '.join(phrase.split())!r}, not in the README")
    for d in diffs:
        print("DIFFERS", d)
    print(f"{len(METHODS)} table rows and the certificate line: "
          + ("all equal the README" if not diffs else f"{len(diffs)} difference(s)"))
    if args.json:
        write_json(args.json, {"table": table, "certificate": {k: s[k] for k in (
            "verdict", "target_passes", "candidates", "placebo_mean", "placebo_target_ratio",
            "placebo_target_ratio_ci")}, "differences": diffs})
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
