"""Index folders: build, save atomically, load with checks, update incrementally."""

from .index import Hit, Index

__all__ = ["Hit", "Index"]
