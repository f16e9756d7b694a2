"""Benchmarks for the lab: concept JSONL (Carrier R01 §3 shape) and BEIR query sets.

Both load into one `Benchmark`: query text, qrels (query -> record -> grade), and per query
its family (the resampling unit), type and split. A concept query has one intended record;
a relation query also names an `anchor_id` that the runner drops from the ranking before
scoring. All queries of one family must share a split, type names are fixed, and every error
names the file and line.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.beir import beir_split
from ..corpus.jsonl import read_jsonl
from ..errors import InputError

TYPES = ("paraphrase", "application", "boundary", "relation")
SPLITS = ("dev", "test")
REQUIRED = ("qid", "family", "type", "split", "query", "intended_id")


@dataclass
class Benchmark:
    """Queries with qrels and the family / type / split of each query."""

    name: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    family: dict[str, str]
    type: dict[str, str]
    split: dict[str, str]
    anchor: dict[str, str] = field(default_factory=dict)
    intended_name: dict[str, str] = field(default_factory=dict)
    sections: dict[str, list[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)  # qid -> (doc, heading path)

    def subset(self, split: str) -> "Benchmark":
        """The queries of one split (order kept)."""
        keep = [q for q in self.queries if self.split[q] == split]
        pick = lambda d: {q: d[q] for q in keep if q in d}  # noqa: E731
        return Benchmark(self.name, pick(self.queries), pick(self.qrels), pick(self.family), pick(self.type),
                         pick(self.split), pick(self.anchor), pick(self.intended_name), pick(self.sections))

    def families(self) -> list[str]:
        return sorted(set(self.family.values()))

    def single_target(self, qid: str) -> str | None:
        """The one relevant record of a concept query (None when the query has several)."""
        rel = [d for d, g in self.qrels[qid].items() if g > 0]
        return rel[0] if len(rel) == 1 else None


def _check_row(obj: dict, required: tuple[str, ...], where: str, seen: dict) -> None:
    """The fields every benchmark row shares: required strings, a new qid, a known split."""
    missing = [k for k in required if not isinstance(obj.get(k), str) or not obj[k].strip()]
    if missing:
        raise InputError(f"{where}: missing or empty field {missing[0]!r} (need {', '.join(required)})")
    if obj["qid"] in seen:
        raise InputError(f"{where}: duplicate qid {obj['qid']!r}")
    if obj["split"] not in SPLITS:
        raise InputError(f"{where}: split {obj['split']!r} is not one of {', '.join(SPLITS)}")


def load_concept_benchmark(path: Path, known_ids: set[str] | None = None, select: dict | None = None) -> Benchmark:
    """Read and validate a concept benchmark JSONL; errors name file:line. `select` keeps only the
    rows whose fields equal its values (one file holding two corpora: {"corpus": "foldoc"})."""
    path = Path(path)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    family: dict[str, str] = {}
    qtype: dict[str, str] = {}
    split: dict[str, str] = {}
    anchor: dict[str, str] = {}
    names: dict[str, str] = {}
    family_split: dict[str, tuple[str, int]] = {}
    for n, obj in read_jsonl(path):
        if select and any(obj.get(k) != v for k, v in select.items()):
            continue
        where = f"{path}:{n}"
        _check_row(obj, REQUIRED, where, queries)
        qid = obj["qid"]
        if obj["type"] not in TYPES:
            raise InputError(f"{where}: type {obj['type']!r} is not one of {', '.join(TYPES)}")
        fam = obj["family"]
        if fam in family_split and family_split[fam][0] != obj["split"]:
            first_split, first_line = family_split[fam]
            raise InputError(f"{where}: family {fam!r} is in split {obj['split']!r} here but in "
                             f"{first_split!r} at {path}:{first_line}; a family must stay in one split")
        family_split.setdefault(fam, (obj["split"], n))
        target = obj["intended_id"]
        if known_ids is not None and target not in known_ids:
            raise InputError(f"{where}: intended_id {target!r} is not a record of the corpus")
        if obj["type"] == "relation" or obj.get("anchor_id") is not None:
            a = obj.get("anchor_id")
            if not isinstance(a, str) or not a:
                raise InputError(f"{where}: a relation query needs a string anchor_id")
            if a == target:
                raise InputError(f"{where}: anchor_id equals intended_id {target!r}")
            if known_ids is not None and a not in known_ids:
                raise InputError(f"{where}: anchor_id {a!r} is not a record of the corpus")
            anchor[qid] = a
        queries[qid] = obj["query"]
        qrels[qid] = {target: 1}
        family[qid], qtype[qid], split[qid] = fam, obj["type"], obj["split"]
        if isinstance(obj.get("intended_name"), str):
            names[qid] = obj["intended_name"]
    if not queries:
        raise InputError(f"{path}: no queries" + (f" with {select}" if select else ""))
    return Benchmark(path.stem, queries, qrels, family, qtype, split, anchor, names)


COLLECTION_REQUIRED = ("qid", "family", "kind", "split", "query")


def load_collection_benchmark(path: Path, known_ids: set[str] | None = None, select: dict | None = None) -> Benchmark:
    """Questions over a folder of documents (notes-v1 shape): each names its target documents
    (`targets: [{"doc": ID, "section": [heading, ...] | null}]`, every target relevant), its kind
    (`topic`, `section`, `relation-out`, `relation-in`: the query type) and, for relation kinds, the
    `anchor` document it names; targets with a heading path are kept in `sections` (section-level
    figures). `select` keeps the rows whose fields equal its values; errors name file:line."""
    path = Path(path)
    b = Benchmark(path.stem, {}, {}, {}, {}, {})
    family_split: dict[str, str] = {}
    for n, obj in read_jsonl(path):
        if select and any(obj.get(k) != v for k, v in select.items()):
            continue
        where = f"{path}:{n}"
        _check_row(obj, COLLECTION_REQUIRED, where, b.queries)
        targets = obj.get("targets")
        if not isinstance(targets, list) or not targets or not all(
                isinstance(t, dict) and isinstance(t.get("doc"), str) for t in targets):
            raise InputError(f"{where}: 'targets' must be a non-empty list of {{\"doc\": ID, \"section\": [...]}}")
        for t in targets:
            if known_ids is not None and t["doc"] not in known_ids:
                raise InputError(f"{where}: target {t['doc']!r} is not a document of the collection")
        fam = obj["family"]
        if family_split.setdefault(fam, obj["split"]) != obj["split"]:
            raise InputError(f"{where}: family {fam!r} is in both splits; a family must stay in one split")
        qid = obj["qid"]
        b.queries[qid], b.qrels[qid] = obj["query"], {t["doc"]: 1 for t in targets}
        b.family[qid], b.type[qid], b.split[qid] = fam, obj["kind"], obj["split"]
        if isinstance(obj.get("anchor"), str) and obj["anchor"]:
            b.anchor[qid] = obj["anchor"]
        heads = [(t["doc"], tuple(str(h) for h in t["section"])) for t in targets
                 if isinstance(t.get("section"), list) and t["section"]]
        if heads:
            b.sections[qid] = heads
    if not b.queries:
        raise InputError(f"{path}: no queries" + (f" with {select}" if select else ""))
    return b


DESCRIBE_REQUIRED = ("qid", "family", "split", "pos", "word", "sense_id", "query")


def load_describe_benchmark(path: Path, corpus) -> Benchmark:
    """A reverse-dictionary benchmark (describe-v1 shape): one description per word; the target is the
    word (lower-cased), found through any of its senses. The query type is the part of speech.
    The described sense must be a record of `corpus` that holds the word; errors name file:line."""
    path = Path(path)
    b = Benchmark(path.stem, {}, {}, {}, {}, {})
    for n, obj in read_jsonl(path):
        where = f"{path}:{n}"
        _check_row(obj, DESCRIBE_REQUIRED, where, b.queries)
        qid = obj["qid"]
        pos = corpus.position.get(obj["sense_id"])
        if pos is None:
            raise InputError(f"{where}: sense_id {obj['sense_id']!r} is not a record of the corpus")
        rec = corpus.records[pos]
        word = obj["word"].lower()
        if word not in {w.lower() for w in (rec.title, *rec.aliases)}:
            raise InputError(f"{where}: word {obj['word']!r} is not a lemma of {obj['sense_id']} ({rec.title})")
        b.queries[qid], b.qrels[qid] = obj["query"], {word: 1}
        b.family[qid], b.type[qid], b.split[qid] = obj["family"], obj["pos"], obj["split"]
        b.intended_name[qid] = obj["word"]
    if not b.queries:
        raise InputError(f"{path}: no queries")
    return b


def sample_ids(ids: list[str], seed: int, n: int, rule: str = "sorted-int") -> list[str]:
    """Seeded sample of query ids. `rule` names the exact call (see scifact-pilot.json):

    * ``sorted-int``: ``random.Random(seed).sample(sorted(ids, key=int), n)``
    * ``sorted-str``: ``random.Random(seed).sample(sorted(ids), n)``
    * ``file-order``: ``random.Random(seed).sample(ids, n)`` (ids in qrels file order)
    * ``shuffle-int``: ``r = random.Random(seed); s = sorted(ids, key=int); r.shuffle(s); s[:n]``
    """
    if rule == "sorted-int":
        return random.Random(seed).sample(sorted(ids, key=int), n)
    if rule == "sorted-str":
        return random.Random(seed).sample(sorted(ids), n)
    if rule == "file-order":
        return random.Random(seed).sample(list(ids), n)
    if rule == "shuffle-int":
        s = sorted(ids, key=int)
        random.Random(seed).shuffle(s)
        return s[:n]
    raise InputError(f"unknown sampling rule {rule!r}; use sorted-int, sorted-str, file-order or shuffle-int")


def load_beir_benchmark(folder: Path, split: str, sample: dict | None = None, dev: dict | None = None) -> Benchmark:
    """A BEIR split as a Benchmark; every query is its own family, all in the 'test' split.

    With ``sample = {"seed": s, "n": n, "rule": r}`` queries carry type ``sample`` (in the
    seeded sample) or ``rest``; both are scored, and the report gives the sample and the whole.
    With ``dev = {"split": "train", "seed": s, "n_fit": n}`` the queries of that split that
    ``random.Random(s).sample(sorted(ids), n)`` leaves out (the ones not used for fitting or
    training) join as the 'dev' split, type ``dev``.
    """
    queries, qrels = beir_split(Path(folder), split)
    qtype = {q: "all" for q in queries}
    if sample:
        chosen = set(sample_ids(list(queries), int(sample["seed"]), int(sample["n"]), sample.get("rule", "sorted-int")))
        qtype = {q: ("sample" if q in chosen else "rest") for q in queries}
    splits = {q: "test" for q in queries}
    if dev:
        dq, dqrels = beir_split(Path(folder), dev["split"])
        ids = sorted(set(dqrels))
        fit = set(random.Random(int(dev["seed"])).sample(ids, int(dev["n_fit"])))
        clash = sorted(set(ids) & set(queries))
        if clash:
            raise InputError(f"{folder}: query {clash[0]!r} is in both the {dev['split']} and the {split} split")
        for q in ids:
            if q not in fit:
                queries[q], qrels[q], qtype[q], splits[q] = dq[q], dqrels[q], "dev", "dev"
    return Benchmark(Path(folder).name, queries, qrels, {q: q for q in queries}, qtype, splits)
