"""Time budgets and labelled fallbacks for served calls.

Every served call gets a `Budget` (default `DEFAULT_BUDGET_MS`, a caller may ask for
`MIN_BUDGET_MS`..`MAX_BUDGET_MS`). Stages run in order; each one is recorded as

* ``done`` (with its time in ms),
* ``skipped`` (not started: the dense model is not loaded yet, the index has no vectors, no time
  was left), or
* ``cut`` (started, but its result did not arrive within the time left: the answer goes out
  without it; the abandoned work finishes in the background and is discarded).

A response never degrades silently: ``fallback`` names the path actually taken when a stage was
replaced (`LEXICAL_ONLY`: no dense stage, lanes and relation seeds from BM25 alone; `BM25`: a
method was replaced by plain BM25), and ``partial`` is true when time ran out before every stage
was done. The lexical lane is the floor of every answer: it always runs, whatever the budget.
"""

from __future__ import annotations

import contextvars
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Callable

DEFAULT_BUDGET_MS = 5_000
MIN_BUDGET_MS = 1
MAX_BUDGET_MS = 60_000

LEXICAL_ONLY = "lexical-only"
BM25 = "bm25"

# Reasons, stable strings a client can switch on.
MODEL_LOADING = "dense model still loading"
MODEL_FAILED = "dense model failed to load"
NO_VECTORS = "index has no dense vectors"
NO_TIME = "time budget exhausted before the stage started"
TOO_SLOW = "stage did not finish within the time budget"


class StageCut(Exception):
    """A stage's result did not arrive in time (raised by `Budget.run`)."""


@dataclass
class Budget:
    """A deadline for one call and the record of its stages."""

    ms: float = DEFAULT_BUDGET_MS
    start: float = field(default_factory=time.perf_counter)
    stages: list[dict[str, Any]] = field(default_factory=list)
    fallback: str | None = None
    partial: bool = False

    @property
    def deadline(self) -> float:
        return self.start + self.ms / 1000.0

    def remaining_s(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000.0

    def done(self, name: str, ms: float) -> None:
        self.stages.append({"stage": name, "status": "done", "ms": round(ms, 3)})

    def skip(self, name: str, reason: str, fallback: str | None = None, timed_out: bool = False) -> None:
        """A stage not started. `timed_out`: skipped for lack of time (sets partial)."""
        self.stages.append({"stage": name, "status": "skipped", "reason": reason})
        if fallback and not self.fallback:
            self.fallback = fallback
        if timed_out:
            self.partial = True

    def cut(self, name: str, ms: float, fallback: str | None = None) -> None:
        """A stage started and abandoned at the deadline (sets partial)."""
        self.stages.append({"stage": name, "status": "cut", "reason": TOO_SLOW, "ms": round(ms, 3)})
        if fallback and not self.fallback:
            self.fallback = fallback
        self.partial = True

    def timed(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run `fn` in this thread (a stage that is never cut) and record it as done."""
        t = time.perf_counter()
        out = fn()
        self.done(name, (time.perf_counter() - t) * 1000.0)
        return out

    def run(self, pool: ThreadPoolExecutor, name: str, fn: Callable[[], Any], reserve_s: float = 0.0,
            fallback: str | None = None) -> Any:
        """Run `fn` on `pool`, waiting at most the time left minus `reserve_s`.

        Returns its result (stage done) or raises `StageCut` (stage recorded as skipped when no
        time was left to start it, or cut when it ran out of time).
        """
        wait = self.remaining_s() - reserve_s
        if wait <= 0:
            self.skip(name, NO_TIME, fallback, timed_out=True)
            raise StageCut(name)
        t = time.perf_counter()
        fut: Future[Any] = pool.submit(contextvars.copy_context().run, fn)  # the request's context goes along
        try:
            out = fut.result(timeout=wait)
        except FutureTimeout:
            fut.cancel()
            self.cut(name, (time.perf_counter() - t) * 1000.0, fallback)
            raise StageCut(name) from None
        self.done(name, (time.perf_counter() - t) * 1000.0)
        return out

    def timings(self) -> dict[str, Any]:
        """Stage name -> ms (done and cut stages), plus the total."""
        out = {s["stage"]: s["ms"] for s in self.stages if "ms" in s}
        out["total"] = round(self.elapsed_ms(), 3)
        return out

    def labels(self) -> dict[str, Any]:
        """The block every response carries: budget, fallback, partial and the stage record."""
        return {"budget_ms": self.ms, "elapsed_ms": round(self.elapsed_ms(), 3), "fallback": self.fallback,
                "partial": self.partial, "stages": list(self.stages)}
