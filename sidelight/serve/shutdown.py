"""Leaving a server cleanly: on SIGTERM or when stdin closes, no native abort and no traceback.

The cause: the dense query model loads on a daemon thread (`dense_model.DenseModel`). When the
main thread returns while that thread is inside onnxruntime (creating the session or running the
warm-up query), the interpreter finalizes around it and onnxruntime's static destructors destroy
a C++ thread that is still joinable: `std::terminate`, "terminate called without an active
exception", SIGABRT. A C++ call cannot be interrupted from Python, and waiting for the load
would hold the exit for seconds, so a server stops its own threads in order (retention, then
the stage pool), flushes its output and leaves with `os._exit`: committed SQLite state is on
disk already, and nothing else is left to finalize.
"""

from __future__ import annotations

import os
import signal
import sys


def stop_threads(service) -> None:
    """Stop the retention thread, then the stage pool (queued stages cancelled)."""
    retention = getattr(service, "retention", None)
    if retention is not None:
        retention.stop()
    service.close()


def exit_now(service, code: int = 0) -> None:
    """Stop the service's threads, flush stdout and stderr, and end the process with `code`."""
    try:
        stop_threads(service)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more to say
                pass
        os._exit(code)


def exit_on_sigterm(service) -> None:
    """SIGTERM ends the process through `exit_now` (status 143, as a shell reports a terminated process).
    Uvicorn replaces this handler while it serves and raises the signal again once it has shut down."""
    signal.signal(signal.SIGTERM, lambda signum, frame: exit_now(service, 128 + signal.SIGTERM))
