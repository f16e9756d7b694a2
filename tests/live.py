"""A live uvicorn server on a free loopback port, for the browser tests."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def live_server(app) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    import uvicorn

    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{srv.servers[0].sockets[0].getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(10)
