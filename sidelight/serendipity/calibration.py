"""Pass thresholds calibrated on placebo corpora, and the placebo ratio's interval.

Target-decoy estimation (Elias & Gygi 2007, with the +1 finite-sample correction of the knockoff+ and
target-decoy-competition literature): in each kinship bin the threshold is the lowest target evidence
from which up placebo candidates above it, summed over the calibration draws plus one, stay at most
``fdr`` times draws x target candidates above it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def fdr_thresholds(target: np.ndarray, bins: np.ndarray, placebo: Sequence[tuple[np.ndarray, np.ndarray]],
                   n_bins: int, fdr: float) -> np.ndarray:
    """Per kinship bin, the lowest threshold t at which the estimate (placebo > t summed over draws + 1)
    / (draws x targets > t) is <= fdr and stays <= fdr at every stricter threshold where it could
    (where draws x targets >= 1 / fdr); +inf where none. Taking the lowest t with a low estimate
    would pick lucky dips of the estimate, which fresh placebo corpora then do not reproduce.
    `target` holds the candidates' evidence (-inf where the chance rule fails), `bins` their kinship
    bins, `placebo` (evidence, bins) per calibration draw."""
    out = np.full(n_bins, np.inf)
    draws = max(len(placebo), 1)
    for k in range(n_bins):
        t = np.sort(target[(bins == k) & np.isfinite(target)])
        if not len(t):
            continue
        d = np.sort(np.concatenate([ev[(pb == k) & np.isfinite(ev)] for ev, pb in placebo] or [np.zeros(0)]))
        cut = np.nextafter(t, -np.inf)  # passing is evidence > threshold: try just below each target
        above_t = len(t) - np.searchsorted(t, cut, side="right")
        above_d = len(d) - np.searchsorted(d, cut, side="right")
        est = (above_d + 1) / (draws * above_t)
        bad = np.flatnonzero((draws * above_t * fdr >= 1) & (est > fdr))
        ok = np.flatnonzero(est <= fdr)
        ok = ok[ok > (bad[-1] if len(bad) else -1)]
        if len(ok):
            out[k] = cut[ok[0]]
    return out


EVIDENCE_QUANTILES = (0.5, 0.9, 0.99, 0.999, 1.0)


def evidence_by_bin(target: np.ndarray, bins: np.ndarray, placebo: Sequence[tuple[np.ndarray, np.ndarray]],
                    n_bins: int) -> dict:
    """Per kinship bin: quantiles (`EVIDENCE_QUANTILES`) of the testable evidence of the target
    candidates and of the calibration placebo candidates (for the report's figure)."""
    def q(ev: np.ndarray) -> list:
        ev = ev[np.isfinite(ev)]
        return np.quantile(ev, EVIDENCE_QUANTILES).round(3).tolist() if len(ev) else []

    return {"quantiles": list(EVIDENCE_QUANTILES),
            "target": [q(target[bins == k]) for k in range(n_bins)],
            "placebo": [q(np.concatenate([ev[b == k] for ev, b in placebo] or [np.zeros(0)])) for k in range(n_bins)]}


def poisson_ratio_ci(count: int, exposure: int, level: float = 0.95) -> list[float] | None:
    """Exact (Garwood) interval of a Poisson rate: `count` events over `exposure` (draws x target passes)."""
    if exposure <= 0:
        return None
    from scipy.stats import chi2

    lo = chi2.ppf((1 - level) / 2, 2 * count) / 2 if count else 0.0
    hi = chi2.ppf(1 - (1 - level) / 2, 2 * count + 2) / 2
    return [float(lo / exposure), float(hi / exposure)]
