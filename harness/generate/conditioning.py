"""Officially decidable rows: a generated precision row is kept only when Netlib's float32 forward error bound
16 * 2^-24 * G stays under what the seed's gate tolerates (`diagnosis.bound_ratio` < 1), so that any correct float32
implementation passes it under the official gate, whatever its summation order; otherwise the generator
replaces it by the first of its operator's `variants` (same shape, scalar classes and coverage tags, inputs chosen
so the result is well-conditioned) that is.

The ratio is measured on the row's real inputs (the seed the table gives it). Rows too large to measure whole are
measured on a block of their output (`sample_args` of the operator's generator): the block's elements are
computed from the same inputs, only fewer of them.
"""
from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Callable, Iterator
from types import ModuleType

import numpy as np
from threadpoolctl import threadpool_limits

from harness.judge import diagnosis
from harness.model import operators as ops
from harness.tables import fill
from harness.tables.reader import CellReader, Row

#: Rows above this many FLOPs are measured on a block of their output (see sample_args).
MEASURE_FLOPS = 2e8


def args_of(op: str, row: dict[str, str]):
    """The typed arguments the engine would read from this rendered row."""
    cells = {k: v for k, v in row.items() if v != ""}
    reader = CellReader(Row("<generated>", 0, cells, {c: i for i, c in enumerate(row, start=1)},
                            frozenset({"NORMAL"})), [])
    return ops.get(op).parse(reader, row["description"])


def ratio(op: str, row: dict[str, str], sample: Callable | None = None) -> float:
    """`diagnosis.bound_ratio` of a SUCCESS row on its real inputs (0 for a row without a golden to match)."""
    spec = ops.get(op)
    args = args_of(op, row)
    if spec.flops(args) > MEASURE_FLOPS and sample is not None:
        args = sample(args, MEASURE_FLOPS)
    thresholds = (float(row["mere_threshold"] or 0), float(row["mare_multiplier"] or 0))
    gate, options = spec.gate(args, thresholds)
    if gate == "exact":
        return 0.0  # a quick return: no arithmetic to round
    bufs = spec.buffers(args, int(row["random_seed"]))
    mask = bufs["C"].written
    if not mask.any():
        return 0.0
    with np.errstate(all="ignore"):
        expected, _ = spec.golden_result(args, bufs, truth=False)  # the float64 truth: not needed, half the time
        scale = spec.error_scale(args, bufs)[mask]
    if not np.isfinite(scale).all() and all(np.isfinite(b.host).all() for b in bufs.values()):  # fills only
        return float("inf")  # magnitudes of finite inputs overflowed: float32 terms overflow, order decides
    return diagnosis.bound_ratio(expected[mask], scale, gate, **options)


def single_threaded() -> threadpool_limits:
    """BLAS on one thread while a table is generated: its products are small, a thread pool only adds overhead
    (its threads spin for cores: csymm part 2/16 took 5.1 s of CPU in 2.9 s with two, 3.1 s in 3.1 s with one).
    scipy's BLAS is loaded first: threadpoolctl limits the libraries loaded when the block starts, and the goldens
    load scipy's with their first product."""
    from scipy.linalg import blas  # noqa: F401 - loaded now, so that the limit covers it

    return threadpool_limits(limits=1, user_api="blas")


#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4
#: What kept_heap leaves: glibc's own state after a process freed a block of 32 MiB or more (its dynamic mmap
#: threshold rises to the size freed, at most 32 MiB, and the trim threshold to twice that), which any generation
#: reaches anyway; setting a parameter stops the dynamic adjustment, so it is set to where that adjustment ends.
_AFTER = ((_M_MMAP_MAX, 65536), (_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 64 << 20))


@contextlib.contextmanager
def kept_heap() -> Iterator[None]:
    """Freed memory stays in this process's heap while a table is generated, and goes back to the kernel after.
    Measuring a row fills, multiplies and frees arrays of up to hundreds of MB; glibc gives each to the kernel
    (mmap, or trimming the heap) and the next row faults fresh pages in again: csymm part 0/4 took 20.2 s of CPU,
    15.3 s with its memory kept. No-op where the C library has no mallopt (not glibc)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallopt") or not hasattr(libc, "malloc_trim"):
        yield
        return
    libc.mallopt(_M_MMAP_MAX, 0)  # big blocks from the heap too
    libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # and the heap's free top kept
    try:
        yield
    finally:
        for param, value in _AFTER:
            libc.mallopt(param, value)
        libc.malloc_trim(0)


def needs_check(row: dict[str, str]) -> bool:
    """SUCCESS rows, perf rows included (their output is judged like a precision row's, first call and after the
    timed calls); the others have no precision gate."""
    return row["expect_result"] == "ACLBLAS_STATUS_SUCCESS"


def decidable(op: str, module: ModuleType, row: dict[str, str]) -> dict[str, str]:
    """The row itself when its ratio is < 1, else its first variant whose ratio is; raises when none is (the
    generator then emits a row no correct float32 operator is sure to pass: a bug to fix there). The variants keep
    the row's seed, so their fills draw the same streams: drawn once for them (`fill.reused_draws`), freed when
    the row is decided. A row decided at its first try keeps nothing: most rows are, and streams kept for
    nothing only take fresh memory."""
    if not needs_check(row):
        return row
    first = ratio(op, row, module.sample_args)
    if first < 1.0:
        return row
    best = (first, row["description"])
    with fill.reused_draws():
        for candidate in module.variants(row):
            r = ratio(op, candidate, module.sample_args)
            if r < 1.0:
                return candidate
            best = min(best, (r, candidate["description"]))
    raise ValueError(f"{op} {row['case_name']} ({row['description']}): no variant is officially decidable "
                     f"(best forward-error-bound/tolerance ratio {best[0]:.3g})")
