"""The build's transpose compiled: one term range's postings, weighed and put in term-major order.

`blocks.build_lexical_folder` reads back each term range's postings (rows ascending, as the
blocks came) and needs them weighed (`lexical_store.weigh`) and sorted by term, rows ascending within a
term: scipy's COO to CSC conversion, a stable counting sort, does it in the numpy path. Here one
pass does both, placing each posting at its term's next free slot (the term's start is known
from the document frequencies), with the same float operations as `weigh` in the same order,
so the weights are bit-identical; it also keeps each term's largest weight (its pruning bound).

Plain Python here; `sidelight.structures.kernels._compile` jits every name in `KERNELS`.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("_weigh_transpose",)


def _weigh_transpose(rows, terms, tf, lo, start, norm, idf, scale, data, indices, ub):
    """Postings (rows[i], terms[i], tf[i]) of terms lo, lo + 1, ... into data/indices in term-major
    order, term t's from start[t - lo] on; idf[t - lo] is term t's idf, `scale` k1 + 1 (1.0 for
    lucene: multiplying by 1.0 changes no bit). ub[t - lo] becomes term t's largest weight as
    `np.maximum.reduceat` finds it (a NaN wins); a term without postings keeps its value."""
    fill = start.copy()
    for i in range(rows.size):
        t = terms[i] - lo
        r = rows[i]
        f = np.float64(tf[i])
        w = f / (norm[r] + f) * scale * idf[t]  # weigh's operations, in its order
        p = fill[t]
        fill[t] = p + 1
        data[p] = w
        indices[p] = r
        if p == start[t] or w > ub[t] or w != w:
            ub[t] = w
