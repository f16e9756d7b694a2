"""Terminal output shared by the commands: rich tables on stdout, JSON when asked."""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

console = Console()


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence], numeric: Sequence[bool] | None = None) -> None:
    t = Table(title=title, title_justify="left")
    numeric = numeric or [False] * len(columns)
    for name, num in zip(columns, numeric):
        t.add_column(name, justify="right" if num else "left", overflow="fold")
    for row in rows:
        t.add_row(*[fmt(v) for v in row])
    console.print(t)


def marked(text: str, marks) -> Text:
    """`text` with the spans `marks` in bold: a snippet with its query terms marked."""
    out = Text(text)
    for a, b in marks:
        out.stylize("bold yellow", a, b)
    return out


def print_hits(title: str, hits) -> None:
    """Hits as a reader wants them: rank, title and score, then where (file:lines > section) and the snippet."""
    console.print(Text(title, style="bold"))
    for h in hits:
        console.print(Text.assemble((f"{h.rank:>3}. ", "dim"), (h.title or h.id, "bold"), f"  {h.score:.4f}"))
        p = h.passage
        if p is None:
            continue
        where = p.path or h.id
        if p.lines is not None:
            where += f":{p.lines[0]}-{p.lines[1]}"
        elif p.pages is not None:
            where += f" p.{p.pages[0]}-{p.pages[1]}"
        console.print(Text("     " + where + (f"  > {p.section}" if p.section else ""), style="cyan"))
        if p.snippet:
            console.print(Text("     ") + marked(p.snippet, p.marks))


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return escape(str(v))


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False))


def parse_filter(items: list[str]) -> dict[str, str]:
    """`--filter KEY=VALUE` pairs: records whose metadata KEY equals VALUE (compared as text)."""
    from ..errors import InputError

    where: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--filter {item!r}: expected KEY=VALUE (a record metadata key and its exact value)")
        if key in where:
            raise InputError(f"--filter: {key!r} given twice")
        where[key] = value
    return where


def parse_params(items: list[str], flag: str = "--param") -> dict:
    """`KEY=VALUE` pairs from the command line, values as text (`null` is None).

    The method's declared parameter reads the text as its own type (`sidelight.methods.params`),
    so `-p model=123` stays the string '123' and `-p alpha=abc` is refused naming the parameter.
    """
    from ..errors import InputError

    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{flag} {item!r}: expected KEY=VALUE")
        params[key] = None if value.strip() == "null" else value
    return params
