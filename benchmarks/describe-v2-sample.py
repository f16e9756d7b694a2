"""Seeded sampling for describe-v2 (reverse dictionary over WordNet 3.0, fresh held-out words). Run once.

As describe-v1-sample.py, with a new seed and without describe-v1's words: candidates are lemmas
of /usr/share/wordnet/index.{noun,verb,adj,adv} with tagsense_cnt >= 1, lowercase ASCII letters
only, length >= 4, not a word of describe-v1. One random.Random(20261206) draws, from the sorted
candidate list of each part of speech in turn, 60 nouns, 20 verbs, 14 adjectives, 8 adverbs.
The described sense is the first synset offset of the index line (most frequent tagged sense).
Writes a working list to /tmp/describe-sample.json (outside the repo).
"""

import json
import random
import re
import sys
from pathlib import Path

from sidelight.corpus.wordnet import load_wordnet_all, read_index

PLAN = [("noun", "noun", "n", 60), ("verb", "verb", "v", 20), ("adj", "adjective", "a", 14), ("adv", "adverb", "r", 8)]
SEED = 20261206
V1 = Path(__file__).resolve().parent / "describe-v1.jsonl"
WORD = re.compile(r"^[a-z]{4,}$")


def main(path="/tmp/describe-v2-sample.json"):
    v1 = {json.loads(line)["word"] for line in V1.read_text().splitlines() if line.strip()}
    corpus = load_wordnet_all()
    by_id = {r.id: r for r in corpus.records}
    indexes = {suffix: read_index(suffix) for suffix, *_ in PLAN}
    rng = random.Random(SEED)
    sample = []
    for suffix, pos, prefix, n in PLAN:
        idx = indexes[suffix]
        cands = sorted(w for w, (_, tag) in idx.items() if tag >= 1 and WORD.match(w) and w not in v1)
        print(f"{pos}: {len(cands)} candidates, drawing {n}", file=sys.stderr)
        for word in rng.sample(cands, n):
            offsets = idx[word][0]
            sense = by_id[f"{prefix}:{offsets[0]}"]
            senses = []  # every sense of the word, all parts of speech
            for s2, _, p2, _ in PLAN:
                for off in indexes[s2].get(word, ([], 0))[0]:
                    r = by_id[f"{p2}:{off}"]
                    senses.append({"id": r.id, "gloss": r.text})
            sample.append({"word": word, "pos": pos, "sense_id": sense.id, "gloss": sense.text,
                           "lemmas": [sense.title, *sense.aliases], "senses": senses})
    Path(path).write_text(json.dumps(sample, indent=1))
    for i, s in enumerate(sample):
        print(f"{i:3d} {s['word']:16s} {s['pos']:9s} {s['sense_id']} {s['lemmas']} | {s['gloss']}")


if __name__ == "__main__":
    main(*sys.argv[1:])
