"""Paired statistics for the lab (Carrier study, section 5).

Two systems are scored on the same units (concept families); ``a`` is the
baseline and ``b`` the candidate, so every statistic is about d = b - a.

* ``paired_bootstrap``: percentile interval for mean(d), resampling units.
* ``sign_flip_test``: two-sided Monte Carlo randomisation test of mean(d) = 0.
* ``sign_flip_exact``: the same test by enumerating all 2^n sign patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sidelight.errors import InputError

_TIE_TOL = 1e-12  # relative tolerance so float round-off does not break ties
_CHUNK = 2048  # rows of resamples/flips held in memory at once
MAX_EXACT_N = 20


@dataclass(frozen=True)
class BootstrapResult:
    """Mean of b - a and its percentile bootstrap interval [low, high]."""

    mean_difference: float
    low: float
    high: float
    n_resamples: int
    seed: int


@dataclass(frozen=True)
class SignFlipResult:
    """Mean of b - a and the two-sided sign-flip p-value."""

    mean_difference: float
    p_value: float
    n_flips: int
    seed: int


def paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Validate two paired 1-D score arrays and return d = b - a as float64."""
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.ndim != 1 or b_arr.ndim != 1:
        raise InputError(f"paired scores must be 1-D, got shapes {a_arr.shape} and {b_arr.shape}")
    if a_arr.shape != b_arr.shape:
        raise InputError(f"paired scores differ in length: {a_arr.size} vs {b_arr.size}")
    if a_arr.size == 0:
        raise InputError("paired scores are empty")
    for name, arr in (("a", a_arr), ("b", b_arr)):
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise InputError(f"{name}[{bad[0]}] = {arr[bad[0]]} is not finite")
    return b_arr - a_arr


def _positive_int(name: str, value: int) -> int:
    """Reject counts below 1 (and non-integers)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_seed(seed: int) -> int:
    """Require an explicit non-negative integer seed so results are reproducible."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def bootstrap_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The (n_resamples, n) matrix of unit indices that ``paired_bootstrap`` uses.

    Drawn as ``default_rng(seed).integers(0, n, (n_resamples, n))`` (the same
    call scipy.stats.bootstrap makes), exposed so tests can recompute the interval.
    """
    _positive_int("n", n)
    _positive_int("n_resamples", n_resamples)
    return np.random.default_rng(_check_seed(seed)).integers(0, n, (n_resamples, n))


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap interval for mean(b - a), resampling paired units with replacement."""
    d = paired_differences(a, b)
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    idx = bootstrap_indices(d.size, n_resamples, seed)
    means = d[idx].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.percentile(means, [100.0 * alpha / 2, 100.0 * (1 - alpha / 2)])
    if not np.any(d):  # all-zero differences: the interval is exactly [0, 0]
        low = high = 0.0
    return BootstrapResult(float(d.mean()), float(low), float(high), int(n_resamples), seed)


def _extreme(stats: np.ndarray, observed: float, scale: float) -> int:
    """Count |stat| >= |observed| with a tiny tolerance for float ties."""
    return int(np.count_nonzero(np.abs(stats) >= abs(observed) - _TIE_TOL * scale))


def sign_flip_test(a: np.ndarray, b: np.ndarray, n_flips: int = 10_000, seed: int = 0) -> SignFlipResult:
    """Two-sided paired sign-flip test: p = (#{|mean(d*s)| >= |mean(d)|} + 1) / (n_flips + 1).

    Under H0 each difference is symmetric about 0, so its sign is a coin flip.
    The +1 counts the observed labelling, keeping p > 0 and the test valid.
    """
    d = paired_differences(a, b)
    n_flips = _positive_int("n_flips", n_flips)
    observed = float(d.mean())
    scale = max(1.0, float(np.abs(d).max()))
    rng = np.random.default_rng(_check_seed(seed))
    count = 0
    for start in range(0, n_flips, _CHUNK):
        rows = min(_CHUNK, n_flips - start)
        signs = rng.integers(0, 2, (rows, d.size), dtype=np.int8) * 2 - 1
        count += _extreme(signs @ d / d.size, observed, scale)
    return SignFlipResult(observed, (count + 1) / (n_flips + 1), n_flips, seed)


def sign_flip_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value: share of all 2^n sign patterns at least as extreme.

    Builds the 2^n signed sums by doubling (n <= 20, so at most ~1M floats).
    """
    d = paired_differences(a, b)
    if d.size > MAX_EXACT_N:
        raise InputError(f"exact sign flip enumerates 2^n patterns; n = {d.size} exceeds {MAX_EXACT_N}")
    sums = np.zeros(1)
    for x in d:
        sums = np.concatenate([sums + x, sums - x])
    observed = float(d.mean())
    scale = max(1.0, float(np.abs(d).max()))
    return _extreme(sums / d.size, observed, scale) / sums.size
