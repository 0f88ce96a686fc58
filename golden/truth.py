"""The float64/complex128 truth: the same operations as `golden.cblas`, from the same float32 inputs, in double
precision (numpy; the SYMM products through scipy's double-precision BLAS, which reads the stored triangle). The
criteria use it to decide whether the fp32 golden itself can be trusted (overflow, cancellation); the quick paths
are the same Netlib ones, so truth and golden never disagree on semantics.
"""
from __future__ import annotations

import numpy as np

from golden.cblas import check_gemm_args, check_symm_args, gemm_batches, matrix_view, symm_target
from harness.model.abi import OP_N, SIDE_LEFT, UPPER


def _blas_symm(dtype: type):
    """scipy's dsymm or zsymm: C = A*B (LEFT) or B*A (RIGHT) reading only the `lower` triangle of A. It takes the
    place of mirroring A into a full matrix for a general product: the mirror was most of a Csymm row's truth and
    of the table generator's error scales (a quarter less time at order 2048, and the same bits)."""
    from scipy.linalg import blas  # imported with the first truth, as golden.cblas imports it

    return blas.zsymm if np.dtype(dtype).kind == "c" else blas.dsymm


def _symm(dtype: type, side: int, uplo: int, m: int, n: int, alpha, A: np.ndarray, lda: int, B: np.ndarray,
          ldb: int, beta, C: np.ndarray, ldc: int) -> np.ndarray:
    """`golden.cblas._symm` in `dtype` (complex128 or float64): a copy of C's storage with the written region
    updated; alpha and beta rounded to the operator's precision first, as the operator receives them. The product
    is A*B (or B*A) alone, scaled and added here, so that beta == 0 never reads C as in golden.cblas."""
    ka = check_symm_args(side, uplo, m, n)
    if np.dtype(dtype).kind == "c":
        alpha, beta = complex(np.complex64(alpha)), complex(np.complex64(beta))
    else:
        alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    out = np.asarray(C).ravel().astype(dtype)
    c = symm_target(out, m, n, ldc, alpha, beta)
    if c is None:
        return out
    a = matrix_view(np.asarray(A).ravel(), ka, ka, lda).astype(dtype, order="F")
    b = matrix_view(np.asarray(B).ravel(), m, n, ldb).astype(dtype, order="F")
    product = _blas_symm(dtype)(1.0, a, b, side=int(side != SIDE_LEFT), lower=int(uplo != UPPER))
    c[...] = alpha * product if beta == 0 else alpha * product + beta * c
    return out


def csymm(side: int, uplo: int, m: int, n: int, alpha: complex, A: np.ndarray, lda: int, B: np.ndarray, ldb: int,
          beta: complex, C: np.ndarray, ldc: int) -> np.ndarray:
    """`golden.cblas.csymm` in complex128."""
    return _symm(np.complex128, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)


def ssymm(side: int, uplo: int, m: int, n: int, alpha: float, A: np.ndarray, lda: int, B: np.ndarray, ldb: int,
          beta: float, C: np.ndarray, ldc: int) -> np.ndarray:
    """`golden.cblas.ssymm` in float64."""
    return _symm(np.float64, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)


def sgemm_strided_batched(trans_a: int, trans_b: int, m: int, n: int, k: int, alpha: float, A: np.ndarray,
                          lda: int, stride_a: int, B: np.ndarray, ldb: int, stride_b: int, beta: float,
                          C: np.ndarray, ldc: int, stride_c: int, batch_count: int) -> np.ndarray:
    """`golden.cblas.sgemm_strided_batched` in float64: a float64 copy of C's storage, written regions updated."""
    check_gemm_args(trans_a, trans_b, m, n, k, batch_count)
    alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    out = np.asarray(C).ravel().astype(np.float64)
    if m == 0 or n == 0 or batch_count == 0:
        return out
    a_store, b_store = np.asarray(A).ravel(), np.asarray(B).ravel()
    for a, b, c in gemm_batches(trans_a, trans_b, m, n, k, alpha, a_store, lda, stride_a, b_store, ldb, stride_b,
                                beta, out, ldc, stride_c, batch_count):
        a, b = a.astype(np.float64), b.astype(np.float64)
        product = (a if trans_a == OP_N else a.T) @ (b if trans_b == OP_N else b.T)
        c[...] = alpha * product if beta == 0 else alpha * product + beta * c
    return out
