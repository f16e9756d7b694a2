"""`run_method`: one named method's ranking as a budgeted stage, for the CLI (`sidelight search`), HTTP and MCP.

The lanes' orchestrator (`channels.run_lanes`) runs lanes; this runs a method search the same way:
without a budget (the Python API, and the CLI unless `--budget-ms` is given) it just ranks; with a
`Budget` BM25 is the floor of every answer (never cut), any other method runs within the time left
and is replaced by BM25 (fallback "bm25") when it does not finish, and a method that needs the dense
model while it is still loading is replaced by BM25 at once (fallback "lexical-only"). The answer
says which method actually ranked (`used`). Stores no trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..methods import get_method, method_spec
from ..results import Results
from . import budget as B

if TYPE_CHECKING:
    from ..index import Index


def run_method(index: "Index", query: str, method: str, k: int, where: Mapping[str, Any] | None = None,
               params: Mapping[str, Any] | None = None, *, budget: B.Budget | None = None,
               pool: ThreadPoolExecutor | None = None,
               waiting: Callable[[], str | None] | None = None) -> tuple[Results, str]:
    """(the hits, the method that ranked them). `waiting()`: why the dense model is not ready (None: ready)."""
    chosen = get_method(method, **dict(params or {}))  # a bad parameter: InputError naming it
    bm25 = get_method("bm25")
    if budget is None:
        return Results(index.hits(index.rank(chosen, query, k, where)), query, method), method
    used, ranking = method, None
    reason = waiting() if waiting is not None and "dense" in method_spec(method).needs else None
    if reason:
        budget.skip(method, reason, fallback=B.LEXICAL_ONLY)
        used = "bm25"
    elif method != "bm25":  # BM25 is the floor of every answer: never cut, always run here
        own = pool is None
        runner = pool or ThreadPoolExecutor(max_workers=1, thread_name_prefix="sidelight-method")
        try:
            ranking = budget.run(runner, method, lambda: index.rank(chosen, query, k, where), fallback=B.BM25)
        except B.StageCut:
            used = "bm25"
        finally:
            if own:
                runner.shutdown(wait=False, cancel_futures=True)
    if ranking is None:
        ranking = budget.timed("bm25", lambda: index.rank(bm25, query, k, where))
    return Results(index.hits(ranking), query, method), used
