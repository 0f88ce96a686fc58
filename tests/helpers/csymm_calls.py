"""A csymm call of an operator library in poisoned, guarded buffers, and its check against scipy's CBLAS csymm
(operators/test_twin_csymm.py says what the buffers hold and why)."""
from __future__ import annotations

import numpy as np
from scipy.linalg import blas

from harness.model.abi import LOWER, SIDE_LEFT, SIDE_RIGHT, UPPER, Status
from harness.backends import aclblas_lib
from harness.ops import csymm as csymm_op

SENTINEL = np.complex64(-777.0 + 555.0j)
GUARD = 16


def rand_complex(rng: np.random.Generator, shape) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def column_major(values: np.ndarray, ld: int, fill) -> np.ndarray:
    """rows x cols values stored column-major with leading dimension ld; the padding holds `fill`."""
    rows, cols = values.shape
    buf = np.full((max(cols, 1), ld), fill, dtype=np.complex64)
    buf[:cols, :rows] = values.T
    return buf.reshape(-1)


def stored(buf: np.ndarray, ld: int, rows: int, cols: int) -> np.ndarray:
    return buf[:ld * cols].reshape(cols, ld)[:, :rows].T


class Call:
    """One csymm case: poisoned inputs, C with padding and guard, and the CBLAS golden."""

    def __init__(self, side, uplo, m, n, alpha, beta, pads=(0, 0, 0), seed=0, c_fill=None):
        rng = np.random.default_rng(seed)
        self.side, self.uplo, self.m, self.n, self.alpha, self.beta = side, uplo, m, n, alpha, beta
        k = m if side == SIDE_LEFT else n
        self.lda, self.ldb, self.ldc = max(1, k) + pads[0], max(1, m) + pads[1], max(1, m) + pads[2]
        full = rand_complex(rng, (k, k))
        keep = np.triu(np.ones((k, k), bool)) if uplo == UPPER else np.tril(np.ones((k, k), bool))
        self.a_triangle = np.where(keep, full, 0).astype(np.complex64)
        self.a = column_major(np.where(keep, full, np.nan).astype(np.complex64), self.lda, np.nan)
        self.b_values = rand_complex(rng, (m, n))
        self.b = column_major(self.b_values, self.ldb, np.nan)
        self.c_values = rand_complex(rng, (m, n)) if c_fill is None else np.full((m, n), c_fill, np.complex64)
        self.c = np.concatenate([column_major(self.c_values, self.ldc, SENTINEL), np.full(GUARD, SENTINEL)])
        self.c_before = self.c.copy()

    def run(self, lib, handle) -> int:
        return csymm_op.invoke(lib, handle, self.side, self.uplo, self.m, self.n, self.alpha, self.a.ctypes.data,
                                 self.lda, self.b.ctypes.data, self.ldb, self.beta, self.c.ctypes.data, self.ldc)

    def golden(self) -> np.ndarray:
        c = np.asfortranarray(np.where(np.isnan(self.c_values), 0, self.c_values).astype(np.complex64))
        return blas.csymm(self.alpha, np.asfortranarray(self.a_triangle), np.asfortranarray(self.b_values),
                          beta=self.beta, c=c, side=int(self.side == SIDE_RIGHT), lower=int(self.uplo == LOWER))

    def bound(self) -> np.ndarray:
        """Float32 summation-order tolerance, elementwise: 1e-4 of the magnitude of what was summed."""
        sym = np.abs(self.a_triangle) + np.abs(np.tril(self.a_triangle, -1) + np.triu(self.a_triangle, 1)).T
        b = np.abs(self.b_values)
        prod = sym @ b if self.side == SIDE_LEFT else b @ sym
        return 1e-4 * (abs(self.alpha) * prod + abs(self.beta) * np.abs(self.c_values)) + 1e-6

    def result(self) -> np.ndarray:
        return stored(self.c, self.ldc, self.m, self.n)

    def outside_untouched(self) -> bool:
        """C's ld padding and the guard after the last column still hold exactly what was there."""
        mask = np.ones(self.c.size, bool)
        if self.m and self.n:
            mask[:self.ldc * self.n].reshape(self.n, self.ldc)[:, :self.m] = False
        return np.array_equal(self.c[mask], self.c_before[mask])


def check(call: Call, lib, handle) -> None:
    assert call.run(lib, handle) == Status.SUCCESS, aclblas_lib.last_message(lib, handle)
    err = np.abs(call.result() - call.golden())
    assert np.all(err <= call.bound()), f"max error {err.max()}"
    assert call.outside_untouched()
