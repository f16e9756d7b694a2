"""Export a trained sentence-transformer to the folder the dense lane loads, and check it.

Steps: ONNX export of the transformer (token states; pooling and normalising stay in
`sidelight.models.embedder`), ONNX Runtime's BERT fusions (attention, GELU, skip-LayerNorm),
dynamic int8 quantisation with one scale per output channel, then the check: on a sample of the
corpus's records and of training anchors (short, query-like texts), the exported vectors' cosine
with the torch model's own must average >= `MIN_MEAN_COSINE` and be >= `MIN_COSINE` for every text
(int8 costs short texts most: about 0.98 at worst, 0.994 on average, measured on describe-v1). An
int8 export that fails is replaced by the fused fp32 one (checked the same way), and the manifest
says so; an export that fails both is refused.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..errors import IndexFormatError
from ..models.embedder import Embedder
from ..models.spec import resolve_model

MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.97
EXPORT_MAX_LENGTH = 256  # the window the exported model encodes with (training may use less)
_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def _export_fp32(model, path: Path) -> None:
    import torch

    bert = model[0].auto_model.eval()

    class TokenStates(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*_INPUTS, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(TokenStates(bert), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(path),
                          input_names=_INPUTS, output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


def _fuse(src: Path, dst: Path, config) -> None:
    from onnxruntime.transformers import optimizer

    fused = optimizer.optimize_model(str(src), model_type="bert", num_heads=int(config.num_attention_heads),
                                     hidden_size=int(config.hidden_size), opt_level=1)
    fused.save_model_to_file(str(dst))


def _quantize(src: Path, dst: Path) -> None:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # the quantiser logs advice on static pre-processing to the root logger
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        logging.disable(logging.NOTSET)


def check_export(folder: Path, texts: list[str], reference: np.ndarray, threads: int = 2) -> dict:
    """Cosine of the folder's vectors with `reference` (the torch model's, L2-normalised) on `texts`.

    Raises IndexFormatError when the mean falls below MIN_MEAN_COSINE or any text below MIN_COSINE."""
    try:
        vectors = Embedder(resolve_model(str(folder)), threads=threads).encode(texts)
    except IndexFormatError as exc:
        raise IndexFormatError(f"exported model {folder} does not load: {exc}") from exc
    if vectors.shape != reference.shape:
        raise IndexFormatError(f"exported model {folder} gives vectors {vectors.shape}, the trained model {reference.shape}")
    cos = (vectors * reference).sum(axis=1)
    report = {"n_texts": len(texts), "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()),
              "need_min": MIN_COSINE, "need_mean": MIN_MEAN_COSINE}
    if not (cos.min() >= MIN_COSINE and cos.mean() >= MIN_MEAN_COSINE):
        raise IndexFormatError(f"exported model {folder} disagrees with the trained model: cosine mean "
                               f"{cos.mean():.4f}, {cos.min():.4f} on text #{int(cos.argmin())} "
                               f"(need mean >= {MIN_MEAN_COSINE}, each >= {MIN_COSINE})")
    return report


def _write_configs(folder: Path, model) -> None:
    model[0].auto_model.config.to_json_file(str(folder / "config.json"))
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": EXPORT_MAX_LENGTH, "do_lower_case": False}), encoding="utf-8")


def export(model, tokenizer_json: Path, out: Path, sample: list[str], threads: int = 2) -> dict:
    """Write `out/` (model.onnx, tokenizer.json, configs) and return what the check measured."""
    model.max_seq_length = EXPORT_MAX_LENGTH
    reference = model.encode(sample, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=out.parent))
    try:
        _export_fp32(model, work / "raw.onnx")
        _fuse(work / "raw.onnx", work / "fused.onnx", model[0].auto_model.config)
        _quantize(work / "fused.onnx", work / "int8.onnx")
        shutil.copyfile(tokenizer_json, out / "tokenizer.json")
        _write_configs(out, model)
        tried: dict[str, str] = {}
        for name, kind in (("int8.onnx", "int8"), ("fused.onnx", "fp32")):
            shutil.copyfile(work / name, out / "model.onnx")
            try:
                report = check_export(out, sample, reference, threads)
                return {"weights": kind, **report, "failed": tried}
            except IndexFormatError as exc:
                tried[kind] = str(exc)
        raise IndexFormatError("no export passed the check: " + "; ".join(f"{k}: {v}" for k, v in tried.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
