"""aclblasCsymm: C = alpha*A*B + beta*C (LEFT) or alpha*B*A + beta*C (RIGHT), A complex symmetric (not Hermitian).

Schema (project table header): case_name, description, side, uplo, m, n, alpha_real, alpha_imag, a_fill, lda,
b_fill, ldb, beta_real, beta_imag, c_fill, ldc, expect_result, mere_threshold, mare_multiplier, random_seed.
A scalar cell `null` passes a NULL scalar, a fill `NULLPTR` a NULL matrix, `handle_null` in the description a NULL
handle. Seeds as the C++ frame derives them: A = s, B = s+1, C = s+2 (imaginary parts +7919 inside the fill).

Read as the ops-blas Csymm frame reads it (hicann/ops-blas `test/symm/csymm/csymm_param.h`, the arch35
`CsymmParam`, whose columns are this header): an ld cell that is empty, 0 or negative means the compact minimum
(`lda = max(1, dimA)`, `ldb = ldc = max(1, m)`: its `if (lda <= 0) lda = std::max(1, aDim)` ...), so a table never
passes the operator an ld <= 0, and a bad-ld row uses a positive ld below the minimum. `harness lint` names every
ld cell <= 0 (`frame_notes`). An empty uplo is LOWER, an empty fill RANDOM_NORM_5_5 (A, B and C alike).
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
from harness.tables.layout import Buffer, span
from harness.ops import symm_family
# part of this operator's interface, the same for every BLAS-3 operator / every SYMM operator:
from harness.model.operators import accumulates  # noqa: F401
from harness.ops.symm_family import baseline_params, expected_workspace_bytes, output_overlap  # noqa: F401

NAME = "csymm"
COLUMNS = ("case_name", "description", "side", "uplo", "m", "n", "alpha_real", "alpha_imag", "a_fill", "lda",
           "b_fill", "ldb", "beta_real", "beta_imag", "c_fill", "ldc", "expect_result", "mere_threshold",
           "mare_multiplier", "random_seed")
GATE = "mixed_tolerance"
REQUIRED = symm_family.REQUIRED
#: What an empty uplo or fill cell means, as csymm_param.h (arch35) defaults them.
DEFAULT_UPLO = abi.LOWER
DEFAULT_FILL = "RANDOM_NORM_5_5"
#: What csymm_param.h gives every row for a column the header lacks (harness.tables.header says it once).
DEFAULTS = {"alpha_real": "1", "alpha_imag": "0", "beta_real": "0", "beta_imag": "0", "a_fill": DEFAULT_FILL,
            "b_fill": DEFAULT_FILL, "c_fill": DEFAULT_FILL, "lda": "the compact minimum",
            "ldb": "the compact minimum", "ldc": "the compact minimum"}


@dataclass(frozen=True)
class Args(symm_family.SymmArgs):
    alpha: complex | None
    beta: complex | None
    a_fill: str
    b_fill: str
    c_fill: str
    lda: int
    ldb: int
    ldc: int
    handle_null: bool = False


def parse(reader, description: str) -> Args:
    from harness.tables.reader import SIDE, UNKNOWN_DEFAULT, UPLO

    side = reader.enum("side", SIDE, abi.SIDE_LEFT, "side")
    uplo = reader.enum("uplo", UPLO, DEFAULT_UPLO, "uplo", unknown=UNKNOWN_DEFAULT["uplo"])
    m = reader.int("m", 0)
    n = reader.int("n", 0)
    lds = min_lds(side, m, n)
    return Args(
        side=side, uplo=uplo, m=m, n=n,
        alpha=reader.complex_pair("alpha_real", "alpha_imag", complex(1, 0)),
        beta=reader.complex_pair("beta_real", "beta_imag", complex(0, 0)),
        a_fill=reader.fill("a_fill", DEFAULT_FILL), b_fill=reader.fill("b_fill", DEFAULT_FILL),
        c_fill=reader.fill("c_fill", DEFAULT_FILL),
        lda=frame_ld(reader.int("lda", 0), lds[0]), ldb=frame_ld(reader.int("ldb", 0), lds[1]),
        ldc=frame_ld(reader.int("ldc", 0), lds[2]), handle_null="handle_null" in description,
    )


def frame_ld(cell: int, minimum: int) -> int:
    """An ld as csymm_param.h leaves it: a cell <= 0 (or empty, read as 0) is the compact minimum."""
    return minimum if cell <= 0 else cell


def frame_notes(reader) -> list[tuple[str, str]]:
    """(column, message) for each cell the frame reads otherwise than its literal value: an ld cell <= 0, which
    the operator never sees (csymm_param.h replaces it by the compact minimum)."""
    from harness.tables.reader import SIDE

    side = reader.enum("side", SIDE, abi.SIDE_LEFT, "side")
    lds = min_lds(side, reader.int("m", 0), reader.int("n", 0))
    out = []
    for col, minimum in zip(("lda", "ldb", "ldc"), lds):
        text = reader.cell(col)
        if text is not None and reader.int(col, 0) <= 0:
            out.append((col, f"{col} {text!r}: the Csymm frame (csymm_param.h) reads an ld <= 0 as the compact "
                             f"minimum {minimum}, so the operator gets {col}={minimum}, not {text}; write a positive "
                             f"ld below {minimum} to test a rejected {col}"))
    return out


def buffer_bytes(a: Args) -> dict[str, int]:
    """Host bytes of A, B and C, computed before anything is allocated (memory cap)."""
    return {"A": 8 * span(a.ka, a.ka, a.lda), "B": 8 * span(a.m, a.n, a.ldb), "C": 8 * span(a.m, a.n, a.ldc)}


def bytes_needed(a: Args) -> int:
    return sum(buffer_bytes(a).values())


def buffers(a: Args, seed: int) -> dict[str, Buffer]:
    """Column-major A, B, C as the C++ frame fills them (NULLPTR: an empty, NULL buffer)."""
    return symm_family.buffers(a, seed, fill.make_complex_matrix, row_major=False)


def golden_result(a: Args, bufs: dict[str, Buffer], truth: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    args = (a.side, a.uplo, a.m, a.n, a.alpha, bufs["A"].host, a.lda, bufs["B"].host, a.ldb, a.beta,
            bufs["C"].host, a.ldc)
    return golden.cblas.csymm(*args), golden.truth.csymm(*args) if truth else None


def sample_problem(a: Args, bufs: dict[str, Buffer], budget: float,
                   seed: int) -> tuple[Args, dict[str, Buffer], np.ndarray] | None:
    """A smaller problem on a sample of C's columns (LEFT: C[:, J] needs only B[:, J]) or rows (RIGHT: C[I, :]
    needs only B[I, :]) within `budget` FLOPs: (its args, its buffers, the full-C storage index of each element of
    its C); None where the full golden is within budget."""
    if flops(a) <= budget or min(a.m, a.n) <= 0 or a.alpha is None or a.beta is None \
            or a.side not in (abi.SIDE_LEFT, abi.SIDE_RIGHT) or a.uplo not in (abi.UPPER, abi.LOWER):
        return None
    left = a.side == abi.SIDE_LEFT
    picked = sample.pick(a.n if left else a.m, max(1, int(budget * (a.n if left else a.m) // flops(a))), seed)
    rows, cols = (np.arange(a.m), picked) if left else (picked, np.arange(a.n))
    sub = replace(a, n=len(cols), m=len(rows), ldb=max(1, len(rows)), ldc=max(1, len(rows)))
    index = sample.block_index(rows, cols, a.ldc).ravel(order="F")
    C = bufs["C"].host[index]
    return sub, {"A": bufs["A"], "B": Buffer("B", sample.gather(bufs["B"].host, rows, cols, a.ldb)),
                 "C": Buffer("C", C, output=True, written=np.ones(C.size, bool))}, index


def error_scale(a: Args, bufs: dict[str, Buffer]) -> np.ndarray:
    """G = |alpha| |A| |B| + |beta| |C| per element of C's storage (the truth on magnitudes): Netlib's error scale.
    The magnitudes are real, so the real float64 product computes it: a quarter of the complex128 product's
    arithmetic and half its memory (the table generator conditions every row through this)."""
    return golden.truth.ssymm(a.side, a.uplo, a.m, a.n, abs(a.alpha), np.abs(bufs["A"].host), a.lda,
                              np.abs(bufs["B"].host), a.ldb, abs(a.beta), np.abs(bufs["C"].host), a.ldc)


def gate(a: Args, thresholds: tuple[float, float]) -> tuple[str, dict]:
    """Mixed tolerance per component (task book §3.2); bit-exact for the quick-return scalars alpha == 0,
    beta in {0, 1}."""
    if a.alpha == 0 and a.beta in (0, 1):
        return "exact", {}
    return GATE, {}


def min_lds(side: int, m: int, n: int) -> tuple[int, int, int]:
    """The smallest valid (lda, ldb, ldc), column-major: A's order, the m rows of B and C, at least 1. What an empty
    ld cell defaults to, and what the lda/ldb/ldc checks compare with."""
    return max(1, symm_family.order_of_a(side, m, n)), max(1, m), max(1, m)


def flops_of(m: int, n: int, ka: int) -> float:
    """The one FLOP count of a csymm call (reports, budgets, the generator): a complex multiply-add is 8 real FLOPs
    over m*n*ka terms, plus the epilogue alpha*acc + beta*C, 14 per element (two complex multiplies and an add).
    The epilogue is counted because the operator does that work (at small ka it is a visible share), and every
    operator here counts its epilogue the same way, so GFLOP/s compare across operators and with history."""
    if m <= 0 or n <= 0:
        return 0.0
    return 8.0 * m * n * ka + 14.0 * m * n


def flops(a: Args) -> float:
    return flops_of(a.m, a.n, a.ka)


def scalars(a: Args) -> dict[str, object]:
    """The host scalars the call passes by pointer (None = NULL), kept by the engine to check them afterwards."""
    return aclblas_lib.host_scalars(a, aclblas_lib.complex_value)


SYMBOL = "aclblasCsymm"
_L = aclblas_lib
ARGTYPES = [_L.HANDLE, _L.ENUM, _L.ENUM, _L.INT, _L.INT, _L.COMPLEX_PTR, _L.PTR, _L.INT, _L.PTR, _L.INT,
            _L.COMPLEX_PTR, _L.PTR, _L.INT]
#: aclblasCsymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc) with host scalars (Python numbers
#: or AclblasComplex; None -> NULL) and device addresses; returns the raw status.
invoke = partial(aclblas_lib.invoke, SYMBOL, ARGTYPES)
CALLS = {"aclblas": partial(symm_family.call_aclblas, invoke),
         "cublas": partial(symm_family.call_cublas, "cublasCsymm_v2", np.complex64, False)}
