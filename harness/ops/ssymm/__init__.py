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

Read as the ops-blas Ssymm frame reads it (hicann/ops-blas `test/symm/ssymm/ssymm_param.h`): an empty uplo is LOWER
(`ReadMap(map, "uplo", "LOWER")`), side LEFT; m, n and every ld cell go through `std::stoll` with the default "0",
so an ld cell means what it says, 0 and negatives included (passed to the operator as written, no compact default).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

import golden
from harness.model import abi
from harness.tables import fill
from harness.backends import aclblas_lib
from harness.tables.layout import Buffer, span
from harness.ops import symm_family
# part of this operator's interface, the same for every BLAS-3 operator / every SYMM operator:
from harness.model.operators import accumulates  # noqa: F401
from harness.ops.symm_family import baseline_params, expected_workspace_bytes, output_overlap  # noqa: F401

NAME = "ssymm"
COLUMNS = ("case_name", "description", "side", "uplo", "m", "n", "alpha", "lda", "ldb", "beta", "ldc",
           "expect_result", "mere_threshold", "mare_multiplier", "a_fill", "b_fill", "c_fill", "random_seed",
           "alpha_null", "beta_null")
GATE = "mere_mare"
#: ssymm_param.h gives an ld no compact default (0, which every row expecting SUCCESS would fail on), so the ld
#: columns are required here besides the SYMM ones.
REQUIRED = (*symm_family.REQUIRED, "lda", "ldb", "ldc")
#: The upstream test's fill string (`makeBlasMatrixRM(..., "RANDOM:-10:10", seed)`): the index sequence in effect.
DEFAULT_FILL = "RANDOM:-10:10"
#: An empty uplo cell, as ssymm_param.h defaults it.
DEFAULT_UPLO = abi.LOWER
#: What ssymm_param.h and the upstream test give every row for a column the header lacks.
DEFAULTS = {"alpha": "1", "beta": "0", "a_fill": f"{DEFAULT_FILL} (the index sequence 1, 2, 3...)",
            "b_fill": f"{DEFAULT_FILL} (the index sequence 1, 2, 3...)",
            "c_fill": f"{DEFAULT_FILL} (the index sequence 1, 2, 3...)", "alpha_null": "false", "beta_null": "false"}


@dataclass(frozen=True)
class Args(symm_family.SymmArgs):
    alpha: float | None
    beta: float | None
    lda: int
    ldb: int
    ldc: int
    a_fill: str
    b_fill: str
    c_fill: str
    handle_null: bool = False


def parse(reader, description: str) -> Args:
    from harness.tables.cases import SIDE, UNKNOWN_DEFAULT, UPLO

    return Args(
        side=reader.enum("side", SIDE, abi.SIDE_LEFT, "side"),
        uplo=reader.enum("uplo", UPLO, DEFAULT_UPLO, "uplo", unknown=UNKNOWN_DEFAULT["uplo"]),
        m=reader.int64("m", 0), n=reader.int64("n", 0),
        alpha=None if reader.null_scalar("alpha") else reader.float("alpha", 1.0),
        beta=None if reader.null_scalar("beta") else reader.float("beta", 0.0),
        lda=reader.int64("lda", 0), ldb=reader.int64("ldb", 0), ldc=reader.int64("ldc", 0),
        a_fill=reader.fill("a_fill", DEFAULT_FILL), b_fill=reader.fill("b_fill", DEFAULT_FILL),
        c_fill=reader.fill("c_fill", DEFAULT_FILL),
        handle_null="handle_null" in description,
    )


def buffer_bytes(a: Args) -> dict[str, int]:
    """Host bytes of A, B and C (row-major rows x cols = column-major cols x rows), computed before anything is
    allocated (memory cap)."""
    return {"A": 4 * span(a.ka, a.ka, a.lda), "B": 4 * span(a.n, a.m, a.ldb), "C": 4 * span(a.n, a.m, a.ldc)}


def bytes_needed(a: Args) -> int:
    return sum(buffer_bytes(a).values())


def buffers(a: Args, seed: int) -> dict[str, Buffer]:
    """Row-major A, B, C: the C++ row-major maker fills storage index r*ld + c, which is the column-major fill of
    the transpose, so they are planned as the column-major problem on the same storage (NULLPTR: an empty, NULL
    buffer)."""
    return symm_family.buffers(a, seed, fill.make_matrix, row_major=True)


def _column_major(a: Args) -> tuple[int, int, int, int]:
    """(side, uplo, m, n) of the column-major SYMM on the same storage."""
    return symm_family.flipped(a.side, a.uplo, a.m, a.n)


def golden_result(a: Args, bufs: dict[str, Buffer], truth: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    args = (*_column_major(a), a.alpha, bufs["A"].host, a.lda, bufs["B"].host, a.ldb, a.beta, bufs["C"].host, a.ldc)
    return golden.cblas.ssymm(*args), golden.truth.ssymm(*args) if truth else None


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


def min_lds(side: int, m: int, n: int) -> tuple[int, int, int]:
    """The smallest valid (lda, ldb, ldc), row-major: A's order, the n columns of B and C, at least 1. What the
    generator writes into ld cells it leaves unpadded, and what coverage counts padding from."""
    return max(1, symm_family.order_of_a(side, m, n)), max(1, n), max(1, n)


def flops_of(m: int, n: int, ka: int) -> float:
    """The one FLOP count of a call: 2 per multiply-add over m*n*dimA terms plus the epilogue (alpha*acc + beta*C,
    3 per element), the convention every operator here uses, so GFLOP/s compare across operators and history."""
    if m <= 0 or n <= 0:
        return 0.0
    return 2.0 * m * n * ka + 3.0 * m * n


def flops(a: Args) -> float:
    return flops_of(a.m, a.n, a.ka)


scalars = aclblas_lib.host_scalars

SYMBOL = "aclblasSsymm"
_L = aclblas_lib
ARGTYPES = [_L.HANDLE, _L.ENUM, _L.ENUM, _L.INT64, _L.INT64, _L.FLOAT_PTR, _L.PTR, _L.INT64, _L.PTR, _L.INT64,
            _L.FLOAT_PTR, _L.PTR, _L.INT64]
#: aclblasSsymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc) with host scalars (Python numbers
#: or c_float; None -> NULL) and device addresses; returns the raw status.
invoke = partial(aclblas_lib.invoke, SYMBOL, ARGTYPES)
#: cublasSsymm (column-major) runs the transposed problem.
CALLS = {"aclblas": partial(symm_family.call_aclblas, invoke),
         "cublas": partial(symm_family.call_cublas, "cublasSsymm_v2", np.float32, True)}
