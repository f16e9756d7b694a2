"""The data folder: one setting with an environment override and a clear message when absent."""

from __future__ import annotations

import pytest

from sidelight.config import data_dir, dataset_path
from sidelight.errors import MissingDataError


def test_env_override_and_missing_data_message(tmp_path, monkeypatch):
    monkeypatch.setenv("SIDELIGHT_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    with pytest.raises(MissingDataError, match="SIDELIGHT_DATA") as err:
        dataset_path("scifact")
    assert str(tmp_path / "scifact") in str(err.value)
    (tmp_path / "scifact").mkdir()
    assert dataset_path("scifact") == tmp_path / "scifact"
