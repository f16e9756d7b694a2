"""Draw the arcs of relation-v2 (seeded, before any question was written or any retrieval run).

relation-v1's test split was scored once (issue 13); v2 is a fresh held-out set with the same
quotas and packet shape, drawn with a new seed from records that relation-v1 never used (as anchor
or target), and without arcs where one record's name contains the other's (the cause of most v1
skips). Writes benchmarks/relation-v2-arcs.jsonl. Run once: `python benchmarks/relation-v2-sample.py`.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path

from sidelight.corpus.foldoc import load_foldoc
from sidelight.corpus.wordnet import load_wordnet_nouns

HERE = Path(__file__).parent
SEED = 20261203
OUT = HERE / "relation-v2-arcs.jsonl"
_spec = importlib.util.spec_from_file_location("relation_v1_sample", HERE / "relation-v1-sample.py")
v1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(v1)
N_FOLDOC, WORDNET_TYPES, RESERVE = v1.N_FOLDOC, v1.WORDNET_TYPES, v1.RESERVE


def _toks(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


def _inside(a: list[str], b: list[str]) -> bool:
    return bool(a) and any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))


def tangled(rec_a, rec_b) -> bool:
    """One record's title or alias is a token run of the other's: a `names` question would name both."""
    na = [_toks(n) for n in (rec_a.title, *rec_a.aliases)]
    nb = [_toks(n) for n in (rec_b.title, *rec_b.aliases)]
    return any(_inside(x, y) or _inside(y, x) for x in na for y in nb)


def used_in_v1() -> set[tuple[str, str]]:
    arcs = [json.loads(line) for line in (HERE / "relation-v1-arcs.jsonl").read_text(encoding="utf-8").splitlines()]
    return {(a["corpus"], a[side]["id"]) for a in arcs for side in ("anchor", "target")}


def foldoc_arcs(rng: random.Random, used: set) -> list[dict]:
    c = load_foldoc()
    rec = {r.id: r for r in c.records}
    ok = [e for e in c.edges if e.context and v1._words(rec[e.source].text) >= 12
          and v1._words(rec[e.target].text) >= 12 and ("foldoc", e.source) not in used
          and ("foldoc", e.target) not in used and not tangled(rec[e.source], rec[e.target])]
    n = N_FOLDOC + int(N_FOLDOC * RESERVE)
    seen, out = set(), []
    for e in rng.sample(ok, len(ok)):  # a seeded shuffle; one arc per anchor and per target
        if e.source in seen or e.target in seen:
            continue
        seen |= {e.source, e.target}
        out.append(e)
        if len(out) == n:
            break
    return [v1._packet("foldoc", f"SF{i + 1:03d}", i, e, rec) for i, e in enumerate(out)]


def wordnet_arcs(rng: random.Random, used: set) -> list[dict]:
    c = load_wordnet_nouns()
    rec = {r.id: r for r in c.records}
    by_type: dict[str, list] = {}
    for e in c.edges:
        if (e.type in WORDNET_TYPES and v1._words(rec[e.source].text) >= 4 and v1._words(rec[e.target].text) >= 4
                and ("wordnet", e.source) not in used and ("wordnet", e.target) not in used
                and not tangled(rec[e.source], rec[e.target])):
            by_type.setdefault(e.type, []).append(e)
    picked = []
    for ty, n in WORDNET_TYPES.items():
        picked += [(ty, e) for e in rng.sample(by_type[ty], n + max(1, int(n * RESERVE)))]
    first, reserve = [], []
    counts: dict[str, int] = {}
    for ty, e in picked:
        counts[ty] = counts.get(ty, 0) + 1
        (first if counts[ty] <= WORDNET_TYPES[ty] else reserve).append(e)
    rng.shuffle(first)
    rng.shuffle(reserve)
    return [v1._packet("wordnet", f"SW{i + 1:03d}", i, e, rec) for i, e in enumerate(first + reserve)]


def main() -> None:
    rng = random.Random(SEED)
    used = used_in_v1()
    packets = foldoc_arcs(rng, used) + wordnet_arcs(rng, used)
    with open(OUT, "w", encoding="utf-8") as f:
        for p in packets:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"{len(packets)} arcs -> {OUT}")


if __name__ == "__main__":
    main()
