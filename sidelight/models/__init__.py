"""Neural models: verified model files, the sentence embedder and a cross-encoder reranker."""

from .crossencoder import CrossEncoder
from .embedder import Embedder, check_identity
from .spec import ModelFiles, ModelIntegrityError, resolve_model

__all__ = ["CrossEncoder", "Embedder", "ModelFiles", "ModelIntegrityError", "check_identity", "resolve_model"]
