"""Terminal output shared by the commands: rich tables on stdout, JSON when asked."""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence], numeric: Sequence[bool] | None = None) -> None:
    t = Table(title=title, title_justify="left")
    numeric = numeric or [False] * len(columns)
    for name, num in zip(columns, numeric):
        t.add_column(name, justify="right" if num else "left", overflow="fold")
    for row in rows:
        t.add_row(*[fmt(v) for v in row])
    console.print(t)


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
