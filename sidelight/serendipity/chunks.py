"""Chunks: records split into sentence-aware windows of a token budget, each embedded.

Windows
-------
A record's text (its title when the text is empty) is split into sentences (after ``.``, ``!``,
``?`` followed by white space, and at blank lines). Sentences are packed greedily into windows of
at most ``budget`` tokens; a sentence longer than the budget is cut at word boundaries. Tokens are
counted with a ``count(texts) -> list[int]`` function: the embedder's WordPiece tokenizer (special
tokens excluded) when one is given, else the cheap proxy ``ceil(1.3 * words)``.

A chunk is ``(record position, start char, end char)`` into that record's text, so the chunk
texts are recomputed from the index's records and never stored twice.

Vectors
-------
Each chunk is embedded with the index's embedder (``kind="doc"``). Encoding is the expensive part,
so it is cached under ``cache_dir()/serendipity/chunkvecs-<key>/`` in blocks (resumable after an
interruption); the key hashes the model identity and every chunk text.

Sections
--------
A collection's records (notes read from a folder) come with sections of their own
(`corpus.passages`). There each section with words in it is one chunk (`section_chunks`): the
unit the author wrote (a section holding only its heading is left out: it carries the note's title
and one heading, not anything written), so a marker counted "in more than one chunk" is in more than one part of
the note, and a short note with three headed parts has three chunks where a 96-token window would
give it one. A section found word for word in many notes is boilerplate and no chunk either
(`boilerplate_sections`): a vault's footer or a template's placeholder written into every note is
not something its author wrote for that note, and as a chunk it joins unrelated notes through
shared markers (the Obsidian hub's "This note in GitHub | Copy this note | Download this vault"
footer was the passage of many pairs a first reading called whales). The rule: a section's
normalised text (`section_key`: lower case, links' URLs dropped, its words joined by one space;
the section's own heading is part of it) occurring in ``BOILERPLATE_MIN_NOTES`` = 3 or more
distinct notes is boilerplate. Why 3: text written once is in one note; copied once it is in two,
and that pair is what the certificate's shared-verbatim-span rule is for; word for word in three
or more notes it is a template's, whatever the collection's size. The chunk's span is the section's span of the record's text; its vector is what the
index's dense lane already holds for that section (the normalised mean of its section windows,
`DenseStore.window_section`, which read the note's title and parent headings before the section),
or, without such windows, the embedder's vector of the same text (`corpus.passages.window_texts`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from ..progress import progress_bar

DEFAULT_BUDGET = 96
_SENT = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_WORD = re.compile(r"\S+")
BLOCK = 1024
# What `section_chunks` keeps, recorded with the chunks (chunks made by another rule are made again)
BOILERPLATE_MIN_NOTES = 3
SECTION_RULE = ("each section with words besides its heading, "
                f"except one whose normalised text is in >= {BOILERPLATE_MIN_NOTES} notes")
_URL = re.compile(r"\]\([^)]*\)|<?https?://\S+")
_KEYWORD = re.compile(r"\w+")


def record_text(record) -> str:
    return record.text if record.text and record.text.strip() else record.title


def proxy_count(texts: Sequence[str]) -> list[int]:
    return [math.ceil(1.3 * len(_WORD.findall(t))) for t in texts]


def tokenizer_count(tokenizer) -> Callable[[Sequence[str]], list[int]]:
    """Count WordPiece tokens (no special tokens) with a `tokenizers` tokenizer, untruncated."""

    def count(texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        tokenizer.no_truncation()
        try:
            return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]
        finally:
            tokenizer.enable_truncation(max_length=512)

    return count


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _SENT.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _cut_long(text: str, a: int, b: int, n_tokens: int, budget: int) -> list[tuple[int, int]]:
    """Cut one over-long sentence into word-aligned pieces of about `budget` tokens."""
    words = [(a + m.start(), a + m.end()) for m in _WORD.finditer(text[a:b])]
    per_word = n_tokens / max(len(words), 1)
    step = max(1, int(budget / per_word))
    return [(words[i][0], words[min(i + step, len(words)) - 1][1]) for i in range(0, len(words), step)]


def split_text(text: str, budget: int, count: Callable[[Sequence[str]], list[int]]) -> list[tuple[int, int]]:
    """Character spans of the windows of one text."""
    sents = _sentences(text)
    if not sents:
        return []
    counts = count([text[a:b] for a, b in sents])
    pieces: list[tuple[int, int, int]] = []
    for (a, b), n in zip(sents, counts):
        if n > budget:
            sub = _cut_long(text, a, b, n, budget)
            sub_n = count([text[x:y] for x, y in sub])
            pieces.extend((x, y, m) for (x, y), m in zip(sub, sub_n))
        else:
            pieces.append((a, b, n))
    windows: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    used = 0
    for a, b, n in pieces:
        if cur is not None and used + n <= budget:
            cur = (cur[0], b)
            used += n
        else:
            if cur is not None:
                windows.append(cur)
            cur, used = (a, b), n
    if cur is not None:
        windows.append(cur)
    return windows


@dataclass
class Chunks:
    """Chunk spans over an index's records, and (once encoded) their vectors."""

    record: np.ndarray  # (n,) int32 record position of each chunk, ascending
    start: np.ndarray  # (n,) int32 start char in record_text(record)
    end: np.ndarray  # (n,) int32 end char
    budget: int  # 0 for section chunks
    counter: str  # "wordpiece" or "proxy" (token-budget windows), "sections" (one chunk per section)
    vectors: np.ndarray | None = None  # (n, dim) float32, unit rows

    def __len__(self) -> int:
        return len(self.record)

    def encoded(self) -> np.ndarray:
        """The chunk vectors (InputError before the chunks are encoded)."""
        if self.vectors is None:
            raise InputError("serendipity chunks are not encoded yet; run `sidelight certify INDEX`")
        return self.vectors

    def texts(self, records) -> list[str]:
        return [self.text(records, i) for i in range(len(self))]

    def text(self, records, i: int) -> str:
        return record_text(records[int(self.record[i])])[int(self.start[i]):int(self.end[i])]

    def per_record(self, n_records: int) -> np.ndarray:
        return np.bincount(self.record, minlength=n_records).astype(np.int64)

    def offsets(self, n_records: int) -> np.ndarray:
        """CSR-style offsets: the chunks of record r are offsets[r]:offsets[r+1]."""
        return np.concatenate([[0], np.cumsum(self.per_record(n_records))])

    def save(self, folder: Path) -> dict:
        np.save(folder / "chunk_record.npy", self.record.astype(np.int32))
        np.save(folder / "chunk_span.npy", np.stack([self.start, self.end], axis=1).astype(np.int32))
        if self.vectors is not None:
            np.save(folder / "chunk_vectors.npy", np.ascontiguousarray(self.vectors, dtype=np.float32))
        return {"chunks": len(self), "budget": self.budget, "counter": self.counter,
                "dim": None if self.vectors is None else int(self.vectors.shape[1])}

    @classmethod
    def load(cls, folder: Path, meta: dict) -> "Chunks":
        span = np.load(folder / "chunk_span.npy")
        vec = folder / "chunk_vectors.npy"
        return cls(np.load(folder / "chunk_record.npy"), span[:, 0], span[:, 1], meta["budget"], meta["counter"],
                   np.load(vec, mmap_mode="r") if vec.exists() else None)


def make_chunks(records, budget: int = DEFAULT_BUDGET, tokenizer=None, progress: bool = False) -> Chunks:
    count = tokenizer_count(tokenizer) if tokenizer is not None else proxy_count
    rec, st, en = [], [], []
    with progress_bar(len(records), "chunking records", progress) as advance:
        for pos, r in enumerate(records):
            for a, b in split_text(record_text(r), budget, count):
                rec.append(pos)
                st.append(a)
                en.append(b)
            advance(1)
    return Chunks(np.asarray(rec, dtype=np.int32), np.asarray(st, dtype=np.int32), np.asarray(en, dtype=np.int32),
                  budget, "wordpiece" if tokenizer is not None else "proxy")


def heading_only(body: str, heading: Sequence[str]) -> bool:
    """True when a section's text is its own heading and nothing else with words in it."""
    body = body.strip()
    if heading and body.startswith(heading[-1]):
        body = body[len(heading[-1]):]
    return not any(c.isalnum() for c in body)


def section_key(body: str) -> str:
    """A section's text as `boilerplate_sections` compares it: lower case, links' URLs dropped, its words
    joined by one space (so a footer whose links name each note's own file is one text)."""
    return " ".join(_KEYWORD.findall(_URL.sub("]", body).lower()))


@dataclass
class Boilerplate:
    """What `boilerplate_sections` left out: sections, their distinct texts, the notes that held them."""

    sections: int = 0
    texts: int = 0
    notes: int = 0
    min_notes: int = BOILERPLATE_MIN_NOTES
    examples: tuple[str, ...] = ()  # up to 3 of the texts, most widespread first (ties by text)

    def as_dict(self) -> dict:
        return {"rule": f"a section whose normalised text is in >= {self.min_notes} notes is boilerplate, no chunk",
                "sections": self.sections, "texts": self.texts, "notes": self.notes,
                "examples": list(self.examples)}


def boilerplate_sections(candidates: Sequence[tuple[int, int, str]],
                         min_notes: int = BOILERPLATE_MIN_NOTES) -> tuple[set[tuple[int, int]], Boilerplate]:
    """The (record, section index) pairs among `candidates` ((record, index, section text)) whose
    `section_key` occurs in `min_notes` or more distinct records, and a count of them."""
    owners: dict[str, set[int]] = {}
    keys = []
    for pos, index, body in candidates:
        k = section_key(body)
        keys.append(k)
        owners.setdefault(k, set()).add(pos)
    common = {k for k, o in owners.items() if k and len(o) >= min_notes}
    out = {(pos, index) for (pos, index, _), k in zip(candidates, keys) if k in common}
    widest = sorted(common, key=lambda k: (-len(owners[k]), k))[:3]
    notes = {pos for pos, _ in out}
    return out, Boilerplate(len(out), len(common), len(notes), min_notes, tuple(w[:120] for w in widest))


def section_chunks(records, min_notes: int = BOILERPLATE_MIN_NOTES
                   ) -> tuple[Chunks, list[tuple[int, int]], list[str], Boilerplate]:
    """One chunk per section with words in it besides its heading (`corpus.passages.window_texts`; a
    section that is only a heading, often a template's empty slot, is none) and not boilerplate
    (`boilerplate_sections`), record-major; also each chunk's (record, section index), the text the
    dense lane reads for it, and what the boilerplate rule left out."""
    from ..corpus.passages import sections_of, window_texts

    found = []
    for pos, r in enumerate(records):
        spans = {s.index: s for s in sections_of(r)}
        for index, text in window_texts(r):
            a, b = spans[index].start, spans[index].end
            if not heading_only(r.text[a:b], spans[index].heading):
                found.append((pos, index, a, b, text))
    common, bp = boilerplate_sections([(pos, index, records[pos].text[a:b])
                                                for pos, index, a, b, _ in found], min_notes)
    kept = [f for f in found if (f[0], f[1]) not in common]
    ch = Chunks(np.asarray([f[0] for f in kept], dtype=np.int32), np.asarray([f[2] for f in kept], dtype=np.int32),
                np.asarray([f[3] for f in kept], dtype=np.int32), 0, "sections")
    return ch, [(f[0], f[1]) for f in kept], [f[4] for f in kept], bp


def section_vectors(keys: Sequence[tuple[int, int]], owner: np.ndarray, section: np.ndarray,
                    windows: np.ndarray) -> np.ndarray | None:
    """Each (record, section)'s vector from an index's section windows: the unit-normalised mean of its
    windows; None when some section has no window (the windows were made from other sections)."""
    owner, section = np.asarray(owner, np.int64), np.asarray(section, np.int64)
    if not len(keys):
        return np.zeros((0, windows.shape[1]), np.float32)
    base = int(section.max(initial=0)) + 1
    key = owner * base + section
    want = np.array([r * base + s if s < base else -1 for r, s in keys], np.int64)
    order = np.argsort(key, kind="stable")
    lo = np.searchsorted(key[order], want, side="left")
    hi = np.searchsorted(key[order], want, side="right")
    if np.any(hi <= lo) or np.any(want < 0):
        return None
    out = np.zeros((len(keys), windows.shape[1]), np.float64)
    for i, (a, b) in enumerate(zip(lo, hi)):
        out[i] = np.asarray(windows[order[a:b]], np.float64).mean(axis=0)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out.astype(np.float32)


def cache_key(identity: dict, texts: Sequence[str]) -> str:
    h = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:20]


def encode_cached(embedder, texts: Sequence[str], cache: Path | None, batch_size: int = 32,
                  progress: bool = False) -> np.ndarray:
    """Embed `texts` as documents, in resumable blocks cached under `cache` (None: no cache)."""
    texts = list(texts)
    n = len(texts)
    folder = None
    if cache is not None:
        folder = Path(cache) / f"chunkvecs-{cache_key(embedder.identity, texts)}"
        final = folder / "all.npy"
        if final.exists():
            arr = np.load(final)
            if arr.shape[0] == n:
                return arr
        folder.mkdir(parents=True, exist_ok=True)
    parts = []
    with progress_bar(n, "encoding chunks", progress) as advance:
        for b, start in enumerate(range(0, n, BLOCK)):
            block = texts[start:start + BLOCK]
            path = folder / f"block-{b:05d}.npy" if folder is not None else None
            if path is not None and path.exists():
                vec = np.load(path)
            else:
                vec = embedder.encode(block, batch_size=batch_size, kind="doc")
                if path is not None:
                    tmp = path.with_suffix(".tmp.npy")
                    np.save(tmp, vec)
                    tmp.replace(path)
            parts.append(vec)
            advance(len(block))
    dim = embedder.dim
    out = np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, dim), np.float32)
    if folder is not None:
        tmp = folder / "all.tmp.npy"
        np.save(tmp, out)
        tmp.replace(folder / "all.npy")
        for p in folder.glob("block-*.npy"):
            p.unlink()
    return out
