"""How many files a sharded index keeps open, checked against the process limit before it is needed.

Every shard is opened by memory-mapping its files, and each map holds a file descriptor, so a
sharded index needs about `FILES_PER_SHARD` descriptors per shard (27 measured without dense
vectors, a few more with them). A writer refuses a shard count the limit cannot open (before the
build, with the number to ask for); a reader raises its soft limit up to the hard one when that
is enough. See issue 45 item 1.
"""

from __future__ import annotations

import resource

from ..errors import InputError

FILES_PER_SHARD = 32  # memory-mapped files of one opened shard, rounded up (27 measured, + dense)
FILES_BASE = 128  # the coordinator's own maps, stdio, sockets, the state file and the model


def files_needed(n_shards: int) -> int:
    """File descriptors a process needs to open an index of `n_shards` shards."""
    return FILES_BASE + FILES_PER_SHARD * int(n_shards)


def ensure_open_files(n_shards: int, doing: str = "open") -> None:
    """Make sure this process may open `files_needed(n_shards)` files: raise the soft limit up to the
    hard one if that is enough, else a clear InputError naming the limit and the largest count that fits."""
    need = files_needed(n_shards)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or need <= soft:
        return
    if hard == resource.RLIM_INFINITY or need <= hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
            return
        except (ValueError, OSError):
            pass
    limit = soft if hard != resource.RLIM_INFINITY and hard <= soft else max(soft, hard)
    fits = max(0, (limit - FILES_BASE) // FILES_PER_SHARD)
    raise InputError(f"cannot {doing} {n_shards} shards: each shard keeps about {FILES_PER_SHARD} files open, "
                     f"so it needs {need} open files and this process may open {limit} (ulimit -n); "
                     f"raise the limit (ulimit -n {need}) or use at most {fits} shards")
