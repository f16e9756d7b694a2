"""The dense query model of a served index, loaded in the background.

Loading an embedding model takes seconds, so a server answers at once and loads it on a thread.
Until it is ready, stages that need it are skipped and the answer is labelled (see
`sidelight.lanes.budget`). States: ``absent`` (the index has no vectors), ``not-started``,
``loading``, ``ready``, ``failed`` (the error is reported by /health, never raised at callers).
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from ..lanes import budget as B

SKIP_REASONS = {"absent": B.NO_VECTORS, "not-started": B.MODEL_LOADING, "loading": B.MODEL_LOADING,
                "failed": B.MODEL_FAILED}


class DenseModel:
    def __init__(self, store, loader: Callable[[], None] | None = None) -> None:
        """`store`: the index's `DenseStore` (or None); `loader`: loads the model (default: warm up `store`)."""
        self.store = store
        self.loader = loader
        self.state = "absent" if store is None else "not-started"
        self.error: str | None = None
        self.load_ms: float | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start loading in the background (once; no-op without vectors)."""
        with self._lock:
            if self.state != "not-started":
                return
            self.state = "loading"
        threading.Thread(target=self._load, name="sidelight-dense-load", daemon=True).start()

    def _load(self) -> None:
        t = time.perf_counter()
        try:
            if self.loader is not None:
                self.loader()
            else:
                self.store.embedder()
                self.store.encode_query("warm up")
        except Exception as exc:  # reported by /health and as a labelled fallback, never raised at callers
            self.error = f"{type(exc).__name__}: {exc}"
            self.state = "failed"
        else:
            self.state = "ready"
        self.load_ms = (time.perf_counter() - t) * 1000.0

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def wait(self, timeout: float = 60.0) -> bool:
        end = time.monotonic() + timeout
        while self.state == "loading" and time.monotonic() < end:
            time.sleep(0.02)
        return self.ready

    def skip_reason(self) -> str:
        """Why a stage that needs the model is skipped now."""
        return SKIP_REASONS.get(self.state, B.MODEL_LOADING)

    def health(self) -> dict:
        out = {"present": self.store is not None, "model_state": self.state, "model_ready": self.ready}
        if self.store is not None:
            out["model"] = self.store.identity.get("name", self.store.spec)
        if self.error:
            out["error"] = self.error
        if self.load_ms is not None:
            out["load_ms"] = round(self.load_ms, 1)
        return out
