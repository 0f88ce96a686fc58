"""The CPU twin's aclblasSgemmStridedBatched against scipy's CBLAS sgemm per batch, through the ctypes shim. Inputs'
ld padding and batch gaps are NaN (never read); C's padding, batch gaps and a guard zone hold a sentinel that must
survive."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import blas

from harness.model.abi import OP_C, OP_N, OP_T, Status
from harness.backends import aclblas_lib
from harness.ops import sgemm_strided_batched as sgemm_op

SENTINEL = np.float32(-777.0)
GUARD = 16
OPS = (OP_N, OP_T, OP_C)


class Batched:
    """One strided batched operand: `count` rows x cols matrices, leading dimension ld, stride between batches
    (0 = one matrix broadcast); everything outside the matrices holds `fill`."""

    def __init__(self, values: list[np.ndarray], ld: int, stride: int, fill, guard: int = 0):
        rows, cols = values[0].shape
        self.ld, self.stride, self.rows, self.cols = ld, stride, rows, cols
        span = ld * max(cols, 1)
        size = (len(values) - 1) * stride + span + guard
        self.buf = np.full(max(size, 1), fill, dtype=np.float32)
        for i, v in enumerate(values):
            self.view(i)[:] = v
        self.before = self.buf.copy()

    def view(self, i: int) -> np.ndarray:
        start = i * self.stride
        return self.buf[start:start + self.ld * self.cols].reshape(self.cols, self.ld)[:, :self.rows].T

    def written_mask(self, count: int) -> np.ndarray:
        mask = np.zeros(self.buf.size, bool)
        for i in range(count):
            start = i * self.stride
            mask[start:start + self.ld * self.cols].reshape(self.cols, self.ld)[:, :self.rows] = True
        return mask


class Call:
    def __init__(self, ta, tb, m, n, k, alpha, beta, batch=3, pads=(0, 0, 0), gaps=(0, 0, 0), broadcast="",
                 seed=0, c_fill=None):
        rng = np.random.default_rng(seed)
        self.ta, self.tb, self.m, self.n, self.k = ta, tb, m, n, k
        self.alpha, self.beta, self.batch = alpha, beta, batch
        a_shape = (m, k) if ta == OP_N else (k, m)
        b_shape = (k, n) if tb == OP_N else (n, k)
        lda, ldb, ldc = (max(1, s[0]) + p for s, p in zip((a_shape, b_shape, (m, n)), pads))
        na = 1 if "A" in broadcast else batch
        nb = 1 if "B" in broadcast else batch
        self.a_values = [rng.standard_normal(a_shape).astype(np.float32) for _ in range(na)]
        self.b_values = [rng.standard_normal(b_shape).astype(np.float32) for _ in range(nb)]
        if c_fill is None:
            self.c_values = [rng.standard_normal((m, n)).astype(np.float32) for _ in range(batch)]
        else:
            self.c_values = [np.full((m, n), c_fill, np.float32) for _ in range(batch)]
        stride_a = 0 if "A" in broadcast else lda * max(a_shape[1], 1) + gaps[0]
        stride_b = 0 if "B" in broadcast else ldb * max(b_shape[1], 1) + gaps[1]
        self.A = Batched(self.a_values, lda, stride_a, np.nan)
        self.B = Batched(self.b_values, ldb, stride_b, np.nan)
        self.C = Batched(self.c_values, ldc, ldc * max(n, 1) + gaps[2], SENTINEL, guard=GUARD)

    def run(self, lib, handle) -> int:
        return sgemm_op.invoke(
            lib, handle, self.ta, self.tb, self.m, self.n, self.k, self.alpha, self.A.buf.ctypes.data, self.A.ld,
            self.A.stride, self.B.buf.ctypes.data, self.B.ld, self.B.stride, self.beta, self.C.buf.ctypes.data,
            self.C.ld, self.C.stride, self.batch)

    def operands(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return self.a_values[i % len(self.a_values)], self.b_values[i % len(self.b_values)]

    def golden(self, i: int) -> np.ndarray:
        a, b = self.operands(i)
        return blas.sgemm(self.alpha, np.asfortranarray(a), np.asfortranarray(b), beta=self.beta,
                          c=np.asfortranarray(self.c_values[i].copy()), trans_a=int(self.ta != OP_N),
                          trans_b=int(self.tb != OP_N))

    def bound(self, i: int) -> np.ndarray:
        a, b = (np.abs(x) for x in self.operands(i))
        a = a if self.ta == OP_N else a.T
        b = b if self.tb == OP_N else b.T
        return 1e-4 * (abs(self.alpha) * (a @ b) + abs(self.beta) * np.abs(self.c_values[i])) + 1e-6

    def outside_untouched(self) -> bool:
        mask = ~self.C.written_mask(self.batch if self.m and self.n else 0)
        return np.array_equal(self.C.buf[mask], self.C.before[mask])


def check(call: Call, lib, handle) -> None:
    assert call.run(lib, handle) == Status.SUCCESS, aclblas_lib.last_message(lib, handle)
    for i in range(call.batch):
        err = np.abs(call.C.view(i) - call.golden(i))
        assert np.all(err <= call.bound(i)), f"batch {i}: max error {err.max()}"
    assert call.outside_untouched()


@pytest.mark.parametrize("ta", OPS)
@pytest.mark.parametrize("tb", OPS)
def test_every_transpose_combination(twin, ta, tb):
    check(Call(ta, tb, 37, 29, 45, 1.25, -0.5, pads=(2, 3, 1), gaps=(5, 7, 3), seed=ta * tb), *twin)


@pytest.mark.parametrize("size", [1, 7, 8, 9, 127, 128, 129, 255, 256, 257])
def test_sizes_around_tile_edges(twin, size):
    check(Call(OP_N, OP_T, size, size, size, 0.75, 0.5, batch=2, seed=size), *twin)


@pytest.mark.parametrize("m,n,k", [(1, 300, 5), (300, 1, 9), (130, 70, 513), (9, 257, 1), (200, 129, 260)])
def test_rectangles(twin, m, n, k):
    check(Call(OP_T, OP_N, m, n, k, 1.5, 0.25, batch=2, pads=(1, 0, 2), seed=m + n + k), *twin)


@pytest.mark.parametrize("broadcast", ["A", "B", "AB"])
def test_stride_zero_broadcasts(twin, broadcast):
    check(Call(OP_N, OP_N, 21, 19, 17, 1.0, 0.5, batch=4, broadcast=broadcast, seed=4), *twin)


@pytest.mark.parametrize("alpha,beta,ldc_pad", [(1.0, 0.0, 0), (1.0, 0.0, 3), (1.0, 0.0, 8), (2.0, 0.0, 0),
                                                (1.0, 1.0, 0), (-1.0, 3.0, 5)])
def test_fast_and_general_paths(twin, alpha, beta, ldc_pad):
    """m = 16 makes ldc % 8 == 0 without padding (fast path when alpha == 1, beta == 0); pads 3 and 5 break it."""
    check(Call(OP_N, OP_N, 16, 40, 33, alpha, beta, pads=(0, 0, ldc_pad), gaps=(0, 0, 4), seed=11), *twin)


@pytest.mark.parametrize("alpha,k", [(0.0, 12), (1.5, 0), (0.0, 0)])
@pytest.mark.parametrize("beta", [0.0, -2.0])
def test_scale_only_path(twin, alpha, k, beta):
    """k == 0 or alpha == 0: C_i = beta * C_i; with beta == 0 C_i is zeroed even where it held NaN."""
    call = Call(OP_T, OP_N, 23, 11, k, alpha, beta, pads=(1, 1, 2), gaps=(0, 0, 5),
                c_fill=np.nan if beta == 0 else None)
    call.A.buf[:] = np.nan
    call.B.buf[:] = np.nan
    assert call.run(*twin) == Status.SUCCESS
    for i in range(call.batch):
        expected = np.zeros((23, 11), np.float32) if beta == 0 else np.float32(beta) * call.c_values[i]
        assert np.array_equal(call.C.view(i), expected)
    assert call.outside_untouched()


def test_beta_zero_general_path_never_reads_c(twin):
    call = Call(OP_N, OP_N, 13, 6, 5, 2.0, 0.0, c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert all(np.isfinite(call.C.view(i)).all() for i in range(call.batch))


@pytest.mark.parametrize("alpha,k", [(0.0, 8), (1.0, 0)])
def test_quick_return_beta_one_does_not_write_c(twin, alpha, k):
    call = Call(OP_N, OP_N, 10, 4, k, alpha, 1.0, c_fill=np.nan)
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.C.buf.view(np.uint32), call.C.before.view(np.uint32))


@pytest.mark.parametrize("m,n,batch", [(0, 4, 2), (4, 0, 2), (4, 4, 0)])
def test_empty_calls_write_nothing(twin, m, n, batch):
    call = Call(OP_N, OP_N, m, n, 3, 1.0, 0.5, batch=max(batch, 1))
    call.batch = batch
    assert call.run(*twin) == Status.SUCCESS
    assert np.array_equal(call.C.buf.view(np.uint32), call.C.before.view(np.uint32))


@pytest.mark.parametrize("cores", [1, 2, 5])
def test_result_independent_of_core_count(twin, handle_with_cores, cores):
    check(Call(OP_T, OP_T, 260, 140, 70, 0.5, 2.0, batch=2, seed=cores), twin[0], handle_with_cores(cores))
