"""Known-item probe questions drawn from a collection itself (`sidelight lab probe`).

Three kinds, each row in the `collection` benchmark shape plus its `provenance`:

- `link-context`: the sentence a link sits in (in the SOURCE note), with every name of the target
  (title, aliases, file name, the link's own target text) removed -> the target document, and its
  section when the link names a heading;
- `heading`: a section's heading path without the document's own name -> that section;
- `alias`: an alias that is not a substring of the title -> the document.

Leak checks (as `benchmarks/relation-v1-check.py`): a question keeps no run of `RUN` tokens of any
of the target's names, and a link-context question keeps at least `MIN_CONTENT` content tokens.
A question that stands for more than one document (a heading many notes share, one sentence
linking to several) is dropped. The sample is seeded; the split is by target document (a hash of the id with the seed), so no
document is on both sides.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..corpus.links import Resolver
from ..errors import InputError

RUN = 4  # no run of this many consecutive tokens shared with a name of the target
MIN_CONTENT = 4  # a link-context question keeps at least this many content tokens
STOP = frozenset("a an and are as at be by for from has have how i in is it its of on or see that the this "
                 "to was were what which who with you your can use".split())
KINDS = ("link-context", "heading", "alias")
DEV_SHARE = 0.5


def tokens(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


def content(toks: list[str]) -> list[str]:
    return [t for t in toks if t not in STOP]


def strip_names(text: str, names: Iterable[str]) -> list[str]:
    """`text`'s tokens with every contiguous token run of any name removed (longest names first)."""
    toks = tokens(text)
    for name in sorted({n for n in names if n}, key=lambda n: -len(tokens(n))):
        n = tokens(name)
        if not n:
            continue
        i, out = 0, []
        while i < len(toks):
            if toks[i:i + len(n)] == n:
                i += len(n)
            else:
                out.append(toks[i])
                i += 1
        toks = out
    return toks


def _stem(t: str) -> str:
    return t[:-1] if len(t) > 3 and t.endswith("s") else t


def strip_name_runs(toks: list[str], names: Iterable[str]) -> list[str]:
    """Drop every run of two or more consecutive tokens that are all (singular or plural) content
    words of the names: the link's own text, which the record does not store, is such a run."""
    words = {_stem(t) for n in names for t in content(tokens(n))}
    out, i = [], 0
    while i < len(toks):
        j = i
        while j < len(toks) and _stem(toks[j]) in words:
            j += 1
        if j - i >= 2:
            i = j
        else:
            out.append(toks[i])
            i += 1
    return out


def leaks(q: list[str], names: Iterable[str], run: int = RUN) -> bool:
    """True when `q` shares a run of `run` consecutive tokens with one of `names` (or a whole short name
    that is not stop words only)."""
    for name in names:
        n = tokens(name)
        if not n or all(t in STOP for t in n):
            continue
        width = min(run, len(n))
        grams = {tuple(n[i:i + width]) for i in range(len(n) - width + 1)}
        if any(tuple(q[i:i + width]) in grams for i in range(len(q) - width + 1)):
            return True
    return False


def split_of(doc: str, seed: int) -> str:
    """dev or test by a hash of the target document with the seed: a document stays on one side."""
    h = int(hashlib.sha256(f"{seed}:{doc}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "dev" if h < DEV_SHARE else "test"


def names_of(record) -> list[str]:
    """The title, aliases and file name (stem) of a record."""
    stem = Path(record.id).stem
    return [record.title, *list(record.aliases or ()), stem]


def _slug(s: str) -> str:
    return "-".join(tokens(s))


def anchor_names(anchor: str) -> list[str]:
    """What a link's anchor names, as a reader would write it: the anchor itself and its last dotted
    part ("#c.Py_BuildValue" -> "c.Py_BuildValue", "Py_BuildValue"; "#module-os.path" -> "os.path"),
    so that a cross-reference's own name does not stay in the question it asks."""
    a = anchor.lstrip("#^").strip()
    if not a:
        return []
    out = [a, a.rsplit(".", 1)[-1]]
    if "-" in a:
        out.append(a.split("-", 1)[1])
    return out


def _section_of(record, anchor: str) -> list[str] | None:
    """The heading path of the section a link's anchor names, or None."""
    if not anchor:
        return None
    want = _slug(anchor.split("^")[0])
    for sec in (record.metadata or {}).get("sections", []):
        heading = sec.get("heading") or []
        if heading and (_slug(str(sec.get("anchor", ""))) == want or _slug(heading[-1]) == want):
            return list(heading)
    return None


def link_questions(records: list, by_id: dict, dropped: Counter) -> Iterable[dict]:
    resolver = Resolver(r.id for r in records)
    for r in records:
        for i, link in enumerate((r.metadata or {}).get("links", [])):
            target, _ = resolver.resolve(r.id, link)
            ctx = str(link.get("context", ""))
            if target is None or target == r.id or not ctx:
                continue
            t = by_id[target]
            section = _section_of(t, str(link.get("anchor", "")))
            names = names_of(t) + [str(link.get("target", "")), Path(str(link.get("target", ""))).stem,
                                   *anchor_names(str(link.get("anchor", ""))), *(section[-1:] if section else [])]
            q = strip_name_runs(strip_names(ctx, names), names)
            if len(content(q)) < MIN_CONTENT or leaks(q, names):
                dropped["link-context: under 4 content tokens" if len(content(q)) < MIN_CONTENT
                        else "link-context: a run of a name left"] += 1
                continue
            yield {"kind": "link-context", "query": " ".join(q), "doc": target, "section": section,
                   "provenance": {"source": r.id, "link": i, "line": link.get("line"),
                                  "sentence": ctx, "link_target": link.get("target"),
                                  "anchor": link.get("anchor") or None}}


def heading_questions(records: list, dropped: Counter) -> Iterable[dict]:
    for r in records:
        names = names_of(r)
        for sec in (r.metadata or {}).get("sections", []):
            heading = list(sec.get("heading") or [])
            if len(heading) < 2:  # the lead or the title section: nothing beyond the document's name
                continue
            q = strip_names(" ".join(heading[1:]), names)
            if len(content(q)) < 2 or leaks(q, names):
                dropped["heading: under 2 content tokens or a name left"] += 1
                continue
            yield {"kind": "heading", "query": " ".join(q), "doc": r.id, "section": heading,
                   "provenance": {"heading": heading, "lines": sec.get("lines")}}


def alias_questions(records: list, dropped: Counter) -> Iterable[dict]:
    for r in records:
        for alias in r.aliases or ():
            if not alias or alias.lower() in r.title.lower() or not content(tokens(alias)):
                dropped["alias: inside the title or stop words only"] += 1
                continue
            yield {"kind": "alias", "query": alias, "doc": r.id, "section": None,
                   "provenance": {"alias": alias, "title": r.title}}


def probe(records: list, seed: int = 0, max_per_kind: int | None = None) -> tuple[list[dict], dict]:
    """(rows, summary): the sampled questions in the collection benchmark shape, and counts
    (candidates and kept per kind, dev/test documents)."""
    records = sorted(records, key=lambda r: r.id)
    by_id = {r.id: r for r in records}
    dropped: Counter = Counter()
    pools = {"link-context": list(link_questions(records, by_id, dropped)),
             "heading": list(heading_questions(records, dropped)), "alias": list(alias_questions(records, dropped))}
    ambiguous: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"seed": seed, "candidates": {k: len(v) for k, v in pools.items()},
                               "ambiguous": ambiguous, "dropped": dict(sorted(dropped.items()))}
    docs_of: dict[str, set] = {}
    for q in (q for pool in pools.values() for q in pool):
        docs_of.setdefault(q["query"].lower(), set()).add(q["doc"])
    for kind in KINDS:  # a known item: a question that also stands for another document is dropped
        unique = [q for q in pools[kind] if len(docs_of[q["query"].lower()]) == 1]
        ambiguous[kind] = len(pools[kind]) - len(unique)
        pools[kind] = unique
    for kind in KINDS:
        pool, seen = [], set()
        for q in pool_sorted(pools[kind]):
            key = (q["query"], q["doc"])
            if key not in seen:  # one question per (query, target)
                seen.add(key)
                pool.append(q)
        rng = random.Random(f"{seed}:{kind}")
        if max_per_kind is not None and len(pool) > max_per_kind:
            pool = sorted(rng.sample(pool, max_per_kind), key=lambda q: (q["doc"], q["query"]))
        for n, q in enumerate(pool, 1):
            rows.append({"qid": f"P-{kind}-{n:05d}", "family": q["doc"], "kind": kind,
                         "split": split_of(q["doc"], seed), "query": q["query"],
                         "targets": [{"doc": q["doc"], "section": q["section"]}], "anchor": None,
                         "provenance": q["provenance"]})
    summary["kept"] = dict(Counter(r["kind"] for r in rows))
    summary["split"] = {s: {"questions": sum(r["split"] == s for r in rows),
                            "documents": len({r["family"] for r in rows if r["split"] == s})}
                        for s in ("dev", "test")}
    return rows, summary


def pool_sorted(pool: list[dict]) -> list[dict]:
    return sorted(pool, key=lambda q: (q["doc"], q["query"], json.dumps(q["provenance"], sort_keys=True)))


def read_questions(path: Path, known: set[str], seed: int) -> list[dict]:
    """The user's own questions (collection shape); split by its target, as the probe is."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            doc = row["targets"][0]["doc"]
            query = row["query"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise InputError(f"{path}:{n}: not a question row (qid, query, targets: [{{doc, section}}])") from None
        if doc not in known:
            raise InputError(f"{path}:{n}: target {doc!r} is not a document of the index")
        rows.append({"qid": str(row.get("qid") or f"U-{n:05d}"), "family": doc,
                     "kind": row.get("kind", "user"), "split": split_of(doc, seed),
                     "query": query, "targets": row["targets"], "anchor": row.get("anchor"),
                     "provenance": row.get("provenance", {"file": str(path), "line": n})})
    return rows


def write_probe(path: Path, rows: list[dict]) -> None:
    Path(path).write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows),
                          encoding="utf-8")
