"""The demo question's seats before and after issue 47 (whale guards + seats that bear on the question).

Before: the certificate as it passed the test (its pairs plus those the guards ruled out) and the
old profile rule (a marker active in the question or in 2 of the 28 floor passages). After: the
guarded certificate and the bearing rule (`reveal.BEARING`). Both with dial 28, seed 42 and a fresh
session in a throwaway state file, so marker usage from other runs does not change the draw. Also
counts, among the pairs the after-profile would have made eligible, how many each guard refused.

    .venv/bin/python bench/demo_seats.py --json bench/results/demo_seats.json ["1/2000 in UK have abnormal PrP positivity"]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import write_json  # noqa: E402

DEMO_QUESTION = "1/2000 in UK have abnormal PrP positivity"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("questions", nargs="*", default=[DEMO_QUESTION])
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    import numpy as np

    from sidelight.config import dataset_path
    from sidelight.corpus.beir import load_beir_corpus
    from sidelight.demo import cached_index
    from sidelight.serendipity.db import SerDB
    from sidelight.serendipity.guards import GUARDS
    from sidelight.serendipity.reveal import BEARING, connections, get_floor, positions_of, reveal
    from sidelight.serendipity.store import Serendipity

    index = cached_index(load_beir_corpus(dataset_path("scifact")), "minilm", dense="minilm")
    ser = Serendipity(index).load()
    cert = ser.certificate
    guarded = cert.pairs
    ruled = cert.ruled if cert.ruled is not None else {k: np.zeros(0) for k in ("a", "b", "marker", "guard")}
    union = {k: np.concatenate([guarded[k], ruled[k]]) for k in guarded} if cert.ruled is not None else guarded
    recs = index.corpus.records
    out = {"bearing": BEARING, "certificate": ser.meta["certificate"]["id"], "questions": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for q in args.questions:
            floor = get_floor(index, q)
            res = {}
            for name, pairs, bearing in (("before", union, None), ("after", guarded, BEARING)):
                cert.pairs = pairs
                db = SerDB(Path(tmp) / f"{name}.sqlite")
                r = connections(ser, q, dial=28, session_id="bench", seed=42, db=db, floor=floor, bearing=bearing)
                shown = reveal(db, r["trace_id"], "0" * 64)
                res[name] = {"filled": r["seating"]["filled"],
                             "seats": [{"id": s["id"], "title": recs[s["position"]].title, "floor_end": s["floor_end"],
                                        "marker": s["marker"], "label": s["label"]} for s in shown["seated"]],
                             "panel_header": shown["panel"].split("\n\n")[0]}
            cert.pairs = guarded
            # pairs the after-profile would seat but the guards refused
            qvec = ser.embedder().encode([q], kind="query")[0]
            from sidelight.serendipity.reveal import best_chunk
            prof = set(ser.query_markers(q, qvec))
            for pos in positions_of(index, floor)[:BEARING]:
                row = ser.codes[best_chunk(ser, pos, qvec)]
                prof |= {int(f) for f in row.indices[row.data > 0]}
            fl = np.asarray(positions_of(index, floor))
            ra, rb, rm = (np.asarray(ruled[k], np.int64) for k in ("a", "b", "marker"))
            one = np.isin(ra, fl) ^ np.isin(rb, fl)
            el = one & np.isin(rm, list(prof))
            res["refused_by_guard"] = {g: int((el & (ruled["guard"] == g)).sum()) for g in GUARDS}
            res["refused_by_guard_any_profile"] = {g: int((one & (ruled["guard"] == g)).sum()) for g in GUARDS}
            out["questions"][q] = res
            for name in ("before", "after"):
                print(f"\n{q} -- {name}: {res[name]['filled']} seat(s)\n{res[name]['panel_header']}")
                for s in res[name]["seats"]:
                    print(f"  {s['id']} {s['title'][:70]}  via f{s['marker']} {s['label']}  (floor end {s['floor_end']})")
            print(f"refused by guard (eligible under the after-profile): {res['refused_by_guard']}")
            print(f"refused by guard (one end on the floor, any marker): {res['refused_by_guard_any_profile']}")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
