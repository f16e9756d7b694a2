"""File modes that follow the process umask, for folders and files made private by `tempfile`.

`tempfile.mkdtemp` creates 0700 folders and `mkstemp` 0600 files whatever the umask; an index or
run folder published from them should be as readable as any file the user creates (a service
account reading an index another user built), so writers chmod them to these modes.
"""

from __future__ import annotations

import os
import threading

_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask (read from /proc when possible; else swapped out and back under a lock)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def folder_mode() -> int:
    """0777 less the umask: what `mkdir` would have made."""
    return 0o777 & ~current_umask()


def file_mode() -> int:
    """0666 less the umask: what `open(..., 'w')` would have made."""
    return 0o666 & ~current_umask()
