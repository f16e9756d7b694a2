"""Index folders: build, save atomically, load with checks, update incrementally."""

from ..results import Hit, Results, Run
from . import sharded  # noqa: F401  (registers the sharded kind with Index.load)
from .index import Index

__all__ = ["Hit", "Index", "Results", "Run"]
