"""Progress bars for long work (indexing, encoding, certificates), quiet when asked."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield `advance(n)`; draws a bar on stderr when enabled and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
