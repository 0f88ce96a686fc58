"""A strided batched sgemm call of an operator library in poisoned, guarded buffers, and its check against scipy's
CBLAS sgemm per batch (operators/test_twin_sgemm.py says what the buffers hold and why)."""
from __future__ import annotations

import numpy as np
from scipy.linalg import blas

from harness.model.abi import OP_N, Status
from harness.backends import aclblas_lib
from harness.ops import sgemm_strided_batched as sgemm_op

SENTINEL = np.float32(-777.0)
GUARD = 16


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
