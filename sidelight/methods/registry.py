"""The method registry: each method is registered once with its default parameters and description.

Lanes are never fused silently: every fusion is a method with its own name. The families that
register methods are listed in `sidelight.methods` (import `get_method` from there)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..errors import InputError
from ..structures.ranking import Ranking
from ..capabilities import Capability, require
from .params import Param

if TYPE_CHECKING:
    from .context import SearchContext

RankFn = Callable[["SearchContext", str, "int | None", dict[str, Any]], Ranking]


@dataclass(frozen=True)
class Method:
    """A ranking method with fixed parameters; `rank` returns the top k (None: all candidates)."""

    name: str
    fn: RankFn = field(repr=False)
    params: dict[str, Any] = field(default_factory=dict)
    needs: tuple[Capability, ...] = ()  # what it needs of the backend with these parameters

    def rank(self, index: "SearchContext", query: str, k: int | None = 10) -> Ranking:
        """The top k; refused first (one line) when the backend lacks something the method needs."""
        require(self.name, self.needs, index)
        return self.fn(index, query, k, self.params)


@dataclass(frozen=True)
class MethodSpec:
    """What the registry knows of a method: its function, declared parameters, description and needs."""

    name: str
    fn: RankFn = field(repr=False)
    params: tuple[Param, ...]
    description: str
    needs: tuple[Capability, ...] = ()  # what the backend must offer (see `capabilities`)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def needs_for(self, params: dict[str, Any]) -> tuple[Capability, ...]:
        """`needs`, plus what the parameters set in `params` need (`Param.needs`), each once."""
        out = list(self.needs)
        for p in self.params:
            if p.needs and params.get(p.name, p.default):
                out += [c for c in p.needs if c not in out]
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "needs": list(self.needs_for(self.defaults())),
                "params": [p.to_dict() for p in self.params]}


_REGISTRY: dict[str, MethodSpec] = {}


def register(name: str, description: str, *params: Param,
             needs: tuple[Capability, ...] = ()) -> Callable[[RankFn], RankFn]:
    """Decorator adding a method to the registry with its declared parameters."""
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"method {name!r} declares a parameter twice")

    def wrap(fn: RankFn) -> RankFn:
        _REGISTRY[name] = MethodSpec(name, fn, tuple(params), description, tuple(needs))
        return fn

    return wrap


def method_spec(name: str) -> MethodSpec:
    """The declaration of a registered method (a clear error for an unknown name)."""
    if name not in _REGISTRY:
        raise InputError(f"unknown method {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def check_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The method's defaults updated with `params`, each checked against its declaration."""
    spec = method_spec(name)
    declared = {p.name: p for p in spec.params}
    unknown = sorted(set(params) - set(declared))
    if unknown:
        key = unknown[0]
        hint = " (the ranking depth is -k/--top-k, not a method parameter)" if key in ("k", "depth") else ""
        takes = ", ".join(declared) if declared else "no parameters"
        raise InputError(f"method {name!r} takes no parameter {key!r}{hint}; it takes {takes}")
    return {**spec.defaults(), **{key: declared[key].check(name, value) for key, value in params.items()}}


def get_method(name: str, /, **params: Any) -> Method:
    """A registered method with checked parameters (`get_method("bm25+ppr", alpha=0.8)`)."""
    spec = method_spec(name)
    checked = check_params(name, params)
    return Method(name, spec.fn, checked, spec.needs_for(checked))


def available_methods() -> dict[str, str]:
    """Method name -> one-line description."""
    return {n: spec.description for n, spec in sorted(_REGISTRY.items())}


def method_specs() -> list[MethodSpec]:
    """Every registered method's declaration, by name."""
    return [spec for _, spec in sorted(_REGISTRY.items())]
