"""Mechanical check of benchmarks/describe-v2.jsonl: describe-v1-check.py's rules, with v2's qids
(E###), counts (60 nouns, 20 verbs, 14 adjectives, 8 adverbs) and no word of describe-v1.

Fails (exit 1, one line per offending qid) if a query contains, as whole tokens (lowercase
ASCII alphanumeric), the word, a lemma of the described sense (multiword lemmas as a
contiguous token run), or the word / a one-token lemma with a common suffix (s, es, ed, ing,
er, ly; also with a final e or y dropped); if it shares a run of 3 consecutive tokens with any
gloss (definition and examples) of any sense of the word, in any part of speech; if it is not
6-25 tokens; or if fields, qids, the split rule or the sense id are wrong. Prints the median and
mean share of query tokens that occur in the described sense's gloss.

Usage: python benchmarks/describe-v2-check.py [path/to/describe-v2.jsonl]
"""

import json
import re
import statistics
import sys
from pathlib import Path

from sidelight.corpus.wordnet import load_wordnet_all, read_index

POS = {"noun": ("noun", "n"), "verb": ("verb", "v"), "adjective": ("adj", "a"), "adverb": ("adv", "r")}
FIELDS = {"qid", "family", "split", "pos", "word", "sense_id", "query"}
EXPECTED = {"noun": 60, "verb": 20, "adjective": 14, "adverb": 8}
V1 = Path(__file__).resolve().parent / "describe-v1.jsonl"
SUFFIXES = ("s", "es", "ed", "ing", "er", "ly")


def tokens(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def variants(w):
    out = {w} | {w + s for s in SUFFIXES}
    if w.endswith("e"):
        out |= {w[:-1] + s for s in ("ed", "ing", "er")}
    if w.endswith("y"):
        out |= {w[:-1] + s for s in ("ies", "ied", "ier", "ily")}
    return out


def contains_run(toks, run):
    n = len(run)
    return any(toks[i:i + n] == run for i in range(len(toks) - n + 1))


def ngrams(toks, n=3):
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def main(path="benchmarks/describe-v2.jsonl"):
    v1 = {json.loads(line)["word"] for line in V1.read_text().splitlines() if line.strip()}
    by_id = {r.id: r for r in load_wordnet_all().records}
    idx = {pos: {w: offsets for w, (offsets, _) in read_index(suffix).items()} for pos, (suffix, _) in POS.items()}
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    errors, overlaps, seen, counts = [], [], set(), {}
    for i, row in enumerate(rows):
        qid = row.get("qid", f"#{i}")
        bad = lambda why: errors.append(f"{qid}: {why}")
        if set(row) != FIELDS:
            bad(f"fields {sorted(row)}")
            continue
        if qid != f"E{i + 1:03d}" or row["family"] != qid:
            bad("qid/family not E### in file order")
        if row["word"] in v1:
            bad(f"word {row['word']!r} is in describe-v1")
        if qid in seen:
            bad("duplicate qid")
        seen.add(qid)
        if row["split"] != ("dev" if i % 3 == 0 else "test"):
            bad(f"split {row['split']!r} breaks the i % 3 rule")
        pos, word = row["pos"], row["word"]
        if pos not in POS:
            bad(f"pos {pos!r}")
            continue
        counts[pos] = counts.get(pos, 0) + 1
        offsets = idx[pos].get(word)
        prefix = POS[pos][1]
        if not offsets or row["sense_id"] != f"{prefix}:{offsets[0]}" or row["sense_id"] not in by_id:
            bad(f"sense_id {row['sense_id']} is not the first {pos} sense of {word!r}")
            continue
        sense = by_id[row["sense_id"]]
        q = tokens(row["query"])
        if not 6 <= len(q) <= 25:
            bad(f"{len(q)} tokens (want 6-25)")
        forbidden = set(variants(word))
        for lemma in (sense.title, *sense.aliases):
            lt = tokens(lemma)
            if len(lt) == 1:
                forbidden |= variants(lt[0])
            elif lt and contains_run(q, lt):
                bad(f"contains lemma {lemma!r}")
        hit = sorted(forbidden & set(q))
        if hit:
            bad(f"contains word/lemma form(s) {hit}")
        glosses = [by_id[f"{POS[p][1]}:{off}"].text for p in POS for off in idx[p].get(word, [])]
        shared = set()
        for g in glosses:
            shared |= ngrams(q) & ngrams(tokens(g))
        if shared:
            bad(f"shares 3-token run(s) with a gloss: {sorted(' '.join(s) for s in shared)}")
        gloss_toks = set(tokens(sense.text))
        overlaps.append(sum(t in gloss_toks for t in q) / len(q) if q else 0.0)
    for pos, n in EXPECTED.items():
        if counts.get(pos, 0) != n:
            errors.append(f"count: {counts.get(pos, 0)} {pos} rows, want {n}")
    splits = [r.get("split") for r in rows]
    print(f"{len(rows)} rows: " + ", ".join(f"{counts.get(p, 0)} {p}" for p in EXPECTED)
          + f"; {splits.count('dev')} dev, {splits.count('test')} test")
    if overlaps:
        print(f"gloss overlap (share of query tokens in the sense's gloss): "
              f"median {statistics.median(overlaps):.1%}, mean {statistics.mean(overlaps):.1%}, "
              f"max {max(overlaps):.1%}")
    for e in errors:
        print("FAIL", e)
    print("FAILED" if errors else "OK")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
