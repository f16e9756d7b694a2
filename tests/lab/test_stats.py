"""Tests for sidelight.lab.stats: bootstrap vs scipy, sign flips vs exact enumeration."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest
from scipy import stats as sps

from sidelight.errors import InputError
from sidelight.lab.stats import (
    bootstrap_indices,
    paired_bootstrap,
    sign_flip_exact,
    sign_flip_test,
)


# scipy >= 1.15 takes `rng`; older releases take `random_state`.
_RNG_KW = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"


def _toy(n: int = 40, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Paired per-family scores in [0, 1] with a small positive effect for b."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, n)
    b = np.clip(a + rng.normal(0.08, 0.3, n), 0, 1)
    return a, b


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_matches_hand_percentile_over_same_indices():
    a, b = _toy()
    res = paired_bootstrap(a, b, n_resamples=5000, seed=3, confidence=0.9)
    idx = bootstrap_indices(a.size, 5000, 3)
    assert idx.shape == (5000, a.size)
    # Hand computation: resample the pairs (rows of idx), take mean(b - a), 5th/95th percentiles.
    means = np.array([np.mean(b[row] - a[row]) for row in idx])
    low, high = np.percentile(means, [5, 95])
    assert res.low == pytest.approx(low, abs=1e-12)
    assert res.high == pytest.approx(high, abs=1e-12)
    assert res.mean_difference == pytest.approx(np.mean(b - a), abs=1e-15)
    assert (res.n_resamples, res.seed) == (5000, 3)


def test_bootstrap_agrees_with_scipy_within_monte_carlo_error():
    # d has sd ~0.3, so the standard error of mean(d) is s ~ 0.3/sqrt(40) ~ 0.05.
    # Monte Carlo sd of a 2.5% percentile with B = 10,000: sqrt(.025*.975/B) / (phi(1.96)/s)
    # ~ 0.0016 / (0.058/0.05) ~ 0.0013; two independent runs differ by ~0.002 sd, so 0.01 is ~5 sd.
    a, b = _toy()
    ours = paired_bootstrap(a, b, n_resamples=10_000, seed=11)
    theirs = sps.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        confidence_level=0.95,
        **{_RNG_KW: np.random.default_rng(999)},  # deliberately a different stream
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)
    assert ours.low < ours.mean_difference < ours.high


def test_bootstrap_reproducible_and_seed_sensitive():
    a, b = _toy()
    assert paired_bootstrap(a, b, 2000, seed=5) == paired_bootstrap(a, b, 2000, seed=5)
    assert paired_bootstrap(a, b, 2000, seed=5).low != paired_bootstrap(a, b, 2000, seed=6).low


def test_bootstrap_zero_differences():
    a = np.array([0.2, 0.5, 0.9, 0.1])
    res = paired_bootstrap(a, a.copy(), n_resamples=1000, seed=0)
    assert (res.mean_difference, res.low, res.high) == (0.0, 0.0, 0.0)


# ---------------------------------------------------------------- sign flips


@pytest.mark.parametrize(
    "d, expected",
    [
        # Signed sums of +-1 +-2 +-3: 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 in 2 of 8 -> 0.25.
        ([1.0, 2.0, 3.0], 2 / 8),
        # 3 +-1 +-1 = 5, 3, 3, 1 and -3 +-1 +-1 = -1, -3, -3, -5; |sum| >= 3 in 6 of 8 -> 0.75.
        ([3.0, -1.0, 1.0], 6 / 8),
        # A zero difference: sums are 2, 0, 0, -2 (each twice); |sum| >= 2 in 4 of 8 -> 0.5.
        ([1.0, 1.0, 0.0], 4 / 8),
    ],
)
def test_sign_flip_exact_hand(d, expected):
    a = np.zeros(3)
    assert sign_flip_exact(a, np.array(d)) == pytest.approx(expected, abs=1e-15)


def test_sign_flip_exact_matches_brute_force_loop():
    a, b = _toy(n=10, seed=2)
    d = b - a
    count = sum(
        abs(np.mean(d * np.array(signs))) >= abs(np.mean(d)) - 1e-12
        for signs in itertools.product([1, -1], repeat=d.size)
    )
    assert sign_flip_exact(a, b) == pytest.approx(count / 2**d.size, abs=1e-15)


@pytest.mark.parametrize("n, seed", [(6, 1), (9, 4), (12, 8)])
def test_sign_flip_monte_carlo_close_to_exact(n, seed):
    a, b = _toy(n=n, seed=seed)
    exact = sign_flip_exact(a, b)
    res = sign_flip_test(a, b, n_flips=40_000, seed=seed)
    # Binomial sd of p-hat is <= 0.5/sqrt(40,000) = 0.0025; allow ~4 sd plus the +1 correction.
    assert res.p_value == pytest.approx(exact, abs=0.01)
    assert res.mean_difference == pytest.approx(np.mean(b - a))
    assert (res.n_flips, res.seed) == (40_000, seed)


def test_sign_flip_strong_effect_and_bounds():
    a = np.zeros(12)
    b = np.full(12, 0.3)
    # Only the two all-same-sign patterns reach |mean| = 0.3: exact p = 2 / 4096.
    assert sign_flip_exact(a, b) == pytest.approx(2 / 4096)
    res = sign_flip_test(a, b, n_flips=999, seed=0)
    assert 1 / 1000 <= res.p_value < 0.02


def test_sign_flip_zero_differences():
    a = np.array([0.3, 0.7, 0.1])
    assert sign_flip_test(a, a.copy(), n_flips=500, seed=1).p_value == 1.0
    assert sign_flip_exact(a, a.copy()) == 1.0


def test_sign_flip_reproducible():
    a, b = _toy(n=15)
    assert sign_flip_test(a, b, 3000, seed=2) == sign_flip_test(a, b, 3000, seed=2)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "a, b, fragment",
    [
        ([0.1, 0.2], [0.1], "length"),
        ([0.1, np.nan], [0.1, 0.2], "not finite"),
        ([0.1, 0.2], [np.inf, 0.2], "not finite"),
        ([], [], "empty"),
        ([[0.1]], [[0.2]], "1-D"),
    ],
)
def test_bad_inputs(a, b, fragment):
    for call in (
        lambda: paired_bootstrap(a, b, 100, seed=0),
        lambda: sign_flip_test(a, b, 100, seed=0),
        lambda: sign_flip_exact(a, b),
    ):
        with pytest.raises(InputError, match=fragment):
            call()


def test_bad_parameters():
    a, b = _toy(n=25)
    with pytest.raises(InputError, match="exceeds"):
        sign_flip_exact(a, b)
    with pytest.raises(InputError, match="confidence"):
        paired_bootstrap(a, b, 100, seed=0, confidence=1.0)
    with pytest.raises(InputError, match="n_resamples"):
        paired_bootstrap(a, b, 0, seed=0)
    with pytest.raises(InputError, match="n_flips"):
        sign_flip_test(a, b, -5, seed=0)
    with pytest.raises(InputError, match="seed"):
        sign_flip_test(a, b, 100, seed=None)  # type: ignore[arg-type]
