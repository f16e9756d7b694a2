"""The build's hot loop compiled: split a chunk of prepared text into raw tokens and give each
distinct raw token an id, in order of first appearance (what `lexical._count` does with
`bytes.split`, `dict.fromkeys` and a dict lookup per token).

The input is the chunk's texts lowercased, UTF-8 encoded and translated so that every byte
outside [a-z0-9] is a space, each followed by a newline: a token is a maximal run of bytes that
are neither space nor newline, and a newline ends a record. Distinct tokens live in an
open-addressing hash table (FNV-1a, linear probing) whose keys are copied into one byte array.
`_tokenize` returns early when the table is half full or a key array is full; the caller grows
them (`_rehash`) and calls again from where it stopped. `_count_rows` then turns a chunk's term
ids into rows of ascending distinct terms with their counts (what scipy's `sum_duplicates` gives).

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS`.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("_tokenize", "_rehash", "_count_rows")

_SPACE, _NEWLINE = 32, 10
_FNV_OFFSET, _FNV_PRIME = np.uint64(14695981039346656037), np.uint64(1099511628211)


def _tokenize(buf, pos, table, key_hash, key_off, key_len, n_keys, key_bytes, key_used, ids, n_ids, doc_len, doc):
    """Scan `buf` from `pos`; returns (pos, n_ids, n_keys, key_used, doc) where it stopped (len(buf) when done)."""
    n = len(buf)
    mask = len(table) - 1
    while pos < n:
        c = buf[pos]
        if c == _NEWLINE:
            doc += 1
            pos += 1
            continue
        if c == _SPACE:
            pos += 1
            continue
        end = pos
        h = _FNV_OFFSET
        while end < n and buf[end] != _SPACE and buf[end] != _NEWLINE:
            h = (h ^ np.uint64(buf[end])) * _FNV_PRIME
            end += 1
        size = end - pos
        if 2 * (n_keys + 1) > len(table) or n_keys + 1 > len(key_off) or key_used + size > len(key_bytes):
            return pos, n_ids, n_keys, key_used, doc  # the caller grows the table or the key arrays
        slot = h & np.uint64(mask)
        while True:
            k = table[slot]
            if k < 0:  # a new raw token: insert it
                k = n_keys
                table[slot] = k
                key_hash[k] = h
                key_off[k] = key_used
                key_len[k] = size
                key_bytes[key_used:key_used + size] = buf[pos:end]
                key_used += size
                n_keys += 1
                break
            if key_hash[k] == h and key_len[k] == size:
                o = key_off[k]
                same = True
                for i in range(size):
                    if key_bytes[o + i] != buf[pos + i]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + np.uint64(1)) & np.uint64(mask)
        ids[n_ids] = k
        n_ids += 1
        doc_len[doc] += 1
        pos = end
    return pos, n_ids, n_keys, key_used, doc


def _rehash(key_hash, n_keys, size):
    """A table of `size` slots (a power of two) holding keys 0..n_keys-1."""
    table = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    for k in range(n_keys):
        slot = key_hash[k] & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = k
    return table


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
