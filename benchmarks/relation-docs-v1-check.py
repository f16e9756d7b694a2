"""Mechanical checks of the relation-docs-v1 questions (no retrieval involved): they read only the
question file, the sampled arcs (relation-docs-v1-arcs.jsonl), the skips and the Python docs' pages
(read as the lab reads them: relation-docs-v1-sample.py's `load`, protocols/notes-v1-python.json's
corpus).

    python benchmarks/relation-docs-v1-check.py [QUESTIONS.jsonl]

Default: benchmarks/relation-docs-v1.jsonl. Exit 1 with one line per failure. relation-notes-v1's
checks (benchmarks/relation-notes-v1-check.py) on this collection; the lexical rules are notes-v1's
for python-docs, imported from benchmarks/notes-v1-check.py (same tokens, stopwords, page names
(<title>, h1, both halves of 'module — description'), headings of the main body, main body text):

  * fields: qid (RD001…, unique), collection (python-docs), family (the arc's source page A), kind
    (relation-out | relation-in), split, query, targets ([{"doc", "section": null}]), anchor, arc
    (the arc's position);
  * every question follows a picked arc: relation-out = anchor A, target B; relation-in = anchor B,
    target A; kind = the arc's `ask`; the link re-resolved from the pages (A -> B is an edge of
    `load_folder`); every non-reserve arc has a question or a skip with a reason
    (relation-docs-v1-skips.json), and skipped arcs are replaced by reserve arcs in order (the first
    len(skips) reserve arcs, no others);
  * no page of a dev python-docs question of notes-v1 is an anchor or a target (the sampler's
    `used_before`), and every arc asked is a candidate of the sampler's rules (no hub, no skipped page);
  * 5-35 tokens; no name of a target as a token run; no heading of a target with >= 2 alphabetic
    tokens as a token run; no run of 4 consecutive content tokens shared with a target's text (runs
    inside the anchor's names allowed);
  * split = sha256(f"{SEED}:{family}") first byte even -> dev (relation-notes-v1's `split_of`, this
    set's seed); no page is a target or an anchor in both splits.
"""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, HERE / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


nv1 = _load("notes_v1_check", "notes-v1-check.py")
rc1 = _load("relation_notes_v1_check", "relation-notes-v1-check.py")
smp = _load("relation_docs_v1_sample", "relation-docs-v1-sample.py")
SEED = smp.SEED
QUESTIONS = HERE / "relation-docs-v1.jsonl"
ARCS = HERE / "relation-docs-v1-arcs.jsonl"
SKIPS = HERE / "relation-docs-v1-skips.json"
FIELDS = rc1.FIELDS
KINDS = rc1.KINDS
COLL = smp.COLL
rc1.SEED = SEED   # relation-notes-v1's split rule, this set's seed
split_of = rc1.split_of


@lru_cache(maxsize=None)
def corpus():
    return smp.load()


@lru_cache(maxsize=None)
def edges() -> frozenset[tuple[str, str]]:
    return frozenset((e.source, e.target) for e in corpus().edges)


@lru_cache(maxsize=None)
def candidates() -> frozenset[tuple[str, str]]:
    return frozenset((a["source"], a["target"]) for a in smp.candidate_arcs(corpus(), smp.used_before()))


def check(rows: list[dict], arcs: list[dict], skips: dict[str, str]) -> list[str]:
    bad: list[str] = []
    by_pos = {a["position"]: a for a in arcs}
    main = [a["position"] for a in arcs if not a["reserve"]]
    reserve = [a["position"] for a in arcs if a["reserve"]]
    skipped = sorted(int(k) for k in skips)
    for k in skipped:
        if k not in main or not str(skips[str(k)]).strip():
            bad.append(f"skip {k}: not a main arc or no reason")
    wanted = [p for p in main if p not in skipped] + reserve[:len(skipped)]
    forbidden = smp.used_before()
    seen, covered = set(), Counter()
    roles: dict[str, set[str]] = {}
    for r in rows:
        qid = r.get("qid")
        w = f"{qid}:"
        if set(r) != FIELDS:
            bad.append(f"{w} fields {sorted(set(r) ^ FIELDS)} differ from {sorted(FIELDS)}")
            continue
        if not (isinstance(qid, str) and re.fullmatch(r"RD\d{3}", qid)) or qid in seen:
            bad.append(f"{w} bad or duplicate qid")
        seen.add(qid)
        kind, q, anchor, tg = r["kind"], r["query"], r["anchor"], r["targets"]
        if r["collection"] != COLL or kind not in KINDS or r["split"] not in ("dev", "test") or not isinstance(q, str):
            bad.append(f"{w} bad collection/kind/split/query")
            continue
        if not (isinstance(tg, list) and tg and all(isinstance(t, dict) and set(t) == {"doc", "section"}
                                                     and isinstance(t["doc"], str) and t["section"] is None for t in tg)):
            bad.append(f"{w} targets must be a non-empty list of {{doc, section: null}}")
            continue
        arc = by_pos.get(r["arc"])
        if arc is None:
            bad.append(f"{w} arc {r['arc']!r} is not a picked arc")
            continue
        covered[r["arc"]] += 1
        want = (arc["source"], arc["target"]) if arc["ask"] == "relation-out" else (arc["target"], arc["source"])
        if kind != arc["ask"] or (anchor, tg[0]["doc"]) != want:
            bad.append(f"{w} does not follow arc {arc['position']} ({arc['ask']}: anchor {want[0]!r}, target {want[1]!r})")
        if (arc["source"], arc["target"]) not in candidates():
            bad.append(f"{w} arc {arc['position']} is not a candidate arc of the sampler's rules")
        if r["family"] != arc["source"]:
            bad.append(f"{w} family must be the arc's source page {arc['source']!r}")
        if r["split"] != split_of(r["family"]):
            bad.append(f"{w} split {r['split']} but split_of(family) = {split_of(r['family'])}")
        if nv1.doc_info(COLL, anchor) is None:
            bad.append(f"{w} anchor {anchor!r} does not exist")
            continue
        for page in (anchor, *(t["doc"] for t in tg)):
            if page in forbidden:
                bad.append(f"{w} {page!r} is a page of a dev python-docs question of notes-v1")
            roles.setdefault(page, set()).add(r["split"])
        for t in tg:
            if nv1.doc_info(COLL, t["doc"]) is None:
                bad.append(f"{w} target {t['doc']!r} does not exist")
                continue
            ok = ((anchor, t["doc"]) if kind == "relation-out" else (t["doc"], anchor)) in edges()
            if not ok:
                bad.append(f"{w} target {t['doc']!r} is not linked {'from' if kind == 'relation-out' else 'to'} the anchor")
        qt = nv1.tokens(q)
        if not 5 <= len(qt) <= 35:
            bad.append(f"{w} {len(qt)} tokens (need 5..35)")
        anchor_runs: set[tuple[str, ...]] = set()
        for name in nv1.doc_info(COLL, anchor)["names"]:
            anchor_runs |= nv1.runs(nv1.content(nv1.tokens(name)), nv1.RUN)
        qc = nv1.content(qt)
        for t in tg:
            info = nv1.doc_info(COLL, t["doc"])
            if info is None:
                continue
            for name in info["names"]:
                if nv1.contains(qt, nv1.tokens(name)):
                    bad.append(f"{w} names the target {t['doc']!r} ({name!r})")
            for h in sorted({h for path in info["sections"] for h in path}):
                ht = nv1.heading_tokens(h)
                if sum(x.isalpha() for x in ht) >= 2 and nv1.contains(qt, ht):
                    bad.append(f"{w} contains a heading of {t['doc']!r} ({h!r})")
            shared = {s for s in nv1.runs(qc, nv1.RUN) & nv1.runs(nv1.content(nv1.tokens(info["text"])), nv1.RUN)
                      if s not in anchor_runs}
            if shared:
                bad.append(f"{w} copies {nv1.RUN} content tokens of {t['doc']!r}: {' '.join(sorted(shared)[0])!r}")
    for p in wanted:
        if covered[p] != 1:
            bad.append(f"arc {p}: {covered[p]} questions (need 1)")
    for p in sorted(set(covered) - set(wanted)):
        bad.append(f"arc {p}: asked but skipped or an unused reserve arc")
    for page, sp in sorted(roles.items()):
        if len(sp) > 1:
            bad.append(f"{page}: in both dev and test")
    return bad


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else QUESTIONS
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    arcs = [json.loads(x) for x in ARCS.read_text(encoding="utf-8").splitlines() if x.strip()]
    skips = json.loads(SKIPS.read_text(encoding="utf-8")) if SKIPS.exists() else {}
    bad = check(rows, arcs, skips)
    for line in bad:
        print(line)
    cnt = Counter((r.get("kind"), r.get("split")) for r in rows)
    print(f"{len(rows)} questions, {len(skips)} skipped arcs")
    for kind in KINDS:
        print(f"  {kind:13s} dev {cnt[(kind, 'dev')]:3d}  test {cnt[(kind, 'test')]:3d}")
    fams = Counter((r.get("split"), r.get("family")) for r in rows)
    print(f"  families: dev {sum(1 for s, _ in fams if s == 'dev')}, test {sum(1 for s, _ in fams if s == 'test')}")
    ov = []
    for r in rows:
        info = nv1.doc_info(COLL, r["targets"][0]["doc"]) if r.get("targets") else None
        if info:
            ov.append(nv1.overlap(r["query"], info["text"]))
    if len(ov) >= 2:
        q1, med, q3 = statistics.quantiles(ov, n=4)
        print(f"content-word overlap with the target's text: median {med:.0%} (quartiles {q1:.0%}-{q3:.0%})")
    print("OK" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
