"""Statistics over timing samples: the per-row summary and the two-sample shift estimate `compare` uses.

Outliers are counted, never dropped: a slow tail is part of what the operator costs, and hiding it would make
a noisy kernel look steady. The CI is Student-t on the mean because the task book's figure is a mean ("Avg time").
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np
from scipy import stats as sps

OUTLIER_RULE = "Tukey 1.5 IQR"


@lru_cache(maxsize=4096)
def t_quantile(dof: int, confidence: float = 0.95) -> float:
    """Two-sided Student-t critical value; cached because adaptive timing asks after every sample."""
    return float(sps.t.ppf(0.5 + confidence / 2.0, dof))


def mean_ci(mean: float, stdev: float, n: int, confidence: float = 0.95) -> list[float] | None:
    """Student-t confidence interval of the mean; None below two samples, where it does not exist."""
    if n < 2:
        return None
    half = t_quantile(n - 1, confidence) * stdev / math.sqrt(n)
    return [mean - half, mean + half]


def tukey_outliers(values: np.ndarray) -> dict:
    """How many values lie beyond 1.5 IQR below Q1 / above Q3 (linear-interpolated quartiles)."""
    q1, q3 = np.percentile(values, [25, 75])
    fence = 1.5 * (q3 - q1)
    return {"low": int(np.sum(values < q1 - fence)), "high": int(np.sum(values > q3 + fence)),
            "rule": OUTLIER_RULE}


def summarize(samples_s: Sequence[float]) -> dict:
    """Summary of timing samples given in seconds, reported in microseconds.

    stdev_us and ci95_us are None for a single sample (no spread can be estimated from one value).
    """
    us = np.asarray(samples_s, dtype=np.float64) * 1e6
    if us.size == 0:
        raise ValueError("summarize needs at least one sample")
    n = int(us.size)
    mean = float(us.mean())
    stdev = float(us.std(ddof=1)) if n > 1 else None
    return {
        "n": n,
        "mean_us": mean,
        "median_us": float(np.median(us)),
        "min_us": float(us.min()),
        "max_us": float(us.max()),
        "p90_us": float(np.percentile(us, 90)),
        "stdev_us": stdev,
        "ci95_us": mean_ci(mean, stdev, n) if stdev is not None else None,
        "outliers": tukey_outliers(us),
    }


def hodges_lehmann(base: Sequence[float], head: Sequence[float],
                   confidence: float = 0.95) -> tuple[float, float, float]:
    """Shift head - base: the median of all pairwise differences, with its distribution-free CI.

    The CI takes order statistics of the pairwise differences at the Mann-Whitney critical count (normal
    approximation, fine for the >= 50 samples timing produces); it is (-inf, inf) when the samples are too few
    for the requested confidence.
    """
    x = np.asarray(base, dtype=np.float64)
    y = np.asarray(head, dtype=np.float64)
    n, m = x.size, y.size
    if n == 0 or m == 0:
        raise ValueError("hodges_lehmann needs samples on both sides")
    diffs = np.sort((y[None, :] - x[:, None]).ravel())
    estimate = float(np.median(diffs))
    z = float(sps.norm.ppf(0.5 + confidence / 2.0))
    k = int(math.floor(n * m / 2.0 - z * math.sqrt(n * m * (n + m + 1) / 12.0)))
    if k < 1:
        return estimate, -math.inf, math.inf
    return estimate, float(diffs[k - 1]), float(diffs[n * m - k])
