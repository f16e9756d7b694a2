"""Corpus graph statistics in the shape of Carrier R01 §2 ("Property | Observed value")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .model import Corpus


@dataclass(frozen=True)
class GraphStats:
    """Counts over the undirected projection of a corpus's edges.

    Degree is the number of distinct neighbours (self loops ignored); median and mean run over
    every record, isolated ones included. Isolated records count as their own components.
    """

    records: int
    arcs: int  # stored edges, len(corpus.edges)
    pairs: int  # distinct unordered {u, v}, u != v
    median_degree: float
    mean_degree: float
    max_degree: int
    isolated: int
    components: int
    largest_component: int


def undirected_pairs(corpus: Corpus) -> np.ndarray:
    """(P, 2) int array of distinct unordered row pairs (u < v) over the corpus's edges."""
    if not corpus.edges:
        return np.zeros((0, 2), dtype=np.int64)
    pos = corpus.position
    ends = np.array([(pos[e.source], pos[e.target]) for e in corpus.edges], dtype=np.int64)
    ends = ends[ends[:, 0] != ends[:, 1]]
    ends.sort(axis=1)
    return np.unique(ends, axis=0)


def graph_stats(corpus: Corpus) -> GraphStats:
    """Records, arcs, pairs, degree summary, isolated records and components."""
    n = len(corpus)
    pairs = undirected_pairs(corpus)
    degree = np.bincount(pairs.ravel(), minlength=n) if n else np.zeros(0, dtype=np.int64)
    if n:
        adj = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
        ncomp, labels = connected_components(adj, directed=False)
        largest = int(np.bincount(labels).max())
    else:
        ncomp, largest = 0, 0
    return GraphStats(
        records=n,
        arcs=len(corpus.edges),
        pairs=int(len(pairs)),
        median_degree=float(np.median(degree)) if n else 0.0,
        mean_degree=float(degree.mean()) if n else 0.0,
        max_degree=int(degree.max()) if n else 0,
        isolated=int((degree == 0).sum()),
        components=int(ncomp),
        largest_component=largest,
    )


def stats_rows(stats: GraphStats) -> list[tuple[str, str]]:
    """(property, observed value) rows, formatted like Carrier R01 §2."""
    return [
        ("Records", f"{stats.records:,}"),
        ("Stored relation arcs", f"{stats.arcs:,}"),
        ("Deduplicated undirected pairs", f"{stats.pairs:,}"),
        (
            "Median / mean / maximum degree",
            f"{stats.median_degree:g} / {stats.mean_degree:.3f} / {stats.max_degree:,}",
        ),
        ("Isolated records", f"{stats.isolated:,}"),
        ("Components / largest component", f"{stats.components:,} / {stats.largest_component:,}"),
    ]


def format_stats_table(stats: GraphStats, title: str | None = None):
    """A two-column rich Table ("Property | Observed value"); print it with rich.console."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("Property")
    table.add_column("Observed value", justify="right")
    for prop, value in stats_rows(stats):
        table.add_row(prop, value)
    return table
