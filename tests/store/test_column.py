"""String columns: what goes in comes out, by position, and a sorted column finds what a list finds."""

from __future__ import annotations

import bisect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidelight.errors import IndexFormatError
from sidelight.store.column import StringColumn, sorted_position, write_column


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=40))
def test_a_column_reads_back_every_string_by_position(tmp_path_factory, values):
    folder = tmp_path_factory.mktemp("col")
    assert write_column(folder, "c", values) == len(values)
    col = StringColumn(folder, "c")
    assert len(col) == len(values)
    assert col.tolist() == values == list(col)
    assert [col[i] for i in range(len(values))] == values
    if values:
        assert col[-1] == values[-1] and col[1:3] == values[1:3]
    with pytest.raises(IndexError):
        col[len(values)]


@settings(max_examples=60, deadline=None)
@given(st.sets(st.text(alphabet="abcz09é", max_size=6), max_size=40), st.text(alphabet="abcz09é", max_size=6))
def test_binary_search_agrees_with_bisect(tmp_path_factory, terms, probe):
    folder = tmp_path_factory.mktemp("col")
    ordered = sorted(terms, key=lambda t: t.encode())
    write_column(folder, "v", ordered)
    col = StringColumn(folder, "v")
    keys = [t.encode() for t in ordered]
    for term in [*ordered, probe]:
        at = bisect.bisect_left(keys, term.encode())
        expected = at if at < len(keys) and keys[at] == term.encode() else -1
        assert sorted_position(col, term.encode()) == expected


def test_offsets_that_do_not_fit_the_blob_are_refused(tmp_path):
    write_column(tmp_path, "c", ["alpha", "beta"])
    (tmp_path / "c.bin").write_bytes(b"alph")  # truncated
    with pytest.raises(IndexFormatError, match="offsets do not fit"):
        StringColumn(tmp_path, "c")
