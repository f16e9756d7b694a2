"""Serendipity on a collection (issue 47, item 4): the Obsidian hub vault's certificate and the seats
of a few questions about notes.

The index is the demo's (`sidelight.demo.notes_example`: the vault with section windows); its
certificate is built by `sidelight certify INDEX` (chunks = the notes' sections, distance rule = the
notes' links, at least 3 hops), and read here as it is on disk. Each question is asked with dial 28,
seed 42 and a fresh session in a throwaway state file (so marker usage from other runs does not change
the draw); its seats are printed revealed, each with the floor note it hangs off, the marker, and the
two notes' link distance.

    SIDELIGHT_CACHE=.cache .venv/bin/sidelight certify .cache/indexes/obsidian-hub-minilm -o OUT.json
    .venv/bin/python bench/vault_serendipity.py [INDEX] [--question Q ...] --json bench/results/vault-serendipity.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import print_table, write_json  # noqa: E402


def main() -> int:
    from sidelight.config import cache_dir
    from sidelight.demo import NOTES_CONNECTIONS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("index", type=Path, nargs="?", default=cache_dir() / "indexes" / "obsidian-hub-minilm")
    p.add_argument("--question", action="append", help="a question to seat (repeatable; default: the demo's)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    import numpy as np

    from sidelight.index import Index
    from sidelight.serendipity.db import SerDB
    from sidelight.serendipity.reveal import connections, reveal
    from sidelight.serendipity.store import Serendipity

    index = Index.load(args.index)
    ser = Serendipity(index).load()
    cert = ser.require_certificate()
    s = cert.summary
    g = s.get("guards") or {}
    recs = index.corpus.records
    out = {"index": str(args.index), "certificate": ser.meta["certificate"]["id"], "chunking": s.get("chunking"),
           "chunks": s["chunks"], "records": s["records"], "population": s["population"], "graph": s["graph"],
           "boilerplate_sections": s.get("boilerplate_sections"),
           "candidates": s["candidates"], "target_passes": s["target_passes"], "target_reasons": s["target_reasons"],
           "passes_before_guards": g.get("target_passes_before_guards"), "guards": g.get("target"),
           "placebo_passes": s["placebo_passes"], "placebo_passes_before_guards": g.get("placebo_passes_before_guards"),
           "placebo_target_ratio": s["placebo_target_ratio"], "placebo_target_ratio_ci": s["placebo_target_ratio_ci"],
           "verdict": s["verdict"], "seconds": s["seconds"], "sae": s.get("sae"), "questions": {}}
    print_table(["certificate", str(args.index)], [
        ["chunks / notes (notes with > 1 chunk)", f"{s['chunks']} {s.get('chunking')} / {s['records']} ({s['population']})"],
        ["graph rule", s["graph"]],
        ["boilerplate sections left out", (s.get("boilerplate_sections") or {}).get("sections", "-")],
        ["candidates", s["candidates"]],
        ["passes before the guards", g.get("target_passes_before_guards")],
        ["ruled out by guard", g.get("target")],
        ["certified pairs", s["target_passes"]],
        ["placebo passes (5 corpora)", s["placebo_passes"]],
        ["placebo / target (95% interval)", f"{s['placebo_target_ratio']} {s['placebo_target_ratio_ci']}"],
        ["verdict", s["verdict"]],
        ["seconds", s["seconds"]]])
    dist = np.asarray(cert.pairs["distance"])
    out["certified_distance"] = {str(int(d)): int((dist == d).sum()) for d in np.unique(dist)}
    print(f"certified pairs by link distance (-1: unreachable within {cert.config['max_hops']}): "
          f"{out['certified_distance']}")
    ends = np.concatenate([cert.pairs["a"], cert.pairs["b"]]).astype(np.int64)
    per_note = np.bincount(ends, minlength=len(recs))
    out["pairs_per_note"] = {recs[int(r)].title: int(per_note[r]) for r in np.argsort(-per_note, kind="stable")[:5]
                             if per_note[r]}
    print(f"notes at the end of most certified pairs: {out['pairs_per_note']}")
    print("certified pairs:")
    for i in range(len(cert)):
        a, b, f = (int(cert.pairs[k][i]) for k in ("a", "b", "marker"))
        print(f"  {recs[a].title[:50]} <-> {recs[b].title[:50]}  via f{f} {ser.label(f)}  ({int(dist[i])} links apart)")
    if not cert.passed:
        print("the certificate failed: nothing is seated")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for q in args.question or NOTES_CONNECTIONS:
                db = SerDB(Path(tmp) / f"q{len(out['questions'])}.sqlite")
                r = connections(ser, q, dial=28, session_id="bench", seed=42, db=db)
                shown = reveal(db, r["trace_id"], "0" * 64)
                seats = []
                for seat in shown["seated"]:
                    floor_title = recs[index.corpus.position[seat["floor_end"]]].title
                    seats.append({"id": seat["id"], "title": recs[seat["position"]].title, "floor_end": seat["floor_end"],
                                  "floor_title": floor_title, "marker": seat["marker"], "label": seat["label"],
                                  "distance": int(dist[int(seat["pair"])]),
                                  "seated_text": ser.require_chunks().text(recs, seat["chunk"])[:300]})
                out["questions"][q] = {"filled": r["seating"]["filled"], "floor": r["floor_source"], "seats": seats}
                print(f"\n{q} -- {r['seating']['filled']} seat(s)")
                for st in seats:
                    print(f"  {st['title'][:60]}  <- floor note {st['floor_title'][:60]}  via f{st['marker']} "
                          f"{st['label']}  ({st['distance']} links apart)")
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
