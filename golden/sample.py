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
    """The block as compact column-major storage (leading dimension len(rows)); read-only."""
    return gather_batches(store, rows, cols, ld, 0, np.array([0]), offset)


def gather_batches(store: np.ndarray, rows: np.ndarray, cols: np.ndarray, ld: int, stride: int, batches: np.ndarray,
                   offset: int = 0) -> np.ndarray:
    """The block of each of `batches` (`stride` elements apart), one after the other; read-only. Whole columns of
    consecutive batches that lie one after the other in `store` (a perf gemm's whole A) are a view of it, not a
    copy: that copy, kept with the row's golden, was a third of the largest row's judge."""
    rows, cols, batches = (np.asarray(x, np.int64) for x in (rows, cols, batches))
    whole = len(rows) == ld and np.array_equal(rows, np.arange(ld)) and len(cols) > 0 \
        and np.array_equal(cols, cols[0] + np.arange(len(cols))) and len(batches) > 0 \
        and np.array_equal(batches, batches[0] + np.arange(len(batches))) \
        and (len(batches) == 1 or stride == ld * len(cols))
    if whole:
        start = offset + batches[0] * stride + cols[0] * ld
        view = store[start:start + ld * len(cols) * len(batches)]
    else:
        view = np.concatenate([store[block_index(rows, cols, ld, offset + b * stride)].ravel(order="F")
                               for b in batches])
    view.flags.writeable = False
    return view
