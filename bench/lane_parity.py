"""The lanes' answers (`search_channels`), written to JSON and compared lane for lane with a reference.

`bench/parity.py` checks every method's ranking; this checks what the lanes return on FOLDOC: the
relation-v2 FOLDOC questions and the FOLDOC concept queries, both relation modes (query-aware and
activation), without and with MiniLM vectors (then the dense lane and dense relation seeds join).
Per lane it keeps ids, scores, a relation hit's seed, edge path and score parts, and the lane's
params; trace ids (random) are left out. Run it on the code before a change and after:

    .venv/bin/python bench/lane_parity.py --code /work/base --json /tmp/lanes-before.json
    .venv/bin/python bench/lane_parity.py --json /tmp/lanes-after.json --compare /tmp/lanes-before.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parity import with_vectors  # noqa: E402  (also honours --code)

from _common import print_table, write_json  # noqa: E402

import sidelight  # noqa: E402
from sidelight.corpus.foldoc import load_foldoc  # noqa: E402
from sidelight.index import Index  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 10
ENVELOPE = {"query", "agreement_node_ids", "descriptions", "partial", "coverage"}


def queries() -> dict[str, str]:
    out = {}
    for name in ("relation-v2.jsonl", "foldoc-concepts-v1.jsonl"):
        for line in (ROOT / "benchmarks" / name).read_text(encoding="utf-8").splitlines():
            o = json.loads(line) if line.strip() else None
            if o and o.get("corpus", "foldoc") == "foldoc":
                out[o["qid"]] = o["query"]
    return out


def lanes_of(envelope: dict) -> dict:
    """Each lane of an envelope without its trace id: {lane: {"hits": [...], "params": {...}} or None}."""
    out = {}
    for name, lane in envelope.items():
        if name in ENVELOPE:
            continue
        out[name] = None if lane is None else {"params": lane["params"], "hits": [
            {k: v for k, v in h.items() if k != "passage"} for h in lane["hits"]]}
    out["agreement_node_ids"] = envelope["agreement_node_ids"]
    return out


def run(index: Index, qs: dict[str, str]) -> dict:
    out = {}
    for rank in ("query-aware", "activation"):
        out[rank] = {qid: lanes_of(index.search_channels(qs[qid], LIMIT, rank=rank).to_dict()) for qid in sorted(qs)}
        print(f"  {rank}: {len(qs)} queries", file=sys.stderr)
    return out


def compare(after: dict, before: dict) -> tuple[list[list], bool]:
    rows, same = [], True
    for variant in sorted(set(before) | set(after)):
        for rank in sorted(set(before.get(variant, {})) | set(after.get(variant, {}))):
            a, b = after.get(variant, {}).get(rank, {}), before.get(variant, {}).get(rank, {})
            lanes = sorted({k for d in (*a.values(), *b.values()) for k in d})
            for lane in lanes:
                qids = sorted(set(a) | set(b))
                equal = sum(a.get(q, {}).get(lane, "absent") == b.get(q, {}).get(lane, "absent") for q in qids)
                same &= equal == len(qids)
                rows.append([variant, rank, lane, f"{equal}/{len(qids)}", "yes" if equal == len(qids) else "NO"])
    return rows, same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True, help="write the lanes' answers here")
    ap.add_argument("--compare", type=Path, help="a reference written by this script (e.g. before a refactor)")
    ap.add_argument("--code", type=Path, help="run the sidelight package of this checkout (e.g. a git worktree)")
    ap.add_argument("--no-vectors", action="store_true", help="only the index without vectors (no model needed)")
    args = ap.parse_args()
    qs = queries()
    out = {"sidelight": str(Path(sidelight.__file__).parent), "limit": LIMIT, "queries": len(qs)}
    corpus = load_foldoc()
    print(f"foldoc: {len(corpus)} records, {len(qs)} queries; without vectors", file=sys.stderr)
    out["lanes"] = {"no-vectors": run(Index.build(corpus, progress=False), qs)}
    if not args.no_vectors:
        print("with MiniLM vectors", file=sys.stderr)
        out["lanes"]["minilm"] = run(with_vectors(Index.build(corpus, progress=False), "foldoc"), qs)
    write_json(args.json, out)
    if args.compare:
        rows, same = compare(out["lanes"], json.loads(args.compare.read_text(encoding="utf-8"))["lanes"])
        print_table(["index", "relation rank", "lane", "identical queries", "same"], rows)
        print("every lane identical" if same else "LANES DIFFER")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
