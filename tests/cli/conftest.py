"""Shared CLI fixtures: an index folder built by `sidelight index` from each test module's `source`."""

from __future__ import annotations

import pytest

from sidelight.cli import main


@pytest.fixture
def index(tmp_path, source, capsys):
    out = tmp_path / "idx"
    assert main(["index", str(source), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    return out
