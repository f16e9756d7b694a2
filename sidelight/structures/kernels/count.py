"""The build's hot loop compiled: split a chunk of text into raw tokens and give each distinct
raw token an id, in order of first appearance (what `term_counts.count_matrix` does with `bytes.split`,
`dict.fromkeys` and a dict lookup per token).

The input is the chunk's texts UTF-8 encoded and joined, with the byte offset where each record
ends. `BYTE_CLASS` maps every byte to itself for [a-z0-9], A-Z to lowercase and all else to 0: a
token is a maximal run of nonzero classes within a record, spelled in its classes. A text that is
not ASCII comes lowercased by Python first (`str.lower` may turn a non-ASCII character into an
ASCII letter; its other non-ASCII bytes are class 0), so it tokenizes as the reference does.
Distinct tokens live in an open-addressing table (linear probing) of two words per slot: the key
(a token of at most 8 bytes is its own key, packed into a word, so it matches without reading
its bytes; a longer one is a hash, then compared byte by byte) and (id + 1) << 32 | length; their
bytes are appended to one array, token k at key_off[k]:key_off[k + 1]. `_tokenize` returns early
when the table is half full or a key array is full; the caller grows them (`_rehash`) and calls
again from where it stopped. `_count_rows` then turns a chunk's term ids into rows of ascending
distinct terms with their counts (what scipy's `sum_duplicates` gives).

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS`.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("_slot_of", "_tokenize", "_rehash", "_count_rows")

BYTE_CLASS = np.array([c if 97 <= c <= 122 or 48 <= c <= 57 else c + 32 if 65 <= c <= 90 else 0
                       for c in range(256)], dtype=np.uint8)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio (Fibonacci hashing)
_LOW = np.uint64(0xFFFFFFFF)


def _slot_of(key, mask):
    """The first slot a key probes."""
    x = key * _MIX
    return (x ^ (x >> np.uint64(29))) & mask


def _tokenize(buf, ends, pos, doc, cls, table, key_off, n_keys, key_bytes, key_used, ids, n_ids, doc_len):
    """Scan `buf` from `pos` (in record `doc`); returns (pos, doc, n_ids, n_keys, key_used) where it
    stopped (doc == len(ends) when done)."""
    mask = np.uint64(table.shape[0] - 1)
    while doc < len(ends):
        stop = ends[doc]
        while pos < stop:
            if cls[buf[pos]] == 0:
                pos += 1
                continue
            end = pos
            h = np.uint64(0)
            w = np.uint64(0)
            while end < stop:
                c = cls[buf[end]]
                if c == 0:
                    break
                if end > pos and (end - pos) & 7 == 0:  # a 9th, 17th, ... byte: fold the word in
                    h = (h ^ w) * _MIX
                    w = np.uint64(0)
                w = (w << np.uint64(8)) | np.uint64(c)
                end += 1
            size = end - pos
            key = w if size <= 8 else (h ^ w ^ np.uint64(size)) * _MIX
            if 2 * (n_keys + 1) > table.shape[0] or n_keys + 2 > len(key_off) or key_used + size > len(key_bytes):
                return pos, doc, n_ids, n_keys, key_used  # the caller grows the table or the key arrays
            slot = _slot_of(key, mask)
            while True:
                meta = table[slot, 1]
                if meta == 0:  # a new raw token: insert it
                    k = n_keys
                    table[slot, 0] = key
                    table[slot, 1] = (np.uint64(k + 1) << np.uint64(32)) | np.uint64(size)
                    for i in range(size):
                        key_bytes[key_used + i] = cls[buf[pos + i]]
                    key_used += size
                    key_off[k + 1] = key_used
                    n_keys += 1
                    break
                if table[slot, 0] == key and (meta & _LOW) == np.uint64(size):
                    k = np.int64(meta >> np.uint64(32)) - 1
                    if size <= 8:
                        break
                    o = key_off[k]
                    same = True
                    for i in range(size):
                        if key_bytes[o + i] != cls[buf[pos + i]]:
                            same = False
                            break
                    if same:
                        break
                slot = (slot + np.uint64(1)) & mask
            ids[n_ids] = k
            n_ids += 1
            doc_len[doc] += 1
            pos = end
        doc += 1
    return pos, doc, n_ids, n_keys, key_used


def _rehash(table, size):
    """A table of `size` slots (a power of two) holding the keys of `table`."""
    out = np.zeros((size, 2), dtype=np.uint64)
    mask = np.uint64(size - 1)
    for s in range(table.shape[0]):
        if table[s, 1] != 0:
            slot = _slot_of(table[s, 0], mask)
            while out[slot, 1] != 0:
                slot = (slot + np.uint64(1)) & mask
            out[slot, 0] = table[s, 0]
            out[slot, 1] = table[s, 1]
    return out


def _count_rows(ids, lengths):
    """Per record (`lengths[d]` consecutive term ids, -1 for a dropped token): its distinct terms in
    ascending order and how often each occurs. Returns (terms per record, terms, counts).

    One pass per record tallies each term in the slot `slot[t]` it got on first sight (-1: not
    yet seen in this record); then only the record's distinct terms are sorted, and reading their
    tallies resets their slots for the next record."""
    n_docs = len(lengths)
    row_counts = np.zeros(n_docs, dtype=np.int64)
    out_terms = np.empty(len(ids), dtype=np.int32)
    out_counts = np.empty(len(ids), dtype=np.int32)
    slot = np.full(max(ids.max() + 1, 1) if len(ids) else 1, -1, dtype=np.int32)
    tally = np.empty(max(lengths.max(), 1) if n_docs else 1, dtype=np.int32)
    o = 0
    p = 0
    for d in range(n_docs):
        start = o
        for i in range(p, p + lengths[d]):
            t = ids[i]
            if t < 0:
                continue
            s = slot[t]
            if s < 0:
                slot[t] = o - start
                tally[o - start] = 1
                out_terms[o] = t
                o += 1
            else:
                tally[s] += 1
        p += lengths[d]
        out_terms[start:o].sort()
        for j in range(start, o):
            t = out_terms[j]
            out_counts[j] = tally[slot[t]]
            slot[t] = -1
        row_counts[d] = o - start
    return row_counts, out_terms[:o], out_counts[:o]
