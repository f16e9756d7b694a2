"""`sidelight state prune INDEX`: apply the state file's retention once (see `sidelight.serve.retention`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError
from ..index import store


def add_retention_args(p: argparse.ArgumentParser, prefix: str = "retain-") -> None:
    """The retention flags (for `state prune` without a prefix; `serve`/`mcp` with `--retain-...`)."""
    from ..serve.retention import Retention

    d = Retention()
    p.add_argument(f"--{prefix}days" if prefix else "--max-age-days", dest="retain_days", type=float,
                   default=d.max_age_days, help=f"delete traces and log rows older than this many days (default {d.max_age_days:g})")
    p.add_argument(f"--{prefix}traces" if prefix else "--max-traces", dest="retain_traces", type=int,
                   default=d.max_traces, help=f"keep at most this many traces, newest first (default {d.max_traces}); "
                                              "traces with feedback are always kept")
    p.add_argument(f"--{prefix}window-s" if prefix else "--window-s", dest="retain_window_s", type=float,
                   default=d.window_s, help=f"never delete a trace younger than this (seconds; feedback may still "
                                            f"credit it; default {d.window_s:g})")
    p.add_argument(f"--{prefix}log-rows" if prefix else "--max-log-rows", dest="retain_log_rows", type=int,
                   default=d.max_log_rows, help=f"keep at most this many query-log rows (default {d.max_log_rows})")
    if prefix:
        p.add_argument(f"--{prefix}every-s", dest="retain_every_s", type=float, default=d.every_s,
                       help=f"apply the retention this often while serving (seconds; default {d.every_s:g})")


def retention_of(args: argparse.Namespace):
    """The `Retention` the flags ask for."""
    from ..serve.retention import Retention

    every = getattr(args, "retain_every_s", None)
    extra = {} if every is None else {"every_s": every}
    return Retention(args.retain_days, args.retain_traces, args.retain_window_s, args.retain_log_rows, **extra)


def register(sub) -> None:
    p = sub.add_parser("state", help="the index's state file (traces, feedback, query log)")
    st = p.add_subparsers(dest="state_command", required=True, metavar="STEP")
    pr = st.add_parser("prune", help="delete old traces and query-log rows (feedback kept) and compact the file")
    pr.add_argument("index", type=Path)
    add_retention_args(pr, prefix="")
    pr.set_defaults(func=run_prune)


def run_prune(args: argparse.Namespace) -> int:
    from ..feedback import StateStore
    from ..lanes.querylog import QueryLog
    from ..serve.retention import compact, prune_state

    state_path = args.index / "state.sqlite"
    if not store.is_index_folder(args.index):
        raise InputError(f"{args.index}: not an index folder")
    if not state_path.exists():
        print(f"{args.index}: no state file yet; nothing to prune")
        return 0
    before = state_path.stat().st_size
    with StateStore(state_path) as state:
        log = QueryLog(state_path)
        try:
            done = prune_state(state, log, retention_of(args))
            kept = (len(state.trace_ids()), log.count())
        finally:
            log.close()
    compact(state_path)
    after = state_path.stat().st_size
    print(f"{args.index}: pruned {done['traces']} trace(s) and {done['log_rows']} log row(s); kept {kept[0]} "
          f"trace(s), {kept[1]} log row(s) and every feedback row; state.sqlite {before / 1e6:.2f} MB -> "
          f"{after / 1e6:.2f} MB")
    return 0
