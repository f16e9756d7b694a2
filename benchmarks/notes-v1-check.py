"""Mechanical checks of the notes-v1 questions (no retrieval involved): they read only the question
file, the sample (notes-v1-targets.jsonl) and the target documents themselves.

    python benchmarks/notes-v1-check.py [QUESTIONS.jsonl]

Default: benchmarks/notes-v1.jsonl. Exit 1 with one line per failure. Rules:

  * fields and types: qid (NV001…, unique), collection (obsidian-hub | python-docs), family (a doc id),
    kind (topic | section | relation-out | relation-in), split (dev | test), query (str),
    targets (non-empty list of {"doc": id, "section": [heading, …] | null}), anchor (doc id for
    relation kinds, null otherwise); family = the first target's doc;
  * topic / section questions target a sampled document of notes-v1-targets.jsonl (family = that
    document); a section question has a section target, a topic question none; relation questions
    are obsidian-hub only and follow a sampled, non-reserve arc: relation-out = anchor A, first
    target B; relation-in = anchor B, first target A; every target of a relation-out question is
    linked from the anchor and every target of a relation-in question links to the anchor
    ([[wikilinks]] outside code and comments); every sampled document and arc has a question;
  * 5-35 tokens (lowercase ASCII alphanumeric runs);
  * no name of a target document (file stem, front-matter aliases and first H1 for obsidian-hub;
    the page title, its h1, and both halves of 'module — description' titles for python-docs) as a
    contiguous token run; the relation anchor may be named;
  * no heading of a target document that has >= 2 alphabetic tokens (section numbers dropped) as a
    contiguous token run (all headings of the document, not only the target section's path);
  * no run of 4 consecutive content tokens (stopwords removed from both sides) shared with a target
    document's text (obsidian-hub: the whole file; python-docs: the page's main body text); a run
    that lies inside one of the anchor's names is allowed;
  * every target document exists and every target section path is a heading path of it
    (re-parsed from the file with notes-v1-sample.py's parsers);
  * split = split_of(family) (sha256 of "49:" + family, first byte even -> dev) and no target
    document is a target in both splits.

It prints counts per collection x kind x split and the content-word overlap of the questions with
their targets' text (share of a question's content tokens that occur in the first target's text).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import statistics
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("notes_v1_sample", HERE / "notes-v1-sample.py")
sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sample)

SEED = sample.SEED
TARGETS = HERE / "notes-v1-targets.jsonl"
FIELDS = {"qid", "collection", "family", "kind", "split", "query", "targets", "anchor"}
KINDS = ("topic", "section", "relation-out", "relation-in")
COLLS = ("obsidian-hub", "python-docs")
RUN = 4
STOP = set("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each either else etc even ever every
few for from further get got had has have having he her here hers him his how i if in into is it its
itself just let like me more most my myself no nor not now of off on once only or other our ours out over
own per same she should so some such than that the their theirs them then there these they this those
through to too under until up us very via was way we were what when where whether which while who whom
why will with within without would you your yours e g ie eg s t""".split())


def tokens(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


def content(toks: list[str]) -> list[str]:
    return [t for t in toks if t not in STOP]


def contains(q: list[str], phrase_toks: list[str]) -> bool:
    n = phrase_toks
    if not n or all(t in STOP for t in n):
        return False
    return any(q[i:i + len(n)] == n for i in range(len(q) - len(n) + 1))


def runs(toks: list[str], k: int) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + k]) for i in range(len(toks) - k + 1)}


def split_of(family: str) -> str:
    return "dev" if hashlib.sha256(f"{SEED}:{family}".encode("utf-8")).digest()[0] % 2 == 0 else "test"


def root(coll: str) -> Path:
    return sample.HUB if coll == "obsidian-hub" else sample.PYDOCS


@lru_cache(maxsize=None)
def doc_info(coll: str, doc: str) -> dict | None:
    p = root(coll) / doc
    if not p.is_file():
        return None
    if coll == "obsidian-hub":
        lines = sample.read_lines(p)
        secs = sample.markdown_sections(lines)
        return {"names": sample.hub_names(doc, lines), "sections": [s["path"] for s in secs],
                "text": "\n".join(lines), "lines": lines}
    secs = sample.html_sections(p)
    return {"names": sample.py_names(p), "sections": [s["path"] for s in secs], "text": sample.py_text(p)}


def heading_tokens(h: str) -> list[str]:
    h = re.sub(r"^\s*\d+(\.\d+)*\.?\s*", "", h)
    return tokens(h)


@lru_cache(maxsize=None)
def links_of(doc: str) -> frozenset[str]:
    """Resolved targets of [[wikilinks]] (embeds included) in a hub note's visible text."""
    info = doc_info("obsidian-hub", doc)
    out = set()
    for _, text, code in sample.visible_lines(info["lines"]):
        if code:
            continue
        for m in sample.WIKILINK.finditer(text):
            b = sample.resolve_link(m.group(2), by_stem())
            if b:
                out.add(b)
    return frozenset(out)


@lru_cache(maxsize=None)
def by_stem() -> dict[str, list[str]]:
    d: dict[str, list[str]] = {}
    for p in sample.HUB.rglob("*.md"):
        rel = p.relative_to(sample.HUB).as_posix()
        d.setdefault(Path(rel).stem.lower(), []).append(rel)
    return d


def check(rows: list[dict], sampled: list[dict]) -> list[str]:
    bad: list[str] = []
    docs = {(r["collection"], r["doc"]) for r in sampled if r["kind"] == "doc"}
    arcs = {(r["source"], r["target"]): r for r in sampled if r["kind"] == "arc" and not r["reserve"]}
    seen_qids, covered_docs, covered_arcs = set(), set(), set()
    target_splits: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        qid = r.get("qid")
        w = f"{qid}:"
        if set(r) != FIELDS:
            bad.append(f"{w} fields {sorted(set(r) ^ FIELDS)} differ from {sorted(FIELDS)}")
            continue
        if not (isinstance(qid, str) and re.fullmatch(r"NV\d{3}", qid)) or qid in seen_qids:
            bad.append(f"{w} bad or duplicate qid")
        seen_qids.add(qid)
        coll, kind, q = r["collection"], r["kind"], r["query"]
        if coll not in COLLS or kind not in KINDS or r["split"] not in ("dev", "test") or not isinstance(q, str):
            bad.append(f"{w} bad collection/kind/split/query type")
            continue
        tg = r["targets"]
        if not (isinstance(tg, list) and tg and all(isinstance(t, dict) and set(t) == {"doc", "section"} and
                                                     isinstance(t["doc"], str) and
                                                     (t["section"] is None or (isinstance(t["section"], list) and
                                                      t["section"] and all(isinstance(h, str) for h in t["section"])))
                                                     for t in tg)):
            bad.append(f"{w} targets must be a non-empty list of {{doc, section}}")
            continue
        if r["family"] != tg[0]["doc"]:
            bad.append(f"{w} family {r['family']!r} is not the first target's doc")
        if r["split"] != split_of(r["family"]):
            bad.append(f"{w} split {r['split']} but split_of(family) = {split_of(r['family'])}")
        anchor = r["anchor"]
        rel = kind.startswith("relation")
        if rel != isinstance(anchor, str) or (not rel and anchor is not None):
            bad.append(f"{w} anchor must be a doc id for relation kinds and null otherwise")
            continue
        # kind-specific structure
        if kind in ("topic", "section"):
            if (coll, r["family"]) not in docs:
                bad.append(f"{w} family is not a sampled {coll} document")
            covered_docs.add((coll, r["family"]))
            has_sec = any(t["section"] for t in tg)
            if kind == "section" and not tg[0]["section"]:
                bad.append(f"{w} section question without a section target")
            if kind == "topic" and has_sec:
                bad.append(f"{w} topic question with a section target")
        else:
            if coll != "obsidian-hub":
                bad.append(f"{w} relation questions are obsidian-hub only")
                continue
            pair = (anchor, tg[0]["doc"]) if kind == "relation-out" else (tg[0]["doc"], anchor)
            arc = arcs.get(pair)
            if arc is None:
                bad.append(f"{w} ({pair[0]!r} -> {pair[1]!r}) is not a sampled non-reserve arc")
            else:
                covered_arcs.add(pair)
                want = "relation-in" if arc["position"] % 3 == 2 else "relation-out"
                if kind != want:
                    bad.append(f"{w} arc position {arc['position']} asks for {want}")
            if doc_info(coll, anchor) is None:
                bad.append(f"{w} anchor {anchor!r} does not exist")
                continue
            for t in tg:
                if doc_info(coll, t["doc"]) is None:
                    continue
                ok = (t["doc"] in links_of(anchor)) if kind == "relation-out" else (anchor in links_of(t["doc"]))
                if not ok:
                    bad.append(f"{w} target {t['doc']!r} is not linked {'from' if kind == 'relation-out' else 'to'} the anchor")
        # lexical rules
        qt = tokens(q)
        if not 5 <= len(qt) <= 35:
            bad.append(f"{w} {len(qt)} tokens (need 5..35)")
        anchor_runs: set[tuple[str, ...]] = set()
        if rel and doc_info(coll, anchor):
            for name in doc_info(coll, anchor)["names"]:
                anchor_runs |= runs(content(tokens(name)), RUN)
        qc = content(qt)
        for t in tg:
            info = doc_info(coll, t["doc"])
            if info is None:
                bad.append(f"{w} target doc {t['doc']!r} does not exist in {coll}")
                continue
            target_splits.setdefault((coll, t["doc"]), set()).add(r["split"])
            if t["section"] and t["section"] not in info["sections"]:
                bad.append(f"{w} section {t['section']} is not a heading path of {t['doc']!r}")
            for name in info["names"]:
                if contains(qt, tokens(name)):
                    bad.append(f"{w} names the target {t['doc']!r} ({name!r})")
            for h in sorted({h for path in info["sections"] for h in path}):
                ht = heading_tokens(h)
                if sum(x.isalpha() for x in ht) >= 2 and contains(qt, ht):
                    bad.append(f"{w} contains a heading of {t['doc']!r} ({h!r})")
            shared = {s for s in runs(qc, RUN) & runs(content(tokens(info["text"])), RUN)
                      if s not in anchor_runs}
            if shared:
                bad.append(f"{w} copies {RUN} content tokens of {t['doc']!r}: {' '.join(sorted(shared)[0])!r}")
    for (coll, doc), sp in sorted(target_splits.items()):
        if len(sp) > 1:
            bad.append(f"{doc}: target in both dev and test")
    for coll, doc in sorted(docs - covered_docs):
        bad.append(f"{doc}: sampled {coll} document without a question")
    for pair in sorted(set(arcs) - covered_arcs):
        bad.append(f"arc {pair[0]!r} -> {pair[1]!r}: no question")
    return bad


def overlap(q: str, text: str) -> float:
    c = content(tokens(q))
    vocab = set(tokens(text))
    return sum(t in vocab for t in c) / len(c) if c else 0.0


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else HERE / "notes-v1.jsonl"
    rows = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    sampled = [json.loads(l) for l in TARGETS.read_text(encoding="utf-8").splitlines() if l.strip()]
    bad = check(rows, sampled)
    for line in bad:
        print(line)
    cnt = Counter((r.get("collection"), r.get("kind"), r.get("split")) for r in rows)
    print(f"{len(rows)} questions")
    for coll in COLLS:
        for kind in KINDS:
            d, t = cnt[(coll, kind, "dev")], cnt[(coll, kind, "test")]
            if d or t:
                print(f"  {coll:13s} {kind:13s} dev {d:3d}  test {t:3d}")
    sp = Counter(r.get("split") for r in rows)
    print(f"  total: dev {sp['dev']}, test {sp['test']}")
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        try:
            info = doc_info(r["collection"], r["targets"][0]["doc"])
        except Exception:
            continue
        if info:
            k = "relation" if r["kind"].startswith("relation") else "topic/section"
            groups.setdefault((r["collection"], k), []).append(overlap(r["query"], info["text"]))
    for (coll, k), ov in sorted(groups.items()):
        if len(ov) >= 2:
            q1, med, q3 = statistics.quantiles(ov, n=4)
            print(f"{coll} {k}: {len(ov)} questions; content-word overlap with the first target's text "
                  f"median {med:.0%} (quartiles {q1:.0%}-{q3:.0%}, max {max(ov):.0%})")
    print("OK" if not bad else f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
