"""The method registry: each method is registered once with its default parameters and description.

Lanes are never fused silently: every fusion is a method with its own name. The families that
register methods are listed in `sidelight.methods` (import `get_method` from there)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import InputError
from ..structures.ranking import Ranking

if TYPE_CHECKING:
    from ..index import Index

RankFn = Callable[["Index", str, "int | None", dict], Ranking]


@dataclass(frozen=True)
class Method:
    """A ranking method with fixed parameters; `rank` returns the top k (None: all candidates)."""

    name: str
    fn: RankFn = field(repr=False)
    params: dict = field(default_factory=dict)

    def rank(self, index: "Index", query: str, k: int | None = 10) -> Ranking:
        return self.fn(index, query, k, self.params)


_REGISTRY: dict[str, tuple[RankFn, dict, str]] = {}


def register(name: str, description: str, **defaults) -> Callable[[RankFn], RankFn]:
    """Decorator adding a method to the registry with its default parameters."""

    def wrap(fn: RankFn) -> RankFn:
        _REGISTRY[name] = (fn, defaults, description)
        return fn

    return wrap


#: Types of the parameters whose default is None (None itself is always accepted for them).
OPTIONAL_PARAM_TYPES: dict[str, type] = {"stopwords": str, "stem": str, "title_weight": int,
                                         "expansion_search": int, "deadline_ms": float, "model": str,
                                         "cross_encoder": str}

_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string",
               tuple: "a list of finite numbers"}


def _fits(value, kind: type) -> bool:
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


def check_params(name: str, defaults: dict, params: dict) -> None:
    """Refuse a parameter the method does not take, or a value not of its default's type.

    The expected type is that of the default (an int default takes integers, a float default any
    finite number, a tuple default a list of numbers); a None default takes None or the type in
    `OPTIONAL_PARAM_TYPES` (anything when the name is not listed there).
    """
    unknown = set(params) - set(defaults)
    if unknown:
        key = sorted(unknown)[0]
        hint = " (the ranking depth is -k / --depth, not a method parameter)" if key in ("k", "depth") else ""
        raise InputError(f"method {name!r} takes no parameter {key!r}{hint}")
    for key, value in params.items():
        default = defaults[key]
        if default is None:
            kind = OPTIONAL_PARAM_TYPES.get(key)
            if value is None or kind is None:
                continue
        else:
            kind = next((t for t in (bool, int, float, str, tuple) if _fits(default, t)), type(default))
        if not _fits(value, kind):
            expected = _TYPE_NAMES.get(kind, type(default).__name__) + (" or null" if default is None else "")
            raise InputError(f"method {name!r}: parameter {key!r} must be {expected}, "
                             f"got {value!r} ({type(value).__name__})")


def get_method(name: str, /, **params) -> Method:
    if name not in _REGISTRY:
        raise InputError(f"unknown method {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    fn, defaults, _ = _REGISTRY[name]
    check_params(name, defaults, params)
    return Method(name, fn, {**defaults, **params})


def available_methods() -> dict[str, str]:
    """Method name -> one-line description."""
    return {n: d for n, (_, _, d) in sorted(_REGISTRY.items())}
