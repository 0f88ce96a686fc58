"""Coverage categories of sgemm_batched table rows (harness.generate.coverage counts them)."""
from __future__ import annotations

from typing import Any

from harness.generate.coverage import real_class
from harness.generate import cells
from harness.ops.gemm_family import REQUIRED_TRANS, batch_class, categories_head

NEGATIVE = ("handle_null", "null_alpha", "null_beta", "negative_m", "negative_n", "negative_k", "negative_batch",
            "invalid_transA", "invalid_transB", "invalid_lda", "invalid_ldb", "invalid_ldc", "null_Aarray",
            "null_Barray", "null_Carray", "two_or_more_faults")


def categories(p: dict[str, Any], found: list, perf: bool) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, [(group, category)]) of one sgemm_batched row."""
    column, out = categories_head(p, found)
    if found:
        return column, out
    m, n, k, batch = p["m"], p["n"], p["k"], p["batchCount"]
    out += [("alpha", real_class(p["alpha"])), ("beta", real_class(p["beta"]))]
    out.append(("batchCount", batch_class(batch)))
    if min(m, n, batch) > 0 and (k == 0 or p["alpha"] == 0):
        out.append(("path", "null_A_B_entries"))
    if p["c_fill"] == cells.NAN:
        out.append(("inputs", "nan_c_never_read"))
    return column, out


REQUIRED = (REQUIRED_TRANS
            + [("size", c) for c in ("zero", "one", "small_prime", "power_of_two", "unaligned")]
            + [(g, c) for g in ("alpha", "beta") for c in ("zero", "one", "other")]
            + [("batchCount", c) for c in ("0", "1", "2_15", "ge_16")]
            + [("path", "null_A_B_entries"), ("inputs", "nan_c_never_read")]
            + [("negative", c) for c in NEGATIVE])
