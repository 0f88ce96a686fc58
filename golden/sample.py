"""Sampled goldens: a large perf row is judged on a sample of C's columns (or rows, or batches), so its golden costs
a bounded number of FLOPs instead of as much as the operator's own work (a 4096^3 gemm's golden and float64 truth
take tens of seconds on a small host). The operator still writes all of C; the guard and untouched-region checks
still cover every byte; only the precision judgement looks at the sample.

The operator modules build the smaller problem from gathered columns (or rows, batches): its arguments, its buffers,
and for each element of its C the storage index of that element in the full C. The engine then judges the operator's
output at those indices against the small problem's golden and truth, with the ordinary criteria (including the
forward-error fallback, whose error scale is computed on the small problem too).
"""
from __future__ import annotations

import numpy as np

#: Most FLOPs a perf row's golden may cost (the float64 truth costs the same again).
BUDGET_FLOPS = 2.5e8


def pick(total: int, count: int, seed: int) -> np.ndarray:
    """`count` distinct indices of range(total), always the first and the last, the rest seeded-random; sorted."""
    if count >= total:
        return np.arange(total)
    rng = np.random.default_rng(seed)
    middle = rng.choice(np.arange(1, total - 1), size=max(0, count - 2), replace=False) if total > 2 else []
    return np.unique(np.concatenate([[0, total - 1], middle]).astype(np.int64))[:max(count, 1)]


def block_index(rows: np.ndarray, cols: np.ndarray, ld: int, offset: int = 0) -> np.ndarray:
    """Storage indices of the rows x cols block (column-major, leading dimension ld, starting at offset)."""
    return offset + np.asarray(rows, np.int64)[:, None] + ld * np.asarray(cols, np.int64)[None, :]


def gather(store: np.ndarray, rows: np.ndarray, cols: np.ndarray, ld: int, offset: int = 0) -> np.ndarray:
    """The block as compact column-major storage (leading dimension len(rows))."""
    return store[block_index(rows, cols, ld, offset)].ravel(order="F")
