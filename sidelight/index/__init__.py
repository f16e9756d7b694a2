"""Index folders: build, save atomically, load with checks, update incrementally."""

from ..results import Hit, Results, Run
from .index import Index

__all__ = ["Hit", "Index", "Results", "Run"]
