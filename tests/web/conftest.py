"""The exported page needs its scripts built (`make web`, Node.js + npm). Without npm on the machine the
page tests are skipped, saying why; with npm a missing or broken build fails them."""

from __future__ import annotations

import shutil

import pytest

from sidelight.errors import InputError
from sidelight.web.export import assets_folder


def pytest_collection_modifyitems(config, items):
    try:
        assets_folder()
    except InputError as exc:
        if shutil.which("npm") is None:
            skip = pytest.mark.skip(reason=f"no npm on this machine to build the page ({exc})")
            for item in items:
                if "tests/web/" in str(item.fspath).replace("\\", "/"):
                    item.add_marker(skip)
