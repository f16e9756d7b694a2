"""Progress bars for long work (indexing, encoding, certificates), quiet when asked."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """Yield `advance(n=1, note=None)`; draws a bar on stderr when enabled and stderr is a terminal.
    A note (e.g. the current loss) is shown after the description."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, note=None: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1, note: str | None = None) -> None:
            bar.update(task, advance=n, description=f"{description} ({note})" if note else description)

        yield advance
