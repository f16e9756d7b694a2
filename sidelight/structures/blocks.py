"""Building the lexical index in blocks, straight into its folder: memory bounded by one block.

`LexicalIndex.build` holds every posting in memory several times over (counts, weights, their
transpose); at a million records that is several GB. `build_lexical_folder` writes the same
files `LexicalStore.save` writes, bit for bit, while holding only the vocabulary, a few arrays of
one value per record or term, and one block:

1. **Count.** Records are tokenized and counted `block` at a time (`term_counts.count_matrix`, the build's
   fast path, with one vocabulary and one raw-token table across blocks, so term ids are those of a
   single pass and each distinct raw token is tokenized once). Each
   block's counts are spilled to a raw file by plain writes, and its document lengths and
   document frequencies are kept.
2. **Partition.** With the document frequencies known, the terms are cut into ranges of at most
   `budget` postings. One pass over the spilled counts writes the `.npy` files of the counts and
   appends each block's postings to the bucket file of their term range (rows stay ascending).
3. **Weigh and transpose.** With N, avgdl and df known, each bucket is read back, weighed
   (`lexical_store.weigh`, the same float operations as the in-memory build) and put in term-major
   order by scipy's stable counting sort (COO to CSC), or both in one compiled pass with numba
   (`kernels.transpose`, bit-identical), then appended to `bm25_data.npy` / `bm25_indices.npy`,
   with its terms' pruning bounds and dense rows.

Arrays are written with `numpy.lib.format` headers and plain `write` calls (never a writable
memory map, whose dirty pages would count against the process), and read back with `fromfile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    pass

from ..text import Tokenizer, TokenizerConfig
from . import kernels as _kernels
from .lexical_store import BM25Params, bm25_idf, bm25_norm, common_terms, weigh, write_vocab
from .term_counts import RawTerms, count_matrix

BLOCK = 8192  # records counted per block
BUDGET = 1 << 21  # postings weighed and transposed per term range (2.1M: about 100 MB of buffers)


def _index_dtype(*extents: int) -> type[np.signedinteger[Any]]:
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
        a.tofile(self.f)

    def close(self) -> None:
        self.f.close()
        if self.left != 0:
            raise RuntimeError(f"{self.f.name}: {self.left} values short of its header")


def build_lexical_folder(texts: Iterable[str], folder: Path, tokenizer_config: TokenizerConfig = TokenizerConfig(),
                         params: BM25Params = BM25Params(), progress=None, block: int = BLOCK,
                         budget: int = BUDGET) -> dict:
    """Tokenize `texts` (one per record, in corpus order) into the lexical index folder `folder`,
    as `LexicalStore.save` would write it; returns the settings a manifest keeps."""
    folder = Path(folder)
    folder.mkdir()
    tokenizer = Tokenizer(tokenizer_config)
    vocab: dict[str, int] = {}
    seen = RawTerms()
    counts, lengths = [], []
    df = np.zeros(0, dtype=np.int64)
    spill = {name: open(folder / f".{name}.raw", "wb") for name in ("data", "indices")}
    batch: list[str] = []

    def flush() -> None:
        nonlocal df
        m = count_matrix(batch, tokenizer, vocab, None, seen)
        m.data.astype(np.int32).tofile(spill["data"])
        m.indices.astype(np.int32).tofile(spill["indices"])
        per_row = np.diff(m.indptr)
        counts.append(per_row)
        lengths.append(np.bincount(np.repeat(np.arange(len(batch)), per_row), weights=m.data,
                                   minlength=len(batch)))
        df = np.concatenate([df, np.zeros(len(vocab) - len(df), dtype=np.int64)])  # the vocabulary grew
        df += np.bincount(m.indices, minlength=len(vocab))
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

    # one pass over the spill: the term counts get their .npy files, and every posting goes to the
    # bucket of its term range (rows ascending within each bucket, as blocks come in row order)
    ranges = _term_ranges(df, budget)
    small = len(ranges) <= np.iinfo(np.int16).max  # numpy's stable sort is a radix sort for 16-bit keys
    bucket_of = np.repeat(np.arange(len(ranges), dtype=np.int16 if small else np.int64),
                          [hi - lo for lo, hi in ranges])
    tf_out = {name: _NpyWriter(folder / f"tf_{name}.npy", np.int32, (nnz,)) for name in ("data", "indices")}
    raw = {name: open(folder / f".{name}.raw", "rb") for name in ("data", "indices")}
    buckets = [{part: folder / f".bucket-{r}.{part}" for part in ("rows", "terms", "tf")} for r in range(len(ranges))]
    first_row = 0
    for b, n_rows in enumerate(block_rows):
        tf = np.fromfile(raw["data"], dtype=np.int32, count=block_nnz[b])
        terms = np.fromfile(raw["indices"], dtype=np.int32, count=block_nnz[b])
        tf_out["data"].append(tf)
        tf_out["indices"].append(terms)
        rows = np.repeat(np.arange(first_row, first_row + n_rows, dtype=idx), row_counts[first_row:first_row + n_rows])
        first_row += n_rows
        bucket = bucket_of[terms]
        order = np.argsort(bucket, kind="stable")
        cuts = np.cumsum(np.bincount(bucket, minlength=len(ranges)))
        for r, (a, z) in enumerate(zip(np.concatenate([[0], cuts[:-1]]), cuts)):
            if z > a:
                pick = order[a:z]
                for part, values in (("rows", rows), ("terms", terms), ("tf", tf)):
                    with open(buckets[r][part], "ab") as f:
                        values[pick].tofile(f)
    for reader in raw.values():
        reader.close()
    for name, out in tf_out.items():
        out.close()
        (folder / f".{name}.raw").unlink()
    tf_indptr = np.zeros(n_docs + 1, dtype=idx)
    np.cumsum(row_counts, out=tf_indptr[1:])
    np.save(folder / "tf_indptr.npy", tf_indptr, allow_pickle=False)

    # BM25 weights, term-major, one bucket (term range) at a time
    col_ptr = np.zeros(n_terms + 1, dtype=idx)
    np.cumsum(df, out=col_ptr[1:])
    common = common_terms(df_f, n_docs)
    dense_row = np.full(n_terms, -1, dtype=np.int64)
    dense_row[common] = np.arange(len(common))
    ub = np.zeros(n_terms)
    w_data = _NpyWriter(folder / "bm25_data.npy", np.float64, (nnz,))
    w_rows = _NpyWriter(folder / "bm25_indices.npy", idx, (nnz,))
    dense = _NpyWriter(folder / "dense.npy", np.float64, (len(common), n_docs))
    compiled = _kernels.enabled()
    scale = 1.0 if params.variant == "lucene" else params.k1 + 1.0
    for (lo, hi), files in zip(ranges, buckets):
        if not files["rows"].exists():
            continue  # no posting in this range (only terms of df 0)
        rows = np.fromfile(files["rows"], dtype=idx)
        terms = np.fromfile(files["terms"], dtype=np.int32)
        tf = np.fromfile(files["tf"], dtype=np.int32)
        for path in files.values():
            path.unlink()
        seg = (col_ptr[lo:hi + 1] - col_ptr[lo]).astype(np.int64)
        if compiled:  # one compiled pass: the same weights, order and bounds as below
            data, indices = np.empty(len(rows)), np.empty(len(rows), dtype=idx)
            _kernels.weigh_transpose(rows, terms, tf, lo, seg[:-1], norm, idf[lo:hi], scale, data, indices, ub[lo:hi])
        else:
            q = norm[rows]
            weigh(tf.astype(np.float64), q, idf[terms], params)
            # a stable counting sort by term: rows stay ascending within each term
            import scipy.sparse as sp
            csc = sp.csc_matrix((q, (rows, terms - lo)), shape=(n_docs, hi - lo))
            data, indices = csc.data, csc.indices
            del q
            nz = np.flatnonzero(np.diff(seg) > 0)
            if len(nz):
                ub[lo + nz] = np.maximum.reduceat(data, seg[:-1][nz])
        del rows, terms, tf
        for t in common[(common >= lo) & (common < hi)]:
            row = np.zeros(n_docs)
            a, z = seg[t - lo], seg[t - lo + 1]
            row[indices[a:z]] = data[a:z]
            dense.append(row)
        w_data.append(data)
        w_rows.append(indices)
    for writer in (w_data, w_rows, dense):
        writer.close()
    np.save(folder / "bm25_indptr.npy", col_ptr, allow_pickle=False)
    for name, array in (("doc_len", doc_len), ("df", df_f), ("ub", ub), ("dense_row", dense_row)):
        np.save(folder / f"{name}.npy", array, allow_pickle=False)
    write_vocab(folder, list(vocab))
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
