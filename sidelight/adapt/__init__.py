"""Adapt the embedding model to one corpus on the CPU: pairs from the corpus, contrastive
training (sentence-transformers + PyTorch, the optional `adapt` extra), and an int8 ONNX export
that the dense lane loads like any other model folder (`sidelight adapt`, `--dense MODEL_DIR`)."""

from .config import AdaptConfig
from .run import adapt

__all__ = ["AdaptConfig", "adapt"]
