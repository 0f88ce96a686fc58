"""What the SYMM operators (csymm, ssymm) share: the side x uplo contract and the code that follows from it alone.

A family module rather than ssymm importing from csymm, because ssymm is not "csymm in fp32": it is row-major (its
A, B, C are the column-major transposes over the same storage, so side and uplo flip), with int64 dimensions, ld
cells without defaults, the upstream check order and a MERE/MARE gate. What is truly the same is the SYMM call
itself: which side A stands on and so its order, the C argument list (handle, side, uplo, m, n, alpha, A, lda, B,
ldb, beta, C, ldc) on aclblas and on cuBLAS, the baseline key, and the enum checks and coverage columns a table of
side x uplo rows needs. That lives here once; each package keeps its layout, reader, faults order and gate, and
re-exports what it takes from here as its own interface (harness/model/operators.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from harness.model import abi
from harness.model.abi import Status
from harness.backends import aclblas_lib as _L
from harness.tables.layout import Buffer, region_mask, triangle_mask

#: Every valid (side, uplo), in the order the generators cross them.
COMBOS = ((abi.SIDE_LEFT, abi.UPPER), (abi.SIDE_LEFT, abi.LOWER), (abi.SIDE_RIGHT, abi.UPPER),
          (abi.SIDE_RIGHT, abi.LOWER))
#: cublas<t>symm_v2 (CuPy does not wrap SYMM): handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc.
CUBLAS_ARGTYPES = [_L.PTR, _L.INT, _L.INT, _L.INT, _L.INT, _L.PTR, _L.PTR, _L.INT, _L.PTR, _L.INT, _L.PTR, _L.PTR,
                   _L.INT]
#: The columns without which a SYMM row means nothing (besides case_name and expect_result): a header without one
#: is an error before any row runs (harness.tables.header).
REQUIRED = ("side", "uplo", "m", "n")
#: Coverage categories every SYMM table must reach: each side x uplo.
REQUIRED_SIDE_UPLO = [("side x uplo", f"{s} {u}") for s in ("LEFT", "RIGHT") for u in ("UPPER", "LOWER")]


def order_of_a(side: int, m: int, n: int) -> int:
    """Order of A: m for LEFT, n for RIGHT (an invalid side reads as LEFT for buffer planning)."""
    return n if side == abi.SIDE_RIGHT else m


@dataclass(frozen=True)
class SymmArgs:
    """The leading fields of every SYMM operator's Args (each adds its scalars, leading dimensions and fills)."""

    side: int
    uplo: int
    m: int
    n: int

    @property
    def ka(self) -> int:
        """Order of A: m for LEFT, n for RIGHT."""
        return order_of_a(self.side, self.m, self.n)


def flipped(side: int, uplo: int, m: int, n: int) -> tuple[int, int, int, int]:
    """(side, uplo, m, n) of the column-major SYMM on a row-major problem's storage: C^T = alpha*B^T*A + beta*C^T."""
    return (abi.SIDE_RIGHT if side == abi.SIDE_LEFT else abi.SIDE_LEFT,
            abi.LOWER if uplo == abi.UPPER else abi.UPPER, n, m)


def buffers(a: Any, seed: int, make: Callable[[str, int, int, int, int], np.ndarray],
            row_major: bool) -> dict[str, Buffer]:
    """A, B and C of a SYMM row (seeds s, s+1, s+2) with what the call may read and write. `make(spec, rows, cols,
    ld, seed)` is the fill's column-major maker (empty storage for NULLPTR); a row-major problem is planned as the
    column-major one on the same storage (`flipped`: B and C are n x m, A's stored triangle is the other one)."""
    _, uplo, m, n = flipped(a.side, a.uplo, a.m, a.n) if row_major else (a.side, a.uplo, a.m, a.n)
    A = make(a.a_fill, a.ka, a.ka, a.lda, seed)
    B = make(a.b_fill, m, n, a.ldb, seed + 1)
    C = make(a.c_fill, m, n, a.ldc, seed + 2)
    a_read = triangle_mask(A.size, a.ka, a.lda, upper=uplo == abi.UPPER) if a.uplo in (abi.UPPER, abi.LOWER) \
        else region_mask(A.size, a.ka, a.ka, a.lda)
    return {
        "A": Buffer("A", A, null=a.a_fill == "NULLPTR", never_read=~a_read, reach=a.lda),
        "B": Buffer("B", B, null=a.b_fill == "NULLPTR", never_read=~region_mask(B.size, m, n, a.ldb), reach=a.ldb),
        "C": Buffer("C", C, null=a.c_fill == "NULLPTR", output=True, written=region_mask(C.size, m, n, a.ldc),
                    reach=a.ldc),
    }


def output_overlap(a: Any) -> str:
    """One C, no batches: it never overlaps itself."""
    return ""


def expected_workspace_bytes(a: Any) -> int | None:
    """No workspace expectation: the SYMM operators' designs state none."""
    return None


def baseline_params(a: Any) -> dict:
    return {"side": a.side, "uplo": a.uplo, "m": a.m, "n": a.n}


def call_aclblas(invoke: Callable[..., int], backend: Any, a: Any, ptrs: dict[str, int], handle: int,
                 host_scalars: dict[str, object]) -> int:
    """The operator's aclblas entry (`invoke`) with the row's arguments."""
    return invoke(backend.lib, handle, a.side, a.uplo, a.m, a.n, host_scalars["alpha"], ptrs["A"], a.lda, ptrs["B"],
                  a.ldb, host_scalars["beta"], ptrs["C"], a.ldc)


def call_cublas(symbol: str, dtype: Any, row_major: bool, backend: Any, a: Any, ptrs: dict[str, int], handle: int,
                host_scalars: dict[str, object]) -> int:
    """cublas<t>symm (column-major, host scalars) on the same storage: a row-major operator's problem flipped."""
    from harness.backends import cuda

    side, uplo, m, n = flipped(a.side, a.uplo, a.m, a.n) if row_major else (a.side, a.uplo, a.m, a.n)
    return cuda.checked_call(
        backend, a.side in cuda.SIDE and a.uplo in cuda.FILL, a.alpha, a.beta, dtype,
        lambda alpha, beta: backend.lib.native(symbol, CUBLAS_ARGTYPES, backend.handle, cuda.SIDE[side],
                                               cuda.FILL[uplo], m, n, alpha, ptrs["A"], a.lda, ptrs["B"], a.ldb,
                                               beta, ptrs["C"], a.ldc))


# ---------------------------------------------------------------- tables: generators and coverage
def handle_and_enum_faults(p: dict[str, Any]) -> list[tuple[str, Status]]:
    """The checks every SYMM validation makes in this order (wherever in its sequence it makes them): a NULL handle,
    then side, then uplo."""
    out = []
    if p["handle_null"]:
        out.append(("handle_null", Status.HANDLE_IS_NULLPTR))
    if p["side"] not in (abi.SIDE_LEFT, abi.SIDE_RIGHT):
        out.append(("invalid_side", Status.INVALID_ENUM))
    if p["uplo"] not in (abi.UPPER, abi.LOWER):
        out.append(("invalid_uplo", Status.INVALID_ENUM))
    return out


def categories_head(p: dict[str, Any], found: list) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, categories) a SYMM row starts with: a row that must be rejected is "negative" with its
    status categories only; any other crosses side x uplo ("LEFT UPPER" ...) and counts the size classes of m, n."""
    from harness.generate.coverage import dim_classes, status_categories
    from harness.generate import cells

    out = status_categories(p, found)
    if found:
        return "negative", out
    column = (cells.enum_cell(p["side"], cells.SIDES).removeprefix("ACLBLAS_SIDE_") + " " +
              cells.enum_cell(p["uplo"], cells.UPLOS).removeprefix("ACLBLAS_"))
    return column, out + [("side x uplo", column)] + [("size", c) for c in dim_classes((p["m"], p["n"]))]

