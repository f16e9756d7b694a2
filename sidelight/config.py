"""Where data lives: one setting, `SIDELIGHT_DATA`, defaulting to ../shared/data beside the repo."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import MissingDataError

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
DEFAULT_CACHE_DIR = REPO_ROOT / ".cache"


def data_dir() -> Path:
    """The data folder: `$SIDELIGHT_DATA` if set, else `../shared/data` next to the repo."""
    return Path(os.environ.get("SIDELIGHT_DATA", DEFAULT_DATA_DIR)).expanduser()


def dataset_path(name: str) -> Path:
    """A named data set inside the data folder, or a clear error saying what is missing."""
    path = data_dir() / name
    if not path.exists():
        raise MissingDataError(
            f"data set {name!r} not found at {path}. Put the shared data folder beside the repo "
            f"(../shared/data) or point SIDELIGHT_DATA at a folder that holds {name}/."
        )
    return path


def cache_dir() -> Path:
    """Scratch space for demo and benchmark indexes: `$SIDELIGHT_CACHE` or .cache in the repo."""
    return Path(os.environ.get("SIDELIGHT_CACHE", DEFAULT_CACHE_DIR)).expanduser()
