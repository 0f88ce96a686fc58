"""aclblasSsymm: C = alpha*A*B + beta*C (LEFT) or alpha*B*A + beta*C (RIGHT), A real symmetric, fp32, ROW-major.

Row-major because the ops-blas operator and its table are (arch35 `ssymm_golden.h` indexes `a[row*lda+col]`; the
table's `ldb >= n`, `ldc >= n` rows only make sense so): A is dimA x dimA with row stride lda (dimA = m LEFT, n
RIGHT), B and C are m x n with row strides ldb, ldc, UPPER means the elements with col >= row. A row-major matrix is
the column-major matrix of its transpose over the same storage, so the golden is the column-major SYMM with side and
uplo flipped and m, n swapped.

Schema (upstream header): case_name, description, side, uplo, m, n, alpha, lda, ldb, beta, ldc, expect_result,
mere_threshold, mare_multiplier; the project's tables add a_fill, b_fill, c_fill and random_seed. `null` in alpha
or beta (or `alpha_null`/`beta_null` = true) passes a NULL scalar, fill `NULLPTR` a NULL matrix, `handle_null` in
the description a NULL handle. ld cells have no default (0), as ssymm_param.h. Without fill columns every matrix
gets what the upstream test asks for, `RANDOM:-10:10` - which the C++ fill parser does not know, so it is the index
sequence 1, 2, 3... over the storage (ops-blas-conventions §3.7); seeds A = s, B = s+1, C = s+2.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import golden
from harness import abi, fill
from harness.backends import aclblas_lib
from harness.layout import Buffer, region_mask, triangle_mask
from harness.ops import accumulates  # noqa: F401  (part of this operator's interface)

NAME = "ssymm"
COLUMNS = ("case_name", "description", "side", "uplo", "m", "n", "alpha", "lda", "ldb", "beta", "ldc",
           "expect_result", "mere_threshold", "mare_multiplier", "a_fill", "b_fill", "c_fill", "random_seed",
           "alpha_null", "beta_null")
GATE = "mere_mare"
#: The upstream test's fill string (`makeBlasMatrixRM(..., "RANDOM:-10:10", seed)`): the index sequence in effect.
DEFAULT_FILL = "RANDOM:-10:10"


@dataclass(frozen=True)
class Args:
    side: int
    uplo: int
    m: int
    n: int
    alpha: float | None
    beta: float | None
    lda: int
    ldb: int
    ldc: int
    a_fill: str
    b_fill: str
    c_fill: str
    handle_null: bool = False

    @property
    def dim_a(self) -> int:
        """Order of A: m for LEFT, n for RIGHT (an invalid side reads as LEFT for buffer planning)."""
        return self.n if self.side == abi.SIDE_RIGHT else self.m


def parse(reader, description: str) -> Args:
    from harness.cases import SIDE, UNKNOWN_DEFAULT, UPLO

    return Args(
        side=reader.enum("side", SIDE, abi.SIDE_LEFT, "side"),
        uplo=reader.enum("uplo", UPLO, abi.UPPER, "uplo", unknown=UNKNOWN_DEFAULT["uplo"]),
        m=reader.int64("m", 0), n=reader.int64("n", 0),
        alpha=None if reader.null_scalar("alpha") else reader.float("alpha", 1.0),
        beta=None if reader.null_scalar("beta") else reader.float("beta", 0.0),
        lda=reader.int64("lda", 0), ldb=reader.int64("ldb", 0), ldc=reader.int64("ldc", 0),
        a_fill=reader.fill("a_fill", DEFAULT_FILL), b_fill=reader.fill("b_fill", DEFAULT_FILL),
        c_fill=reader.fill("c_fill", DEFAULT_FILL),
        handle_null="handle_null" in description,
    )


def _span(rows: int, cols: int, ld: int) -> int:
    """Elements of a row-major rows x cols matrix with row stride ld (the column-major cols x rows one)."""
    return max(ld * rows, (cols - 1) + (rows - 1) * ld + 1) if rows > 0 and cols > 0 and ld > 0 else 0


def buffer_bytes(a: Args) -> dict[str, int]:
    """Host bytes of A, B and C, computed before anything is allocated (memory cap)."""
    return {"A": 4 * _span(a.dim_a, a.dim_a, a.lda), "B": 4 * _span(a.m, a.n, a.ldb),
            "C": 4 * _span(a.m, a.n, a.ldc)}


def bytes_needed(a: Args) -> int:
    return sum(buffer_bytes(a).values())


def output_overlap(a: Args) -> str:
    """One C, no batches: it never overlaps itself."""
    return ""


def _matrix(spec: str, rows: int, cols: int, ld: int, seed: int) -> tuple[np.ndarray, bool]:
    """(storage, is_null) of a row-major rows x cols matrix: the C++ row-major maker fills storage index
    r*ld + c, which is the column-major cols x rows fill."""
    if spec == "NULLPTR":
        return np.zeros(0, np.float32), True
    return fill.make_matrix(spec, cols, rows, ld, seed), False


def buffers(a: Args, seed: int) -> dict[str, Buffer]:
    A, a_null = _matrix(a.a_fill, a.dim_a, a.dim_a, a.lda, seed)
    B, b_null = _matrix(a.b_fill, a.m, a.n, a.ldb, seed + 1)
    C, c_null = _matrix(a.c_fill, a.m, a.n, a.ldc, seed + 2)
    # row-major UPPER (col >= row) is the lower triangle of the column-major view
    a_read = triangle_mask(A.size, a.dim_a, a.lda, upper=a.uplo == abi.LOWER) if a.uplo in (abi.UPPER, abi.LOWER) \
        else region_mask(A.size, a.dim_a, a.dim_a, a.lda)
    return {
        "A": Buffer("A", A, null=a_null, never_read=~a_read, reach=a.lda),
        "B": Buffer("B", B, null=b_null, never_read=~region_mask(B.size, a.n, a.m, a.ldb), reach=a.ldb),
        "C": Buffer("C", C, null=c_null, output=True, written=region_mask(C.size, a.n, a.m, a.ldc), reach=a.ldc),
    }


def _column_major(a: Args) -> tuple[int, int, int, int]:
    """(side, uplo, m, n) of the column-major SYMM on the same storage: C^T = alpha*B^T*A + beta*C^T."""
    side = abi.SIDE_RIGHT if a.side == abi.SIDE_LEFT else abi.SIDE_LEFT
    uplo = abi.LOWER if a.uplo == abi.UPPER else abi.UPPER
    return side, uplo, a.n, a.m


def golden_result(a: Args, bufs: dict[str, Buffer]) -> tuple[np.ndarray, np.ndarray]:
    args = (*_column_major(a), a.alpha, bufs["A"].host, a.lda, bufs["B"].host, a.ldb, a.beta, bufs["C"].host, a.ldc)
    return golden.cblas.ssymm(*args), golden.truth.ssymm(*args)


def sample_problem(a: Args, bufs: dict[str, Buffer], budget: float, seed: int) -> None:
    """The upstream table has no perf rows: the golden is always the full problem."""
    return None


def error_scale(a: Args, bufs: dict[str, Buffer]) -> np.ndarray:
    """G = |alpha| |A| |B| + |beta| |C| per element of C's storage: Netlib's forward-error scale."""
    return golden.truth.ssymm(*_column_major(a), abs(a.alpha), np.abs(bufs["A"].host), a.lda,
                              np.abs(bufs["B"].host), a.ldb, abs(a.beta), np.abs(bufs["C"].host), a.ldc)


def gate(a: Args, thresholds: tuple[float, float]) -> tuple[str, dict]:
    """MERE/MARE with the row's threshold and multiplier (<= 0: FP32 2^-13 and 10, as ssymm's test does);
    bit-exact for the quick-return scalars alpha == 0, beta in {0, 1}."""
    if a.alpha == 0 and a.beta in (0, 1):
        return "exact", {}
    t, mult = thresholds
    return GATE, {"threshold": t, "multiplier": mult}


def flops_of(m: int, n: int, dim_a: int) -> float:
    """The one FLOP count of a call: 2 per multiply-add over m*n*dimA terms plus the epilogue (alpha*acc + beta*C,
    3 per element), the convention every operator here uses, so GFLOP/s compare across operators and history."""
    if m <= 0 or n <= 0:
        return 0.0
    return 2.0 * m * n * dim_a + 3.0 * m * n


def flops(a: Args) -> float:
    return flops_of(a.m, a.n, a.dim_a)


def expected_workspace_bytes(a: Args) -> int | None:
    return None


def baseline_params(a: Args) -> dict:
    return {"side": a.side, "uplo": a.uplo, "m": a.m, "n": a.n}


def scalars(a: Args) -> dict[str, object]:
    """The host scalars the call passes by pointer (None = NULL), kept by the engine to check them afterwards."""
    return {"alpha": aclblas_lib.float_value(a.alpha), "beta": aclblas_lib.float_value(a.beta)}


SYMBOL = "aclblasSsymm"
_L = aclblas_lib
ARGTYPES = [_L.HANDLE, _L.ENUM, _L.ENUM, _L.INT64, _L.INT64, _L.FLOAT_PTR, _L.PTR, _L.INT64, _L.PTR, _L.INT64,
            _L.FLOAT_PTR, _L.PTR, _L.INT64]


def invoke(lib, handle: int | None, side: int, uplo: int, m: int, n: int, alpha, a: int | None, lda: int,
           b: int | None, ldb: int, beta, c: int | None, ldc: int) -> int:
    """aclblasSsymm with host scalars (Python numbers or c_float; None -> NULL) and device addresses; returns the
    raw status."""
    fn = aclblas_lib.function(lib, SYMBOL, ARGTYPES)
    return fn(handle, side, uplo, m, n, aclblas_lib.scalar_pointer(alpha, aclblas_lib.float_value), a, lda, b, ldb,
              aclblas_lib.scalar_pointer(beta, aclblas_lib.float_value), c, ldc)


def _call_aclblas(backend, a: Args, ptrs: dict[str, int], handle: int, host_scalars: dict[str, object]) -> int:
    return invoke(backend.lib, handle, a.side, a.uplo, a.m, a.n, host_scalars["alpha"], ptrs["A"], a.lda, ptrs["B"],
                  a.ldb, host_scalars["beta"], ptrs["C"], a.ldc)


_CUBLAS_SYMBOL = "cublasSsymm_v2"
_CUBLAS_ARGTYPES = [_L.PTR, _L.INT, _L.INT, _L.INT, _L.INT, _L.PTR, _L.PTR, _L.INT, _L.PTR, _L.INT, _L.PTR, _L.PTR,
                    _L.INT]


def _call_cublas(backend, a: Args, ptrs: dict[str, int], handle: int, host_scalars: dict[str, object]) -> int:
    """cublasSsymm (column-major) on the transposed problem; invalid enums or NULL scalars are answered here."""
    from harness.backends import cuda

    if a.side not in cuda.SIDE or a.uplo not in cuda.FILL or a.alpha is None or a.beta is None:
        return int(abi.Status.INVALID_VALUE)
    side, uplo, m, n = _column_major(a)
    alpha, keep_alpha = cuda.scalar_ptr(a.alpha, np.float32)
    beta, keep_beta = cuda.scalar_ptr(a.beta, np.float32)
    try:
        backend.lib.native(_CUBLAS_SYMBOL, _CUBLAS_ARGTYPES, backend.handle, cuda.SIDE[side], cuda.FILL[uplo], m, n,
                           alpha, ptrs["A"], a.lda, ptrs["B"], a.ldb, beta, ptrs["C"], a.ldc)
    except backend.lib.CUBLASError:
        return int(abi.Status.EXECUTION_FAILED)
    return int(abi.Status.SUCCESS)


CALLS = {"aclblas": _call_aclblas, "cublas": _call_cublas}
