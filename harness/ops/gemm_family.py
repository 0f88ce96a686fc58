"""What the batched GEMM operators (sgemm_strided_batched, sgemm_batched) share: C_i = alpha*op(A_i)*op(B_i) +
beta*C_i, column-major fp32, for i < batchCount.

They differ only in how the batch is reached (one buffer with strides, or arrays of device pointers), so this module
holds what follows from the GEMM itself: the stored shapes of A and B under transA/transB, the FLOP count, the
twin's workspace design, the baseline key, and the transA x transB rows a table crosses and counts. Each package
keeps its buffer model, reader, check order and gate, and re-exports what it takes from here as its own interface
(harness/model/operators.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.model import abi

#: The valid op() values, and every transA x transB in the order the generators cross them.
OPS = (abi.OP_N, abi.OP_T, abi.OP_C)
COMBOS = tuple((ta, tb) for ta in OPS for tb in OPS)
#: The columns without which a batched GEMM row means nothing (besides case_name and expect_result): a header
#: without one is an error before any row runs (harness.tables.header).
REQUIRED = ("transA", "transB", "m", "n", "k")
#: What the frames (sgemm_batched_param.h and its strided twin) give every row for a column the header lacks.
DEFAULTS = {"alpha": "1", "beta": "0", "lda": "the compact minimum", "ldb": "the compact minimum",
            "ldc": "the compact minimum", "batchCount": "1", "a_fill": "RANDOM", "b_fill": "RANDOM",
            "c_fill": "VALUE_NORM_0", "alpha_null": "false", "beta_null": "false", "aarray_null": "false",
            "barray_null": "false", "carray_null": "false"}
#: Coverage categories every batched GEMM table must reach: each transA x transB.
REQUIRED_TRANS = [("transA x transB", a + b) for a in "NTC" for b in "NTC"]


def a_rows(trans_a: int, m: int, k: int) -> int:
    """Stored rows of A (m x k under op): m untransposed, else k."""
    return m if trans_a == abi.OP_N else k


def b_rows(trans_b: int, k: int, n: int) -> int:
    """Stored rows of B (k x n under op): k untransposed, else n."""
    return k if trans_b == abi.OP_N else n


def min_lds(trans_a: int, trans_b: int, m: int, n: int, k: int) -> tuple[int, int, int]:
    """The smallest valid (lda, ldb, ldc): the stored rows of A, B and C, and at least 1. What an empty ld cell
    defaults to, and what the lda/ldb/ldc checks compare with."""
    return max(1, a_rows(trans_a, m, k)), max(1, b_rows(trans_b, k, n)), max(1, m)


@dataclass(frozen=True)
class GemmArgs:
    """The leading fields of every batched GEMM operator's Args (each adds how its batch is reached and its fills),
    and the stored shapes of each A_i and B_i."""

    trans_a: int
    trans_b: int
    m: int
    n: int
    k: int
    alpha: float | None
    beta: float | None
    lda: int
    ldb: int
    ldc: int

    @property
    def a_shape(self) -> tuple[int, int]:
        """Stored rows x cols of each A_i."""
        return (self.m, self.k) if self.trans_a == abi.OP_N else (self.k, self.m)

    @property
    def b_shape(self) -> tuple[int, int]:
        return (self.k, self.n) if self.trans_b == abi.OP_N else (self.n, self.k)


def flops_of(m: int, n: int, k: int, batch: int) -> float:
    """The one FLOP count of a call (reports, budgets, the generators): 2 per multiply-add over m*n*k terms plus the
    epilogue alpha*acc + beta*C (3 per element), per batch; the epilogue is counted as for every operator here."""
    if min(m, n, batch) <= 0:
        return 0.0
    return 2.0 * m * n * k * batch + 3.0 * m * n * batch


def flops(a: Any) -> float:
    return flops_of(a.m, a.n, a.k, a.batch)


def expected_workspace_bytes(a: Any) -> int | None:
    """The seed's general-path peak n*CeilAlign(m,8)*4, one temp reused by every batch; 0 on the quick (k == 0 or
    alpha == 0), scale-only and direct-write (alpha == 1, beta == 0, ldc % 8 == 0) paths."""
    if min(a.m, a.n, a.batch) <= 0 or a.alpha is None or a.beta is None:
        return 0
    if a.k == 0 or a.alpha == 0:
        return 0
    if a.alpha == 1 and a.beta == 0 and a.ldc % 8 == 0:
        return 0
    return a.n * ((a.m + 7) // 8 * 8) * 4


def baseline_params(a: Any) -> dict:
    return {"transA": a.trans_a, "transB": a.trans_b, "m": a.m, "n": a.n, "k": a.k, "batchCount": a.batch}


# ---------------------------------------------------------------- tables: generators and coverage
def parse_dims(row: dict[str, str]) -> tuple[int, int, int, int, int]:
    """(transA, transB, m, n, k) of a rendered row (empty trans = N, empty dimension = 0)."""
    from harness.generate import cells

    ta = cells.enum_value(row["transA"], cells.TRANS, abi.OP_N)
    tb = cells.enum_value(row["transB"], cells.TRANS, abi.OP_N)
    m, n, k = (int(row[d] or 0) for d in ("m", "n", "k"))
    return ta, tb, m, n, k


def categories_head(p: dict[str, Any], found: list) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, categories) a batched GEMM row starts with: a row that must be rejected is "negative" with
    its status categories only; any other crosses transA x transB ("NT" ...) and counts the size classes of m, n, k."""
    from harness.generate.coverage import dim_classes, status_categories
    from harness.generate import cells

    out = status_categories(p, found)
    if found:
        return "negative", out
    column = cells.enum_cell(p["transA"], cells.TRANS)[-1] + cells.enum_cell(p["transB"], cells.TRANS)[-1]
    return column, out + [("transA x transB", column)] + [("size", c) for c in dim_classes((p["m"], p["n"], p["k"]))]


def batch_class(batch: int) -> str:
    return "0" if batch == 0 else "1" if batch == 1 else "2_15" if batch < 16 else "ge_16"
