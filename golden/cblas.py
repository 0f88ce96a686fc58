"""Goldens in the operator's precision: CBLAS semantics through scipy.linalg.blas (f2py wrappers of the BLAS
scipy ships, OpenBLAS in the wheels), on the device's column-major storage.

Quick paths follow Netlib, not the BLAS under scipy, so the golden never depends on which BLAS is installed:
m == 0 or n == 0 leaves C alone; alpha == 0 (sgemm: or k == 0) gives C = beta*C without reading A or B, beta == 1
leaving C untouched and beta == 0 writing zeros (not NaN*0); beta == 0 never reads C.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from harness.model.abi import LOWER, OP_C, OP_N, OP_T, SIDE_LEFT, SIDE_RIGHT, UPPER

def _blas():
    """scipy.linalg.blas, imported by the first golden: scipy.linalg costs ~0.5 s of CPU to import, and the
    processes that only describe the operators (the isolated worker, whose results are judged elsewhere) never
    compute one."""
    from scipy.linalg import blas

    return blas


#: scipy's trans_a/trans_b codes for the ops-blas operation enums (C on real data is T).
_TRANS = {OP_N: 0, OP_T: 1, OP_C: 2}


def matrix_view(storage: np.ndarray, rows: int, cols: int, ld: int, offset: int = 0) -> np.ndarray:
    """A (rows, cols) column-major view of `storage[offset:]` with leading dimension ld, without copying.

    With ld == rows the view is Fortran-contiguous, so BLAS wrappers use it in place; with padding they copy only
    the rows they need. Raises ValueError where the storage cannot hold the matrix.
    """
    if rows < 0 or cols < 0 or offset < 0:
        raise ValueError(f"negative matrix geometry: rows {rows}, cols {cols}, offset {offset}")
    if ld < max(1, rows):
        raise ValueError(f"leading dimension {ld} < max(1, rows={rows})")
    needed = offset + (ld * (cols - 1) + rows if rows and cols else 0)
    if needed > storage.size:
        raise ValueError(f"storage of {storage.size} elements is too small for a {rows}x{cols} matrix with "
                         f"ld {ld} at offset {offset} (needs {needed})")
    base = storage[offset:] if storage.size > offset else storage[:0]
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(base, shape=(rows, cols), strides=(item, ld * item),
                                           writeable=base.flags.writeable)


def scale_by_beta(c: np.ndarray, beta: complex | float) -> None:
    """C = beta*C in place, Netlib style: beta == 1 leaves C bit-identical, beta == 0 writes zeros."""
    if beta == 1:
        return
    if beta == 0:
        c[...] = 0
    else:
        np.multiply(c, c.dtype.type(beta), out=c)


def _blas_into(c: np.ndarray, result: np.ndarray) -> None:
    """f2py works in place on a Fortran-contiguous C; a padded C comes back as a fresh array to copy in."""
    if not np.shares_memory(c, result):
        c[...] = result


def check_symm_args(side: int, uplo: int, m: int, n: int) -> int:
    """Validate the enums and dimensions a golden needs; returns ka, the order of the symmetric A."""
    if side not in (SIDE_LEFT, SIDE_RIGHT):
        raise ValueError(f"side {side} is neither LEFT ({SIDE_LEFT}) nor RIGHT ({SIDE_RIGHT})")
    if uplo not in (UPPER, LOWER):
        raise ValueError(f"uplo {uplo} is neither UPPER ({UPPER}) nor LOWER ({LOWER})")
    if m < 0 or n < 0:
        raise ValueError(f"negative dimension m={m} n={n}")
    return m if side == SIDE_LEFT else n


def check_gemm_args(trans_a: int, trans_b: int, m: int, n: int, k: int, batch_count: int) -> None:
    for name, t in (("transA", trans_a), ("transB", trans_b)):
        if t not in _TRANS:
            raise ValueError(f"{name} {t} is not one of N/T/C ({OP_N}/{OP_T}/{OP_C})")
    if min(m, n, k, batch_count) < 0:
        raise ValueError(f"negative dimension m={m} n={n} k={k} batch_count={batch_count}")


def op_shape(trans: int, rows: int, cols: int) -> tuple[int, int]:
    """Stored shape of a matrix whose op() is rows x cols."""
    return (rows, cols) if trans == OP_N else (cols, rows)


def symm_target(out: np.ndarray, m: int, n: int, ldc: int, alpha: complex, beta: complex) -> np.ndarray | None:
    """C's view in `out` where csymm needs a product; None where Netlib's quick paths already finished it (m or n
    == 0 leaves C alone, alpha == 0 gives C = beta*C). Shared by golden and truth so they agree on semantics."""
    if m == 0 or n == 0:
        return None
    c = matrix_view(out, m, n, ldc)
    if alpha == 0:
        scale_by_beta(c, beta)
        return None
    return c


def gemm_batches(trans_a: int, trans_b: int, m: int, n: int, k: int, alpha: float, a_store: np.ndarray, lda: int,
                 stride_a: int, b_store: np.ndarray, ldb: int, stride_b: int, beta: float, out: np.ndarray, ldc: int,
                 stride_c: int, batch_count: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(A_i, B_i, C_i) views (A and B in stored shape) of the batches that need a product, in order, so that
    overlapping C batches see the earlier ones' results; the others take Netlib's quick path here (alpha == 0 or
    k == 0: C_i = beta*C_i). Shared by golden and truth so they agree on semantics."""
    ra, ca = op_shape(trans_a, m, k)
    rb, cb = op_shape(trans_b, k, n)
    for i in range(batch_count):
        c = matrix_view(out, m, n, ldc, i * stride_c)
        if alpha == 0 or k == 0:
            scale_by_beta(c, beta)
            continue
        yield matrix_view(a_store, ra, ca, lda, i * stride_a), matrix_view(b_store, rb, cb, ldb, i * stride_b), c


def _symm(dtype: type, routine, side: int, uplo: int, m: int, n: int, alpha, A: np.ndarray, lda: int,
          B: np.ndarray, ldb: int, beta, C: np.ndarray, ldc: int) -> np.ndarray:
    """C = alpha*A*B + beta*C (LEFT) or alpha*B*A + beta*C (RIGHT) with the BLAS `routine` of `dtype`, A symmetric
    (not Hermitian) of which only the `uplo` triangle is read; a `dtype` copy of C's storage out."""
    ka = check_symm_args(side, uplo, m, n)
    scalar = complex if np.dtype(dtype).kind == "c" else float
    alpha, beta = scalar(dtype(alpha)), scalar(dtype(beta))
    out = np.array(C, dtype=dtype, copy=True).ravel()
    c = symm_target(out, m, n, ldc, alpha, beta)
    if c is None:
        return out
    a = matrix_view(np.asarray(A, dtype=dtype).ravel(), ka, ka, lda)
    b = matrix_view(np.asarray(B, dtype=dtype).ravel(), m, n, ldb)
    if beta == 0:
        c[...] = 0
    result = routine(alpha, a, b, beta=beta, c=c, side=int(side == SIDE_RIGHT), lower=int(uplo == LOWER),
                     overwrite_c=1)
    _blas_into(c, result)
    return out


def csymm(side: int, uplo: int, m: int, n: int, alpha: complex, A: np.ndarray, lda: int, B: np.ndarray, ldb: int,
          beta: complex, C: np.ndarray, ldc: int) -> np.ndarray:
    """Complex symmetric (not Hermitian) SYMM, column-major complex64 storage (`_symm`)."""
    return _symm(np.complex64, _blas().csymm, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)


def ssymm(side: int, uplo: int, m: int, n: int, alpha: float, A: np.ndarray, lda: int, B: np.ndarray, ldb: int,
          beta: float, C: np.ndarray, ldc: int) -> np.ndarray:
    """Real SYMM, column-major float32 storage (`_symm`)."""
    return _symm(np.float32, _blas().ssymm, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc)


def sgemm_strided_batched(trans_a: int, trans_b: int, m: int, n: int, k: int, alpha: float, A: np.ndarray,
                          lda: int, stride_a: int, B: np.ndarray, ldb: int, stride_b: int, beta: float,
                          C: np.ndarray, ldc: int, stride_c: int, batch_count: int) -> np.ndarray:
    """C_i = alpha*op(A_i)*op(B_i) + beta*C_i for i < batch_count, X_i at element offset i*stride_x (0
    broadcasts one matrix); float32 storage in, a float32 copy of C's storage out, batch gaps untouched. Batches
    run in order, so overlapping C batches see the earlier ones' results."""
    check_gemm_args(trans_a, trans_b, m, n, k, batch_count)
    alpha, beta = float(np.float32(alpha)), float(np.float32(beta))
    out = np.array(C, dtype=np.float32, copy=True).ravel()
    if m == 0 or n == 0 or batch_count == 0:
        return out
    a_store = np.asarray(A, dtype=np.float32).ravel()
    b_store = np.asarray(B, dtype=np.float32).ravel()
    for a, b, c in gemm_batches(trans_a, trans_b, m, n, k, alpha, a_store, lda, stride_a, b_store, ldb, stride_b,
                                beta, out, ldc, stride_c, batch_count):
        if beta == 0:
            c[...] = 0
        result = _blas().sgemm(alpha, a, b, beta=beta, c=c, trans_a=_TRANS[trans_a], trans_b=_TRANS[trans_b],
                            overwrite_c=1)
        _blas_into(c, result)
    return out
