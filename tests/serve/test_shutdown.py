"""Servers stop cleanly (issue 43 item 7): `sidelight mcp` (stdio, --http) and `sidelight serve` on an
index with MiniLM vectors, stopped by SIGTERM or by stdin closing, leave no native abort
("terminate called without an active exception") and no traceback on stderr. The stdin case stops
while the model is still loading, where the abort used to come from (`sidelight.serve.shutdown`)."""

from __future__ import annotations

import importlib.util
import sys
import signal
from pathlib import Path

import pytest

from sidelight.errors import InputError
from sidelight.models.spec import resolve_model

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_shutdown", REPO / "bench" / "shutdown.py")
S = importlib.util.module_from_spec(spec)
_path = list(sys.path)
spec.loader.exec_module(S)
sys.path[:] = _path  # the script puts bench/ first (for _common); its ray.py must not shadow the ray package

try:
    resolve_model("minilm")
except (InputError, OSError) as exc:  # pragma: no cover - the model ships with the test environment
    pytest.skip(f"the MiniLM model is not installed: {exc}", allow_module_level=True)


@pytest.fixture(scope="module")
def dense_index(tmp_path_factory) -> Path:
    return S.vault_index(tmp_path_factory.mktemp("shutdown"))


def _clean(rc: int, err: str, expected: tuple[int, ...]) -> None:
    assert "terminate called" not in err and "Traceback" not in err, err[-800:]
    assert rc in expected, (rc, err[-800:])


def test_mcp_stdio_stdin_closed_while_the_model_loads_ten_times(dense_index):
    for _ in range(10):
        rc, err = S.mcp_stdio(dense_index, "stdin", search=False)
        _clean(rc, err, (0,))


def test_mcp_stdio_sigterm(dense_index):
    for i in range(4):
        rc, err = S.mcp_stdio(dense_index, "term", search=bool(i % 2))
        _clean(rc, err, (128 + signal.SIGTERM,))


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_http_servers_sigterm(dense_index, command):
    for _ in range(3):
        rc, err = S.http_server(dense_index, command)
        _clean(rc, err, (128 + signal.SIGTERM, -signal.SIGTERM, 0))
