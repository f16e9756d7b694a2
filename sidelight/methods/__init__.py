"""Named ranking methods: the registry, declared parameters, and one module per family.

The families are listed here once; importing `sidelight.methods` registers every method, so
`get_method` and `available_methods` always see all of them. To add a method, write it in the
family module it belongs to (or a new module listed below) with `@register(name, doc, Param(...))`.
"""

from . import dense, floor, graph, hybrid, learned, lexical, relation, sections  # noqa: F401  the families, each registers its methods
from .params import Param
from .registry import (
                       Method,
                       MethodSpec,
                       available_methods,
                       check_params,
                       get_method,
                       method_spec,
                       method_specs,
                       register,
)

__all__ = ["Method", "MethodSpec", "Param", "available_methods", "check_params", "get_method", "method_spec",
           "method_specs", "register"]
