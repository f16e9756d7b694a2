"""Mechanical checks of relation-v1 questions against their arcs (no retrieval involved).

    python benchmarks/relation-v1-check.py [QUESTIONS.jsonl ...]

Default: benchmarks/relation-v1.jsonl, which must hold one question per arc of the quota (96 FOLDOC,
66 WordNet arcs) after skips.
Given part files, checks only the rows in them. Exit 1 with one line per failure. Also prints
the word overlap of each corpus's questions with their targets' texts (median and quartiles).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
ARCS = HERE / "relation-v1-arcs.jsonl"
SKIPS = HERE / "relation-v1-skips.json"
QUOTA = {"foldoc": 96, "wordnet": 66}
FIELDS = {"qid", "family", "type", "split", "query", "intended_id", "intended_name", "anchor_id", "corpus",
          "relation", "form"}
RUN = 4  # no run of this many consecutive tokens shared with the target's text
STOP = set("a an and are as at be by for from has have in is it its of on or that the this to was were "
           "what which who with".split())


def tokens(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


def contains(q: list[str], name: str) -> bool:
    """`name` as a contiguous token run of `q`; a name of stop words only is not checked."""
    n = tokens(name)
    if not n or all(t in STOP for t in n):
        return False
    return any(q[i:i + len(n)] == n for i in range(len(q) - len(n) + 1))


def runs(toks: list[str], k: int) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + k]) for i in range(len(toks) - k + 1)}


def overlap(q: list[str], text: str) -> float:
    """Share of the question's content tokens that occur in `text`."""
    content = [t for t in q if t not in STOP]
    vocab = set(tokens(text))
    return sum(t in vocab for t in content) / len(content) if content else 0.0


def expected(arcs: list[dict], skips: dict[str, dict]) -> dict[str, dict]:
    """qid -> the arc packet it must be written from. A skipped arc (relation-v1-skips.json: reason
    and replacement) is replaced by the named reserve arc, which takes its split and form, or by
    nothing when no reserve arc of its kind could be written."""
    by_arc = {a["arc"]: a for a in arcs}
    out = {}
    for corpus, quota in QUOTA.items():
        for a in [a for a in arcs if a["corpus"] == corpus][:quota]:
            skip = skips.get(a["arc"])
            if skip is None:
                out[a["arc"]] = a
            elif skip["replacement"]:
                sub = by_arc[skip["replacement"]]
                if sub["position"] < quota or sub["corpus"] != corpus or (
                        corpus == "wordnet" and sub["relation"] != a["relation"]):
                    raise SystemExit(f"{a['arc']}: replacement {sub['arc']} is not a reserve arc of its kind")
                out[sub["arc"]] = {**sub, "split": a["split"], "form": a["form"]}
    return out


def check(rows: list[dict], want: dict[str, dict], complete: bool) -> list[str]:
    bad = []
    seen = set()
    for r in rows:
        qid = r.get("qid")
        where = f"{qid}:"
        if set(r) != FIELDS:
            bad.append(f"{where} fields {sorted(set(r) ^ FIELDS)} differ from {sorted(FIELDS)}")
            continue
        a = want.get(qid)
        if a is None:
            bad.append(f"{where} not an arc to write (skipped, reserve or unknown)")
            continue
        seen.add(qid)
        exp = {"family": a["arc"], "type": "relation", "split": a["split"], "intended_id": a["target"]["id"],
               "intended_name": a["target"]["title"], "anchor_id": a["anchor"]["id"], "corpus": a["corpus"],
               "relation": a["relation"], "form": a["form"]}
        for k, v in exp.items():
            if r[k] != v:
                bad.append(f"{where} {k} is {r[k]!r}, the arc says {v!r}")
        q = tokens(r["query"])
        if not 5 <= len(q) <= 30:
            bad.append(f"{where} {len(q)} tokens (need 5..30)")
        for name in [a["target"]["title"], *a["target"]["aliases"]]:
            if contains(q, name):
                bad.append(f"{where} names the target ({name!r})")
        if a["form"] == "describes":
            for name in [a["anchor"]["title"], *a["anchor"]["aliases"]]:
                if contains(q, name):
                    bad.append(f"{where} form 'describes' but names the anchor ({name!r})")
        shared = runs(q, RUN) & runs(tokens(a["target"]["text"]), RUN)
        if shared:
            bad.append(f"{where} copies {RUN} tokens of the target's text: {' '.join(sorted(shared)[0])!r}")
    if complete:
        bad += [f"{qid}: no question" for qid in want if qid not in seen]
    return bad


def main(argv: list[str]) -> int:
    arcs = [json.loads(line) for line in ARCS.read_text(encoding="utf-8").splitlines()]
    skips = json.loads(SKIPS.read_text(encoding="utf-8")) if SKIPS.exists() else {}
    want = expected(arcs, skips)
    files = [Path(p) for p in argv] or [HERE / "relation-v1.jsonl"]
    rows = [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = check(rows, want, complete=not argv)
    for line in bad:
        print(line)
    for corpus in QUOTA:
        ov = [overlap(tokens(r["query"]), want[r["qid"]]["target"]["text"]) for r in rows
              if r.get("corpus") == corpus and r.get("qid") in want]
        if len(ov) >= 2:
            q1, med, q3 = statistics.quantiles(ov, n=4)
            print(f"{corpus}: {len(ov)} questions; content-word overlap with the target's text "
                  f"median {med:.0%} (quartiles {q1:.0%}-{q3:.0%})")
    print("OK" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
