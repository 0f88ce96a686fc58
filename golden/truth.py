"""The float64/complex128 truth: the same operations as `golden.cblas`, from the same float32 inputs, with numpy in
double precision. The criteria use it to decide whether the fp32 golden itself can be trusted (overflow,
cancellation); the quick paths are the same Netlib ones, so truth and golden never disagree on semantics.
"""
from __future__ import annotations

import numpy as np

from golden.cblas import check_gemm_args, check_symm_args, gemm_batches, matrix_view, symm_target
from harness.model.abi import OP_N, SIDE_LEFT, UPPER


#: Tile edge of symmetric_from_triangle: a 128 x 128 complex128 tile and its mirror stay in cache.
_TILE = 128


def symmetric_from_triangle(a: np.ndarray, uplo: int, dtype: type | None = None) -> np.ndarray:
    """The full symmetric matrix (C order) that the `uplo` triangle of a describes, in `dtype` (default a's); the
    other triangle is never read. A symmetric matrix has the same bytes in C and Fortran order, so it is built in
    Fortran order: one converting copy of the column-major `a` along its columns, then the mirrored triangle tile by
    tile (a whole-matrix transpose reads with a stride of the leading dimension, which at power-of-two orders misses
    the cache on every element), and handed out as its C-ordered transpose."""
    n = a.shape[0]
    full = np.empty((n, n), dtype=a.dtype if dtype is None else dtype, order="F")
    full[...] = a
    upper = uplo == UPPER
    for s in range(0, n, _TILE):
        e = min(n, s + _TILE)
        i, j = np.ogrid[s:e, s:e]
        diagonal = full[s:e, s:e]
        diagonal[...] = np.where(i <= j if upper else i >= j, diagonal, diagonal.T)
        for t in range(e, n, _TILE):  # the tiles beside the diagonal one, in the mirrored triangle
            u = min(n, t + _TILE)
            if upper:
                full[t:u, s:e] = full[s:e, t:u].T
            else:
                full[s:e, t:u] = full[t:u, s:e].T
    return full.T


def _symm(dtype: type, side: int, uplo: int, m: int, n: int, alpha, A: np.ndarray, lda: int, B: np.ndarray,
          ldb: int, beta, C: np.ndarray, ldc: int) -> np.ndarray:
    """`golden.cblas._symm` in `dtype` (complex128 or float64): a copy of C's storage with the written region
    updated; alpha and beta rounded to the operator's precision first, as the operator receives them."""
    ka = check_symm_args(side, uplo, m, n)
    if np.dtype(dtype).kind == "c":
        alpha, beta = complex(np.complex64(alpha)), complex(np.complex64(beta))
    else:
        alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    out = np.asarray(C).ravel().astype(dtype)
    c = symm_target(out, m, n, ldc, alpha, beta)
    if c is None:
        return out
    a = symmetric_from_triangle(matrix_view(np.asarray(A).ravel(), ka, ka, lda), uplo, dtype)
    b = matrix_view(np.asarray(B).ravel(), m, n, ldb).astype(dtype)
    product = a @ b if side == SIDE_LEFT else b @ a
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
