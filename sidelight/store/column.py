"""A column of strings on disk: one UTF-8 blob plus an offset table, read by position without parsing.

    NAME.bin       the strings' UTF-8 bytes, back to back
    NAME.off.npy   int64 byte offsets, one more than there are strings (string i is bin[off[i]:off[i+1]])

Opening memory-maps both files, so it costs the same for ten strings or ten million; a string
is decoded only when it is read. Index folders keep record ids, titles and the vocabulary so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Sequence, overload

import numpy as np

from ..errors import IndexFormatError


def write_column(folder: Path, name: str, values: Iterable[str]) -> int:
    """Write `values` as column `name` in `folder`; returns how many were written."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    (folder / f"{name}.bin").write_bytes(b"".join(encoded))
    np.save(folder / f"{name}.off.npy", offsets, allow_pickle=False)
    return len(encoded)


class StringColumn(Sequence[str]):
    """The column `write_column` wrote, memory-mapped: `col[i]`, `len(col)`, iteration, `tolist()`."""

    def __init__(self, folder: Path, name: str):
        try:
            self._off = np.load(folder / f"{name}.off.npy", mmap_mode="r", allow_pickle=False)
            size = (folder / f"{name}.bin").stat().st_size
            self._blob = (np.memmap(folder / f"{name}.bin", dtype=np.uint8, mode="r") if size
                          else np.zeros(0, dtype=np.uint8))
        except (OSError, ValueError) as exc:
            raise IndexFormatError(f"{folder}: cannot read column {name} ({exc})") from exc
        if self._off.ndim != 1 or len(self._off) == 0 or int(self._off[-1]) != size:
            raise IndexFormatError(f"{folder}: column {name}: offsets do not fit its {size} bytes")

    def __len__(self) -> int:
        return len(self._off) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._blob[self._off[i]:self._off[i + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        """Every string, decoded in one pass over the blob."""
        blob, off = self._blob.tobytes(), self._off.tolist()
        return [blob[a:b].decode("utf-8") for a, b in zip(off[:-1], off[1:])]

    def bytes_at(self, i: int) -> bytes:
        """String `i` undecoded (for binary search over a sorted column)."""
        return self._blob[self._off[i]:self._off[i + 1]].tobytes()


def sorted_position(column: StringColumn, key: bytes) -> int:
    """Index of `key` in a column sorted by bytes, or -1 (binary search, O(log n) reads)."""
    lo, hi = 0, len(column)
    get = column.bytes_at
    while lo < hi:
        mid = (lo + hi) // 2
        if get(mid) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(column) and get(lo) == key else -1
