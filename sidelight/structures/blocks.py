"""Building the lexical index in blocks, straight into its folder: memory bounded by one block.

`LexicalIndex.build` holds every posting in memory several times over (counts, weights, their
transpose); at a million records that is several GB. `build_lexical_folder` writes the same
files `LexicalIndex.save` writes, bit for bit, while holding only the vocabulary, a few arrays of
one value per record or term, and one block:

1. **Count.** Records are tokenized and counted `block` at a time (`lexical._count`, the build's
   fast path, with one vocabulary across blocks, so term ids are those of a single pass). Each
   block's counts are appended to `tf_data.npy` / `tf_indices.npy` by plain writes, and its
   document lengths and document frequencies are kept.
2. **Weigh and transpose.** With N, avgdl and df known, BM25 weights are term-major (CSC). The
   terms are cut into ranges of at most `budget` postings; for each range, every block is read
   back, weighed (`lexical.weigh`, the same float operations as the in-memory build), transposed
   by scipy, and its slice of the range scattered into place; the range is then appended to
   `bm25_data.npy` / `bm25_indices.npy`, with its pruning bounds and dense rows.

Arrays are written with `numpy.lib.format` headers and plain `write` calls (never a writable
memory map, whose dirty pages would count against the process), and read back with `fromfile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterable

import numpy as np
import scipy.sparse as sp

from ..store.column import write_column
from ..text import Tokenizer, TokenizerConfig
from .lexical import BM25Params, _count, bm25_idf, bm25_norm, common_terms, weigh

BLOCK = 16384  # records counted per block
BUDGET = 1 << 24  # postings weighed and transposed per term range (16.8M: about 200 MB of buffers)


def _index_dtype(*extents: int) -> type:
    """int32 while every index fits, as scipy chooses for its sparse matrices (same kernel signatures)."""
    return np.int32 if max(extents, default=0) < np.iinfo(np.int32).max else np.int64


class _NpyWriter:
    """A 1-D or 2-D .npy file of known shape, filled by appending arrays in order."""

    def __init__(self, path: Path, dtype, shape: tuple[int, ...]):
        self.f: BinaryIO = open(path, "wb")
        self.dtype, self.left = np.dtype(dtype), int(np.prod(shape))
        np.lib.format.write_array_header_1_0(self.f, {"descr": np.lib.format.dtype_to_descr(self.dtype),
                                                      "fortran_order": False, "shape": tuple(shape)})
        self.offset = self.f.tell()

    def append(self, a: np.ndarray) -> None:
        a = np.ascontiguousarray(a, dtype=self.dtype)
        self.left -= a.size
        self.f.write(a.tobytes())

    def close(self) -> None:
        self.f.close()
        if self.left != 0:
            raise RuntimeError(f"{self.f.name}: {self.left} values short of its header")


def build_lexical_folder(texts: Iterable[str], folder: Path, tokenizer_config: TokenizerConfig = TokenizerConfig(),
                         params: BM25Params = BM25Params(), progress=None, block: int = BLOCK,
                         budget: int = BUDGET) -> dict:
    """Tokenize `texts` (one per record, in corpus order) into the lexical index folder `folder`,
    as `LexicalIndex.save` would write it; returns the settings a manifest keeps."""
    folder = Path(folder)
    folder.mkdir()
    tokenizer = Tokenizer(tokenizer_config)
    vocab: dict[str, int] = {}
    counts, lengths, df_parts = [], [], []
    spill = {name: open(folder / f".{name}.raw", "wb") for name in ("data", "indices")}
    batch: list[str] = []

    def flush() -> None:
        m = _count(batch, tokenizer, vocab, None)
        spill["data"].write(m.data.astype(np.int32).tobytes())
        spill["indices"].write(m.indices.astype(np.int32).tobytes())
        per_row = np.diff(m.indptr)
        counts.append(per_row)
        lengths.append(np.bincount(np.repeat(np.arange(len(batch)), per_row), weights=m.data,
                                   minlength=len(batch)))
        df_parts.append(np.bincount(m.indices, minlength=len(vocab)))
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for text in texts:
        batch.append(text)
        if len(batch) == block:
            flush()
    if batch or not counts:
        flush()
    for f in spill.values():
        f.close()

    n_docs, n_terms = sum(map(len, counts)), len(vocab)
    df = np.zeros(n_terms, dtype=np.int64)
    for part in df_parts:
        df[:len(part)] += part
    df_parts.clear()
    row_counts = np.concatenate(counts)
    block_rows = [len(c) for c in counts]
    block_nnz = [int(c.sum()) for c in counts]
    counts.clear()
    nnz = int(row_counts.sum())
    idx = _index_dtype(nnz, n_docs, n_terms)
    doc_len = np.concatenate(lengths).astype(np.float64)
    lengths.clear()
    avgdl = float(doc_len.mean()) if n_docs else 0.0
    df_f = df.astype(np.float64)
    idf = bm25_idf(df_f, n_docs, params.variant)
    norm = bm25_norm(doc_len, avgdl, params)

    # the term counts: the raw spill gets its .npy header (a copy by plain reads and writes)
    tf_at = {}  # where each counts file's values begin (after its header)
    for name in ("data", "indices"):
        out = _NpyWriter(folder / f"tf_{name}.npy", np.int32, (nnz,))
        with open(folder / f".{name}.raw", "rb") as f:
            for chunk in iter(lambda: f.read(1 << 24), b""):
                out.append(np.frombuffer(chunk, dtype=np.int32))
        out.close()
        tf_at[name] = out.offset
        (folder / f".{name}.raw").unlink()
    tf_indptr = np.zeros(n_docs + 1, dtype=_index_dtype(nnz, n_docs, n_terms))
    np.cumsum(row_counts, out=tf_indptr[1:])
    np.save(folder / "tf_indptr.npy", tf_indptr, allow_pickle=False)

    # BM25 weights, term-major, range by range
    col_ptr = np.zeros(n_terms + 1, dtype=idx)
    np.cumsum(df, out=col_ptr[1:])
    common = common_terms(df_f, n_docs)
    dense_row = np.full(n_terms, -1, dtype=np.int64)
    dense_row[common] = np.arange(len(common))
    ub = np.zeros(n_terms)
    w_data = _NpyWriter(folder / "bm25_data.npy", np.float64, (nnz,))
    w_rows = _NpyWriter(folder / "bm25_indices.npy", idx, (nnz,))
    dense = _NpyWriter(folder / "dense.npy", np.float64, (len(common), n_docs))
    block_first_row = np.concatenate([[0], np.cumsum(block_rows)]).astype(np.int64)
    block_first_entry = np.concatenate([[0], np.cumsum(block_nnz)]).astype(np.int64)
    for lo, hi in _term_ranges(df, budget):
        base = int(col_ptr[lo])
        data = np.empty(int(col_ptr[hi]) - base)
        rows = np.empty(len(data), dtype=idx)
        cursor = col_ptr[lo:hi].astype(np.int64) - base
        for b, n_rows in enumerate(block_rows):
            e0, e1 = int(block_first_entry[b]), int(block_first_entry[b + 1])
            tf = np.fromfile(folder / "tf_data.npy", dtype=np.int32, count=e1 - e0,
                             offset=tf_at["data"] + 4 * e0).astype(np.float64)
            terms = np.fromfile(folder / "tf_indices.npy", dtype=np.int32, count=e1 - e0,
                                offset=tf_at["indices"] + 4 * e0)
            keep = (terms >= lo) & (terms < hi)
            local_rows = np.repeat(np.arange(n_rows), row_counts[block_first_row[b]:block_first_row[b + 1]])
            tf, terms, local_rows = tf[keep], terms[keep] - lo, local_rows[keep]
            q = norm[block_first_row[b] + local_rows]
            weigh(tf, q, idf[terms + lo], params)
            csc = sp.csr_matrix((q, terms, np.concatenate([[0], np.cumsum(np.bincount(local_rows, minlength=n_rows))])),
                                shape=(n_rows, hi - lo)).tocsc()  # rows stay ascending within a term
            per_term = np.diff(csc.indptr)
            at = np.repeat(cursor - csc.indptr[:-1], per_term) + np.arange(csc.nnz)
            data[at] = csc.data
            rows[at] = csc.indices + block_first_row[b]
            cursor += per_term
        seg = col_ptr[lo:hi + 1].astype(np.int64) - base
        nz = np.flatnonzero(np.diff(seg) > 0)
        if len(nz):
            ub[lo + nz] = np.maximum.reduceat(data, seg[:-1][nz])
        for t in common[(common >= lo) & (common < hi)]:
            row = np.zeros(n_docs)
            a, z = seg[t - lo], seg[t - lo + 1]
            row[rows[a:z]] = data[a:z]
            dense.append(row)
        w_data.append(data)
        w_rows.append(rows)
    for writer in (w_data, w_rows, dense):
        writer.close()
    np.save(folder / "bm25_indptr.npy", col_ptr, allow_pickle=False)
    for name, array in (("doc_len", doc_len), ("df", df_f), ("ub", ub), ("dense_row", dense_row)):
        np.save(folder / f"{name}.npy", array, allow_pickle=False)
    terms_by_id = list(vocab)
    order = sorted(range(n_terms), key=lambda i: terms_by_id[i].encode("utf-8"))
    write_column(folder, "vocab", (terms_by_id[i] for i in order))
    np.save(folder / "vocab_ids.npy", np.asarray(order, dtype=np.int64), allow_pickle=False)
    return {"tokenizer": tokenizer_config.to_dict(), "bm25": params.to_dict(), "terms": n_terms}


def _term_ranges(df: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive term ranges of at most `budget` postings each (a single term may exceed it alone)."""
    out, lo, total = [], 0, 0
    for t, d in enumerate(df.tolist()):
        if total and total + d > budget:
            out.append((lo, t))
            lo, total = t, 0
        total += d
    out.append((lo, len(df)))
    return out
