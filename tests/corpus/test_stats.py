"""Graph statistics against hand-computed toy graphs."""

from __future__ import annotations

import pytest
from rich.console import Console

from sidelight.corpus.model import Corpus, Edge, Record
from sidelight.corpus.stats import GraphStats, format_stats_table, graph_stats, stats_rows


def _corpus(ids: str, edges: list[tuple[str, str, str]]) -> Corpus:
    return Corpus(
        name="toy",
        records=[Record(id=i, title=i, text=i) for i in ids],
        edges=[Edge(s, t, ty) for s, t, ty in edges],
    )


def test_toy_graph_by_hand():
    c = _corpus(
        "abcdefg",
        [
            ("a", "b", "link"),
            ("b", "a", "link"),  # same unordered pair
            ("a", "c", "link"),
            ("a", "c", "see"),  # same pair, other type
            ("b", "c", "link"),
            ("d", "e", "link"),
            ("e", "e", "link"),  # self loop: an arc, not a pair
        ],
    )
    # pairs {a,b} {a,c} {b,c} {d,e}; degrees a2 b2 c2 d1 e1 f0 g0
    # components {a,b,c} {d,e} {f} {g}
    assert graph_stats(c) == GraphStats(
        records=7,
        arcs=7,
        pairs=4,
        median_degree=1.0,
        mean_degree=pytest.approx(8 / 7),
        max_degree=2,
        isolated=2,
        components=4,
        largest_component=3,
    )


def test_star_and_even_median():
    star = graph_stats(_corpus("hxyz", [("h", "x", "l"), ("y", "h", "l"), ("h", "z", "l")]))
    assert (star.pairs, star.median_degree, star.mean_degree, star.max_degree) == (3, 1.0, 1.5, 3)
    assert (star.isolated, star.components, star.largest_component) == (0, 1, 4)
    half = graph_stats(_corpus("abcd", [("a", "b", "l")]))  # degrees 1 1 0 0
    assert half.median_degree == 0.5
    assert (half.isolated, half.components, half.largest_component) == (2, 3, 2)


def test_empty():
    s = graph_stats(_corpus("abc", []))
    assert s == GraphStats(3, 0, 0, 0.0, 0.0, 0, 3, 3, 1)
    assert graph_stats(_corpus("", [])) == GraphStats(0, 0, 0, 0.0, 0.0, 0, 0, 0, 0)


def test_table_shape():
    s = GraphStats(6257, 20787, 20422, 5.0, 6.5277, 514, 50, 52, 6204)  # Carrier R01 §2
    assert stats_rows(s) == [
        ("Records", "6,257"),
        ("Stored relation arcs", "20,787"),
        ("Deduplicated undirected pairs", "20,422"),
        ("Median / mean / maximum degree", "5 / 6.528 / 514"),
        ("Isolated records", "50"),
        ("Components / largest component", "52 / 6,204"),
    ]
    console = Console(record=True, width=80)
    console.print(format_stats_table(s))
    out = console.export_text()
    assert "Observed value" in out and "52 / 6,204" in out
