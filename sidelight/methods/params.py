"""Declared method parameters: name, type, default, allowed range or choices, and a one-line doc.

A method declares each parameter once (`Param`); validation, `sidelight methods`, `-p KEY=VALUE`,
HTTP/MCP arguments and lab protocol grids all go through `Param.check`, so a bad value is the
same clear error everywhere: it names the method, the parameter and what is allowed.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..capabilities import Capability

_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string",
               tuple: "a list of finite numbers"}


def _num(x: float) -> str:
    """A bound as written: whole numbers in full (2147483647, not 2.14748e+09)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


#: the highest value a numeric parameter declared without `high` accepts: bounded work and memory
DEFAULT_HIGH = {int: 100_000, float: 1e9, tuple: 1e9}


@dataclass(frozen=True)
class Param:
    """One declared parameter. `kind` is bool, int, float, str or tuple (a list of numbers).

    `low`/`high` bound numbers (inclusive), `choices` lists the allowed strings, `nullable`
    allows None (a None default makes a parameter nullable).
    """

    name: str
    kind: type
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    needs: tuple[Capability, ...] = ()  # what a set (truthy) value needs of the backend, e.g. RM3's matrices

    def __post_init__(self) -> None:
        if self.default is None:
            object.__setattr__(self, "nullable", True)
        if self.kind in (int, float, tuple) and self.high is None:  # every number has a declared range
            object.__setattr__(self, "high", DEFAULT_HIGH[self.kind])

    def check(self, method: str, value: Any) -> Any:
        """`value` as this parameter holds it, or an InputError naming method, parameter and what is allowed."""
        if value is None and self.nullable:
            return None
        raw = value
        if isinstance(value, str) and self.kind is not str:
            value = _from_text(value, self.kind)  # `-p alpha=0.5` and query strings arrive as text
        if not _fits(value, self.kind):
            raise self._refuse(method, raw)
        if self.kind is float:
            value = float(value)
        elif self.kind is int:
            value = int(value)
        elif self.kind is tuple:
            value = tuple(float(v) for v in value)
        elif self.kind is bool:
            value = bool(value)
        numbers_ = value if self.kind is tuple else (value,) if self.kind in (int, float) else ()
        if any((self.low is not None and v < self.low) or (self.high is not None and v > self.high) for v in numbers_):
            raise self._refuse(method, raw)
        if self.choices is not None and value not in self.choices:
            raise self._refuse(method, raw)
        return value

    def allowed(self) -> str:
        """What the parameter accepts, in words (`a finite number in [0, 1]`, `one of zscore, minmax`)."""
        if self.choices is not None:
            text = "one of " + ", ".join(self.choices)
        else:
            text = _KIND_NAMES[self.kind]
            if self.low is not None and self.high is not None:
                text += f" in [{_num(self.low)}, {_num(self.high)}]"
            elif self.low is not None:
                text += f" >= {_num(self.low)}"
            elif self.high is not None:
                text += f" <= {_num(self.high)}"
        return text + (" or null" if self.nullable else "")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.kind.__name__ if self.kind is not tuple else "list[float]",
                "default": list(self.default) if isinstance(self.default, tuple) else self.default,
                "allowed": self.allowed(), "doc": self.doc}

    def _refuse(self, method: str, value: Any) -> InputError:
        return InputError(f"method {method!r}: parameter {self.name!r} must be {self.allowed()}, "
                          f"got {value!r} ({type(value).__name__})")


def _from_text(text: str, kind: type) -> Any:
    """Text read as the parameter's kind; unreadable text is returned unchanged (and then refused)."""
    t = text.strip()
    if kind is bool:
        return {"true": True, "false": False}.get(t.lower(), text)
    if kind is int:
        try:
            return int(t)
        except ValueError:
            return text
    if kind is float:
        try:
            return float(t)
        except ValueError:
            return text
    if kind is tuple:
        try:
            return tuple(float(x) for x in t.strip("[]()").split(","))
        except ValueError:
            return text
    return text


def _fits(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, (bool, np.bool_))
    if isinstance(value, (bool, np.bool_)):
        return False
    if kind is int:
        return isinstance(value, numbers.Integral)
    if kind is float:
        return isinstance(value, numbers.Real) and math.isfinite(value)
    if kind is tuple:
        return isinstance(value, (list, tuple)) and all(_fits(v, float) for v in value)
    return isinstance(value, kind)
