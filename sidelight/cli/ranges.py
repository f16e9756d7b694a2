"""The declared range of every numeric command-line option, enforced in one place before a command runs.

`sidelight index t.jsonl --title-weight 100000000` once grew to 21 GB before the OOM killer ended it;
now each numeric option has a range here, and `check_ranges` refuses a value outside it (or a NaN or
infinity) with one line naming the flag, the range and the value, exit 2, before anything is read or
written. Ranges are keyed by the option's dest: a dest means the same thing in every command.
Method parameters (`-p NAME=VALUE`, HTTP, MCP, lab grids) are bounded by their declarations
(`methods.params.Param`); the lab's depth and grid sizes by the protocol schema (`lab.schema`).
"""

from __future__ import annotations

import argparse
import math

from ..errors import InputError

# Copies of limits declared elsewhere, so that every command does not import the lab, the server and the
# serendipity lane to parse its flags; tests/cli/test_ranges.py checks that they agree with their sources.
MAX_TITLE_WEIGHT = 100  # lab.schema.MAX_TITLE_WEIGHT
MAX_DIAL = 28  # serendipity.seating.MAX_DIAL
MIN_BUDGET_MS, MAX_BUDGET_MS = 1, 60_000  # serve.budget
MAX_SHARDS = 4096

#: dest -> (flag as shown, lowest, highest), both inclusive
RANGES: dict[str, tuple[str, float, float]] = {
    "top_k": ("-k/--top-k", 1, 100_000),
    "min_length": ("--min-length", 1, 100),
    "k1": ("--k1", 0, 100),
    "b": ("--b", 0, 1),
    "title_weight": ("--title-weight", 0, MAX_TITLE_WEIGHT),
    "threads": ("--threads", 1, 256),
    "batch_size": ("--batch-size", 1, 4096),
    "ann_connectivity": ("--ann-connectivity", 2, 256),
    "ann_expansion_add": ("--ann-expansion-add", 1, 4096),
    "ann_expansion_search": ("--ann-expansion-search", 1, 4096),
    "shards": ("--shards", 1, MAX_SHARDS),
    "workers": ("--workers", 1, 256),
    "stride": ("--stride", 1, 512),
    "minutes": ("--minutes", 0, 24 * 60),
    "steps": ("--steps", 1, 1_000_000),
    "max_length": ("--max-length", 8, 512),
    "learning_rate": ("--learning-rate", 0, 1),
    "max_pairs": ("--max-pairs", 1, 10_000_000),
    "mini_batch": ("--mini-batch", 0, 4096),
    "keep_anchor": ("--keep-anchor", 0, 1),
    "seed": ("--seed", 0, 2**63 - 1),
    "families": ("--families", 1, 100_000),
    "pairs": ("--pairs", 4, 100_000),
    "prior": ("--prior", 0, 1_000),
    "width": ("--width", 1, 65_536),
    "sae_k": ("--sae-k", 1, 4096),
    "epochs": ("--epochs", 1, 10_000),
    "budget": ("--budget", 1, 100_000),
    "min_chance": ("--min-chance", 1, 1_000_000),  # a ratio to chance (default 28)
    "fdr": ("--fdr", 0, 1),
    "kinship_bins": ("--kinship-bins", 1, 1_000),
    "placebo_draws": ("--placebo-draws", 1, 100_000),
    "placebo_ratio": ("--placebo-ratio", 0, 1_000),
    "dial": ("--dial", 0, MAX_DIAL),
    "size": ("--size", 1, 1_000_000),
    "port": ("--port", 0, 65_535),
    "http": ("--http", 0, 65_535),
    "budget_ms": ("--budget-ms", MIN_BUDGET_MS, MAX_BUDGET_MS),
    "snippet": ("--snippet", 0, 100_000),
    "max_mb": ("--max-mb", 0, 1_000_000),
    "retain_days": ("--retain-days/--max-age-days", 0, 36_500),
    "retain_traces": ("--retain-traces/--max-traces", 0, 100_000_000),
    "retain_window_s": ("--retain-window-s/--window-s", 0, 86_400 * 365),
    "retain_log_rows": ("--retain-log-rows/--max-log-rows", 0, 100_000_000),
    "retain_every_s": ("--retain-every-s", 0.1, 86_400),
    "snippet_chars": ("--snippet-chars", 0, 4_000),
    "page": ("--page", 1, 1_000_000),
    "page_chars": ("--page-chars", 1, 100_000),
    "hops": ("--hops", 1, 2),
    "max": ("--max", 1, 1_000_000),
    "adapt": ("--adapt", 0, 24 * 60),
}


def check_ranges(args: argparse.Namespace) -> None:
    """Refuse the first numeric option outside its declared range (InputError: one line, exit 2)."""
    for dest, (flag, lo, hi) in RANGES.items():
        value = getattr(args, dest, None)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{flag} must be a finite number in [{lo}, {hi}], got {value}")
        if value < lo:
            raise InputError(f"{flag} must be >= {lo}, got {value}")
        if value > hi:
            raise InputError(f"{flag} must be <= {hi}, got {value}")
