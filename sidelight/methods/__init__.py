"""Named ranking methods: the registry and one module per family.

The families are listed here once; importing `sidelight.methods` registers every method, so
`get_method` and `available_methods` always see all of them. To add a method, write it in the
family module it belongs to (or a new module listed below) with `@register(...)`.
"""

from . import dense, floor, graph, hybrid, learned, lexical  # noqa: F401  the families, each registers its methods
from .registry import Method, available_methods, check_params, get_method, register

__all__ = ["Method", "available_methods", "check_params", "get_method", "register"]
