"""Exploratory reader packets (Carrier R01 §10): blinded top-k contexts and a mechanical scorer.

`export_packets` picks held-out families by a fixed hash rule (sha256 of the family id, lowest
first, among families with an `application` query; no look at outcomes), takes the top-k
records of the primary baseline and candidate for that query, and writes one item per
(query, method) with the contexts in a seeded shuffle. Method labels and intended targets
are withheld from packets.jsonl and kept in key.json. `score_answers` checks each returned
answer mechanically: was the intended record selected, and is the quoted qualification found
verbatim in the text supplied to the reader for that item.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from ..errors import InputError


def export_packets(run: Path, out: Path, k: int = 5, n_families: int = 8, seed: int = 20240602,
                   qtype: str = "application") -> dict:
    from .protocol import load_protocol
    from .record import read_rankings, verify_run
    from .runner import read_json, write_json

    run, out = Path(run), Path(out)
    verify_run(run, "test")
    freeze = read_json(run / "freeze.json")
    proto = load_protocol(Path(freeze["protocol_path"]))
    corpus = proto.load_corpus()
    bench = proto.load_benchmark(corpus).subset("test")
    pc = freeze["protocol_data"].get("primary_contrast") or {"baseline": "bm25", "candidate": "bm25"}
    methods = list(dict.fromkeys([pc["baseline"], pc["candidate"]]))
    ranks = read_rankings(run / "test" / "rankings")
    qids = [q for q in bench.queries if bench.type[q] == qtype]
    qids.sort(key=lambda q: hashlib.sha256(bench.family[q].encode()).hexdigest())
    qids = qids[:n_families]
    pos = corpus.position
    items, key = [], {}
    for q in qids:
        for m in methods:
            ids = ranks[m][q]["ids"][:k]
            ctx = [{"id": i, "title": corpus.records[pos[i]].title, "text": corpus.records[pos[i]].text} for i in ids]
            items.append({"question": bench.queries[q], "contexts": ctx, "_q": q, "_m": m})
    rng = random.Random(seed)
    rng.shuffle(items)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "packets.jsonl", "w", encoding="utf-8") as f:
        for n, it in enumerate(items, 1):
            item_id = f"item-{n:03d}"
            key[item_id] = {"qid": it["_q"], "method": it["_m"], "intended_id": bench.single_target(it["_q"]),
                            "target_available": bench.single_target(it["_q"]) in [c["id"] for c in it["contexts"]]}
            f.write(json.dumps({"item": item_id, "question": it["question"], "contexts": it["contexts"],
                                "instructions": "Pick the context id that answers the question and quote, "
                                                "verbatim, one qualification from the supplied text."},
                               ensure_ascii=False) + "\n")
    write_json(out / "key.json", {"seed": seed, "k": k, "rule": "families sorted by sha256(family id)",
                                  "items": key})
    return {"items": len(items), "packets": out / "packets.jsonl", "key": out / "key.json"}


def score_answers(packet_dir: Path, answers: Path) -> dict:
    """answers JSONL: {"item", "selected_id", "quote"} -> per-method counts."""
    packet_dir = Path(packet_dir)
    key = json.loads((packet_dir / "key.json").read_text())["items"]
    supplied = {}
    for line in (packet_dir / "packets.jsonl").read_text(encoding="utf-8").splitlines():
        o = json.loads(line)
        supplied[o["item"]] = " ".join(" ".join((c["title"], c["text"])) for c in o["contexts"])
    per: dict[str, dict] = {}
    rows = []
    for n, line in enumerate(Path(answers).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        a = json.loads(line)
        if a.get("item") not in key:
            raise InputError(f"{answers}:{n}: unknown item {a.get('item')!r}")
        k = key[a["item"]]
        quote = " ".join(str(a.get("quote", "")).split())
        ok_target = a.get("selected_id") == k["intended_id"]
        ok_quote = bool(quote) and quote in " ".join(supplied[a["item"]].split())
        m = per.setdefault(k["method"], {"cases": 0, "target_available": 0, "intended_selected": 0,
                                         "quote_verbatim": 0})
        m["cases"] += 1
        m["target_available"] += int(k["target_available"])
        m["intended_selected"] += int(ok_target)
        m["quote_verbatim"] += int(ok_quote)
        rows.append({"item": a["item"], **k, "intended_selected": ok_target, "quote_verbatim": ok_quote})
    return {"by_method": per, "items": rows}
