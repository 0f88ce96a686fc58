"""aclblasSgemmStridedBatched: C_i = alpha*op(A_i)*op(B_i) + beta*C_i, X_i = X + i*strideX (elements, 0 = broadcast).

Schema (project table header): case_name, description, transA, transB, m, n, k, alpha, beta, lda, strideA, ldb,
strideB, ldc, strideC, batchCount, a_fill, b_fill, c_fill, expect_result, mere_threshold, mare_multiplier,
random_seed. Empty ld = compact (max(1, rows of the stored matrix)), empty stride = compact (ld * stored columns),
empty batchCount = 1. `null` in alpha/beta (or `alpha_null`/`beta_null` = true) passes a NULL scalar, fill
`NULLPTR` (or `aarray_null`/`barray_null`/`carray_null` = true) a NULL matrix, `handle_null` in the
description a NULL handle. Seeds per batch b as the C++ batched frame: A = s+3b, B = s+3b+1, C = s+3b+2.

ops-blas has no frame of its own for this operator (no `test/*/sgemm_strided_batched`), so its cells are read as
the batched GEMM frame reads them (`test/gemm_batched/sgemm_batched/sgemm_batched_param.h`): only an empty ld cell
is compact; a written one, 0 and negatives included, reaches the operator as written.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np

import golden
from golden import sample
from harness.model import abi
from harness.tables import fill
from harness.backends import aclblas_lib
from harness.tables.layout import Buffer, region_mask, span
from harness.ops import gemm_family
# part of this operator's interface, the same for every BLAS-3 operator / every batched GEMM operator:
from harness.model.operators import accumulates  # noqa: F401
from harness.ops.gemm_family import baseline_params, expected_workspace_bytes, flops, flops_of  # noqa: F401

NAME = "sgemm_strided_batched"
COLUMNS = ("case_name", "description", "transA", "transB", "m", "n", "k", "alpha", "beta", "lda", "strideA", "ldb",
           "strideB", "ldc", "strideC", "batchCount", "a_fill", "b_fill", "c_fill", "expect_result",
           "mere_threshold", "mare_multiplier", "random_seed", "alpha_null", "beta_null", "aarray_null",
           "barray_null", "carray_null")
REQUIRED = gemm_family.REQUIRED
GATE = "mere_mare"
DEFAULT_FILL = "RANDOM"
DEFAULTS = {**gemm_family.DEFAULTS, **{f"stride{x}": "the compact stride (ld x stored columns)" for x in "ABC"}}
#: The seed's clamp for near-zero elements (精度标准: atol_floor = 2^-13).
ATOL_FLOOR = 2.0 ** -13


@dataclass(frozen=True)
class Args(gemm_family.GemmArgs):
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int
    a_fill: str
    b_fill: str
    c_fill: str
    handle_null: bool = False



def parse(reader, description: str) -> Args:
    from harness.tables.cases import TRANS

    ta = reader.enum("transA", TRANS, abi.OP_N, "transA")
    tb = reader.enum("transB", TRANS, abi.OP_N, "transB")
    m, n, k = reader.int("m", 0), reader.int("n", 0), reader.int("k", 0)
    lds = gemm_family.min_lds(ta, tb, m, n, k)
    lda, ldb, ldc = reader.int("lda", lds[0]), reader.int("ldb", lds[1]), reader.int("ldc", lds[2])
    return Args(
        trans_a=ta, trans_b=tb, m=m, n=n, k=k,
        alpha=None if reader.null_scalar("alpha") else reader.float("alpha", 1.0),
        beta=None if reader.null_scalar("beta") else reader.float("beta", 0.0),
        lda=lda, ldb=ldb, ldc=ldc,
        stride_a=reader.int64("strideA", lda * (k if ta == abi.OP_N else m)),
        stride_b=reader.int64("strideB", ldb * (n if tb == abi.OP_N else k)),
        stride_c=reader.int64("strideC", ldc * n),
        batch=reader.int("batchCount", 1),
        a_fill=_null_fill(reader, "a", DEFAULT_FILL), b_fill=_null_fill(reader, "b", DEFAULT_FILL),
        c_fill=_null_fill(reader, "c", "VALUE_NORM_0"),
        handle_null="handle_null" in description,
    )


def _null_fill(reader, matrix: str, default: str) -> str:
    """The matrix's fill, NULLPTR where the gemm family's `<x>array_null` column says `true` (the strided form of
    a NULL pointer array is a NULL matrix)."""
    fill_text = reader.fill(f"{matrix}_fill", default)
    return "NULLPTR" if reader.flag(f"{matrix}array_null") else fill_text


def _total(a: Args, rows: int, cols: int, ld: int, stride: int) -> int:
    one = span(rows, cols, ld)
    if one == 0 or a.batch <= 0:
        return 0
    return (a.batch - 1) * max(stride, 0) + one


def buffer_bytes(a: Args) -> dict[str, int]:
    """Host bytes of each buffer, computed before anything is allocated (memory cap)."""
    return {"A": 4 * _total(a, *a.a_shape, a.lda, a.stride_a), "B": 4 * _total(a, *a.b_shape, a.ldb, a.stride_b),
            "C": 4 * _total(a, a.m, a.n, a.ldc, a.stride_c)}


def bytes_needed(a: Args) -> int:
    return sum(buffer_bytes(a).values())


def output_overlap(a: Args) -> str:
    """Why C's batches overlap ("" when they do not): the result would depend on the order batches run in."""
    if a.batch <= 1 or min(a.m, a.n) <= 0 or a.ldc <= 0:
        return ""
    one = span(a.m, a.n, a.ldc)
    if a.stride_c == 0:
        return f"strideC=0 with batchCount={a.batch}: every batch writes the same C"
    if abs(a.stride_c) < one:
        return (f"strideC={a.stride_c} is smaller than one C's span ({one} elements for m={a.m}, n={a.n}, "
                f"ldc={a.ldc}): C batches overlap, so the result depends on the order batches run in")
    return ""


def _strided(spec: str, rows: int, cols: int, ld: int, stride: int, a: Args, seed: int,
             part: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Batches filled in order with their own seeds; stride 0 stores one matrix; elements outside every batch's
    rows x cols block (ld padding, gaps) are marked never-read / never-written."""
    if spec == "NULLPTR":
        return np.zeros(0, np.float32), np.zeros(0, bool), True
    total = _total(a, rows, cols, ld, stride)
    host = np.zeros(total, np.float32)
    region = np.zeros(total, bool)
    stride = max(stride, 0)  # negative strides (negative dims or ld in negative rows) plan one matrix
    count = 1 if stride == 0 else max(a.batch, 0)
    for b in range(count if total else 0):
        off = b * stride
        mat = fill.make_matrix(spec, rows, cols, ld, seed + 3 * b + part)
        host[off:off + mat.size] = mat[: total - off]
        region_mask(total, rows, cols, ld, off, region)
    return host, region, False


def buffers(a: Args, seed: int) -> dict[str, Buffer]:
    A, ra, na = _strided(a.a_fill, *a.a_shape, a.lda, a.stride_a, a, seed, 0)
    B, rb, nb = _strided(a.b_fill, *a.b_shape, a.ldb, a.stride_b, a, seed, 1)
    C, rc, nc = _strided(a.c_fill, a.m, a.n, a.ldc, a.stride_c, a, seed, 2)
    batched = a.batch > 1
    return {
        "A": Buffer("A", A, null=na, never_read=~ra, reach=max(a.lda, a.stride_a if batched else 0)),
        "B": Buffer("B", B, null=nb, never_read=~rb, reach=max(a.ldb, a.stride_b if batched else 0)),
        "C": Buffer("C", C, null=nc, output=True, written=rc, never_read=None,
                    reach=max(a.ldc, a.stride_c if batched else 0)),
    }


def golden_result(a: Args, bufs: dict[str, Buffer], truth: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    args = (a.trans_a, a.trans_b, a.m, a.n, a.k, a.alpha, bufs["A"].host, a.lda, a.stride_a, bufs["B"].host,
            a.ldb, a.stride_b, a.beta, bufs["C"].host, a.ldc, a.stride_c, a.batch)
    return (golden.cblas.sgemm_strided_batched(*args),
            golden.truth.sgemm_strided_batched(*args) if truth else None)


def sample_problem(a: Args, bufs: dict[str, Buffer], budget: float,
                   seed: int) -> tuple[Args, dict[str, Buffer], np.ndarray] | None:
    """A smaller problem on a sample of batches and of C's columns, within `budget` FLOPs: (its args, its buffers,
    the full-C storage index of each element of its C); None where the full golden is within budget or the layout
    is not one a sample can stand for (overlapping or negative strides)."""
    strides_ok = min(a.stride_a, a.stride_b) >= 0 and a.stride_c >= span(a.m, a.n, a.ldc)
    if flops(a) <= budget or not strides_ok or min(a.m, a.n, a.k, a.batch) <= 0 or a.alpha is None \
            or a.beta is None:
        return None
    batches = sample.pick(a.batch, 4, seed)
    cols = sample.pick(a.n, max(1, int(budget // (2.0 * a.m * a.k * len(batches)))), seed + 1)
    ra, ca = a.a_shape
    b_rows, b_cols = (np.arange(a.k), cols) if a.trans_b == abi.OP_N else (cols, np.arange(a.k))
    rows = np.arange(a.m)
    sub = replace(a, n=len(cols), batch=len(batches), lda=max(1, ra), ldb=max(1, len(b_rows)), ldc=max(1, a.m),
                  stride_a=max(1, ra) * ca, stride_b=max(1, len(b_rows)) * len(b_cols),
                  stride_c=max(1, a.m) * len(cols))
    A = np.concatenate([sample.gather(bufs["A"].host, np.arange(ra), np.arange(ca), a.lda, b * a.stride_a)
                        for b in batches])
    B = np.concatenate([sample.gather(bufs["B"].host, b_rows, b_cols, a.ldb, b * a.stride_b) for b in batches])
    index = np.concatenate([sample.block_index(rows, cols, a.ldc, b * a.stride_c).ravel(order="F")
                            for b in batches])
    C = bufs["C"].host[index]
    return sub, {"A": Buffer("A", A), "B": Buffer("B", B),
                 "C": Buffer("C", C, output=True, written=np.ones(C.size, bool))}, index


def error_scale(a: Args, bufs: dict[str, Buffer]) -> np.ndarray:
    """G = |alpha| |op(A)| |op(B)| + |beta| |C| per element of C's storage: Netlib's error scale."""
    return golden.truth.sgemm_strided_batched(
        a.trans_a, a.trans_b, a.m, a.n, a.k, abs(a.alpha), np.abs(bufs["A"].host), a.lda, a.stride_a,
        np.abs(bufs["B"].host), a.ldb, a.stride_b, abs(a.beta), np.abs(bufs["C"].host), a.ldc, a.stride_c, a.batch)


def gate(a: Args, thresholds: tuple[float, float]) -> tuple[str, dict]:
    """MERE/MARE with the seed's atol_floor (FP32 2^-13, MARE multiplier 10 unless the row says otherwise);
    bit-exact where the result is a quick-return scaling by beta in {0, 1}."""
    if (a.alpha == 0 or a.k == 0) and a.beta in (0, 1):
        return "exact", {}
    t, mult = thresholds
    return GATE, {"threshold": t, "multiplier": mult, "atol_floor": ATOL_FLOOR}


scalars = aclblas_lib.host_scalars

SYMBOL = "aclblasSgemmStridedBatched"
_L = aclblas_lib
ARGTYPES = [_L.HANDLE, _L.ENUM, _L.ENUM, _L.INT, _L.INT, _L.INT, _L.FLOAT_PTR, _L.PTR, _L.INT, _L.INT64, _L.PTR,
            _L.INT, _L.INT64, _L.FLOAT_PTR, _L.PTR, _L.INT, _L.INT64, _L.INT]


#: aclblasSgemmStridedBatched(handle, transA, transB, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,
#: C, ldc, strideC, batchCount) with host scalars (Python numbers or c_float; None -> NULL) and device addresses;
#: returns the raw status.
invoke = partial(aclblas_lib.invoke, SYMBOL, ARGTYPES)


def _call_aclblas(backend, a: Args, ptrs: dict[str, int], handle: int, host_scalars: dict[str, object]) -> int:
    return invoke(backend.lib, handle, a.trans_a, a.trans_b, a.m, a.n, a.k, host_scalars["alpha"], ptrs["A"], a.lda,
                  a.stride_a, ptrs["B"], a.ldb, a.stride_b, host_scalars["beta"], ptrs["C"], a.ldc, a.stride_c,
                  a.batch)


def _call_cublas(backend, a: Args, ptrs: dict[str, int], handle: int, host_scalars: dict[str, object]) -> int:
    """cublasSgemmStridedBatched (CuPy wraps it) on the same strided buffers."""
    from harness.backends import cuda

    return cuda.checked_call(
        backend, a.trans_a in cuda.OP and a.trans_b in cuda.OP, a.alpha, a.beta, np.float32,
        lambda alpha, beta: backend.lib.sgemmStridedBatched(
            backend.handle, cuda.OP[a.trans_a], cuda.OP[a.trans_b], a.m, a.n, a.k, alpha, ptrs["A"], a.lda,
            a.stride_a, ptrs["B"], a.ldb, a.stride_b, beta, ptrs["C"], a.ldc, a.stride_c, a.batch))


CALLS = {"aclblas": _call_aclblas, "cublas": _call_cublas}
